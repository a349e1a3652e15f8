"""Suite 3: FAVOR#'s closed-form parameter fit (O(Ld² + d³)) as a fraction of one attention call.

The fit is :func:`rflib.features.dense_exp.fit` on one sequence's queries and keys (second moments, then eigh for
SDERF/ADERF, matrix square roots for GERF's scalar optimum...), jitted; one attention call is
:func:`rflib.attention.favor_sharp_attention` (bidirectional, fit included), d = 64, m = 256, float32.

Run:  .venv/bin/python -m benchmarks --suite fitting_overhead
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from benchmarks import harness
from rflib import attention, projections
from rflib.experiments.progress_bars import bar
from rflib.features import dense_exp


def run(
    lengths=(1024, 4096),
    d: int = 64,
    m: int = 256,
    methods=("gerf", "saderf", "sderf"),
    repeats: int = 9,
    *,
    progress: bool = False,
):
    """One row per (L, method): fit ms, attention ms (the same method, fit included) and fit / attention."""
    key = jax.random.key(0)
    W = projections.orthogonal(jax.random.fold_in(key, 1), m, d).astype(jnp.float32)
    rows = []
    for L in bar(lengths, "FAVOR# fit: L", progress, leave=False):
        kq, kk, kv = jax.random.split(jax.random.fold_in(key, L), 3)
        Q, K = (d**-0.25 * jax.random.normal(k, (L, d), jnp.float32) for k in (kq, kk))
        V = jax.random.normal(kv, (L, d), jnp.float32)
        for method in methods:
            fit = jax.jit(lambda Q, K, method=method: dense_exp.fit(method, Q, K))
            attend = jax.jit(lambda Q, K, V, method=method: attention.favor_sharp_attention(Q, K, V, W, method=method))
            t_fit = harness.seconds(fit, Q, K, repeats=repeats, min_seconds=0.02)
            t_att = harness.seconds(attend, Q, K, V, repeats=repeats, min_seconds=0.02)
            rows.append(
                {
                    "L": L,
                    "method": method,
                    "fit_ms": 1e3 * t_fit,
                    "attention_ms": 1e3 * t_att,
                    "fraction": t_fit / t_att,
                }
            )
    return rows


COLUMNS = ["L", "method", "fit_ms", "attention_ms", "fraction"]
FORMATS = {"fit_ms": ".3f", "attention_ms": ".2f", "fraction": ".2f"}
