"""Figure 9 and Table 1 of paper 000 (Section 5.2.2): the topics SSGRLD MedLDA learns.

For every class, the average topic proportions of its documents (``MedLDA.transform``
on the training documents, averaged over the class) are drawn as a bar panel; with a
max-margin classifier shaping the topics, these averages are sparse (one or two salient
topics per class). The table lists each class's salient topics
(:func:`regbayes.plotting.salient_topics`: share above twice the uniform 1/K, at most
three) and their most probable words (from ``components_``).

Corpus as in :mod:`regbayes.experiments.medlda_fig8` (20 Newsgroups when present, else
the offline stand-in, a synthetic corpus whose words are named after their true topic,
e.g. ``space1``; ``data`` reads the paper's 20news: the registered "20news", a folder of
the standard files or scikit-learn's cache file). ``paper_settings`` sets paper 000 Sec.
5.2.1's hyper-parameters (:data:`regbayes.experiments.medlda_fig8.PAPER_MEDLDA`: alpha =
beta = 1, c = 1, l = 164, one-vs-all, the papers' prediction rule
``refit_classifier=False`` for the test accuracy); K stays 50 unless ``k`` is given;
``hyper`` overrides them; the JSON records them.
On the synthetic corpus the learned topics are also matched to the true ones by the
Hungarian method on the Hellinger distance between topic-word distributions, and each
class's row names its largest true topic (the largest average true theta_d over the
class's documents).
"""
from __future__ import annotations

import time

import numpy as np

from ._common import markdown_table, topics_asked, write_outputs
from .medlda_fig8 import DEFAULT_K, PAPER_MEDLDA, THEMES, load_corpus

NAME = "medlda-topics"
TITLE = "Fig. 9 / Table 1: per-class average topic proportions and salient topics (SSGRLD MedLDA)"
DEFAULT_N = 6000


def class_topic_proportions(doc_topic, y, n_classes: int) -> np.ndarray:
    """(n_classes, K): the mean topic proportions of each class's documents (a class
    without documents gets a row of NaN)."""
    doc_topic = np.asarray(doc_topic, dtype=np.float64)
    y = np.asarray(y)
    out = np.full((n_classes, doc_topic.shape[1]), np.nan)
    for c in range(n_classes):
        if np.any(y == c):
            out[c] = doc_topic[y == c].mean(axis=0)
    return out


def top_word_names(topic_word, vocabulary, n: int) -> list:
    """The ``n`` most probable words of every topic (rows of ``topic_word``), by name."""
    order = np.argsort(-np.asarray(topic_word), axis=1, kind="stable")[:, :n]
    return [[str(vocabulary[j]) for j in row] for row in order]


def hellinger_match(learned, truth) -> dict:
    """Match every true topic to a distinct learned topic (Hungarian method on the
    Hellinger distance ``H(p, q) = ||sqrt p - sqrt q||_2 / sqrt 2`` in [0, 1]).

    Returns ``pairs`` [(true k, learned j)], ``distances`` of the pairs, their mean, and
    ``baseline``: the mean Hellinger distance between the true topics and the uniform
    distribution over words, for scale."""
    from scipy.optimize import linear_sum_assignment

    a, b = np.sqrt(np.asarray(truth, dtype=np.float64)), np.sqrt(np.asarray(learned, dtype=np.float64))
    cost = np.sqrt(np.maximum(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2), 0.0) / 2.0)
    rows, cols = linear_sum_assignment(cost)
    distances = cost[rows, cols]
    uniform = np.full(a.shape[1], 1.0 / a.shape[1])
    base = np.sqrt(((a - np.sqrt(uniform)) ** 2).sum(axis=1) / 2.0)
    return {"pairs": [[int(r), int(c)] for r, c in zip(rows, cols)], "distances": distances.tolist(),
            "mean_distance": float(distances.mean()), "baseline": float(base.mean())}


def sparsity(proportions) -> dict:
    """Per-class summaries of how peaked the average topic proportions are: the share of
    the two largest topics and the perplexity ``exp(entropy)`` (effective number of
    topics, between 1 and K)."""
    p = np.asarray(proportions, dtype=np.float64)
    p = p / p.sum(axis=1, keepdims=True)
    top2 = np.sort(p, axis=1)[:, -2:].sum(axis=1)
    entropy = -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=1)
    return {"top2_share": top2.tolist(), "effective_topics": np.exp(entropy).tolist(),
            "mean_top2_share": float(top2.mean()), "mean_effective_topics": float(np.exp(entropy).mean())}


def run(
    out_dir,
    *,
    quick: bool = False,
    seed: int = 0,
    progress: bool = False,
    k: int | None = None,
    n: int | None = None,
    corpus: str = "auto",
    folder=None,
    n_iter: int | None = None,
    batch_size: int | None = None,
    n_top_words: int | None = None,
    hyper: dict | None = None,
    data=None,
    paper_settings: bool = False,
    **unused,
) -> dict:
    """Fit SSGRLD MedLDA and write ``medlda-topics.png``, ``medlda-topics.json`` and
    ``results.md``.

    ``k``: topics (default 50; quick 5). ``n``: training documents of the synthetic
    corpus (default 6,000; quick 300). ``n_iter`` / ``batch_size``: SSGRLD iterations and
    minibatch (defaults: 3 passes over the data in minibatches of 100; quick: 30 of 20).
    ``n_top_words``: words per topic in the table (default 8; quick 5). ``hyper``: extra
    MedLDA parameters (over :data:`PAPER_MEDLDA` with ``paper_settings``). ``data``: the
    ``--data`` value (module docstring), which overrides ``corpus`` and ``folder``.
    """
    from ..models.medlda import MedLDA
    from ..plotting import plot_topic_proportions, salient_topics

    start = time.perf_counter()
    k = topics_asked(k, quick, DEFAULT_K)
    n = n if n is not None else (None if quick else DEFAULT_N)
    data = load_corpus(corpus, n=n, quick=quick, seed=seed, folder=folder, data=data)
    hyper = {**(PAPER_MEDLDA if paper_settings else {}), **(hyper or {})}
    X_train, y_train, X_test, y_test = data["X_train"], data["y_train"], data["X_test"], data["y_test"]
    names, vocabulary = data["class_names"], data["vocabulary"]
    batch = min(int(batch_size or (20 if quick else 100)), X_train.shape[0])
    n_iter = int(n_iter or (30 if quick else max(300, 3 * X_train.shape[0] // batch)))
    n_top = int(n_top_words or (5 if quick else 8))
    params = dict(n_topics=k, sampler="ssgrld", n_iter=n_iter, batch_size=batch, random_state=seed,
                  progress=progress, **(hyper or {}))
    model = MedLDA(**params)
    t0 = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - t0
    accuracy = float(np.mean(model.predict(X_test) == y_test))
    proportions = class_topic_proportions(model.transform(X_train), y_train, len(names))
    present = ~np.isnan(proportions).any(axis=1)
    shown_names = [c for c, p in zip(names, present) if p]
    proportions = proportions[present]
    salient = salient_topics(proportions)
    words = top_word_names(model.components_, vocabulary, n_top)
    spars = sparsity(proportions)

    truth = {}
    true_theme = [""] * len(shown_names)
    if "topic_word" in data:
        truth = hellinger_match(model.components_, data["topic_word"])
        # each class's most frequent true topic (largest average true theta_d over its documents)
        favourite = np.nanargmax(class_topic_proportions(data["doc_topic_train"], y_train, len(names))[present], axis=1)
        true_theme = [THEMES[t] if t < len(THEMES) else f"topic{t}_" for t in favourite]
    rows = []
    for c, cname in enumerate(shown_names):
        topics = ", ".join(f"{t} ({proportions[c, t]:.2f})" for t in salient[c])
        top = "; ".join(f"{t}: " + ", ".join(words[t]) for t in salient[c])
        row = [cname, topics, top]
        if truth:
            row.insert(1, true_theme[c] or "-")
        rows.append(row)
    headers = ["class", "salient topics (avg. share)", "top words of the salient topics"]
    if truth:
        headers.insert(1, "largest true topic")
    table = markdown_table(headers, rows)
    fig = plot_topic_proportions(proportions, shown_names, salient=salient, ncols=5 if len(shown_names) > 8 else 4,
                                 title=f"Average topic proportions per class ({data['name']}, SSGRLD MedLDA, K = {k})")
    seconds = time.perf_counter() - start
    numbers = {
        "experiment": NAME,
        "settings": {"quick": quick, "seed": seed, "k": k, "corpus": data["name"], "n_train": X_train.shape[0],
                     "n_test": X_test.shape[0], "n_words": X_train.shape[1], "medlda": params,
                     "corpus_description": data["description"], "stand_in": data["stand_in"],
                     "data": data["record"], "paper_settings": dict(PAPER_MEDLDA) if paper_settings else False},
        "test_accuracy": accuracy,
        "fit_seconds": fit_seconds,
        "class_names": shown_names,
        "proportions": proportions,
        "salient_topics": salient,
        "top_words": words,
        "sparsity": spars,
        "topic_recovery": truth,
        "seconds": seconds,
    }
    markdown = "\n".join([
        f"# {TITLE}", "",
        f"Corpus: {data['description']}. SSGRLD MedLDA with K = {k}, {n_iter} iterations of {batch} documents "
        f"(fit {fit_seconds:.1f} s); test accuracy {accuracy:.4f}.", "",
        f"Average topic proportions per class are peaked: the two largest topics hold "
        f"{100 * spars['mean_top2_share']:.1f} % of a class's average on average (uniform: {200 / k:.1f} %), "
        f"an effective number of topics of {spars['mean_effective_topics']:.1f} out of {k}.", "",
        table, "",
        (f"Topic recovery (synthetic truth): mean Hellinger distance between each true topic and its "
         f"matched learned topic {truth['mean_distance']:.3f} (true topics vs the uniform distribution: "
         f"{truth['baseline']:.3f}).\n" if truth else ""),
        f"Total time: {seconds:.1f} s.",
    ])
    paths = write_outputs(out_dir, NAME, fig, numbers, markdown)
    return {"name": NAME, "seconds": seconds, "numbers": numbers, "table": table, **paths}
