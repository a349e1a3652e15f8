"""The Monte Carlo studies of HRF §4.1 and Apps G–H, and the FLOP accounting of §4.4 (Choromanski et al., ICLR 2022).

- Figs 2/5: pointwise estimates of SM(x, y) on the sphere S(r) over a grid of angles (:func:`sphere_methods`,
  :func:`pointwise_errors`, :func:`exact_relative_error`) and the "speed trick" check that 2-D draws reproduce
  d-dimensional ones (:func:`random_pair_at_angle`, :func:`speed_trick_z_scores`).
- Table 1: trigonometric baselines (ORF, SORF, Halton) against FLOP-matched angular hybrids on random pairs of UCI
  points (:func:`uci_methods`, :func:`projection_flop_matched_m`, :func:`uci_mse_study`), and the ablation of its
  unstated choices (:data:`TABLE1_PREPROCESSINGS`, :func:`uci_exact_mse`, :func:`hybrid_trig_floor`,
  :func:`hybrid_can_beat_trig_above`).
- Fig 6 / Table 3: the cluster-adapted hybrid HRF-C against FAVOR+ and trig features on clustered data
  (:func:`hrfc_mse_study`).
- Fig 4: feature-map and linear-attention multiply-adds of an angular hybrid against FAVOR+ (:func:`attention_flops`).

Every function takes the random keys (or callables that derive them) as arguments and returns plain dicts and
arrays; the notebooks choose the keys, the settings and the presentation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import NamedTuple

import jax
import numpy as np

from rflib import _checks, kernels, moments, sphere
from rflib.experiments import datasets, simulation
from rflib.experiments.progress_bars import bar
from rflib.features import classic, cluster, hybrid

# --- Figs 2 and 5: pointwise estimation on the sphere -------------------------------------------------------------


class SphereMethod(NamedTuple):
    """One estimator of HRF Figs 2/5: how to simulate it and its exact log MSE on S(r).

    Attributes:
      make: estimator factory called as ``make(**matrices)`` (``simulation.paired_estimates``).
      shapes: name → (rows, 2) of each random matrix, for draws in the reduced dimension d = 2.
      log_mse: θ (...) → log MSE (...) on S(r), the closed form the Monte Carlo should agree with.
    """

    make: Callable
    shapes: dict
    log_mse: Callable


def sphere_methods(r: float, *, M: int, m: int, n: int, sigma_r: float = 1.0) -> dict[str, SphereMethod]:
    """HRF Figs 2/5's estimators of SM(x, y) for ‖x‖ = ‖y‖ = r, keyed by their legend names, in plotting order:
    trigonometric features (HRF eq 2) and FAVOR+ (antithetic positive, eq 3) with M projections, the angular hybrid
    (eq 19, Theorem D.1) and App F's normalised Gaussian hybrid (Theorem F.1) with σ = sigma_r / r, each with m
    projections per base and n λ-projections. Exact log MSEs: Lemma 2.2, corrected eq 47, Theorem F.1
    (:mod:`rflib.sphere`).
    """
    r = _checks.positive_float("r", r)
    M, m, n = (_checks.positive_int(k, v) for k, v in (("M", M), ("m", m), ("n", n)))
    sigma_r = _checks.positive_float("sigma_r", sigma_r)
    hybrid_shapes = {"W_pos": (m, 2), "W_trig": (m, 2), "T": (n, 2)}
    sigma_name = "1/r" if sigma_r == 1.0 else f"{sigma_r:g}/r"
    return {
        f"trig (M = {M})": SphereMethod(classic.trig_estimator, {"W": (M, 2)}, partial(sphere.log_mse_trig, r=r, m=M)),
        f"FAVOR+ (M = {M})": SphereMethod(
            classic.hyperbolic_estimator, {"W": (M, 2)}, partial(sphere.log_mse_hyperbolic, r=r, m=M)
        ),
        f"angular hybrid ({m}, {n})": SphereMethod(
            hybrid.angular_hybrid_estimator, dict(hybrid_shapes), partial(sphere.log_mse_angular_hybrid, r=r, m=m, n=n)
        ),
        f"Gaussian hybrid ({m}, {n}), σ = {sigma_name}": SphereMethod(
            partial(hybrid.normalized_gaussian_hybrid_estimator, sigma=sigma_r / r, r=r),
            dict(hybrid_shapes),
            partial(sphere.log_mse_gaussian_hybrid, r=r, m=m, n=n, sigma=sigma_r / r),
        ),
    }


def exact_relative_error(method: SphereMethod, theta, r: float) -> np.ndarray:
    """ε_{θ,r} = √MSE / SM = exp(½ log MSE − r² cos θ) on S(r) (HRF Def 3.3) from the method's closed form.
    θ: (...) → (...)."""
    theta = _checks.finite_numpy("theta", theta)
    r = _checks.positive_float("r", r)
    return np.exp(sphere.log_relative_error(method.log_mse(theta), theta, r))


def pointwise_errors(
    key_for: Callable[[int], jax.Array],
    thetas,
    r: float,
    make: Callable,
    shapes: Mapping[str, tuple[int, int]],
    draws: int,
    *,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """HRF Figs 2/5 at one radius: ``draws`` independent estimates of SM(x, y) for x, y ∈ ℝ² at each angle of
    ``thetas`` with ‖x‖ = ‖y‖ = r (exact in distribution for any d with iid projections, ``simulation`` docstring).

    Args:
      key_for: angle index i → the JAX key of the draws at ``thetas[i]``.
      thetas: (T,) angles.
      make, shapes: the estimator factory and matrix shapes (:class:`SphereMethod`).
      draws: estimates per angle.
      progress: show a bar over the angles.
    Returns:
      each (T,): ``q05``, ``q95`` (5th and 95th percentiles of the estimates), ``rel_err`` (empirical relative error
      √mean(ŜM − SM)² / SM) and ``se_rel`` (its standard error by the delta method, std(err²)/√R / (2√MSE·SM)).
    """
    thetas = _checks.finite_numpy("thetas", thetas, 1)
    r = _checks.positive_float("r", r)
    draws = _checks.positive_int("draws", draws)
    rows = {"q05": [], "q95": [], "rel_err": [], "se_rel": []}
    for ti, theta in enumerate(bar(thetas, f"Figs 2/5, r = {r:g}", progress, leave=False)):
        x, y = kernels.pair_at_angle(theta, r)
        est = simulation.pointwise_estimates(key_for(ti), x, y, make, shapes, draws)
        sm = np.exp(x @ y)
        mse, mse_se, _, _ = simulation.error_summary(est, sm)
        rows["q05"].append(np.quantile(est, 0.05))
        rows["q95"].append(np.quantile(est, 0.95))
        rows["rel_err"].append(np.sqrt(mse) / sm)
        rows["se_rel"].append(mse_se / (2 * np.sqrt(mse) * sm + 1e-300))
    return {k: np.asarray(v) for k, v in rows.items()}


def random_pair_at_angle(rng: np.random.Generator, d: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors x, y ∈ ℝ^d at angle θ in a random plane: x uniform on the sphere, y = cos θ x + sin θ u with u
    a random unit vector orthogonal to x (Gram–Schmidt). Draws two standard normal d-vectors from ``rng``.
    Returns two (d,) float64 arrays."""
    d = _checks.integer("d", d, low=2)
    theta = _checks.real_number("theta", theta)
    x = rng.normal(size=d)
    x /= np.linalg.norm(x)
    u = rng.normal(size=d)
    u -= (u @ x) * x
    u /= np.linalg.norm(u)
    return x, np.cos(theta) * x + np.sin(theta) * u


def speed_trick_z_scores(
    key_full, key_reduced, x, y, make: Callable, shapes: Mapping[str, tuple[int, int]], draws: int, *, chunk=1000
) -> tuple[float, float]:
    """z-scores of the difference in mean and in MSE between ``draws`` estimates of SM(x, y) at the full pair
    x, y: (d,) and at its 2-D reduction (``simulation.reduce_to_span``), which for iid projections have the same law
    (:mod:`rflib.experiments.simulation`). ``shapes``: name → (rows, 2); the full draws use (rows, d), ``chunk`` draws
    at a time.
    Returns (z_mean, z_mse); |z| ≲ 3 when the two laws agree."""
    _checks.vectors("y", y, dim=_checks.vectors("x", x).shape[-1])
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    shapes_full = {k: (rows, x.shape[0]) for k, (rows, _) in shapes.items()}
    full = simulation.pointwise_estimates(key_full, x, y, make, shapes_full, draws, chunk=chunk)
    x2, y2 = simulation.reduce_to_span(x, y)
    small = simulation.pointwise_estimates(key_reduced, x2, y2, make, shapes, draws)
    sm = np.exp(x @ y)
    a, b = (full - sm) ** 2, (small - sm) ** 2
    z_mse = (a.mean() - b.mean()) / np.hypot(a.std(ddof=1), b.std(ddof=1)) * np.sqrt(a.size)
    z_mean = (full.mean() - small.mean()) / np.hypot(full.std(ddof=1), small.std(ddof=1)) * np.sqrt(full.size)
    return z_mean, z_mse


# --- Table 1: UCI pairs ---------------------------------------------------------------------------------------------


def uci_methods(d: int, *, M: int, m: int, n: int) -> dict[str, tuple[Callable, dict, str]]:
    """HRF Table 1's estimators for d-dimensional inputs: name → (estimator factory, matrix shapes, projection law
    of :data:`rflib.projections.LAWS`). The angular hybrid with (m, n) and orthogonal (HRF-ort) or iid (HRF-iid)
    projections — an orthogonal τ is harmless, only its directions matter —; trigonometric features with M
    projections drawn orthogonal (ORF-reg), Hadamard-structured (ORF-Had, and Hadamard products with χ_D
    lengths: ORF-Had (χ lengths), the ``"horn"`` law), scrambled Halton (Halton-R) or shifted
    Halton (Halton-R (shift), Avron et al.'s randomisation); iid trig and
    iid FAVOR+ as references."""
    d, M, m, n = (_checks.positive_int(k, v) for k, v in (("d", d), ("M", M), ("m", m), ("n", n)))
    hyb_shapes = {"W_pos": (m, d), "W_trig": (m, d), "T": (n, d)}
    return {
        "HRF-ort": (hybrid.angular_hybrid_estimator, hyb_shapes, "orthogonal"),
        "HRF-iid": (hybrid.angular_hybrid_estimator, hyb_shapes, "iid"),
        "ORF-reg": (classic.trig_estimator, {"W": (M, d)}, "orthogonal"),
        "ORF-Had": (classic.trig_estimator, {"W": (M, d)}, "sorf"),
        "ORF-Had (χ lengths)": (classic.trig_estimator, {"W": (M, d)}, "horn"),
        "Halton-R": (classic.trig_estimator, {"W": (M, d)}, "halton"),
        "Halton-R (shift)": (classic.trig_estimator, {"W": (M, d)}, "halton-shift"),
        "iid trig (reference)": (classic.trig_estimator, {"W": (M, d)}, "iid"),
        "iid FAVOR+ (reference)": (classic.hyperbolic_estimator, {"W": (M, d)}, "iid"),
    }


def projection_flop_matched_m(M: int, n: int, d: int) -> int:
    """Largest m with d(2m + n) + 4mn ≤ M·d: the angular hybrid's feature-map cost (HRF App D.4,
    ``hybrid.angular_hybrid_cost``) within the M·d multiply-adds of a regular map's projections."""
    M, n, d = (_checks.positive_int(k, v) for k, v in (("M", M), ("n", n), ("d", d)))
    return (M * d - n * d) // (2 * d + 4 * n)


def random_pairs(rng: np.random.Generator, n_points: int, n_pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (i, j) of ``n_pairs`` random pairs of distinct points among ``n_points``, i uniform and j ≠ i
    uniform among the others (a fixed count, so one compile per study): the pairs of every Table 1 study."""
    i = rng.integers(0, n_points, size=n_pairs)
    return i, (i + rng.integers(1, n_points, size=n_pairs)) % n_points


def uci_mse_study(
    Z,
    *,
    pair_rng: Callable[[int], np.random.Generator],
    draw_key: Callable[[int, str], jax.Array],
    reps: int,
    n_pairs: int,
    draws: int,
    M: int,
    m: int,
    n: int,
    methods=None,
    chunk: int = 250,
    progress: bool = False,
) -> dict:
    """HRF Table 1 on one data set: MSE of every :func:`uci_methods` estimator (or of those named in ``methods``) on
    random pairs of rows of Z.

    Each repetition draws ``n_pairs`` pairs (i, j ≠ i) from ``pair_rng(rep)`` and estimates every pair's MSE from
    ``draws`` fresh feature draws (key ``draw_key(rep, name)``); the MSE of a repetition is the mean over its pairs.
    On the same pairs it evaluates the exact MSEs of the iid estimators: trig and FAVOR+ (Lemma 2.2), the angular
    hybrid (Theorem D.1) with (m, n) and with the projection-FLOP-matched m* (:func:`projection_flop_matched_m`),
    and of ORF-reg by quadrature (:func:`rflib.moments.classic.log_mse_trig_orthogonal`).

    Args:
      Z: (N, d) points (the notebook's are z-scored and on the unit sphere).
      progress: show a bar over the repetitions.
    Returns:
      ``mse``: name → (mean, std) over repetitions ×10³; ``closed_form``: name → mean over repetitions ×10³ (rows
      ``"iid trig"``, ``"iid FAVOR+"``, ``"HRF-iid (m, n)"``, ``"HRF-iid (m*, n), projection-FLOP match"``,
      ``"ORF-reg"``);
      ``mse_per_rep`` and ``closed_form_per_rep``: the same, one value per repetition (for paired comparisons on
      the repetition's pairs); ``squared_bias``: name → (mean, std) over repetitions ×10³ of the mean over pairs of
      the estimator's squared bias, estimated without bias from the draws as (mean − SM)² − variance/draws (≈ 0 for
      an unbiased estimator; the rest of the MSE is its variance), and ``squared_bias_per_rep`` one value per
      repetition; ``m_alt``: m*.
    """
    Z = _checks.finite_numpy("Z", Z, 2)
    reps = _checks.positive_int("reps", reps)
    n_pairs = _checks.positive_int("n_pairs", n_pairs)
    all_methods = uci_methods(Z.shape[1], M=M, m=m, n=n)
    for name in methods or ():
        _checks.one_of("methods", name, tuple(all_methods))
    methods = {name: all_methods[name] for name in (methods or all_methods)}
    per_rep = {name: [] for name in methods}
    bias_per_rep = {name: [] for name in methods}
    m_alt = projection_flop_matched_m(M, n, Z.shape[1])
    alt_name = f"HRF-iid (m*, {n}), projection-FLOP match"
    closed_rows = {"iid trig": [], "iid FAVOR+": [], f"HRF-iid ({m}, {n})": [], alt_name: [], "ORF-reg": []}
    for rep in bar(range(reps), f"Table 1, {Z.shape[0]} points in d = {Z.shape[1]}", progress):
        rng = pair_rng(rep)
        i, j = random_pairs(rng, Z.shape[0], n_pairs)
        X, Y = Z[i], Z[j]
        sm = np.exp(np.sum(X * Y, axis=1))
        closed_rows["iid trig"].append(float(np.mean(moments.classic.mse_trig(X, Y, M))))
        closed_rows["iid FAVOR+"].append(float(np.mean(moments.classic.mse_hyperbolic(X, Y, M))))
        closed_rows["ORF-reg"].append(float(np.mean(np.exp(moments.classic.log_mse_trig_orthogonal(X, Y, M)))))
        for m_h, row in ((m, f"HRF-iid ({m}, {n})"), (m_alt, alt_name)):
            log_mse = moments.hybrid.log_mse_angular_hybrid(X, Y, m_h, n)
            closed_rows[row].append(float(np.mean(np.exp(np.asarray(log_mse)))))
        for name, (make, shapes, law) in methods.items():
            est = simulation.paired_estimates(draw_key(rep, name), X, Y, make, shapes, draws, law=law, chunk=chunk)
            per_rep[name].append(float(np.mean((est - sm) ** 2)))
            variance = np.var(est, axis=0, ddof=1) if draws > 1 else np.zeros_like(sm)
            bias_per_rep[name].append(float(np.mean((np.mean(est, axis=0) - sm) ** 2 - variance / draws)))
    return {
        "mse": {name: (1e3 * np.mean(v), 1e3 * np.std(v)) for name, v in per_rep.items()},
        "closed_form": {name: 1e3 * np.mean(v) for name, v in closed_rows.items()},
        "mse_per_rep": {name: [1e3 * x for x in v] for name, v in per_rep.items()},
        "closed_form_per_rep": {name: [1e3 * x for x in v] for name, v in closed_rows.items()},
        "squared_bias": {name: (1e3 * np.mean(v), 1e3 * np.std(v)) for name, v in bias_per_rep.items()},
        "squared_bias_per_rep": {name: [1e3 * x for x in v] for name, v in bias_per_rep.items()},
        "m_alt": m_alt,
    }


def uci_fixed_projection_mse(
    Z, W, *, pair_rng: Callable[[int], np.random.Generator], reps: int, n_pairs: int
) -> list[float]:
    """MSE ×10³ of the trigonometric estimator (HRF eq 2) with one *fixed* projection matrix W: (M, d) — a
    deterministic estimator, e.g. an unrandomised Halton sequence — on the pairs :func:`uci_mse_study` draws from the
    same ``pair_rng``. Each pair's error is exact (no feature draws), so the MSE is the mean squared bias over pairs.

    Returns the MSE ×10³ of each of the ``reps`` repetitions, as :func:`uci_mse_study`'s ``mse_per_rep`` entries.
    """
    Z = _checks.finite_numpy("Z", Z, 2)
    W = _checks.finite_numpy("W", W, 2)
    if W.shape[1] != Z.shape[1]:
        raise ValueError(f"W has {W.shape[1]} columns but Z has {Z.shape[1]}: W must be (M, {Z.shape[1]})")
    reps = _checks.positive_int("reps", reps)
    n_pairs = _checks.positive_int("n_pairs", n_pairs)
    estimator = classic.trig_estimator(W)
    per_rep = []
    for rep in range(reps):
        rng = pair_rng(rep)
        i, j = random_pairs(rng, Z.shape[0], n_pairs)
        X, Y = Z[i], Z[j]
        error = np.asarray(estimator.paired(X, Y)) - np.exp(np.sum(X * Y, axis=1))
        per_rep.append(float(np.mean(error**2)))
    return [1e3 * x for x in per_rep]


def _min_max(X: np.ndarray) -> np.ndarray:
    span = X.max(axis=0) - X.min(axis=0)
    return (X - X.min(axis=0)) / np.where(span > 0, span, 1.0)


def _unit_rows(X: np.ndarray) -> np.ndarray:
    return X / np.linalg.norm(X, axis=1, keepdims=True)


TABLE1_PREPROCESSINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "z-score, unit norm (ours)": datasets.standardize_to_sphere,  # the main table's own preprocessing
    "raw, unit norm": _unit_rows,
    "min–max, unit norm": lambda X: _unit_rows(_min_max(X)),
    "z-score ÷ √d (mean norm ≈ 1)": lambda X: datasets.zscore_columns(X) / np.sqrt(X.shape[1]),
    "min–max ÷ √d": lambda X: _min_max(X) / np.sqrt(X.shape[1]),
}
"""Readings of HRF Table 1's unstated preprocessing, raw (N, d) → (N, d): per-column z-score or min–max scaling,
each point then put on the unit sphere or the whole set divided by √d (norms then vary from point to point)."""


def hybrid_trig_floor(theta, *, M: int, m: int, n: int) -> np.ndarray:
    """Lower bound on MSE(angular hybrid (m, n), iid) / MSE(iid trig features, M) at the angle θ, for any norms.

    With independent bases and λ̂ (HRF eq 12, Theorem 3.1 case I) the hybrid's MSE is E λ̂² MSE_pos(m) +
    E(1 − λ̂)² MSE_trig(m) ≥ E(1 − λ̂)² (M/m) MSE_trig(M), since the trig MSE of m iid features is M/m times that of M
    (Lemma 2.2). With Lemma 3.2's E(1 − λ̂)² = (1 − p)(1 − p + p/n), p = θ/π. Shape of θ → same shape.
    """
    p = np.asarray(theta, dtype=np.float64) / np.pi
    return (M / m) * (1 - p) * (1 - p + p / n)


def hybrid_can_beat_trig_above(*, M: int, m: int, n: int) -> float:
    """The angle (radians) below which :func:`hybrid_trig_floor` ≥ 1: the angular hybrid (m, n) cannot have a lower MSE
    than M iid trig features at any pair with a smaller angle, whatever the norms. Root of (M/m)u(u + (1 − u)/n) = 1
    in u = 1 − θ/π (a quadratic); for (M/8, 8), θ* = 0.687π ≈ 123.6°."""
    a, b = (M / m) * (1 - 1 / n), (M / m) / n  # (M/m)(u² (1 − 1/n) + u/n) = 1
    u = (-b + np.sqrt(b * b + 4 * a)) / (2 * a) if a > 0 else 1.0 / b
    return float(np.pi * (1 - min(u, 1.0)))


def uci_exact_mse(Z, *, rng: np.random.Generator, n_pairs: int, M: int, m: int, n: int) -> dict[str, float]:
    """Exact (closed-form) MSEs of HRF Table 1's iid estimators on ``n_pairs`` random pairs (i ≠ j) of rows of Z,
    for the ablation of the table's unstated choices: iid trig and FAVOR+ with M features (Lemma 2.2), the angular
    hybrid with (m, n) (Theorem D.1), and trig features with M orthogonal projections (ORF-reg, by quadrature:
    :func:`rflib.moments.classic.log_mse_trig_orthogonal`), each the mean over pairs ×10³; ``floor``: the mean of
    :func:`hybrid_trig_floor` over the pairs; ``beyond``: the fraction of pairs whose angle exceeds
    :func:`hybrid_can_beat_trig_above`; ``mean_cos``: the mean cosine of the pairs."""
    Z = _checks.finite_numpy("Z", Z, 2)
    i, j = random_pairs(rng, Z.shape[0], n_pairs)
    X, Y = Z[i], Z[j]
    cos = np.sum(X * Y, axis=1) / (np.linalg.norm(X, axis=1) * np.linalg.norm(Y, axis=1))
    theta = np.arccos(np.clip(cos, -1.0, 1.0))
    hyb = np.exp(np.asarray(moments.hybrid.log_mse_angular_hybrid(X, Y, m, n)))
    return {
        "iid trig": 1e3 * float(np.mean(moments.classic.mse_trig(X, Y, M))),
        "iid FAVOR+": 1e3 * float(np.mean(moments.classic.mse_hyperbolic(X, Y, M))),
        "ORF-reg": 1e3 * float(np.mean(np.exp(moments.classic.log_mse_trig_orthogonal(X, Y, M)))),
        "HRF-iid": 1e3 * float(np.mean(hyb)),
        "floor": float(np.mean(hybrid_trig_floor(theta, M=M, m=m, n=n))),
        "beyond": float(np.mean(theta > hybrid_can_beat_trig_above(M=M, m=m, n=n))),
        "mean_cos": float(np.mean(cos)),
    }


def radius_for_orf_mse(Z, target: float, *, rng_seed: int, n_pairs: int, M: int, bracket=(0.25, 2.0)) -> float:
    """The common norm r at which trig features with M orthogonal projections (ORF-reg) have the exact mean MSE
    ``target`` (×10³) on ``n_pairs`` random pairs of the rows of Z rescaled to norm r (:func:`uci_exact_mse`'s pairs
    from ``np.random.default_rng(rng_seed)``, the same at every r), by Brent's method in ``bracket``; a target
    outside the MSEs at the bracket's ends raises. (The MSE rises with r wherever we computed it, so the root is the
    only one there; Brent's method does not prove that.) Z: (N, d) points of norm 1."""
    from scipy import optimize

    Z = _checks.finite_numpy("Z", Z, 2)
    if not np.allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-9):
        raise ValueError("Z must hold points of norm 1 (e.g. datasets.standardize_to_sphere): r rescales them")
    target = _checks.positive_float("target", target)

    i, j = random_pairs(np.random.default_rng(rng_seed), Z.shape[0], n_pairs)

    def gap(r):
        orf = np.exp(moments.classic.log_mse_trig_orthogonal(r * Z[i], r * Z[j], M))
        return 1e3 * float(np.mean(orf)) - target

    low, high = bracket
    if gap(low) > 0 or gap(high) < 0:
        raise ValueError(f"target must lie between the ORF-reg MSEs at r = {low} and r = {high}, got {target}")
    return float(optimize.brentq(gap, low, high, xtol=1e-8))


# --- Fig 6 / Table 3: HRF-C on clustered data ---------------------------------------------------------------------

CLUSTER_METHODS = ("HRF-C (eq 88, clipped)", "HRF-C (moment A, extension)", "FAVOR+", "trig")


def hrfc_mse_study(
    X_all,
    Y_all,
    *,
    eval_rng: np.random.Generator,
    draw_key: Callable[[int, int], jax.Array],
    ms,
    trials: int,
    n_eval: int,
    kmeans_seed: int,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """HRF Fig 6 / Table 3 on one clustered data set: empirical MSE of the :data:`CLUSTER_METHODS` per m and trial.

    k-means (k = 2, ``kmeans_seed``) on the queries and on the keys gives the centres; HRF-C
    (``cluster.diagonal_ce_cluster_estimator``) uses eq 88's clipped A of each centre pair
    (``cluster.real_diagonal_A``) or the moment-matched A of each cluster pair (``cluster.moment_diagonal_A``, an
    extension), with the same projections (2, 2, m, d); FAVOR+ and trig have m projections. ``n_eval`` queries and
    then ``n_eval`` keys are chosen without replacement by ``eval_rng``; each (m, trial) draws its matrices from
    ``draw_key(m, trial)`` and the MSE is the mean over the n_eval × n_eval pairs.

    Args:
      X_all: (N_x, d) queries; Y_all: (N_y, d) keys.
      ms: the feature counts m. progress: show a bar over the m.
    Returns:
      name → (len(ms), trials) MSEs.
    """
    from sklearn.cluster import KMeans  # only this study needs scikit-learn

    X_all = _checks.finite_numpy("X_all", X_all, 2)
    Y_all = _checks.finite_numpy("Y_all", Y_all, 2)
    if Y_all.shape[1] != X_all.shape[1]:
        raise ValueError(f"X_all and Y_all must have the same dimension, got {X_all.shape} and {Y_all.shape}")
    ms = [_checks.positive_int("ms", v) for v in ms]
    trials = _checks.positive_int("trials", trials)
    n_eval = _checks.integer("n_eval", n_eval, low=1, high=min(X_all.shape[0], Y_all.shape[0]))
    km_x = KMeans(n_clusters=2, n_init=10, random_state=kmeans_seed).fit(X_all)
    km_y = KMeans(n_clusters=2, n_init=10, random_state=kmeans_seed).fit(Y_all)
    cx, cy = km_x.cluster_centers_, km_y.cluster_centers_
    A_eq88 = [[cluster.real_diagonal_A(cx[i], cy[j]) for j in range(2)] for i in range(2)]
    A_moment = [
        [cluster.moment_diagonal_A(X_all[km_x.labels_ == i], Y_all[km_y.labels_ == j]) for j in range(2)]
        for i in range(2)
    ]
    X = X_all[eval_rng.choice(X_all.shape[0], n_eval, replace=False)]
    Y = Y_all[eval_rng.choice(Y_all.shape[0], n_eval, replace=False)]
    exact = np.exp(X @ Y.T)
    res = {name: np.zeros((len(ms), trials)) for name in CLUSTER_METHODS}
    for mi, m in enumerate(bar(ms, f"Fig 6, d = {X.shape[1]}, m", progress)):
        for t in range(trials):
            k = jax.random.split(draw_key(m, t), 3)
            Ws = jax.random.normal(k[0], (2, 2, m, X.shape[1]))
            ests = {
                CLUSTER_METHODS[0]: cluster.diagonal_ce_cluster_estimator(Ws, A_eq88, cx, cy),
                CLUSTER_METHODS[1]: cluster.diagonal_ce_cluster_estimator(Ws, A_moment, cx, cy),
                "FAVOR+": classic.hyperbolic_estimator(jax.random.normal(k[1], (m, X.shape[1]))),
                "trig": classic.trig_estimator(jax.random.normal(k[2], (m, X.shape[1]))),
            }
            for name, est in ests.items():
                res[name][mi, t] = float(np.mean((np.asarray(est.estimate(X, Y)) - exact) ** 2))
    return res


# --- Fig 4: FLOP accounting ---------------------------------------------------------------------------------------


def attention_flops(d_qk: int, *, m: int = 8, n: int = 8, favor_projections: int = 256) -> dict[str, dict[str, int]]:
    """Multiply-adds per token of linear attention with d_QK = d_v = ``d_qk`` (HRF §4.4, Fig 4): an angular hybrid
    (m, n) (``hybrid.angular_hybrid_cost``, App D.4) against FAVOR+ with ``favor_projections`` projections, i.e.
    2·favor_projections features (``hybrid.regular_cost``). Attention with F features costs 2·F·d_v per token.

    Returns name (``"angular hybrid (m, n)"``, ``"FAVOR+ (P)"``) → {``features``, ``feature_flops``,
    ``attention_flops``, ``total``}."""
    d_qk = _checks.positive_int("d_qk", d_qk)
    favor_projections = _checks.positive_int("favor_projections", favor_projections)
    costs = {
        f"angular hybrid ({m}, {n})": hybrid.angular_hybrid_cost(m, n, d_qk),
        f"FAVOR+ ({favor_projections})": hybrid.regular_cost(2 * favor_projections, d_qk),
    }
    out = {}
    for name, cost in costs.items():
        attn = 2 * cost["features"] * d_qk
        out[name] = {
            "features": cost["features"],
            "feature_flops": cost["total_flops"],
            "attention_flops": attn,
            "total": cost["total_flops"] + attn,
        }
    return out
