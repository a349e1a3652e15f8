import json
import math

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rflib.notebook import plotting, results  # noqa: E402


def test_recorder_writes_claims_to_results_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb", {"scale": "quick", "sizes": np.array([1, 2])})
    rec.record("c1", "a claim", paper=1.0, ours=np.float64(0.99), holds=np.bool_(True), criterion="ours < 1")
    rec.record("c2", "another", ours={"x": np.array([1.5, np.inf])}, holds=True, criterion="x finite", reduced="n")
    doc = json.loads((tmp_path / "nb.json").read_text())
    assert doc["parameters"] == {"scale": "quick", "sizes": [1, 2]}
    assert [c["verdict"] for c in doc["claims"]] == ["holds", "scaled"]
    assert doc["claims"][1]["ours"] == {"x": [1.5, "inf"]}
    assert "| another | — |" in rec.table()
    results.record("nb", "c3", "appended", ours=3, holds=False, criterion="ours < 3")
    doc = json.loads((tmp_path / "nb.json").read_text())
    assert [c["id"] for c in doc["claims"]] == ["c1", "c2", "c3"] and doc["parameters"]["scale"] == "quick"


def test_only_finish_marks_a_run_complete(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb", {"seed": 0})
    rec.record("c1", "a claim", ours=1, holds=True, criterion="c")
    assert json.loads((tmp_path / "nb.json").read_text())["complete"] is False  # as a crash would leave it
    rec.finish()
    doc = json.loads((tmp_path / "nb.json").read_text())
    assert doc["complete"] is True and [c["id"] for c in doc["claims"]] == ["c1"]
    results.record("nb", "c2", "appended by a later, partial run", ours=2, holds=True, criterion="c")
    assert json.loads((tmp_path / "nb.json").read_text())["complete"] is False


def test_recorder_is_deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    texts = []
    for _ in range(2):
        results.Recorder("nb", {"seed": 0}).record("c", "claim", ours=1.25, holds=True, criterion="c")
        texts.append((tmp_path / "nb.json").read_text())
    assert texts[0] == texts[1]


def test_recorder_rejects_bad_verdicts_and_duplicate_ids(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb")
    with pytest.raises(ValueError, match="holds must be"):
        rec.record("c", "claim", ours=1, holds="maybe", criterion="c")
    for typed in ("scaled", "info"):  # verdicts are computed: scaled comes from reduced=, info from holds=None
        with pytest.raises(ValueError, match="holds must be"):
            rec.record("c", "claim", ours=1, holds=typed, criterion="c")
    with pytest.raises(ValueError, match="criterion"):
        rec.record("c", "claim", ours=1, holds=True)
    with pytest.raises(ValueError, match="because"):
        rec.record("c", "claim", ours=1, holds=False, criterion="c", expected="fails")
    with pytest.raises(ValueError, match="meaningful_at"):
        rec.record("c", "claim", ours=1, holds=True, criterion="c", meaningful_at="huge")
    rec.record("c", "claim", ours=1, holds=True, criterion="c")
    with pytest.raises(ValueError, match="already recorded"):
        rec.record("c", "claim", ours=1, holds=True, criterion="c")


def test_a_claim_records_its_criterion_scale_and_documented_outcome(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb", {"scale": "standard"})
    rec.record("m", "a measurement", ours=2.0, holds=None)
    rec.record("r", "holds at a reduced scale", ours=1, holds=True, criterion="c", reduced="2 of 5 seeds")
    rec.record("x", "fails at reduced scale", ours=1, holds=False, criterion="c", reduced="2 of 5 seeds")
    rec.record("p", "false as printed", ours=1, holds=False, criterion="c", expected="fails", because="erratum")
    rec.record("s", "needs standard", ours=1, holds="inconclusive", criterion="c", meaningful_at="standard")
    doc = json.loads((tmp_path / "nb.json").read_text())
    claims = {c["id"]: c for c in doc["claims"]}
    assert [claims[k]["verdict"] for k in "mrxps"] == ["info", "scaled", "fails", "fails", "inconclusive"]
    assert "criterion" not in claims["m"] and claims["r"]["reduced"] == "2 of 5 seeds"
    assert claims["p"]["because"] == "erratum" and claims["p"]["expected"] == "fails"
    met = {k: results.meets_expectation(c) for k, c in claims.items()}
    assert met == {"m": True, "r": True, "x": False, "p": True, "s": False}
    assert [c["id"] for c in results.asserted_at(doc, "quick")] == ["r", "x", "p"]
    assert [c["id"] for c in results.asserted_at(doc, "standard")] == ["r", "x", "p", "s"]
    with pytest.raises(ValueError, match="scale"):
        results.asserted_at(doc, "huge")


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
        (-0.45, 0.01, {"within": (-0.6, -0.4)}, "holds"),  # (−0.47, −0.43) inside the range
        (-0.39, 0.01, {"within": (-0.6, -0.4)}, "inconclusive"),  # (−0.41, −0.37) straddles −0.4
        (-0.30, 0.01, {"within": (-0.6, -0.4)}, "fails"),  # wholly outside
        (-0.62, 0.02, {"within": (-0.6, -0.4)}, "inconclusive"),  # (−0.66, −0.58) straddles −0.6
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
    with pytest.raises(ValueError, match="low < high"):
        results.decide(0.1, 0.1, within=(1.0, 0.0))
    # an unbounded uncertainty decides nothing
    assert results.decide(5.0, float("inf"), above=0.0) == "inconclusive"
    assert results.decide(5.0, float("inf"), within=(0.0, 10.0)) == "inconclusive"


def test_interval_z_widens_for_few_samples_and_many_parts():
    assert results.interval_z() == 2.0
    assert results.interval_z(samples=2) == pytest.approx(12.706, abs=1e-3)  # t quantile, 1 degree of freedom
    assert results.interval_z(samples=10) == pytest.approx(2.262, abs=1e-3)
    assert results.interval_z(samples=1000) == 2.0  # the t quantile (1.962) is below the project's 2
    assert results.interval_z(parts=56) == pytest.approx(3.322, abs=1e-3)  # Bonferroni over 56 parts
    # both: the t quantile at the Bonferroni level (not the wider of the two separate widenings, 2.734 here)
    assert results.interval_z(samples=10, parts=8) == pytest.approx(3.547, abs=1e-3)
    assert results.interval_z(samples=5, parts=6) == pytest.approx(4.851, abs=1e-3)  # 2.78 under the old rule
    with pytest.raises(ValueError, match="samples"):
        results.interval_z(samples=1)
    with pytest.raises(ValueError, match="parts"):
        results.interval_z(parts=0)


def test_combined_verdicts_majorities_tests_and_differences():
    assert results.combine(["holds", "holds"]) == "holds"
    assert results.combine(["holds", "inconclusive"]) == "inconclusive"
    assert results.combine(["inconclusive", "fails", "holds"]) == "fails"
    assert results.majority(["holds", "holds", "fails"]) == "holds"
    assert results.majority(["holds", "inconclusive", "fails"]) == "inconclusive"  # 2 of 3 could still hold
    assert results.majority(["holds", "fails", "fails"]) == "fails"
    assert results.majority(["inconclusive", "inconclusive"]) == "inconclusive"
    assert results.decide_test(0.01, 0.99) == "holds" and results.decide_test(0.99, 0.01) == "fails"
    assert results.decide_test(0.2, 0.8) == "inconclusive"
    assert results.decide_smaller((1.0, 0.1), (2.0, 0.1)) == "holds"  # difference −1 ± 0.28
    assert results.decide_smaller((1.0, 0.3), (1.5, 0.3)) == "inconclusive"  # −0.5 ± 0.85
    assert results.decide_best_smaller([(3.0, 0.1), (1.0, 0.1)], [(2.0, 0.1)]) == "holds"
    assert results.decide_best_smaller([(3.0, 0.1), (1.0, 0.1)], [(2.0, 0.1)], every_winner=True) == "fails"
    mean, se = results.mean_and_se([1.0, 2.0, 3.0])
    assert mean == 2.0 and se == pytest.approx(1 / np.sqrt(3))
    assert results.mean_se_entry((mean, se)) == {"mean": 2.0, "s.e.": se}
    for bad in ([], ["holds", "scaled"]):
        with pytest.raises(ValueError):
            results.combine(bad)
        with pytest.raises(ValueError):
            results.majority(bad)
    with pytest.raises(ValueError, match="at least 2"):
        results.mean_and_se([1.0])


def test_samples_to_decide_scales_the_standard_error_as_one_over_root_n():
    # 5 samples: gap 1, s.e. 1, z 2 → the interval clears 0 when s.e. ≤ 1/2, i.e. at 4× the samples
    assert results.samples_to_decide(5, 1.0, 1.0, 2.0) == pytest.approx(20.0)
    assert results.samples_to_decide(5, -1.0, 1.0, 2.0) == pytest.approx(20.0)  # either way
    assert results.samples_to_decide(10, 0.8, 0.1, 2.0, against=0.7) == pytest.approx(40.0)
    assert results.samples_to_decide(5, 0.7, 0.1, 2.0, against=0.7) == math.inf
    for bad in (
        dict(samples=0),
        dict(samples=True),
        dict(samples="5"),
        dict(se=-1.0),
        dict(z=0.0),
        dict(estimate=float("nan")),
    ):
        with pytest.raises(ValueError):
            results.samples_to_decide(**(dict(samples=5, estimate=1.0, se=1.0, z=2.0) | bad))


def test_sign_test_is_the_exact_binomial_tail_and_drops_ties():
    assert results.sign_test([3.0] * 7, 1.0) == pytest.approx((1 / 128, 1.0))
    assert results.sign_test([0.0] * 7, 1.0) == pytest.approx((1.0, 1 / 128))
    p_up, p_down = results.sign_test([2, 3, 4, 5, 0], 1.0)  # 4 of 5 above: P(X ≥ 4) = 6/32, P(X ≤ 4) = 31/32
    assert (p_up, p_down) == pytest.approx((6 / 32, 31 / 32))
    assert results.sign_test([1.0, 1.0, 2.0], 1.0) == pytest.approx((0.5, 1.0))  # the ties leave n = 1
    assert results.sign_test([1.0], 1.0) == (1.0, 1.0)
    for bad in ([], [1.0, float("nan")]):
        with pytest.raises(ValueError):
            results.sign_test(bad, 0.0)


def test_record_estimate_stores_estimate_se_and_the_criterion_it_was_decided_by(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb")
    rec.record_estimate("gap", "A is below B", estimate=-0.029, se=0.0267, below=0.0, extra={"ratio": 0.971})
    (claim,) = json.loads((tmp_path / "nb.json").read_text())["claims"]
    assert claim["verdict"] == "inconclusive"
    assert claim["ours"] == {"estimate": -0.029, "s.e.": 0.0267, "ratio": 0.971}
    assert claim["criterion"] == results.criterion_text(below=0.0) and "estimate + 2 s.e. < 0" in claim["criterion"]
    assert claim["meaningful_at"] == "quick" and claim["expected"] == "holds"


def test_cover_records_items_the_inventory_lists_with_a_known_status(tmp_path, monkeypatch):
    from rflib.notebook import coverage

    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb")
    item = next(f"hrf:{name}" for name in coverage.PAPER_ITEMS["hrf"])
    rec.cover(item, "checked exactly", "a test", claims=["c"])
    assert json.loads((tmp_path / "nb.json").read_text())["coverage"] == [
        {"item": item, "status": "checked exactly", "detail": "a test", "claims": ["c"]}
    ]
    with pytest.raises(ValueError, match="already covered"):
        rec.cover(item, "checked exactly", "again")
    with pytest.raises(ValueError, match="status"):
        rec.cover(item, "sort of", "x")
    with pytest.raises(ValueError, match="numbers no such item"):
        rec.cover("hrf:Theorem 99.9", "checked exactly", "x")
    with pytest.raises(ValueError, match="paper must be"):
        rec.cover("nope:Theorem 1", "checked exactly", "x")


def test_a_claim_on_its_threshold_may_document_either_outcome_but_never_the_opposite(tmp_path, monkeypatch):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    rec = results.Recorder("nb", {"scale": "standard"})
    for claim_id, verdict in (("h", True), ("i", "inconclusive"), ("f", False)):
        rec.record(
            claim_id,
            "on the line",
            ours=1,
            holds=verdict,
            criterion="c",
            expected="holds or inconclusive",
            because="runs read 1.06–1.25 ± 0.01–0.06",
        )
    with pytest.raises(ValueError, match="needs because"):
        rec.record("b", "on the line", ours=1, holds=True, criterion="c", expected="fails or inconclusive")
    with pytest.raises(ValueError, match="expected must be one of"):
        rec.record("b", "either", ours=1, holds=True, criterion="c", expected="holds or fails", because="no")
    rec.record(
        "g",
        "on the other line",
        ours=1,
        holds=True,
        criterion="c",
        expected="fails or inconclusive",
        because="runs read 0.83–0.95",
    )
    claims = json.loads((tmp_path / "nb.json").read_text())["claims"]
    assert [results.meets_expectation(c) for c in claims] == [True, True, False, False]
