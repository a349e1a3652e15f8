"""The repository's own contracts: pins mirrored in environment.yml, jupytext headers, parameters cells, CI entry."""

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))


def _name_and_pin(requirement: str) -> tuple[str, str]:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*==\s*([^\s;]+)\s*", requirement)
    assert match, f"{requirement!r} is not pinned with =="
    return match.group(1).lower().replace("_", "-"), match.group(2)


def test_environment_yml_installs_the_hashed_lock_on_python_3_11():
    # pip checks every hash once one requirement has one, so an unhashed pin beside the lock would fail the install;
    # the lock holds every direct pin (checked against pyproject.toml below).
    yml_lines = (ROOT / "environment.yml").read_text().splitlines()
    assert not [line for line in yml_lines if re.match(r"\s*- [A-Za-z].*==", line)], "pins belong in the lock"
    assert any(line.strip() == "- -r requirements.lock" for line in yml_lines)
    assert any(line.strip() == "- python=3.11" for line in yml_lines)


def test_lock_file_pins_every_direct_dependency_at_the_pyproject_version_and_make_installs_from_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    pins = dict(_name_and_pin(r) for r in project["dependencies"] + extras["test"] + extras["book"])
    lock_lines = [line for line in (ROOT / "requirements.lock").read_text().splitlines() if "==" in line]
    locked = dict(_name_and_pin(line.removesuffix("\\")) for line in lock_lines if not line.startswith((" ", "#")))
    assert {name: locked.get(name) for name in pins} == pins, "requirements.lock is stale: run `make lock`"
    assert len(locked) > 2 * len(pins), "the lock should pin the transitive dependencies too"
    makefile = (ROOT / "Makefile").read_text()
    assert "--require-hashes -r requirements.lock" in makefile
    assert re.search(r"^ENV_INPUTS := .*requirements\.lock", makefile, flags=re.M)
    assert "- -r requirements.lock" in (ROOT / "environment.yml").read_text()


def test_no_deps_requirements_are_pinned_installed_by_make_and_documented_for_conda():
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements-nodeps.txt").read_text().splitlines()]
    pins = dict(_name_and_pin(line) for line in lines if line)
    assert pins, "requirements-nodeps.txt lists no package"
    makefile = (ROOT / "Makefile").read_text()
    assert "--require-hashes --no-deps -r requirements-nodeps.lock" in makefile
    assert re.search(r"^ENV_INPUTS := .*requirements-nodeps\.txt requirements-nodeps\.lock", makefile, flags=re.M)
    assert "--require-hashes --no-deps -r requirements-nodeps.lock" in (ROOT / "environment.yml").read_text()


def test_there_is_at_least_one_notebook():
    assert NOTEBOOKS, "notebooks/ holds no percent-format .py notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_a_jupytext_header_with_python3_kernelspec(path):
    header = path.read_text().split("\n# ---\n", 1)[0]
    assert path.read_text().startswith("# ---\n# jupyter:\n"), "missing jupytext YAML header"
    assert "format_name: percent" in header
    assert re.search(r"kernelspec:\n#\s+display_name: Python 3\n#\s+language: python\n#\s+name: python3", header)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_a_parameters_cell_with_scale_and_seed(path):
    text = path.read_text()
    cell = re.search(r'# %% tags=\["parameters"\]\n(.*?)(?=\n# %%)', text, re.S)
    assert cell, 'no "# %% tags=["parameters"]" cell'
    assert re.search(r'^scale = "standard"', cell.group(1), re.M), "default scale must be standard"
    assert re.search(r"^seed = \d+", cell.group(1), re.M)


def test_jupytext_pairs_ipynb_with_percent_py_and_ipynb_is_generated():
    assert 'formats = "ipynb,py:percent"' in (ROOT / "jupytext.toml").read_text()
    assert "notebooks/*.ipynb" in (ROOT / ".gitignore").read_text()


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme
    assert re.search(r"^make test\b", ci, re.M)
    assert "set -euo pipefail" in ci


def test_the_repository_stands_alone_without_the_reproduction_notes():
    """A user's clone has none of the project's private reproduction notes: nothing tracked may point at their folder
    or cite them instead of ERRATA.md."""
    folder = "shared"  # the notes' folder beside the repository, spelt in pieces so this test does not name it
    cited = (f"../{folder}", f"{folder}/notes", "notes §", "HRF notes", "verification.md")
    pattern = re.compile("|".join(map(re.escape, cited)))
    offenders = [
        f"{path.relative_to(ROOT)}:{i}"
        for folder in ("rflib", "tests", "tools", "notebooks", "benchmarks", "data")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in {".py", ".md", ".toml", ".yml", ".txt"} and path.name != "test_repository.py"
        for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if pattern.search(line)
    ]
    offenders += [name for name in ("README.md", "ERRATA.md", "Makefile") if pattern.search((ROOT / name).read_text())]
    assert not offenders, offenders


def test_errata_cite_tests_and_notebook_sections_that_exist():
    """Every ``tests/test_x.py::test_name`` and notebook § heading that ERRATA.md names as a demonstration exists."""
    text = (ROOT / "ERRATA.md").read_text()
    cited = [c for c in re.findall(r"tests/(test_\w+\.py)::(test_\w+)", text) if c[0] != "test_x.py"]  # x: template
    assert len(cited) > 20
    missing = [f"{f}::{name}" for f, name in cited if f"def {name}(" not in (ROOT / "tests" / f).read_text()]
    assert not missing, f"ERRATA.md cites tests that do not exist: {missing}"
    flat = re.sub(r"\s*\n\s*", " ", text)  # titles wrap across lines
    cites = [(m.group(1), m.end()) for m in re.finditer(r"`notebooks/(\d\d_\w+\.py)`, § \"", flat)]
    assert len(cites) > 20
    headings = {nb: re.findall(r"^# ###? (.+)$", (ROOT / "notebooks" / nb).read_text(), re.M) for nb, _ in cites}
    # a title may itself quote ("O(k)"), so a citation is good when some heading of that notebook, then the closing
    # quote, starts there
    gone = [
        f"{nb} § {flat[at : at + 60]}…"
        for nb, at in cites
        if not any(flat.startswith(h + '"', at) for h in headings[nb])
    ]
    assert not gone, f"ERRATA.md cites notebook sections that do not exist: {gone}"
