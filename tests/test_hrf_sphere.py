"""HRF on the sphere S(r): Lemma 3.4, eq 47 (corrected), Theorem 3.5 (limits, and the bound's erratum).

All deterministic closed forms in float64; Theorem 3.5's printed bound is shown to fail for large r, and the
corrected bound (ERRATA.md HRF-E1) to hold.
"""

import jax.numpy as jnp
import numpy as np
import pytest

from rflib import kernels, moments, sphere

THETAS = np.linspace(0.0, np.pi, 41)


@pytest.mark.parametrize("r", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("n", [1, 4])
def test_corrected_eq_47_equals_theorem_3_1_with_lemmas_2_2_and_3_2(r, n):
    for theta in THETAS[1:-1]:
        x, y = kernels.pair_at_angle(theta, r, d=3)
        for shared in (False, True):
            generic = float(moments.hybrid.log_mse_angular_hybrid(x, y, 10, n, shared=shared))
            assert sphere.log_mse_angular_hybrid(theta, r, 10, n) == pytest.approx(generic, rel=1e-12, abs=1e-12)


def test_eq_47_as_printed_is_a_typo():
    """The printed trig weight p(1 − 1/n − p + p/n) is E λ̂(1 − λ̂); independent values (r = 1, m = 10, n = 1)."""
    for theta, corrected, printed in ((0.3, 1.54965, 1.54721), (1.1, 0.815638, 0.709551), (2.5, 0.0726784, 0.00128455)):
        assert np.exp(sphere.log_mse_angular_hybrid(theta, 1.0, 10, 1)) == pytest.approx(corrected, rel=1e-5)
        assert np.exp(sphere.log_mse_angular_hybrid(theta, 1.0, 10, 1, printed=True)) == pytest.approx(
            printed, rel=1e-5
        )
    # at n = 1 the printed formula drops the trig term entirely: it equals the FAVOR+ term alone
    p = 2.5 / np.pi
    assert np.exp(sphere.log_mse_angular_hybrid(2.5, 1.0, 10, 1, printed=True)) == pytest.approx(
        p * np.exp(sphere.log_mse_hyperbolic(2.5, 1.0, 10)), rel=1e-12
    )


@pytest.mark.parametrize("r", [0.5, 1.0, 3.0])
def test_lemma_3_4_hidden_symmetry_and_maximum(r):
    m = 16
    eps_trig = sphere.log_relative_error(sphere.log_mse_trig(THETAS, r, m), THETAS, r)
    eps_pos = sphere.log_relative_error(sphere.log_mse_hyperbolic(np.pi - THETAS, r, m), np.pi - THETAS, r)
    np.testing.assert_allclose(eps_trig[1:], eps_pos[1:], rtol=1e-12)
    half = np.sin(THETAS[1:] / 2) ** 2
    closed = -0.5 * np.log(2 * m) + 2 * r**2 * half + np.log(-np.expm1(-4 * r**2 * half))
    np.testing.assert_allclose(eps_trig[1:], closed, rtol=1e-12)
    assert np.all(np.diff(eps_trig[1:]) > 0)  # monotone in θ, max at π
    assert eps_trig[-1] == pytest.approx(sphere.log_W(r) - 0.5 * np.log(2 * m), rel=1e-12)
    # the sphere formulas agree with the generic pair formulas of rflib.moments
    x, y = kernels.pair_at_angle(1.0, r, d=3)
    assert sphere.log_mse_trig(1.0, r, m) == pytest.approx(float(moments.classic.log_mse_trig(x, y, m)), rel=1e-12)
    assert sphere.log_mse_hyperbolic(1.0, r, m) == pytest.approx(
        float(moments.classic.log_mse_hyperbolic(x, y, m)), rel=1e-12
    )


@pytest.mark.parametrize("r", [1.0, 2.0])
@pytest.mark.parametrize("n", [1, 4])
def test_theorem_3_5_limits(r, n):
    """ε_{θ,r}/√θ → W/√(2πmn) as θ → 0 and ε/√(π − θ) → the same as θ → π (the paper prints √(θ − π))."""
    m = 10
    limit = sphere.log_theorem_3_5_limit(r, m, n)
    for t in (1e-4, 1e-6):
        at_0 = sphere.log_relative_error(sphere.log_mse_angular_hybrid(t, r, m, n), t, r) - 0.5 * np.log(t)
        at_pi = sphere.log_relative_error(sphere.log_mse_angular_hybrid(np.pi - t, r, m, n), np.pi - t, r)
        assert np.exp(at_0 - limit) == pytest.approx(1.0, abs=20 * t * max(r**2, 1))
        assert np.exp(at_pi - 0.5 * np.log(t) - limit) == pytest.approx(1.0, abs=20 * t * max(r**2, 1))
    # trig at θ → π and FAVOR+ at θ → 0 stay at W/√(2m): they do not vanish
    assert sphere.log_relative_error(sphere.log_mse_trig(np.pi, r, m), np.pi, r) == pytest.approx(
        sphere.log_W(r) - 0.5 * np.log(2 * m), rel=1e-12
    )


def _ratio_to_bound(r, n, corrected):
    _, log_max = sphere.angular_hybrid_max_relative_error(r, 10, n, n_grid=20_001)
    return np.exp(log_max - sphere.log_theorem_3_5_bound(r, 10, n, corrected=corrected))


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_theorem_3_5_printed_bound_holds_for_moderate_r(n):
    for r in (1.0, 2.0, 3.0, 4.0):
        assert _ratio_to_bound(r, n, corrected=False) < 1.0


def test_theorem_3_5_printed_bound_is_violated_for_large_r():
    """n = 1: the printed bound (eq 27) fails from r ≈ 4.128, e.g. at Fig 1's own r = 5 (ratio 1.100)."""
    assert _ratio_to_bound(5.0, 1, corrected=False) == pytest.approx(1.1004, abs=2e-3)
    assert _ratio_to_bound(4.12, 1, corrected=False) < 1.0 < _ratio_to_bound(4.14, 1, corrected=False)
    assert _ratio_to_bound(6.3, 2, corrected=False) > 1.0  # n = 2 crosses at r ≈ 6.234


@pytest.mark.parametrize("n", [1, 2, 4, 8, 64])
def test_theorem_3_5_corrected_bound_holds_and_hybrid_beats_trig_and_favor(n):
    for r in (1.0, 2.0, 4.13, 5.0, 7.5, 10.0):
        assert _ratio_to_bound(r, n, corrected=True) <= 0.5
        _, log_max = sphere.angular_hybrid_max_relative_error(r, 10, n, n_grid=20_001)
        assert log_max < sphere.log_W(r) - 0.5 * np.log(20)  # below ε_{S(r)} of trig and FAVOR+ (Lemma 3.4)


def test_max_search_agrees_with_a_dense_grid():
    theta = np.linspace(0, np.pi, 400_001)
    dense = np.max(sphere.log_relative_error(sphere.log_mse_angular_hybrid(theta, 2.0, 10, 3), theta, 2.0))
    assert sphere.angular_hybrid_max_relative_error(2.0, 10, 3)[1] == pytest.approx(dense, rel=1e-10)


def test_sphere_functions_are_finite_where_the_mse_overflows():
    value = sphere.log_mse_angular_hybrid(0.5, 8.0, 10, 1)
    assert np.isfinite(value) and value > 200
    assert jnp.isfinite(sphere.log_W(10.0))


@pytest.mark.parametrize("r", [0.5, 1.25])
def test_gaussian_hybrid_on_the_sphere_is_theorem_f_1_at_any_rotated_pair(r):
    """The sphere form equals the generic bipolar-hybrid closed form at pairs rotated into ℝ⁵ (rotation invariance)."""
    thetas = np.array([0.2, 1.0, 2.2, 3.0])
    Q, _ = np.linalg.qr(np.random.default_rng(4).normal(size=(5, 5)))
    x, y = kernels.pair_at_angle(thetas, r, d=5)
    x, y = x @ Q.T, y @ Q.T
    delta_sq = np.sum((x - y) ** 2, axis=-1)
    lam = moments.hybrid.normalized_gaussian_lambda_moments(delta_sq, 8, 0.7 / r, r)
    generic = np.asarray(moments.hybrid.log_mse_bipolar_hybrid(x, y, 16, lam))
    np.testing.assert_allclose(sphere.log_mse_gaussian_hybrid(thetas, r, 16, 8, sigma=0.7 / r), generic, rtol=1e-12)


@pytest.mark.parametrize("r", [0.5, 1.5])
def test_grid_max_relative_error_of_trig_is_lemma_3_4s_w_over_root_2m(r):
    """ε_{S(r)}(trig) = W(r)/√(2m), attained at θ = π (a grid point); the angular hybrid's −inf log MSE at θ = 0
    (a zero MSE) is accepted."""
    theta = np.linspace(0.0, np.pi, 721)
    got = sphere.max_relative_error(sphere.log_mse_trig(theta, r, 16), theta, r)
    assert got == pytest.approx(np.exp(sphere.log_W(r)) / np.sqrt(32), rel=1e-12)
    log_mse = sphere.log_mse_angular_hybrid(theta, r, 16, 4)
    assert log_mse[0] == -np.inf and np.isfinite(sphere.max_relative_error(log_mse, theta, r))
    with pytest.raises(ValueError, match="theta's shape"):
        sphere.max_relative_error(log_mse[:-1], theta, r)
    with pytest.raises(ValueError, match="not NaN"):
        sphere.max_relative_error(np.full(theta.shape, np.nan), theta, r)


@pytest.mark.parametrize("r", [1.0, 1.5])
def test_gaussian_hybrid_grid_max_equals_theorem_f_1_maximised_over_rotated_pairs(r):
    """The maximum over θ of ε for the normalised Gaussian hybrid, from the generic bipolar closed form (Theorem F.1)
    at pairs in ℝ³, equals the sphere function's."""
    theta = np.linspace(0.0, np.pi, 181)
    x, y = kernels.pair_at_angle(theta, r, d=3)
    lam = moments.hybrid.normalized_gaussian_lambda_moments(np.sum((x - y) ** 2, axis=-1), 8, 0.5 / r, r)
    generic = np.asarray(moments.hybrid.log_mse_bipolar_hybrid(x, y, 16, lam))
    expected = np.max(np.exp(0.5 * generic - r**2 * np.cos(theta)))
    got = sphere.gaussian_hybrid_max_relative_error(theta, r, 16, 8, sigma=0.5 / r)
    assert got == pytest.approx(expected, rel=1e-10)
