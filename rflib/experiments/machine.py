"""This machine's speed now, to judge a wall time against (numpy only: the notebook runner imports it without JAX)."""

from __future__ import annotations

import numbers
import time

import numpy as np


def matmul_gflops(n: int = 2048, repeats: int = 3) -> float:
    """This machine's dense float32 matmul speed now (GFLOP/s, best of ``repeats`` n × n products with numpy): recorded
    beside each wall time, because the speed of a shared machine drifts (up to 2.5× between days on ours), so that a
    time can be judged against the speed it was measured at."""
    for name, value in (("n", n), ("repeats", repeats)):  # by hand: rflib._checks would import JAX
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be a positive integer (≥ 1), got {value!r:.60}")
    a = np.random.default_rng(0).random((n, n), dtype=np.float32)
    a @ a  # warm-up: thread pool and page faults
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - start)
    return 2.0 * n**3 / best / 1e9
