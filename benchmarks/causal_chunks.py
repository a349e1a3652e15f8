"""Suite 7: causal linear attention's chunk length against exact causal attention (speed, gradient memory, agreement).

Causal linear attention (:func:`rflib.attention.linear_attention`, ``causal=True``) runs a prefix scan whose steps are
chunks of ``chunk_size`` tokens: a masked chunk × chunk product inside each chunk plus the running state of earlier
ones. The steps are sequential, so the best length depends on the device; this suite measures FAVOR+ (positive
features, orthogonal W) and HRF (the angular hybrid, :func:`benchmarks.harness.angular_hrf`), m = 256, d = 64, float32,
layout (batch, L, heads, d), forward and forward + backward (gradient of Σ out² in Q, K, V), for each chunk length, next
to ``jax.nn.dot_product_attention(is_causal=True)`` timed in the same run. Agreement with 64-token chunks is the largest
output difference relative to the largest output (HRF's signed denominators make some outputs large, so also the
median elementwise relative difference). :data:`rflib.attention.ACCELERATOR_CHUNK_SIZE` was chosen from this suite's
run on an H200 (benchmarks/recorded/nvidia-h200/causal_chunks.json).

Run:  .venv/bin/python -m benchmarks --suite causal_chunks
(~9 min on the 2-core CPU in a slow spell; over 8 min on an H200, mostly compiling: the recorded run was cut there)
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from benchmarks import harness
from rflib import attention, projections
from rflib.experiments.progress_bars import bar
from rflib.features import classic

METHODS = ("FAVOR+", "HRF")


def _linear(feature_map, chunk_size):
    """Causal linear attention in the (batch, L, heads, d) layout."""

    def fn(Q, K, V):
        heads_first = (jnp.swapaxes(x, -2, -3) for x in (Q, K, V))
        out = attention.linear_attention(*heads_first, feature_map, causal=True, chunk_size=chunk_size)
        return jnp.swapaxes(out, -2, -3)

    return fn


def _exact(Q, K, V):
    return jax.nn.dot_product_attention(Q, K, V, scale=1.0, is_causal=True)


def _with_gradient(fn):
    return jax.grad(lambda Q, K, V: jnp.sum(fn(Q, K, V) ** 2), argnums=(0, 1, 2))


def run(
    shapes=((1, 4096, 1), (1, 16384, 1), (1, 32768, 1), (4, 4096, 8)),
    chunk_sizes=(64, 256, 512, 1024, 2048),
    d: int = 64,
    m: int = 256,
    repeats: int = 7,
    exact_max_tokens: int = 16384,
    seed: int = 0,
    *,
    progress: bool = False,
) -> list[dict]:
    """One row per (batch, L, heads, method, chunk, mode): median ms and XLA's planned working memory (bytes); forward
    rows of the linear methods also carry the agreement with 64-token chunks. Exact attention over more than
    ``exact_max_tokens`` tokens in all (batch × L × heads) is planned but not run on a CPU (ms None): it takes seconds
    a call there (4 × 4 096 × 8: 5 s forward, 25 s with gradients)."""
    key = jax.random.key(seed)
    W = projections.orthogonal(jax.random.fold_in(key, 1), m, d).astype(jnp.float32)
    maps = {
        "FAVOR+": partial(classic.positive_features, W),
        "HRF": harness.angular_hrf(jax.random.fold_in(key, 2), m, d),
    }
    run_exact_beyond = jax.default_backend() != "cpu"
    rows = []
    for batch, L, heads in bar(shapes, "causal chunks: shape", progress, leave=False):
        kq, kk, kv = jax.random.split(jax.random.fold_in(key, L * batch), 3)
        Q, K = (d**-0.25 * jax.random.normal(k, (batch, L, heads, d), jnp.float32) for k in (kq, kk))
        V = jax.random.normal(kv, (batch, L, heads, d), jnp.float32)
        with jax.default_matmul_precision("highest"):
            reference = {name: jax.jit(_linear(fmap, 64))(Q, K, V) for name, fmap in maps.items()}
        fns = [("exact", None, _exact)]
        fns += [(name, c, _linear(fmap, c)) for name, fmap in maps.items() for c in chunk_sizes if c <= L]
        for method, chunk, fn in fns:
            for mode, timed in (("forward", fn), ("forward + backward", _with_gradient(fn))):
                compiled = harness.compiled(timed, Q, K, V)
                row = {"batch": batch, "L": L, "heads": heads, "method": method, "chunk": chunk, "mode": mode}
                memory = harness.working_bytes(compiled)
                row |= {"memory_bytes": memory, "memory_MiB": None if memory is None else memory / 2**20, "ms": None}
                if method != "exact" or batch * L * heads <= exact_max_tokens or run_exact_beyond:
                    calls = max(1, min(repeats, int(repeats * 4096 / (batch * L * heads))))
                    row["ms"] = 1e3 * harness.seconds(compiled, Q, K, V, repeats=calls, min_seconds=0.02)
                if mode == "forward" and method != "exact":
                    with jax.default_matmul_precision("highest"):
                        out = jax.jit(fn)(Q, K, V)
                    difference = jnp.abs(out - reference[method])
                    row["max_rel_diff"] = float(jnp.max(difference) / jnp.max(jnp.abs(reference[method])))
                    row["median_rel_diff"] = float(jnp.median(difference / jnp.abs(reference[method])))
                rows.append(row)
    return rows


COLUMNS = ["batch", "L", "heads", "method", "chunk", "mode", "ms", "memory_MiB", "max_rel_diff"]
FORMATS = {"ms": ".2f", "memory_MiB": ".0f", "max_rel_diff": ".1e"}
