"""HRF §2.3: Lemma 2.4, complex exponential (CE) estimators, their special cases and closed-form MSEs.

Oracle: Gauss–Hermite quadrature over the span of the (real and imaginary parts of the) projected vectors, with
the quadrature nodes fed to rflib's own feature maps.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rflib import moments, quadrature
from rflib.features import classic, complex_exp

RNG = np.random.default_rng(11)
X2 = np.array([0.5, -0.3])
Y2 = np.array([0.2, 0.6])
A_CASES = {
    "identity": np.eye(2) + 0j,
    "i_identity": 1j * np.eye(2),
    "complex_near_identity": np.eye(2) + 0.3 * (RNG.normal(size=(2, 2)) + 1j * RNG.normal(size=(2, 2))),
    "complex_diagonal": np.diag([0.8 + 0.5j, 1.3j]),
    "real_diagonal": np.diag([0.7, 1.6]) + 0j,
}


def _ce_node_values(W, x, y, A):
    """Complex single-projection estimates e_i = Ψ_A(x)_i Ψ_{A^{-T}}(y)_i · m for every node ω_i."""
    left = complex_exp.ce_features(W, x[None], A)[0]
    right = complex_exp.ce_features(W, y[None], np.linalg.inv(A).T)[0]
    return np.asarray(W.shape[0] * left * right)


def test_lemma_2_4_complex_gaussian_mgf_by_quadrature():
    """E exp(ωᵀz) = exp(Σ z_i²/2) (bilinear square) for complex z, incl. purely real and purely imaginary z."""
    for z in (np.array([0.4 + 0.7j, -0.9 + 0.2j, 0.3 - 0.5j]), np.array([0.6, -0.8, 0.1]) + 0j, 1j * np.ones(3)):
        W, weights = quadrature.projection_rule(np.stack([z.real, z.imag]), n_points=80)
        mean = quadrature.expectation(np.exp(W @ z), weights)
        assert mean == pytest.approx(np.exp(np.sum(z * z) / 2), rel=1e-12)


@pytest.mark.parametrize("case", A_CASES)
def test_ce_estimator_is_unbiased_and_matches_both_closed_form_mses(case):
    A = A_CASES[case]
    W, weights = quadrature.projection_rule(np.eye(2), n_points=100)
    e = _ce_node_values(W, X2, Y2, A)
    sm = np.exp(X2 @ Y2)
    assert quadrature.expectation(e, weights) == pytest.approx(sm, rel=1e-11)
    for m in (1, 5):
        complex_mse = quadrature.expectation(np.abs(e - sm) ** 2, weights) / m
        real_mse = quadrature.expectation((e.real - sm) ** 2, weights) / m
        assert float(
            jnp.exp(moments.complex_exp.log_mse_complex_exponential(X2, Y2, A, m, part="complex"))
        ) == pytest.approx(complex_mse, rel=1e-9)
        assert float(jnp.exp(moments.complex_exp.log_mse_complex_exponential(X2, Y2, A, m))) == pytest.approx(
            real_mse, rel=1e-9
        )


def test_complex_part_log_mse_stays_finite_where_its_mse_overflows():
    """log((SM²/m)(e^{|w|²} − 1)) with |w|² = 800 (x = y = (10, 10), A = I): log(expm1(800)) was +inf in float64;
    the log form s + log(1 − e^{−s}) gives the exact 2·200 + 800 = 1 200."""
    x = y = jnp.array([10.0, 10.0])
    value = moments.complex_exp.log_mse_complex_exponential(x, y, jnp.eye(2), 1, part="complex")
    assert float(value) == pytest.approx(1200.0, rel=1e-15)


@pytest.mark.parametrize("case", A_CASES)
def test_real_asymmetric_ce_maps_give_the_real_part_of_the_bilinear_product(case, key):
    A = A_CASES[case]
    k1, k2, k3 = jax.random.split(key, 3)
    W = jax.random.normal(k1, (9, 2))
    X, Y = 0.5 * jax.random.normal(k2, (4, 2)), 0.5 * jax.random.normal(k3, (3, 2))
    bilinear = complex_exp.ce_features(W, X, A) @ complex_exp.ce_features(W, Y, np.linalg.inv(A).T).T
    real = complex_exp.complex_exponential_estimator(W, A).estimate(X, Y)
    assert real.dtype == jnp.float64
    np.testing.assert_allclose(real, bilinear.real, rtol=1e-12, atol=1e-14)


def test_a_equals_i_identity_is_trig_and_a_equals_identity_is_positive(key):
    """The special cases of §2.3: Re ŜM^cexp with A = iI is ŜM^trig exactly; A = I is non-antithetic FAVOR+."""
    k1, k2, k3 = jax.random.split(key, 3)
    W = jax.random.normal(k1, (16, 4))
    X, Y = 0.6 * jax.random.normal(k2, (5, 4)), 0.6 * jax.random.normal(k3, (6, 4))
    ce_trig = complex_exp.complex_exponential_estimator(W, 1j * np.eye(4)).estimate(X, Y)
    np.testing.assert_allclose(ce_trig, classic.trig_estimator(W).estimate(X, Y), rtol=1e-12)
    ce_pos = complex_exp.complex_exponential_estimator(W, np.eye(4)).estimate(X, Y)
    np.testing.assert_allclose(ce_pos, classic.positive_estimator(W).estimate(X, Y), rtol=1e-12)
    # and the closed forms agree: A = iI gives Lemma 2.2's trig MSE, A = I the positive one
    x, y = np.asarray(X[0]), np.asarray(Y[0])
    assert float(moments.complex_exp.log_mse_complex_exponential(x, y, 1j * np.eye(4), 3)) == pytest.approx(
        float(moments.classic.log_mse_trig(x, y, 3)), rel=1e-12
    )
    assert float(moments.complex_exp.log_mse_complex_exponential(x, y, np.eye(4), 3)) == pytest.approx(
        float(moments.classic.log_mse_positive(x, y, 3)), rel=1e-12
    )


def test_zero_variance_exactly_when_a_x_plus_a_inverse_transpose_y_vanishes(key):
    """Eq 17: x = −A^{-1}A^{-T}y ⇒ every draw equals SM (eq 18's real/imaginary split is the same condition)."""
    y = np.array([0.3, -0.4])
    A_real = np.array([[1.2, 0.3], [-0.2, 0.8]])
    x = -np.linalg.solve(A_real, np.linalg.solve(A_real.T, y))
    W = jax.random.normal(key, (50, 2))
    est = complex_exp.complex_exponential_estimator(W, A_real).estimate(x[None], y[None])
    assert float(est[0, 0]) == pytest.approx(np.exp(x @ y), rel=1e-12)
    assert moments.complex_exp.log_mse_complex_exponential(x, y, A_real, 4) < np.log(1e-25)  # zero up to round-off in w


def test_diagonal_ce_is_positive_features_of_rescaled_inputs(key):
    k1, k2, k3 = jax.random.split(key, 3)
    W = jax.random.normal(k1, (8, 3))
    X, Y = jax.random.normal(k2, (4, 3)), jax.random.normal(k3, (5, 3))
    a = np.array([0.5, 1.0, 2.5])
    diag = complex_exp.diagonal_ce_estimator(W, a).estimate(X, Y)
    general = complex_exp.complex_exponential_estimator(W, np.diag(a)).estimate(X, Y)
    np.testing.assert_allclose(diag, general, rtol=1e-12)


def test_ce_mse_log_form_is_finite_where_the_mse_overflows():
    x = np.full(3, 9.0)
    value = moments.complex_exp.log_mse_complex_exponential(x, x, np.diag([1.0, 2.0, 0.5]), 4)
    assert np.isfinite(value) and value > 700


def test_ce_rejects_singular_or_misshaped_matrices(key):
    W = jax.random.normal(key, (4, 2))
    with pytest.raises(ValueError, match="invertible"):
        complex_exp.complex_exponential_estimator(W, np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        complex_exp.complex_exponential_estimator(W, np.eye(3))
    with pytest.raises(ValueError, match="positive"):
        complex_exp.diagonal_ce_estimator(W, np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="part"):
        moments.complex_exp.log_mse_complex_exponential(X2, Y2, np.eye(2), 1, part="imaginary")
    with pytest.raises(ValueError, match="A must be invertible"):  # its inverse gave a NaN log MSE
        moments.complex_exp.log_mse_complex_exponential(X2, Y2, np.zeros((2, 2)), 1)
    with pytest.raises(ValueError, match="A must hold real or complex numbers"):  # read as the identity before
        complex_exp.complex_exponential_estimator(W, np.eye(2, dtype=bool))
    with pytest.raises(ValueError, match="M contains NaN"):  # NaN features before
        complex_exp.ce_features(W, np.ones((3, 2)), np.array([[1.0, np.nan], [0.0, 1.0]]))


def test_uniform_log_mse_entry_point_is_the_ce_closed_form(key):
    x, y = 0.4 * jax.random.normal(key, (2, 5, 3))
    A = jnp.exp(0.3j) * jnp.eye(3)
    for part in ("real", "complex"):
        np.testing.assert_array_equal(
            moments.complex_exp.log_mse(x, y, 4, A=A, part=part),
            moments.complex_exp.log_mse_complex_exponential(x, y, A, 4, part=part),
        )
    # A = iI is the trigonometric estimator (Lemma 2.2): the same closed form through two families' entry points.
    np.testing.assert_allclose(
        moments.complex_exp.log_mse(x, y, 4, A=1j * jnp.eye(3)),
        moments.classic.log_mse(x, y, 4, kind="trig"),
        rtol=1e-12,
    )
