"""M2DPM's numba kernels (paper 001, Algorithm 1): the eta-step's interior point
:func:`svm_primal_qp` and the sequential z-step :func:`assignment_pass`.

The pinned values were computed by the kernels before their compile-time rework (work
arrays passed in from Python, no allocation inside the compiled code): the rework must
not change a result. Weights, objective and gap are compared to 1e-12 relative (of the
weights' norm and of the objective), iteration counts and labels exactly.
"""
import numpy as np
import pytest

from regbayes.algorithms.m2dpm_kernels import assignment_pass, svm_hinge_sum, svm_primal_qp


def qp_problem(seed):
    """A random eta-step QP: binary hinge rows ``y_i x~_i`` (seed % 4 in {0, 3}; 3 with
    half the rows zero) or Crammer-Singer rows for M = 3, 4 classes (seed % 4 in {1, 2};
    2 with random margins ``c``, some negative); random U, gap tolerance and max_iter."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(1, 60)), int(rng.integers(1, 6))
    kind = seed % 4
    Xt = np.hstack([rng.standard_normal((n, p - 1)) * rng.uniform(0.1, 10) + rng.uniform(-5, 5), np.ones((n, 1))])
    if kind == 3:
        Xt[: n // 2] = 0.0
    if kind in (0, 3):
        y = np.where(rng.standard_normal(n) + Xt[:, 0] * rng.uniform(-1, 1) > 0, 1.0, -1.0)
        A, c = y[:, None] * Xt, np.ones(n) * rng.uniform(0.5, 2)
    else:
        M = 2 + kind
        yc = rng.integers(0, M, n)
        A = np.zeros((n, M - 1, M, p))
        for i in range(n):
            for r, m in enumerate(m for m in range(M) if m != yc[i]):
                A[i, r, yc[i]], A[i, r, m] = Xt[i], -Xt[i]
        A, c = A.reshape(n * (M - 1), M * p), np.ones(n * (M - 1))
        if kind == 2:
            c = c * rng.uniform(-1, 2, A.shape[0])
    U, tol, max_iter = float(10 ** rng.uniform(-2, 3)), float(10 ** rng.uniform(-11, -5)), int(rng.choice([3, 200]))
    return A, c, n, U, tol, max_iter


QP_PINS = {0: (['-0x1.f428a8953786ap-3', '-0x1.9cad962e173efp-3', '-0x1.2e25e10017694p-3', '-0x1.5b285f008d004p-4'],
     '0x1.1efaaf482ed9ep-4', '0x1.f344800000000p-38', 10),
 1: (['-0x1.03f07eab913adp-8', '-0x1.0173af93853bep-6', '-0x1.e6eeac1fd5565p-4', '-0x1.b5623c3168bdap-7',
      '-0x1.986da27530a32p-8', '-0x1.8535f4629e412p-4', '0x1.1bad3dc395c3dp-6', '0x1.678f1830d19a3p-6',
      '0x1.b612504139ef4p-3'],
     '0x1.dc98d4b00392ap+7', '0x1.44ba1030279c0p+4', 3),
 2: (['-0x1.7eae450d1999bp-5', '-0x1.208cda9044fbap-5', '-0x1.1fb4ddb1c6cddp-5', '0x1.076b95461db28p-7',
      '0x1.72729c3e19596p-4', '-0x1.b527bc0e072e4p-5', '-0x1.1a0856f548fd3p-7', '0x1.49ecd8a6625e8p-4'],
     '0x1.1974791886469p+3', '0x1.2d1d4c2061dc8p+0', 3),
 3: (['0x1.e03d54ec04344p-1'], '0x1.debb092d3c306p+12', '0x1.30f1800000000p-22', 7),
 4: (['0x1.957d6b4ce7f5fp-3', '0x1.4e2c3693c7e0fp-6', '0x1.8ce37b33dbb9ap-7', '0x1.15104202cf806p-5',
      '0x1.1b688de48a57ep-4'],
     '0x1.2a0109e6ca51dp+14', '0x1.72855c64ac2a6p+30', 3),
 5: (['0x1.8243aabfa6308p-8', '0x1.743fe2f81b223p-5', '0x1.cd7d77d649091p-6', '-0x1.bad5c0121fb52p-8',
      '0x1.33dc8d7e22792p-5', '0x1.3649e2a6c7a31p-7', '-0x1.87a52c8efa565p-7', '0x1.453ed223ebc06p-10',
      '0x1.c01a6000405e1p-7', '0x1.046d00b2b534ap-6', '-0x1.f76bb8069aad8p-7', '-0x1.125697d45c86fp-5',
      '-0x1.e1d164f887cedp-6', '-0x1.c55effee61064p-8', '-0x1.b6130dd77d142p-5'],
     '0x1.4b55d2d7a86abp+1', '0x1.fa0086e056e48p-2', 3),
 6: (['0x1.272216c168d92p-4', '0x1.526bfb953a88dp-6', '0x1.e3ccd932c331ep-4', '-0x1.1385b1e4025e3p-2',
      '0x1.176754e0b259fp-2', '0x1.0e8fa997743ecp-5', '0x1.6562ffd658492p-3', '-0x1.daa812d1fdadfp-3',
      '-0x1.4b092afce584ap-3', '0x1.70bac487c020fp-6', '-0x1.f9d059883947ep-5', '0x1.57ed3fda6dd5dp-7'],
     '0x1.c0e88a505787cp+2', '0x1.6adc947e00000p-19', 7),
 7: (['-0x1.df3b413ab0c09p-3', '-0x1.b45d07b609037p-5', '-0x1.481ec10d4023ap-4', '-0x1.eba4725a52270p-1'],
     '0x1.88e998d82fbdfp+13', '0x1.1b8ba3bd4d7cfp+24', 3),
 11: (['0x0.0p+0'], '0x1.6c2481b265c25p+1', '0x1.29a32f26a6a00p-8', 3),
 14: (['0x1.837f76a76415ap-2', '-0x1.9685931c18a80p-5', '0x1.321794bbe02d3p+0', '-0x1.0a69b18a83fecp+0',
       '0x1.b511ebabb116ep-2', '-0x1.ace9a99856de3p-1', '0x1.c40c13f7f0a2fp-3', '-0x1.2a2202ae23bebp+0',
       '0x1.8afec5af3cee6p-2', '0x1.d82b8794b0749p-2', '0x1.ae37f2e1b0c1dp-1', '-0x1.caa40e8cdbb2fp-6',
       '0x1.b2438555058a9p-5', '-0x1.881687ea1f405p-3', '-0x1.3c855f3609a08p-1', '-0x1.861c093a1fafep-2',
       '-0x1.25162d5f49b56p-3', '-0x1.587ae386514b8p-4', '0x1.b159a237f671fp-1', '-0x1.1432b4d44cedcp-2'],
      '0x1.d987f716d5c37p+1', '0x1.0730000000000p-39', 14),
 27: (['-0x1.06f16146aefffp-5', '-0x1.346240adb7f51p-5', '0x1.74eb6018c1b4cp-6', '-0x1.9f09cfca82840p-9'],
      '0x1.85ffd164831a6p-10', '0x1.f3d4c00000000p-44', 10),
 35: (['0x1.52553b45cf5b6p-3', '-0x1.da665de247251p-2'], '0x1.39f7b83629e8ep+6', '0x1.3d8a8adeb1adep+6', 3),
 108: (['0x1.cf3f4d873d88fp-5', '-0x1.bea6d18b90060p-2', '0x1.786e0018f19c8p-2', '-0x1.9e0aef8dfbceep-4',
        '-0x1.2e46d2ad6e8b0p-2'],
       '0x1.b42aee4a7b5aep-3', '0x1.2decb055503a0p-8', 3),
 123: (['-0x1.0b60bcf366a03p-3', '-0x1.2c7d9eb8e8b66p-2', '-0x1.7c90ac559bf49p-3', '-0x1.b5aa2d24a9a61p-5'],
       '0x1.1fd3e9b3af303p-4', '0x1.0d120523af1fep-4', 3)}  # seed -> (w as float.hex, primal, gap, iterations)

SINGULAR_SEEDS = (297, 605)  # the Newton system turns singular to machine precision near the optimum


@pytest.mark.parametrize("seed", sorted(QP_PINS))
def test_qp_gives_the_pinned_solutions(seed):
    A, c, n, U, tol, max_iter = qp_problem(seed)
    w_hex, primal_hex, gap_hex, iterations = QP_PINS[seed]
    w_pin = np.array([float.fromhex(h) for h in w_hex])
    primal_pin, gap_pin = float.fromhex(primal_hex), float.fromhex(gap_hex)
    w, primal, gap, its = svm_primal_qp(A, c, n, U, tol, max_iter)
    assert its == iterations
    assert w.shape == w_pin.shape and w.dtype == np.float64
    np.testing.assert_allclose(w, w_pin, rtol=0, atol=1e-12 * max(np.linalg.norm(w_pin), 1e-300))
    np.testing.assert_allclose(primal, primal_pin, rtol=1e-12)
    np.testing.assert_allclose(gap, gap_pin, rtol=0, atol=1e-12 * abs(primal_pin))
    # the returned objective is the objective at the returned weights
    np.testing.assert_allclose(primal, 0.5 * w @ w + U * svm_hinge_sum(A, c, n, w), rtol=1e-12)


@pytest.mark.parametrize("seed", SINGULAR_SEEDS)
def test_qp_reports_a_singular_newton_system(seed):
    A, c, n, U, tol, max_iter = qp_problem(seed)
    with pytest.raises(np.linalg.LinAlgError, match="singular to machine precision"):
        svm_primal_qp(A, c, n, U, tol, max_iter)


def test_qp_edge_cases_give_the_pinned_results():
    # no iteration: the starting point w = 0 with its objective U * sum_i max(0, max_j c_j)
    w, primal, gap, its = svm_primal_qp(np.ones((4, 3)), np.arange(4.0), 2, 2.0, max_iter=0)
    np.testing.assert_array_equal(w, np.zeros(3))
    assert (primal, gap, its) == (2.0 * (1.0 + 3.0), np.inf, 0)
    # a Schur complement that overflows stops the solver quietly at the best point so far
    w, primal, gap, its = svm_primal_qp(np.array([[1.0, 1e300], [0.0, 1.0]]), np.ones(2), 2, 1.0)
    np.testing.assert_array_equal(w, np.zeros(2))
    assert (primal, gap, its) == (2.0, np.inf, 1)
    # no weights at all (P = 0): the hinge terms alone
    w, primal, gap, its = svm_primal_qp(np.zeros((4, 0)), np.ones(4), 2, 1.0)
    assert w.shape == (0,) and primal == 2.0 and 0 <= gap <= 1e-9 * primal and its == 7


@pytest.mark.parametrize("n_groups, c, match", [(0, np.ones(6), "n_groups"), (4, np.ones(6), "n_groups"),
                                                (7, np.ones(6), "n_groups"), (3, np.ones(5), "one entry per row")])
def test_qp_rejects_inconsistent_groups_and_margins(n_groups, c, match):
    with pytest.raises(ValueError, match=match):
        svm_primal_qp(np.ones((6, 2)), c, n_groups, 1.0)


def test_qp_leaves_its_inputs_alone_and_accepts_any_layout():
    A, c, n, U, tol, max_iter = qp_problem(5)
    A_in, c_in = np.asfortranarray(A), c.copy()
    A_in.flags.writeable = False
    out = svm_primal_qp(A_in, c_in, n, U, tol, max_iter)
    ref = svm_primal_qp(A, c, n, U, tol, max_iter)
    np.testing.assert_array_equal(A_in, A)
    np.testing.assert_array_equal(c_in, c)
    np.testing.assert_array_equal(out[0], ref[0])
    assert out[1:] == ref[1:]


def test_qp_solution_is_optimal_against_a_reference_solver():
    # The QP's dual, max c'lam - 1/2 ||A'lam||^2 over 0 <= lam, G lam <= U, solved by
    # scipy's SLSQP (ftol 1e-14): the same optimum to 1e-9 relative (they agree to 2e-12);
    # the dual can never exceed the primal (weak duality).
    from scipy.optimize import minimize

    for seed in (0, 6):
        A, c, n, U, _, _ = qp_problem(seed)
        w, primal, gap, _ = svm_primal_qp(A, c, n, U, 1e-10, 200)
        k = A.shape[0] // n
        res = minimize(lambda lam: 0.5 * np.sum((A.T @ lam) ** 2) - c @ lam, np.full(A.shape[0], U / (2 * k)),
                       jac=lambda lam: A @ (A.T @ lam) - c, method="SLSQP", bounds=[(0, U)] * A.shape[0],
                       constraints=[{"type": "ineq", "fun": lambda lam: U - lam.reshape(n, k).sum(axis=1),
                                     "jac": lambda lam: -np.kron(np.eye(n), np.ones((1, k)))}],
                       options={"ftol": 1e-14, "maxiter": 1000})
        dual = -res.fun
        assert res.success and dual <= primal * (1 + 1e-12)
        np.testing.assert_allclose(dual, primal, rtol=1e-9)
        assert 0 <= gap <= 1e-10 * primal


ASSIGN_PINS = {0: ([8, 4, 1, 3, 1, 1, 2, 4, 0, 2, 4, 9, 10, 1, 4, 7, 1, 4, 1, 12, 5, 0, 0, 2, 1, 2, 2, 6, 0, 10, 2, 0, 1, 0, 11, 1,
      2, 2, 1, 1, 10, 2],
     [3, 17, 20, 27, 15, 0, 11, 12, 34, 19]),
 1: ([0, 8, 2, 0, 2, 1, 6, 7, 0, 0, 0, 4, 7, 0, 8, 5, 1, 0, 6, 3, 1, 1, 5, 1], [11, 22, 18, 12, 14]),
 2: ([3, 0, 1, 1, 10, 1, 7, 3, 9, 3, 3, 6, 0, 10, 5, 0, 10, 2, 1, 0, 5, 0, 6, 0, 0, 4, 0, 2, 0, 5, 1, 7, 0, 5, 3, 7,
      2, 4, 0, 8, 3, 2],
     [18, 36, 0, 37, 29, 22, 6, 39, 8, 4]),
 3: ([1, 1, 2, 2, 3, 2, 2, 1, 2, 3, 1, 0, 2, 3, 0, 2, 3, 3, 0, 1, 2, 2, 1, 0, 2, 1, 0, 3, 0, 0, 3, 1, 3, 2, 1, 0, 1,
      1, 2, 1],
     [34, 21, 16]),
 4: ([2, 0, 4, 3, 12, 3, 1, 2, 9, 1, 10, 0, 5, 0, 3, 3, 1, 5, 0, 6, 1, 1, 7, 0, 0, 3, 5, 0, 3, 1, 6, 6, 8, 0, 11, 9],
     [2, 26, 31, 22, 32, 8, 10, 34, 4]),
 5: ([0, 1, 2, 7, 5, 0, 4, 13, 9, 5, 1, 7, 8, 3, 12, 2, 6, 9, 11, 15, 14, 0, 0, 0, 0, 2, 0, 2, 10, 1, 7, 1, 1],
     [32, 25, 13, 6, 9, 16, 30, 12, 17, 28, 18, 14, 7, 20, 19]),
 6: ([7, 6, 6, 3, 4, 2, 5, 6, 0, 2, 1, 1, 1, 1, 1, 0, 2, 2, 1, 0, 2, 5], [3, 4, 6, 7, 0]),
 7: ([0, 2, 2, 5, 1, 5, 0, 10, 2, 9, 10, 12, 2, 0, 1, 8, 5, 2, 0, 11, 10, 6, 1, 1, 0, 1, 4, 4, 1, 2, 2, 2, 2, 8, 7, 0,
      9, 4, 1, 3, 3, 4, 0, 5, 4, 1, 2],
     [40, 26, 3, 21, 34, 33, 36, 10, 19, 11])}  # seed -> (z, seeds)


def assign_problem(seed):
    rng = np.random.default_rng(seed)
    n, d, K0 = int(rng.integers(1, 50)), int(rng.integers(1, 4)), int(rng.integers(1, 5))
    X = rng.standard_normal((n, d)) * 2
    code = seed % 2
    if code:
        X = np.abs(X)
    Xt = np.hstack([X, np.ones((n, 1))])
    M = (0, 3)[seed // 2 % 2]
    y = rng.integers(0, M, n).astype(float) if M else np.where(rng.random(n) > 0.5, 1.0, -1.0)
    Q0 = rng.random((n, K0)) * 5
    z = rng.integers(0, K0, n)
    return (rng.permutation(n), z, np.bincount(z, minlength=K0), Q0, rng.random(n) * 5, X, code, rng.uniform(0.2, 3),
            Xt, y, M, rng.random(n), rng.uniform(0.1, 3), 1.0)


@pytest.mark.parametrize("seed", sorted(ASSIGN_PINS))
def test_assignment_pass_gives_the_pinned_labels(seed):
    args = assign_problem(seed)
    copies = [np.copy(a) for a in args]
    z, seeds = assignment_pass(*args)
    z_pin, seeds_pin = ASSIGN_PINS[seed]
    assert z.dtype == np.int64 and seeds.dtype == np.int64
    np.testing.assert_array_equal(z, z_pin)
    np.testing.assert_array_equal(seeds, seeds_pin)
    for a, b in zip(args, copies):
        np.testing.assert_array_equal(a, b)
