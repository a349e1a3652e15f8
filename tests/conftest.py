"""Test configuration: every identity is checked in float64.

The Makefile exports JAX_ENABLE_X64=1 for the test process; setting it here as well (before JAX is imported)
makes a bare ``pytest`` run behave the same. The flag is sticky per process, so it is never toggled per test.
"""

import logging
import os
from pathlib import Path

os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# The partitionable threefry lowering costs ~2 s of XLA compile per new random shape on the 2-core CPU (0.3 s without);
# it only matters for sharded arrays. Notebooks make the same choice, so streams agree between tests and notebooks.
os.environ.setdefault("JAX_THREEFRY_PARTITIONABLE", "0")

import jax  # noqa: E402
import pytest  # noqa: E402

if not jax.config.jax_enable_x64:
    raise RuntimeError("tests need float64: run them with JAX_ENABLE_X64=1 (make test does)")


@pytest.fixture
def key():
    """A fixed key: every Monte Carlo test is deterministic."""
    return jax.random.key(20260122)


def _compiles(fn, *args) -> int:
    """How many XLA compilations ``fn(*args)`` triggers (counted from jax.log_compiles' log records)."""
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            if "Compiling" in record.getMessage():
                records.append(record)

    handler, logger = Collect(level=logging.WARNING), logging.getLogger("jax")
    logger.addHandler(handler)
    try:
        with jax.log_compiles():
            jax.block_until_ready(fn(*args))
    finally:
        logger.removeHandler(handler)
    return len(records)


@pytest.fixture
def count_compiles():
    """``count_compiles(fn, *args)``: how many XLA compilations the call triggers."""
    return _compiles


# The notebook runs and the book built from them: one unit of work for pytest-xdist, run first and in this order.
NOTEBOOK_FILES = ("test_notebooks.py", "test_notebooks_book.py")


def _is_notebook_file(path: str) -> bool:
    return Path(path).name in NOTEBOOK_FILES


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Put the notebook runs and the book test first (a plain ``pytest`` run keeps this order too): the book test
    publishes what the runs just wrote, and the runs are the longest unit of ``make test``'s workers."""
    items.sort(key=lambda item: not _is_notebook_file(item.nodeid.split("::", 1)[0]))


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (``make test``), except that the two notebook files are one unit: each test file runs in
    one worker (its tests share compiled functions and module fixtures), and the book test runs in the worker that
    has just run the notebooks, after them. A worker that crashes costs its current test (reported failed); the rest
    of its file goes to another worker. (xdist's ``--dist loadgroup`` marks do not group under pytest 9: the
    suffix it writes to ``item._nodeid`` is no longer read, so grouping is done here on the file names.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class NotebooksTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return "notebook runs and book" if _is_notebook_file(path) else path

        def remove_node(self, node):
            """A crashed worker's files go back to the queue without the test it crashed on (xdist has already
            reported that one failed) and without the files it finished. xdist 3.8.0 requeues both: the replacement
            worker reran the crash, then every worker waited forever on files with nothing left to run
            (pytest-xdist#1323, #1371, #1378), and a CI run hung until its time limit."""
            workload = self.assigned_work.pop(node)
            unfinished = {scope: unit for scope, unit in workload.items() if not all(unit.values())}
            if not unfinished:
                return None
            crashed_unit = next(iter(unfinished.values()))  # a worker runs its files in the order it was given them
            crashitem = next(nodeid for nodeid, done in crashed_unit.items() if not done)
            crashed_unit[crashitem] = True
            for scope, unit in reversed(unfinished.items()):
                if not all(unit.values()):
                    self.workqueue[scope] = unit
                    self.workqueue.move_to_end(scope, last=False)
            for other in self.assigned_work:
                self._reschedule(other)
            return crashitem

        def _reschedule(self, node) -> None:
            """Give ``node`` files until it holds more than two tests, then, once the queue is empty, shut it down. A
            worker runs a test only when it knows the next one (or is told to stop): xdist 3.8.0 gave a replacement
            worker one file, and with a single test in it the worker waited forever when no other worker was left to
            end the run (pytest-xdist#1327; ``-n auto`` on one core). A replacement still collecting is skipped (work
            sent to it before its collection is registered raised a KeyError that xdist swallows, losing the crashed
            test's report); ``schedule()`` serves it once its collection arrives."""
            if node.shutting_down or node not in self.registered_collections:
                return
            while self.workqueue and self._pending_of(self.assigned_work[node]) <= 2:
                self._assign_work_unit(node)
            if not self.workqueue:
                node.shutdown()

    return NotebooksTogether(config, log)
