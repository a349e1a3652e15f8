"""Complex exponential (CE) estimators of the softmax kernel (HRF §2.3, Lemma 2.4, eqs 13–18).

Lemma 2.4: for ω ~ N(0, I_d) and any z ∈ ℂ^d, E exp(ωᵀz) = exp(z²/2) with the *bilinear* square z² = Σ z_i²
(no conjugation). With Ψ_M(u) = m^{-1/2} exp(−(Mu)²/2) (exp(ω_jᵀMu))_j and an invertible A ∈ ℂ^{d×d},

    ŜM^cexp_m(x, y) = Ψ_A(x)ᵀ Ψ_{A^{-T}}(y)       (eq 16, same ω_j on both sides, bilinear product)

is unbiased for SM(x, y) = exp(xᵀy) because (Ax)ᵀ(A^{-T}y) = xᵀy. Its real part is the real estimator; A = iI
gives the trigonometric estimator (eq 2) and A = I the non-antithetic positive one.

rflib never forms complex features in an estimate: writing Ψ = e^{R}(cos I + i sin I) with R, I real,
Re(Ψ_A(x)ᵀΨ_{A^{-T}}(y)) = [e^R cos I, e^R sin I](x) · [e^R cos I, −e^R sin I](y), a real asymmetric pair of maps (our
"real implementation trick", not in the paper: i·i = −1 becomes a sign on one side). :func:`ce_features` gives the
complex features themselves, for checking the bilinear identities.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from rflib import _checks
from rflib.features import classic
from rflib.features.base import Estimator, Features, side_by_side


def _square_matrix(name: str, A, d: int) -> jax.Array:
    """``A`` checked (:func:`rflib._checks.square_matrix`, invertible: CE estimators need A^(-T)), as complex."""
    arr = _checks.square_matrix(name, A, d, invertible=True)
    return arr if jnp.issubdtype(arr.dtype, jnp.complexfloating) else arr.astype(jnp.result_type(1j))


def _log_ce(W, X, M):
    """Complex log of Ψ_M(X): (n, m). Entry (i, j) = −(M x_i)²/2 + ω_jᵀ M x_i − ½ log m (bilinear square)."""
    MX = X.astype(M.dtype) @ M.T
    return -0.5 * jnp.sum(MX * MX, axis=1, keepdims=True) + MX @ W.T.astype(M.dtype) - 0.5 * jnp.log(W.shape[0])


def ce_features(W, X, M) -> jax.Array:
    """Complex features Ψ^m_M(X) = m^{-1/2} exp(−(Mx)²/2) (exp(ω_jᵀMx))_j (HRF §2.3).

    Shapes: W (m, d) real, X (n, d) real, M (d, d) complex → (n, m) complex. Use with the bilinear product
    ``ce_features(W, X, A) @ ce_features(W, Y, inv(A).T).T`` (never ``vdot``, which conjugates).
    """
    X = _checks.points("X", X)
    W = _checks.projection_matrix("W", W, X.shape[1])
    M = _checks.square_matrix("M", M, X.shape[1])
    return jnp.exp(_log_ce(W, X, M.astype(jnp.result_type(M.dtype, 1j))))


@partial(jax.jit, static_argnums=3)
def _real_ce(W, X, M, conjugate_sign):
    log = _log_ce(W, X, M)
    re, im = jnp.real(log), jnp.imag(log)
    row_max = jnp.max(re, axis=1)
    amp = jnp.exp(re - row_max[:, None])
    return Features(row_max, side_by_side(amp * jnp.cos(im), conjugate_sign * amp * jnp.sin(im)))


def _real_ce_side(W, M, sign, X):
    X = _checks.points("X", X)
    W = _checks.projection_matrix("W", W, X.shape[1])
    return _real_ce(W, X, M, sign)


def complex_exponential_estimator(W, A) -> Estimator:
    """Re ŜM^cexp_m with projections W: (m, d) and an invertible A: (d, d) (real or complex), eq 16.

    Real asymmetric maps of 2m columns each: query(x) = [e^R cos I, e^R sin I] of Ψ_A(x), key(y) =
    [e^R cos I, −e^R sin I] of Ψ_{A^{-T}}(y), so that query(x)ᵀkey(y) = Re(Ψ_A(x)ᵀΨ_{A^{-T}}(y)). The variance
    vanishes iff Ax + A^{-T}y = 0 (eq 17); the MSE is :func:`rflib.moments.complex_exp.log_mse_complex_exponential`.
    """
    W = jnp.asarray(W)
    if W.ndim != 2:
        raise ValueError(f"W must be an (m, d) projection matrix, got shape {W.shape}")
    A = _square_matrix("A", A, W.shape[1])
    A_inv_T = jnp.linalg.inv(A).T
    return Estimator(partial(_real_ce_side, W, A, 1.0), partial(_real_ce_side, W, A_inv_T, -1.0))


def _scaled_positive(W, a, X):
    return classic.positive_features(W, _checks.points("X", X) * a)


def diagonal_ce_estimator(W, a) -> Estimator:
    """CE estimator with a real diagonal A = diag(a), a > 0: Ψ_A(x) = positive features of (a ⊙ x), and
    Ψ_{A^{-1}}(y) = positive features of (y / a) (HRF App H, eqs 90–92 with eq 88's A).

    Real and positive, m columns per side. Shapes: W (m, d), a (d,).
    """
    _checks.positive_entries("a (the diagonal of A, which must be invertible)", a)
    a = _checks.vectors("a", a)
    if a.ndim != 1:
        raise ValueError(f"a must be the 1-D diagonal of A, got shape {a.shape}")
    return Estimator(partial(_scaled_positive, W, a), partial(_scaled_positive, W, 1.0 / a))
