"""Run the benchmark suites, print their tables and write ``build/benchmarks/<suite>.json``.

    .venv/bin/python -m benchmarks                      # every suite, full sizes (~5 min, ~9 more for causal_chunks)
    .venv/bin/python -m benchmarks --quick              # small sizes: a smoke run in seconds
    .venv/bin/python -m benchmarks --suite feature_maps --suite kama_rotations

The process restarts itself once with the glibc allocator settings of :data:`rflib.experiments.allocator.ALLOCATOR_ENV`
(set RFLIB_BENCH_DEFAULT_MALLOC=1 to measure with the defaults instead). JAX picks the device: the same command
records GPU numbers on a machine with a GPU.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks import attention_scaling, harness
from benchmarks.suites import SUITES, run_suite
from rflib.experiments.allocator import reexec_with_tuned_allocator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", choices=sorted(SUITES), help="repeatable; default: all")
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--out", default="build/benchmarks", help="directory for the JSON results")
    args = parser.parse_args()
    reexec_with_tuned_allocator()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scale = "quick" if args.quick else "full"
    print(f"device: {harness.device_info()}")
    for name in args.suite or list(SUITES):
        result = run_suite(name, scale, progress=True)
        module = SUITES[name]
        rows = result["rows"]
        if name == "attention_scaling":
            rows = attention_scaling.with_mib(rows)
        print(f"\n## {name} ({result['seconds']:.0f} s)\n")
        print(harness.suite_table(rows, module))
        (out / f"{name}.json").write_text(json.dumps(result, indent=1))
    print(f"\nresults: {out}/<suite>.json")


if __name__ == "__main__":
    main()
