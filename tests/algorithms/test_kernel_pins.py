"""Pinned outputs of the numba kernels of regbayes.algorithms (lda, crp and m2dpm kernels).

The expected values were computed by the kernels as they were before their compile-time
rework (one specialisation per kernel, no parallel build, token conditionals written out,
loops in place of array expressions): same inputs and seeds must give the same draws.
Integer outputs (topic and cluster assignments, keys, seeds) are compared exactly through
a hash; float outputs through two weighted sums, to 1e-9 relative.

Also: each kernel compiles a single specialisation whatever dtypes, layouts and
writability its callers pass, and the sweeps' written-out token conditionals equal the
reference functions the enumeration tests check.
"""
import hashlib

import numba
import numpy as np
import pytest

from regbayes.algorithms import crp_kernels, lda_kernels, lda_tokens, m2dpm_kernels, medlda_gibbs_kernels


def int_hash(a):
    return hashlib.sha256(np.ascontiguousarray(a, dtype="<i8").tobytes()).hexdigest()[:16]


def fingerprint(a):
    a = np.asarray(a, dtype=np.float64).ravel()
    w = 1.0 + (np.arange(a.size) % 7) / 7.0
    return [float(a.sum()), float((a * w).sum())]


def lda_inputs():
    rng = np.random.default_rng(20240611)
    D, K, V, M = 25, 4, 15, 3
    lengths = rng.integers(0, 13, D)
    lengths[3] = 0  # an empty document
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.integers(0, V, doc_ptr[-1]).astype(np.int32)
    phi = rng.random((K, V)) + 0.05
    phi_t = np.ascontiguousarray((phi / phi.sum(axis=1, keepdims=True)).T)
    y_class = rng.integers(0, M, D).astype(np.int64)
    y_sign = np.where(y_class[:, None] == np.arange(M)[None, :], 1.0, -1.0)
    eta = rng.standard_normal((M, K))
    inv_omega = rng.random((D, M)) + 0.1
    return {"doc_ptr": doc_ptr, "words": words, "phi_t": phi_t, "y_class": y_class, "y_sign": y_sign, "eta": eta,
            "inv_omega": inv_omega, "K": K, "V": V, "D": D}


FIXED_CASES = [  # (mode, n_classifiers, eta scale, C)
    (0, 1, 1.0, 1.0), (0, 3, 8.0, 20.0), (1, 3, 1.0, 1.0), (1, 3, 8.0, 20.0), (2, 0, 1.0, 0.0),
]


def lda_outputs(kern):
    x = lda_inputs()
    K, V, D = x["K"], x["V"], x["D"]
    out = {}
    z0 = kern.random_assignments(x["words"].shape[0], K, 7)
    out["random_assignments"] = int_hash(z0)
    ndk, nwk, nk = kern.count_tables(x["doc_ptr"], x["words"], z0, K, V)
    out["count_tables"] = fingerprint(ndk) + fingerprint(nwk) + fingerprint(nk)
    keys = kern.document_keys(x["doc_ptr"], x["words"])
    out["document_keys"] = int_hash(keys)
    for mode, M, scale, C in FIXED_CASES:
        eta = scale * x["eta"][:M]
        y_sign = x["y_sign"][:, :M].copy() if M else np.zeros((D, 0))
        r = kern.fixed_topic_sweeps(x["doc_ptr"], x["words"], z0, x["phi_t"], eta, y_sign, x["y_class"], mode, C, 1.0,
                                    0.3, 6, 2, 11, True, keys, mode == 2, True)
        out[f"fixed_{mode}_{M}_{scale}_{C}"] = [int_hash(r[0]), fingerprint(r[1]), int_hash(r[2]), fingerprint(r[3])]
    out["expected_topic_word_soft"] = fingerprint(kern.expected_topic_word_soft(x["words"], r[3], V))
    for M in (0, 2):
        for multiplicative in (True, False):
            eta = 3.0 * x["eta"][:M]
            y_sign = x["y_sign"][:, :M].copy() if M else np.zeros((D, 0))
            inv_omega = x["inv_omega"][:, :M].copy() if M else np.zeros((D, 0))
            state = (z0, ndk, nwk, nk)
            for sweep in range(3):
                state = kern.gibbs_medlda_sweep(x["doc_ptr"], x["words"], *state, eta, y_sign, inv_omega, 0.3, 0.1,
                                                2.0, 1.0, 5 + sweep, multiplicative)
            out[f"gibbs_{M}_{multiplicative}"] = [int_hash(state[0]), fingerprint(state[1]), fingerprint(state[2])]
    return out


def crp_outputs(crp):
    rng = np.random.default_rng(7)
    n, d = 30, 2
    X = np.concatenate([rng.standard_normal((15, d)) - 2.0, rng.standard_normal((15, d)) + 2.0])
    design = np.hstack([X, np.ones((n, 1))])
    Y = np.where(X[:, :1] + 0.3 * rng.standard_normal((n, 1)) > 0, 1.0, -1.0)
    prior_mean, prior_chol = np.zeros(d), 2.0 * np.eye(d)
    cap = 2
    state = (np.full(n, -1, np.int64), np.zeros(cap, np.int64), np.zeros((cap, d)),
             np.broadcast_to(prior_chol, (cap, d, d)).copy(), np.zeros((cap, 1, d + 1)))
    out = {}
    for sweep in range(2):
        z, counts, means, chols, eta, fresh = crp.crp_sweep(
            X, design, Y, *state, alpha=1.0, C=2.0, margin=1.0, prior_scale=1.0, prior_mean=prior_mean,
            prior_kappa=0.5, prior_dof=d + 2.0, prior_chol=prior_chol, n_aux=2, seed=3 + sweep)
        state = (z, counts, means, chols, eta)
        out[f"crp_{sweep}"] = [int_hash(z), int_hash(counts), fingerprint(means), fingerprint(chols), fingerprint(eta),
                               int_hash(fresh)]
    return out


def m2dpm_inputs():
    rng = np.random.default_rng(11)
    n, p, M = 40, 3, 3
    Xt = np.hstack([rng.standard_normal((n, p - 1)), np.ones((n, 1))])
    y_codes = np.argmax(Xt @ rng.standard_normal((p, M)) + 0.3 * rng.standard_normal((n, M)), axis=1).astype(np.int64)
    y_bin = np.where(Xt[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    others = np.array([[m for m in range(M) if m != c] for c in range(M)])[y_codes]
    A_multi = np.zeros((n, M - 1, M, p))
    rows, cols = np.arange(n)[:, None], np.arange(M - 1)[None, :]
    A_multi[rows, cols, y_codes[:, None], :] = Xt[:, None, :]
    A_multi[rows, cols, others, :] = -Xt[:, None, :]
    return {"n": n, "M": M, "Xt": Xt, "y_codes": y_codes, "y_bin": y_bin, "A_bin": y_bin[:, None] * Xt,
            "A_multi": A_multi.reshape(n * (M - 1), M * p), "rng": rng}


def m2dpm_outputs(m2):
    x = m2dpm_inputs()
    n, M = x["n"], x["M"]
    out = {}
    for name, A, U, tol in (("bin", x["A_bin"], 0.5, 1e-9), ("bin_big_U", x["A_bin"], 50.0, 1e-7),
                            ("multi", x["A_multi"], 2.0, 1e-8)):
        w, primal, gap, iterations = m2.svm_primal_qp(A, np.ones(A.shape[0]), n, U, tol)
        out[f"qp_{name}"] = [fingerprint(w), float(primal), float(gap), int(iterations),
                             float(m2.svm_hinge_sum(A, np.ones(A.shape[0]), n, w))]
    rng = x["rng"]
    X = x["Xt"][:, :2]
    K0 = 3
    Q0 = ((X[:, None, :] - X[:K0][None]) ** 2).sum(-1) + rng.random((n, K0))
    z = rng.integers(0, K0, n).astype(np.int64)
    order = rng.permutation(n).astype(np.int64)
    scale = rng.random(n)
    for code, Xa in ((0, X), (1, np.abs(X) + 0.1)):
        for n_classes, y in ((0, x["y_bin"]), (M, x["y_codes"])):
            z_new, seeds = m2.assignment_pass(order, z, np.bincount(z, minlength=K0).astype(np.int64), Q0,
                                              np.full(n, 2.5), Xa, code, 1.5, x["Xt"], y, n_classes, scale, 1.0, 1.0)
            out[f"assign_{code}_{n_classes}"] = [int_hash(z_new), int_hash(seeds)]
    return out


PINNED = {'random_assignments': 'aa0d936b8eb57834',
 'count_tables': [148.0, 211.57142857142858, 148.0, 207.71428571428572, 148.0, 183.57142857142856],
 'document_keys': 'f1602d7dbdaf271e',
 'fixed_0_1_1.0_1.0': ['09bdb03421d9d113',
                       [148.0, 227.82142857142856],
                       '925405032c9712e6',
                       [148.0, 210.1514199287461]],
 'fixed_0_3_8.0_20.0': ['616102adbdeb8747',
                        [148.0, 211.85714285714286],
                        'c97123fc15784e30',
                        [148.0, 208.1000804898652]],
 'fixed_1_3_1.0_1.0': ['f773bd7d30018b56',
                       [148.0, 220.14285714285714],
                       'f9b55d85fe84cf4a',
                       [148.0, 209.64989838227865]],
 'fixed_1_3_8.0_20.0': ['10b241f5fa8d644d',
                        [148.0, 221.8214285714286],
                        '44170c227e17f570',
                        [148.0, 208.63666135409085]],
 'fixed_2_0_1.0_0.0': ['68c5b044d6476a19',
                       [148.0, 219.42925340715578],
                       'cb035ad67aa4f09d',
                       [148.0, 210.95188679966554]],
 'expected_topic_word_soft': [147.99999999999997, 205.0582540803539],
 'gibbs_0_True': ['77c49d02b0e89f5a', [148.0, 207.71428571428572], [148.0, 213.85714285714286]],
 'gibbs_0_False': ['77c49d02b0e89f5a', [148.0, 207.71428571428572], [148.0, 213.85714285714286]],
 'gibbs_2_True': ['69d92ac30bd0a470', [148.0, 219.99999999999997], [148.0, 206.14285714285714]],
 'gibbs_2_False': ['69d92ac30bd0a470', [148.0, 219.99999999999997], [148.0, 206.14285714285714]],
 'crp_0': ['8453df17e815ee97',
           '6459719bd22bcb9a',
           [-2.686417929534978, -1.0854594509196307],
           [24.963660312040375, 32.549025970159896],
           [2.8828520479308306, 2.6482198276209363],
           '1f6e031dd33eed75'],
 'crp_1': ['4914bd75208a6123',
           '7cbe0bcf583ec895',
           [-0.8103754281746522, 1.3631063044251972],
           [24.976727709227745, 32.409962077256125],
           [2.8828520479308306, 2.6482198276209363],
           '66687aadf862bd77'],
 'qp_bin': [[0.825487576488103, 0.6643344772884495],
            9.32425579855125,
            3.5994975888797853e-09,
            10,
            15.635571154433986],
 'qp_bin_big_U': [[1.0719562674848997, 0.8113133686876925],
                  741.3344460933718,
                  9.973633041227004e-06,
                  10,
                  14.767855730542834],
 'qp_multi': [[-4.884981308350689e-15, 0.32764527388244336],
              24.662873210000683,
              1.2106031732628253e-08,
              11,
              9.052854246934187],
 'assign_0_0': ['8bd4dec4e8ac2d7c', 'c69a9157638e69fb'],
 'assign_0_3': ['ea911f245c9f641e', '17ca787d3adf620f'],
 'assign_1_0': ['66cfff1332002da9', 'c69a9157638e69fb'],
 'assign_1_3': ['ea911f245c9f641e', '17ca787d3adf620f']}


def _assert_pinned(actual, expected):
    if isinstance(expected, (str, int)):  # hashes of integer outputs, iteration counts
        assert actual == expected
    elif isinstance(expected, float):
        np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12)
    else:
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _assert_pinned(a, e)


@pytest.mark.parametrize("outputs", [lda_outputs, crp_outputs, m2dpm_outputs], ids=["lda", "crp", "m2dpm"])
def test_kernels_give_the_pinned_outputs(outputs):
    module = {"lda": lda_kernels, "crp": crp_kernels, "m2dpm": m2dpm_kernels}[outputs.__name__.split("_")[0]]
    got = outputs(module)
    for name, value in got.items():
        _assert_pinned(value, PINNED[name])


def test_threaded_and_serial_sweeps_agree():
    x = lda_inputs()
    keys = lda_kernels.document_keys(x["doc_ptr"], x["words"])
    z0 = lda_kernels.random_assignments(x["words"].shape[0], x["K"], 3)
    args = (x["doc_ptr"], x["words"], z0, x["phi_t"], x["eta"], x["y_sign"], x["y_class"], lda_kernels.MODE_BINARY,
            2.0, 1.0, 0.3, 5, 1, 13, True, keys, False, True)
    serial = lda_kernels.fixed_topic_sweeps_serial(*args)
    previous = numba.get_num_threads()
    try:
        for n_threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
            numba.set_num_threads(n_threads)
            for a, b in zip(lda_kernels.fixed_topic_sweeps(*args), serial):
                np.testing.assert_array_equal(a, b)
    finally:
        numba.set_num_threads(previous)


def test_document_ranges_cover_every_document_once():
    doc_ptr = np.array([0, 0, 5, 5, 6, 40, 41, 41], dtype=np.int64)
    for n_chunks in range(1, 9):
        bounds = lda_kernels._chunks(doc_ptr, n_chunks)
        assert bounds[0] == 0 and bounds[-1] == doc_ptr.shape[0] - 1
        assert len(bounds) == n_chunks + 1 and np.all(np.diff(bounds) >= 0)


def test_each_kernel_compiles_one_specialisation():
    x = lda_inputs()
    K, V, D = x["K"], x["V"], x["D"]
    frozen_eta = x["eta"].copy()
    frozen_eta.flags.writeable = False  # as arrays from JAX are
    keys = lda_kernels.document_keys(x["doc_ptr"], x["words"].astype(np.int64))
    n_tokens = x["words"].shape[0]
    variants = ((x["eta"], x["words"], np.zeros(n_tokens, np.int32), x["y_class"], 1.0),
                (frozen_eta, x["words"].astype(np.int64), np.zeros(n_tokens, np.int64), x["y_class"].astype(np.int32),
                 1))
    for eta, words, z, y_class, C in variants:
        for kernel in (lda_kernels.fixed_topic_sweeps, lda_kernels.fixed_topic_sweeps_serial):
            kernel(x["doc_ptr"], words, z, x["phi_t"], eta, x["y_sign"], y_class, 0, C, 1.0, 0.3, 2, 1, 0, True,
                   keys, False)
            kernel(x["doc_ptr"], words, z, np.asfortranarray(x["phi_t"]), np.zeros((0, K)), np.zeros((D, 0)), y_class,
                   2, 0.0, 0.0, 0.3, 2, 1, 0, False, keys, True, True)
        tables = lda_kernels.count_tables(x["doc_ptr"], words, z, K, V)
        lda_kernels.gibbs_medlda_sweep(x["doc_ptr"], words, z, *tables, eta, x["y_sign"], x["inv_omega"], 0.3, 0.1,
                                       C, 1, 0)
    assert len(lda_kernels._fixed_topic_sweeps_range.signatures) == 1
    assert len(medlda_gibbs_kernels._gibbs_medlda_sweep.signatures) == 1
    assert len(lda_tokens._count_tables.signatures) == 1
    assert len(lda_tokens._document_keys.signatures) == 1
    m = m2dpm_inputs()
    for A in (m["A_bin"], np.asfortranarray(m["A_bin"])):
        m2dpm_kernels.svm_primal_qp(A, np.ones(m["n"]), m["n"], 1.0, 1e-7)
        m2dpm_kernels.svm_primal_qp(A, np.ones(m["n"]), m["n"], 1, gap_tol=1e-6, max_iter=50)
    assert len(m2dpm_kernels._svm_primal_qp.signatures) == 1
    n, X = m["n"], m["Xt"]
    z = np.zeros(n, np.int64)
    for y, n_classes in ((m["y_bin"], 0), (m["y_codes"], m["M"])):
        m2dpm_kernels.assignment_pass(np.arange(n), z, np.array([n]), np.zeros((n, 1)), np.ones(n), X, 0, 1.0, X, y,
                                      n_classes, np.ones(n), 1.0, 1.0)
    crp_outputs(crp_kernels)
    X = np.asfortranarray(m["Xt"][:, :2])
    prior_mean = np.zeros(2)
    prior_mean.flags.writeable = False
    crp_kernels.crp_sweep(X, X, np.ones((n, 1)), np.full(n, -1), np.zeros(2, np.int32), np.zeros((2, 2)),
                          np.broadcast_to(np.eye(2), (2, 2, 2)), np.zeros((2, 1, 2)), alpha=1, C=1, margin=1,
                          prior_scale=1, prior_mean=prior_mean, prior_kappa=1, prior_dof=4, prior_chol=np.eye(2),
                          n_aux=1, seed=0)
    for module in (m2dpm_kernels, crp_kernels):  # every kernel and helper, with the calls above
        for name, value in vars(module).items():
            if isinstance(value, numba.core.dispatcher.Dispatcher):
                assert len(value.signatures) <= 1, (name, value.signatures)


def _replayed_conditionals(x, z_before, z_after, mode, eta, y_sign, C, margin, alpha):
    """Each token's normalised conditional, from the reference functions, in the state the
    sweep saw it in (the document's earlier tokens already redrawn)."""
    K = x["K"]
    n_tokens = x["words"].shape[0]
    p = np.zeros((n_tokens, K))
    M = eta.shape[0]
    for d in range(x["D"]):
        start, stop = x["doc_ptr"][d], x["doc_ptr"][d + 1]
        for i in range(start, stop):
            z = np.concatenate([z_after[start:i], z_before[i + 1:stop]])
            ndk = np.bincount(z, minlength=K).astype(np.float64)
            f = eta @ ndk
            n_d = float(stop - start)
            phi_w = np.ascontiguousarray(x["phi_t"][x["words"][i]])
            out = np.empty(K)
            if mode == lda_kernels.MODE_UNSUPERVISED or M == 0:
                lda_kernels.fixed_topic_token_weights(ndk, phi_w, n_d, f, eta, y_sign[d], x["y_class"][d], mode, C,
                                                      margin, alpha, out)
            else:
                table, known = np.empty((M, K)), np.zeros(M, np.bool_)
                lda_kernels.supervised_token_weights(ndk, phi_w, n_d, f, eta, eta.max(axis=1), eta.min(axis=1),
                                                     y_sign[d], x["y_class"][d], mode, C, margin, alpha, table, known,
                                                     out)
            p[i] = out / out.sum()
    return p


@pytest.mark.parametrize("mode, n_classifiers, scale, C", FIXED_CASES)
def test_sweeps_draw_from_the_reference_conditionals(mode, n_classifiers, scale, C):
    """One sweep with ``record_probabilities``: each token's recorded conditional equals
    :func:`supervised_token_weights` / :func:`fixed_topic_token_weights` (normalised) in
    the state it was drawn in."""
    x = lda_inputs()
    eta = scale * x["eta"][:n_classifiers]
    y_sign = x["y_sign"][:, :n_classifiers].copy() if n_classifiers else np.zeros((x["D"], 0))
    keys = lda_kernels.document_keys(x["doc_ptr"], x["words"])
    z0 = lda_kernels.random_assignments(x["words"].shape[0], x["K"], 5)
    z_after, _, kept, p_kept = lda_kernels.fixed_topic_sweeps_serial(
        x["doc_ptr"], x["words"], z0, x["phi_t"], eta, y_sign, x["y_class"], mode, C, 1.0, 0.3, 1, 0, 17, True, keys,
        False, True)
    np.testing.assert_array_equal(kept[0], z_after)
    expected = _replayed_conditionals(x, z0, z_after, mode, eta, y_sign, C, 1.0, 0.3)
    np.testing.assert_allclose(p_kept, expected, rtol=1e-12, atol=1e-300)
