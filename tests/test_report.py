"""REPRODUCTION.md is generated from results/*.json by tools/make_report.py and must not be stale."""

import json
import re
from pathlib import Path

from rflib.notebook import coverage
from rflib.notebook.results import EXPECTATIONS, SCALES, VERDICTS, asserted_at, meets_expectation
from tools import make_report as report

ROOT = Path(__file__).resolve().parent.parent


def test_reproduction_report_is_in_sync_with_results():
    committed = (ROOT / "REPRODUCTION.md").read_text()
    assert committed == report.render(), "REPRODUCTION.md is stale with respect to results/: run `make report`"


def test_committed_results_come_from_complete_runs():
    incomplete = [
        path.name for path in sorted((ROOT / "results").glob("*.json")) if not json.loads(path.read_text())["complete"]
    ]
    assert not incomplete, f"results from interrupted or failed runs (re-run the notebooks): {incomplete}"


def _committed():
    return {path.stem: json.loads(path.read_text()) for path in sorted((ROOT / "results").glob("*.json"))}


def test_committed_paper_scale_results_are_complete_paper_scale_runs_of_notebooks_that_exist():
    paper_dir = ROOT / "results" / "paper"
    docs = report.load_results(paper_dir) if paper_dir.is_dir() else {}
    timings = report.load_timings(paper_dir) if paper_dir.is_dir() else {}
    for name, doc in docs.items():
        assert (ROOT / "notebooks" / f"{name}.py").exists(), name
        assert doc["complete"] and doc["parameters"]["scale"] == "paper", f"{name}: not a complete `make paper` run"
        assert name in timings, f"{name}: no wall time in results/paper/timings.json"
    if paper_dir.is_dir():  # each wall time is judged against the CPU's speed or the machine named, never both
        speeds, machines = (set(report.load_timings(paper_dir, n)) for n in (report.SPEEDS, report.MACHINES))
        assert machines <= set(timings) and speeds <= set(timings), "a speed or machine without a wall time"
        assert not machines & speeds, f"runs with both a CPU speed and another machine: {machines & speeds}"
        assert all(c["verdict"] in VERDICTS for c in doc["claims"])


def test_committed_results_are_standard_scale_and_every_verdict_has_a_stated_criterion():
    for name, doc in _committed().items():
        assert doc["parameters"]["scale"] == "standard", f"{name}: committed results must come from `make`"
        for claim in doc["claims"]:
            assert claim["verdict"] in VERDICTS
            if claim["verdict"] != "info":
                assert claim.get("criterion"), f"{name}: {claim['id']} has a verdict but no criterion"
                assert claim.get("meaningful_at") in SCALES and claim.get("expected") in EXPECTATIONS


def _departures(docs: dict, scale: str) -> list[str]:
    """Every claim of ``docs`` decidable at ``scale`` whose verdict is not the one its notebook documents."""
    return [
        f"{name}: {c['id']} is {c['verdict']}, documented {c['expected']}"
        for name, doc in docs.items()
        for c in asserted_at(doc, scale)
        if not meets_expectation(c)
    ]


def test_claims_meaningful_at_standard_scale_come_out_as_documented_in_the_committed_results():
    """Claims are tests: the committed (standard-scale) results decide every claim whose criterion is meaningful at
    standard scale or below as the notebook documents (holds, or a documented failure / undecidable claim)."""
    unexpected = _departures(_committed(), "standard")
    assert not unexpected, unexpected


def test_every_claim_comes_out_as_documented_in_the_committed_paper_scale_results():
    """The paper-scale runs are tests too: every claim decidable at paper scale (its ``meaningful_at`` is paper or
    below) came out as the notebook documents it at that scale."""
    paper_dir = ROOT / "results" / "paper"
    unexpected = _departures(report.load_results(paper_dir) if paper_dir.is_dir() else {}, "paper")
    assert not unexpected, unexpected


def test_the_coverage_inventory_is_complete():
    """Every numbered item of every paper is covered exactly once by the committed results, with a known status."""
    seen: dict[str, list[str]] = {}
    for name, doc in _committed().items():
        for entry in doc.get("coverage", []):
            coverage.split_item(entry["item"])  # an item the paper numbers
            assert entry["status"] in coverage.STATUSES and entry["detail"]
            seen.setdefault(entry["item"], []).append(name)
    listed = {f"{paper}:{item}" for paper, items in coverage.PAPER_ITEMS.items() for item in items}
    assert not listed - set(seen), f"items no notebook covers: {sorted(listed - set(seen))}"
    assert not [k for k, v in seen.items() if len(v) > 1], "items covered twice"
    assert "**missing**" not in report.render()


def test_no_notebook_types_a_verdict():
    """Verdicts are computed from measurements: no notebook passes a string literal as a claim's ``holds``."""
    typed = [
        f"{path.name}:{i}"
        for path in sorted((ROOT / "notebooks").glob("*.py"))
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bholds\s*=\s*[\"']", line)
    ]
    assert not typed, f"typed verdicts: {typed}"


def test_every_claim_appears_with_its_verdict_and_a_section_link():
    text = report.render()
    for path in sorted((ROOT / "results").glob("*.json")):
        doc = json.loads(path.read_text())
        assert f"### [{path.stem}]" in text
        for claim in doc["claims"]:
            rows = [line for line in text.splitlines() if line.startswith(f"| {report._text(claim['claim'])}")]
            assert rows, f"{path.stem}: claim {claim['id']} missing from the report"
            assert f"**{claim['verdict']}**" in rows[0]
            assert f"(notebooks/{path.stem}.py#L" in rows[0], f"{claim['id']}: no section link"


def test_report_renders_a_synthetic_results_dir(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "09_demo.py").write_text('# ## 2 · A section\nrec.record(\n    "c|1",\n')
    doc = {
        "notebook": "09_demo",
        "parameters": {"scale": "quick"},
        "claims": [
            {"id": "c|1", "claim": "x | y", "paper": 1.0, "ours": {"a": 0.5}, "verdict": "fails", "note": "why"}
        ],
    }
    (tmp_path / "results" / "09_demo.json").write_text(json.dumps(doc))
    text = report.render(tmp_path / "results", tmp_path)
    assert "| Why softmax attention outperforms linear attention | 09 | 1 fails |" in text
    assert "| x \\| y — why | 1 | a: 0.5 | **fails** | [09 § A section](notebooks/09_demo.py#L1) |" in text
    assert "scale: quick" in text
    assert "**Incomplete run**" in text  # the synthetic file has no "complete": true
    doc["complete"] = True
    (tmp_path / "results" / "09_demo.json").write_text(json.dumps(doc))
    text = report.render(tmp_path / "results", tmp_path)
    assert "**Incomplete run**" not in text
    assert "No notebook has been run at paper scale yet." in text
    # a paper-scale run of the same notebook: its value and verdict beside the standard ones, its wall time listed
    (tmp_path / "results" / "paper").mkdir()
    big = dict(doc, parameters={"scale": "paper"}, claims=[dict(doc["claims"][0], ours={"a": 0.9}, verdict="holds")])
    big["claims"].append({"id": "c2", "claim": "only at paper scale", "paper": 2, "ours": 3, "verdict": "info"})
    (tmp_path / "results" / "paper" / "09_demo.json").write_text(json.dumps(big))
    (tmp_path / "results" / "paper" / "timings.json").write_text('{"09_demo": 150.0}')
    text = report.render(tmp_path / "results", tmp_path)
    assert "| [09_demo](notebooks/09_demo.py) | 2.5 min | 1 holds · 1 info | c\\|1: fails → holds |" in text
    assert "| x \\| y — why | 1 | a: 0.5 | **fails** | a: 0.9 | **holds** | [09 § A section]" in text
    assert "| only at paper scale | 2 | — | — | 3 | **info** |" in text
    assert "scale: quick, 1 fails; paper scale: 1 holds · 1 info" in text
    # the CPU's matmul speed beside the wall time, or the machine named for a run made elsewhere
    (tmp_path / "results" / "paper" / "matmul-gflops.json").write_text('{"09_demo": 151.4}')
    assert "| 2.5 min at 151 GFLOP/s |" in report.render(tmp_path / "results", tmp_path)
    (tmp_path / "results" / "paper" / "machines.json").write_text('{"08_other": "one H200"}')
    assert "| 2.5 min at 151 GFLOP/s |" in report.render(tmp_path / "results", tmp_path)  # another notebook's entry
    (tmp_path / "results" / "paper" / "machines.json").write_text('{"09_demo": "one H200"}')
    text = report.render(tmp_path / "results", tmp_path)
    assert "| 2.5 min on one H200 |" in text and "GFLOP/s |" not in text
    assert set(report.load_results(tmp_path / "results" / "paper")) == {"09_demo"}  # side files hold no claims


def test_a_verdict_that_departs_from_its_documented_outcome_is_marked_in_the_report():
    base = {"criterion": "c", "meaningful_at": "standard"}
    assert report._verdict({"verdict": "holds", "expected": "holds", **base}, "standard") == "**holds**"
    assert "on its line" in report._verdict({"verdict": "holds", "expected": "holds or inconclusive", **base}, "paper")
    departs = report._verdict({"verdict": "fails", "expected": "holds", **base}, "standard")
    assert departs == "**fails** (**departs from its documented outcome, holds**)"
    assert report._verdict({"verdict": "fails", "expected": "holds", **base}, "paper") == departs
    assert report._verdict({"verdict": "info"}, "standard") == "**info**"


def test_a_claim_meaningful_only_at_a_larger_scale_is_not_marked_in_a_smaller_run():
    """Its documented outcome is for the larger scale (the tests do not assert it below): a reduced run that cannot
    decide it is not a departure."""
    reduced = {"verdict": "inconclusive", "expected": "holds", "criterion": "c", "meaningful_at": "paper"}
    assert report._verdict(reduced, "standard") == "**inconclusive**"
    assert "departs" in report._verdict(reduced, "paper")
