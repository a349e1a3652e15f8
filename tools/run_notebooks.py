#!/usr/bin/env python
"""Execute the notebooks headlessly with papermill at one scale; the engine behind `make`, `make quick`, `make paper`.

    python tools/run_notebooks.py --scale standard              # every notebooks/*.py
    python tools/run_notebooks.py --scale quick notebooks/00_random_features_primer.py

Each percent-format source is converted to ``build/ipynb/<name>.ipynb`` by jupytext, executed by papermill with
``-p scale <scale> -p seed <seed>`` and written to the scale's ``executed`` directory. Figures and results go to
``figures/`` and ``results/`` (standard and paper scale) or under ``build/quick/`` (quick scale, so smoke runs never
overwrite published output), through the ``FIG_DIR`` and ``RESULTS_DIR`` environment variables the kernel
inherits. A failing notebook is reported with its failing cell; the run continues with the others and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import papermill

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.allocator import ALLOCATOR_ENV  # noqa: E402  (stdlib only; needs ROOT on the path)

SCALES = ("quick", "standard", "paper")


def output_dirs(scale: str) -> dict[str, Path]:
    """Where a scale writes executed notebooks, figures and results."""
    if scale == "quick":
        base = ROOT / "build" / "quick"
        return {"executed": base / "executed", "figures": base / "figures", "results": base / "results"}
    executed = ROOT / "build" / ("executed" if scale == "standard" else "executed-paper")
    return {"executed": executed, "figures": ROOT / "figures", "results": ROOT / "results"}


def failing_cell(exc: papermill.PapermillExecutionError) -> str:
    """A short description of the failing cell: its index, first source line and the error."""
    first_line = (exc.source or "").strip().splitlines()[:1]
    where = f"cell {exc.cell_index}" + (f" ({first_line[0][:80]!r})" if first_line else "")
    return f"{where}: {exc.ename}: {exc.evalue}"


def run_notebook(source: Path, scale: str, seed: int = 0, dirs: dict[str, Path] | None = None) -> dict:
    """Convert and execute one notebook; return {name, seconds, ok, error, claims}. Never raises on cell errors."""
    dirs = dirs or output_dirs(scale)
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    ipynb_dir = ROOT / "build" / "ipynb"
    ipynb_dir.mkdir(parents=True, exist_ok=True)
    notebook = jupytext.read(source)
    converted = ipynb_dir / f"{source.stem}.ipynb"
    nbformat.write(notebook, converted)

    env_before = dict(os.environ)
    os.environ["FIG_DIR"] = str(dirs["figures"])
    os.environ["RESULTS_DIR"] = str(dirs["results"])
    # Inline figures (rendered headless by Agg) so the executed notebooks and the book show them; "agg" would not.
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    os.environ.update(ALLOCATOR_ENV)  # stable wall-clock timings in the kernels (benchmarks/allocator.py)
    # The notebook chooses its own precision; don't let the test process's float64 flag leak into it.
    os.environ.pop("JAX_ENABLE_X64", None)
    start = time.perf_counter()
    error = None
    try:
        papermill.execute_notebook(
            str(converted),
            str(dirs["executed"] / f"{source.stem}.ipynb"),
            parameters={"scale": scale, "seed": seed},
            kernel_name="python3",
            cwd=str(ROOT),
            progress_bar=False,
        )
    except papermill.PapermillExecutionError as exc:
        error = failing_cell(exc)
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    seconds = time.perf_counter() - start
    claims = []
    results_file = dirs["results"] / f"{source.stem}.json"
    if results_file.exists():
        claims = json.loads(results_file.read_text()).get("claims", [])
    return {"name": source.stem, "seconds": seconds, "ok": error is None, "error": error, "claims": claims}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=SCALES, default="standard")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebook sources (default: notebooks/*.py)")
    args = parser.parse_args(argv)
    sources = args.notebooks or sorted((ROOT / "notebooks").glob("*.py"))
    if not sources:
        print("no notebooks found under notebooks/", file=sys.stderr)
        return 1

    reports = []
    total_start = time.perf_counter()
    for source in sources:
        print(f"▶ {source.stem}  (scale={args.scale}, seed={args.seed})", flush=True)
        report = run_notebook(source.resolve(), args.scale, args.seed)
        reports.append(report)
        status = "ok" if report["ok"] else "FAILED"
        print(f"  {status} in {report['seconds']:.1f} s", flush=True)
        if report["error"]:
            print(f"  {source.stem}: {report['error']}", flush=True)

    print(f"\nSummary (scale={args.scale}, total {time.perf_counter() - total_start:.1f} s):")
    for r in reports:
        verdicts = [c["verdict"] for c in r["claims"]]
        counts = ", ".join(f"{v} {verdicts.count(v)}" for v in ("holds", "scaled", "fails", "info") if v in verdicts)
        print(f"  {'ok    ' if r['ok'] else 'FAILED'} {r['name']:<40} {r['seconds']:7.1f} s   claims: {counts or '-'}")
        for c in r["claims"]:
            if c["verdict"] == "fails":
                print(f"      fails: {c['id']}: {c['claim']}")
    timings = ROOT / "build" / f"timings-{args.scale}.json"
    timings.write_text(json.dumps({r["name"]: round(r["seconds"], 1) for r in reports}, indent=2) + "\n")
    failed = [r["name"] for r in reports if not r["ok"]]
    if failed:
        print(f"\n{len(failed)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
