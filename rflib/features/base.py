"""The one estimator interface of rflib: feature maps in factored log form, and estimators as pairs of them.

**Features.** A random feature map returns φ(X) = exp(log_scale)[:, None] · body.

Softmax-kernel features carry factors like exp(±‖x‖²/2) and exp(ωᵀx) that overflow long before the estimate
itself does. Every map in ``rflib.features`` therefore returns its per-row log scale separately from a bounded
body. Attention (``rflib.attention``) uses this split to stabilise exactly: a per-query scale cancels in the row
normalisation, and one global scale over all keys cancels too.

Positive maps (FAVOR+, hyperbolic, every DERF) also return ``log_body = log(body)``, computed before the exponential so
that it stays exact where ``body`` underflows to 0 (at large norms most of a row does, in float32). Attention then
stabilises per feature instead of per row, which keeps every output finite whatever the norms. They also return the
factors their log features are built from (:class:`LinearLogits`: a product of the points with a projection, plus a
per-column and a per-row term), so that attention can fold its per-feature stabiliser into that one product.

**Estimators.** Every family of every paper — classic (trig, positive, hyperbolic), complex exponential, hybrid
(HRF), dense exponential (FAVOR#: GERF, ADERF, SDERF, SADERF) and PNG (KAMA-NNs) — is an :class:`Estimator`: a
query-side map Ψ₁ and a key-side map Ψ₂ with the randomness frozen, K̂(x, y) = Ψ₁(x)ᵀΨ₂(y). Attention, kernel
classification and the experiments take any of them. The algebra on factored features that the hybrid construction
(HRF Lemma 2.3) needs is here too: concatenation with a common log scale, scaling by a signed constant and the
row-wise Kronecker product.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp

from rflib import _checks


class LinearLogits(NamedTuple):
    """The log features of a positive map as its construction gives them, before any stabiliser:
    log φ(x_n)_f = row_log_scale_n + points_n·projections_f + column_bias_f.

    Attention adds its per-feature stabiliser to ``column_bias`` and forms the sum as one product
    [points, 1]·[projectionsᵀ; column_bias + stabiliser]: on XLA:CPU, adding the stabiliser to an (n, F) array of log
    features instead materialised its broadcast: FAVOR+'s forward took 64.9 ms instead of 27.6 ms at L = 16 384.

    Attributes:
      row_log_scale: (n,) the per-row term.
      points: (n, p) the rows the projection is applied to (the inputs, or a linear transform of them).
      projections: (F, p) one row per feature (FAVOR+: ω_f; hyperbolic: ±ω_f; a DERF: B ω_f).
      column_bias: (F,) the per-feature term (zero for FAVOR+ and hyperbolic; ω_fᵀAω_f for a DERF).
    """

    row_log_scale: jax.Array
    points: jax.Array
    projections: jax.Array
    column_bias: jax.Array

    def logits(self) -> jax.Array:
        """points·projectionsᵀ + column_bias: (..., n, F), the log features without the per-row term (leading batch
        axes, if any, shared by every field)."""
        return self.points @ jnp.swapaxes(self.projections, -1, -2) + self.column_bias[..., None, :]


class Features(NamedTuple):
    """Random features of n points in factored form.

    Attributes:
      log_scale: (n,) per-row log of the common positive factor.
      body: (n, F) the remaining factor; |body| ≤ 1 for positive maps, bounded by 1 for trigonometric ones.
      log_body: (n, F) log(body) for positive maps (≤ 0, finite where body underflows); None for signed maps.
      linear_logits: for positive maps built by :func:`positive_from_projection`, the factors of their log features
        (log_scale + log_body = row_log_scale + logits(), up to round-off); None otherwise.
    """

    log_scale: jax.Array
    body: jax.Array
    log_body: jax.Array | None = None
    linear_logits: LinearLogits | None = None

    def dense(self) -> jax.Array:
        """φ(X): (n, F), the features themselves, so that ``phi(X) @ phi(Y).T`` is the kernel estimate."""
        return jnp.exp(self.log_scale)[:, None] * self.body


def positive_from_projection(row_log_scale, points, projections, column_bias=None) -> Features:
    """Positive features φ = e^{row_log_scale} · e^{points·projectionsᵀ + column_bias} in factored form, stabilised per
    row: row_log_scale (n,), points (n, p), projections (F, p), column_bias (F,) or None (zero) → (n, F) features.

    The row maximum c of the logits moves from the body to the log scale (log body = logits − c ≤ 0), so φ does not
    depend on it: it carries no gradient (``stop_gradient``; reverse mode would otherwise differentiate the maximum,
    an exact zero that costs a pass over the features). The factors are kept (:class:`LinearLogits`). The one
    constructor of every positive map (FAVOR+, hyperbolic, every DERF).
    """
    logits = points @ projections.T
    if column_bias is None:
        column_bias = jnp.zeros(projections.shape[0], logits.dtype)
    else:
        logits = logits + column_bias
    row_max = jax.lax.stop_gradient(jnp.max(logits, axis=1))
    log_body = logits - row_max[:, None]
    factors = LinearLogits(row_log_scale, points, projections, column_bias)
    return Features(row_log_scale + row_max, jnp.exp(log_body), log_body, factors)


FeatureMap = Callable[[jax.Array], Features]

#: Why an estimate from finite inputs is not finite: exp(log scale) overflows the dtype, and times a bounded body
#: gives inf, or NaN where the bodies' product underflowed to 0 (positive features of x = 10, y = −10 with W = ±10
#: in float32).
SCALE_OVERFLOW = (
    "the features' common factor exp(log scale) overflowed (at these norms of X and Y the kernel value, or a factor of "
    "it, is out of the dtype's range): use float64, rescale X and Y, or work with the factored features "
    "(query_features / key_features, paired_factored) in log space"
)


class Estimator(NamedTuple):
    """An estimator K̂(x, y) = Ψ₁(x)ᵀΨ₂(y) of a kernel (the softmax kernel, a PNG kernel, a λ-coefficient), with its
    randomness frozen. Build one with a family's factory (``classic.positive_estimator(W)``,
    ``dense_exp.estimator(params, W)``, ``png.estimator("relu", W)``, …) from a projection drawn by
    :func:`rflib.projections.sample`.

    Attributes:
      query_features: Ψ₁, maps X: (n, d) → Features with F columns (applied to x, the queries).
      key_features: Ψ₂, maps Y: (k, d) → Features with the same F columns (applied to y, the keys).
      paired_direct: optional (p, d), (p, d) → (log_scale, dot), both (p,), with Ψ₁(x_i)ᵀΨ₂(y_i) =
        exp(log_scale_i)·dot_i, evaluated without building the features: for estimators whose features are much wider
        than their cost to evaluate (HRF's Kronecker blocks: the angular hybrid's 4m(n + 1) columns from O(m + n)
        projections). Equal to the feature form up to round-off; :meth:`paired_factored` and :meth:`paired` use it.
        A copy made with ``_replace`` of a feature map must replace or drop it as well.
    """

    query_features: FeatureMap
    key_features: FeatureMap
    paired_direct: Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array]] | None = None

    def estimate(self, X, Y) -> jax.Array:
        """Ψ₁(X) Ψ₂(Y)ᵀ: (n, d), (k, d) → (n, k), computed as exp(ls₁ + ls₂) · (body₁ body₂ᵀ).

        Raises:
          ValueError: bad X or Y, or (eager calls only) an estimate that is not finite (:data:`SCALE_OVERFLOW`).
        """
        X = _checks.points("X", X)
        estimate = pair_products(self.query_features(X), self.key_features(_checks.points("Y", Y, dim=X.shape[1])))
        return _checks.finite_result("Estimator.estimate", estimate, SCALE_OVERFLOW)

    def paired_factored(self, X, Y) -> tuple[jax.Array, jax.Array]:
        """Ψ₁(x_i)ᵀΨ₂(y_i) = exp(log_scale_i)·dot_i for the rows of X and Y taken in pairs, as (log_scale, dot):
        (p, d), (p, d) → (p,), (p,). The form that sums of estimators (the hybrids) combine in log space; by
        ``paired_direct`` where the estimator has one."""
        X = _checks.points("X", X)
        Y = _checks.points("Y", Y, dim=X.shape[1])
        if Y.shape != X.shape:
            raise ValueError(f"X and Y are taken in pairs and need the same shape, got {X.shape} and {Y.shape}")
        if self.paired_direct is not None:
            return self.paired_direct(X, Y)
        fx, fy = self.query_features(X), self.key_features(Y)
        return fx.log_scale + fy.log_scale, jnp.sum(fx.body * fy.body, axis=1)

    def paired(self, X, Y) -> jax.Array:
        """Ψ₁(x_i)ᵀΨ₂(y_i) for the rows of X and Y taken in pairs: (p, d), (p, d) → (p,). Raises as :meth:`estimate`."""
        log_scale, dot = self.paired_factored(X, Y)
        return _checks.finite_result("Estimator.paired", jnp.exp(log_scale) * dot, SCALE_OVERFLOW)


def pair_products(fx: Features, fy: Features) -> jax.Array:
    """All inner products of two factored feature sets: (n, F), (k, F) → (n, k), scales added in log space. Unchecked
    (the building block of compiled code): where the common scale overflows the result is inf or NaN;
    :meth:`Estimator.estimate` refuses such a result in an eager call."""
    return jnp.exp(fx.log_scale[:, None] + fy.log_scale[None, :]) * (fx.body @ fy.body.T)


def side_by_side(*bodies) -> jax.Array:
    """``jnp.concatenate(bodies, axis=1)``: (n, F₁), (n, F₂), … → (n, F₁ + F₂ + …), the same array.

    Blocks of one shape are stacked on a new middle axis and reshaped instead: XLA:CPU fuses that into the producers'
    vectorised loop, where a concatenation along the last axis is a slower gather (sin and cos blocks computed in the
    same jit at 4 096 × 2·256 in float32: 1.2 ms instead of 1.8 ms).
    """
    if len({b.shape for b in bodies}) == 1 and bodies[0].ndim == 2:
        n, width = bodies[0].shape
        return jnp.stack(bodies, axis=1).reshape(n, len(bodies) * width)
    return jnp.concatenate(bodies, axis=1)


def concat(blocks: Sequence[Features]) -> Features:
    """Column-wise concatenation (the paper's "⋆") of feature blocks of the same rows.

    Each block is rescaled to the row-wise maximum log scale, which cancels exactly: exp(ls) · body is unchanged
    for every block, and the bodies stay bounded by the largest block's bound.
    """
    log_scale = jnp.max(jnp.stack([b.log_scale for b in blocks]), axis=0)
    bodies = [jnp.exp(b.log_scale - log_scale)[:, None] * b.body for b in blocks]
    return Features(log_scale, side_by_side(*bodies))


def scale(features: Features, c: float) -> Features:
    """c · φ for a real constant c ≠ 0 (sign into the body, |c| into the log scale)."""
    sign = 1.0 if c > 0 else -1.0
    return Features(features.log_scale + jnp.log(abs(c)), sign * features.body)


def kron(a: Features, b: Features) -> Features:
    """Row-wise Kronecker product a ⊗ b: (n, F), (n, G) → (n, F·G), with (a⊗b)ᵀ(a'⊗b') = (aᵀa')(bᵀb')."""
    body = (a.body[:, :, None] * b.body[:, None, :]).reshape(a.body.shape[0], -1)
    return Features(a.log_scale + b.log_scale, body)
