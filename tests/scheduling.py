"""How ``make test`` orders and schedules the tests over its pytest-xdist workers (the hooks are registered by
tests/conftest.py). Nothing here imports JAX, so the small suites of tests/test_make_test_workers.py that load these
hooks start their workers in a fraction of a second."""

from pathlib import Path

import pytest

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
        def __init__(self, config, log=None):
            super().__init__(config, log)
            self._gone: set = set()  # workers whose channel refused a send, until xdist reports their crash

        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return "notebook runs and book" if _is_notebook_file(path) else path

        def remove_node(self, node):
            """A crashed worker's files go back to the queue without the test it crashed on (xdist has already
            reported that one failed) and without the files it finished. xdist 3.8.0 requeues both: the replacement
            worker reran the crash, then every worker waited forever on files with nothing left to run
            (pytest-xdist#1323, #1371, #1378), and a CI run hung until its time limit."""
            self._gone.discard(node)
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
            if node.shutting_down or node not in self.registered_collections or node in self._gone:
                return
            while self.workqueue and self._pending_of(self.assigned_work[node]) <= 2:
                if not self._assign_work_unit(node):
                    return
            if not self.workqueue:
                node.shutdown()

        def _assign_work_unit(self, node) -> bool:
            """Send ``node`` the next file; False when the worker is gone. A worker that died before the controller
            heard of it (its crash still queued behind the report that asked for more work) refuses the send with
            an OSError from execnet, which xdist does not catch: a loaded ``make test`` ended in an INTERNALERROR.
            The file then goes back to the head of the queue for the other workers, and nothing more is sent to the
            dead one; :meth:`remove_node` forgets it when xdist handles the crash."""
            if node in self._gone:
                return False
            scope, unit = next(iter(self.workqueue.items()))
            try:
                super()._assign_work_unit(node)
            except OSError:
                self.assigned_work[node].pop(scope, None)
                self.workqueue[scope] = unit
                self.workqueue.move_to_end(scope, last=False)
                self._gone.add(node)
                return False
            return True

    return NotebooksTogether(config, log)
