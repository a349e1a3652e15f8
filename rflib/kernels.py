"""Exact kernels, the ground truth that every random-feature estimator approximates.

All functions are pairwise over row sets, in the style of ``sklearn.metrics.pairwise``:
``X: (n, d)``, ``Y: (k, d)`` → ``(n, k)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks


def _pair(X, Y):
    X = _checks.points("X", X)
    Y = _checks.points("Y", Y, dim=X.shape[1])
    return X, Y


def log_softmax_kernel(X, Y) -> jax.Array:
    """log SM(x, y) = xᵀy for every pair; use it where SM itself would overflow.  Shapes: (n, d), (k, d) → (n, k)."""
    X, Y = _pair(X, Y)
    return X @ Y.T


def softmax_kernel(X, Y) -> jax.Array:
    """Softmax kernel SM(x, y) = exp(xᵀy) (HRF eq 1; Performer §2.2).  Shapes: (n, d), (k, d) → (n, k)."""
    return jnp.exp(log_softmax_kernel(X, Y))


def squared_distances(X, Y) -> jax.Array:
    """‖x − y‖² for every pair, clipped at 0 against round-off.  Shapes: (n, d), (k, d) → (n, k)."""
    X, Y = _pair(X, Y)
    sq = jnp.sum(X**2, axis=1)[:, None] + jnp.sum(Y**2, axis=1)[None, :] - 2.0 * X @ Y.T
    return jnp.maximum(sq, 0.0)


def gaussian_kernel(X, Y, sigma: float = 1.0) -> jax.Array:
    """Gaussian kernel exp(−‖x − y‖² / (2σ²)).  Shapes: (n, d), (k, d) → (n, k).

    With σ = 1 it equals exp(−‖x‖²/2) SM(x, y) exp(−‖y‖²/2), the identity that turns any softmax-kernel
    feature map into a Gaussian-kernel one (HRF §2.1; Performer §2.2).
    """
    sigma = _checks.positive_float("sigma", sigma)
    return jnp.exp(-squared_distances(X, Y) / (2.0 * sigma**2))


def angles(X, Y) -> jax.Array:
    """Angle θ ∈ [0, π] between every pair of rows.  Shapes: (n, d), (k, d) → (n, k).

    Uses θ = 2·atan2(‖x̂ − ŷ‖, ‖x̂ + ŷ‖) on the unit vectors x̂, ŷ, which stays accurate near 0 and π where
    ``arccos`` of the cosine loses half the digits.
    """
    X, Y = _pair(X, Y)
    _checks.nonzero_rows("X", X)
    _checks.nonzero_rows("Y", Y)
    nx = jnp.linalg.norm(X, axis=1, keepdims=True)
    ny = jnp.linalg.norm(Y, axis=1, keepdims=True)
    xh, yh = X / nx, Y / ny
    diff = jnp.linalg.norm(xh[:, None, :] - yh[None, :, :], axis=-1)
    summ = jnp.linalg.norm(xh[:, None, :] + yh[None, :, :], axis=-1)
    return 2.0 * jnp.arctan2(diff, summ)


def angular_kernel(X, Y) -> jax.Array:
    """Angular kernel 1 − 2θ/π = E[sgn(ωᵀx) sgn(ωᵀy)] for ω ~ N(0, I_d) (KAMA-NNs Def. 2 with f = sgn;
    HRF eq 19 uses λ = θ/π = (1 − this)/2).  Shapes: (n, d), (k, d) → (n, k)."""
    return 1.0 - 2.0 * angles(X, Y) / jnp.pi


def pair_at_angle(theta, norm_x=1.0, norm_y=None, d: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Two vectors at angle θ, the inputs on which every closed form of the papers is a function of (θ, ‖x‖, ‖y‖):
    x = norm_x e₁ and y = norm_y (cos θ e₁ + sin θ e₂) in ℝ^d (``norm_y`` defaults to ``norm_x``).

    ``theta``: a number or an array of shape (...) → ``x, y`` of shape (..., d), float64 numpy (θ is not restricted
    to [0, π]; :func:`angles` of the result is |θ| folded into [0, π]).
    """
    theta = _checks.finite_numpy("theta", theta)
    norm_x = _checks.real_number("norm_x", norm_x, low=0.0)
    norm_y = norm_x if norm_y is None else _checks.real_number("norm_y", norm_y, low=0.0)
    d = _checks.integer("d", d, low=2)
    x = np.zeros((*theta.shape, d))
    y = np.zeros((*theta.shape, d))
    x[..., 0] = norm_x
    y[..., 0], y[..., 1] = norm_y * np.cos(theta), norm_y * np.sin(theta)
    return x, y
