"""Shared benchmark plumbing: the allocator setting, device description, timing, compiled memory, crossovers."""

from __future__ import annotations

import os
import platform
import sys

import jax
import numpy as np

from rflib import timing

# glibc hands freed blocks above its mmap threshold back to the OS, so a jitted call that returns a fresh 8 MB
# buffer page-faults it in again on every call: the same feature map then takes 2 ms or 9 ms from call to call
# (measured on the 2-core machine, L = 4096, 512 features). Keeping such blocks in the heap removes the bimodality.
ALLOCATOR_ENV = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),
    "MALLOC_TRIM_THRESHOLD_": str(2**30),
    "MALLOC_TOP_PAD_": str(256 * 2**20),
}


def allocator_tuned() -> bool:
    """Whether this process started with :data:`ALLOCATOR_ENV` (glibc reads it only at start-up)."""
    return all(os.environ.get(k) == v for k, v in ALLOCATOR_ENV.items())


def reexec_with_tuned_allocator() -> None:
    """Restart the current ``python -m ...`` process with :data:`ALLOCATOR_ENV` set, unless it already is."""
    if allocator_tuned() or os.environ.get("RFLIB_BENCH_DEFAULT_MALLOC"):
        return
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], {**os.environ, **ALLOCATOR_ENV})


def device_info() -> dict:
    """What the numbers were measured on."""
    device = jax.devices()[0]
    return {
        "backend": jax.default_backend(),
        "device": getattr(device, "device_kind", str(device)),
        "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "jax": jax.__version__,
        "allocator_tuned": allocator_tuned(),
    }


def seconds(fn, *args, repeats: int = 7, min_seconds: float = 0.02) -> float:
    """Median wall time of the jitted ``fn(*args)``: compile excluded, device work waited for."""
    return timing.median_seconds(fn, *args, repeats=repeats, min_seconds=min_seconds)


def working_bytes(fn, *args) -> int | None:
    """Bytes XLA's buffer assignment reserves for ``jax.jit(fn)(*args)`` beyond its inputs: temporaries + output.

    This is the compiled plan's peak for intermediates (buffers are reused across the program), read without
    running it, so it is exact and noise-free; None where the backend does not report it.
    """
    stats = jax.jit(fn).lower(*args).compile().memory_analysis()
    if stats is None:
        return None
    return int(stats.temp_size_in_bytes + stats.output_size_in_bytes)


def loglog_slope(xs, ys) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)), 1)[0])


def crossover(xs, ratio) -> float | None:
    """The x where ``ratio`` (challenger / baseline time) first falls below 1 and stays below, interpolated in
    log–log space between grid points; ``xs[0]`` if it is below 1 throughout, None if it never ends below 1."""
    xs, ratio = np.asarray(xs, float), np.asarray(ratio, float)
    above = np.flatnonzero(ratio >= 1)
    if len(above) == 0:
        return float(xs[0])
    i = above[-1]
    if i == len(xs) - 1:
        return None
    lx, lr = np.log(xs[i : i + 2]), np.log(ratio[i : i + 2])
    return float(np.exp(lx[0] + (0 - lr[0]) * (lx[1] - lx[0]) / (lr[1] - lr[0])))


def table(rows: list[dict], columns: list[str], formats: dict[str, str] | None = None) -> str:
    """A Markdown table of ``rows`` (one per dict) with the given columns."""
    formats = formats or {}
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = ""
    for row in rows:
        cells = []
        for c in columns:
            v = row.get(c)
            cells.append("—" if v is None else format(v, formats.get(c, "")) if not isinstance(v, str) else v)
        body += "| " + " | ".join(cells) + " |\n"
    return head + body
