"""Suite 1: feature maps against the roofline of their projection matmul ``X @ W.T``.

Every map is timed jitted, in float32, at L points of dimension d with m projection rows, next to the bare matmul
``X @ W.T`` with the same W (m, d), in shuffled interleaved rounds (a ratio is the geometric mean of the per-round
ratios, with its standard error, so that a verdict on a target is decided, not read off one run). The elementwise
part of each map (exp, or sin and cos) is timed alone on an array of the map's output shape: it is the one cost a
map may add to the matmul. Maps that write 2m columns (hyperbolic, trigonometric, HRF) are also compared with a
matmul of 2m rows, which writes as much. GERF and SDERF are timed after fitting (the fit is suite 3). The angular
hybrid (HRF) has 4m'(n + 1) features from 2m' + n projections; it is configured to the trigonometric map's width 2m.

Run:  .venv/bin/python -m benchmarks --suite feature_maps
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import harness
from rflib import fastmath, projections
from rflib.experiments.progress_bars import bar
from rflib.features import classic, dense_exp

TARGET_RATIO = 2.0


def _maps(W, X, Y, key, m):
    """name → (jitted map X ↦ body, the elementwise function of the map, its width)."""
    d = X.shape[1]
    gerf, sderf = dense_exp.fit("gerf", X, Y), dense_exp.fit("sderf", X, Y)
    hrf = harness.angular_hrf(key, m, d, X.dtype)

    return {
        "positive (FAVOR+)": (lambda X: classic.positive_features(W, X).body, jnp.exp, m),
        "hyperbolic (FAVOR+, antithetic)": (lambda X: classic.hyperbolic_features(W, X).body, jnp.exp, 2 * m),
        "trigonometric": (lambda X: classic.trig_features(W, X).body, fastmath.sincos_columns, 2 * m),
        "GERF (fitted)": (lambda X: dense_exp.query_features(gerf, W, X).body, jnp.exp, m),
        "SDERF (fitted)": (lambda X: dense_exp.query_features(sderf, W, X).body, jnp.exp, m),
        f"HRF angular hybrid (m' = {m // 8}, n = 3)": (
            lambda X: hrf.query_features(X).body,
            fastmath.sincos_columns,
            2 * m,
        ),
    }


def run(
    L: int = 4096,
    d: int = 64,
    m: int = 256,
    rounds: int = 21,
    min_seconds: float = 0.02,
    seed: int = 0,
    *,
    progress: bool = False,
) -> list[dict]:
    """One row per map: its time, its ratios to the m-wide matmul and to the matmul writing as many columns (each
    with its standard error), the elementwise part's time, and whether the float32 output is finite. The first two
    rows are the matmul baselines.

    Every map is timed in ``rounds`` shuffled rounds with the two matmuls and its elementwise part (each called for
    at least ``min_seconds`` a round, :func:`harness.interleaved_samples`); a ratio is the geometric mean of the
    per-round ratios with its delta-method standard error (:func:`harness.paired_ratio`); times are medians over the
    rounds."""
    key = jax.random.key(seed)
    kx, ky, kw, kh = jax.random.split(key, 4)
    X = d**-0.25 * jax.random.normal(kx, (L, d), jnp.float32)
    Y = d**-0.25 * jax.random.normal(ky, (L, d), jnp.float32)
    W = projections.orthogonal(kw, m, d).astype(jnp.float32)
    W_wide = jnp.concatenate([W, -W])
    matmuls = {m: jax.jit(lambda X, P: X @ W.T), 2 * m: jax.jit(lambda X, P: X @ W_wide.T)}
    samples = partial(harness.interleaved_samples, rounds=rounds, min_seconds=min_seconds)
    median_ms = lambda seconds: 1e3 * float(np.median(seconds))  # noqa: E731

    pair = samples({"m": matmuls[m], "2m": matmuls[2 * m]}, (X, None), order_seed=0)
    wide, wide_se = harness.paired_ratio(pair["2m"], pair["m"])
    rows = [
        {"map": "X @ W.T (baseline)", "features": m, "ms": median_ms(pair["m"]), "ratio": 1.0, "ratio_same_width": 1.0},
        {
            "map": "X @ [W; −W].T (2m-wide output)",
            "features": 2 * m,
            "ms": median_ms(pair["2m"]),
            "ratio": wide,
            "ratio s.e.": wide_se,
        },
    ]
    maps = _maps(W, X, Y, kh, m).items()
    for order, (name, (fn, elementwise, width)) in enumerate(bar(maps, "feature maps", progress, leave=False), 1):
        out = jax.jit(fn)(X)
        P = jax.random.normal(key, (L, width if elementwise is jnp.exp else width // 2), jnp.float32)
        fns = {
            "map": jax.jit(lambda X, P, fn=fn: fn(X)),
            "elementwise": jax.jit(lambda X, P, f=elementwise: f(P)),
            "m": matmuls[m],
            "same width": matmuls[width],
        }
        times = samples(fns, (X, P), order_seed=order)
        ratio, ratio_se = harness.paired_ratio(times["map"], times["m"])
        same_width, same_width_se = harness.paired_ratio(times["map"], times["same width"])
        t_map, t_elem = median_ms(times["map"]), median_ms(times["elementwise"])
        rows.append(
            {
                "map": name,
                "features": int(out.shape[1]),
                "ms": t_map,
                "ratio": ratio,
                "ratio s.e.": ratio_se,
                "elementwise_ms": t_elem,
                "ratio_without_elementwise": ratio * (1 - t_elem / t_map),
                "ratio_same_width": same_width,
                "ratio_same_width s.e.": same_width_se,
                "rounds": rounds,
                "finite": bool(jnp.all(jnp.isfinite(out))),
            }
        )
    return rows


COLUMNS = [
    "map",
    "features",
    "ms",
    "ratio",
    "ratio s.e.",
    "elementwise_ms",
    "ratio_without_elementwise",
    "ratio_same_width",
    "ratio_same_width s.e.",
    "finite",
]
FORMATS = {
    "ms": ".3f",
    "ratio": ".2f",
    "ratio s.e.": ".2f",
    "elementwise_ms": ".3f",
    "ratio_without_elementwise": ".2f",
    "ratio_same_width": ".2f",
    "ratio_same_width s.e.": ".2f",
}


def map_rows(rows: list[dict]) -> list[dict]:
    """The rows of the feature maps themselves: :func:`run`'s rows after its two matmul baselines."""
    return rows[2:]


def cost_split(maps: list[dict]) -> tuple[list[str], list[float], list[float]]:
    """Per map row: (name, ratio to the matmul without the elementwise part, the elementwise part's share of the
    ratio), the two summing to the map's ratio — the stacked bars of notebook 11."""
    names = [r["map"] for r in maps]
    rest = [r["ratio_without_elementwise"] for r in maps]
    elem = [r["ratio"] - r["ratio_without_elementwise"] for r in maps]
    return names, rest, elem


def target_note(maps: list[dict]) -> str:
    """One sentence on the maps over :data:`TARGET_RATIO`: each one's ratio, the share of its time spent in exp or
    sin/cos, and its ratio to a matmul writing as many columns; "all within the target" if none is over."""
    over = {r["map"]: round(r["ratio"], 2) for r in maps if r["ratio"] > TARGET_RATIO}
    return (
        "over the target: "
        + "; ".join(
            f"{r['map']} {r['ratio']:.2f}× ({r['elementwise_ms'] / r['ms']:.0%} of it exp or sin/cos, "
            f"{r['ratio_same_width']:.2f}× a matmul writing as many columns)"
            for r in maps
            if r["map"] in over
        )
        if over
        else "all within the target"
    )
