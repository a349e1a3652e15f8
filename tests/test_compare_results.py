"""tools/compare_results.py reports exactly the claims that moved, with the claim's recorded spread."""

import json

from tools import compare_results


def _write(directory, claims):
    directory.mkdir()
    (directory / "nb.json").write_text(json.dumps({"notebook": "nb", "complete": True, "claims": claims}))


def test_only_moved_values_and_flipped_verdicts_are_reported(tmp_path):
    same = {"id": "same", "ours": {"a": 1.0, "b": [1, 2]}, "verdict": "holds"}
    moved = {"id": "moved", "ours": {"mse": 2.0, "mse s.e.": 0.1}, "verdict": "holds"}
    _write(tmp_path / "old", [same, moved, {"id": "gone", "ours": 1, "verdict": "info"}])
    moved_new = {"id": "moved", "ours": {"mse": 2.5, "mse s.e.": 0.2}, "verdict": "fails"}
    _write(tmp_path / "new", [same, moved_new, {"id": "fresh", "ours": 1, "verdict": "info"}])
    changes = compare_results.compare_claims(moved, moved_new)
    assert [c["path"] for c in changes] == ["verdict", "mse"]
    assert changes[1]["relative"] == 0.25 and changes[0]["spreads"] == {"mse s.e.": 0.2}
    assert compare_results.compare_claims(same, dict(same)) == []
    text = compare_results.report(
        compare_results.load_dir(tmp_path / "old"), compare_results.load_dir(tmp_path / "new")
    )
    assert "added: `fresh`" in text and "removed: `gone`" in text and "`same`" not in text
    assert "`moved` mse: 2.0 → 2.5 (25 %)" in text and "`moved` verdict: holds → fails" in text


def test_the_files_beside_the_paper_results_are_not_read_as_results(tmp_path):
    _write(tmp_path / "paper", [{"id": "c", "ours": 1, "verdict": "holds"}])
    for name in ("timings.json", "matmul-gflops.json", "machines.json"):
        (tmp_path / "paper" / name).write_text('{"nb": 1.0}')
    assert set(compare_results.load_dir(tmp_path / "paper")) == {"nb"}


def test_values_equal_to_rounding_do_not_count_as_moved():
    old = {"id": "x", "ours": {"v": 0.1 + 0.2}, "verdict": "holds"}
    assert compare_results.compare_claims(old, {"id": "x", "ours": {"v": 0.3}, "verdict": "holds"}) == []
