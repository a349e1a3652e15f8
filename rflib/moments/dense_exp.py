"""Closed-form moments, per-pair log relative variances and objectives of DERF estimators (FAVOR#, Theorem 4.1).

Notation of ``rflib.features.dense_exp``: θ = (A, B⁽¹⁾, B⁽²⁾, C⁽¹⁾, C⁽²⁾, D), v = B⁽¹⁾x + B⁽²⁾y, K = exp(xᵀy).

- k-th moment (needs I − 4kA ≻ 0):
  log E[(f⁽¹⁾f⁽²⁾)ᵏ] = 2k log D − ½ log det(I − 4kA) + k(xᵀC⁽¹⁾x + yᵀC⁽²⁾y) + (k²/2) vᵀ(I − 4kA)⁻¹v.
  k = 1 is the unbiasedness identity, k = 2 is eq 15.
- For a *valid* θ the C terms cancel in the log relative second moment, leaving a sum of non-negative terms:
  Δ := log E[(f⁽¹⁾f⁽²⁾)²] − 2xᵀy = log det(I − 4A) − ½ log det(I − 8A) + vᵀ(2(I − 8A)⁻¹ − (I − 4A)⁻¹)v ≥ 0,
  so log(Var/K²) = log expm1(Δ) is computed without cancellation (for GERF: d·ℓ(A) + ‖x + y‖²/(1 − 8A)).
- The objective (eq 14) is L̄(θ) = mean over pairs of log E[(f⁽¹⁾f⁽²⁾)²] = mean Δ + 2dμ⁽³⁾, in closed form from
  the set statistics, O(d³).

All variances are for one random feature (M = 1); with M iid features divide Var by M (subtract log M).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks, quadrature
from rflib.features import dense_exp
from rflib.features.dense_exp import DERF, SetStatistics, a_star, ell

_PAIR_CHUNK = 128


def log_expm1(t):
    """log(e^t − 1) for t ≥ 0 (−inf at 0), accurate for tiny t and without overflow for large t (elementwise, any
    shape). A concrete t with a negative entry is refused: e^t − 1 < 0 there and its log is not real."""
    t = _checks.elementwise("t", t)
    if _checks.is_concrete(t) and bool(jnp.any(t < 0)):
        raise ValueError("t must be ≥ 0 (e^t − 1 < 0 for t < 0, whose log is not real)")
    return _log_expm1(t)


def _log_expm1(t):
    """:func:`log_expm1` unchecked, for Δ ≥ 0 computed inside: a Δ that round-off puts below 0 (by at most 256 ulps of
    1) is Δ = 0 (−inf, an exact estimator), not a NaN; one further below stays NaN, since it is no round-off."""
    t = jnp.asarray(t)
    round_off = 256 * jnp.finfo(t.dtype if jnp.issubdtype(t.dtype, jnp.floating) else float).eps
    t = jnp.where((t < 0) & (t >= -round_off), 0.0, t)
    return jnp.where(t > 30.0, t + jnp.log1p(-jnp.exp(-jnp.minimum(t, 700.0))), jnp.log(jnp.expm1(t)))


def _eig_A(A):
    a, Q = jnp.linalg.eigh(0.5 * (A + A.T))
    return a, Q


def log_moment(params: DERF, x, y, k: int = 1) -> jax.Array:
    """log E_ω[(f⁽¹⁾(ω, x) f⁽²⁾(ω, y))ᵏ] for ω ~ N(0, I_d); +inf where the moment diverges (A has an eigenvalue
    ≥ 1/(4k)). Holds for *any* θ (valid or not), which is how the printed formulas are shown to fail.

    Shapes: x, y: (..., d) broadcastable → (...).
    """
    k = _checks.positive_int("k", k)
    x = _checks.vectors("x", x, params.dim)
    y = _checks.vectors("y", y, params.dim)
    return _log_moment(params, x, y, k)


@partial(jax.jit, static_argnums=3)
def _log_moment(params: DERF, x, y, k):
    a, Q = _eig_A(params.A)
    ok = jnp.all(1.0 - 4.0 * k * a > 0)
    one_minus = jnp.where(ok, 1.0 - 4.0 * k * a, 1.0)
    v = (x @ params.B1.T + y @ params.B2.T) @ Q
    quad = jnp.sum(v**2 / one_minus, axis=-1)
    c = jnp.einsum("...d,de,...e->...", x, params.C1, x) + jnp.einsum("...d,de,...e->...", y, params.C2, y)
    value = 2 * k * params.log_D - 0.5 * jnp.sum(jnp.log(one_minus)) + k * c + 0.5 * k**2 * quad
    return jnp.where(ok, value, jnp.inf)


def _delta_weights(params: DERF):
    """(offset, R) with Δ = offset + ‖R(B⁽¹⁾x + B⁽²⁾y)‖², R = diag(2/(1−8a) − 1/(1−4a))^{1/2} Qᵀ, A = Q diag(a) Qᵀ."""
    a, Q = _eig_A(params.A)
    offset = jnp.sum(ell(a))
    weight = 2.0 / (1.0 - 8.0 * a) - 1.0 / (1.0 - 4.0 * a)
    return offset, jnp.sqrt(weight)[:, None] * Q.T


def _check_valid_A(params: DERF):
    if _checks.is_concrete(params.A):
        with jax.ensure_compile_time_eval():
            top = float(jnp.max(jnp.linalg.eigvalsh(0.5 * (params.A + params.A.T))))
        if not top < 0.125:
            raise ValueError(f"8A ≺ I is violated (largest eigenvalue of A is {top:.6g}): the variance is infinite")


@partial(jax.jit, static_argnames="chunk")
def _pairwise_sq_norms(a, b, chunk=_PAIR_CHUNK):
    """‖a_i + b_j‖² for all pairs, (n, k), summed coordinate-wise in chunks of rows (no cancellation)."""
    # A static loop over row blocks (unrolled at trace time). lax.map over padded blocks segfaulted in XLA:CPU
    # (jaxlib 0.10.2, float32) when nested in another jit, so it is not used.
    blocks = [a[i : i + chunk] for i in range(0, a.shape[0], chunk)]
    return jnp.concatenate([jnp.sum((rows[:, None, :] + b[None, :, :]) ** 2, axis=-1) for rows in blocks], axis=0)


def log_relative_second_moment(params: DERF, X, Y) -> jax.Array:
    """Δ_ij = log(E[(f⁽¹⁾f⁽²⁾)²]/K²) ≥ 0 for every query–key pair of a *valid* DERF.  X (n, d), Y (k, d) → (n, k).

    Exact pair sums (no Gram-matrix cancellation), O(nkd) time, O(nk + chunk·k·d) memory.
    """
    X = _checks.points("X", X, params.dim)
    Y = _checks.points("Y", Y, params.dim)
    _check_valid_A(params)
    return _log_relative_second_moment(params, X, Y)


@jax.jit
def _log_relative_second_moment(params: DERF, X, Y):
    offset, R = _delta_weights(params)
    return offset + _pairwise_sq_norms(X @ (R @ params.B1).T, Y @ (R @ params.B2).T)


def log_relative_variance(params: DERF, X, Y) -> jax.Array:
    """log(Var f⁽¹⁾f⁽²⁾ / K²) for every pair (M = 1), via log expm1(Δ).  X (n, d), Y (k, d) → (n, k).

    This is the quantity of Figs 1–2 (the paper writes Var/K; dividing by K² instead shifts every method by the same
    xᵀy, ERRATA.md FAVOR-E19). Exact estimators give −inf (Δ = 0).
    """
    delta = log_relative_second_moment(params, X, Y)
    return _log_expm1(delta)


def trig_log_relative_variance(X, Y) -> jax.Array:
    """TrigRF (eqs 5–7, sign corrected) with M = 1: log(Var/K²) = log(e^v + ½e^{−v} − 1), v = ‖x − y‖².

    Depends only on ‖x − y‖. X (n, d), Y (k, d) → (n, k).
    """
    X = _checks.points("X", X)
    Y = _checks.points("Y", Y, X.shape[1])
    v = _pairwise_sq_norms(X, -Y)
    return jnp.logaddexp(_log_expm1(jnp.maximum(v, jnp.finfo(v.dtype).tiny)), jnp.log(0.5) - v)


def shifted_log_variance(params: DERF, stats: SetStatistics) -> jax.Array:
    """L̄(θ) (eq 14): see :func:`_shifted_log_variance`; raises if 8A ≺ I fails."""
    _check_valid_A(params)
    return _shifted_log_variance(params, stats)


@jax.jit
def _shifted_log_variance(params: DERF, stats: SetStatistics) -> jax.Array:
    """L̄(θ) (eq 14): mean over all pairs of log E[(f⁽¹⁾f⁽²⁾)²] = log(Var + K²), from the statistics in O(d³).

    L̄ = log det(I − 4A) − ½ log det(I − 8A) + tr(G₁M⁽¹⁾) + tr(G₂M⁽²⁾) + 2μ⁽⁴⁾ᵀB⁽¹⁾ᵀR ᵀRB⁽²⁾μ⁽⁵⁾ + 2μ⁽⁴⁾ᵀμ⁽⁵⁾,
    Gₖ = B⁽ᵏ⁾ᵀRᵀRB⁽ᵏ⁾ (valid θ only). The lower bound is 2dμ⁽³⁾ = mean log K² (Jensen; ERRATA.md FAVOR-E6).
    """
    offset, R = _delta_weights(params)
    R1, R2 = R @ params.B1, R @ params.B2
    quad = (
        jnp.sum((R1 @ stats.second_x) * R1)
        + jnp.sum((R2 @ stats.second_y) * R2)
        + 2.0 * (R1 @ stats.mean_x) @ (R2 @ stats.mean_y)
    )
    return offset + quad + 2.0 * stats.cross


def gerf_objective(a, stats: SetStatistics) -> jax.Array:
    """L̄ of GERF with scalar A = a (§3.1): d·ℓ(a) + ((2 − 8a)/(1 − 8a))·S − m_x − m_y."""
    d = stats.mean_x.shape[0]
    m_x, m_y = jnp.trace(stats.second_x), jnp.trace(stats.second_y)
    return d * ell(a) + (2.0 - 8.0 * a) / (1.0 - 8.0 * a) * stats.S - m_x - m_y


def aderf_optimal_value(stats: SetStatistics, *, printed: bool = False) -> jax.Array:
    """Optimal L̄ over ADERF (Theorem 4.2), eq 38: d·[ℓ(A) + 2(1 − 8A)⁻¹(d⁻¹ tr Σ + μ⁽³⁾) + 2μ⁽³⁾].

    ``printed=True`` gives eq 16 as printed, whose last two terms lack the factor d (ERRATA.md FAVOR-E10); it is wrong
    whenever μ⁽³⁾ or tr Σ is nonzero. Σ are the singular values of M⁽¹⁾^{1/2}M⁽²⁾^{1/2} (no ridge here).
    """
    d = stats.mean_x.shape[0]
    # one batched eigh: see rflib.features.dense_exp.aderf_transforms
    (lam1, lam2), (Q1, Q2) = jnp.linalg.eigh(jnp.stack([stats.second_x, stats.second_y]))
    lam1, lam2 = jnp.maximum(lam1, 0.0), jnp.maximum(lam2, 0.0)
    tr_sigma = jnp.sum(jnp.linalg.svd((jnp.sqrt(lam1)[:, None] * (Q1.T @ Q2)) * jnp.sqrt(lam2), compute_uv=False))
    mu3 = stats.cross / d
    a = a_star(jnp.maximum(2.0 * tr_sigma / d + 2.0 * mu3, 0.0))
    tail = 2.0 / (1.0 - 8.0 * a) * (tr_sigma / d + mu3) + 2.0 * mu3
    return d * ell(a) + tail if printed else d * (ell(a) + tail)


def sderf_optimal_value(stats: SetStatistics) -> jax.Array:
    """Optimal L̄ over SDERF (Theorem 4.3), eq 17: Σ_l[ℓ(A_ll) + (1 + (1 − 8A_ll)⁻¹)λ_l] − m_x − m_y, λ = eig N."""
    lam = jnp.maximum(jnp.linalg.eigvalsh(stats.N), 0.0)
    a = a_star(lam)
    m_x, m_y = jnp.trace(stats.second_x), jnp.trace(stats.second_y)
    return jnp.sum(ell(a) + (1.0 + 1.0 / (1.0 - 8.0 * a)) * lam) - m_x - m_y


def log_mse(x, y, m: int, *, params: DERF) -> jax.Array:
    """The family's uniform entry point: log MSE = log(Var f⁽¹⁾f⁽²⁾ / m) of the unbiased DERF estimator with m iid
    features, per pair: 2xᵀy + log expm1(Δ) − log m, with Δ = offset + ‖R(B⁽¹⁾x + B⁽²⁾y)‖² free of cancellation.
    (..., d), (..., d) → (...)."""
    m = _checks.positive_int("m", m)
    x = _checks.vectors("x", x)
    y = _checks.vectors("y", y, dim=x.shape[-1])
    _check_valid_A(params)
    offset, R = _delta_weights(params)
    v = x @ (R @ params.B1).T + y @ (R @ params.B2).T
    delta = offset + jnp.sum(v**2, axis=-1)
    return 2.0 * jnp.sum(x * y, axis=-1) + _log_expm1(delta) - jnp.log(m)


def pair_average_objective(params: DERF, X, Y) -> float:
    """L̄(θ) of eq 14 by its definition: the mean over all pairs of log E[(f⁽¹⁾f⁽²⁾)²] from the generic moment
    formula (k = 2), the oracle for :func:`shifted_log_variance`'s closed form.  X: (n, d), Y: (k, d) → float."""
    X = _checks.finite_numpy("X", X, 2)
    Y = _checks.finite_numpy("Y", Y, 2)
    return float(np.mean(np.asarray(log_moment(params, X[:, None], Y[None], 2))))


def aderf_from_vector(p, d: int) -> DERF:
    """ADERF (Theorem 4.2's family) from an unconstrained vector p of length 1 + d²: A = (1 − e^{p₀})/8·I < I/8,
    B⁽¹⁾ = p[1:] as a (d, d) matrix; :func:`rflib.features.dense_exp.derf` derives B⁽²⁾ from the validity constraint."""
    p = _checks.finite_numpy("p", p, 1)
    return dense_exp.derf((1 - np.exp(p[0])) / 8 * np.eye(d), p[1:].reshape(d, d))


def sderf_from_vector(p, d: int) -> DERF:
    """SDERF (Theorem 4.3's family) from an unconstrained vector p of length d + d(d − 1)/2:
    A = diag((1 − e^{p[:d]})/8), B = diag(√(1 − 4A)) Q with Q = exp(S − Sᵀ) ∈ SO(d), S strictly upper triangular
    with entries p[d:]."""
    from scipy.linalg import expm  # only the numerical check needs it

    p = _checks.finite_numpy("p", p, 1)
    skew = np.zeros((d, d))
    skew[np.triu_indices(d, 1)] = p[d:]
    a = (1 - np.exp(p[:d])) / 8
    return dense_exp.derf(np.diag(a), np.sqrt(1 - 4 * a)[:, None] * expm(skew - skew.T))


def numerical_minimum(method: str, X, Y, *, starts: int, rng: np.random.Generator) -> float:
    """The smallest L̄ (eq 14, :func:`pair_average_objective`) that BFGS finds over ``method``'s whole family from
    ``starts`` random starting points: the numerical check that the closed-form optima (ADERF eq 38, SDERF eq 17)
    are minima. Parametrisations: :func:`aderf_from_vector` (starts p₀ ~ N(0, 1), B⁽¹⁾ ~ I + 0.3·N(0, 1)) and
    :func:`sderf_from_vector` (starts ~ N(0, 1)); parameters outside the validity region score 10⁶.

    Args:
      method: ``"aderf"`` or ``"sderf"``.
      X: (n, d) queries; Y: (k, d) keys.
      starts: number of BFGS runs.
      rng: numpy generator of the starting points.
    """
    from scipy import optimize  # ~0.5 s to import; only this check needs it

    _checks.one_of("method", method, ("aderf", "sderf"))
    starts = _checks.positive_int("starts", starts)
    X = _checks.finite_numpy("X", X, 2)
    Y = _checks.finite_numpy("Y", Y, 2)
    d = X.shape[1]
    build = aderf_from_vector if method == "aderf" else sderf_from_vector

    def objective(p):
        try:
            return pair_average_objective(build(p, d), X, Y)
        except ValueError:  # outside the validity region (e.g. a singular B)
            return 1e6

    best = np.inf
    for _ in range(starts):
        if method == "aderf":
            start = np.concatenate([[rng.normal()], (np.eye(d) + 0.3 * rng.normal(size=(d, d))).ravel()])
        else:
            start = rng.normal(size=d + d * (d - 1) // 2)
        best = min(best, float(optimize.minimize(objective, start, method="BFGS").fun))
    return best


def method_log_relative_variance(method: str, X, Y, *, eps: float | None = None) -> jax.Array:
    """log(Var/K²) at M = 1 for every pair, with ``method``'s parameters fitted to these very sets (Figs 1–2).

    Args:
      method: ``"trig"`` (TrigRF, nothing to fit) or one of ``rflib.features.dense_exp.METHODS``.
      X: (n, d) queries 𝒳; Y: (k, d) keys 𝒴.
      eps: ridge for the fits (default ``dense_exp.DEFAULT_EPS``).

    Returns:
      (n, k) log relative variances.
    """
    if method == "trig":
        return trig_log_relative_variance(X, Y)
    params = dense_exp.fit(method, X, Y, eps=dense_exp.DEFAULT_EPS if eps is None else eps)
    return log_relative_variance(params, X, Y)


# --- exact single-feature moments by Gauss–Hermite quadrature (the oracle for the closed forms above) ----------


def derf_moments(params, x, y, *, n_points: int = 60) -> tuple[float, float]:
    """E[f⁽¹⁾(ω, x) f⁽²⁾(ω, y)] and E[(f⁽¹⁾f⁽²⁾)²] of one dense-exponential feature (FAVOR# Theorem 4.1, eq 15).

    ``params``: a :class:`rflib.features.dense_exp.DERF` in dimension d; x, y: (d,). A general DERF depends on all
    of ω, so the rule is the full tensor Gauss–Hermite rule over ℝ^d (n_points**d nodes: small d only), fed through
    ``dense_exp.query_features`` / ``key_features`` as their projection matrix.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    W, weights = quadrature.standard_normal_rule(params.dim, n_points)
    # the maps normalise by M^{-1/2}; undo it to get single-feature values
    f1 = np.asarray(dense_exp.query_features(params, W, x[None]).dense())[0] * np.sqrt(len(W))
    f2 = np.asarray(dense_exp.key_features(params, W, y[None]).dense())[0] * np.sqrt(len(W))
    return float(weights @ (f1 * f2)), float(weights @ (f1 * f2) ** 2)


def trig_phase_moments(x, y, *, printed: bool = False, n_theta: int = 16, n_points: int = 60) -> tuple[float, float]:
    """E[f(ω̃, θ, x) f(ω̃, θ, y)] and its second moment for FAVOR#'s TrigRF with a random phase (eqs 5–7).

    θ ~ Unif[0, 2π] by the n_theta-point trapezoid rule (exact for trigonometric polynomials of degree < n_theta;
    the integrand has degree ≤ 4), ω̃ ~ N(0, I_d) by Gauss–Hermite over span{x, y}. ``printed=True`` uses eq 7 as
    printed for the key (see ``dense_exp.trig_phase_features``). x, y: (d,).
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n_theta = _checks.positive_int("n_theta", n_theta)
    W, weights = quadrature.projection_rule(np.stack([x, y]), n_points)
    mean = second = 0.0
    for theta in 2 * np.pi * np.arange(n_theta) / n_theta:
        phases = np.full(len(W), theta)
        fx = np.asarray(dense_exp.trig_phase_features(W, phases, x[None]).dense())[0] * np.sqrt(len(W))
        fy = np.asarray(dense_exp.trig_phase_features(W, phases, y[None], printed=printed).dense())[0] * np.sqrt(len(W))
        mean += weights @ (fx * fy) / n_theta
        second += weights @ (fx * fy) ** 2 / n_theta
    return float(mean), float(second)
