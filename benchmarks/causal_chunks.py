"""Suite 7: causal linear attention's chunk length against exact causal attention (speed, gradient memory, agreement).

Causal linear attention (:func:`rflib.attention.linear_attention`, ``causal=True``) runs a prefix scan whose steps are
chunks of ``chunk_size`` tokens: a masked chunk × chunk product inside each chunk plus the running state of earlier
ones. The steps are sequential, so the best length depends on the device; this suite measures FAVOR+ (positive
features, orthogonal W) and HRF (the angular hybrid: m/8 orthogonal projections per base, 3 λ projections), m = 256,
d = 64, float32, through the drop-in :func:`rflib.attention.make_attention_fn` (layout (batch, L, heads, d), 1/√d
inside), forward and forward + backward (gradient of Σ out² in Q, K, V), for each chunk length, next to
``jax.nn.dot_product_attention(is_causal=True)`` timed in the same run. Agreement with 64-token chunks is the largest
output difference relative to the largest output (HRF's signed denominators make some outputs large, so also the
median elementwise relative difference). :data:`rflib.attention.ACCELERATOR_CHUNK_SIZE` was chosen from this suite's
run on an H200 (benchmarks/recorded/nvidia-h200/causal_chunks.json).

Run:  .venv/bin/python -m benchmarks --suite causal_chunks
(~9 min on the 2-core CPU in a slow spell; over 8 min on an H200, mostly compiling: the recorded run was cut there)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from benchmarks import harness
from rflib import attention
from rflib.experiments.progress_bars import bar

KINDS = {"FAVOR+": "favor+", "HRF": "hrf"}  # method → make_attention_fn's kind


def _exact(Q, K, V):
    return jax.nn.dot_product_attention(Q, K, V, is_causal=True)


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

    def linear(method, chunk_size):
        """Causal linear attention of ``method``, the same projections for every chunk length."""
        projection_key = jax.random.fold_in(key, list(KINDS).index(method) + 1)
        return attention.make_attention_fn(
            KINDS[method], d, projection_key=projection_key, num_features=m, causal=True, chunk_size=chunk_size
        )

    run_exact_beyond = jax.default_backend() != "cpu"
    rows = []
    for batch, L, heads in bar(shapes, "causal chunks: shape", progress, leave=False):
        kq, kk, kv = jax.random.split(jax.random.fold_in(key, L * batch), 3)
        Q, K, V = (jax.random.normal(k, (batch, L, heads, d), jnp.float32) for k in (kq, kk, kv))
        with jax.default_matmul_precision("highest"):
            reference = {method: jax.jit(linear(method, 64))(Q, K, V) for method in KINDS}
        fns = [("exact", None, _exact)]
        fns += [(method, c, linear(method, c)) for method in KINDS for c in chunk_sizes if c <= L]
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
