"""Every notebook runs end to end with papermill at quick scale (the same runner `make` uses)."""

import json
import re
from pathlib import Path

import pytest

from rflib.notebook.results import asserted_at, meets_expectation
from tools import run_notebooks as runner

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))


@pytest.mark.notebook
@pytest.mark.timeout(240)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_at_quick_scale(path, monkeypatch):
    monkeypatch.setenv("RFLIB_CHECK_FIGURES", "1")  # savefig reports unlabelled panels and captions without a scale
    dirs = runner.output_dirs("quick")
    report = runner.run_notebook(path, "quick", seed=0, dirs=dirs)
    assert report["ok"], f"{path.stem} failed at {report['error']}"
    results = json.loads((dirs["results"] / f"{path.stem}.json").read_text())
    assert results["parameters"]["scale"] == "quick"
    assert results["claims"], "the notebook recorded no claims"
    assert results["complete"], "the notebook's last cell must call rec.finish()"
    # claims are tests: every claim whose criterion is meaningful at quick scale must come out as documented
    unexpected = [
        f"{c['id']}: {c['verdict']} (documented: {c['expected']})"
        for c in asserted_at(results, "quick")
        if not meets_expectation(c)
    ]
    assert not unexpected, f"quick-meaningful claims that no longer come out as documented: {unexpected}"
    assert list((dirs["figures"]).glob("*.png")), "the notebook saved no figure"
    executed = (dirs["executed"] / f"{path.stem}.ipynb").read_text()
    assert '"image/png"' in executed, "the executed notebook shows no figure inline"
    problems = sorted(set(re.findall(r"\[figure check\] [^\\\"]*", executed)))
    assert not problems, f"figures a reader cannot read on their own: {problems}"


def test_runner_reports_the_failing_notebook_and_cell(tmp_path, capsys):
    bad = tmp_path / "99_broken.py"
    header = (ROOT / "notebooks" / "00_random_features_primer.py").read_text().split("\n\n")[0]  # jupytext header
    cells = [
        "# %% [markdown]\n# A notebook whose last cell fails.",
        '# %% tags=["parameters"]\nscale = "standard"\nseed = 0',
        "# %%\nprint(scale, seed)",
        '# %%\nraise RuntimeError("deliberate failure")',
    ]
    bad.write_text("\n\n".join([header, *cells]) + "\n")
    dirs = {name: tmp_path / name for name in ("executed", "figures", "results")}
    report = runner.run_notebook(bad, "quick", dirs=dirs)
    assert not report["ok"]
    assert "RuntimeError: deliberate failure" in report["error"] and "cell" in report["error"]
    assert runner.main(["--scale", "quick", str(bad)]) == 1
    assert "99_broken: cell" in capsys.readouterr().out


@pytest.mark.notebook
@pytest.mark.timeout(240)
def test_a_quick_notebook_run_twice_gives_identical_results(tmp_path):
    """Exact reproducibility: the same seed gives byte-identical results JSON (notebook 09: seeded numpy and the
    exact formula; the cheapest notebook with Monte Carlo in it)."""
    source = ROOT / "notebooks" / "09_softmax_vs_linear_separation.py"
    texts = []
    for run in ("first", "second"):
        dirs = {name: tmp_path / run / name for name in ("executed", "figures", "results")}
        report = runner.run_notebook(source, "quick", seed=3, dirs=dirs)
        assert report["ok"], report["error"]
        texts.append((dirs["results"] / f"{source.stem}.json").read_text())
    assert texts[0] == texts[1]
    assert '"seed": 3' in texts[0]
