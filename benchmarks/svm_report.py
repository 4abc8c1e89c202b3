"""The markdown report of ``bayes_svm.py``: one table per training size, then the throughput
ratios, the TTA spread over seeds and the run's notes."""
from __future__ import annotations

import math

from harness import markdown_header, markdown_row


def fmt(x, spec=".3g", none="—"):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return none
    return format(x, spec)


COLUMNS = ["method", "it/s", "compile s", "steps", "run s", "TTA s (±0.5 pt)", "TTE s (rel. err ≤ 5 %)", "final acc %",
           "rel. error", "min ESS", "ESS/s"]
LABELS = {
    "ssgld": "regbayes SSGLD (AdaGrad)",
    "ssgld_step0": "regbayes SSGLD, from step 0",
    "ssgnht": "regbayes SSGNHT",
    "ssgnht_step0": "regbayes SSGNHT, from step 0",
    "gibbs": "regbayes Gibbs DA",
    "blackjax_sgld": "BlackJAX SGLD (const. step)",
    "blackjax_sgld_step0": "BlackJAX SGLD, from step 0",
    "numpyro_nuts": "NumPyro NUTS",
}


def markdown(results):
    lines = []
    for res in results["sizes"]:
        n, ref = res["n_train"], res["reference"]
        lines.append(
            f"\n### N = {n:,} (test {res['n_test']:,}); reference: Gibbs DA, {ref['sweeps']} sweeps "
            f"({ref['sampling_s']:.0f} s), posterior-mean test accuracy {ref['test_accuracy']:.2f} %\n"
        )
        lines.append(markdown_header(COLUMNS))
        for key, label in LABELS.items():
            r = res["methods"].get(key)
            if r is None:
                continue
            if r.get("failed"):
                lines.append(f"| {label} | diverged (see notes) | | | | | | | | | |")
                continue
            if r.get("skipped"):
                lines.append(f"| {label} | skipped (projected {r['projected_s']:.0f} s) | {r['compile_s']:.1f} | | | | | | | | |")
                continue
            tta = fmt(r["tta_s"], ".3g", "not reached")
            if r.get("tta_at_first_draw"):
                tta = "≤ " + tta  # reached by the first saved draw: an upper bound
            step = r.get("step_size")
            if isinstance(step, float) and key.startswith(("ssgld", "ssgnht")):
                label = f"{label} (step {step:.3g})"
            lines.append(markdown_row([
                label, f"{r['it_per_s']:.4g}", f"{r['compile_s']:.1f}", f"{r['iterations']:,}", f"{r['sampling_s']:.2f}", tta,
                fmt(r["tte_s"], ".3g", "not reached"), f"{r['final_accuracy']:.2f}", f"{r['rel_error']:.2e}", fmt(r["min_ess"], ".0f"),
                fmt(r["ess_per_s"], ".3g"),
            ]))
        svc = res.get("linear_svc")
        if svc:
            lines.append(
                f"| scikit-learn LinearSVC (C_svm={svc['C_svm']:g}, MAP{'' if svc['converged'] else ', not converged'}) | — | — | {svc['n_iter']} epochs | {svc['fit_s']:.2f} | — | — | "
                f"{svc['final_accuracy']:.2f} | {svc['rel_error']:.2e} | — | — |"
            )
        thr, ra = res["throughput"], res["ratios"]
        lines.append("")
        lines.append(
            f"Throughput (median of {len(thr['blackjax_sgld']['wall_it_per_s'])} interleaved warm runs of {thr['steps_per_run']:,} steps, thin {thr['thin']}): "
            f"SSGLD {fmt(thr['ssgld']['median_it_per_s'], '.4g')} it/s, SSGNHT {fmt(thr['ssgnht']['median_it_per_s'], '.4g')} it/s, "
            f"BlackJAX SGLD {fmt(thr['blackjax_sgld']['median_it_per_s'], '.4g')} it/s (threefry keys, its default), "
            f"{fmt(thr['blackjax_sgld_rbg']['median_it_per_s'], '.4g')} it/s with rbg keys.  "
            f"**SSGLD ÷ BlackJAX it/s = {fmt(ra['ssgld_over_blackjax_it_per_s'], '.2f')}** (both with threefry keys, their default; "
            f"÷ BlackJAX with rbg keys: {fmt(ra['ssgld_over_blackjax_rbg_it_per_s'], '.2f')}; medians of wall time; per CPU-second: "
            f"{fmt(ra['ssgld_over_blackjax_it_per_cpu_s'], '.2f')}; best runs: "
            f"{fmt(ra['ssgld_over_blackjax_it_per_s_best'], '.2f')}; main runs: {fmt(ra['ssgld_over_blackjax_it_per_s_main_run'], '.2f')}).  "
            f"SSGLD without AdaGrad (the update blackjax.sgld makes): {fmt(thr.get('ssgld_plain', {}).get('median_it_per_s'), '.4g')} it/s, "
            f"÷ BlackJAX = {fmt(ra.get('ssgld_plain_over_blackjax_it_per_s'), '.2f')}.  "
            f"At BayesianSVC's default thin {thr.get('default_thin', '—')}: SSGLD {fmt(thr.get('ssgld_default_thin', {}).get('median_it_per_s'), '.4g')} it/s, "
            f"BlackJAX SGLD {fmt(thr.get('blackjax_sgld_default_thin', {}).get('median_it_per_s'), '.4g')} it/s, "
            f"**SSGLD ÷ BlackJAX it/s = {fmt(ra.get('ssgld_over_blackjax_it_per_s_default_thin'), '.2f')}**.  "
            f"**Gibbs TTA ÷ SSGLD TTA = {fmt(ra['gibbs_tta_over_ssgld_tta_best'], '.3g')}**, "
            f"Gibbs TTA ÷ SSGNHT TTA = {fmt(ra['gibbs_tta_over_ssgnht_tta_best'], '.3g')}, "
            f"Gibbs TTA ÷ BlackJAX SGLD TTA = {fmt(ra['gibbs_tta_over_blackjax_sgld_tta_best'], '.3g')} "
            f"(from-step-0 runs where they reached it)."
        )
        spread = {k: res["methods"].get(k + "_step0", {}).get("seeds") for k in ("ssgld", "ssgnht", "blackjax_sgld")}
        if any(spread.values()):
            names = {"ssgld": "SSGLD", "ssgnht": "SSGNHT", "blackjax_sgld": "BlackJAX SGLD"}
            parts = [
                f"{names[k]} {fmt(v['median_tta_s'], '.3g', 'not reached')} s ({fmt(v['min_tta_s'], '.3g', '—')}–"
                f"{fmt(v['max_tta_s'], '.3g', 'not reached')}; median rel. error {v['median_rel_error']:.1%})"
                for k, v in spread.items() if v
            ]
            n_seeds = max(v["n_seeds"] for v in spread.values() if v)
            ratio_parts = [f"{names[k]} {fmt(ra.get(f'gibbs_tta_over_{k}_step0_median_tta'), '.3g')}" for k, v in spread.items() if v]
            lines.append("")
            lines.append(
                f"From step 0 over {n_seeds} seeds, TTA median (min–max): " + ", ".join(parts) + ".  "
                "**Gibbs TTA ÷ median TTA: " + ", ".join(ratio_parts) + "**."
            )
        for note in res["notes"]:
            lines.append(f"\nNote: {note}")
    return "\n".join(lines)
