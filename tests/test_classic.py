"""Unbiasedness and closed-form MSEs of the classic softmax-kernel features, against exact quadrature.

The quadrature nodes are vectors ω in span{x, y}; ``rflib.quadrature`` passes them to the real feature maps as the
projection matrix W, so these tests check the library code itself.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rflib import features, kernels, moments, quadrature

MAPS = {
    "trig": (features.trig, moments.classic.mse_trig),
    "positive": (features.positive, moments.classic.mse_positive),
    "hyperbolic": (features.hyperbolic, moments.classic.mse_hyperbolic),
}

# (x, y) pairs: unequal norms, near-parallel, near-antiparallel, orthogonal; d = 5.
_rng = np.random.default_rng(7)
PAIRS = [
    (0.6 * _rng.normal(size=5) / np.sqrt(5), 0.9 * _rng.normal(size=5) / np.sqrt(5)),
    (np.array([0.8, 0.1, 0.0, -0.2, 0.3]), np.array([0.7, 0.2, 0.1, -0.2, 0.2])),
    (np.array([0.8, 0.1, 0.0, -0.2, 0.3]), -np.array([0.7, 0.2, 0.1, -0.2, 0.2])),
    (np.array([1.0, 0.0, 0.0, 0.0, 0.0]), np.array([0.0, 0.9, 0.0, 0.0, 0.0])),
]


def quadrature_moments(name, x, y, n_points=100):
    """Exact E[e], E[(e − SM)²], E[(e − SM)⁴] of one feature's estimate, by Gauss–Hermite over span{x, y}."""
    mom = quadrature.estimator_moments(MAPS[name][0], x, y, n_points=n_points)
    return mom["mean"], mom["mse"], mom["fourth"]


@pytest.mark.parametrize("name", MAPS)
@pytest.mark.parametrize("pair", range(len(PAIRS)))
def test_classic_features_are_unbiased_for_the_softmax_kernel(name, pair):
    x, y = PAIRS[pair]
    mean, _, _ = quadrature_moments(name, x, y)
    assert mean == pytest.approx(float(kernels.softmax_kernel(x[None], y[None])[0, 0]), rel=1e-12)


@pytest.mark.parametrize("name", MAPS)
@pytest.mark.parametrize("pair", range(len(PAIRS)))
@pytest.mark.parametrize("m", [1, 7])
def test_lemma_2_2_mse_closed_forms_match_quadrature(name, pair, m):
    """HRF Lemma 2.2 / Performer Lemma 2: trig, positive and hyperbolic MSE for m iid features, rtol 1e-10."""
    x, y = PAIRS[pair]
    _, single_mse, _ = quadrature_moments(name, x, y)
    closed = float(MAPS[name][1](x, y, m))
    assert closed == pytest.approx(single_mse / m, rel=1e-10)


@pytest.mark.parametrize("name", MAPS)
def test_lemma_2_2_mse_matches_seeded_monte_carlo_within_derived_tolerance(name, key):
    """Monte Carlo MSE of iid features vs the closed form; tolerance 5σ from the exact variance of (e − SM)²."""
    x, y = PAIRS[0]
    n_draws = 200_000
    W = jax.random.normal(key, (n_draws, x.size))
    e = quadrature.single_feature_estimates(MAPS[name][0], np.asarray(W), x, y)
    sq_err = (e - np.exp(x @ y)) ** 2
    _, mse_exact, fourth = quadrature_moments(name, x, y)
    sigma = np.sqrt((fourth - mse_exact**2) / n_draws)
    assert abs(sq_err.mean() - float(MAPS[name][1](x, y, 1))) < 5 * sigma


def test_trig_is_exact_when_x_equals_y_and_hyperbolic_when_y_is_minus_x(key):
    x = np.array([0.3, -0.5, 0.9])
    W = jax.random.normal(key, (16, 3))
    sm_xx = np.exp(x @ x)
    assert np.allclose(features.trig(W, x[None]) @ features.trig(W, x[None]).T, sm_xx, rtol=1e-13)
    sm_xmx = np.exp(-x @ x)
    est = features.hyperbolic(W, x[None]) @ features.hyperbolic(W, -x[None]).T
    assert np.allclose(est, sm_xmx, rtol=1e-13)
    assert np.isneginf(moments.classic.log_mse_trig(x, x, 4))
    assert np.isneginf(moments.classic.log_mse_hyperbolic(x, -x, 4))


def test_features_match_their_textbook_formulas(key):
    k1, k2 = jax.random.split(key)
    W = jax.random.normal(k1, (6, 3))
    X = 0.7 * jax.random.normal(k2, (4, 3))
    m = W.shape[0]
    proj = X @ W.T
    sq = jnp.sum(X**2, axis=1, keepdims=True)
    np.testing.assert_allclose(
        features.trig(W, X),
        jnp.exp(sq / 2) * jnp.concatenate([jnp.sin(proj), jnp.cos(proj)], 1) / jnp.sqrt(m),
        rtol=1e-13,
    )
    np.testing.assert_allclose(features.positive(W, X), jnp.exp(proj - sq / 2) / jnp.sqrt(m), rtol=1e-13)
    hyp = jnp.exp(jnp.concatenate([proj, -proj], 1) - sq / 2) / jnp.sqrt(2 * m)
    np.testing.assert_allclose(features.hyperbolic(W, X), hyp, rtol=1e-13)


def test_feature_bodies_are_bounded_so_large_inputs_do_not_overflow(key):
    """The factored form keeps |body| ≤ 1 and puts the growth in log_scale, even where dense features overflow."""
    k1, k2 = jax.random.split(key)
    W = jax.random.normal(k1, (32, 8), dtype=jnp.float32)
    X = 30.0 * jax.random.normal(k2, (5, 8), dtype=jnp.float32)
    for feats in (features.positive_features(W, X), features.hyperbolic_features(W, X), features.trig_features(W, X)):
        assert feats.body.dtype == jnp.float32
        assert bool(jnp.all(jnp.isfinite(feats.body))) and bool(jnp.all(jnp.abs(feats.body) <= 1.0))
        assert bool(jnp.all(jnp.isfinite(feats.log_scale)))


def test_an_overflowing_estimate_or_dense_feature_is_refused_not_returned_as_nan(key):
    """exp(log scale) · body beyond the dtype's range: positive features of x = 10, y = −10 with W = ±10 in float32
    (x = 30, y = −30, W = ±30 in float64) have a common factor that overflows and bodies whose product underflows, so
    the estimate was inf · 0 = NaN, returned silently; a trigonometric feature of ‖x‖ = 14 in float32 was inf or NaN.
    Eager calls now refuse them; under jit the values cannot be read and nothing changes; finite results are the same
    bit for bit."""
    for dtype, r in ((jnp.float32, 10.0), (jnp.float64, 30.0)):
        estimator = features.classic.positive_estimator(jnp.array([[r], [-r]], dtype))
        X, Y = jnp.array([[r]], dtype), jnp.array([[-r]], dtype)
        with pytest.raises(ValueError, match=f"Estimator.estimate: the result is not finite in {jnp.dtype(dtype)}"):
            estimator.estimate(X, Y)
        with pytest.raises(ValueError, match="Estimator.paired: the result is not finite.*use float64"):
            estimator.paired(X, Y)
        assert bool(jnp.isnan(jax.jit(estimator.estimate)(X, Y)).all())
    with pytest.raises(ValueError, match="trig: the result is not finite in float32.*factored"):
        features.trig(jnp.array([[0.0, 1.0]], jnp.float32), jnp.array([[14.0, 0.0]], jnp.float32))
    k1, k2, k3 = jax.random.split(key, 3)
    W = jax.random.normal(k1, (16, 4))
    X, Y = 0.5 * jax.random.normal(k2, (6, 4)), 0.5 * jax.random.normal(k3, (5, 4))
    estimator = features.classic.hyperbolic_estimator(W)
    direct = features.base.pair_products(estimator.query_features(X), estimator.key_features(Y))
    assert np.array_equal(np.asarray(estimator.estimate(X, Y)), np.asarray(direct))
    assert np.array_equal(np.asarray(features.positive(W, X)), np.asarray(features.positive_features(W, X).dense()))


def test_gaussian_kernel_features_are_unbiased_for_the_gaussian_kernel():
    x, y = PAIRS[0]
    W, weights = quadrature.projection_rule(np.stack([x, y]), n_points=60)

    def gauss_trig(W_, X_):
        return features.gaussian_kernel_features(features.trig_features(W_, X_), X_).dense()

    e = quadrature.single_feature_estimates(gauss_trig, W, x, y)
    exact = float(kernels.gaussian_kernel(x[None], y[None])[0, 0])
    assert quadrature.expectation(e, weights) == pytest.approx(exact, rel=1e-12)


def test_log_mse_stays_finite_where_the_mse_overflows():
    x = np.full(4, 10.0)
    for f in (moments.classic.log_mse_trig, moments.classic.log_mse_positive, moments.classic.log_mse_hyperbolic):
        value = f(x, 0.9 * x, 8)
        assert np.isfinite(value) and value > 700  # exp(value) would overflow float64


def test_positive_and_hyperbolic_mse_relation():
    """Antithetic pairs: MSE_{++,m} = MSE_{+,m} · (1 − e^{−‖z‖²}) / 2 (both closed forms, HRF §2.3)."""
    x, y = PAIRS[1]
    z_sq = np.sum((x + y) ** 2)
    ratio = float(moments.classic.mse_hyperbolic(x, y, 3) / moments.classic.mse_positive(x, y, 3))
    assert ratio == pytest.approx((1 - np.exp(-z_sq)) / 2, rel=1e-13)


def test_relative_mse_divides_by_the_squared_kernel():
    x, y = PAIRS[0]
    log_rel = moments.classic.log_relative_mse(moments.classic.log_mse_positive(x, y, 2), x, y)
    assert float(log_rel) == pytest.approx(np.log((np.exp(np.sum((x + y) ** 2)) - 1) / 2), rel=1e-12)
    # an exact estimate (positive features at y = −x) has log-MSE −inf, and so has its relative MSE
    assert float(moments.classic.log_relative_mse(moments.classic.log_mse_positive(x, -x, 2), x, -x)) == -np.inf
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="log_mse contains NaN or \\+inf"):
            moments.classic.log_relative_mse(bad, x, y)
    with pytest.raises(ValueError, match="log_mse .* must broadcast"):
        moments.classic.log_relative_mse(np.zeros(3), x[None].repeat(2, 0), y[None].repeat(2, 0))


def test_uniform_log_mse_entry_point_dispatches_by_kind(key):
    x, y = 0.4 * jax.random.normal(key, (2, 5, 3))
    for kind, direct in (
        ("trig", moments.classic.log_mse_trig),
        ("positive", moments.classic.log_mse_positive),
        ("hyperbolic", moments.classic.log_mse_hyperbolic),
    ):
        np.testing.assert_array_equal(moments.classic.log_mse(x, y, 7, kind=kind), direct(x, y, 7))
    with pytest.raises(ValueError, match="kind must be one of"):
        moments.classic.log_mse(x, y, 7, kind="orthogonal")


def test_side_by_side_is_the_column_concatenation():
    """Feature maps join blocks of one shape (the complex-exponential cos/sin halves, ``base.concat``) with
    ``base.side_by_side`` (a stack + reshape, faster on XLA:CPU): it must be ``jnp.concatenate(…, axis=1)`` exactly,
    in column order."""
    from rflib.features.base import side_by_side

    a, b, c = (jnp.arange(12.0).reshape(3, 4) + 100 * k for k in range(3))
    np.testing.assert_array_equal(side_by_side(a, b, c), jnp.concatenate([a, b, c], axis=1))
    narrow = jnp.ones((3, 2))
    np.testing.assert_array_equal(side_by_side(a, narrow), jnp.concatenate([a, narrow], axis=1))
    np.testing.assert_array_equal(jax.jit(side_by_side)(a, -a), jnp.concatenate([a, -a], axis=1))


@pytest.mark.parametrize("method", ["positive", "hyperbolic", "gerf", "saderf", "aderf", "sderf"])
def test_positive_maps_carry_the_factors_of_their_log_features(key, method):
    """Every positive map keeps the factors it builds its log features from (``Features.linear_logits``): row term +
    points·projectionsᵀ + column term equals the log features written out from the textbook formulas (float64) —
    FAVOR+ −‖x‖²/2 − ½ log m + ωᵀx, hyperbolic the same with ±ω and 2m, a DERF log D + xᵀCx + (Bω)ᵀx + ωᵀAω − ½ log M
    (FAVOR# eq 9) — and log_scale + log_body, for queries and keys."""
    kw, kx, ky = jax.random.split(key, 3)
    X, Y = 0.6 * jax.random.normal(kx, (9, 5)), 0.6 * jax.random.normal(ky, (11, 5))
    W = jax.random.normal(kw, (7, 5))
    m = W.shape[0]
    if method in ("positive", "hyperbolic"):
        fmap = features.positive_features if method == "positive" else features.hyperbolic_features
        omegas = W if method == "positive" else np.concatenate([W, -W])
        sides = []
        for Z in (X, Y):
            textbook = -0.5 * np.sum(Z**2, 1)[:, None] - 0.5 * np.log(len(omegas)) + np.asarray(Z) @ omegas.T
            sides.append((fmap(W, Z), textbook))
    else:
        params = features.dense_exp.fit(method, X, Y)
        A, log_D = np.asarray(params.A), float(params.log_D)
        sides = []
        for phi, Z, B, C in (
            (features.dense_exp.query_features(params, W, X), X, params.B1, params.C1),
            (features.dense_exp.key_features(params, W, Y), Y, params.B2, params.C2),
        ):
            Z, B, C, Wn = (np.asarray(a) for a in (Z, B, C, W))
            textbook = (
                log_D
                + np.einsum("nd,de,ne->n", Z, C, Z)[:, None]
                + Z @ (Wn @ B).T
                + np.einsum("md,de,me->m", Wn, A, Wn)[None, :]
                - 0.5 * np.log(m)
            )
            sides.append((phi, textbook))
    for phi, textbook in sides:
        factors = phi.linear_logits
        rebuilt = factors.row_log_scale[:, None] + factors.logits()
        np.testing.assert_allclose(rebuilt, textbook, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(phi.log_scale[:, None] + phi.log_body, textbook, rtol=1e-12, atol=1e-12)


def test_orthogonal_row_pairs_counts_ordered_pairs_within_truncated_blocks():
    assert moments.classic.orthogonal_row_pairs(1, 5) == 0
    assert moments.classic.orthogonal_row_pairs(5, 5) == 20
    assert moments.classic.orthogonal_row_pairs(12, 5) == 2 * 20 + 2 * 1  # blocks of 5, 5 and 2 rows
    assert moments.classic.orthogonal_row_pairs(512, 13) == 39 * 13 * 12 + 5 * 4


def test_orf_trig_mse_with_one_row_is_the_iid_closed_form():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(4, 6)) * 0.7, rng.normal(size=(4, 6)) * 0.7
    np.testing.assert_allclose(
        moments.classic.log_mse_trig_orthogonal(x, y, 1), moments.classic.log_mse_trig(x, y, 1), rtol=1e-12
    )


@pytest.mark.parametrize("d", [2, 3, 5, 13, 64])
@pytest.mark.parametrize("rho", [0.3, 1.4, 3.0])
def test_orf_trig_covariance_matches_the_two_row_quadrature(d, rho):
    """The covariance of two orthogonal rows by a second derivation: E[φ_d(ρt₁) φ_d(ρt₂)] with φ_d(s) =
    ₁F₁(d/2; 1/2; −s²/2) = E cos(sR), R ~ χ_d, over the joint law of two coordinates (t₁, t₂) of a uniform unit vector
    (density ∝ (1 − t₁² − t₂²)^{(d−4)/2} on the disc; on the circle for d = 2), by scipy's adaptive quadrature."""
    from scipy import integrate, special

    def phi(s):
        return special.hyp1f1(d / 2, 0.5, -(s**2) / 2)

    if d == 2:
        product = integrate.quad(lambda a: phi(rho * np.cos(a)) * phi(rho * np.sin(a)), 0, 2 * np.pi)[0] / (2 * np.pi)
    else:
        # polar coordinates u = t₁² + t₂², angle a: density ∝ (1 − u)^{(d−4)/2} du da
        def density(a, u):
            return (1 - u) ** ((d - 4) / 2)

        def weighted(a, u):
            r = np.sqrt(u)
            return phi(rho * r * np.cos(a)) * phi(rho * r * np.sin(a)) * density(a, u)

        options = dict(epsabs=1e-13, epsrel=1e-11)
        norm = integrate.dblquad(density, 0, 1, 0, 2 * np.pi, **options)[0]
        product = integrate.dblquad(weighted, 0, 1, 0, 2 * np.pi, **options)[0] / norm
    x, y = np.zeros(d), np.zeros(d)
    y[0] = rho
    m = 2  # one block of two rows: MSE = e^{ρ²} (v/2 + 2c/4)
    spread = np.exp(moments.classic.log_mse_trig_orthogonal(x, y, m) - rho**2)
    covariance = (spread - np.expm1(-(rho**2)) ** 2 / 4) * 2
    assert covariance == pytest.approx(product - np.exp(-(rho**2)), abs=1e-10)


def test_orf_trig_mse_matches_seeded_monte_carlo_of_the_orf_law():
    """The quadrature against the estimator itself, with ORF matrices from rflib.projections (blocks of d, χ_d
    lengths, the last block truncated): 20 000 draws at a fixed key, tolerance 4 s.e. of the mean squared error."""
    from rflib import projections

    rng = np.random.default_rng(8)
    d, m, draws = 5, 12, 20_000
    x, y = (0.8 * v / np.linalg.norm(v) for v in rng.normal(size=(2, d)))
    W = np.asarray(projections.orthogonal_batch(jax.random.key(3), draws, m, d))
    estimate = np.exp((x @ x + y @ y) / 2) * np.mean(np.cos(W @ (x - y)), axis=1)
    squared = (estimate - np.exp(x @ y)) ** 2
    exact = np.exp(moments.classic.log_mse_trig_orthogonal(x, y, m))
    assert abs(squared.mean() - exact) < 4 * squared.std(ddof=1) / np.sqrt(draws)
    assert exact < 0.8 * float(moments.classic.mse_trig(x, y, m))  # and the orthogonal gain is real


@pytest.mark.parametrize(
    ("x", "y", "m", "match"),
    [
        (np.ones(1), np.ones(1), 4, "2 ≤ d"),
        (np.ones(129), np.ones(129), 4, "2 ≤ d"),
        (np.ones(3), np.ones(4), 4, "one d"),
        (np.ones(3), np.array([1.0, np.nan, 0.0]), 4, "y"),
        (np.ones(3), np.ones(3), 0, "m must be"),
        (np.ones(3) * 1j, np.ones(3), 4, "x"),
    ],
)
def test_orf_trig_mse_refuses_bad_input(x, y, m, match):
    with pytest.raises(ValueError, match=match):
        moments.classic.log_mse_trig_orthogonal(x, y, m)
