"""Hybrid random features (HRF; Choromanski et al., ICLR 2022, §2.2–2.4 and Apps D, F, H).

An HRF estimator mixes p + 1 unbiased base estimators ŜM^k with data-dependent weights (eq 8):

    ŜM^hyb(x, y) = Σ_{k≤p} λ̂_k(x, y) ŜM^k(x, y) + (1 − Σ_{k≤p} λ̂_k(x, y)) ŜM^{p+1}(x, y),

where each λ̂_k = a_k + ρ₁ᵏ(x)ᵀρ₂ᵏ(y) is itself a random-feature estimate of a kernel λ_k, drawn independently of
the bases (eq 9–10). It is unbiased whenever the bases are, and it is again a dot product Ψ₁(x)ᵀΨ₂(y)
(Lemma 2.3, eq 11). The paper writes Ψ with imaginary units (√ of negative constants, i·ρ blocks); every imaginary
factor appears identically on both sides, so :func:`hybrid_estimator` moves each i·i = −1 into a sign on the right
map and builds real, asymmetric maps:

    Ψ₁ = ⋆_k √|a_k| φ₁ᵏ ⋆ ⋆_k ρ₁ᵏ⊗φ₁ᵏ ⋆ √|1−Σa| φ₁^{p+1} ⋆ ⋆_k ρ₁ᵏ⊗φ₁^{p+1}
    Ψ₂ = ⋆_k s(a_k)√|a_k| φ₂ᵏ ⋆ ⋆_k ρ₂ᵏ⊗φ₂ᵏ ⋆ s(1−Σa)√|1−Σa| φ₂^{p+1} ⋆ ⋆_k (−ρ₂ᵏ)⊗φ₂^{p+1}

with s = sign. Each block is computed from the base and λ features, so building Ψ for n points costs
O(n(Σ m_k d + Σ n_k d + Σ m_k n_k)), not the O(n·m·n_λ·d) of a regular map with as many features (App D.4, eq 106).

Notation follows the paper: m projections ω per base estimator, n projections τ for λ.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from rflib import _checks, fastmath
from rflib.features import classic
from rflib.features.base import Estimator, Features, concat, kron, scale
from rflib.features.classic import hyperbolic_estimator, trig_estimator


class LambdaEstimator(NamedTuple):
    """λ̂(x, y) = offset + ρ₁(x)ᵀρ₂(y), a linearised estimate of a mixing coefficient λ(x, y) (HRF eq 9–10).

    Attributes:
      offset: the constant a.
      features: the pair (ρ₁, ρ₂) as an :class:`Estimator` (real maps; the paper's imaginary units are already
        folded into the sign of ρ₂).
    """

    offset: float
    features: Estimator

    def estimate(self, X, Y) -> jax.Array:
        """λ̂ for every pair: (n, d), (k, d) → (n, k). Raises ValueError for an offset that is not a finite real
        number (a NaN offset made every estimate NaN; "0.5" was cast)."""
        _checks.real_number("offset", self.offset)
        return self.offset + self.features.estimate(X, Y)


# --- λ-coefficient estimators -------------------------------------------------------------------------------------


def _sign_side(T, sign, X):
    X = _checks.points("X", X)
    T = _checks.projection_matrix("T", T, X.shape[1])
    n = T.shape[0]
    return Features(jnp.full(X.shape[0], -0.5 * math.log(2 * n), dtype=X.dtype), sign * jnp.sign(X @ T.T))


def angular_lambda(T) -> LambdaEstimator:
    """λ̂_n(x, y) = 1/2 − (1/(2n)) Σ_i sgn(τ_iᵀx) sgn(τ_iᵀy), an unbiased estimate of λ = θ_{x,y}/π (HRF eq 19).

    Equals the fraction of the n projections τ_i (rows of T: (n, d)) that separate x and y, so n·λ̂ ~
    Binomial(n, θ/π) for iid Gaussian τ (Lemma 3.2). Paper form: a = 1/2, ρ(u) = (i/√(2n)) sgn(Tu).
    """
    T = _checks.finite_array("T", T, 2)
    return LambdaEstimator(0.5, Estimator(partial(_sign_side, T, 1.0), partial(_sign_side, T, -1.0)))


def _fourier_side(T, sigma, log_norm, sign, X):
    X = _checks.points("X", X)
    T = _checks.projection_matrix("T", T, X.shape[1])
    proj = sigma * (X @ T.T)
    body = sign * fastmath.sincos_columns(proj)
    return Features(jnp.full(X.shape[0], log_norm, dtype=X.dtype), body)


def normalized_gaussian_lambda(T, sigma: float, r: float) -> LambdaEstimator:
    """λ̂ = 1/ρ − (1/(nρ)) Σ_i cos(σ τ_iᵀ(x − y)) for λ(x, y) = (1 − exp(−σ²‖x − y‖²/2))/ρ, ρ = 1 − e^{−2σ²r²}
    (HRF App F, eqs 67–70, for inputs of norm r: λ = 0 at θ = 0 and λ = 1 at θ = π).

    Eq 70 as printed omits σ inside sin/cos; the unbiased estimator needs it (ERRATA.md HRF-E5).
    λ̂ ∈ [0, 2/ρ] is not confined to [0, 1]. T: (n, d).
    """
    sigma = _checks.positive_float("sigma", sigma)
    r = _checks.positive_float("r", r)
    rho = -math.expm1(-2.0 * sigma**2 * r**2)
    log_norm = -0.5 * math.log(jnp.shape(T)[0] * rho)
    left = partial(_fourier_side, T, sigma, log_norm, 1.0)
    right = partial(_fourier_side, T, sigma, log_norm, -1.0)
    return LambdaEstimator(1.0 / rho, Estimator(left, right))


def _gaussian_lambda_side(T, c, M, kind, X):
    X = _checks.points("X", X)
    U = X if M is None else -(X @ M.T)
    feature_map = {"positive": classic.positive_features, "trig": classic.trig_features}[kind]
    base = feature_map(T, U / c)
    return Features(base.log_scale - 0.5 * jnp.sum(U**2, axis=1) / c**2, base.body)


def gaussian_lambda(T, c: float, M=None, *, kind: str = "positive") -> LambdaEstimator:
    """λ̂ estimating λ(x, y) = exp(−‖x + M y‖²/(2c²)) with a_k = 0 (HRF §2.4, eq 20); M defaults to I.

    ρ₁(x) = e^{−‖x‖²/(2c²)} φ(x/c) and ρ₂(y) = e^{−‖My‖²/(2c²)} φ(−My/c), φ the positive or trigonometric
    softmax-kernel map with projections T: (n, d). λ ≈ 1 where x ≈ −My.
    """
    c = _checks.positive_float("c", c)
    if kind not in ("positive", "trig"):
        raise ValueError(f"kind must be 'positive' or 'trig', got {kind!r}")
    T = _checks.finite_array("T", T, 2)  # checked here under its own name (it was reported as W at the first call)
    d = T.shape[1]
    M = jnp.eye(d, dtype=T.dtype) if M is None else _checks.finite_array("M", M, 2)  # M = I: exp(−‖x + y‖²/(2c²))
    if M.shape != (d, d):  # a bool M was cast by X @ Mᵀ, a NaN one reported as "X contains NaN"
        raise ValueError(f"M must be ({d}, {d}) to act on the {d}-dimensional inputs of T, got shape {M.shape}")
    return LambdaEstimator(
        0.0, Estimator(partial(_gaussian_lambda_side, T, c, None, kind), partial(_gaussian_lambda_side, T, c, M, kind))
    )


# --- the general construction (Lemma 2.3) ------------------------------------------------------------------------


def _check_mixture(bases, lambdas) -> list[float]:
    """Check an HRF's p + 1 bases and p λ-coefficients; return the λ offsets as floats (each a finite real number)."""
    if len(bases) != len(lambdas) + 1:
        raise ValueError(
            f"an HRF needs p + 1 base estimators for p λ-coefficients, got {len(bases)} and {len(lambdas)}"
        )
    return [_checks.real_number(f"lambdas[{i}].offset", lam.offset) for i, lam in enumerate(lambdas)]


def _signed_root(c: float, right: bool) -> float:
    """√|c| on the left map and sign(c)·√|c| on the right one, so that their product is c."""
    root = math.sqrt(abs(c))
    return math.copysign(root, c) if right else root


def _hybrid_side(bases_side, lambdas_side, offsets, right, X):
    p = len(lambdas_side)
    rest = 1.0 - sum(offsets)
    base_feats = [side(X) for side in bases_side]
    lam_feats = [side(X) for side in lambdas_side]
    blocks = [scale(base_feats[k], _signed_root(offsets[k], right)) for k in range(p) if offsets[k] != 0.0]
    blocks += [kron(lam_feats[k], base_feats[k]) for k in range(p)]
    if rest != 0.0:
        blocks.append(scale(base_feats[p], _signed_root(rest, right)))
    sign = -1.0 if right else 1.0
    blocks += [kron(Features(lam.log_scale, sign * lam.body), base_feats[p]) for lam in lam_feats]
    return concat(blocks)


def hybrid_estimator(bases: Sequence[Estimator], lambdas: Sequence[LambdaEstimator]) -> Estimator:
    """The HRF estimator of eq 8 as real feature maps Ψ₁, Ψ₂ (Lemma 2.3, eq 11; module docstring).

    Args:
      bases: p + 1 base estimators ŜM¹ … ŜM^{p+1} (e.g. :func:`~rflib.features.base.hyperbolic_estimator`).
      lambdas: p λ-coefficient estimators, drawn independently of the bases.

    ``hybrid_estimator(...).estimate(X, Y)`` equals :func:`hybrid_direct` to round-off. Its ``paired`` evaluates
    eq 8 term by term for each pair (:func:`hybrid_paired_direct`) instead of building the Kronecker features: the
    same value by Lemma 2.3, for O(Σ m_k + Σ n_k) columns per pair instead of O(Σ m_k n_k).
    """
    offsets = tuple(_check_mixture(bases, lambdas))
    left = partial(
        _hybrid_side,
        tuple(b.query_features for b in bases),
        tuple(lam.features.query_features for lam in lambdas),
        offsets,
        False,
    )
    right = partial(
        _hybrid_side,
        tuple(b.key_features for b in bases),
        tuple(lam.features.key_features for lam in lambdas),
        offsets,
        True,
    )
    return Estimator(left, right, partial(hybrid_paired_direct, tuple(bases), tuple(lambdas)))


def hybrid_direct(bases: Sequence[Estimator], lambdas: Sequence[LambdaEstimator], X, Y) -> jax.Array:
    """Eq 8 evaluated term by term: Σ_k λ̂_k ŜM^k + (1 − Σ_k λ̂_k) ŜM^{p+1}.  (n, d), (k, d) → (n, k)."""
    _check_mixture(bases, lambdas)
    lam = [lam_k.estimate(X, Y) for lam_k in lambdas]
    est = sum(lam_k * base.estimate(X, Y) for lam_k, base in zip(lam, bases, strict=False))
    return est + (1.0 - sum(lam)) * bases[-1].estimate(X, Y)


def hybrid_paired_direct(
    bases: Sequence[Estimator], lambdas: Sequence[LambdaEstimator], X, Y
) -> tuple[jax.Array, jax.Array]:
    """Eq 8 term by term for the rows of X and Y taken in pairs, in factored form: (p, d), (p, d) → (log_scale, dot),
    both (p,), with the estimate exp(log_scale)·dot (:meth:`~rflib.features.base.Estimator.paired_factored`).

    With ρ_k = ρ₁ᵏ(x_i)ᵀρ₂ᵏ(y_i) and ŜMᵏ(x_i, y_i) the paired products of their own features, the terms are
    a_k ŜMᵏ, ρ_k ŜMᵏ, (1 − Σa) ŜM^{p+1} and −ρ_k ŜM^{p+1} — the blocks of Lemma 2.3's feature form, whose value they
    give without forming a Kronecker block. Each term keeps its log scale and the terms are added at the largest one
    per pair (the stabiliser cancels exactly), as :func:`~rflib.features.base.concat` does for the features: a base
    whose scale alone overflows (a = 0, e.g. :func:`gaussian_lambda`) stays finite where the estimate is.
    """
    offsets = _check_mixture(bases, lambdas)
    base_terms = [base.paired_factored(X, Y) for base in bases]
    lam_terms = [lam.features.paired_factored(X, Y) for lam in lambdas]
    terms = []  # (log scale, factor) pairs whose exp(log scale)·factor sum to the estimate
    for (log_base, dot_base), (log_lam, dot_lam), a in zip(base_terms, lam_terms, offsets, strict=False):
        if a != 0.0:
            terms.append((log_base, a * dot_base))
        terms.append((log_lam + log_base, dot_lam * dot_base))
    log_last, dot_last = base_terms[-1]
    if (rest := 1.0 - sum(offsets)) != 0.0:
        terms.append((log_last, rest * dot_last))
    terms += [(log_lam + log_last, -dot_lam * dot_last) for log_lam, dot_lam in lam_terms]
    log_scale = jnp.max(jnp.stack([log for log, _ in terms]), axis=0)
    return log_scale, sum(jnp.exp(log - log_scale) * factor for log, factor in terms)


# --- the paper's named hybrids ------------------------------------------------------------------------------------


def bipolar_hybrid_estimator(W_pos, W_trig, lam: LambdaEstimator) -> Estimator:
    """λ̂ ŜM^{++}_m + (1 − λ̂) ŜM^trig_m (HRF eq 12): antithetic positive (FAVOR+) and trigonometric bases.

    Pass the same matrix as ``W_pos`` and ``W_trig`` for variant II of Theorem 3.1 (shared projections), two
    independent ones for variant I.
    """
    W_pos = _checks.finite_array("W_pos", W_pos, 2)
    W_trig = _checks.projection_matrix("W_trig", W_trig, W_pos.shape[1])
    if not isinstance(lam, LambdaEstimator):
        raise ValueError(f"lam must be a LambdaEstimator (e.g. angular_lambda(T)), got {type(lam).__name__}")
    return hybrid_estimator([hyperbolic_estimator(W_pos), trig_estimator(W_trig)], [lam])


def angular_hybrid_estimator(W_pos, W_trig, T) -> Estimator:
    """The angular hybrid: bipolar hybrid with λ = θ/π estimated by n sign features (HRF eq 19, App D).

    W_pos, W_trig: (m, d); T: (n, d). Feature dimension 4m(n + 1). Its variance vanishes at θ = 0 and θ = π for
    inputs of equal norm (Theorem D.1).
    """
    W_pos = _checks.finite_array("W_pos", W_pos, 2)
    return bipolar_hybrid_estimator(W_pos, W_trig, angular_lambda(_checks.projection_matrix("T", T, W_pos.shape[1])))


def normalized_gaussian_hybrid_estimator(W_pos, W_trig, T, sigma: float, r: float) -> Estimator:
    """Bipolar hybrid with the normalised Gaussian λ of App F (:func:`normalized_gaussian_lambda`), inputs of norm r."""
    return bipolar_hybrid_estimator(W_pos, W_trig, normalized_gaussian_lambda(T, sigma, r))


# --- cost accounting (App D.4 / Sec L) ----------------------------------------------------------------------------


def angular_hybrid_cost(m: int, n: int, d: int, *, shared: bool = False) -> dict[str, int]:
    """Feature dimension and multiply-adds per input vector of the angular-hybrid map (App D.4).

    Projections cost d per row of W_pos, W_trig (one matrix if ``shared``) and T; the 2 n·2m Kronecker blocks cost
    one product each. Returns ``{"features": 4m(n+1), "projection_flops": …, "kron_flops": …, "total_flops": …}``.
    """
    m, n, d = (_checks.positive_int(k, v) for k, v in (("m", m), ("n", n), ("d", d)))
    projections = d * ((1 if shared else 2) * m + n)
    kron_flops = 2 * (2 * m) * n
    return {
        "features": 4 * m * (n + 1),
        "projection_flops": projections,
        "kron_flops": kron_flops,
        "total_flops": projections + kron_flops,
    }


def regular_cost(n_features: int, d: int) -> dict[str, int]:
    """The same accounting for a regular trigonometric/hyperbolic map with ``n_features`` columns (2 per ω)."""
    n_features = _checks.positive_int("n_features", n_features)
    d = _checks.positive_int("d", d)
    projections = d * math.ceil(n_features / 2)
    return {"features": n_features, "projection_flops": projections, "kron_flops": 0, "total_flops": projections}


def shared_angular_hybrid_estimator(W_pos, T) -> Estimator:
    """Variant II of HRF Theorem 3.1: the angular hybrid with the same projections in both bases,
    ``angular_hybrid_estimator(W_pos, W_pos, T)``. W_pos: (m, d); T: (n, d). Feature dimension 4m(n + 1).

    A module-level function (not a lambda) so that :func:`rflib.experiments.simulation.pointwise_estimates` reuses
    its compiled simulator across calls. Arguments are checked by :func:`angular_hybrid_estimator` (W_pos named as
    ``W_pos``).
    """
    return angular_hybrid_estimator(W_pos, W_pos, T)
