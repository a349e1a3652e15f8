"""Suite 5: applying k = ⌈5 d ln d⌉ Givens rotations (KAMA-NNs §2) vs a dense d × d matmul.

Two Givens implementations are timed (float32, jitted): the paper's law, one random rotation per step
(:func:`rflib.kama.apply`, a scan of k steps), and the disjoint-pair layers variant (:func:`rflib.kama.apply_layers`,
⌈k/(d/2)⌉ layers of d/2 simultaneous rotations — not the paper's law). Each is checked against the materialised
matrix for d ≤ 512 before it is timed. Storage: 3k numbers (two indices and an angle per rotation) + d vs d².

Run:  .venv/bin/python -m benchmarks --suite kama_rotations
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import harness
from rflib import kama
from rflib.experiments.progress_bars import bar

IMPLEMENTATIONS = ("dense", "kama", "layers")


def run(
    dims=(16, 32, 64, 128, 256, 512, 1024, 2048, 4096), batches=(1, 256), repeats: int = 7, *, progress: bool = False
) -> list[dict]:
    """One row per (d, batch): ms of each implementation, k, and the storage of each."""
    key = jax.random.key(0)
    rows = []
    for d in bar(dims, "KAMA: d", progress, leave=False):
        k = kama.rotations_for(d)
        kd = jax.random.fold_in(key, d)
        product = kama.random_product(kd, k, d, dtype=jnp.float32)
        layers = kama.random_layers(kd, math.ceil(k / (d // 2)), d, dtype=jnp.float32)
        dense = jax.random.normal(kd, (d, d), dtype=jnp.float32)
        fns = {
            "dense": jax.jit(lambda X, W=dense: X @ W.T),
            "kama": jax.jit(lambda X, p=product: kama.apply(p, X)),
            "layers": jax.jit(lambda X, q=layers: kama.apply_layers(q, X)),
        }
        for batch in batches:
            X = jax.random.normal(jax.random.fold_in(kd, batch), (batch, d), dtype=jnp.float32)
            if d <= 512:  # the reference in full float32: GPUs' default float32 matmul rounds inputs to TF32
                with jax.default_matmul_precision("highest"):
                    P = kama.matrix(product, dtype=jnp.float32)
                    reference = np.asarray(X @ P.T)
                np.testing.assert_allclose(np.asarray(fns["kama"](X)), reference, rtol=1e-3, atol=1e-3)
            row = {"d": d, "k": k, "batch": batch, "storage_kama": kama.storage(k, d), "storage_dense": d * d}
            for name, fn in fns.items():
                row[f"{name}_ms"] = 1e3 * harness.seconds(fn, X, repeats=repeats, min_seconds=0.02)
            rows.append(row)
    return rows


def wall_clock_crossovers(rows: list[dict]) -> dict:
    """Per (implementation, batch): the interpolated d from which it beats dense (None if never)."""
    out = {}
    for batch in sorted({r["batch"] for r in rows}):
        sel = [r for r in rows if r["batch"] == batch]
        for name in ("kama", "layers"):
            out[f"{name}, batch {batch}"] = harness.crossover(
                [r["d"] for r in sel], [r[f"{name}_ms"] / r["dense_ms"] for r in sel]
            )
    return out


def storage_crossover(dims=range(2, 4097)) -> int:
    """The first d from which 3k + d < d² holds for every larger d in ``dims``."""
    losing = [d for d in dims if kama.storage(kama.rotations_for(d), d) >= d * d]
    return (max(losing) + 1) if losing else min(dims)


COLUMNS = ["d", "k", "batch", "dense_ms", "kama_ms", "layers_ms", "storage_kama", "storage_dense"]
FORMATS = {"dense_ms": ".4f", "kama_ms": ".4f", "layers_ms": ".4f"}


LABELS = {"dense": "dense matmul", "kama": "KAMA, paper's law", "layers": "KAMA, disjoint-pair layers"}


def curves(rows: list[dict], batch: int) -> dict[str, tuple[list, list]]:
    """{implementation label (:data:`LABELS`): (d values, ms)} of the rows with the given batch size."""
    sel = [r for r in rows if r["batch"] == batch]
    return {label: ([r["d"] for r in sel], [r[f"{name}_ms"] for r in sel]) for name, label in LABELS.items()}
