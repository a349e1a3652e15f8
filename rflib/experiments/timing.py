"""Wall-clock timing of jitted JAX calls: compile excluded, device work included, median of repeats."""

from __future__ import annotations

import time
from collections.abc import Callable

import jax
import numpy as np

from rflib import _checks


def median_seconds(fn: Callable, *args, repeats: int = 7, min_seconds: float = 0.0) -> float:
    """Median wall time of ``fn(*args)`` after one warm-up call (which compiles), waiting for the result.

    Each sample repeats the call until it has run ``min_seconds`` (so microsecond calls are timed over many
    calls) and records the time per call.
    """
    repeats = _checks.positive_int("repeats", repeats)
    jax.block_until_ready(fn(*args))
    samples = []
    for _ in range(repeats):
        calls, start = 0, time.perf_counter()
        while True:
            jax.block_until_ready(fn(*args))
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
        samples.append(elapsed / calls)
    return float(np.median(samples))
