"""Shared benchmark plumbing: device description, timing, compiled memory, crossovers."""

from __future__ import annotations

import math
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

from rflib import projections
from rflib.experiments import simulation, timing
from rflib.experiments.allocator import allocator_tuned
from rflib.features import hybrid


def cpu_model_and_simd(cpuinfo: str | None = None) -> tuple[str, str]:
    """(the CPU's model name, its widest vector extension: "avx512f", "avx2", "avx" or "none") from ``/proc/cpuinfo``
    (or the text given); ("unknown", "unknown") where there is none. Timing ratios of elementwise work to matmuls
    depend on the host: the feature maps read 1.2–1.5× a matmul writing as many columns before 2026-12-07, 1.0–1.4× on
    that day's AVX-512 host."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            return "unknown", "unknown"
    fields = dict(line.split(":", 1) for line in cpuinfo.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    flags = set(fields.get("flags", "").split())
    simd = next((ext for ext in ("avx512f", "avx2", "avx") if ext in flags), "none" if flags else "unknown")
    return fields.get("model name", "unknown"), simd


def device_info() -> dict:
    """What the numbers were measured on."""
    device = jax.devices()[0]
    model, simd = cpu_model_and_simd()
    return {
        "backend": jax.default_backend(),
        "device": getattr(device, "device_kind", str(device)),
        "cpu": platform.processor() or platform.machine(),
        "cpu_model": model,
        "cpu_simd": simd,
        "cpu_count": os.cpu_count(),
        "jax": jax.__version__,
        "allocator_tuned": allocator_tuned(),
    }


def angular_hrf(key, m: int, d: int, dtype=jnp.float32):
    """The suites' HRF configuration: the angular hybrid with m' = m/8 orthogonal base projections per base and
    n = 3 λ projections, i.e. 4m'(n + 1) = 2m features from 2m' + n projections."""
    k1, k2, k3 = jax.random.split(key, 3)
    return hybrid.angular_hybrid_estimator(
        projections.orthogonal(k1, m // 8, d).astype(dtype),
        projections.orthogonal(k2, m // 8, d).astype(dtype),
        projections.gaussian(k3, 3, d).astype(dtype),
    )


def seconds(fn, *args, repeats: int = 7, min_seconds: float = 0.02) -> float:
    """Median wall time of the jitted ``fn(*args)``: compile excluded, device work waited for."""
    return timing.median_seconds(fn, *args, repeats=repeats, min_seconds=min_seconds)


def compiled(fn, *args):
    """``jax.jit(fn)`` compiled ahead of time for ``args`` (call it like fn; compiling once serves both the
    timing and :func:`working_bytes`)."""
    return jax.jit(fn).lower(*args).compile()


def working_bytes(executable) -> int | None:
    """Bytes XLA's buffer assignment reserves for a :func:`compiled` executable beyond its inputs: temporaries +
    output.

    This is the compiled plan's peak for intermediates (buffers are reused across the program), read without
    running it, so it is exact and noise-free; None where the backend does not report it.
    """
    stats = executable.memory_analysis()
    if stats is None:
        return None
    return int(stats.temp_size_in_bytes + stats.output_size_in_bytes)


def loglog_slope(xs, ys) -> float:
    """Least-squares slope of log y against log x (``rflib.experiments.simulation.loglog_slope``)."""
    return simulation.loglog_slope(np.asarray(xs, float), np.asarray(ys, float))


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


def notebook_wall_times(directory) -> dict[str, float]:
    """{notebook stem: seconds} from papermill's ``metadata.papermill.duration`` of the executed notebooks in
    ``directory`` (e.g. ``build/executed`` after ``make``); empty when none were run."""
    import json
    from pathlib import Path

    times = {}
    for path in sorted(Path(directory).glob("*.ipynb")):
        duration = json.loads(path.read_text()).get("metadata", {}).get("papermill", {}).get("duration")
        if duration is not None:
            times[path.stem] = float(duration)
    return times


def suite_table(rows: list[dict], module) -> str:
    """:func:`table` of a suite's rows with the suite module's ``COLUMNS`` and ``FORMATS`` (booleans shown as
    True/False), as printed by ``python -m benchmarks`` and shown by notebook 11."""
    rows = [{k: str(v) if isinstance(v, bool) else v for k, v in r.items()} for r in rows]
    return table(rows, module.COLUMNS, module.FORMATS)


# Where each scale's executed notebooks are (tools/run_notebooks.py, the Makefile), relative to the repository root.
EXECUTED_NOTEBOOKS = {"quick": "build/quick/executed", "standard": "build/executed", "paper": "build/executed-paper"}


def wall_times_by_scale(root=".") -> dict[str, dict[str, float]]:
    """{scale: {notebook stem: seconds}} from :func:`notebook_wall_times` of each scale's executed notebooks
    (:data:`EXECUTED_NOTEBOOKS` below ``root``); a scale never run has an empty dict."""
    from pathlib import Path

    return {scale: notebook_wall_times(Path(root) / path) for scale, path in EXECUTED_NOTEBOOKS.items()}


def within_budget(seconds: dict, names, budget_s: float):
    """Whether every notebook in ``names`` ran within ``budget_s``, from each one's recorded wall time (``seconds``:
    {name: s}): a notebook *holds* if its time is within the budget, *fails* if over it, and is *undecided* if it has
    no recorded time. Returns (``"holds"`` if all hold, ``"fails"`` if any fails, else ``"inconclusive"``;
    {name: "holds" / "fails" / "undecided"}). The machine's speed during each run is shown beside the verdict, not
    used by it: this shared CPU's slow spells are part of "this machine", and its matmul probe does not track every
    workload (notebook 08 ran faster at 207 GFLOP/s on the AVX-512 host of 2026-12-07 than at 308–323 before)."""
    status = {}
    for name in names:
        if name not in seconds:
            status[name] = "undecided"
        else:
            status[name] = "holds" if seconds[name] <= budget_s else "fails"
    outcomes = set(status.values())
    verdict = "fails" if "fails" in outcomes else ("holds" if outcomes <= {"holds"} else "inconclusive")
    return verdict, status


def interleaved_samples(
    fns: dict, args, rounds: int, order_seed: int | None = None, calls: int = 1, min_seconds: float = 0.0
) -> dict[str, list[float]]:
    """{name: seconds per call, one value per round} of ``fns[name](*args)`` over ``rounds`` rounds that call every
    function in turn (after one warm-up call each), waiting for each result; in the order given, or, with
    ``order_seed``, in a fresh random order each round (a call's position in the round biases it by a few per cent on
    the 2-core CPU: measured +3 % for the first of two identical jitted calls, so small differences need shuffled
    rounds). Each round's value is the mean time of ``calls`` consecutive calls, or of as many as make it last
    ``min_seconds`` (the count fixed per function from one more timed warm-up call): calls of a few milliseconds are
    otherwise dominated by the timer's and the scheduler's jitter."""
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a positive integer, got {calls!r}")
    if not min_seconds >= 0:
        raise ValueError(f"min_seconds must be ≥ 0, got {min_seconds!r}")
    repeats = {}
    for name, fn in fns.items():
        jax.block_until_ready(fn(*args))
        repeats[name] = calls
        if min_seconds > 0:
            start = time.perf_counter()
            jax.block_until_ready(fn(*args))
            repeats[name] = max(calls, math.ceil(min_seconds / max(time.perf_counter() - start, 1e-9)))
    names = list(fns)
    shuffle = None if order_seed is None else np.random.default_rng(order_seed)
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name in names if shuffle is None else shuffle.permutation(names):
            start = time.perf_counter()
            for _ in range(repeats[name]):
                jax.block_until_ready(fns[name](*args))
            samples[name].append((time.perf_counter() - start) / repeats[name])
    return samples


def paired_ratio(numerator, denominator) -> tuple[float, float]:
    """(exp(mean log(numerator / denominator)), its standard error by the delta method) over paired rounds: the
    geometric-mean time ratio, from per-round ratios (interleaved, so a drift of the machine's speed cancels in
    each). numerator, denominator: (rounds,) seconds from :func:`interleaved_samples`, rounds ≥ 2."""
    logs = np.log(np.asarray(numerator, float) / np.asarray(denominator, float))
    if logs.size < 2:
        raise ValueError("a paired ratio needs at least two rounds")
    ratio = float(np.exp(logs.mean()))
    return ratio, ratio * float(logs.std(ddof=1) / np.sqrt(logs.size))


def paired_overhead(slow, fast) -> tuple[float, float]:
    """(:func:`paired_ratio` − 1, its standard error): the relative extra time of ``slow`` over paired rounds."""
    ratio, se = paired_ratio(slow, fast)
    return ratio - 1, se
