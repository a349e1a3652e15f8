"""Benchmark: building the angular-hybrid feature map in O(nd + md + mn) vs a regular map of the same dimension.

HRF App D.4 / Sec L: the hybrid's 4m(n + 1) features are Kronecker products of 2m base and n λ features, so they
cost d(2m + n) multiply-adds for the projections plus 4mn products — whereas a regular trigonometric map with as
many features needs 2m(n + 1) projections of d multiply-adds each, O(mnd). Both maps are timed in the same run
(jitted, float32, compile excluded; median of repeats) and the ratio is reported, with the FLOP ratio predicted by
``hybrid.angular_hybrid_cost`` / ``hybrid.regular_cost``.

Run:  .venv/bin/python benchmarks/hrf_construction.py [--points 4096] [--d 64] [--repeats 20]
Not part of ``make test``: timings are machine-dependent. JAX picks the device (CPU here, GPU where present).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from rflib.features import classic, hybrid


def _median_seconds(fn, *args, repeats: int) -> float:
    jax.block_until_ready(fn(*args))  # compile and warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def run(points: int, d: int, repeats: int, configs=((8, 8), (16, 8), (32, 8), (16, 16), (32, 32))) -> list[dict]:
    key = jax.random.key(0)
    X = 0.1 * jax.random.normal(key, (points, d), dtype=jnp.float32)
    rows = []
    for m, n in configs:
        keys = jax.random.split(jax.random.fold_in(key, 1000 * m + n), 4)
        W_pos, W_trig = (jax.random.normal(k, (m, d), dtype=jnp.float32) for k in keys[:2])
        T = jax.random.normal(keys[2], (n, d), dtype=jnp.float32)
        n_features = 4 * m * (n + 1)
        W_regular = jax.random.normal(keys[3], (n_features // 2, d), dtype=jnp.float32)

        hybrid_map = jax.jit(lambda X, a=W_pos, b=W_trig, t=T: hybrid.angular_hybrid_estimator(a, b, t).left(X).body)
        regular_map = jax.jit(lambda X, w=W_regular: classic.trig_features(w, X).body)
        t_hyb = _median_seconds(hybrid_map, X, repeats=repeats)
        t_reg = _median_seconds(regular_map, X, repeats=repeats)
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
                "speedup": t_reg / t_hyb,
                "predicted_flop_ratio": predicted,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=4096)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(f"device: {jax.devices()[0]}, points = {args.points}, d = {args.d}, float32, median of {args.repeats}")
    print(f"{'(m, n)':>9} {'features':>9} {'hybrid ms':>10} {'regular ms':>11} {'speed-up':>9} {'FLOP ratio':>11}")
    for r in run(args.points, args.d, args.repeats):
        print(
            f"{str((r['m'], r['n'])):>9} {r['features']:>9} {r['hybrid_ms']:>10.2f} {r['regular_ms']:>11.2f} "
            f"{r['speedup']:>9.2f} {r['predicted_flop_ratio']:>11.2f}"
        )


if __name__ == "__main__":
    main()
