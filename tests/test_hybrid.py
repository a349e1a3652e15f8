"""HRF §2.2–2.4, §3, Apps D and F: the hybrid feature maps (Lemma 2.3) and the hybrid MSEs (Theorems 3.1, D.1, F.1).

Oracles: exact identities to round-off for the feature maps; for the MSEs, the binomial law of the sign features
(enumerated exactly) with Gauss–Hermite quadrature over ω, and seeded Monte Carlo with 5σ tolerances from the
plug-in standard error (at benign points, where the estimator's kurtosis is moderate).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from rflib import kernels, moments, quadrature
from rflib.features import classic, cluster, complex_exp, hybrid


def _random_points(key, d=5, n=4, k=3, scale=0.4):
    k1, k2 = jax.random.split(key)
    return scale * jax.random.normal(k1, (n, d)), scale * jax.random.normal(k2, (k, d))


# --- Lemma 2.3: the feature map equals eq 8 --------------------------------------------------------------------


def test_angular_hybrid_feature_map_equals_eq_8_and_has_dimension_4m_n_plus_1(key):
    keys = jax.random.split(key, 4)
    X, Y = _random_points(keys[0])
    m, n = 6, 3
    W_pos, W_trig, T = (jax.random.normal(k, (s, 5)) for k, s in zip(keys[1:], (m, m, n), strict=True))
    for W2 in (W_trig, W_pos):  # variant I (independent) and II (shared)
        est = hybrid.angular_hybrid_estimator(W_pos, W2, T)
        assert est.query_features(X).body.shape == (4, 4 * m * (n + 1))
        bases = [classic.hyperbolic_estimator(W_pos), classic.trig_estimator(W2)]
        direct = hybrid.hybrid_direct(bases, [hybrid.angular_lambda(T)], X, Y)
        np.testing.assert_allclose(est.estimate(X, Y), direct, rtol=1e-12)
        assert est.estimate(X, Y).dtype == jnp.float64  # real arithmetic, no complex anywhere


@pytest.mark.parametrize("lambda_kind", ["normalized_gaussian", "gaussian_positive", "gaussian_trig"])
def test_gaussian_hybrid_feature_maps_equal_eq_8(lambda_kind, key):
    """Incl. App F's a = 1/ρ > 1, where the paper's √(1 − a) is imaginary (here: a sign on the right map)."""
    keys = jax.random.split(key, 5)
    X, Y = _random_points(keys[0])
    W_pos, W_trig = jax.random.normal(keys[1], (5, 5)), jax.random.normal(keys[2], (5, 5))
    T = jax.random.normal(keys[3], (4, 5))
    lam = {
        "normalized_gaussian": lambda: hybrid.normalized_gaussian_lambda(T, 1.3, 0.5),
        "gaussian_positive": lambda: hybrid.gaussian_lambda(T, 0.8, jax.random.normal(keys[4], (5, 5))),
        "gaussian_trig": lambda: hybrid.gaussian_lambda(T, 1.1, kind="trig"),
    }[lambda_kind]()
    bases = [classic.hyperbolic_estimator(W_pos), classic.trig_estimator(W_trig)]
    np.testing.assert_allclose(
        hybrid.hybrid_estimator(bases, [lam]).estimate(X, Y), hybrid.hybrid_direct(bases, [lam], X, Y), rtol=1e-11
    )


@pytest.mark.parametrize("given_M", [True, False])
@pytest.mark.parametrize("kind", ["positive", "trig"])
def test_gaussian_lambda_is_unbiased_for_exp_of_minus_distance(kind, given_M):
    """Eq 20: E λ̂ = exp(−‖x + M y‖²/(2c²)), by quadrature over τ ∈ span{x, My} (one feature); M defaults to I."""
    x, y = np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.4, -0.3])
    M = np.array([[1.0, 0.2, 0.0], [0.0, 0.8, -0.1], [0.3, 0.0, 1.1]]) if given_M else np.eye(3)
    c = 0.9
    T, weights = quadrature.projection_rule(np.stack([x, M @ y]), n_points=80)
    lam = jax.vmap(
        lambda t: hybrid.gaussian_lambda(t[None], c, M if given_M else None, kind=kind).estimate(x[None], y[None])[0, 0]
    )(jnp.asarray(T))
    exact = np.exp(-np.sum((x + M @ y) ** 2) / (2 * c**2))
    assert quadrature.expectation(np.asarray(lam), weights) == pytest.approx(exact, rel=1e-11)


def test_generic_p_equals_2_hybrid_with_mixed_block_counts_equals_eq_8(key):
    """p = 2: three bases with t = 2, 1, 2 blocks (trig, positive, CE real form) and λs with l = 1 and 2 blocks."""
    keys = jax.random.split(key, 6)
    X, Y = _random_points(keys[0], d=3)
    A = np.array([[0.9, 0.2j, 0.0], [0.1, 1.1, 0.3], [0.0, -0.2, 0.7 + 0.4j]])
    bases = [
        classic.trig_estimator(jax.random.normal(keys[1], (4, 3))),
        classic.positive_estimator(jax.random.normal(keys[2], (3, 3))),
        complex_exp.complex_exponential_estimator(jax.random.normal(keys[3], (5, 3)), A),
    ]
    lambdas = [
        hybrid.angular_lambda(jax.random.normal(keys[4], (2, 3))),
        hybrid.normalized_gaussian_lambda(jax.random.normal(keys[5], (3, 3)), 0.9, 0.5),
    ]
    est = hybrid.hybrid_estimator(bases, lambdas)
    np.testing.assert_allclose(est.estimate(X, Y), hybrid.hybrid_direct(bases, lambdas, X, Y), rtol=1e-11)


def _paired_from_features(est, X, Y):
    fx, fy = est.query_features(X), est.key_features(Y)
    return jnp.exp(fx.log_scale + fy.log_scale) * jnp.sum(fx.body * fy.body, axis=1)


def _largest_intermediate(fn, *args) -> int:
    """Elements of the largest array ``fn`` computes (its jaxpr's biggest output), as a measure of its width."""
    return max(math.prod(v.aval.shape) for eqn in jax.make_jaxpr(fn)(*args).eqns for v in eqn.outvars)


BASE_WIDTH = 12  # the widest base or λ map of _hybrids: 2 features per projection, 6 projections


def _hybrids(keys, d):
    """Hybrids of every shape the feature form handles: offsets ≠ 0 and = 0, 1 − Σa = 0, p = 2, a nested hybrid and
    Def H.1's mixture; name → estimator. Every base and λ map has at most BASE_WIDTH features."""
    W1, W2, W3, T1, T2, T3 = (jax.random.normal(k, (6, d)) for k in keys)
    trig, hyp, pos = classic.trig_estimator(W1), classic.hyperbolic_estimator(W2), classic.positive_estimator(W3)
    angular = hybrid.angular_hybrid_estimator(W2, W1, T1[:3])
    return {
        "angular, independent ω (a = 1/2)": angular,
        "angular, shared ω": hybrid.angular_hybrid_estimator(W2, W2, T1[:3]),
        "Gaussian λ (a = 0)": hybrid.hybrid_estimator([trig, pos], [hybrid.gaussian_lambda(T2, 0.8)]),
        "normalised Gaussian λ (a = 1/ρ > 1)": hybrid.hybrid_estimator(
            [hyp, trig], [hybrid.normalized_gaussian_lambda(T2, 1.3, 0.5)]
        ),
        "two angular λ (1 − Σa = 0)": hybrid.hybrid_estimator(
            [hyp, pos, trig], [hybrid.angular_lambda(T1), hybrid.angular_lambda(T3)]
        ),
        "nested: an angular hybrid as a base": hybrid.hybrid_estimator([angular, trig], [hybrid.angular_lambda(T3)]),
        "Def H.1 Gaussian mixture": cluster.gaussian_mixture_hybrid_estimator(
            [[hyp, pos]], [[cluster.cluster_gaussian_lambda(T2, 1.1, np.full(d, 0.9))] * 2], trig
        ),
    }


def test_hybrid_paired_products_skip_the_kronecker_features_and_equal_them(key):
    """``paired`` evaluates eq 8 per pair (the Monte Carlo simulators' path); the features of Lemma 2.3 give the same
    numbers for every shape of hybrid, and the direct form never builds an array wider than one base's features,
    where the feature form builds the Kronecker blocks."""
    keys = jax.random.split(key, 7)
    X, Y = _random_points(keys[0], n=5, k=5)
    for name, est in _hybrids(keys[1:], 5).items():
        np.testing.assert_allclose(est.paired(X, Y), _paired_from_features(est, X, Y), rtol=1e-11, err_msg=name)
        assert _largest_intermediate(est.paired, X, Y) <= X.shape[0] * BASE_WIDTH, name
        fx = est.query_features(X)
        assert _largest_intermediate(est.query_features, X) >= fx.body.size > 2 * X.shape[0] * BASE_WIDTH, name


def test_hybrid_paired_products_stay_finite_in_float32_where_a_base_alone_overflows(key):
    """A Gaussian λ has a = 0, so its trig base enters the estimate only times λ̂: at ‖x‖ = ‖y‖ = 10 the base's scale
    e^{(‖x‖² + ‖y‖²)/2} = e^{100} overflows float32 on its own while λ̂ ŜM^trig does not. The direct form adds
    its terms in log space and matches the feature form (float32 round-off), finite."""
    keys = jax.random.split(key, 5)
    X = jax.random.normal(keys[0], (6, 4), dtype=jnp.float32)
    Y = jax.random.normal(keys[1], (6, 4), dtype=jnp.float32)
    X, Y = (10.0 * Z / jnp.linalg.norm(Z, axis=1, keepdims=True) for Z in (X, Y))
    W_trig, W_pos, T = (jax.random.normal(k, (8, 4), dtype=jnp.float32) for k in keys[2:])
    est = hybrid.hybrid_estimator(
        [classic.trig_estimator(W_trig), classic.positive_estimator(W_pos)], [hybrid.gaussian_lambda(T, 1.0)]
    )
    log_trig = 0.5 * (jnp.sum(X**2, axis=1) + jnp.sum(Y**2, axis=1))
    assert not bool(jnp.any(jnp.isfinite(jnp.exp(log_trig))))  # the base's own scale overflows
    via_features = _paired_from_features(est, X, Y)
    assert bool(jnp.all(jnp.isfinite(via_features)))
    direct = est.paired(X, Y)
    assert direct.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(direct)))
    np.testing.assert_allclose(direct, via_features, rtol=1e-4, atol=1e-6 * float(jnp.max(jnp.abs(via_features))))


def test_hybrid_features_stay_finite_in_float32_where_dense_ones_overflow(key):
    keys = jax.random.split(key, 4)
    X = 12.0 * jax.random.normal(keys[0], (3, 8), dtype=jnp.float32)
    W_pos, W_trig = (jax.random.normal(k, (8, 8), dtype=jnp.float32) for k in keys[1:3])
    T = jax.random.normal(keys[3], (4, 8), dtype=jnp.float32)
    feats = hybrid.angular_hybrid_estimator(W_pos, W_trig, T).query_features(X)
    assert bool(jnp.all(jnp.isfinite(feats.body))) and bool(jnp.all(jnp.abs(feats.body) <= 1.0))
    assert bool(jnp.all(jnp.isfinite(feats.log_scale)))
    assert not bool(jnp.all(jnp.isfinite(feats.dense())))  # the dense map itself would overflow


def test_lambda_moment_inputs_are_checked():
    """A negative second moment went into a log (NaN log MSE); a NaN or negative ‖Δ‖² gave NaN moments."""
    x, y = np.array([0.3, 0.1]), np.array([0.2, -0.4])
    bad = moments.hybrid.LambdaMoments(-0.1, 1.0, 0.0)
    with pytest.raises(ValueError, match="lam.second"):
        moments.hybrid.log_mse_bipolar_hybrid(x, y, 4, bad)
    with pytest.raises(ValueError, match="lam must be LambdaMoments"):
        moments.hybrid.log_mse_bipolar_hybrid(x, y, 4, (0.5, 0.5, 0.0))
    for delta_sq in (np.nan, -1.0, 1j):
        with pytest.raises(ValueError, match="delta_sq"):
            moments.hybrid.normalized_gaussian_lambda_moments(delta_sq, 4, 1.0, 1.0)


def test_mixture_shape_errors_are_clear(key):
    W = jax.random.normal(key, (3, 2))
    with pytest.raises(ValueError, match="p \\+ 1 base"):
        hybrid.hybrid_estimator([classic.trig_estimator(W)], [hybrid.angular_lambda(W)])
    with pytest.raises(ValueError, match="kind"):
        hybrid.gaussian_lambda(W, 1.0, kind="cosine")
    for M, match in ((np.eye(2, dtype=bool), "M must hold real numbers"), (np.full((2, 2), np.nan), "M contains NaN")):
        with pytest.raises(ValueError, match=match):  # cast by X @ Mᵀ, or reported as "X contains NaN", before
            hybrid.gaussian_lambda(W, 1.0, M)
    with pytest.raises(ValueError, match=r"M must be \(2, 2\)"):
        hybrid.gaussian_lambda(W, 1.0, np.eye(3))
    with pytest.raises(ValueError, match="T contains NaN"):  # reported as W at the first estimate before
        hybrid.gaussian_lambda(W.at[0, 0].set(jnp.nan), 1.0)
    with pytest.raises(ValueError, match="sigma"):
        hybrid.normalized_gaussian_lambda(W, 0.0, 1.0)
    bases = [classic.positive_estimator(W), classic.trig_estimator(W)]
    X = 0.3 * jax.random.normal(jax.random.fold_in(key, 1), (4, 2))
    for offset in (float("nan"), "0.5"):  # NaN made every estimate NaN; "0.5" was cast by float()
        lam = hybrid.angular_lambda(W)._replace(offset=offset)
        with pytest.raises(ValueError, match="offset must be"):
            lam.estimate(X, X)
        with pytest.raises(ValueError, match=r"lambdas\[0\]\.offset must be"):
            hybrid.hybrid_estimator(bases, [lam])
        with pytest.raises(ValueError, match=r"lambdas\[0\]\.offset must be"):
            hybrid.hybrid_paired_direct(bases, [lam], X, X)


# --- Lemma 3.2: the angular λ̂ is Binomial(n, θ/π)/n --------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 16])
def test_lemma_3_2_sign_feature_count_is_binomial(d, key):
    n, theta, draws = 5, 1.1, 100_000
    x, y = kernels.pair_at_angle(theta, 1.0, 0.7, d=d)
    T = jax.random.normal(key, (draws, n, d))
    lam = jax.vmap(lambda t: hybrid.angular_lambda(t).estimate(x[None], y[None])[0, 0])(T)
    counts = np.bincount(np.rint(np.asarray(lam) * n).astype(int), minlength=n + 1)
    expected = draws * stats.binom.pmf(np.arange(n + 1), n, theta / np.pi)
    assert stats.chisquare(counts, expected).pvalue > 1e-4
    mom = moments.hybrid.angular_lambda_moments(theta, n)
    lam = np.asarray(lam)
    for sample, exact in ((lam**2, mom.second), ((1 - lam) ** 2, mom.one_minus_second), (lam * (1 - lam), mom.cross)):
        assert abs(sample.mean() - float(exact)) < 5 * sample.std() / math.sqrt(draws)
    assert abs(lam.mean() - theta / np.pi) < 5 * lam.std() / math.sqrt(draws)


def test_angular_lambda_is_deterministic_at_theta_0_and_pi(key):
    T = jax.random.normal(key, (7, 3))
    x = np.array([[0.3, -1.0, 0.4]])
    assert float(hybrid.angular_lambda(T).estimate(x, 2.0 * x)[0, 0]) == pytest.approx(0.0, abs=1e-15)
    assert float(hybrid.angular_lambda(T).estimate(x, -0.5 * x)[0, 0]) == pytest.approx(1.0, abs=1e-15)


# --- Theorem 3.1 / D.1: exact oracle (binomial enumeration × quadrature), m = 1 ---------------------------------


def _separating_projections(x, y, k, n):
    """n rows of which exactly k separate x and y (sgn differs): an exact representative of λ̂ = k/n."""
    xh, yh = x / np.linalg.norm(x), y / np.linalg.norm(y)
    return np.stack([xh - yh] * k + [xh + yh] * (n - k))


@pytest.mark.parametrize("point", [(0.5, 0.5, 0.3), (0.4, 0.9, 2.2), (0.2, 1.2, 2.5)])
@pytest.mark.parametrize("n", [1, 3])
def test_theorem_3_1_variant_ii_exact_by_enumeration_and_quadrature(point, n):
    """Shared ω (variant II), m = 1: MSE = Σ_k Binom(k; n, θ/π) E_ω(ŜM^hyb − SM)², against Theorem 3.1 (II)."""
    norm_x, norm_y, theta = point
    x, y = kernels.pair_at_angle(theta, norm_x, norm_y, d=3)
    theta, sm = point[2], np.exp(x @ y)
    W, weights = quadrature.projection_rule(np.stack([x, y]), n_points=90)
    mse = 0.0
    for k in range(n + 1):
        T = _separating_projections(x, y, k, n)
        values = jax.vmap(
            lambda w, T=T: hybrid.angular_hybrid_estimator(w[None], w[None], T).estimate(x[None], y[None])
        )(jnp.asarray(W))[:, 0, 0]
        mse += stats.binom.pmf(k, n, theta / np.pi) * quadrature.expectation((np.asarray(values) - sm) ** 2, weights)
    closed = float(jnp.exp(moments.hybrid.log_mse_angular_hybrid(x, y, 1, n, shared=True)))
    assert closed == pytest.approx(mse, rel=1e-9)


def test_theorem_3_1_variant_i_exact_by_enumeration_and_quadrature():
    """Independent ω_pos, ω_trig (variant I), m = 1, n = 2: a 4-D Gauss–Hermite rule over both projections."""
    x, y = kernels.pair_at_angle(2.0, 0.3, 0.8, d=3)
    n, theta, sm = 2, 2.0, np.exp(x @ y)
    W, weights = quadrature.projection_rule(np.stack([x, y]), n_points=30)
    W_pos, W_trig = np.repeat(W, len(W), axis=0), np.tile(W, (len(W), 1))
    w2 = np.outer(weights, weights).ravel()
    mse = 0.0
    for k in range(n + 1):
        T = _separating_projections(x, y, k, n)
        values = jax.vmap(
            lambda a, b, T=T: hybrid.angular_hybrid_estimator(a[None], b[None], T).estimate(x[None], y[None])
        )(jnp.asarray(W_pos), jnp.asarray(W_trig))[:, 0, 0]
        mse += stats.binom.pmf(k, n, theta / np.pi) * quadrature.expectation((np.asarray(values) - sm) ** 2, w2)
    closed = float(jnp.exp(moments.hybrid.log_mse_angular_hybrid(x, y, 1, n, shared=False)))
    assert closed == pytest.approx(mse, rel=1e-9)


# --- Theorem 3.1 / D.1 by Monte Carlo with m > 1 -----------------------------------------------------------------


def _mc_hybrid_errors(key, x, y, m, n, shared, draws):
    keys = jax.random.split(key, 3)
    d = x.size
    W_pos = jax.random.normal(keys[0], (draws, m, d))
    W_trig = W_pos if shared else jax.random.normal(keys[1], (draws, m, d))
    T = jax.random.normal(keys[2], (draws, n, d))

    def one(a, b, t):
        return hybrid.angular_hybrid_estimator(a, b, t).estimate(x[None], y[None])[0, 0]

    return np.asarray(jax.jit(jax.vmap(one))(W_pos, W_trig, T)) - np.exp(x @ y)


@pytest.mark.parametrize("shared", [False, True])
def test_theorem_3_1_monte_carlo_at_unequal_norms_distinguishes_the_variants(shared, key):
    """‖x‖ = 0.2, ‖y‖ = 1.2, θ = 2.5, m = 4, n = 2 (a benign point): relSE ≈ 0.7 %, variants differ by ≈ 18 %."""
    x, y = kernels.pair_at_angle(2.5, 0.2, 1.2, d=4)
    err = _mc_hybrid_errors(key, x, y, 4, 2, shared, 400_000)
    se = (err**2).std() / math.sqrt(err.size)
    closed = float(jnp.exp(moments.hybrid.log_mse_angular_hybrid(x, y, 4, 2, shared=shared)))
    other = float(jnp.exp(moments.hybrid.log_mse_angular_hybrid(x, y, 4, 2, shared=not shared)))
    assert abs(np.mean(err)) < 5 * err.std() / math.sqrt(err.size)  # unbiased
    assert abs((err**2).mean() - closed) < 5 * se
    assert abs(other - closed) > 10 * se  # the test can tell the two variants apart


@pytest.mark.parametrize("r,theta", [(0.3, 0.3), (0.5, np.pi / 2), (0.5, 2.5)])
def test_theorem_d_1_monte_carlo_at_equal_norms(r, theta, key):
    x, y = kernels.pair_at_angle(theta, r, r, d=4)
    err = _mc_hybrid_errors(key, x, y, 8, 3, False, 200_000)
    se = (err**2).std() / math.sqrt(err.size)
    closed = float(jnp.exp(moments.hybrid.log_mse_angular_hybrid(x, y, 8, 3)))
    assert abs((err**2).mean() - closed) < 5 * se
    assert se < 0.02 * closed


def test_angular_hybrid_is_exact_at_theta_0_and_pi_for_equal_norms(key):
    keys = jax.random.split(key, 3)
    W_pos, W_trig, T = (jax.random.normal(k, (16, 6)) for k in keys)
    x = jax.random.normal(keys[0], (1, 6))
    est = hybrid.angular_hybrid_estimator(W_pos, W_trig, T)
    for y in (x, -x):
        assert float(est.estimate(x, y)[0, 0]) == pytest.approx(float(jnp.exp(x @ y.T)[0, 0]), rel=1e-12)
        assert np.isneginf(moments.hybrid.log_mse_angular_hybrid(x[0], y[0], 16, 8))


def test_shared_correction_vanishes_at_equal_norms_and_for_n_equal_1():
    x, y = kernels.pair_at_angle(1.3, 0.7, 0.7, d=4)
    assert float(moments.hybrid.log_mse_angular_hybrid(x, y, 5, 4, shared=True)) == pytest.approx(
        float(moments.hybrid.log_mse_angular_hybrid(x, y, 5, 4)), rel=1e-13
    )
    x, y = kernels.pair_at_angle(1.3, 0.3, 1.1, d=4)
    assert float(moments.hybrid.log_mse_angular_hybrid(x, y, 5, 1, shared=True)) == pytest.approx(
        float(moments.hybrid.log_mse_angular_hybrid(x, y, 5, 1)), rel=1e-13
    )


# --- Theorems F.1 / F.2: normalised bipolar Gaussian hybrid ------------------------------------------------------


@pytest.mark.parametrize("sigma", [0.7, 1.3])
def test_theorem_f_1_lambda_moments_by_quadrature(sigma):
    """E λ̂², E(1 − λ̂)² and E λ̂(1 − λ̂) for one feature (n = 1; n > 1 divides the variance by n)."""
    r, theta, n = 0.5, 2.0, 1
    x, y = kernels.pair_at_angle(theta, r, r, d=3)
    T, weights = quadrature.projection_rule((x - y)[None], n_points=120)
    lam = np.asarray(
        jax.vmap(lambda t: hybrid.normalized_gaussian_lambda(t[None], sigma, r).estimate(x[None], y[None])[0, 0])(
            jnp.asarray(T)
        )
    )
    mom = moments.hybrid.normalized_gaussian_lambda_moments(np.sum((x - y) ** 2), n, sigma, r)
    assert quadrature.expectation(lam**2, weights) == pytest.approx(float(mom.second), rel=1e-11)
    assert quadrature.expectation((1 - lam) ** 2, weights) == pytest.approx(float(mom.one_minus_second), rel=1e-11)
    assert quadrature.expectation(lam * (1 - lam), weights) == pytest.approx(float(mom.cross), rel=1e-10)


@pytest.mark.parametrize("sigma", [0.7, 1.3])
@pytest.mark.parametrize("shared", [False, True])
def test_theorem_f_1_mse_by_monte_carlo(sigma, shared, key):
    """r = 0.5: with equal norms shared and independent projections give the same MSE (Theorem F.1)."""
    r, theta, m, n, draws = 0.5, 2.0, 4, 3, 200_000
    x, y = kernels.pair_at_angle(theta, r, r, d=4)
    keys = jax.random.split(key, 3)
    W_pos = jax.random.normal(keys[0], (draws, m, 4))
    W_trig = W_pos if shared else jax.random.normal(keys[1], (draws, m, 4))
    T = jax.random.normal(keys[2], (draws, n, 4))

    def one(a, b, t):
        est = hybrid.normalized_gaussian_hybrid_estimator(a, b, t, sigma, r)
        return est.estimate(x[None], y[None])[0, 0]

    err = np.asarray(jax.jit(jax.vmap(one))(W_pos, W_trig, T)) - np.exp(x @ y)
    mom = moments.hybrid.normalized_gaussian_lambda_moments(np.sum((x - y) ** 2), n, sigma, r)
    closed = float(jnp.exp(moments.hybrid.log_mse_bipolar_hybrid(x, y, m, mom, shared=shared)))
    se = (err**2).std() / math.sqrt(draws)
    assert abs((err**2).mean() - closed) < 5 * se and se < 0.02 * closed


def test_normalized_gaussian_hybrid_is_exact_at_theta_0_but_not_at_pi(key):
    keys = jax.random.split(key, 3)
    W_pos, W_trig, T = (jax.random.normal(k, (8, 3)) for k in keys)
    x = np.array([[0.3, 0.0, 0.4]])  # r = 0.5
    est = hybrid.normalized_gaussian_hybrid_estimator(W_pos, W_trig, T, 1.0, 0.5)
    assert float(est.estimate(x, x)[0, 0]) == pytest.approx(np.exp(0.25), rel=1e-12)
    mom = moments.hybrid.normalized_gaussian_lambda_moments(1.0, 8, 1.0, 0.5)  # θ = π: ‖Δ‖² = 4r² = 1
    rho = -math.expm1(-0.5)  # 1 − e^{−2σ²r²}
    var = math.expm1(-1.0) ** 2 / (2 * 8 * rho**2)  # Var λ̂ = (1 − e^{−σ²‖Δ‖²})² / (2nρ²)
    assert float(mom.second + mom.cross) == pytest.approx(1.0, rel=1e-12)  # E λ̂ = 1: all weight on FAVOR+ ...
    assert float(mom.one_minus_second) == pytest.approx(var, rel=1e-12)  # ... but E(1 − λ̂)² = Var λ̂ > 0
    # FAVOR+ is exact at θ = π, so the whole MSE is Var λ̂ times trig's MSE, which is not 0 there
    mse = float(jnp.exp(moments.hybrid.log_mse_bipolar_hybrid(x[0], -x[0], 8, mom)))
    trig = float(jnp.exp(moments.classic.log_mse_trig(x[0], -x[0], 8)))
    assert mse == pytest.approx(var * trig, rel=1e-10) and mse > 1e-3 * trig


# --- cost (App D.4 / Sec L) ---------------------------------------------------------------------------------------


def test_cost_accounting_matches_the_real_feature_dimension(key):
    m, n, d = 16, 8, 64
    cost = hybrid.angular_hybrid_cost(m, n, d)
    keys = jax.random.split(key, 4)
    est = hybrid.angular_hybrid_estimator(
        *(jax.random.normal(k, (s, d)) for k, s in zip(keys, (m, m, n), strict=False))
    )
    assert est.query_features(jax.random.normal(keys[3], (2, d))).body.shape[1] == cost["features"]
    regular = hybrid.regular_cost(cost["features"], d)
    # O(nd + md + mn) versus O(mnd): the hybrid needs far fewer multiply-adds for the same dimension
    assert cost["total_flops"] == d * (2 * m + n) + 4 * m * n
    assert regular["total_flops"] / cost["total_flops"] == pytest.approx(6.0)  # 2m(n+1)d / (d(2m+n) + 4mn)


def test_theorem_f_1_shared_projections_equal_only_for_equal_norms():
    """ERRATA.md HRF-E6: 'shared projections ⇒ same MSE' needs ‖x‖ = ‖y‖. With unequal norms Theorem 3.1 (II)
    applies, and since the Gaussian λ̂ leaves [0, 1], E λ̂(1 − λ̂) < 0 near θ = π and sharing *increases* the MSE."""
    sigma, r, n, m = 1.3, 0.5, 2, 4
    x, y = kernels.pair_at_angle(2.0, r, r, d=4)
    mom = moments.hybrid.normalized_gaussian_lambda_moments(np.sum((x - y) ** 2), n, sigma, r)
    equal = [float(moments.hybrid.log_mse_bipolar_hybrid(x, y, m, mom, shared=s)) for s in (False, True)]
    assert equal[0] == pytest.approx(equal[1], rel=1e-13)
    x, y = kernels.pair_at_angle(3.0, 0.3, 0.7, d=4)
    mom = moments.hybrid.normalized_gaussian_lambda_moments(np.sum((x - y) ** 2), n, sigma, 0.5)
    assert float(mom.cross) < 0
    unequal = [float(moments.hybrid.log_mse_bipolar_hybrid(x, y, m, mom, shared=s)) for s in (False, True)]
    assert unequal[1] > unequal[0]


def test_uniform_log_mse_entry_point_is_the_angular_hybrid_closed_form():
    x, y = kernels.pair_at_angle(np.array([0.4, 1.3, 2.6]), 0.7, 1.1, d=4)
    for shared in (False, True):
        np.testing.assert_array_equal(
            moments.hybrid.log_mse(x, y, 10, n=3, shared=shared),
            moments.hybrid.log_mse_angular_hybrid(x, y, 10, 3, shared=shared),
        )


def test_shared_angular_hybrid_is_the_angular_hybrid_with_one_projection_matrix(key):
    X, Y = _random_points(key)
    W, T = jax.random.normal(jax.random.fold_in(key, 1), (4, 5)), jax.random.normal(jax.random.fold_in(key, 2), (3, 5))
    shared = hybrid.shared_angular_hybrid_estimator(W, T)
    np.testing.assert_array_equal(shared.estimate(X, Y), hybrid.angular_hybrid_estimator(W, W, T).estimate(X, Y))
    assert shared.query_features(X).body.shape[1] == 4 * 4 * (3 + 1)
    with pytest.raises(ValueError, match="W_pos"):
        hybrid.shared_angular_hybrid_estimator(np.full((4, 5), np.nan), T)
