"""The progress-bar convention (rflib/experiments/progress_bars.py): ``bar`` shows tqdm only when enabled, every
harness with a bar takes ``progress: bool = False`` as a keyword, tqdm is imported nowhere else, and a bar never
changes a result."""

import importlib
import inspect
import io
import re
from pathlib import Path

import pytest

import rflib.experiments
from benchmarks.suites import SUITES, run_suite
from rflib.experiments import separation_sweeps
from rflib.experiments.progress_bars import bar

ROOT = Path(__file__).resolve().parent.parent


def test_bar_returns_the_iterable_itself_when_disabled_and_a_described_tqdm_when_enabled():
    items = [3, 1, 2]
    assert bar(items, "anything", False) is items
    shown = bar(items, "sorting", True, leave=False, file=io.StringIO())
    assert shown is not items and shown.desc == "sorting" and not shown.leave
    assert list(shown) == items


def _modules():
    yield from (importlib.import_module(f"rflib.experiments.{name}") for name in rflib.experiments.__all__)
    yield from SUITES.values()
    yield importlib.import_module("benchmarks.suites")


@pytest.mark.parametrize("module", list(_modules()), ids=lambda m: m.__name__)
def test_every_progress_parameter_is_a_keyword_bool_that_defaults_to_off(module):
    functions = [f for _, f in inspect.getmembers(module, inspect.isfunction) if f.__module__ == module.__name__]
    for function in functions:
        parameter = inspect.signature(function).parameters.get("progress")
        if parameter is None:
            continue
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, f"{function.__qualname__}: progress is a keyword"
        assert parameter.default is False, f"{function.__qualname__}: progress defaults to False"
        assert parameter.annotation in ("bool", bool), f"{function.__qualname__}: progress is a bool"


def test_tqdm_is_imported_only_by_the_progress_bars_module():
    sources = [*(ROOT / "rflib").rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
    importing = sorted(
        str(p.relative_to(ROOT)) for p in sources if re.search(r"^\s*(from|import) tqdm", p.read_text(), re.M)
    )
    assert importing == ["rflib/experiments/progress_bars.py"]


def test_a_bar_changes_no_result():
    quiet = separation_sweeps.class_gaps([16, 32, 64], 10, 0.01, 1.2, 0.2, 0.8)
    shown = separation_sweeps.class_gaps([16, 32, 64], 10, 0.01, 1.2, 0.2, 0.8, progress=True)
    assert quiet == shown
    rows_quiet = run_suite("hrf_construction", "quick")["rows"]
    rows_shown = run_suite("hrf_construction", "quick", progress=True)["rows"]
    assert [{k: v for k, v in r.items() if not k.endswith(("_ms", "speedup", "speedup_se"))} for r in rows_quiet] == [
        {k: v for k, v in r.items() if not k.endswith(("_ms", "speedup", "speedup_se"))} for r in rows_shown
    ]
