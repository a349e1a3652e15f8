"""rflib.experiments.exact_sweeps: sweeps of the exact MSEs (HRF §1 crossing, Theorem 3.5, equal-cost curves)."""

import math

import numpy as np
import pytest

from rflib import kernels, moments, sphere
from rflib.experiments import exact_sweeps


def test_trig_and_hyperbolic_mses_cross_at_a_right_angle_for_every_norm_ratio():
    theta = np.array([0.3, np.pi / 2, 2.8])
    Z = exact_sweeps.log10_mse_ratio(
        moments.classic.log_mse_trig, moments.classic.log_mse_hyperbolic, theta, np.array([0.5, 1.0, 2.0]), 10, 3
    )
    assert Z.shape == (3, 3)
    assert np.all(np.abs(Z[:, 1]) < 1e-9)  # x ⊥ y: SM = 1 and ‖x − y‖ = ‖x + y‖ (HRF §1)
    assert np.all(Z[:, 0] < 0) and np.all(Z[:, 2] > 0)  # trig better below π/2, hyperbolic above


def test_crossing_angle_interpolates_a_monotone_gap_and_is_nan_otherwise():
    theta = np.linspace(0.0, 2.0, 9)
    gap = theta - 1.0
    gap[0], gap[-1] = -np.inf, np.inf  # the end points are dropped
    assert exact_sweeps.crossing_angle(theta, gap) == (True, pytest.approx(1.0, abs=1e-15))
    monotone, theta_star = exact_sweeps.crossing_angle(theta, np.abs(theta - 1.0))
    assert not monotone and math.isnan(theta_star)
    grid = np.linspace(0.0, np.pi, 91)
    x, y = kernels.pair_at_angle(grid, d=4)
    log_rel = {
        k: np.asarray(moments.classic.log_relative_mse(f(x, y, 10), x, y))
        for k, f in (("trig", moments.classic.log_mse_trig), ("hyp", moments.classic.log_mse_hyperbolic))
    }
    monotone, theta_star = exact_sweeps.crossing_angle(grid, log_rel["trig"] - log_rel["hyp"])
    assert monotone and theta_star == pytest.approx(np.pi / 2, abs=1e-6)


def test_angular_hybrid_max_error_is_below_trig_and_favor_and_at_least_its_grid_maximum():
    radii = np.array([1.0, 2.0, 3.0])
    exact = exact_sweeps.max_relative_errors(radii, 10, (1, 4), n_grid=2001)
    trig_level = sphere.log_W(radii) - 0.5 * np.log(20)  # Lemma 3.4: ε_S(r) of trig and FAVOR+
    grid = np.linspace(0.0, np.pi, 2001)
    for n, values in exact.items():
        assert values.shape == (3,) and np.all(values < trig_level)
        on_grid = [
            np.max(sphere.log_relative_error(sphere.log_mse_angular_hybrid(grid, r, 10, n), grid, r)) for r in radii
        ]
        assert np.all(values >= np.array(on_grid) - 1e-12)  # Brent polishing never loses the grid maximum


def test_printed_bound_is_first_violated_at_r_4_128_for_n_1():
    radii = np.linspace(1.0, 6.0, 26)
    exact = exact_sweeps.max_relative_errors(radii, 10, (1,), n_grid=20_001)[1]
    assert exact_sweeps.printed_bound_crossing(radii, exact, 10, 1) == pytest.approx(4.128, abs=2e-3)  # HRF-E1
    assert math.isnan(exact_sweeps.printed_bound_crossing(radii[:10], exact[:10], 10, 1))  # r ≤ 2.8: bound holds
    with pytest.raises(ValueError, match="log_exact"):
        exact_sweeps.printed_bound_crossing(radii, exact[:3], 10, 1)
    with pytest.raises(ValueError, match="radii must start where the bound still holds"):
        exact_sweeps.printed_bound_crossing(radii[20:], exact[20:], 10, 1)  # r ≥ 5: no bracket below the crossing


def test_theorem_3_5_limit_ratio_tends_to_one_as_theta_tends_to_zero():
    for r in (1.0, 2.0):
        for n in (1, 4):
            assert abs(exact_sweeps.theorem_3_5_limit_ratio(1e-6, r, 10, n) - 1) < 1e-4
            assert abs(exact_sweeps.theorem_3_5_limit_ratio(0.5, r, 10, n) - 1) > 1e-2
    with pytest.raises(ValueError, match="theta"):
        exact_sweeps.theorem_3_5_limit_ratio(0.0, 1.0, 10, 1)


def test_equal_cost_curves_give_the_hrf_notes_maxima_and_lemma_3_4_symmetry():
    theta = np.linspace(0.0, np.pi, 181)
    curves = exact_sweeps.equal_cost_log_relative_errors(theta, 1.0, 128, 16, 8)
    maxima = {k: float(np.exp(np.max(v))) for k, v in curves.items()}
    assert maxima["trig"] == pytest.approx(maxima["FAVOR+"], rel=1e-9)  # Lemma 3.4: the same ε_S(r)
    assert maxima["trig"] == pytest.approx(0.453, abs=1e-3) and maxima["hybrid"] == pytest.approx(0.312, abs=1e-3)
