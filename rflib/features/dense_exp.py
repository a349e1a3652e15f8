"""Dense-exponential random features (DERF) and their optimised subfamilies: FAVOR#, Likhosherstov et al. 2023.

A DERF (Theorem 4.1) estimates the softmax kernel K(x, y) = exp(xᵀy) with ω ~ N(0, I_d) and

    f⁽ᵏ⁾(ω, x) = D · exp(ωᵀAω + ωᵀB⁽ᵏ⁾x + xᵀC⁽ᵏ⁾x),   k = 1 (queries / test objects), 2 (keys / training objects),

valid when 8A ≺ I, B⁽¹⁾ᵀ(I − 4A)⁻¹B⁽²⁾ = I, C⁽ᵏ⁾ = −½B⁽ᵏ⁾ᵀ(I − 4A)⁻¹B⁽ᵏ⁾ and D = det(I − 4A)^{1/4}.
Every family of the paper is a DERF, returned here as one :class:`DERF` parameter tuple:

- PosRF / FAVOR+ (eqs 8–9): A = 0, B = I, C = −½I, D = 1.
- GERF / FAVOR++ (eqs 10–13, C corrected to −½‖x‖²): A = A·I with the closed-form A*(S/d) of §3.1.
- SADERF (eqs 18–20): GERF on (Ψx, Ψ⁻¹y) with the diagonal Ψ* of eq 20.
- ADERF (Theorem 4.2): A = A·I, dense B⁽¹⁾ ≠ B⁽²⁾ from an eigendecomposition and an SVD, in the basis-free form
  of :func:`aderf_transforms`.
- SDERF (Theorem 4.3): diagonal A, B⁽¹⁾ = B⁽²⁾ from the eigendecomposition of N.

The fits minimise the shifted log-variance (eq 14), L̄(θ) = mean over query–key pairs of log E[(f⁽¹⁾f⁽²⁾)²], in
closed form from O(Ld² + d³) set statistics. Printed formulas that are wrong (eq 7 TrigRF sign, eq 11 GERF C term,
eq 16 ADERF optimum) are corrected here; notebook 04 shows each one failing as printed.

Features come in the factored :class:`~rflib.features.base.Features` form: per-row log scale plus a body ≤ 1, so
nothing overflows even in float32. All functions are pure JAX and work under ``jit``/``vmap``.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks, fastmath
from rflib.features.base import Estimator, Features, LinearLogits, positive_from_projection

METHODS = ("positive", "gerf", "saderf", "aderf", "sderf")
"""The DERF families that :func:`fit` knows, from the simplest to the richest."""

DEFAULT_EPS = 1e-8
"""Relative ridge on second-moment matrices: M + ε·(tr M / d)·I (ERRATA.md FAVOR-E17, FAVOR-E18)."""


# ---------------------------------------------------------------------------------------------------------------
# Scalar helpers (Lemma A.1)
# ---------------------------------------------------------------------------------------------------------------


def ell(a):
    """ℓ(a) = log(1 − 4a) − ½ log(1 − 8a), the per-coordinate log-variance offset; a < 1/8 (elementwise).

    ℓ(a) ≥ 0 everywhere with ℓ(0) = 0, since (1 − 4a)² ≥ 1 − 8a.
    """
    a = _checks.elementwise("a", a)
    _checks.values_in_range("a", a, high=0.125, high_open=True, what="8a < 1: the variance is infinite otherwise")
    return jnp.log1p(-4.0 * a) - 0.5 * jnp.log1p(-8.0 * a)


def a_star(phi):
    """A*(φ) = (1 − 2φ − √((2φ + 1)² + 8φ)) / 16, the minimiser of ℓ(a) + φ/(1 − 8a) over a < 1/8 (eq 22).

    Written as −(2φ + (12φ + 4φ²)/(1 + √((2φ + 1)² + 8φ)))/16, a sum of same-sign terms, so it is accurate for
    tiny φ as well (the printed form cancels). A*(0) = 0, A* ≤ 0 is decreasing, A* ≈ −φ/4 − 1/8 for large φ.
    Elementwise; φ ≥ 0.
    """
    phi = _checks.elementwise("phi", phi)
    _checks.values_in_range("phi", phi, low=0.0, what="φ is a mean of squared norms")
    root = jnp.sqrt((2.0 * phi + 1.0) ** 2 + 8.0 * phi)
    return -(2.0 * phi + (12.0 * phi + 4.0 * phi**2) / (1.0 + root)) / 16.0


def g_of_phi(phi):
    """g(φ) = min_{a<1/8} ℓ(a) + φ/(1 − 8a) = ℓ(A*(φ)) + φ/(1 − 8A*(φ)): concave, increasing, g(0) = 0."""
    a = a_star(phi)
    return ell(a) + phi / (1.0 - 8.0 * a)


# ---------------------------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------------------------


class DERF(NamedTuple):
    """Parameters θ = (A, B⁽¹⁾, B⁽²⁾, C⁽¹⁾, C⁽²⁾, D) of a dense-exponential random feature map (Theorem 4.1).

    Attributes:
      A: (d, d) symmetric, 8A ≺ I.
      B1, B2: (d, d) query-side and key-side projections, B1ᵀ(I − 4A)⁻¹B2 = I.
      C1, C2: (d, d) quadratic terms, Cₖ = −½Bₖᵀ(I − 4A)⁻¹Bₖ.
      log_D: () log D = ¼ log det(I − 4A).

    Build it with :func:`derf` (checks validity) or one of the fits; the raw constructor does not check, which the
    tests use to show that printed formulas fail.
    """

    A: jax.Array
    B1: jax.Array
    B2: jax.Array
    C1: jax.Array
    C2: jax.Array
    log_D: jax.Array

    @property
    def dim(self) -> int:
        return self.A.shape[-1]


def _concrete_matrix(name: str, value, d: int | None = None) -> np.ndarray:
    arr = np.asarray(_checks.finite_array(name, value, 2), dtype=np.float64)
    if arr.shape[0] != arr.shape[1] or (d is not None and arr.shape[0] != d):
        want = f"({d}, {d})" if d is not None else "square"
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    return arr


def derf(A, B1, *, B2=None, C1=None, C2=None, D=None, rtol: float = 1e-8) -> DERF:
    """A valid DERF from A and B⁽¹⁾; B⁽²⁾, C⁽ᵏ⁾ and D are derived (Theorem 4.1), or checked when given.

    Args:
      A: (d, d) symmetric with every eigenvalue < 1/8 (8A ≺ I; the variance is infinite otherwise).
      B1: (d, d) invertible (the B constraint cannot hold otherwise).
      B2, C1, C2, D: optional; when given they must equal B⁽²⁾ = (I − 4A)B1^{−T}, Cₖ = −½Bₖᵀ(I − 4A)⁻¹Bₖ (their
        symmetric parts: only those enter xᵀCx) and D = det(I − 4A)^{1/4}, to relative tolerance ``rtol``.

    Raises:
      ValueError naming the violated condition of Theorem 4.1. Concrete inputs only (not under ``jit``).
    """
    A = _concrete_matrix("A", A)
    d = A.shape[0]
    B1 = _concrete_matrix("B1", B1, d)
    if not np.allclose(A, A.T, rtol=0, atol=rtol * max(1.0, np.abs(A).max())):
        raise ValueError("A must be symmetric (Theorem 4.1: A ∈ 𝕊_d); pass (A + A.T) / 2")
    A = 0.5 * (A + A.T)
    top = np.linalg.eigvalsh(A).max()
    if not top < 0.125:
        raise ValueError(
            f"8A ≺ I is violated: the largest eigenvalue of A is {top:.6g} ≥ 1/8, so f⁽¹⁾f⁽²⁾ has no finite variance "
            "(Theorem 4.1); choose A with all eigenvalues below 1/8 (the optimal families have A ⪯ 0)"
        )
    sv = np.linalg.svd(B1, compute_uv=False)
    if not sv.min() > 1e-12 * max(sv.max(), 1e-300):
        raise ValueError("B1 is singular: B⁽¹⁾ᵀ(I − 4A)⁻¹B⁽²⁾ = I needs an invertible B⁽¹⁾ (Theorem 4.1)")
    eye = np.eye(d)
    I4 = eye - 4.0 * A
    B2_derived = I4 @ np.linalg.inv(B1).T
    P4 = np.linalg.inv(I4)
    log_D = 0.25 * np.linalg.slogdet(I4)[1]

    def close(name, given, derived, condition):
        given = np.asarray(given, dtype=np.float64)
        if given.shape != np.shape(derived) or not np.allclose(
            given, derived, rtol=rtol, atol=rtol * max(1.0, np.abs(derived).max())
        ):
            raise ValueError(f"{name} violates {condition} (Theorem 4.1); omit it to have it derived")

    if B2 is not None:
        close("B2", _concrete_matrix("B2", B2, d), B2_derived, "the B constraint B⁽¹⁾ᵀ(I − 4A)⁻¹B⁽²⁾ = I")
    B2 = B2_derived if B2 is None else np.asarray(B2, dtype=np.float64)
    C1_derived = -0.5 * B1.T @ P4 @ B1
    C2_derived = -0.5 * B2.T @ P4 @ B2
    for name, given, derived in (("C1", C1, C1_derived), ("C2", C2, C2_derived)):
        if given is not None:
            given = _concrete_matrix(name, given, d)
            close(
                name, 0.5 * (given + given.T), derived, f"{name[0]}⁽{name[1]}⁾ = −½B⁽{name[1]}⁾ᵀ(I − 4A)⁻¹B⁽{name[1]}⁾"
            )
    if D is not None:
        close("D", np.log(_checks.positive_float("D", float(D))), log_D, "D = det(I − 4A)^{1/4} (compared in log)")
    return DERF(*(jnp.asarray(v) for v in (A, B1, B2, C1_derived, C2_derived, log_D)))


def _isotropic(a, B1, B2, d: int) -> DERF:
    """DERF with A = a·I and the C⁽ᵏ⁾, D that Theorem 4.1 implies (B's already satisfy the constraint)."""
    eye = jnp.eye(d, dtype=B1.dtype)
    return DERF(
        A=a * eye,
        B1=B1,
        B2=B2,
        C1=-0.5 * B1.T @ B1 / (1.0 - 4.0 * a),
        C2=-0.5 * B2.T @ B2 / (1.0 - 4.0 * a),
        log_D=0.25 * d * jnp.log1p(-4.0 * a),
    )


def positive_params(d: int, dtype=None) -> DERF:
    """PosRF / FAVOR+ (eqs 8–9) as a DERF: f(ω, x) = exp(ωᵀx − ‖x‖²/2), i.e. A = 0, B = I, C = −½I, D = 1."""
    d = _checks.positive_int("d", d)
    eye = jnp.eye(d, dtype=dtype or jnp.result_type(float))
    return _isotropic(jnp.zeros((), eye.dtype), eye, eye, d)


def gerf_params(a, d: int, dtype=None) -> DERF:
    """GERF (eqs 10–12, C corrected) with scalar A = ``a`` < 1/8: f = (1 − 4a)^{d/4} exp(a‖ω‖² + √(1−4a)ωᵀx − ½‖x‖²).

    The paper prints C‖x‖²/2 with C = −½, i.e. −‖x‖²/4, which is biased (ERRATA.md FAVOR-E3); the term is −½‖x‖².
    """
    d = _checks.positive_int("d", d)
    _checks.real_number("a", a, high=0.125, high_open=True, what="GERF needs A < 1/8: 1 − 8A > 0, eq 12")
    dtype = dtype or jnp.result_type(float)
    a = jnp.asarray(a, dtype)
    eye = jnp.sqrt(1.0 - 4.0 * a) * jnp.eye(d, dtype=dtype)
    return _isotropic(a, eye, eye, d)


def random_derf(rng: np.random.Generator, d: int) -> DERF:
    """A random valid DERF with a *dense* A (Theorem 4.1), the test case of the unbiasedness and eq 15 checks:
    A = Q diag(a) Qᵀ with Q the Q factor of a (d, d) standard normal matrix and a ~ Unif[−0.3, 0.05]^d, then
    B⁽¹⁾ = I + 0.3·G, G (d, d) standard normal; B⁽²⁾, C⁽ᵏ⁾, D are derived by :func:`derf`. Draws from ``rng`` in
    that order (Q's matrix, a, G)."""
    d = _checks.positive_int("d", d)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (np.random.default_rng), got {type(rng).__name__}")
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    A = Q @ np.diag(rng.uniform(-0.3, 0.05, d)) @ Q.T
    return derf(A, np.eye(d) + 0.3 * rng.normal(size=(d, d)))


# ---------------------------------------------------------------------------------------------------------------
# Set statistics and closed-form fits
# ---------------------------------------------------------------------------------------------------------------


class SetStatistics(NamedTuple):
    """The O(Ld²) statistics of a query set 𝒳 (L_x rows) and a key set 𝒴 (L_y rows) used by every fit.

    Attributes: mean_x, mean_y (d,) = μ⁽⁴⁾, μ⁽⁵⁾; second_x, second_y (d, d) = M⁽¹⁾, M⁽²⁾ (uncentred).
    Derived: m_x = tr M⁽¹⁾, m_y = tr M⁽²⁾, dμ⁽³⁾ = μ⁽⁴⁾ᵀμ⁽⁵⁾, N = M⁽¹⁾ + μ⁽⁴⁾μ⁽⁵⁾ᵀ + μ⁽⁵⁾μ⁽⁴⁾ᵀ + M⁽²⁾.
    """

    mean_x: jax.Array
    mean_y: jax.Array
    second_x: jax.Array
    second_y: jax.Array

    @property
    def cross(self):
        """d·μ⁽³⁾ = μ⁽⁴⁾ᵀμ⁽⁵⁾ = mean over pairs of xᵀy."""
        return self.mean_x @ self.mean_y

    @property
    def N(self):
        """N = mean over pairs of (x + y)(x + y)ᵀ (Theorem 4.3)."""
        outer = jnp.outer(self.mean_x, self.mean_y)
        return self.second_x + self.second_y + outer + outer.T

    @property
    def S(self):
        """S = tr N = mean over pairs of ‖x + y‖²."""
        return jnp.trace(self.second_x) + jnp.trace(self.second_y) + 2.0 * self.cross


def _check_sets(X, Y):
    X = _checks.points("X", X)
    Y = _checks.points("Y", Y, dim=X.shape[1])
    return X, Y


def set_statistics(X, Y) -> SetStatistics:
    """Statistics of queries X: (L_x, d) and keys Y: (L_y, d) in O((L_x + L_y)d²). |𝒳| ≠ |𝒴| is fine."""
    X, Y = _check_sets(X, Y)
    return _set_statistics(X, Y)


@jax.jit
def _set_statistics(X, Y):
    return SetStatistics(
        mean_x=jnp.mean(X, axis=0),
        mean_y=jnp.mean(Y, axis=0),
        second_x=X.T @ X / X.shape[0],
        second_y=Y.T @ Y / Y.shape[0],
    )


def _ridge(M, eps):
    """M + ε'(tr M / d) I with ε' = max(ε, 100·machine epsilon): a ridge below the working precision (1e-8 in
    float32) would leave M singular, and ADERF's Λ^{-1/2} would overflow."""
    d = M.shape[0]
    eps = jnp.maximum(eps, 100.0 * jnp.finfo(M.dtype).eps)
    return M + eps * jnp.trace(M) / d * jnp.eye(d, dtype=M.dtype)


def _fit_gerf(st: SetStatistics) -> DERF:
    d = st.mean_x.shape[0]
    return gerf_params(a_star(st.S / d), d, st.mean_x.dtype)


def _psi(st: SetStatistics, eps):
    d = st.mean_x.shape[0]
    a = jnp.diagonal(st.second_x)
    b = jnp.diagonal(st.second_y)
    a = a + eps * jnp.sum(a) / d
    b = b + eps * jnp.sum(b) / d
    # Both columns zero: any Ψ gives the same objective; take 1.
    return jnp.where((a > 0) & (b > 0), (b / jnp.where(a > 0, a, 1.0)) ** 0.25, 1.0)


def _fit_saderf(st: SetStatistics, eps) -> DERF:
    d = st.mean_x.shape[0]
    psi = _psi(st, eps)
    a_diag, b_diag = jnp.diagonal(st.second_x), jnp.diagonal(st.second_y)
    # GERF's A*(S/d) on (ΨX, Ψ⁻¹Y); S = Σ_l(ψ_l²a_l + b_l/ψ_l²) + 2μ⁽⁴⁾ᵀμ⁽⁵⁾ = 2Σ_l√(a_l b_l) + 2dμ⁽³⁾ when ε = 0.
    phi = (jnp.sum(psi**2 * a_diag + b_diag / psi**2) + 2.0 * st.cross) / d
    a = a_star(jnp.maximum(phi, 0.0))
    root = jnp.sqrt(1.0 - 4.0 * a)
    return _isotropic(a, root * jnp.diag(psi), root * jnp.diag(1.0 / psi), d)


def aderf_transforms(st: SetStatistics, eps):
    """T₁, T₂ = T₁^{−T} and Σ of Theorem 4.2 (B⁽ᵏ⁾ = √(1 − 4A)·Tₖ), in the basis-free form
    T₁ = (M₁^{1/2} M₂ M₁^{1/2})^{1/4} M₁^{−1/2} of the ridged second moments Mₖ (symmetric matrix functions).

    The optimum determines T₁ only up to a left orthogonal factor, and the theorem's T₁ = Σ^{1/2} Uᵀ Λ₁^{−1/2} Q₁ᵀ
    (M₁ = Q₁Λ₁Q₁ᵀ, Λ₁^{1/2}Q₁ᵀQ₂Λ₂^{1/2} = UΣVᵀ) inherits the arbitrary choices of the decompositions: the signs of
    eigenvectors and singular vectors, and whole bases inside repeated values (sets with null directions, where the
    ridge lifts several eigenvalues to one value), which round-off would choose. Returned is (Q₁U)·T₁, the same matrix
    for every such choice: Q₁UΣ^{1/2}UᵀQ₁ᵀ = (M₁^{1/2}M₂M₁^{1/2})^{1/4} and Q₁Λ₁^{−1/2}Q₁ᵀ = M₁^{−1/2}. It has the same
    objective, and the same law of the features for projections whose law is invariant under right rotations, W ↦ WR
    (iid Gaussian rows, Haar-orthogonal blocks of ``projections.orthogonal``; not structured ones such as SORF).
    Shapes: (d, d), (d, d), (d,).
    """
    # One batched eigh, not two independent ones: XLA:CPU can run two independent LAPACK custom calls concurrently,
    # and inside jitted gradient steps that deadlocked (every runtime thread idle; jax 0.10.2, 2 cores).
    lam, Q = jnp.linalg.eigh(jnp.stack([_ridge(st.second_x, eps), _ridge(st.second_y, eps)]))
    (lam1, lam2), (Q1, Q2) = lam, Q
    tiny = jnp.finfo(lam1.dtype).tiny
    lam1, lam2 = jnp.maximum(lam1, tiny), jnp.maximum(lam2, tiny)
    U, sv, _ = jnp.linalg.svd((jnp.sqrt(lam1)[:, None] * (Q1.T @ Q2)) * jnp.sqrt(lam2)[None, :])
    sv = jnp.maximum(sv, tiny)
    rotation = Q1 @ U
    T1 = (rotation * jnp.sqrt(sv)[None, :]) @ (U.T * (1.0 / jnp.sqrt(lam1))[None, :]) @ Q1.T
    T2 = (rotation * (1.0 / jnp.sqrt(sv))[None, :]) @ (U.T * jnp.sqrt(lam1)[None, :]) @ Q1.T
    return T1, T2, sv


def _fit_aderf(st: SetStatistics, eps) -> DERF:
    d = st.mean_x.shape[0]
    T1, T2, _ = aderf_transforms(st, eps)
    # GERF's A*(S/d) on (T₁X, T₂Y): S = tr(T₁M⁽¹⁾T₁ᵀ) + tr(T₂M⁽²⁾T₂ᵀ) + 2dμ⁽³⁾, which is Theorem 4.2's
    # φ = 2d⁻¹ tr Σ + 2μ⁽³⁾ when ε = 0 (and the exact optimum for the regularised T's otherwise).
    S = jnp.sum((T1 @ st.second_x) * T1) + jnp.sum((T2 @ st.second_y) * T2) + 2.0 * st.cross
    phi = S / d
    a = a_star(jnp.maximum(phi, 0.0))
    root = jnp.sqrt(1.0 - 4.0 * a)
    return _isotropic(a, root * T1, root * T2, d)


def _fit_sderf(st: SetStatistics) -> DERF:
    lam, Q = jnp.linalg.eigh(st.N)
    lam = jnp.maximum(lam, 0.0)  # N ⪰ 0; round-off can make tiny eigenvalues negative
    a = a_star(lam)  # paired with its own eigenvector: no sorting needed (ERRATA.md FAVOR-E15)
    B = jnp.sqrt(1.0 - 4.0 * a)[:, None] * Q.T
    eye = jnp.eye(lam.shape[0], dtype=lam.dtype)
    return DERF(A=jnp.diag(a), B1=B, B2=B, C1=-0.5 * eye, C2=-0.5 * eye, log_D=0.25 * jnp.sum(jnp.log1p(-4.0 * a)))


def fit_statistics(method: str, stats: SetStatistics, *, eps: float = DEFAULT_EPS) -> DERF:
    """Closed-form optimal parameters of ``method`` from precomputed statistics (O(d³)); see :func:`fit`."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(stats, SetStatistics):
        raise ValueError(f"stats must be SetStatistics (from set_statistics), got {type(stats).__name__}")
    eps = _checks.real_number("eps", eps, low=0.0)  # a NaN eps gave NaN parameters
    d = stats.mean_x.shape[0]
    if method == "positive":
        return positive_params(d, stats.mean_x.dtype)
    if method == "gerf":
        return _fit_gerf(stats)
    if method == "saderf":
        return _fit_saderf(stats, eps)
    if method == "aderf":
        return _fit_aderf(stats, eps)
    return _fit_sderf(stats)


_fit_jit = jax.jit(fit_statistics, static_argnames="method")


def fit(method: str, X, Y, *, eps: float = DEFAULT_EPS) -> DERF:
    """Parameters of a DERF family that minimise the shifted log-variance (eq 14) on queries X and keys Y.

    Args:
      method: ``"positive"`` (FAVOR+, nothing to fit), ``"gerf"`` (FAVOR++, A = A*(S/d), §3.1), ``"saderf"``
        (eq 20), ``"aderf"`` (Theorem 4.2) or ``"sderf"`` (Theorem 4.3).
      X: (L_x, d) queries 𝒳; Y: (L_y, d) keys 𝒴 (rows are points).
      eps: ridge ε: ADERF eigendecomposes M⁽ᵏ⁾ + ε(tr M⁽ᵏ⁾/d)I and SADERF adds ε·mean(diag) to its column sums,
        so singular second moments (L < d, constant-zero pixels) stay finite. The objective is continuous in ε.

    Returns:
      A :class:`DERF`; cost O(Ld² + d³). Every optimised family has A ⪯ 0, so its features are bounded in ω.
    """
    X, Y = _check_sets(X, Y)
    eps = _checks.real_number("eps", eps, low=0.0)
    if method == "aderf":
        for name, arr in (("X", X), ("Y", Y)):
            if _checks.is_concrete(arr) and not bool(jnp.any(arr != 0)):
                raise ValueError(f"ADERF needs nonzero {name}: its optimum is not attained when a set is all zeros")
    _checks.one_of("method", method, METHODS)
    return _fit_jit(method, _set_statistics(X, Y), eps=eps)


# ---------------------------------------------------------------------------------------------------------------
# Features
# ---------------------------------------------------------------------------------------------------------------


def linear_logits(params: DERF, W, X, side: int) -> LinearLogits:
    """The log features log f⁽ᵏ⁾(ω_m, x_n) = log D + x_nᵀC x_n + x_n·(Bω_m) + ω_mᵀAω_m (FAVOR# eq 9) as factors:
    row term, points X, projections W Bᵀ (rows Bω_m) and column term (side k = 1 queries, 2 keys).

    No validation of the arrays (call it on checked inputs, e.g. inside a jitted function); ``side`` must be 1 or 2.
    W: (M, d), X: (n, d); the 1/√M normalisation is not included.
    """
    if side not in (1, 2):  # static: a Python check, free under jit (side 3 took the key side silently)
        raise ValueError(f"side must be 1 (queries) or 2 (keys), got {side!r}")
    B = params.B1 if side == 1 else params.B2
    C = params.C1 if side == 1 else params.C2
    row_log_scale = params.log_D + jnp.einsum("nd,de,ne->n", X, C, X)
    return LinearLogits(row_log_scale, X, W @ B, jnp.einsum("md,de,me->m", W, params.A, W))


def logits(params: DERF, W, X, side: int) -> tuple[jax.Array, jax.Array]:
    """The log features split as log f⁽ᵏ⁾(ω_m, x_n) = row_log_scale_n + logits_nm (side k = 1 queries, 2 keys).

    No validation (call it on checked inputs, e.g. inside a jitted function). W: (M, d), X: (n, d) →
    (row_log_scale (n,), logits (n, M)); the 1/√M normalisation is not included.
    """
    factors = linear_logits(params, W, X, side)
    return factors.row_log_scale, factors.logits()


def side_features(params: DERF, W, X, side: int) -> Features:
    """Unvalidated :func:`query_features` (side 1) or :func:`key_features` (side 2), for use inside jitted code."""
    factors = linear_logits(params, W, X, side)
    row_log_scale = factors.row_log_scale - 0.5 * jnp.log(W.shape[0])
    return positive_from_projection(row_log_scale, factors.points, factors.projections, factors.column_bias)


_side_features_jit = jax.jit(side_features, static_argnums=3)


def _check_features_input(params: DERF, W, X, name: str = "X"):
    if not isinstance(params, DERF):
        raise ValueError(f"params must be a DERF (from dense_exp.fit or dense_exp.derf), got {type(params).__name__}")
    X = _checks.points(name, X)
    if X.shape[1] != params.dim:
        raise ValueError(f"{name} has {X.shape[1]} columns but the parameters are for d = {params.dim}")
    return _checks.projection_matrix("W", W, params.dim), X


def query_features(params: DERF, W, X) -> Features:
    """Query-side features f⁽¹⁾: M^{−1/2}(f⁽¹⁾(ω_m, x_i))_m in factored form.  W: (M, d), X: (n, d) → body (n, M).

    ``query_features(θ, W, X).dense() @ key_features(θ, W, Y).dense().T`` estimates exp(XYᵀ) (eqs 2–3) without
    bias when the rows of W are marginally N(0, I_d) (iid or sign-fixed orthogonal with χ norms).
    """
    W, X = _check_features_input(params, W, X)
    return _side_features_jit(params, W, X, 1)


def key_features(params: DERF, W, Y) -> Features:
    """Key-side features f⁽²⁾ (uses B⁽²⁾, C⁽²⁾); shapes as :func:`query_features`."""
    W, Y = _check_features_input(params, W, Y, "Y")
    return _side_features_jit(params, W, Y, 2)


def trig_phase_features(W, theta, X, *, printed: bool = False) -> Features:
    """TrigRF with a random phase (eqs 5–7, sign corrected): f(ω, x) = √2 e^{‖x‖²/2} cos(ω̃ᵀx + θ).

    ω̃ ~ N(0, I_d) (rows of W: (M, d)) and θ ~ Unif[0, 2π] (``theta``: (M,)); the same map serves queries and keys,
    so features(X) @ features(Y).T estimates exp(XYᵀ). ``printed=True`` applies eq 7 as printed to *keys*, i.e.
    cos(−ω̃ᵀy + θ): use it as ``trig_phase_features(W, θ, Y, printed=True)`` to see that it estimates exp(−xᵀy)
    (ERRATA.md FAVOR-E2). Body entries lie in [−√2, √2]; the estimate can be negative.
    """
    X = _checks.points("X", X)
    W = _checks.projection_matrix("W", W, X.shape[1])
    theta = _checks.finite_array("theta", theta, 1)
    if theta.shape[0] != W.shape[0]:
        raise ValueError(f"theta needs one phase per row of W ({W.shape[0]}), got shape {theta.shape}")
    sign = -1.0 if printed else 1.0
    body = jnp.sqrt(2.0) * fastmath.cos(sign * (X @ W.T) + theta[None, :])
    return Features(0.5 * jnp.sum(X**2, axis=1) - 0.5 * jnp.log(W.shape[0]), body)


def estimator(params: DERF, W) -> Estimator:
    """The DERF estimator of exp(xᵀy) (eqs 2–3): queries through f⁽¹⁾, keys through f⁽²⁾.  W: (M, d).

    Unbiased for any fixed θ when the rows of W are marginally N(0, I_d); ``estimator(fit(method, X, Y), W)`` is
    FAVOR#'s data-adapted estimator (θ fitted on the sets it will be used on).
    """
    if not isinstance(params, DERF):
        raise ValueError(f"params must be a DERF (from dense_exp.fit or dense_exp.derf), got {type(params).__name__}")
    return Estimator(partial(query_features, params, W), partial(key_features, params, W))
