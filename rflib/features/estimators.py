"""Random-feature estimators as pairs of feature maps, ŜM(x, y) = Ψ₁(x)ᵀΨ₂(y), with their randomness frozen.

The classic maps of :mod:`rflib.features.classic` use the same map on both sides. Complex exponential and hybrid
estimators (HRF §2.2–2.3) need two different maps, so an :class:`Estimator` holds both. Every map returns
:class:`~rflib.features.base.Features` (a per-row log scale and a bounded body), and :meth:`Estimator.estimate`
adds the two log scales before exponentiating, so estimates are finite wherever the kernel itself is.

This module also holds the algebra on factored features that the hybrid construction (Lemma 2.3) needs:
concatenation with a common log scale, scaling by a signed constant and the row-wise Kronecker product.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from rflib import _checks
from rflib.features import classic
from rflib.features.base import Features

FeatureMap = Callable[[jax.Array], Features]


class Estimator(NamedTuple):
    """An estimator ŜM(x, y) = Ψ₁(x)ᵀΨ₂(y) of the softmax kernel (or of a λ-coefficient), frozen randomness.

    Attributes:
      left: Ψ₁, maps X: (n, d) → Features with F columns (applied to x, the queries).
      right: Ψ₂, maps Y: (k, d) → Features with the same F columns (applied to y, the keys).
    """

    left: FeatureMap
    right: FeatureMap

    def estimate(self, X, Y) -> jax.Array:
        """Ψ₁(X) Ψ₂(Y)ᵀ: (n, d), (k, d) → (n, k), computed as exp(ls₁ + ls₂) · (body₁ body₂ᵀ)."""
        X = _checks.points("X", X)
        return pair_products(self.left(X), self.right(_checks.points("Y", Y, dim=X.shape[1])))

    def paired(self, X, Y) -> jax.Array:
        """Ψ₁(x_i)ᵀΨ₂(y_i) for the rows of X and Y taken in pairs: (p, d), (p, d) → (p,)."""
        X = _checks.points("X", X)
        Y = _checks.points("Y", Y, dim=X.shape[1])
        if Y.shape != X.shape:
            raise ValueError(f"X and Y are taken in pairs and need the same shape, got {X.shape} and {Y.shape}")
        fx, fy = self.left(X), self.right(Y)
        return jnp.exp(fx.log_scale + fy.log_scale) * jnp.sum(fx.body * fy.body, axis=1)


def pair_products(fx: Features, fy: Features) -> jax.Array:
    """All inner products of two factored feature sets: (n, F), (k, F) → (n, k), scales added in log space."""
    return jnp.exp(fx.log_scale[:, None] + fy.log_scale[None, :]) * (fx.body @ fy.body.T)


def concat(blocks: Sequence[Features]) -> Features:
    """Column-wise concatenation (the paper's "⋆") of feature blocks of the same rows.

    Each block is rescaled to the row-wise maximum log scale, which cancels exactly: exp(ls) · body is unchanged
    for every block, and the bodies stay bounded by the largest block's bound.
    """
    log_scale = jnp.max(jnp.stack([b.log_scale for b in blocks]), axis=0)
    bodies = [jnp.exp(b.log_scale - log_scale)[:, None] * b.body for b in blocks]
    return Features(log_scale, jnp.concatenate(bodies, axis=1))


def scale(features: Features, c: float) -> Features:
    """c · φ for a real constant c ≠ 0 (sign into the body, |c| into the log scale)."""
    sign = 1.0 if c > 0 else -1.0
    return Features(features.log_scale + jnp.log(abs(c)), sign * features.body)


def kron(a: Features, b: Features) -> Features:
    """Row-wise Kronecker product a ⊗ b: (n, F), (n, G) → (n, F·G), with (a⊗b)ᵀ(a'⊗b') = (aᵀa')(bᵀb')."""
    body = (a.body[:, :, None] * b.body[:, None, :]).reshape(a.body.shape[0], -1)
    return Features(a.log_scale + b.log_scale, body)


def trig_estimator(W) -> Estimator:
    """The trigonometric estimator ŜM^trig_m (HRF eq 2) with projections W: (m, d)."""
    return Estimator(partial(classic.trig_features, W), partial(classic.trig_features, W))


def positive_estimator(W) -> Estimator:
    """The non-antithetic positive estimator (FAVOR+, Performer Lemma 1; = CE with A = I) with W: (m, d)."""
    return Estimator(partial(classic.positive_features, W), partial(classic.positive_features, W))


def hyperbolic_estimator(W) -> Estimator:
    """The antithetic positive estimator ŜM^{++}_m (HRF eq 3, "FAVOR+" in the HRF paper) with W: (m, d)."""
    return Estimator(partial(classic.hyperbolic_features, W), partial(classic.hyperbolic_features, W))
