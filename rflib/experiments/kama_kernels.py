"""Monte Carlo studies of KAMA-NNs' kernel claims (§2–§6.1): the cost crossover, Theorem 1's MSE ratios and the
first-order gain law, the counterexamples to Theorem 1 as printed, the number of Givens rotations KAMA needs
(Theorem 2), Figs 1–2 on real data and Theorem 3's descent bound.

Every study takes its random streams from the caller: a key-deriving callable (``key(d, method)`` → a JAX key) or a
numpy generator, so that a notebook names each stream (``partial(keys, "theorem 1 draws")``). Results are
plain dicts of numbers and numpy arrays; a Monte Carlo summary is ``simulation.error_summary``'s (MSE, its standard
error, mean error, its standard error).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

import numpy as np

from rflib import _checks, kama, kernels, projections
from rflib.experiments import simulation
from rflib.experiments.progress_bars import bar
from rflib.features import png
from rflib.moments import png as png_moments

METHODS = ("urn", "orn", "kama")
"""The laws Theorems 1–2 compare: iid rows (URN), Haar-orthogonal blocks (ORN) and Givens products (KAMA)."""


def _dims(name: str, dims, low: int = 2) -> tuple[int, ...]:
    dims = tuple(dims)
    if not dims:
        raise ValueError(f"{name} must hold at least one dimension")
    return tuple(_checks.integer(f"{name}[{i}]", d, low=low) for i, d in enumerate(dims))


def _methods(methods) -> tuple[str, ...]:
    methods = tuple(methods)
    if not methods:
        raise ValueError("methods must name at least one law")
    return tuple(_checks.one_of("methods", m, png.LAWS) for m in methods)


# --- §2, §4: counted cost ------------------------------------------------------------------------------------------


class CostCrossover(NamedTuple):
    """:func:`cost_crossover`'s result: per d of the grid, k and the two KAMA / dense ratios; the two crossings."""

    k: np.ndarray
    flop_ratio: np.ndarray
    storage_ratio: np.ndarray
    flop_cross: int
    storage_cross: int


def cost_crossover(dims) -> CostCrossover:
    """KAMA layers with k = ⌈5 d ln d⌉ rotations (:func:`rflib.kama.rotations_for`) against dense layers (§2, §4).

    dims: (n,) ascending integers ≥ 2. Returns k: (n,), flop_ratio = 6k / 2d²: (n,), storage_ratio = (3k + d) / d²:
    (n,), and flop_cross, storage_cross: the first d of ``dims`` where each ratio is below 1 (the first entry of
    ``dims`` if none is).
    """
    d_grid = np.asarray(_dims("dims", dims))
    ks = np.array([kama.rotations_for(int(d)) for d in d_grid])
    flop_ratio = 6 * ks / (2 * d_grid**2)
    storage_ratio = (3 * ks + d_grid) / d_grid**2
    flop_cross = int(d_grid[np.argmax(flop_ratio < 1)])
    storage_cross = int(d_grid[np.argmax(storage_ratio < 1)])
    return CostCrossover(ks, flop_ratio, storage_ratio, flop_cross, storage_cross)


def wins_from(timings: Mapping, name: str, batch: int, dims, baseline: str = "dense"):
    """The smallest measured d from which ``name`` beats ``baseline`` at every larger measured d (one noisy point
    cannot make a win), or None.  timings: {(implementation, d, batch): seconds}; dims: the measured d, ascending."""
    dims = _dims("dims", dims, low=1)
    missing = [d for d in dims if (name, d, batch) not in timings or (baseline, d, batch) not in timings]
    if missing:
        raise ValueError(f"timings has no ({name!r} or {baseline!r}, d, {batch}) entry for d = {missing}")
    wins = [timings[name, d, batch] < timings[baseline, d, batch] for d in dims]
    return next((dims[i] for i in range(len(dims)) if all(wins[i:])), None)


# --- Theorem 1: MSE ratios of the angular estimator, the gain law and its counterexamples -------------------------


def theorem1_angular_ratios(
    key: Callable, dims, thetas, draws: int, *, methods=METHODS, progress: bool = False
) -> dict:
    """MSE / MSE_URN(exact) of the angular (sgn) PNG estimator with m = d rows at axis-aligned pairs x = e₁,
    y = cos θ e₁ + sin θ e₂ (where a poorly mixed Kac walk shows), Theorems 1–2.

    Args:
      key: ``key(d, method)`` → the JAX key of that law's ``draws`` matrices (d, d), shared by every θ at that d.
      dims: the dimensions d; thetas: the angles θ (used as dict keys as given).
      draws: independent matrices per (d, method).
    Returns:
      {(method, d, θ): (ratio, its standard error)} plus ("law", d, θ): the first-order law
      MSE_ORN / MSE_URN = 1 − (d−1)/d · ‖H‖²_F / (2 Var F) (its s.e. 0) and ("slack", d, θ): 0.5/d² in units of
      MSE_URN, the allowance for the law's O(d⁻²) terms.
    """
    key = _checks.callable_arg("key", key)
    dims = _dims("dims", dims)
    thetas = list(thetas)
    for theta in thetas:
        _checks.real_number("thetas", theta, low=0.0, high=math.pi)
    draws = _checks.positive_int("draws", draws)
    methods = _methods(methods)
    ratio_sim = {}
    for d in bar(dims, "Theorem 1, angular", progress):
        sampled = {m: projections.sample(png.LAWS[m], key(d, m), d, d, draws=draws) for m in methods}
        for theta in thetas:
            x, y = kernels.pair_at_angle(theta, d=d)
            law = png_moments.gain_law("sgn", x, y)
            for method, W in sampled.items():
                sq, se, *_ = simulation.error_summary(png.estimates("sgn", W, x, y), law.kernel)
                ratio_sim[method, d, theta] = (sq / law.mse_iid(d), se / law.mse_iid(d))
            ratio_sim["law", d, theta] = (law.mse_orthogonal(d, d) / law.mse_iid(d), 0.0)
            ratio_sim["slack", d, theta] = (0.5 / d**2 / law.mse_iid(d), 0.0)  # O(d⁻²) terms, in units of MSE_URN
    return ratio_sim


def theorem1_law_deviations(ratio_sim: Mapping, dims, thetas) -> dict:
    """How far ORN's measured ratio lies from the first-order law beyond the 0.5/d² slack, in standard errors:
    (|ORN − law| − slack) / s.e.(ORN) for every (d, round(θ, 3)).  ratio_sim: :func:`theorem1_angular_ratios`'s."""
    dims = _dims("dims", dims)
    thetas = list(thetas)
    for d in dims:
        for t in thetas:
            if any((kind, d, t) not in ratio_sim for kind in ("orn", "law", "slack")):
                raise ValueError(f"ratio_sim has no orn/law/slack entry for d = {d}, θ = {t}")
    return {
        (d, round(float(t), 3)): (
            abs(ratio_sim["orn", d, t][0] - ratio_sim["law", d, t][0]) - ratio_sim["slack", d, t][0]
        )
        / ratio_sim["orn", d, t][1]
        for d in dims
        for t in thetas
    }


def orthogonal_gain_table(names: Iterable[str], x, y, key: Callable, draws: int) -> dict:
    """Measured MSE_URN − MSE_ORN against the first-order law (d − 1)‖H‖²_F / (2d²) for m = d rows, per activation
    (our derivation replacing Theorem 1's K(ε)/d, written out in notebook 07 §3; ERRATA.md KAMA-E2).  x, y: (d,).

    One stack of ``draws`` iid matrices (key ``key("urn")``) and one of Haar-orthogonal matrices (``key("orn")``),
    both (draws, d, d), serve every activation. Returns {name: {"kernel", "urn", "urn_se", "orn", "orn_se", "gap",
    "gap_se", "predicted"}}, gap_se = √(urn_se² + orn_se²) (independent stacks).
    """
    names = list(names)
    for name in names:
        png.activation(name)
    x = _checks.finite_numpy("x", x, 1)
    y = _checks.finite_numpy("y", y, 1)
    key = _checks.callable_arg("key", key)
    draws = _checks.positive_int("draws", draws)
    d = x.size
    W_urn = projections.sample("iid", key("urn"), d, d, draws=draws)
    W_orn = projections.sample("orthogonal", key("orn"), d, d, draws=draws)
    table = {}
    for name in names:
        law = png_moments.gain_law(name, x, y)
        urn, urn_se, *_ = simulation.error_summary(png.estimates(name, W_urn, x, y), law.kernel)
        orn, orn_se, *_ = simulation.error_summary(png.estimates(name, W_orn, x, y), law.kernel)
        gap, gap_se = urn - orn, math.hypot(urn_se, orn_se)
        predicted = (d - 1) * law.h_norm_sq / (2 * d * d)
        table[name] = dict(
            kernel=law.kernel,
            urn=urn,
            urn_se=urn_se,
            orn=orn,
            orn_se=orn_se,
            gap=gap,
            gap_se=gap_se,
            predicted=predicted,
        )
    return table


def orthogonal_pair_covariances(
    name: str, key: Callable, dims, n_pairs: int, theta: float = math.pi / 2, *, progress: bool = False
) -> dict:
    """Cov(F(w₁), F(w₂)) of two rows of one ORN block (:func:`rflib.moments.png.orthogonal_pair_covariance`) at the
    axis-aligned pair at angle θ, per dimension, with the first-order ‖H‖²_F there.  MSE_ORN − MSE_URN = (d − 1)c/m,
    so c > 0 with H = 0 contradicts Theorem 1 (counterexample 2: f = u² − 1, x ⊥ y).

    key: ``key(d)`` → the JAX key at d.  Returns {d: (c, its standard error, ‖H‖²_F)}.
    """
    png.activation(name)
    key = _checks.callable_arg("key", key)
    dims = _dims("dims", dims)
    n_pairs = _checks.positive_int("n_pairs", n_pairs)
    out = {}
    for d in bar(dims, "He₂ covariance" if name == "he2" else f"{name} covariance", progress):
        x, y = kernels.pair_at_angle(theta, d=d)
        cov, se = png_moments.orthogonal_pair_covariance(name, key(d), x, y, n_pairs)
        out[d] = (cov, se, png_moments.gain_law(name, x, y).h_norm_sq)
    return out


def parallel_input_mse(key, x, draws: int, methods=METHODS) -> dict:
    """MSE of the angular estimator at y = 2x (K = 1 exactly) with m = d rows, per law: every law gives 0, so
    Theorem 1's MSE_ORN ≤ MSE_URN − K(ε)/d would need a negative MSE (counterexample 1).  x: (d,).

    All laws draw from the same ``key``. Returns {method: MSE}.
    """
    x = _checks.finite_numpy("x", x, 1)
    draws = _checks.positive_int("draws", draws)
    methods = _methods(methods)
    d = x.size
    estimates = {
        m: png.estimates("sgn", projections.sample(png.LAWS[m], key, d, d, draws=draws), x, 2 * x) for m in methods
    }
    return {m: float(simulation.error_summary(est, 1.0)[0]) for m, est in estimates.items()}


# --- Theorem 2: how many rotations does KAMA need? ---------------------------------------------------------------


def kama_k_sweep(d: int, theta: float, cs, draws: int, key: Callable, dense_rng, *, progress: bool = False) -> dict:
    """The angular estimator with m = d KAMA rows of k = max(1, round(c · d ln d)) rotations, per c (Theorem 2).

    Inputs: the axis-aligned pair at angle θ (x = e₁: the worst case for a poorly mixed walk) and a random dense
    pair at the same angle (an orthonormal basis of a (d, 2) Gaussian from ``dense_rng``, a numpy generator).
    key: ``key("kama", k)`` → the JAX key of the (draws, d, d) stack with k rotations; ``key("orn")``: ORN's stack.

    Returns {"kernel": K = 1 − 2θ/π, "urn_variance": Var F = 1 − K² (MSE_URN = Var F / d), "orn": ORN's summary at
    the axis pair, "sweep": {c: {"k", "axis", "random" (summaries), "untouched": d(1 − 2/d)^k (expected coordinates
    no rotation touched), "fourth": E[(Me₀)₀⁴] of the first row's direction (Haar: 3/(d(d+2)))}}}.
    """
    d = _checks.integer("d", d, low=2)
    theta = _checks.real_number("theta", theta, low=0.0, high=math.pi)
    cs = list(cs)
    for c in cs:
        _checks.positive_float("cs", c)
    draws = _checks.positive_int("draws", draws)
    key = _checks.callable_arg("key", key)
    x_axis, y_axis = kernels.pair_at_angle(theta, d=d)
    Q, _ = np.linalg.qr(dense_rng.normal(size=(d, 2)))
    x_rand, y_rand = Q[:, 0], math.cos(theta) * Q[:, 0] + math.sin(theta) * Q[:, 1]
    K = png_moments.kernel("sgn", x_axis, y_axis)
    orn_W = projections.sample("orthogonal", key("orn"), d, d, draws=draws)
    orn_ref = simulation.error_summary(png.estimates("sgn", orn_W, x_axis, y_axis), K)
    sweep = {}
    for c in bar(cs, "k sweep", progress):
        k = max(1, round(c * d * math.log(d)))
        W = projections.sample("givens", key("kama", k), d, d, draws=draws, rotations=k)
        sweep[c] = {
            "k": k,
            "axis": simulation.error_summary(png.estimates("sgn", W, x_axis, y_axis), K),
            "random": simulation.error_summary(png.estimates("sgn", W, x_rand, y_rand), K),
            "untouched": d * (1 - 2 / d) ** k,
            "fourth": float(np.mean((np.asarray(W[:, 0, 0]) / np.linalg.norm(np.asarray(W[:, 0]), axis=-1)) ** 4)),
        }
    return {"kernel": K, "urn_variance": 1 - K**2, "orn": orn_ref, "sweep": sweep}


# --- Figs 1–2: the angular kernel on real data ---------------------------------------------------------------------


def _datasets(datasets: Mapping) -> None:
    if not datasets:
        raise ValueError("datasets must hold at least one (name → (n, d) points) entry")
    for name, X in datasets.items():
        if np.ndim(X) != 2 or len(X) < 2:
            raise ValueError(f"datasets[{name!r}] must be (n, d) points with n ≥ 2, got shape {np.shape(X)}")


def pointwise_mse_by_blocks(
    datasets: Mapping, pair_rng: Callable, key: Callable, blocks, pairs: int, draws: int, *, progress: bool = False
) -> dict:
    """Fig 1: mean pointwise MSE of the angular estimator over random pairs of distinct points, for m = b·d rows in
    b independent blocks of every law of :data:`rflib.features.png.LAWS`.

    Args:
      datasets: {name: X (n, d)} (already preprocessed).
      pair_rng: ``pair_rng(name)`` → numpy generator of the pairs: i uniform, j = i + U{1, …, n−1} mod n.
      key: ``key(name, b, method)`` → JAX key of that (draws, b·d, d) stack.
    Returns:
      {(name, b, method): (MSE averaged over pairs and draws, its standard error over the draws)}.
    """
    _datasets(datasets)
    pair_rng, key = _checks.callable_arg("pair_rng", pair_rng), _checks.callable_arg("key", key)
    blocks = _dims("blocks", blocks, low=1)
    pairs = _checks.positive_int("pairs", pairs)
    draws = _checks.positive_int("draws", draws)
    if draws < 2:
        raise ValueError(f"draws must be at least 2 (the standard error needs two draws), got {draws}")
    out = {}
    for name, X in datasets.items():
        n, d = X.shape
        rng = pair_rng(name)
        i = rng.choice(n, size=pairs)
        j = (i + rng.integers(1, n, size=pairs)) % n
        K_pairs = np.array([png_moments.kernel("sgn", X[a], X[b]) for a, b in zip(i, j, strict=True)])
        for b in bar(blocks, f"Fig 1, {name}", progress):
            for method in png.LAWS:
                W = projections.sample(png.LAWS[method], key(name, b, method), b * d, d, draws=draws)
                est = np.asarray(png.pair_estimates("sgn", W, X[i], X[j]))
                sq = (est - K_pairs) ** 2
                per_draw = sq.mean(1)
                out[name, b, method] = (per_draw.mean(), per_draw.std(ddof=1) / math.sqrt(len(per_draw)))
    return out


def gram_error_by_blocks(
    datasets: Mapping, point_rng: Callable, key: Callable, blocks, points: int, draws: int, *, progress: bool = False
) -> dict:
    """Fig 2: relative Frobenius error ‖K − K̂‖_F / ‖K‖_F of the angular kernel matrix on N = min(points, n) random
    points (a permutation from ``point_rng(name)``), m = b·d rows in b blocks of every law of
    :data:`rflib.features.png.LAWS`, ``draws`` matrices from ``key(name, b, method)``.

    datasets: {name: X (n, d)}.  Returns {(name, b, method): (mean error, its standard error, N, d)}.
    """
    _datasets(datasets)
    point_rng, key = _checks.callable_arg("point_rng", point_rng), _checks.callable_arg("key", key)
    blocks = _dims("blocks", blocks, low=1)
    points = _checks.positive_int("points", points)
    draws = _checks.positive_int("draws", draws)
    if draws < 2:
        raise ValueError(f"draws must be at least 2 (the standard error needs two draws), got {draws}")
    out = {}
    for name, X in bar(datasets.items(), "Fig 2 datasets", progress):
        X = X[point_rng(name).permutation(len(X))[:points]]
        n, d = X.shape
        K_exact = png_moments.gram("sgn", X)
        for b in blocks:
            for method in png.LAWS:
                W = projections.sample(png.LAWS[method], key(name, b, method), b * d, d, draws=draws)
                errs = simulation.gram_errors("sgn", W, X, K_exact)
                out[name, b, method] = (errs.mean(), errs.std(ddof=1) / math.sqrt(len(errs)), n, d)
    return out


def method_series(results: Mapping, name, blocks, methods=tuple(png.LAWS)) -> dict:
    """{method: [results[name, b, method] for b in blocks]}: one dataset's rows per law, for plotting over b."""
    blocks = _dims("blocks", blocks, low=1)
    _results_cover(results, [name], blocks, methods)
    return {m: [results[name, b, m] for b in blocks] for m in methods}


def mean_ratio_to_urn(results: Mapping, names, blocks, methods=("orn", "kama", "horn")) -> dict:
    """Mean over b of value / value_URN for every (dataset, method): {"name, method": ratio}.  results: the output of
    :func:`pointwise_mse_by_blocks` or :func:`gram_error_by_blocks` (the value is entry 0)."""
    names, blocks = list(names), _dims("blocks", blocks, low=1)
    _results_cover(results, names, blocks, ("urn", *methods))
    return {
        f"{name}, {method}": float(np.mean([results[name, b, method][0] / results[name, b, "urn"][0] for b in blocks]))
        for name in names
        for method in methods
    }


def largest_relative_difference(results: Mapping, names, blocks, method: str = "kama", reference: str = "orn"):
    """max over (dataset, b) of |value_method − value_reference| / value_reference (Fig 2's "almost identical")."""
    names, blocks = list(names), _dims("blocks", blocks, low=1)
    _results_cover(results, names, blocks, (method, reference))
    return max(
        abs(results[name, b, method][0] - results[name, b, reference][0]) / results[name, b, reference][0]
        for name in names
        for b in blocks
    )


def _results_cover(results: Mapping, names, blocks, methods) -> None:
    if not names:
        raise ValueError("names must hold at least one dataset")
    missing = [(n, b, m) for n in names for b in blocks for m in methods if (n, b, m) not in results]
    if missing:
        raise ValueError(f"results has no entry for {missing[:3]}")


# --- Theorem 3: Givens coordinate descent on SO(d) -----------------------------------------------------------------


def procrustes_descent(T, steps: int, curvature_bound: float = 4.0) -> tuple[np.ndarray, float, float]:
    """Algorithm 1 (§5.1) on F(M) = ‖M − T‖²_F from M = I for ``steps`` steps
    (:func:`rflib.kama.procrustes_descent_step`), checking Theorem 3's bound at every step.  T: (d, d) in SO(d).

    Returns (F(M_t) for t = 0 … steps: (steps + 1,), min over steps of decrease − ‖∇F‖² / (2d(d−1)B) (Theorem 3
    holds iff ≥ 0), max |M Mᵀ − I| of the last iterate (drift off SO(d))).
    """
    T = _checks.finite_numpy("T", T, 2)
    if T.shape[0] != T.shape[1] or T.shape[0] < 2:
        raise ValueError(f"T must be a square matrix of size ≥ 2, got shape {T.shape}")
    steps = _checks.positive_int("steps", steps)
    d = T.shape[0]
    M = np.eye(d)
    values, slack = [kama.procrustes_objective(M, T)], []
    for _ in range(steps):
        step = kama.procrustes_descent_step(M, T)
        slack.append(step.decrease - kama.theorem_3_bound(step.grad_norm_sq, d, curvature_bound))
        M = step.M
        values.append(kama.procrustes_objective(M, T))
    return np.array(values), min(slack), np.abs(M @ M.T - np.eye(d)).max()
