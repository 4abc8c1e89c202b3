"""MedLDA's SSGRLD (paper 000, Algorithm 1; :mod:`regbayes.algorithms.medlda_ssgrld`) with
the documents sharded: distributed SGLD (Ahn, Shahbaz & Welling 2014) for a topic model.

A shard (:class:`TopicShard`, held by one worker) keeps its documents' tokens and labels
and their topic assignments ``z``, which never leave it. The global state -- theta (K, V),
Phi, eta and the SSGLD state of eta (:func:`travelling`) -- travels: it runs a *trajectory*
of ``L_s`` iterations of Algorithm 1 on shard ``s``, then moves on to the next shard. The
shards take turns, so shard ``s`` runs a share ``q_s = L_s / sum_r L_r`` of the
iterations; there a minibatch of ``b`` of its ``D_s`` documents stands for the corpus with
the scale ``D_s / (q_s b)`` (eq. 7's ``|D| / |D~|`` in eq. 21 and in the SGRLD step of
Phi), which is ``D / b``, that of one process, when ``L_s`` is proportional to ``D_s``;
over the turns the gradients are unbiased. What the shards add is the deviation of a
shard's documents from the corpus, which stays in the chain for ``L_s`` iterations, and
documents whose assignments were last swept ``L`` iterations or more ago. Both stay small
while a trajectory is short next to a pass over a shard (``D_s / b`` iterations)
(:data:`regbayes.models.medlda_shards.TRAJECTORY_ITERATIONS`).

A document's inner Gibbs sweeps start from its assignments of its last visit, as in one
process.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np
import scipy.sparse as sp

from ..validation import check_counts
from . import lda_kernels as kern
from . import medlda_ssgrld
from .topic_inference import topic_proportions


class Trajectory(NamedTuple):
    """What a shard returns after ``L`` iterations: the travelling state (:func:`travelling`), each iteration's
    :class:`~regbayes.algorithms.medlda_ssgrld.SSGRLDInfo`, the sum of Phi over the
    iterations from ``average_from`` on and their number, and ``(t, Phi, eta)`` at the kept
    iterations ``t``."""

    state: medlda_ssgrld.SSGRLDState
    infos: list
    phi_sum: np.ndarray | None
    n_summed: int
    kept: list


def travelling(state: medlda_ssgrld.SSGRLDState) -> medlda_ssgrld.SSGRLDState:
    """The part of a state that moves between the shards: all but ``z`` (None), on the host."""
    return state._replace(z=None, eta_state=jax.tree_util.tree_map(np.asarray, state.eta_state),
                          eta=np.asarray(state.eta), iteration=int(state.iteration), n_docs=int(state.n_docs),
                          n_tokens=int(state.n_tokens))


def initial_state(seed, n_topics, n_words, beta, n_classifiers, crammer_singer) -> medlda_ssgrld.SSGRLDState:
    """The travelling part of a first state (:func:`~regbayes.algorithms.medlda_ssgrld.initial_globals`)."""
    return travelling(medlda_ssgrld.initial_globals(np.random.default_rng(seed), n_topics, n_words, beta,
                                                    n_classifiers, crammer_singer))


def read_counts(blocks, block_ids, model="MedLDA"):
    """The word counts of blocks ``block_ids`` of ``blocks`` (a RowBlocks) as one CSR
    matrix; a block that does not hold counts is an error that names it."""
    parts = []
    for i in block_ids:
        X, _ = blocks.read(int(i))
        try:
            parts.append(check_counts(X, model))
        except ValueError as exc:
            raise ValueError(f"{blocks.describe(int(i))}: {exc}") from exc
    return sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, blocks.n_features), dtype=np.int64)


class TopicShard:
    """One worker's documents (a Dask actor when the caller places it on a worker).

    ``documents``: a CSR count matrix, or ``(blocks, block_ids)`` read here
    (:func:`read_counts`). Empty documents are dropped here with their labels ``codes``
    and ``y_sign`` (as the estimator encodes them). ``seed``: that of the initial
    assignments. :meth:`start` makes the sampler's data once the corpus' document count
    is known."""

    def __init__(self, documents, codes, y_sign, seed):
        counts = read_counts(*documents) if isinstance(documents, tuple) else documents
        if counts.shape[0] != len(codes):
            raise ValueError(f"a shard of {counts.shape[0]} documents got {len(codes)} labels")
        filled = np.flatnonzero(np.diff(counts.indptr) > 0)  # check_counts dropped the zeros
        self.n_empty = counts.shape[0] - len(filled)
        self.doc_ptr, self.words = kern.tokens_from_counts(counts[filled])
        self.codes, self.y_sign = np.asarray(codes)[filled], np.asarray(y_sign)[filled]
        self.seed = int(seed)
        self.data = None

    def sizes(self):
        """``(documents kept, empty documents dropped, tokens)``."""
        return len(self.codes), int(self.n_empty), int(self.words.shape[0])

    def start(self, settings: dict, n_total: float):
        """The sampler's data (:func:`~regbayes.algorithms.medlda_ssgrld.make_data` with
        ``settings``, the minibatches standing for ``n_total = D_s / q_s`` documents) and
        uniform initial topics."""
        self.data = medlda_ssgrld.make_data(self.doc_ptr, self.words, self.y_sign, self.codes, n_total=n_total,
                                            **settings)
        self.z = kern.random_assignments(self.words.shape[0], self.data.n_topics, self.seed)
        medlda_ssgrld.compile_kernels(medlda_ssgrld.init(0, self.data), self.data)

    def trajectory(self, seeds, state, average_from: int, keep) -> Trajectory:
        """Iterations of Algorithm 1 with ``seeds`` (one each) from the travelling ``state`` on these documents."""
        full = state._replace(z=self.z)
        keep = set(int(t) for t in keep)
        infos, kept, phi_sum, n_summed = [], [], None, 0
        for seed in seeds:
            full, info = medlda_ssgrld.step(int(seed), full, self.data)
            infos.append(info)
            if not info.topics_finite:
                break  # the caller reports the divergence
            t = full.iteration - 1
            if t >= average_from or t in keep:
                phi = medlda_ssgrld.topic_word(full)
                if t >= average_from:
                    phi_sum = phi.copy() if phi_sum is None else phi_sum + phi
                    n_summed += 1
                if t in keep:
                    kept.append((t, phi, np.array(full.eta)))
        return Trajectory(travelling(full), infos, phi_sum, n_summed, kept)

    def proportions(self, topic_word, alpha, n_sweeps, seed):
        """The topic proportions of these documents with Phi fixed
        (:func:`~regbayes.algorithms.topic_inference.topic_proportions`; keyed by content,
        so as in one process), with their codes and label signs."""
        features = topic_proportions(self.doc_ptr, self.words, topic_word, alpha, n_sweeps, seed, 1)
        return features, self.codes, self.y_sign
