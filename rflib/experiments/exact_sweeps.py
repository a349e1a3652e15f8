"""Sweeps and summaries of the exact MSE closed forms: error profiles and their crossing (HRF §1, Fig 1), Theorem
3.5's maximal relative error against its printed and corrected bounds, and equal-cost error curves (HRF Figs 2, 5).

Everything is deterministic: the closed forms of :mod:`rflib.moments.classic` and :mod:`rflib.sphere`, evaluated on
grids, in log space where the MSEs reach e^150.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import optimize

from rflib import _checks, kernels, sphere
from rflib.experiments.progress_bars import bar


def log10_mse_ratio(log_mse_a: Callable, log_mse_b: Callable, theta, norm_ratios, m: int, d: int) -> np.ndarray:
    """log₁₀ (MSE_a / MSE_b) over angles θ and norm ratios ‖y‖/‖x‖ with ‖x‖ = 1 (HRF §1, Fig 1: where trig beats
    hyperbolic features and vice versa).

    log_mse_a, log_mse_b: ``log_mse(x, y, m)`` closed forms (rflib.moments.classic). theta: (t,) angles;
    norm_ratios: (k,) values of ‖y‖; m features each; pairs in ℝ^d. Returns (k, t).
    """
    theta = _checks.finite_numpy("theta", theta, 1)
    norm_ratios = _checks.finite_numpy("norm_ratios", norm_ratios, 1)
    _checks.values_in_range("norm_ratios", norm_ratios, low=0.0)
    m = _checks.positive_int("m", m)
    d = _checks.integer("d", d, low=2)
    surface = np.empty((norm_ratios.size, theta.size))
    for i, rho in enumerate(norm_ratios):
        xr, yr = kernels.pair_at_angle(theta, 1.0, rho, d=d)
        surface[i] = np.asarray(log_mse_a(xr, yr, m) - log_mse_b(xr, yr, m)) / np.log(10)
    return surface


def crossing_angle(theta, gap) -> tuple[bool, float]:
    """Where an increasing log-MSE gap between two estimators crosses zero (HRF §1: trig vs hyperbolic, θ* = π/2).

    theta: (t,) increasing angles; gap: (t,) log MSE_a − log MSE_b. The two end points are dropped (±inf where one
    estimator is exact). Returns (gap strictly increasing on the interior, θ* by linear interpolation, NaN if not).
    """
    theta = _checks.finite_numpy("theta", theta, 1)
    _checks.real_dtype("gap", gap)
    gap = np.asarray(gap, dtype=np.float64)
    if gap.shape != theta.shape or theta.size < 4:
        raise ValueError(f"gap must have theta's shape {theta.shape} with at least 4 angles, got {gap.shape}")
    interior = gap[1:-1]
    monotone = bool(np.all(np.diff(interior) > 0))
    theta_star = float(np.interp(0.0, interior, theta[1:-1])) if monotone else float("nan")
    return monotone, theta_star


def max_relative_errors(radii, m: int, ns, *, n_grid: int, progress: bool = False) -> dict[int, np.ndarray]:
    """log ε_{S(r)} of the angular hybrid (max over θ of the relative error on the sphere of radius r, HRF Def 3.3,
    Theorem 3.5) for every r in ``radii`` and every n in ``ns``, by
    :func:`rflib.sphere.angular_hybrid_max_relative_error` on an ``n_grid``-point θ grid polished by Brent's method.

    radii: (k,) norms > 0; m: base projections. Returns n → (k,). ``progress``: a bar over the radii for each n.
    """
    radii = _checks.finite_numpy("radii", radii, 1)
    _checks.values_in_range("radii", radii, low=0.0, low_open=True)
    m = _checks.positive_int("m", m)
    ns = [_checks.positive_int("ns", n) for n in ns]
    n_grid = _checks.positive_int("n_grid", n_grid)
    return {
        n: np.array(
            [
                sphere.angular_hybrid_max_relative_error(r, m, n, n_grid=n_grid)[1]
                for r in bar(radii, f"Theorem 3.5, n = {n}, radii", progress)
            ]
        )
        for n in ns
    }


def printed_bound_crossing(radii, log_exact, m: int, n: int, *, n_grid: int = 20_001, xtol: float = 1e-6) -> float:
    """Smallest r where the angular hybrid's exact ε_{S(r)} exceeds Theorem 3.5's bound as printed (eq 27).

    radii: (k,) increasing, the first below the crossing; log_exact: (k,) log ε_{S(r)} on them
    (:func:`max_relative_errors`). The first radius above the bound and the one before it bracket a Brent root of
    log ε_{S(r)} − log bound(r), with ε recomputed on an ``n_grid``-point grid. Returns NaN when no radius exceeds the
    bound (r* ≈ 4.128 for n = 1).
    """
    radii = _checks.finite_numpy("radii", radii, 1)
    log_exact = _checks.finite_numpy("log_exact", log_exact, 1)
    if log_exact.shape != radii.shape:
        raise ValueError(f"log_exact must have radii's shape {radii.shape}, got {log_exact.shape}")
    m = _checks.positive_int("m", m)
    n = _checks.positive_int("n", n)
    n_grid = _checks.positive_int("n_grid", n_grid)
    xtol = _checks.positive_float("xtol", xtol)

    def gap(r):
        return sphere.angular_hybrid_max_relative_error(r, m, n, n_grid=n_grid)[1] - sphere.log_theorem_3_5_bound(
            r, m, n
        )

    above = np.nonzero(log_exact > sphere.log_theorem_3_5_bound(radii, m, n))[0]
    if above.size == 0:
        return float("nan")
    j = above[0]
    if j == 0:
        raise ValueError(
            f"radii must start where the bound still holds: at r = {radii[0]:g} the exact ε already exceeds it"
        )
    return float(optimize.brentq(gap, radii[j - 1], radii[j], xtol=xtol))


def theorem_3_5_limit_ratio(theta, r: float, m: int, n: int) -> np.ndarray:
    """(ε_{θ,r}/√θ) / (W(r)/√(2πmn)) for the angular hybrid: → 1 as θ → 0 (HRF Theorem 3.5, limits part).

    theta: (...) angles in (0, π]; r: the norm; m, n: base and λ projections. Returns (...).
    """
    _checks.values_in_range("theta", _checks.finite_numpy("theta", theta), low=0.0, low_open=True)
    e0 = sphere.log_relative_error(sphere.log_mse_angular_hybrid(theta, r, m, n), theta, r) - 0.5 * np.log(theta)
    return np.exp(e0 - sphere.log_theorem_3_5_limit(r, m, n))


def equal_cost_log_relative_errors(theta, r: float, m_regular: int, m_hybrid: int, n_hybrid: int) -> dict:
    """log ε_{θ,r} on the sphere S(r) of trig and FAVOR+ with ``m_regular`` projections and of the angular hybrid
    with (m, n) = (``m_hybrid``, ``n_hybrid``): equal cost when m·n = M (HRF App I, Figs 2/5; Lemma 2.2, corrected
    eq 47). theta: (t,). Returns {"trig", "FAVOR+", "hybrid"} → (t,).
    """
    theta = _checks.finite_numpy("theta", theta, 1)
    return {
        "trig": sphere.log_relative_error(sphere.log_mse_trig(theta, r, m_regular), theta, r),
        "FAVOR+": sphere.log_relative_error(sphere.log_mse_hyperbolic(theta, r, m_regular), theta, r),
        "hybrid": sphere.log_relative_error(sphere.log_mse_angular_hybrid(theta, r, m_hybrid, n_hybrid), theta, r),
    }
