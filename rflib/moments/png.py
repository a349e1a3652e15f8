"""Exact PNG kernels and the moments behind the orthogonal gain (KAMA-NNs Definition 2, Theorem 1).

Only the 2-D Gaussian (gᵀx, gᵀy) matters, so the exact oracle (:func:`expectation`) is a 2-D integral in polar
coordinates: Gauss–Legendre in the angle, split where gᵀx or gᵀy changes sign (so sgn, step and ReLU are integrated
exactly), and Gauss–Laguerre in t = r²/2 after pairing z with −z (so the radial integrand is analytic in t).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from numpy.polynomial import laguerre, legendre

from rflib import _checks
from rflib.features.png import ACTIVATIONS, activation


def _vectors(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = _checks.finite_numpy("x", x, 1), _checks.finite_numpy("y", y, 1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must be vectors of one length, got shapes {x.shape} and {y.shape}")
    return x, y


def kernel(name: str, x, y) -> float:
    """Closed-form K_f(x, y) (KAMA-NNs Definition 2) for every activation except tanh (use :func:`expectation`).

    sgn: 1 − 2θ/π; heaviside: (π − θ)/(2π); relu: ‖x‖‖y‖(sin θ + (π − θ) cos θ)/(2π); identity: xᵀy;
    square: ‖x‖²‖y‖² + 2(xᵀy)²; he2: that − ‖x‖² − ‖y‖² + 1; cos/sin: (e^{−‖x−y‖²/2} ± e^{−‖x+y‖²/2})/2;
    erf: (2/π) arcsin(2xᵀy / √((1 + 2‖x‖²)(1 + 2‖y‖²))); exp: e^{‖x+y‖²/2}.
    """
    activation(name)
    x, y = _vectors(x, y)
    nx, ny, xy = np.linalg.norm(x), np.linalg.norm(y), float(x @ y)
    if name in ("sgn", "heaviside", "relu"):
        if nx == 0 or ny == 0:
            raise ValueError(f"the {name} kernel needs nonzero x and y")
        theta = 2 * math.atan2(np.linalg.norm(x / nx - y / ny), np.linalg.norm(x / nx + y / ny))
        return {
            "sgn": 1 - 2 * theta / math.pi,
            "heaviside": (math.pi - theta) / (2 * math.pi),
            "relu": nx * ny * (math.sin(theta) + (math.pi - theta) * math.cos(theta)) / (2 * math.pi),
        }[name]
    minus, plus = math.exp(-np.sum((x - y) ** 2) / 2), math.exp(-np.sum((x + y) ** 2) / 2)
    closed = {
        "identity": lambda: xy,
        "square": lambda: nx**2 * ny**2 + 2 * xy**2,
        "he2": lambda: nx**2 * ny**2 + 2 * xy**2 - nx**2 - ny**2 + 1,
        "cos": lambda: (minus + plus) / 2,
        "sin": lambda: (minus - plus) / 2,
        "erf": lambda: 2 / math.pi * math.asin(2 * xy / math.sqrt((1 + 2 * nx**2) * (1 + 2 * ny**2))),
        "exp": lambda: math.exp(np.sum((x + y) ** 2) / 2),
    }
    if name not in closed:
        raise ValueError(f"name {name!r} has no closed form; use png_moments.kernel_by_quadrature")
    return float(closed[name]())


def _span_coordinates(x, y) -> tuple[np.ndarray, np.ndarray]:
    """a, b ∈ ℝ² with ⟨a, b⟩ = xᵀy, ‖a‖ = ‖x‖, ‖b‖ = ‖y‖ (x and y in an orthonormal basis of their span)."""
    nx = np.linalg.norm(x)
    if nx == 0:
        return np.zeros(2), np.array([np.linalg.norm(y), 0.0])
    along = float(x @ y) / nx
    across = math.sqrt(max(float(y @ y) - along**2, 0.0))
    return np.array([nx, 0.0]), np.array([along, across])


def polar_rule(x, y, *, n_angle: int = 48, n_radius: int = 96) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A rule for E G(gᵀx, gᵀy), g ~ N(0, I_d), in the 2-D coordinates z of span{x, y}.

    Returns nodes z: (n, 2), the matching a, b ∈ ℝ² (so gᵀx = aᵀz, gᵀy = bᵀz) stacked as (2, 2), and weights (n,)
    summing to 1. The node set is symmetric under z → −z; angles are split at the sign changes of aᵀz and bᵀz.
    """
    x, y = _vectors(x, y)
    a, b = _span_coordinates(x, y)
    breaks = [0.0, math.pi]
    for v in (a, b):
        if np.any(v):
            breaks.append((math.atan2(v[1], v[0]) + math.pi / 2) % math.pi)
    breaks = np.unique(np.round(np.array(breaks), 15))
    s, ws = legendre.leggauss(n_angle)
    t, wt = laguerre.laggauss(n_radius)
    phis, wphi = [], []
    for lo, hi in zip(breaks[:-1], breaks[1:], strict=True):
        if hi - lo > 1e-15:
            phis.append((hi - lo) / 2 * s + (hi + lo) / 2)
            wphi.append((hi - lo) / 2 * ws)
    phi, wphi = np.concatenate(phis), np.concatenate(wphi)
    r = np.sqrt(2 * t)
    directions = np.stack([np.cos(phi), np.sin(phi)], -1)  # (n_phi, 2)
    half = directions[:, None, :] * r[None, :, None]  # (n_phi, n_r, 2)
    nodes = np.concatenate([half, -half]).reshape(-1, 2)
    w = (wphi[:, None] * wt[None, :]) / (2 * math.pi)
    weights = np.concatenate([w, w]).reshape(-1)
    return nodes, np.stack([a, b]), weights


def expectation(integrand: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray], x, y, **rule) -> np.ndarray:
    """E integrand(u, v, z) with u = gᵀx, v = gᵀy and z the 2-D coordinates of g in span{x, y}.

    ``integrand`` gets arrays u, v: (n,) and z: (n, 2) and returns (n,) or (n, …). Exact for the piecewise-constant
    and piecewise-polynomial integrands of sgn/step/ReLU; spectrally accurate for smooth ones.
    """
    nodes, ab, weights = polar_rule(x, y, **rule)
    values = np.asarray(integrand(nodes @ ab[0], nodes @ ab[1], nodes), dtype=float)
    return np.tensordot(weights, values, axes=(0, 0))


def kernel_by_quadrature(name: str, x, y, **rule) -> float:
    """K_f(x, y) by :func:`expectation` (the oracle for tanh and the check of :func:`kernel`)."""
    f = activation(name)
    return float(expectation(lambda u, v, z: np.asarray(f(u) * f(v)), x, y, **rule))


class GainLaw(NamedTuple):
    """Moments behind the first-order orthogonal gain: K, Var F and ‖H‖²_F with H = E[F(g)(ggᵀ − I)]."""

    kernel: float
    variance: float
    h_norm_sq: float

    def mse_iid(self, m: int) -> float:
        """MSE of URN with m rows: Var F / m (exact)."""
        return self.variance / _checks.positive_int("m", m)  # m = −4 gave a negative MSE

    def mse_orthogonal(self, m: int, d: int) -> float:
        """First-order MSE of ORN with m = b·d rows: Var F / m − (d − 1) ‖H‖²_F / (2 d m)."""
        m, d = _checks.positive_int("m", m), _checks.positive_int("d", d)
        return self.variance / m - (d - 1) * self.h_norm_sq / (2 * d * m)


def gain_law(name: str, x, y, **rule) -> GainLaw:
    """K, Var F and ‖H‖²_F for F(g) = f(gᵀx) f(gᵀy) by quadrature.

    H(x, y) = E[F(g)(ggᵀ − I_d)] vanishes outside span{x, y}, so ‖H‖_F is the norm of its 2×2 block. The
    orthogonal-pair covariance is −‖H‖²_F / (2d) + O(d⁻²), so MSE_URN − MSE_ORN = (d − 1)‖H‖²_F / (2dm) to first
    order (our derivation; it replaces Theorem 1's unspecified K(ε)/d and shows when the gain vanishes).
    """
    f = activation(name)

    def moments(u, v, z):
        F = np.asarray(f(u) * f(v))
        outer = z[:, :, None] * z[:, None, :] - np.eye(2)
        return np.concatenate([F[:, None], (F**2)[:, None], (F[:, None, None] * outer).reshape(-1, 4)], axis=1)

    out = expectation(moments, x, y, **rule)
    K = float(out[0])
    return GainLaw(kernel=K, variance=float(out[1] - K**2), h_norm_sq=float(np.sum(out[2:] ** 2)))


def log_mse(x, y, m: int, *, activation: str) -> np.ndarray:
    """The family's uniform entry point: log MSE = log(Var F / m) of the PNG estimator with m iid rows (URN), where
    F(g) = f(gᵀx) f(gᵀy), by :func:`gain_law`'s quadrature, pair by pair.  (..., d), (..., d) → (...) numpy."""
    m = _checks.positive_int("m", m)
    x = _checks.finite_numpy("x", x)
    y = _checks.finite_numpy("y", y)
    if x.shape != y.shape or x.ndim == 0:
        raise ValueError(f"x and y must be pairs of one shape (..., d), got shapes {x.shape} and {y.shape}")
    pairs = zip(x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1]), strict=True)
    variances = np.array([gain_law(activation, a, b).variance for a, b in pairs])
    return np.log(np.maximum(variances, 0.0) / m).reshape(x.shape[:-1])


def gram(name: str, X) -> np.ndarray:
    """Exact K_f(X) for the angular (sgn) kernel, the one Fig 2 uses.  X: (N, d) → (N, N)."""
    if name != "sgn":
        raise ValueError(
            f"name must be 'sgn': the exact kernel matrix is implemented for the angular kernel only, got {name!r:.40}"
        )
    X = _checks.finite_numpy("X", X, 2)
    norms = np.linalg.norm(X, axis=1)
    if np.any(norms == 0):
        raise ValueError("the angular kernel needs nonzero rows")
    U = X / norms[:, None]
    diff = np.linalg.norm(U[:, None] - U[None], axis=-1)
    summ = np.linalg.norm(U[:, None] + U[None], axis=-1)
    return 1 - 4 * np.arctan2(diff, summ) / np.pi


def orthogonal_pair_covariance(name: str, key, x, y, n_pairs: int) -> tuple[float, float]:
    """Monte Carlo Cov(F(w₁), F(w₂)) for two rows of one ORN block (Haar directions, independent χ_d lengths).

    Returns (covariance, standard error). MSE_ORN − MSE_URN = (d − 1) c / m, so c > 0 means orthogonal rows *hurt*.
    """
    x, y = _vectors(x, y)
    n_pairs = _checks.positive_int("n_pairs", n_pairs)
    d = x.size
    f = activation(name)
    k_g, k_len = jax.random.split(key)
    g = jax.random.normal(k_g, (n_pairs, 2, d))
    q1 = g[:, 0] / jnp.linalg.norm(g[:, 0], axis=-1, keepdims=True)
    r2 = g[:, 1] - jnp.sum(g[:, 1] * q1, -1, keepdims=True) * q1
    q2 = r2 / jnp.linalg.norm(r2, axis=-1, keepdims=True)
    lengths = jnp.linalg.norm(jax.random.normal(k_len, (n_pairs, 2, d)), axis=-1)
    w1, w2 = q1 * lengths[:, :1], q2 * lengths[:, 1:]
    F1 = np.asarray(f(w1 @ x) * f(w1 @ y))
    F2 = np.asarray(f(w2 @ x) * f(w2 @ y))
    K = 0.5 * (F1.mean() + F2.mean())
    prod = (F1 - K) * (F2 - K)
    return float(prod.mean()), float(prod.std(ddof=1) / math.sqrt(n_pairs))


def angular_orthogonal_mse_ratio(theta, d: int) -> np.ndarray:
    """MSE_ORN / MSE_URN of the angular (sgn) estimator by the first-order gain law with m = b·d rows:
    1 − (d − 1)/d · (4 sin²θ/π²) / (1 − K²), K = 1 − 2θ/π (‖H‖²_F = 8 sin²θ/π², Var F = 1 − K²; Theorem 1's
    constant made explicit).  theta: (...) angles in (0, π) → (...)."""
    theta = _checks.finite_numpy("theta", theta)
    _checks.values_in_range("theta", theta, low=0.0, high=math.pi, low_open=True, high_open=True)
    d = _checks.integer("d", d, low=2)
    K = 1 - 2 * theta / np.pi
    return 1 - (d - 1) / d * (4 * np.sin(theta) ** 2 / np.pi**2) / (1 - K**2)


def closed_forms_against_quadrature(x, y) -> dict[str, tuple[float, float]]:
    """{name: (closed form :func:`kernel`, quadrature :func:`kernel_by_quadrature`)} of K_f(x, y) for every
    activation of :data:`rflib.features.png.ACTIVATIONS` (Definition 2), the closed form NaN for tanh (none).
    x, y: (d,)."""
    x, y = _vectors(x, y)
    return {
        name: (kernel(name, x, y) if name != "tanh" else float("nan"), kernel_by_quadrature(name, x, y))
        for name in ACTIVATIONS
    }
