"""``make test``'s worker scheduling (tests/conftest.py): the book test must run after the notebook runs it publishes,
in the same worker. A CI run once failed because it did not (xdist's ``loadgroup`` marks stopped grouping under
pytest 9, so the book re-ran notebook 08 while another worker ran it into the same staging directory).

A tiny suite with the same file names is run in a subprocess with the Makefile's own xdist options and this
repository's conftest; each test records which worker ran it, in which order."""

import json
import re
import subprocess
import sys
from pathlib import Path

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
    from tests import conftest

    assert all((ROOT / "tests" / name).is_file() for name in conftest.NOTEBOOK_FILES), conftest.NOTEBOOK_FILES


def test_the_book_test_runs_after_every_notebook_run_in_the_same_worker(tmp_path):
    log = tmp_path / "order.jsonl"
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('repo_conftest', {str(ROOT / 'tests' / 'conftest.py')!r})\n"
        "repo = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(repo)\n"
        "pytest_collection_modifyitems = repo.pytest_collection_modifyitems\n"
        "pytest_xdist_make_scheduler = repo.pytest_xdist_make_scheduler\n"
    )
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
    (tmp_path / "pytest.ini").write_text("[pytest]\n")

    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", *_makefile_dist_options()]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr

    records = [json.loads(line) for line in log.read_text().splitlines()]
    notebook_side = [(worker, name) for worker, name in records if name in runs or name == "book"]
    assert {worker for worker, _ in notebook_side} != {"main"}, "the suite did not run in xdist workers"
    assert len({worker for worker, _ in notebook_side}) == 1, f"notebook runs and book split over workers: {records}"
    assert [name for _, name in notebook_side] == [*runs, "book"], f"the book must follow every run: {records}"
