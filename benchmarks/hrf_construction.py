"""Benchmark: building the angular-hybrid feature map in O(nd + md + mn) vs a regular map of the same dimension.

HRF App D.4 / Sec L: the hybrid's 4m(n + 1) features are Kronecker products of 2m base and n λ features, so they
cost d(2m + n) multiply-adds for the projections plus 4mn products — whereas a regular trigonometric map with as
many features needs 2m(n + 1) projections of d multiply-adds each, O(mnd). Both maps are timed in the same run
(jitted, float32, compile excluded), in ``repeats`` rounds that call each in a shuffled order (repeated to last at
least ``min_seconds``, the mean the round's value); the speed-up is
the geometric mean of the per-round ratios regular / hybrid with its delta-method standard error
(``harness.paired_ratio``), next to the FLOP ratio predicted by ``hybrid.angular_hybrid_cost`` /
``hybrid.regular_cost``.

Run:  .venv/bin/python -m benchmarks --suite hrf_construction
Not part of ``make test``: timings are machine-dependent. JAX picks the device (CPU here, GPU where present).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.harness import interleaved_samples, paired_ratio
from rflib.experiments.progress_bars import bar
from rflib.features import classic, hybrid


def run(
    points: int = 4096,
    d: int = 64,
    repeats: int = 40,
    min_seconds: float = 0.02,
    configs=((8, 8), (16, 8), (32, 8), (16, 16), (32, 32)),
    *,
    progress: bool = False,
) -> list[dict]:
    key = jax.random.key(0)
    X = 0.1 * jax.random.normal(key, (points, d), dtype=jnp.float32)
    rows = []
    for m, n in bar(configs, "HRF: (m, n)", progress, leave=False):
        keys = jax.random.split(jax.random.fold_in(key, 1000 * m + n), 4)
        W_pos, W_trig = (jax.random.normal(k, (m, d), dtype=jnp.float32) for k in keys[:2])
        T = jax.random.normal(keys[2], (n, d), dtype=jnp.float32)
        n_features = 4 * m * (n + 1)
        W_regular = jax.random.normal(keys[3], (n_features // 2, d), dtype=jnp.float32)

        hybrid_map = jax.jit(
            lambda X, a=W_pos, b=W_trig, t=T: hybrid.angular_hybrid_estimator(a, b, t).query_features(X).body
        )
        regular_map = jax.jit(lambda X, w=W_regular: classic.trig_features(w, X).body)
        maps = {"hybrid": hybrid_map, "regular": regular_map}
        samples = interleaved_samples(maps, (X,), repeats, order_seed=m * n, min_seconds=min_seconds)
        t_hyb, t_reg = (float(np.median(samples[name])) for name in ("hybrid", "regular"))
        speedup, speedup_se = paired_ratio(samples["regular"], samples["hybrid"])
        predicted = (
            hybrid.regular_cost(n_features, d)["total_flops"] / hybrid.angular_hybrid_cost(m, n, d)["total_flops"]
        )
        rows.append(
            {
                "m": m,
                "n": n,
                "features": n_features,
                "hybrid_ms": 1e3 * t_hyb,
                "regular_ms": 1e3 * t_reg,
                "speedup": speedup,
                "speedup_se": speedup_se,
                "rounds": repeats,
                "predicted_flop_ratio": predicted,
            }
        )
    return rows


COLUMNS = ["m", "n", "features", "hybrid_ms", "regular_ms", "speedup", "speedup_se", "predicted_flop_ratio"]
FORMATS = {
    "hybrid_ms": ".3f",
    "regular_ms": ".3f",
    "speedup": ".2f",
    "speedup_se": ".2f",
    "predicted_flop_ratio": ".2f",
}
