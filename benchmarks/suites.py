"""The suites by name, their sizes per scale, and one entry point used by ``python -m benchmarks`` and notebook 11."""

from __future__ import annotations

import time

from benchmarks import (
    attention_gradients,
    attention_scaling,
    causal_chunks,
    feature_maps,
    fitting_overhead,
    harness,
    hrf_construction,
    kama_gradients,
    kama_rotations,
)

SUITES = {
    "feature_maps": feature_maps,
    "attention_scaling": attention_scaling,
    "fitting_overhead": fitting_overhead,
    "hrf_construction": hrf_construction,
    "kama_rotations": kama_rotations,
    "attention_gradients": attention_gradients,
    "causal_chunks": causal_chunks,
    "kama_gradients": kama_gradients,
}
# "full": the sizes the performance issue asks for (each suite's defaults); "quick": every code path at small sizes.
SIZES = {
    "full": {name: {} for name in SUITES},
    "quick": {
        "feature_maps": {"L": 256, "rounds": 2, "min_seconds": 0.0},
        "attention_scaling": {"lengths": (256,), "repeats": 1},
        "fitting_overhead": {"lengths": (256,), "repeats": 2},
        "hrf_construction": {"points": 256, "repeats": 2, "min_seconds": 0.0, "configs": ((8, 8),)},
        "kama_rotations": {"dims": (16,), "batches": (1,), "repeats": 2},
        "attention_gradients": {
            "lengths": (256,),
            "batched": (2, 128, 2),
            "rounds": 2,
            "min_seconds": 0.0,
            "eager_length": 128,
        },
        "causal_chunks": {"shapes": ((2, 32, 2),), "chunk_sizes": (16,), "repeats": 1},
        "kama_gradients": {"shapes": ((8, 12, 2),), "repeats": 2},
    },
}


def run_suite(name: str, scale: str = "full", *, progress: bool = False) -> dict:
    """Run one suite at ``scale`` ("full" or "quick"): {"suite", "scale", "device", "seconds", "rows"}. ``progress``:
    a bar over the suite's sizes."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; choose from {sorted(SUITES)}")
    if scale not in SIZES:
        raise ValueError(f"scale must be one of {sorted(SIZES)}, got {scale!r}")
    start = time.perf_counter()
    rows = SUITES[name].run(**SIZES[scale][name], progress=progress)
    return {
        "suite": name,
        "scale": scale,
        "device": harness.device_info(),
        "seconds": time.perf_counter() - start,
        "rows": rows,
    }
