"""REPRODUCTION.md is generated from results/*.json by tools/make_report.py and must not be stale."""

import json
from pathlib import Path

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
    assert "**Incomplete run**" not in report.render(tmp_path / "results", tmp_path)
