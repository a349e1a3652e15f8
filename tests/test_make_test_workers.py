"""``make test``'s worker scheduling (tests/scheduling.py, registered by tests/conftest.py): the book test must run
after the notebook runs it publishes, in the same worker. A CI run once failed because it did not (xdist's
``loadgroup`` marks stopped grouping under pytest 9, so the book re-ran notebook 08 while another worker ran it into
the same staging directory).

A tiny suite with the same file names is run in a subprocess with the Makefile's own xdist options and this
repository's scheduling hooks; each test records which worker ran it, in which order.

A worker that crashes (a segmentation fault inside XLA's compiler took one down in CI) must cost one failed test, not
the run: xdist 3.8.0's file scheduler reran the crash in the replacement worker and then hung until CI's time limit."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

RECORDING_TEST = """
import json, os, time
import pytest

def record(name):
    with open({log!r}, "a") as f:
        f.write(json.dumps([os.environ.get("PYTEST_XDIST_WORKER", "main"), name]) + "\\n")
"""


def _makefile_dist_options() -> list[str]:
    """The ``--dist`` options of the Makefile's test recipe (so that this test checks what ``make test`` runs)."""
    text = (ROOT / "Makefile").read_text()
    match = re.search(r"-n \$\(TEST_WORKERS\)((?: --[\w-]+(?: \w+)?)+)", text)
    assert match, "the Makefile's test recipe no longer passes -n $(TEST_WORKERS) --dist ..."
    return match.group(1).split()


def test_the_grouped_files_exist():
    """The scheduler groups by file name: a renamed notebook test file would silently leave the group."""
    from tests import scheduling

    assert all((ROOT / "tests" / name).is_file() for name in scheduling.NOTEBOOK_FILES), scheduling.NOTEBOOK_FILES


def test_the_conftest_registers_the_scheduling_hooks_the_suites_below_load():
    """The suites below load tests/scheduling.py's hooks (without JAX, which the conftest imports); make test runs
    the conftest's, so they must be the same functions."""
    from tests import conftest, scheduling

    for hook in ("pytest_collection_modifyitems", "pytest_xdist_make_scheduler"):
        assert getattr(conftest, hook) is getattr(scheduling, hook), hook


def _suite_with_the_scheduling_hooks(tmp_path: Path) -> Path:
    """An empty test folder whose conftest uses this repository's ordering and scheduling hooks (tests/scheduling.py,
    as tests/conftest.py does)."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('repo_scheduling', {str(ROOT / 'tests' / 'scheduling.py')!r})\n"
        "repo = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(repo)\n"
        "pytest_collection_modifyitems = repo.pytest_collection_modifyitems\n"
        "pytest_xdist_make_scheduler = repo.pytest_xdist_make_scheduler\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return tests


def _run_with_makefile_options(tmp_path: Path, workers: int = 2) -> subprocess.CompletedProcess:
    options = ["-q", "-p", "no:cacheprovider", "-n", str(workers), *_makefile_dist_options()]
    command = [sys.executable, "-m", "pytest", *options]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_the_book_test_runs_after_every_notebook_run_in_the_same_worker(tmp_path):
    log = tmp_path / "order.jsonl"
    tests = _suite_with_the_scheduling_hooks(tmp_path)
    header = RECORDING_TEST.format(log=str(log))
    runs = [f"{i:02d}_notebook" for i in range(6)]
    (tests / "test_notebooks.py").write_text(
        header
        + f"@pytest.mark.parametrize('name', {runs!r})\n"
        + "def test_notebook_runs_at_quick_scale(name):\n    time.sleep(0.1)\n    record(name)\n"
    )
    (tests / "test_notebooks_book.py").write_text(header + "def test_book():\n    record('book')\n")
    for other in ("test_alpha.py", "test_zeta.py"):
        (tests / other).write_text(header + f"def test_other():\n    time.sleep(0.2)\n    record({other!r})\n")

    done = _run_with_makefile_options(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr

    records = [json.loads(line) for line in log.read_text().splitlines()]
    notebook_side = [(worker, name) for worker, name in records if name in runs or name == "book"]
    assert {worker for worker, _ in notebook_side} != {"main"}, "the suite did not run in xdist workers"
    assert len({worker for worker, _ in notebook_side}) == 1, f"notebook runs and book split over workers: {records}"
    assert [name for _, name in notebook_side] == [*runs, "book"], f"the book must follow every run: {records}"


CRASH_SCENARIOS = {  # the crashing file, the tests after the crash in it, the other files, their sleep, workers
    # the crashed worker had finished a file before (xdist 3.8.0 requeued it, then waited on it forever)
    "after a finished file": ("test_crash.py", ["after", "last"], [f"test_{name}.py" for name in "acdef"], 0.3, 2),
    # the replacement worker starts while files are still queued
    "with files still queued": ("test_a_crash.py", ["after", "last"], [f"test_{n}.py" for n in "bcdefg"], 1.5, 2),
    # one worker (``-n auto`` on one core), one test left in the crashed file: xdist 3.8.0 gave the replacement that
    # file alone and it waited forever for a second test
    "one worker": ("test_a_crash.py", ["after"], ["test_b.py", "test_c.py"], 0.2, 1),
}


@pytest.mark.parametrize("scenario", sorted(CRASH_SCENARIOS))
def test_a_crashed_worker_costs_one_failed_test_and_the_run_goes_on(tmp_path, scenario):
    """A test that kills its worker (SIGSEGV, as XLA's compiler once did) in the middle of a file: the run ends, that
    test fails once, and every other test, the rest of its file included, runs exactly once."""
    crash_file, after_crash, others, seconds, workers = CRASH_SCENARIOS[scenario]
    log = tmp_path / "order.jsonl"
    tests = _suite_with_the_scheduling_hooks(tmp_path)
    header = RECORDING_TEST.format(log=str(log)) + "import resource, signal\n"
    (tests / crash_file).write_text(
        header
        + "def test_before():\n    time.sleep(0.2)\n    record('before')\n"
        + "def test_crash():\n    record('crash')\n"
        + "    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file\n"
        + "    os.kill(os.getpid(), signal.SIGSEGV)\n"
        + "".join(f"def test_{name}():\n    record({name!r})\n" for name in after_crash)
    )
    for other in others:
        (tests / other).write_text(header + f"def test_other():\n    time.sleep({seconds})\n    record({other!r})\n")

    try:
        done = _run_with_makefile_options(tmp_path, workers)
    except subprocess.TimeoutExpired as hung:
        printed = b"".join(part or b"" for part in (hung.stdout, hung.stderr)).decode(errors="replace")
        raise AssertionError(f"the run hung after the worker crashed:\n{printed}") from None

    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(rf"\b1 failed, {1 + len(after_crash) + len(others)} passed\b", done.stdout), done.stdout
    assert f"crashed while running 'tests/{crash_file}::test_crash'" in done.stdout, done.stdout
    names = sorted(name for _, name in (json.loads(line) for line in log.read_text().splitlines()))
    assert names == sorted(["before", "crash", *after_crash, *others]), f"each test must run once: {names}"


class _Worker:
    """A worker controller that records the files it is sent; after ``alive_sends`` sends its process is dead and
    every send fails as execnet's does on a closed channel."""

    shutting_down = False

    def __init__(self, name: str, alive_sends: int):
        self.gateway = type("Gateway", (), {"id": name})()
        self.alive_sends, self.received, self.refused = alive_sends, [], 0

    def send_runtest_some(self, indices):
        if len(self.received) >= self.alive_sends:
            self.refused += 1
            raise OSError("cannot send (already closed?)")
        self.received.append(list(indices))

    def shutdown(self):
        pass


def test_work_sent_to_a_dead_worker_goes_to_the_others(monkeypatch):
    """A worker that dies after its first file, before the controller hears of it: the send of its second file fails.
    The scheduler neither raises (xdist would end the run with an INTERNALERROR, as a loaded make test once did) nor
    parks the file on the dead worker: it goes to the live one, nothing more is sent to the dead one, and when xdist
    reports the crash only the test it crashed on is lost, the rest of its file requeued."""
    import xdist.scheduler.loadscope

    from tests import scheduling

    monkeypatch.setattr(xdist.scheduler.loadscope, "parse_tx_spec_config", lambda config: ["popen", "popen"])
    options = type("Options", (), {"loadscopereorder": True})
    config = type("Config", (), {"getvalue": lambda self, name: "loadfile", "option": options})()
    scheduler = scheduling.pytest_xdist_make_scheduler(config, None)
    files = {"a": 2, "b": 2, "c": 1, "d": 1}  # tests per file; the queue takes them largest first
    collection = [f"tests/test_{f}.py::test_{i}" for f, n in files.items() for i in range(n)]
    dying, live = _Worker("gw0", alive_sends=1), _Worker("gw1", alive_sends=100)
    for node in (dying, live):
        scheduler.add_node(node)
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    assert dying.received == [[0, 1]] and dying.refused == 1  # file a, then one refused send (c), then nothing
    scheduler._reschedule(dying)
    assert dying.refused == 1
    sent_to_live = {collection[i] for batch in live.received for i in batch}
    queued = {nodeid for unit in scheduler.workqueue.values() for nodeid in unit}
    assert sent_to_live | queued == set(collection[2:]) and not sent_to_live & queued
    assert "tests/test_c.py::test_0" in sent_to_live  # the refused file went to the live worker
    assert scheduler.remove_node(dying) == "tests/test_a.py::test_0"
    requeued = {nodeid for unit in scheduler.workqueue.values() for nodeid, done in unit.items() if not done}
    assert requeued - queued == {"tests/test_a.py::test_1"}
