"""Suite 8: the gradient of a KAMA weight matrix in the angles, as the RL policies take it (KAMA-NNs §6.2).

A policy layer's weight matrix is P = G₀ ⋯ G_{k−1} (:func:`rflib.kama.matrix`), built in every minibatch step and
differentiated in its k angles. Two ways of taking that gradient are timed against each other in the same run
(float32, jitted, loss ∑ sin(P) ⊙ T):

- ``sweep``: rflib's reverse mode, which recomputes the intermediate products by un-rotating P (no stored states);
- ``autodiff``: JAX's reverse mode of the forward scan (:func:`rflib.kama.apply` on the identity), which stores
  every step's rows.

and, for a stack of ``runs`` products (the runs a trainer updates together), ``lax.map`` of the sweep gradient over
the runs (what the trainer does) against ``vmap`` of the same sweep gradient (batched Givens scans go through XLA's
generic gathers and scatters) and against ``vmap`` of the autodiff gradient (what the trainer did before). Each
gradient is checked against the autodiff one before it is timed.

Run:  .venv/bin/python -m benchmarks --suite kama_gradients
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import harness
from rflib import kama
from rflib.experiments.progress_bars import bar

# (d, k, runs): the PPO policies' 64 × 64 layers with K = 200 and 5 seeds, TRPO's 32 × 32 with K = 100 and 10 seeds
SHAPES = ((64, 200, 5), (32, 100, 10))


def _loss(matrix_of, product, target, angles):
    return jnp.sum(jnp.sin(matrix_of(product._replace(angles=angles))) * target)


def _autodiff_matrix(product):
    return kama.apply(product, jnp.eye(product.d, dtype=product.angles.dtype)).T


def run(shapes=SHAPES, repeats: int = 7, *, progress: bool = False) -> list[dict]:
    """One row per (d, k, runs): ms of one gradient by each method, ms of the stacked gradients by lax.map and by
    vmap of the sweep and of autodiff, and the ratios autodiff / sweep, vmap / lax.map and vmap of autodiff /
    lax.map."""
    rows = []
    for d, k, runs in bar(shapes, "KAMA gradients: d", progress, leave=False):
        key = jax.random.fold_in(jax.random.key(0), d)
        product = kama.random_product(key, k, d, dtype=jnp.float32)
        target = jax.random.normal(jax.random.fold_in(key, 1), (d, d), dtype=jnp.float32)
        sweep = jax.jit(jax.grad(lambda a, p=product, t=target: _loss(kama.matrix, p, t, a)))
        autodiff = jax.jit(jax.grad(lambda a, p=product, t=target: _loss(_autodiff_matrix, p, t, a)))
        angles = product.angles
        reference = np.asarray(autodiff(angles))
        np.testing.assert_allclose(np.asarray(sweep(angles)), reference, rtol=0, atol=1e-4 * np.abs(reference).max())
        stacked = jnp.stack([angles + 0.1 * r for r in range(runs)])
        one = jax.grad(lambda a, p=product, t=target: _loss(kama.matrix, p, t, a))
        mapped = jax.jit(lambda s, f=one: jax.lax.map(f, s))
        vmapped = jax.jit(jax.vmap(one))
        vmapped_autodiff = jax.jit(jax.vmap(jax.grad(lambda a, p=product, t=target: _loss(_autodiff_matrix, p, t, a))))
        stacked_reference = np.asarray(vmapped_autodiff(stacked))
        for fn in (mapped, vmapped):
            np.testing.assert_allclose(np.asarray(fn(stacked)), stacked_reference, rtol=0, atol=1e-3)
        row = {"d": d, "k": k, "runs": runs}
        for name, fn, arg in (
            ("sweep", sweep, angles),
            ("autodiff", autodiff, angles),
            ("lax_map", mapped, stacked),
            ("vmap", vmapped, stacked),
            ("vmap_autodiff", vmapped_autodiff, stacked),
        ):
            row[f"{name}_ms"] = 1e3 * harness.seconds(fn, arg, repeats=repeats, min_seconds=0.02)
        row["autodiff_over_sweep"] = row["autodiff_ms"] / row["sweep_ms"]
        row["vmap_over_lax_map"] = row["vmap_ms"] / row["lax_map_ms"]
        row["vmap_autodiff_over_lax_map"] = row["vmap_autodiff_ms"] / row["lax_map_ms"]
        rows.append(row)
    return rows


COLUMNS = [
    "d",
    "k",
    "runs",
    "sweep_ms",
    "autodiff_ms",
    "autodiff_over_sweep",
    "lax_map_ms",
    "vmap_ms",
    "vmap_over_lax_map",
    "vmap_autodiff_ms",
    "vmap_autodiff_over_lax_map",
]
FORMATS = {
    "sweep_ms": ".3f",
    "autodiff_ms": ".3f",
    "autodiff_over_sweep": ".2f",
    "lax_map_ms": ".3f",
    "vmap_ms": ".3f",
    "vmap_over_lax_map": ".2f",
    "vmap_autodiff_ms": ".3f",
    "vmap_autodiff_over_lax_map": ".2f",
}
