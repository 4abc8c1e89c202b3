"""The markdown report of ``medlda.py``: throughput per corpus, accuracy against documents
processed, and the default prediction's accuracy against run length."""
from __future__ import annotations

import json

import numpy as np
from harness import markdown_header


def accuracy_at_docs(curve, milestones):
    docs, acc = np.asarray(curve["n_docs"]), np.asarray(curve["accuracy"])
    out = []
    for m in milestones:
        hit = np.nonzero(docs <= m)[0]
        out.append(float(acc[hit[-1]]) if len(hit) else None)
    return out


def fmt(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    v = float(v)
    return f"{v:.{digits}g}" if (abs(v) >= 1e5 or (v != 0 and abs(v) < 1e-2)) else f"{v:.{digits}f}"


def markdown(results):
    lines = []
    for name, res in results["throughput"].items():
        lines += [f"#### Throughput on {name}: {res['n_docs']:,} documents, {res['n_tokens']:,} tokens, "
                  f"V = {res['n_words']:,}, {res['n_classes']} classes, K = {res['K']}", "",
                  markdown_header(["sampler", "tokens/s", "÷ lda package", "sweep / call / iteration s"])]
        for label, r in res["rows"].items():
            sweep = r.get("sweep_s", r.get("call_s", r.get("seconds_per_iteration")))
            lines.append(f"| {label} | {r['tokens_per_s']:.3g} | {r['ratio_to_lda']:.2f} | {fmt(sweep)} |")
        rows = res["rows"]
        L = res["n_classes"]
        g = rows.get(f"MedLDA(sampler='gibbs'), M = {L}, end to end")
        if g:
            lines += ["", f"**Gibbs MedLDA (M = {L}, end to end) tokens/s ÷ lda tokens/s = {g['ratio_to_lda']:.2f}** "
                          f"(target ≥ 0.5); binary kernel (M = 1) ÷ lda = "
                          f"{rows['regbayes numba: Gibbs MedLDA sweep, binary (M = 1)']['ratio_to_lda']:.2f}; "
                          f"collapsed LDA kernel (M = 0) ÷ lda = "
                          f"{rows['regbayes numba: collapsed LDA (M = 0)']['ratio_to_lda']:.2f}."]
        lines.append("")
    acc = results.get("accuracy")
    if acc:
        r = acc["runs"]
        milestones = sorted({int(x) for x in np.geomspace(1000, max(r["gibbs"]["n_docs"][-1], 1000), 7)})
        lines += [f"#### Test accuracy against documents processed (synthetic, {acc['n_train']:,} train / "
                  f"{acc['n_test']:,} test, K = {results['settings']['k']})", "",
                  markdown_header(["method", *(f"≤ {m:,} docs" for m in milestones), "final", "sampling s"])]
        for label, curve in (("SSGRLD MedLDA", r["ssgrld"]), ("Gibbs MedLDA", r["gibbs"]),
                             ("online LDA + LinearSVC", r["online_baseline"])):
            row = accuracy_at_docs(curve, milestones)
            last = curve.get("final_accuracy", curve["accuracy"][-1])
            secs = curve.get("sampling_seconds", curve["times"][-1])
            lines.append(f"| {label} | " + " | ".join(fmt(v) for v in row) + f" | {fmt(last)} | {fmt(secs)} |")
        lines.append("| batch LDA + LinearSVC | " + " | ".join("" for _ in milestones)
                     + f" | {fmt(r['batch_baseline']['accuracy'])} | {fmt(r['batch_baseline']['seconds'])} |")
        s = acc["summary"]
        lines += ["", f"Gibbs MedLDA final accuracy (mean of last 3 snapshots) {fmt(s.get('reference_accuracy'))}; "
                      f"Gibbs stays within 1 point from {fmt(s.get('gibbs_docs'))} documents / "
                      f"{fmt(s.get('gibbs_seconds'))} s; SSGRLD stays at or above it minus 1 point from "
                      f"{fmt(s.get('ssgrld_docs'))} documents / {fmt(s.get('ssgrld_seconds'))} s. "
                      f"**Gibbs ÷ SSGRLD: documents {fmt(s.get('docs_ratio'))}, wall time {fmt(s.get('time_ratio'))}** "
                      "(targets ≥ 10 and ≥ 5).", ""]
    rc = results.get("refit_curve")
    if rc:
        lines += [f"#### Default prediction (refitted classifier) against run length (synthetic, {rc['n_train']:,} "
                  f"train / {rc['n_test']:,} test, K = {results['settings']['k']}, seeds {rc['seeds']})", "",
                  markdown_header(["sampler", "n_iter", "documents", ("accuracy per seed", "l"), "mean", "sampling s (mean)"])]
        ssgrld_label = "SSGRLD" + (f" {json.dumps(rc['ssgrld_params'])}" if rc.get("ssgrld_params") else "")
        for sampler, label in (("ssgrld", ssgrld_label), ("gibbs", "Gibbs MedLDA")):
            for r in rc["rows"][sampler]:
                per_seed = " / ".join(f"{run['accuracy']:.3f}" for run in r["runs"])
                lines.append(f"| {label} | {r['n_iter']} | {r['n_docs']:,} | {per_seed} | {r['accuracy']:.3f} | "
                             f"{r['sampling_s']:.1f} |")
        s = rc["summary"]
        reach = s["reach"]

        def where(x):
            return "never" if x is None else f"from {x['n_docs']:,} documents / {x['sampling_s']:.1f} s"

        lines += ["", f"Gibbs MedLDA's final accuracy (longest run, seed mean) {s['gibbs_final_accuracy']:.3f}. "
                      f"Within 1 point of it: Gibbs {where(reach['gibbs'])}, SSGRLD {where(reach['ssgrld'])}."
                      + (f" **Gibbs ÷ SSGRLD: documents {s['docs_ratio']:.1f}, sampling time {s['time_ratio']:.1f}** "
                         "(targets ≥ 10 and ≥ 5)." if "docs_ratio" in s else ""), ""]
    return "\n".join(lines)
