import json

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rflib.notebook import plotting, results  # noqa: E402


def test_recorder_writes_claims_to_results_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb", {"scale": "quick", "sizes": np.array([1, 2])})
    rec.record("c1", "a claim", paper=1.0, ours=np.float64(0.99), holds=np.bool_(True))
    rec.record("c2", "another", ours={"x": np.array([1.5, np.inf])}, holds="scaled", note="smaller n")
    doc = json.loads((tmp_path / "nb.json").read_text())
    assert doc["parameters"] == {"scale": "quick", "sizes": [1, 2]}
    assert [c["verdict"] for c in doc["claims"]] == ["holds", "scaled"]
    assert doc["claims"][1]["ours"] == {"x": [1.5, "inf"]}
    assert "| another | — |" in rec.table()
    results.record("nb", "c3", "appended", ours=3, holds=False)
    doc = json.loads((tmp_path / "nb.json").read_text())
    assert [c["id"] for c in doc["claims"]] == ["c1", "c2", "c3"] and doc["parameters"]["scale"] == "quick"


def test_only_finish_marks_a_run_complete(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb", {"seed": 0})
    rec.record("c1", "a claim", ours=1, holds=True)
    assert json.loads((tmp_path / "nb.json").read_text())["complete"] is False  # as a crash would leave it
    rec.finish()
    doc = json.loads((tmp_path / "nb.json").read_text())
    assert doc["complete"] is True and [c["id"] for c in doc["claims"]] == ["c1"]
    results.record("nb", "c2", "appended by a later, partial run", ours=2, holds=True)
    assert json.loads((tmp_path / "nb.json").read_text())["complete"] is False


def test_recorder_is_deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    texts = []
    for _ in range(2):
        results.Recorder("nb", {"seed": 0}).record("c", "claim", ours=1.25, holds=True)
        texts.append((tmp_path / "nb.json").read_text())
    assert texts[0] == texts[1]


def test_recorder_rejects_bad_verdicts_and_duplicate_ids(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb")
    with pytest.raises(ValueError, match="holds must be"):
        rec.record("c", "claim", ours=1, holds="maybe")
    rec.record("c", "claim", ours=1, holds=True)
    with pytest.raises(ValueError, match="already recorded"):
        rec.record("c", "claim", ours=1, holds=True)


def test_savefig_honours_fig_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FIG_DIR", str(tmp_path / "figs"))
    plotting.use_style()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    paths = plotting.savefig("demo", fig)
    plt.close(fig)
    assert [p.name for p in paths] == ["demo.png", "demo.pdf"] and all(p.stat().st_size > 0 for p in paths)
    with pytest.raises(ValueError, match="plain file stem"):
        plotting.savefig("../escape", fig)


def test_unlabelled_axes_finds_panels_without_labels_and_accepts_shared_ones():
    fig, axes = plt.subplots(1, 3, sharey=True)
    for ax in axes:
        ax.plot([0, 1], [0, 1])
        ax.set_xlabel("n")
    axes[0].set_ylabel("error (unitless)")  # shared: counts for all three
    fig.colorbar(axes[2].scatter([0], [0], c=[1.0]), ax=axes[2])
    assert plotting.unlabelled_axes(fig) == []
    axes[1].set_xlabel("")
    assert plotting.unlabelled_axes(fig) == ["panel 1 (untitled): no x label"]
    plt.close(fig)


def test_figure_problems_require_the_scale_in_a_caption():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="n (tokens)", ylabel="error (unitless)", title="error against n")
    assert plotting.figure_problems(fig) == ["no title says '<quick|standard|paper> scale'"]
    fig.suptitle("Fig 1 (standard scale): error")
    assert plotting.figure_problems(fig) == []
    fig._suptitle.set_text("")
    ax.set_title("quick scale", loc="right")
    assert plotting.figure_problems(fig) == []
    ax.set_xlabel("")
    assert plotting.figure_problems(fig) == ["panel 0 (error against n): no x label"]
    plt.close(fig)


@pytest.mark.parametrize(
    "estimate, se, side, expected",
    [
        (-0.10, 0.03, {"below": 0.0}, "holds"),  # interval (−0.16, −0.04) below 0
        (-0.029, 0.0267, {"below": 0.0}, "inconclusive"),  # (−0.082, 0.024) contains 0
        (0.10, 0.03, {"below": 0.0}, "fails"),  # wholly above
        (0.06, 0.03, {"below": 0.0}, "fails"),  # the threshold itself counts as the other side
        (1.3, 0.1, {"above": 1.0}, "holds"),
        (1.1, 0.1, {"above": 1.0}, "inconclusive"),
        (0.7, 0.1, {"above": 1.0}, "fails"),
        (0.5, 0.0, {"below": 1.0}, "holds"),  # an exact value decides by its side
    ],
)
def test_decide_reads_the_two_standard_error_interval_against_the_threshold(estimate, se, side, expected):
    assert results.decide(estimate, se, **side) == expected


def test_decide_refuses_a_missing_or_double_side_and_non_finite_values():
    with pytest.raises(ValueError, match="exactly one"):
        results.decide(0.1, 0.1)
    with pytest.raises(ValueError, match="exactly one"):
        results.decide(0.1, 0.1, below=0, above=1)
    with pytest.raises(ValueError, match="se"):
        results.decide(0.1, float("nan"), below=0)
    with pytest.raises(ValueError, match="se must be ≥ 0"):
        results.decide(0.1, -1.0, below=0)
    with pytest.raises(ValueError, match="estimate"):
        results.decide(True, 0.1, below=0)


def test_record_estimate_stores_estimate_se_and_the_criterion_it_was_decided_by(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb")
    rec.record_estimate("gap", "A is below B", estimate=-0.029, se=0.0267, below=0.0, extra={"ratio": 0.971})
    (claim,) = json.loads((tmp_path / "nb.json").read_text())["claims"]
    assert claim["verdict"] == "inconclusive"
    assert claim["ours"] == {"estimate": -0.029, "s.e.": 0.0267, "ratio": 0.971}
    assert claim["criterion"] == results.criterion_text(below=0.0) and "estimate + 2 s.e. < 0" in claim["criterion"]
