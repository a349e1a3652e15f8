"""Closed forms on the sphere S(r) (‖x‖ = ‖y‖ = r, angle θ): HRF Lemma 3.4, eq 47 and Theorem 3.5.

Everything here is numpy float64 (independent of JAX's precision flag) and in log space: the MSEs reach e^150
at r = 5 (HRF Fig 1). On S(r): SM = e^{r² cos θ}, ‖x + y‖² = 4r² cos²(θ/2), ‖x − y‖² = 4r² sin²(θ/2).

Relative error ε_{θ,r} = √MSE / SM (Def 3.3); ε_{S(r)} = max_θ ε_{θ,r}. Lemma 3.4: for trig and FAVOR+ (antithetic)
ε_{S(r)} = W(r)/√(2m) with W(r) = e^{2r²}(1 − e^{−4r²}), attained at θ = π (trig) and θ = 0 (FAVOR+).

Theorem 3.5's bound (eq 27), ε_{S(r)}(hybrid) ≤ (1/r) W(r)/√(2m) √(1/π − 1/(nπ) + 1/(n√π)), is **false for
large r** as printed in the paper's text: its proof's eq 64 bounds max b²_r by e^{2r²}/(2n√π r²) where the critical
point 2r²θ* sin θ* = 1 only gives e^{2r²}/(2n√π r). With that one fix the same proof gives the corrected bound
W(r)/√(2m) √((1 − 1/n)/(π r²) + 1/(n√π r)) (ERRATA.md HRF-E1).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from rflib import _checks, kernels, moments


def _log1mexp(t):
    """log(1 − e^{−t}) for t ≥ 0 (−inf at 0)."""
    with np.errstate(divide="ignore"):
        return np.log(-np.expm1(-np.asarray(t, dtype=np.float64)))


def _xlog(w):
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(w, dtype=np.float64))


def log_W(r) -> np.ndarray:
    """log W(r) = 2r² + log(1 − e^{−4r²}) (Lemma 3.4)."""
    r = _radius(r)
    return 2 * r**2 + _log1mexp(4 * r**2)


def _angle(theta) -> np.ndarray:
    theta = _checks.finite_numpy("theta", theta)
    _checks.values_in_range("theta", theta, low=0.0, high=np.pi, what="an angle")
    return theta


def _radius(r) -> np.ndarray:
    r = _checks.finite_numpy("r", r)
    _checks.values_in_range("r", r, low=0.0, low_open=True, what="a radius")
    return r


def _log_terms(theta, r, m):
    theta, r = _angle(theta), _radius(r)
    base = -np.log(2.0 * m)
    log_pos = base + 4 * r**2 * np.cos(theta) + 2 * r**2 + 2 * _log1mexp(4 * r**2 * np.cos(theta / 2) ** 2)
    log_trig = base + 2 * r**2 + 2 * _log1mexp(4 * r**2 * np.sin(theta / 2) ** 2)
    return log_pos, log_trig


def log_mse_trig(theta, r, m: int) -> np.ndarray:
    """log MSE(ŜM^trig_m) on S(r) (Lemma 2.2): (1/(2m)) e^{2r²}(1 − e^{−4r² sin²(θ/2)})²."""
    return _log_terms(theta, r, _checks.positive_int("m", m))[1]


def log_mse_hyperbolic(theta, r, m: int) -> np.ndarray:
    """log MSE(ŜM^{++}_m) on S(r) (Lemma 2.2): (1/(2m)) e^{4r² cos θ + 2r²}(1 − e^{−4r² cos²(θ/2)})²."""
    return _log_terms(theta, r, _checks.positive_int("m", m))[0]


def log_mse_angular_hybrid(theta, r, m: int, n: int, *, printed: bool = False) -> np.ndarray:
    """log MSE of the angular hybrid on S(r) (Theorem D.1, eq 47; variants I and II coincide for equal norms).

    Corrected eq 47: p(p − p/n + 1/n)·MSE_{++} + (1 − p)(1 − p + p/n)·MSE_trig with p = θ/π.
    ``printed=True`` uses the trig weight as printed in the paper's text, p(1 − 1/n − p + p/n) — that is
    E λ̂(1 − λ̂), a typo: at n = 1 it makes the trig term vanish identically.
    """
    m = _checks.positive_int("m", m)
    n = _checks.positive_int("n", n)
    p = _angle(theta) / np.pi
    w_pos = p * (p - p / n + 1.0 / n)
    w_trig = p * (1 - 1.0 / n - p + p / n) if printed else (1 - p) * (1 - p + p / n)
    log_pos, log_trig = _log_terms(theta, r, m)
    return np.logaddexp(_xlog(w_pos) + log_pos, _xlog(w_trig) + log_trig)


def log_mse_gaussian_hybrid(theta, r: float, m: int, n: int, *, sigma: float) -> np.ndarray:
    """log MSE on S(r) of the normalised Gaussian hybrid (HRF Theorem F.1: the bipolar hybrid of Theorem 3.1 with
    the λ-moments of ``moments.hybrid.normalized_gaussian_lambda_moments`` at ‖x − y‖² = 4r² sin²(θ/2)); HRF §4.1
    uses σ = 1/r.  θ: (...) → (...)."""
    theta = _angle(theta)
    r = _checks.positive_float("r", r)
    x, y = kernels.pair_at_angle(theta, r)
    lam = moments.hybrid.normalized_gaussian_lambda_moments(4 * r**2 * np.sin(theta / 2) ** 2, n, sigma, r)
    return np.asarray(moments.hybrid.log_mse_bipolar_hybrid(x, y, m, lam))


def log_relative_error(log_mse, theta, r) -> np.ndarray:
    """log ε_{θ,r} = ½ log MSE − r² cos θ, from a log MSE on S(r)."""
    return 0.5 * np.asarray(log_mse) - np.asarray(r, dtype=np.float64) ** 2 * np.cos(np.asarray(theta))


def max_relative_error(log_mse, theta, r) -> float:
    """max over the grid θ of ε_{θ,r} = exp(½ log MSE − r² cos θ) (Def 3.3): ε_{S(r)} on a grid, for any estimator
    whose log MSE on S(r) is given at those angles (−inf where the MSE vanishes).  log_mse, theta: (T,) → float."""
    _checks.real_dtype("log_mse", log_mse)
    log_mse = np.asarray(log_mse, dtype=np.float64)
    if np.any(np.isnan(log_mse)) or np.any(log_mse == np.inf):
        raise ValueError("log_mse must be < +inf and not NaN (−inf, a zero MSE, is allowed)")
    theta = _angle(theta)
    if log_mse.shape != theta.shape:
        raise ValueError(f"log_mse must have theta's shape {theta.shape}, got {log_mse.shape}")
    return float(np.exp(log_relative_error(log_mse, theta, _radius(r))).max())


def gaussian_hybrid_max_relative_error(theta, r: float, m: int, n: int, *, sigma: float) -> float:
    """max over the grid θ of the normalised Gaussian hybrid's ε_{θ,r} on S(r) (:func:`log_mse_gaussian_hybrid`,
    HRF Theorem F.1; :func:`max_relative_error`).  θ: (T,) → float."""
    return max_relative_error(log_mse_gaussian_hybrid(theta, r, m, n, sigma=sigma), theta, r)


def _log_hybrid_error(theta, r, m, n):
    return log_relative_error(log_mse_angular_hybrid(theta, r, m, n), theta, r)


def angular_hybrid_max_relative_error(r: float, m: int, n: int, *, n_grid: int = 200_001) -> tuple[float, float]:
    """(θ*, log ε_{S(r)}) for the angular hybrid: the max over a θ grid on [0, π], refined by bounded Brent search.

    Exact to ~1e-12 relative in ε (the grid brackets the maximiser; Brent polishes it).
    """
    r = _checks.positive_float("r", r)
    grid = np.linspace(0.0, np.pi, _checks.positive_int("n_grid", n_grid))
    values = _log_hybrid_error(grid, r, m, n)
    i = int(np.nanargmax(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(
        lambda t: -_log_hybrid_error(t, r, m, n), bounds=(lo, hi), method="bounded", options={"xatol": 1e-14}
    )
    if -res.fun >= values[i]:
        return float(res.x), float(-res.fun)
    return float(grid[i]), float(values[i])


def log_theorem_3_5_bound(r, m: int, n: int, *, corrected: bool = False) -> np.ndarray:
    """log of Theorem 3.5's bound on ε_{S(r)}(angular hybrid), r ≥ 1.

    Printed (eq 27): (1/r) W(r)/√(2m) √(1/π − 1/(nπ) + 1/(n√π)) — false for large r (n = 1: from r ≈ 4.13).
    ``corrected=True``: W(r)/√(2m) √((1 − 1/n)/(π r²) + 1/(n√π r)).
    """
    m = _checks.positive_int("m", m)
    n = _checks.positive_int("n", n)
    r = np.asarray(r, dtype=np.float64)
    if corrected:
        factor = 0.5 * np.log((1 - 1.0 / n) / (np.pi * r**2) + 1.0 / (n * np.sqrt(np.pi) * r))
    else:
        factor = -np.log(r) + 0.5 * np.log(1 / np.pi - 1 / (n * np.pi) + 1 / (n * np.sqrt(np.pi)))
    return log_W(r) - 0.5 * np.log(2.0 * m) + factor


def log_theorem_3_5_limit(r, m: int, n: int) -> np.ndarray:
    """log of lim_{θ→0} ε_{θ,r}/√θ = lim_{θ→π} ε_{θ,r}/√(π − θ) = W(r)/√(2π m n) (Theorem 3.5, limits part).

    The paper prints √(θ − π); √(π − θ) is meant.
    """
    m = _checks.positive_int("m", m)
    n = _checks.positive_int("n", n)
    return log_W(r) - 0.5 * np.log(2.0 * np.pi * m * n)
