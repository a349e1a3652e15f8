"""Process-start settings (standard library only: the notebook runner imports it cheaply): glibc allocator settings
for stable timings, and deterministic XLA:GPU kernels for repeatable results.

glibc hands freed blocks above its mmap threshold back to the OS, so a jitted call that returns a fresh 8 MB buffer
page-faults it in again on every call: the same feature map then takes 2 ms or 9 ms from call to call (measured on
the 2-core machine, L = 4096, 512 features). Keeping such blocks in the heap removes the bimodality. glibc reads
these variables only at process start, so they must be set before the (kernel) process starts.
"""

from __future__ import annotations

import os
import sys

ALLOCATOR_ENV = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20),
    "MALLOC_TRIM_THRESHOLD_": str(2**30),
    "MALLOC_TOP_PAD_": str(256 * 2**20),
}


def allocator_tuned() -> bool:
    """Whether this process started with :data:`ALLOCATOR_ENV`."""
    return all(os.environ.get(k) == v for k, v in ALLOCATOR_ENV.items())


def reexec_with_tuned_allocator() -> None:
    """Restart the current ``python -m ...`` process with :data:`ALLOCATOR_ENV` set, unless it already is (or
    RFLIB_BENCH_DEFAULT_MALLOC is set, to measure with glibc's defaults)."""
    if allocator_tuned() or os.environ.get("RFLIB_BENCH_DEFAULT_MALLOC"):
        return
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], {**os.environ, **ALLOCATOR_ENV})


DETERMINISTIC_GPU_FLAG = "--xla_gpu_deterministic_ops=true"
"""Without it XLA:GPU's results are not bitwise repeatable from process to process: two runs of notebook 06's
softmax pretraining (600 steps, same code and keys) in separate processes on one lent H200 parted at the second step
(losses 1e-5 apart by step 600), and two with the flag were bitwise identical (2026-11-28). The CPU backend ignores
it; its cost in GPU speed was not measured. XLA reads ``XLA_FLAGS`` once, when JAX starts its backend."""


def deterministic_xla_flags(flags: str) -> str:
    """``XLA_FLAGS`` with :data:`DETERMINISTIC_GPU_FLAG` added, unless the caller already set that option."""
    if "--xla_gpu_deterministic_ops" in flags:
        return flags
    return f"{flags} {DETERMINISTIC_GPU_FLAG}".strip()
