"""Sweeps over the separation constructions of Deng, Song, Yuan, Zhou (arXiv 2310.11685v2): the success-rate sweeps
of §7 (exact formula next to the end-to-end simulation), the toy model's Fig 3, and the studies beyond the paper
(notebook 10): the class gap of the attention outputs over n, linear attention's worst margins over every data point, a
tuned readout, and phase diagrams of the exact success probability.

Everything here loops over :mod:`rflib.separation`; randomness comes in as numpy generators (or callables that make
them), so a notebook's named streams fix every draw. Conventions as there: natural logs, s = √(log n), 0-based rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from rflib import _checks
from rflib import separation as sp
from rflib.experiments.progress_bars import bar

# The parameters a §7 panel may sweep, per case (m is the readout count, the rest are success_probability's params).
SWEEPABLE = {"self": ("n", "d", "m", "a0", "a1", "b", "c"), "cross": ("n", "d", "m", "a0", "a1")}


def sweep_point(case: str, base: Mapping, name: str, value) -> tuple[dict, int]:
    """The parameters and readout count m of one point of a §7 sweep: ``base`` with ``name`` set to ``value``.

    Self-attention (§7.2): the n-sweep runs at d = 12 and the d-sweep at n = 256; m = max{⌊log(n/δ)⌋, 15} with
    δ = 0.01 unless m itself is swept. Cross-attention (App. F.6): m = ⌊log(n/δ)⌋. n, d and m are integers, the
    rest floats. Returns (params for :func:`rflib.separation.success_probability`, m).
    """
    _checks.one_of("case", case, tuple(SWEEPABLE))
    _checks.one_of("name", name, SWEEPABLE[case])
    p = dict(base)
    if case == "self":
        if name == "n":
            p.update(n=int(value), d=12)
        elif name == "d":
            p.update(n=256, d=int(value))
        elif name != "m":
            p[name] = float(value)
        m = int(value) if name == "m" else sp.readouts_for(p["n"], floor=15)
    else:
        if name in ("n", "d"):
            p[name] = int(value)
        elif name != "m":
            p[name] = float(value)
        m = int(value) if name == "m" else sp.readouts_for(p["n"])
    return p, m


def success_sweep(
    case: str,
    grid: Mapping[str, Sequence],
    base: Mapping,
    sigmas_for: Callable[[int], np.ndarray],
    trials: int,
    rng: np.random.Generator,
    *,
    progress: bool = False,
) -> dict[tuple[str, object], tuple[float, float]]:
    """Figs 4, 5, 7 (§7): for every panel ``name`` of ``grid`` and every swept value, the exact P(E_success)
    (:func:`rflib.separation.success_probability` with the sign vectors ``sigmas_for(d)``, (N, d)) and the rate
    of ``trials`` simulated networks (:func:`rflib.separation.simulate_success`, drawing from ``rng`` point after
    point in grid order). Points as in :func:`sweep_point`. Returns {(name, value): (exact, simulated)}.
    ``progress``: a bar over each panel's values.
    """
    _checks.one_of("case", case, tuple(SWEEPABLE))
    trials = _checks.positive_int("trials", trials)
    for name in grid:
        _checks.one_of("grid name", name, SWEEPABLE[case])
    res = {}
    for name, values in grid.items():
        for value in bar(values, f"{case} {name}", progress, leave=False):
            p, m = sweep_point(case, base, name, value)
            exact = sp.success_probability(case, m, sigmas_for(p["d"]), **p)
            sim = sp.simulate_success(case, m, trials, rng, **p)
            res[name, value] = (exact, sim)
    return res


def fraction_in_band(simulated: Sequence[float], predicted: Sequence[float], trials: int) -> float:
    """Fraction of points whose simulated rate lies within 4 binomial standard errors (+0.005) of the prediction:
    |ŝ − p| ≤ 4·√(max(p(1 − p), 10⁻¹²)/T) + 0.005, T = ``trials``. simulated, predicted: (P,)."""
    trials = _checks.positive_int("trials", trials)
    if len(simulated) != len(predicted) or len(simulated) == 0:
        raise ValueError(
            f"simulated and predicted must be non-empty and of equal length, got {len(simulated)} and {len(predicted)}"
        )
    ok = [
        abs(s - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-12) / trials) + 0.005
        for s, p in zip(simulated, predicted, strict=True)
    ]
    return float(np.mean(ok))


def binomial_agreement(simulated: Sequence[float], predicted: Sequence[float], trials: int) -> dict[str, float]:
    """How well simulated success rates agree with predicted probabilities, point by point and pooled.

    Each point's count k = round(ŝ·T) is tested against Binomial(T, p) by the exact two-sided binomial test; the
    smallest p-value times the number of points P is the Bonferroni-adjusted evidence that *some* point disagrees.
    The pooled standardised bias z = Σ(k − Tp) / √(Σ Tp(1 − p)) detects a small systematic error that no single
    point resolves. Points with p ∈ {0, 1} count only if k disagrees (then their p-value is 0).

    simulated, predicted: (P,) in [0, 1]; trials: T. Returns {"points", "bonferroni_p" (min p-value × P, capped at
    1), "pooled_z"}.
    """
    from scipy import stats

    trials = _checks.positive_int("trials", trials)
    if len(simulated) != len(predicted) or len(simulated) == 0:
        raise ValueError(
            f"simulated and predicted must be non-empty and of equal length, got {len(simulated)} and {len(predicted)}"
        )
    s = _checks.finite_numpy("simulated", simulated, 1)
    p = np.clip(_checks.finite_numpy("predicted", predicted, 1), 0.0, 1.0)
    k = np.rint(s * trials).astype(int)
    p_values = [
        float(stats.binomtest(int(ki), trials, float(pi)).pvalue) if 0 < pi < 1 else float(ki == round(pi * trials))
        for ki, pi in zip(k, p, strict=True)
    ]
    variance = float(np.sum(trials * p * (1 - p)))
    pooled = float(np.sum(k - trials * p) / math.sqrt(variance)) if variance > 0 else 0.0
    return {"points": len(p_values), "bonferroni_p": min(1.0, min(p_values) * len(p_values)), "pooled_z": pooled}


def sweep_in_band(res: Mapping[tuple[str, object], tuple[float, float]], trials: int) -> float:
    """:func:`fraction_in_band` of a :func:`success_sweep` result: simulated rates against the exact formula."""
    exact = [v[0] for v in res.values()]
    sim = [v[1] for v in res.values()]
    return fraction_in_band(sim, exact, trials)


def sweep_panel(res: Mapping[tuple[str, object], tuple[float, float]], name: str) -> tuple[list, list, list]:
    """One panel of a :func:`success_sweep` result: (swept values, exact probabilities, simulated rates), each
    (P,) in grid order."""
    values = [value for panel, value in res if panel == name]
    if not values:
        raise ValueError(f"name must be a swept parameter of res, one of {sorted({panel for panel, _ in res})}")
    return values, [res[name, v][0] for v in values], [res[name, v][1] for v in values]


def toy_success_rates(
    points: Sequence[tuple[int, int]],
    trials: int,
    rng: np.random.Generator,
    *,
    desc: str | None = None,
    progress: bool = False,
) -> tuple[list[float], list[float]]:
    """Fig 3 (§7.1): the toy softmax-regression model's simulated success rate at each (n, m) of ``points``
    (:func:`rflib.separation.simulate_toy_success`, τ = 0.5, ``trials`` models per point, drawing from ``rng`` in
    order) and the exact rate 1 − 2^(−m) (only F_exp(D1) can fail at these n). Returns (simulated, predicted), (P,)
    each. ``progress``: a bar over the points, labelled ``desc``."""
    trials = _checks.positive_int("trials", trials)
    simulated = [
        sp.simulate_toy_success(n, m, trials, rng) for n, m in bar(points, desc or "Fig 3, toy model", progress)
    ]
    predicted = [1 - 2.0**-m for _, m in points]
    return simulated, predicted


def class_gaps(
    ns: Sequence[int], d: int, a0: float, a1: float, b: float, c: float, *, progress: bool = False
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Notebook 10 § 1: per n of ``ns``, max |c(D1) − c(D0)| / √log n over rows and coordinates of the self-attention
    outputs (X = 1_{d×d}, V = I, spike row j3 = 0 in both classes), for softmax ("exp") and linear ("lin")
    attention, and the least-squares slope of log gap against log n per kind (−1 for Θ(1/n), 0 for Θ(1)).
    Closed form: :func:`rflib.separation.self_class_gap`. Returns ({kind: (len(ns),) list}, {kind: slope}).
    ``progress``: a bar over the n."""
    d = _checks.positive_int("d", d)
    ns = [_checks.integer("ns", n, low=2) for n in ns]  # √log n normalises: n = 1 would divide by 0
    gaps = {kind: [] for kind in sp.KINDS}
    for n in bar(ns, "class gap vs n", progress):
        s = math.sqrt(math.log(n))
        o1 = sp.self_outputs(n, d, a1, b, c, 0, "ones")
        o0 = sp.self_outputs(n, d, a0, b, c, 0, "ones")
        for kind in sp.KINDS:
            gaps[kind].append(float(np.abs(o1[kind] - o0[kind]).max() / s))
    slopes = {k: float(np.polyfit(np.log(ns), np.log(v), 1)[0]) for k, v in gaps.items()}
    return gaps, slopes


def worst_linear_margins(
    n: int, d: int, a0: float, a1: float, b: float, c: float, X, readouts: Sequence[np.ndarray]
) -> list[tuple[float, float]]:
    """Notebook 10 § 2 (against Thm 6.2): F_lin's worst margins over *every* data point, per readout Y (d, m) of
    ``readouts``, with query–key matrix X ((d, d), or "ones"/"identity"), V = I and the paper's τ = (c + 0.1)√log n.

    Returns [(min over D1 of F_lin's margin / s, max over D0 of F_lin's margin / s)] — linear attention separates
    the classes with that readout iff the first is > 0 and the second ≤ 0.
    """
    n, d = _checks.positive_int("n", n), _checks.positive_int("d", d)
    s = math.sqrt(math.log(n))
    tau = sp.self_threshold(n, c)
    d1 = [sp.self_outputs(n, d, a1, b, c, j3, X)["lin"] for j3 in range(n)]
    d0 = [sp.self_outputs(n, d, a0, b, c, j3, X)["lin"] for j3 in range(n)]
    margins = []
    for Y in readouts:
        pos = min(sp.network(o, Y, tau).margin for o in d1)
        zero = max(sp.network(o, Y, tau).margin for o in d0)
        margins.append((pos / s, zero / s))
    return margins


def tuned_readout(n: int, d: int, a0: float, a1: float, b: float, c: float, *, step: int = 10) -> dict[str, float]:
    """Notebook 10 § 2: the paper's X = 1_{d×d} with the single readout y = e₀. Over the spike rows j3 = 0, step,
    2·step, … < n, the smallest D1 and largest D0 value of max_j c_j[0] under linear attention; a threshold τ*
    halfway between them separates the classes iff D1's minimum exceeds D0's maximum, with half the difference
    (in units of s = √log n) as margin. Returns {"D1 min c0", "D0 max c0", "margin / s"}."""
    n, step = _checks.positive_int("n", n), _checks.positive_int("step", step)
    c0_d1 = [sp.self_outputs(n, d, a1, b, c, j3, "ones")["lin"][:, 0].max() for j3 in range(0, n, step)]
    c0_d0 = [sp.self_outputs(n, d, a0, b, c, j3, "ones")["lin"][:, 0].max() for j3 in range(0, n, step)]
    margin = 0.5 * (min(c0_d1) - max(c0_d0)) / math.sqrt(math.log(n))
    return {"D1 min c0": min(c0_d1), "D0 max c0": max(c0_d0), "margin / s": margin}


def success_phase_diagram(
    case: str,
    rows: tuple[str, Sequence],
    cols: tuple[str, Sequence],
    sigmas_for: Callable[[int], np.ndarray],
    *,
    desc: str | None = None,
    progress: bool = False,
    **fixed,
) -> np.ndarray:
    """Notebook 10 § 3: the exact P(E_success) (:func:`rflib.separation.success_probability`) over a grid of two
    parameters. ``rows`` and ``cols`` are (name, values) pairs; a name is "m" (the readout count) or one of the
    case's parameters, and ``fixed`` holds the others (m among them if it is not an axis). Sign vectors:
    ``sigmas_for(d)``, (N, d). Returns (len(row values), len(col values)). ``progress``: a bar over the rows,
    labelled ``desc``."""
    _checks.one_of("case", case, tuple(SWEEPABLE))
    (row_name, row_values), (col_name, col_values) = rows, cols
    for label, name in (("rows", row_name), ("cols", col_name)):
        _checks.one_of(f"{label} name", name, SWEEPABLE[case])
    if row_name == col_name:
        raise ValueError(f"rows and cols must sweep different parameters, got {row_name!r} twice")
    missing = {"m", "d"} - {row_name, col_name} - set(fixed)
    if missing:
        raise ValueError(f"fixed needs {sorted(missing)} (not swept by rows or cols)")
    grid = []
    for r in bar(row_values, desc or f"phase diagram, {row_name}", progress):
        line = []
        for value in col_values:
            p = {**fixed, row_name: r, col_name: value}
            m = p.pop("m")
            line.append(sp.success_probability(case, m, sigmas_for(p["d"]), **p))
        grid.append(line)
    return np.array(grid)


def spike_row_outputs(n: int, d: int, a: float, b: float, c: float) -> tuple[float, float, float]:
    """Lemmas D.3 vs D.11 in numbers (notebook 09 §1): self-attention with X = 1_{d×d}, V = I and the spike in row
    j3 = 0, column 0 of the attention outputs (n, d) in units of s = √log n: (softmax at the spike row, softmax at
    another row, linear — every linear row is the same pooled vector)."""
    n = _checks.positive_int("n", n)
    s = math.sqrt(math.log(n))
    out = sp.self_outputs(n, d, a, b, c, 0, "ones")
    return out["exp"][0, 0] / s, out["exp"][1, 0] / s, out["lin"][0, 0] / s


def rows_reaching(grid, row_values: Sequence, level: float) -> list[int]:
    """The row values (as ints) of a :func:`success_phase_diagram` grid (R, C) whose row reaches ``level``
    somewhere (max over the row ≥ level), in row order; row_values: (R,)."""
    grid = _checks.finite_numpy("grid", grid, 2)
    if len(row_values) != grid.shape[0]:
        raise ValueError(f"row_values must have one value per grid row ({grid.shape[0]}), got {len(row_values)}")
    level = _checks.real_number("level", level)
    return [int(v) for v, row in zip(row_values, grid, strict=True) if row.max() >= level]
