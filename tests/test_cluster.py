"""HRF §2.4 and App H: cluster-adapted CE estimators (eqs 83–88) and HRF-C (Def H.2)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize

from rflib import moments, quadrature
from rflib.features import classic, cluster, complex_exp, hybrid

RX = np.array([0.8, -0.5, 0.3, 1.2, -0.7])
RY = np.array([0.4, 0.9, -0.6, 0.5, -0.2])


def test_eq_88_real_diagonal_minimises_the_loss_coordinatewise():
    """a_k = √|b/a| minimises (a_k a + b/a_k)², leaving s = 4 Σ_{ab > 0} a·b (our derivation from eq 88)."""
    A = cluster.real_diagonal_A(RX, RY, clip=None)
    for k in range(RX.size):
        res = optimize.minimize_scalar(lambda t, k=k: (np.exp(t) * RX[k] + RY[k] / np.exp(t)) ** 2)
        assert (A[k] * RX[k] + RY[k] / A[k]) ** 2 == pytest.approx(res.fun, abs=1e-9)
    same_sign = RX * RY > 0
    assert cluster.cluster_loss(A, RX, RY) == pytest.approx(4 * np.sum(RX[same_sign] * RY[same_sign]), rel=1e-12)


def test_complex_diagonal_A_zeroes_the_loss_and_the_variance_at_the_centres(key):
    """Eqs 83–87: exact complex A ⇒ l(A) = 0 ⇒ every draw of the estimator equals SM at (r^x, r^y)."""
    A = cluster.complex_diagonal_A(RX, RY)
    assert cluster.cluster_loss(A, RX, RY) == pytest.approx(0.0, abs=1e-24)
    W = jax.random.normal(key, (64, RX.size))
    est = complex_exp.complex_exponential_estimator(W, np.diag(A)).estimate(RX[None], RY[None])
    assert float(est[0, 0]) == pytest.approx(np.exp(RX @ RY), rel=1e-12)
    assert moments.complex_exp.log_mse_complex_exponential(RX, RY, np.diag(A), 4) < np.log(1e-25)


def test_degenerate_centre_coordinates_follow_the_paper_and_clip():
    rx, ry = np.array([0.0, 0.0, 2.0, 1e-9]), np.array([0.0, 1.0, 0.0, 1.0])
    raw = cluster.real_diagonal_A(rx, ry, clip=None)
    assert raw[0] == 1.0 and raw[1] > 1e6 and raw[2] < 1e-6 and raw[3] > 1e4
    np.testing.assert_allclose(cluster.real_diagonal_A(rx, ry), [1.0, 10.0, 0.1, 10.0])
    A = cluster.complex_diagonal_A(rx, ry)
    assert A[0] == 1 + 1j and A[1] == 1e3 and A[2] == 1e-3
    with pytest.raises(ValueError, match="clip"):
        cluster.real_diagonal_A(rx, ry, clip=0.5)


def test_moment_A_minimises_the_cluster_averaged_loss(key):
    k1, k2 = jax.random.split(key)
    X = np.asarray(RX + 0.3 * jax.random.normal(k1, (400, 5)))
    Y = np.asarray(RY + 0.3 * jax.random.normal(k2, (300, 5)))
    a = cluster.moment_diagonal_A(X, Y)

    def averaged(log_a):
        return np.mean(np.sum(X**2 * np.exp(2 * log_a), 1)) + np.mean(np.sum(Y**2 * np.exp(-2 * log_a), 1))

    res = optimize.minimize(averaged, np.zeros(5), method="BFGS", options={"gtol": 1e-12})
    np.testing.assert_allclose(np.log(a), res.x, atol=1e-5)


def _two_cluster_data(key, n_per=30, noise=0.05, scale=0.6):
    keys = jax.random.split(key, 2)
    cx = np.stack([RX, -RX[::-1]]) * scale
    cy = np.stack([RY, RY[::-1]]) * scale
    X = np.concatenate(
        [cx[i] + noise * np.asarray(jax.random.normal(jax.random.fold_in(keys[0], i), (n_per, 5))) for i in range(2)]
    )
    Y = np.concatenate(
        [cy[j] + noise * np.asarray(jax.random.normal(jax.random.fold_in(keys[1], j), (n_per, 5))) for j in range(2)]
    )
    return cx, cy, X, Y


def test_hrf_c_feature_map_equals_the_direct_cluster_pair_estimator(key):
    cx, cy, X, Y = _two_cluster_data(key)
    Ws = jax.random.normal(jax.random.fold_in(key, 1), (2, 2, 7, 5))
    pairs = [
        [complex_exp.diagonal_ce_estimator(Ws[i, j], cluster.real_diagonal_A(cx[i], cy[j])) for j in range(2)]
        for i in range(2)
    ]
    est = cluster.cluster_hybrid_estimator(pairs, cx, cy)
    assert est.query_features(X).body.shape == (X.shape[0], 2 * 2 * 7)
    np.testing.assert_allclose(est.estimate(X, Y), cluster.cluster_hybrid_direct(pairs, cx, cy, X, Y), rtol=1e-12)


def test_hrf_c_mse_matches_the_real_diagonal_closed_form_by_monte_carlo(key):
    """Pair-averaged empirical MSE over many feature draws → (1/m) mean SM²(e^{‖Ax + A^{-1}y‖²} − 1), 5σ."""
    cx, cy, X, Y = _two_cluster_data(key, n_per=10, scale=0.4)
    m, draws = 8, 4000
    A = [[cluster.real_diagonal_A(cx[i], cy[j]) for j in range(2)] for i in range(2)]

    def one(W):
        pairs = [[complex_exp.diagonal_ce_estimator(W[i, j], A[i][j]) for j in range(2)] for i in range(2)]
        return cluster.cluster_hybrid_estimator(pairs, cx, cy).estimate(X, Y)

    W = jax.random.normal(jax.random.fold_in(key, 2), (draws, 2, 2, m, 5))
    sq_err = (np.asarray(jax.jit(jax.vmap(one))(W)) - np.exp(X @ Y.T)) ** 2
    ix, jy = np.asarray(cluster.nearest_centre(X, cx)), np.asarray(cluster.nearest_centre(Y, cy))
    closed = np.zeros((X.shape[0], Y.shape[0]))
    for i in range(2):
        for j in range(2):
            a = A[i][j]
            log_mse = moments.complex_exp.log_mse_complex_exponential(X[:, None, :], Y[None, :, :], np.diag(a), m)
            closed = np.where((ix == i)[:, None] & (jy == j)[None, :], np.exp(np.asarray(log_mse)), closed)
    per_draw = sq_err.mean(axis=(1, 2))
    assert abs(per_draw.mean() - closed.mean()) < 5 * per_draw.std() / math.sqrt(draws)
    assert per_draw.std() / math.sqrt(draws) < 0.03 * closed.mean()


def test_nearest_centre_and_shape_checks(key):
    cx, cy, X, _ = _two_cluster_data(key)
    labels = np.asarray(cluster.nearest_centre(X, cx))
    assert np.all(labels == np.repeat([0, 1], 30))
    with pytest.raises(ValueError, match="2 × 2"):
        cluster.cluster_hybrid_estimator([[None, None]], cx, cy)
    with pytest.raises(ValueError, match="pair_estimators must be 2 × 2"):  # silently 0 on cluster 1 before
        cluster.cluster_hybrid_direct([[None, None]], cx, cy, X, X)
    with pytest.raises(ValueError, match="same shape"):
        cluster.real_diagonal_A(np.ones((2, 3)), np.ones(3))
    assert jnp.all(cluster.nearest_centre(cx, cx) == jnp.arange(2))


def test_diagonal_ce_cluster_estimator_is_def_h_2_with_one_diagonal_ce_per_cluster_pair(key):
    cx, cy, X, Y = _two_cluster_data(key)
    Ws = jax.random.normal(jax.random.fold_in(key, 3), (2, 2, 6, 5))
    A = [[cluster.real_diagonal_A(cx[i], cy[j]) for j in range(2)] for i in range(2)]
    pairs = [[complex_exp.diagonal_ce_estimator(Ws[i, j], A[i][j]) for j in range(2)] for i in range(2)]
    est = cluster.diagonal_ce_cluster_estimator(Ws, A, cx, cy)
    np.testing.assert_allclose(est.estimate(X, Y), cluster.cluster_hybrid_direct(pairs, cx, cy, X, Y), rtol=1e-12)
    with pytest.raises(ValueError, match="A must be 2 × 2"):
        cluster.diagonal_ce_cluster_estimator(Ws, A[:1], cx, cy)
    with pytest.raises(ValueError, match="Ws must have 4"):
        cluster.diagonal_ce_cluster_estimator(Ws[0], A, cx, cy)


def test_def_h1_gaussian_lambda_is_unbiased_for_the_gaussian_of_the_zero_variance_condition():
    """Eqs 93–96: E λ̂^{ij} = exp(−‖A x + A⁻¹ y‖²/(2τ²)) for a real diagonal A (quadrature, one feature); it is 1 at the
    pair of centres when eq 88's A zeroes the loss (here centres with opposite-sign coordinates)."""
    a = cluster.real_diagonal_A(RX, RY)
    x, y, tau = np.array([0.5, -0.1, 0.2, 0.9, -0.3]), np.array([0.2, 0.6, -0.4, 0.1, 0.3]), 0.8
    T, weights = quadrature.projection_rule(np.stack([a * x, y / a]), n_points=80)
    lam = jax.vmap(lambda t: cluster.cluster_gaussian_lambda(t[None], tau, a).estimate(x[None], y[None])[0, 0])(
        jnp.asarray(T)
    )
    exact = np.exp(-np.sum((a * x + y / a) ** 2) / (2 * tau**2))
    assert quadrature.expectation(np.asarray(lam), weights) == pytest.approx(exact, rel=1e-11)
    rx, ry = np.array([0.8, -0.5]), np.array([-0.2, 0.45])  # a·b < 0 in every coordinate: loss 0, λ = 1
    a2 = cluster.real_diagonal_A(rx, ry)
    T2, w2 = quadrature.projection_rule(np.stack([a2 * rx, ry / a2]), n_points=40)
    at_centres = jax.vmap(lambda t: cluster.cluster_gaussian_lambda(t[None], 0.5, a2).estimate(rx[None], ry[None]))(
        jnp.asarray(T2)
    )
    assert quadrature.expectation(np.asarray(at_centres)[:, 0, 0], w2) == pytest.approx(1.0, rel=1e-11)


def test_def_h1_hybrid_gaussian_mixture_is_a_random_feature_dot_product(key):
    """Def H.1 (eqs 97–98) as one feature map equals Σ λ̂^{ij} ŜM^{ij} + (1 − Σ λ̂^{ij}) ŜM⁰ evaluated term by term."""
    d = RX.size
    centres_x, centres_y = np.stack([RX, -RX]), np.stack([RY, 0.5 * RY])
    keys = jax.random.split(key, 9)
    pairs = [
        [
            complex_exp.diagonal_ce_estimator(
                jax.random.normal(keys[2 * i + j], (6, d)), cluster.real_diagonal_A(cx, cy)
            )
            for j, cy in enumerate(centres_y)
        ]
        for i, cx in enumerate(centres_x)
    ]
    lambdas = [
        [
            cluster.cluster_gaussian_lambda(
                jax.random.normal(keys[4 + 2 * i + j], (3, d)), 0.9, cluster.real_diagonal_A(cx, cy)
            )
            for j, cy in enumerate(centres_y)
        ]
        for i, cx in enumerate(centres_x)
    ]
    base = classic.trig_estimator(jax.random.normal(keys[8], (6, d)))
    est = cluster.gaussian_mixture_hybrid_estimator(pairs, lambdas, base)
    X = 0.3 * jax.random.normal(jax.random.key(1), (4, d)) + RX
    Y = 0.3 * jax.random.normal(jax.random.key(2), (5, d)) + RY
    weights = [lam.estimate(X, Y) for row in lambdas for lam in row]
    direct = sum(w * e.estimate(X, Y) for w, e in zip(weights, [e for row in pairs for e in row], strict=True))
    direct = direct + (1 - sum(weights)) * base.estimate(X, Y)
    np.testing.assert_allclose(est.estimate(X, Y), direct, rtol=1e-10)
    np.testing.assert_allclose(
        est.estimate(X, Y),
        hybrid.hybrid_direct([*[e for r in pairs for e in r], base], [lam for r in lambdas for lam in r], X, Y),
        rtol=1e-10,
    )
    with pytest.raises(ValueError, match="one shape"):
        cluster.gaussian_mixture_hybrid_estimator(pairs, lambdas[:1], base)


def test_diagonal_a_helpers_refuse_what_gave_nan():
    """cluster_loss([0, 1], …) divided by a zero entry of A (NaN); complex_diagonal_A(large=nan) put NaN in A."""
    with pytest.raises(ValueError, match="A_diag must be finite, non-zero"):
        cluster.cluster_loss(np.array([0.0, 1.0]), np.ones(2), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="large must be finite"):
        cluster.complex_diagonal_A(np.array([0.0, 1.0]), np.ones(2), large=float("nan"))
