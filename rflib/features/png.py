"""Pointwise nonlinear Gaussian (PNG) random features (KAMA-NNs Definition 2, §4): φ(x) = f(Wx)/√m.

K_f(x, y) = E_{g ~ N(0, I_d)}[f(gᵀx) f(gᵀy)]  (eq 1) is estimated by K̂ = (1/m) Σ_i f(w_iᵀx) f(w_iᵀy)  (eq 2), an
inner product of the features f(Wx)/√m. The rows w_i come from any law of :func:`rflib.projections.sample`; the
KAMA-NNs paper compares four: ``"iid"`` (its URN), ``"orthogonal"`` (ORN), ``"givens"`` (KAMA) and ``"horn"``
(Hadamard ORN). The exact kernels and the moments behind the orthogonal gain are in :mod:`rflib.moments.png`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from rflib import _checks
from rflib.features.base import Estimator, Features

ACTIVATIONS: dict[str, Callable] = {
    "sgn": jnp.sign,
    "heaviside": lambda u: (u > 0).astype(jnp.result_type(u, float)),
    "relu": jax.nn.relu,
    "identity": lambda u: u,
    "square": lambda u: u**2,
    "he2": lambda u: u**2 - 1,
    "cos": jnp.cos,
    "sin": jnp.sin,
    "erf": jsp.erf,
    "exp": jnp.exp,
    "tanh": jnp.tanh,
}


LAWS = {"urn": "iid", "orn": "orthogonal", "kama": "givens", "horn": "horn"}
"""The KAMA-NNs paper's projection laws (URN, ORN, KAMA, HORN) → their names in :func:`rflib.projections.sample`."""


def activation(name: str) -> Callable:
    """The activation f called ``name`` (one of :data:`ACTIVATIONS`), vectorised over arrays."""
    return ACTIVATIONS[_checks.one_of("name", name, sorted(ACTIVATIONS))]


def estimates(name: str, W, x, y) -> jax.Array:
    """K̂ = (1/m) Σ_i f(w_iᵀx) f(w_iᵀy) (eq 2) for every matrix in W: (…, m, d).  Returns (…,)."""
    f = activation(name)
    x = _checks.finite_array("x", x, 1)
    y = _checks.finite_array("y", y, 1)
    W = _checks.vectors("W", W, dim=x.shape[0])
    if W.ndim < 2 or y.shape != x.shape:
        raise ValueError(f"need W: (…, m, d) and x, y: (d,) with one d, got {W.shape}, {x.shape}, {y.shape}")
    return jnp.mean(f(W @ x) * f(W @ y), axis=-1)


def pair_estimates(name: str, W, X, Y) -> jax.Array:
    """K̂ for many pairs (x_p, y_p) and many matrices at once.  W: (draws, m, d), X, Y: (P, d) → (draws, P)."""
    f = activation(name)
    W = _checks.finite_array("W", W, 3)
    X = _checks.points("X", X, dim=W.shape[-1])
    Y = _checks.points("Y", Y, dim=W.shape[-1])
    if X.shape != Y.shape:
        raise ValueError(f"need W: (draws, m, d) and X, Y: (P, d) with one d, got {W.shape}, {X.shape}, {Y.shape}")
    return jnp.mean(f(W @ X.T) * f(W @ Y.T), axis=-2)


def gram_estimate(name: str, W, X) -> jax.Array:
    """K̂(X) = Φ Φᵀ / m with Φ[n, i] = f(w_iᵀ x_n): the estimated kernel matrix.  W: (m, d), X: (N, d) → (N, N)."""
    f = activation(name)
    X = _checks.points("X", X)
    phi = f(X @ _checks.projection_matrix("W", W, X.shape[1]).T)
    return phi @ phi.T / phi.shape[1]


def png_features(name: str, W, X) -> Features:
    """φ(X) = f(X Wᵀ)/√m in factored form (log scale −½ log m, body f(XWᵀ)).  W: (m, d), X: (n, d) → body (n, m).

    ``png_features(name, W, X).dense() @ png_features(name, W, Y).dense().T`` is eq 2's K̂ for every pair.
    """
    f = activation(name)
    X = _checks.points("X", X)
    W = _checks.projection_matrix("W", W, X.shape[1])
    body = f(X @ W.T)
    return Features(jnp.full(X.shape[:1], -0.5 * math.log(W.shape[0]), body.dtype), body)


def estimator(name: str, W) -> Estimator:
    """The PNG estimator K̂_f (eq 2) of activation ``name`` with projections W: (m, d), as an :class:`Estimator`."""
    activation(name)
    return Estimator(partial(png_features, name, W), partial(png_features, name, W))
