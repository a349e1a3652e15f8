#!/usr/bin/env python
"""Execute the notebooks headlessly with papermill at one scale; the engine behind `make`, `make quick`, `make paper`.

    python tools/run_notebooks.py --scale standard              # every notebooks/*.py
    python tools/run_notebooks.py --scale quick notebooks/00_random_features_primer.py
    python tools/run_notebooks.py --scale paper --machine "one NVIDIA H200" notebooks/06_favor_sharp_attention.py

Each percent-format source is converted to ``build/ipynb/<name>.ipynb`` by jupytext and executed by papermill with
``-p scale <scale> -p seed <seed>``. The kernel writes its figures, results and executed notebook into a staging
directory, ``build/staging/<scale>/<name>/{figures,results,executed}`` (through the ``FIG_DIR`` and ``RESULTS_DIR``
environment variables it inherits). Only a completed run (papermill succeeded and the results file says
``"complete": true``) is promoted: each file is copied next to its destination and moved there with ``os.replace``,
into ``figures/``, ``results/`` and ``build/executed`` (standard), ``figures/paper/``, ``results/paper/`` and
``build/executed-paper`` (paper: beside the standard results, never over them) or
``build/quick/{figures,results,executed}`` (quick, so smoke runs never overwrite published output); the executed
notebook is marked ``metadata.rflib.complete`` for ``make book``. A failed or interrupted (Ctrl-C, SIGTERM) run
promotes nothing, so the committed results and figures stay byte-identical; its partial output stays in the staging
directory, whose path the runner prints. A failing notebook is reported with its failing cell; the run continues
with the others and exits 1. Arguments are checked before anything runs (exit 2). Each completed run's wall time goes
to ``timings.json`` beside the paper-scale results (``build/timings-<scale>.json`` otherwise), with this CPU's matmul
speed at its start (``matmul-gflops.json``) or, for a run made elsewhere, the machine ``--machine`` names
(``machines.json``), recorded as soon as that run completes (so that notebook 11, run last by ``make``, sees the
speed of every earlier run, and an interrupted ``make`` keeps the records of the runs that finished).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
import threading
import time
from functools import partial
from pathlib import Path

import jupytext
import nbformat
import papermill

from rflib._atomic import write_atomically
from rflib.experiments.allocator import ALLOCATOR_ENV, deterministic_xla_flags
from rflib.experiments.machine import matmul_gflops
from rflib.notebook.results import VERDICTS

ROOT = Path(__file__).resolve().parent.parent

SCALES = ("quick", "standard", "paper")
KINDS = ("executed", "figures", "results")
STAGING = ROOT / "build" / "staging"
INTERRUPTS = (signal.SIGINT, signal.SIGTERM)


def output_dirs(scale: str, out: Path | None = None) -> dict[str, Path]:
    """Where a scale's completed runs land: executed notebooks, figures and results (all under ``out`` if given)."""
    if out is not None:
        return {kind: out / kind for kind in KINDS}
    if scale == "quick":
        base = ROOT / "build" / "quick"
        return {"executed": base / "executed", "figures": base / "figures", "results": base / "results"}
    if scale == "paper":
        return {
            "executed": ROOT / "build" / "executed-paper",
            "figures": ROOT / "figures" / "paper",
            "results": ROOT / "results" / "paper",
        }
    return {"executed": ROOT / "build" / "executed", "figures": ROOT / "figures", "results": ROOT / "results"}


def timings_path(scale: str, out: Path | None = None) -> Path:
    """The file of each notebook's wall seconds at ``scale``: beside the paper-scale results (committed with them,
    shown by the report), else ``build/timings-<scale>.json`` (``OUT/timings-<scale>.json`` under ``--out``)."""
    if out is not None:
        return out / f"timings-{scale}.json"
    if scale == "paper":
        return output_dirs(scale)["results"] / "timings.json"
    return ROOT / "build" / f"timings-{scale}.json"


def speed_path(timings: Path) -> Path:
    """The file, beside the wall times ``timings``, of the machine's matmul speed measured before each of those runs:
    ``timings.json`` → ``matmul-gflops.json``, ``timings-<scale>.json`` → ``matmul-gflops-<scale>.json``."""
    return timings.with_name(timings.name.replace("timings", "matmul-gflops", 1))


def machine_path(timings: Path) -> Path:
    """The file, beside the wall times ``timings``, naming the machine of each run made with ``--machine`` (an
    accelerator, say): ``timings.json`` → ``machines.json``. Runs without it were made on the CPU the speed file
    describes."""
    return timings.with_name(timings.name.replace("timings", "machines", 1))


def merge_record(path: Path, values: dict[str, object], remove=()) -> None:
    """Merge {notebook: value} of the completed runs into ``path`` and drop the notebooks in ``remove`` (a run of some
    notebooks keeps the others' values), written atomically, keys sorted; with nothing to change, nothing is written."""
    record = json.loads(path.read_text()) if path.exists() else {}
    stale = [name for name in remove if name in record]
    if not values and not stale:
        return
    for name in stale:
        del record[name]
    record.update(values)
    text = json.dumps(dict(sorted(record.items())), indent=2) + "\n"
    write_atomically(path, lambda target: target.write_text(text))


def record_timings(path: Path, values: dict[str, float], remove=()) -> None:
    """Merge {notebook: value} of the completed runs (wall seconds, or the matmul speed at their start) into ``path``,
    rounded to 0.1 (:func:`merge_record`)."""
    merge_record(path, {name: round(value, 1) for name, value in values.items()}, remove)


def record_run(timings: Path, report: dict, machine: str | None) -> None:
    """Merge one completed run into the records beside the wall times ``timings``: its seconds, and either the CPU's
    matmul speed at its start or, for a run made elsewhere, the ``machine`` it ran on (dropping the other record)."""
    name = report["name"]
    record_timings(timings, {name: report["seconds"]})
    if machine:
        record_timings(speed_path(timings), {}, remove=[name])
        merge_record(machine_path(timings), {name: machine})
    else:
        record_timings(speed_path(timings), {name: report["matmul_gflops"]})
        merge_record(machine_path(timings), {}, remove=[name])


def staging_dir(scale: str, name: str, root: Path = STAGING) -> Path:
    """Where one run of notebook ``name`` writes before promotion: ``<root>/<scale>/<name>``."""
    return root / scale / name


def failing_cell(exc: papermill.PapermillExecutionError) -> str:
    """A short description of the failing cell: its index, first source line and the error."""
    first_line = (exc.source or "").strip().splitlines()[:1]
    where = f"cell {exc.cell_index}" + (f" ({first_line[0][:80]!r})" if first_line else "")
    return f"{where}: {exc.ename}: {exc.evalue}"


def machine_argument(text: str) -> str:
    """argparse type: a one-line description of the machine, at most 120 printable characters, no "|" (the report
    shows it in a Markdown table cell)."""
    text = text.strip()
    if not text or len(text) > 120:
        raise argparse.ArgumentTypeError(f"machine must be 1 to 120 characters, got {len(text)}: {text!r}")
    if "|" in text or not text.isprintable():
        raise argparse.ArgumentTypeError(f"machine must be one line without '|' or control characters, got {text!r}")
    return text


def seed_argument(text: str) -> int:
    """argparse type: a seed numpy accepts, an integer in [0, 2**32)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be an integer, got {text!r}") from None
    if not 0 <= seed < 2**32:
        raise argparse.ArgumentTypeError(f"seed must be in [0, 2**32), got {seed}")
    return seed


def notebook_argument(text: str) -> Path:
    """argparse type: an existing percent-format notebook source (a ``.py`` file with ``# %%`` cells)."""
    path = Path(text)
    if path.suffix != ".py":
        raise argparse.ArgumentTypeError(f"{text}: not a notebook source (expected a percent-format .py file)")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if "# %%" not in path.read_text(errors="replace"):
        raise argparse.ArgumentTypeError(f"{text}: not a percent-format notebook (no '# %%' cell marker)")
    return path


def completion_error(results_file: Path) -> str | None:
    """Why the results file does not show a completed run (None when it says ``"complete": true``)."""
    if not results_file.exists():
        return f"no results file {results_file.name}: the notebook never created its Recorder"
    try:
        complete = json.loads(results_file.read_text()).get("complete") is True
    except (json.JSONDecodeError, AttributeError) as exc:
        return f"unreadable results file {results_file.name}: {exc}"
    return None if complete else f"{results_file.name} is not marked complete (the last cell must call rec.finish())"


def mark_complete(executed: Path, scale: str, seed: int) -> None:
    """Record in the executed notebook's metadata that its run completed (what ``make book`` checks)."""
    notebook = nbformat.read(executed, as_version=4)
    notebook.metadata["rflib"] = {"complete": True, "scale": scale, "seed": seed}
    nbformat.write(notebook, executed)


def promote(staged: Path, destination: Path) -> list[Path]:
    """Copy every file under ``staged`` to the same place under ``destination``, each atomically: to a temporary
    file next to its destination, then ``os.replace``. Hidden files (writers' temporaries) are skipped."""
    promoted = []
    for source in sorted(p for p in staged.rglob("*") if p.is_file() and not p.name.startswith(".")):
        target = destination / source.relative_to(staged)
        promoted.append(write_atomically(target, partial(shutil.copyfile, source)))
    return promoted


@contextlib.contextmanager
def interrupts_deferred():
    """Hold SIGINT and SIGTERM until the block ends, then deliver the first, so a promotion is never cut half-way.
    (Signal handlers can only be set from the main thread; elsewhere the block runs unprotected.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []
    previous = {signum: signal.signal(signum, lambda s, _: received.append(s)) for signum in INTERRUPTS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if received:
            signal.raise_signal(received[0])


def kernel_environment(staged: dict[str, Path]) -> dict[str, str]:
    """The environment the kernel inherits: staging directories, headless inline figures, allocator settings,
    deterministic GPU kernels."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = deterministic_xla_flags(env.get("XLA_FLAGS", ""))
    env["FIG_DIR"] = str(staged["figures"])
    env["RESULTS_DIR"] = str(staged["results"])
    # Inline figures (rendered headless by Agg) so the executed notebooks and the book show them; "agg" would not.
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    env.update(ALLOCATOR_ENV)  # stable wall-clock timings in the kernels (rflib/experiments/allocator.py)
    # The notebook chooses its own precision; don't let the test process's float64 flag leak into it.
    env.pop("JAX_ENABLE_X64", None)
    return env


def run_notebook(
    source: Path, scale: str, seed: int = 0, dirs: dict[str, Path] | None = None, staging: Path | None = None
) -> dict:
    """Convert and execute one notebook in its staging directory and promote its output to ``dirs`` if it completed.

    Returns {name, seconds, ok, error, claims, staging}: ``claims`` come from this run only and only when it
    completed; ``staging`` is where a run that did not complete left its partial output (None once promoted).
    Never raises on cell errors; an interrupt (KeyboardInterrupt) propagates and promotes nothing.
    """
    dirs = dirs or output_dirs(scale)
    staging = staging or staging_dir(scale, source.stem)
    shutil.rmtree(staging, ignore_errors=True)
    staged = {kind: staging / kind for kind in KINDS}
    for path in staged.values():
        path.mkdir(parents=True)
    ipynb_dir = ROOT / "build" / "ipynb"
    ipynb_dir.mkdir(parents=True, exist_ok=True)
    converted = ipynb_dir / f"{source.stem}.ipynb"
    nbformat.write(jupytext.read(source), converted)

    executed = staged["executed"] / f"{source.stem}.ipynb"
    env_before = dict(os.environ)
    env_for_kernel = kernel_environment(staged)  # computed before the clear below, which it would otherwise see
    os.environ.clear()
    os.environ.update(env_for_kernel)
    start = time.perf_counter()
    error = None
    try:
        papermill.execute_notebook(
            str(converted),
            str(executed),
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
    results_file = staged["results"] / f"{source.stem}.json"
    error = error or completion_error(results_file)
    report = {"name": source.stem, "seconds": seconds, "ok": error is None, "error": error, "claims": []}
    if error is not None:
        return report | {"staging": staging}
    report["claims"] = json.loads(results_file.read_text()).get("claims", [])
    mark_complete(executed, scale, seed)
    with interrupts_deferred():
        for kind in KINDS:
            promote(staged[kind], dirs[kind])
        shutil.rmtree(staging, ignore_errors=True)
    return report | {"staging": None}


class Interrupted(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt so that the run stops the same way."""


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)


def interrupted_message(exc: KeyboardInterrupt, name: str, staging: Path, dirs: dict[str, Path]) -> str:
    """What an interrupted run tells its user: nothing was promoted, and where the partial output is."""
    what = "SIGTERM" if isinstance(exc, Interrupted) else "SIGINT"
    untouched = ", ".join(str(d) for d in dict.fromkeys((dirs["results"], dirs["figures"])))
    where = f"partial output in {staging}" if staging.exists() else "nothing was staged"
    return f"\ninterrupted ({what}) while running {name}: {untouched} untouched; {where}"


def summary_line(report: dict) -> str:
    """One summary line: status, name, seconds and the count of each verdict among the run's claims."""
    verdicts = [c["verdict"] for c in report["claims"]]
    counts = ", ".join(f"{v} {verdicts.count(v)}" for v in VERDICTS if v in verdicts)
    status = "ok    " if report["ok"] else "FAILED"
    speed = f" (machine {report['matmul_gflops']:.0f} GFLOP/s)" if "matmul_gflops" in report else ""
    return f"  {status} {report['name']:<40} {report['seconds']:7.1f} s{speed}   claims: {counts or '-'}"


def parse_args(argv=None) -> argparse.Namespace:
    """The command line, every value checked (argparse exits 2 with a message on stderr before anything runs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=SCALES, default="standard")
    parser.add_argument("--seed", type=seed_argument, default=0, help="integer in [0, 2**32) (default 0)")
    parser.add_argument("--out", type=Path, help="promote to OUT/{executed,figures,results} instead of the default")
    parser.add_argument("--staging", type=Path, default=STAGING, help=f"staging root (default {STAGING})")
    parser.add_argument(
        "--machine",
        type=machine_argument,
        help="where the run happens when not on this CPU (e.g. 'one NVIDIA H200, JAX 0.11.2'): recorded beside the "
        "wall times instead of the CPU's matmul speed",
    )
    parser.add_argument(
        "notebooks", nargs="*", type=notebook_argument, help="notebook sources (default: notebooks/*.py)"
    )
    args = parser.parse_args(argv)
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out}: not a directory")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    sources = args.notebooks or sorted((ROOT / "notebooks").glob("*.py"))
    if not sources:
        print("no notebooks found under notebooks/", file=sys.stderr)
        return 1
    dirs = output_dirs(args.scale, args.out)

    reports = []
    total_start = time.perf_counter()
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous_sigterm = signal.signal(signal.SIGTERM, _raise_interrupted) if on_main_thread else None
    try:
        for source in sources:
            gflops = None if args.machine else matmul_gflops()  # the CPU's speed says nothing of another machine's
            where = args.machine or f"machine {gflops:.0f} GFLOP/s"
            print(f"▶ {source.stem}  (scale={args.scale}, seed={args.seed}; {where})", flush=True)
            staging = staging_dir(args.scale, source.stem, args.staging)
            try:
                report = run_notebook(source.resolve(), args.scale, args.seed, dirs, staging)
            except KeyboardInterrupt as exc:
                print(interrupted_message(exc, source.stem, staging, dirs), file=sys.stderr, flush=True)
                return 128 + (signal.SIGTERM if isinstance(exc, Interrupted) else signal.SIGINT)
            if gflops is not None:
                report["matmul_gflops"] = gflops
            reports.append(report)
            if report["ok"]:  # recorded at once: a later notebook of this run (11) reads it, a failure keeps it
                record_run(timings_path(args.scale, args.out), report, args.machine)
            print(f"  {'ok' if report['ok'] else 'FAILED'} in {report['seconds']:.1f} s", flush=True)
            if report["error"]:
                print(f"  {source.stem}: {report['error']}", flush=True)
                print(f"  nothing promoted; partial output in {report['staging']}", flush=True)
    finally:
        if on_main_thread:
            signal.signal(signal.SIGTERM, previous_sigterm)

    print(f"\nSummary (scale={args.scale}, total {time.perf_counter() - total_start:.1f} s):")
    for r in reports:
        print(summary_line(r))
        for c in r["claims"]:
            if c["verdict"] in ("fails", "inconclusive"):
                print(f"      {c['verdict']}: {c['id']}: {c['claim']}")
    failed = [r["name"] for r in reports if not r["ok"]]
    if failed:
        print(f"\n{len(failed)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
