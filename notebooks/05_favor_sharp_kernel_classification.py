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
# dataset; $\sigma$ tuned separately for each (method, $M$); validation accuracy averaged over seeds; ties in the
# validation accuracy go to the smaller $\sigma$.
#
# **Data.** The paper does not name its eight UCI sets, and none of CRT's likely ones (abalone, banknote, car,
# yeast, cmc, nursery, wifi, chess) ships offline. We use the four UCI-origin sets bundled with scikit-learn:
# iris (150 × 4), wine (178 × 13), breast cancer / WDBC (569 × 30) and optdigits (1797 × 64). Their 5 % test
# splits are tiny (8, 9, 28, 90 objects), so we *also* average over several random splits — an extension, flagged
# as such. The classifier is `rflib.experiments.kernel_classification`; features from `rflib.features.dense_exp`.

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from rflib.experiments import kernel_classification as kc
from rflib.notebook import plotting
from rflib.notebook.results import criterion_text, decide, interval_z, mean_and_se
from rflib.notebook.scaffold import markdown_table, start

SETTINGS = {
    # seeds: random-feature draws per (σ, method, M); splits: random splits (split 0 is the paper's single split).
    "quick": dict(datasets=("iris", "wine"), M=(16, 128), seeds=5, splits=1, n_sigma=5),
    "standard": dict(
        datasets=("iris", "wine", "breast_cancer", "digits"), M=(16, 32, 64, 128), seeds=50, splits=5, n_sigma=10
    ),
    "paper": dict(
        datasets=("iris", "wine", "breast_cancer", "digits"), M=(16, 32, 64, 128), seeds=50, splits=20, n_sigma=10
    ),
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
# accuracy of every draw in one vectorised call (`kc.split_accuracies`, per split; `kc.accuracy_sweep` over datasets
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
paper_split = kc.accuracy_table(results, S["datasets"], [0], METHODS, SIGMAS)
all_splits = kc.accuracy_table(results, S["datasets"], range(S["splits"]), METHODS, SIGMAS)


def show(table, title):
    head = ["dataset", "M", "exact", *(LABEL[m] for m in METHODS)]
    lines = []
    for name, row in table.items():
        for mi, M in enumerate(S["M"]):
            best = max(row[m][mi] for m in METHODS)
            cells = [f"**{row[m][mi]:.1f}**" if row[m][mi] >= best - 1e-9 else f"{row[m][mi]:.1f}" for m in METHODS]
            lines.append([name, M, f"{row['exact']:.1f}", *cells])
    caption = f"**{title}** (mean test accuracy, %; best random-feature method in bold)"
    display(Markdown(caption + "\n\n" + markdown_table(head, lines)))


show(paper_split, "Paper protocol: one 90/5/5 split")
if S["splits"] > 1:
    show(all_splits, f"Extension: mean over {S['splits']} random splits")

# %%
fig, axes = plt.subplots(1, len(S["datasets"]) + 1, figsize=(3.2 * (len(S["datasets"]) + 1), 3.2), sharey=False)
shown = all_splits
for ax, name in zip(axes, [*S["datasets"], "average"], strict=True):
    row = {m: kc.average_curve(shown, m) for m in (*METHODS, "exact")} if name == "average" else shown[name]
    plotting.method_lines(ax, S["M"], {LABEL[m]: row[m] for m in METHODS}, dashed=(LABEL["trig"], LABEL["positive"]))
    ax.axhline(row["exact"], color="grey", lw=0.8, ls=":", label="exact kernel")
    ax.set_xscale("log", base=2)
    ax.set_xticks(S["M"], [str(M) for M in S["M"]])
    ax.set(title=name, xlabel="number of random features M", ylabel="test accuracy (%)")
axes[-1].legend(fontsize=7)
plotting.finish_figure(
    fig,
    "favor_sharp_fig3_kernel_classification",
    f"FAVOR# Fig 3 stand-in ({scale} scale): scikit-learn's UCI-origin sets instead of the paper's 8 UCI sets; "
    f"{S['seeds']} seeds, mean over {S['splits']} split(s)",
    fontsize=9,
)

# %% [markdown]
# ## Paper vs ours

# %%
POSITIVE = ("positive", "gerf", "saderf", "aderf", "sderf")
for label, table in (("paper_split", paper_split), ("all_splits", all_splits)):
    if label == "all_splits" and S["splits"] == 1:
        continue
    won_all, total = kc.wins(table, METHODS)
    won_pos, _ = kc.wins(table, POSITIVE)
    best_average = {m: float(np.mean(kc.average_curve(table, m))) for m in METHODS}
    suffix = (
        "one 90/5/5 split (paper protocol)" if label == "paper_split" else f"mean over {S['splits']} splits (extension)"
    )
    rec.record(
        f"sderf_wins_most_cells_{label}",
        f"SDERF has the best accuracy on most (benchmark, M) pairs — {suffix}",
        paper="most of 8 × 4 pairs",
        ours={"sderf_wins_among_all": f"{won_all}/{total}", "sderf_wins_among_positive": f"{won_pos}/{total}"},
        holds=bool(won_all > total / 2),
        criterion="SDERF's mean accuracy is the highest (ties count as wins) in more than half of the (data set, M) "
        "cells, among all six methods",
        meaningful_at="standard",
        note="stand-in: 4 scikit-learn UCI-origin sets replace the paper's 8 UCI sets; wins counted with ties",
    )
    rec.record(
        f"sderf_best_average_{label}",
        f"SDERF has the best average accuracy over benchmarks (Fig 3, last panel) — {suffix}",
        paper="SDERF best",
        ours={LABEL[m]: v for m, v in best_average.items()},
        holds=bool(best_average["sderf"] >= max(best_average.values()) - 1e-9),
        criterion="SDERF's accuracy averaged over data sets and M is the highest of the six methods",
        meaningful_at="standard",
        note="stand-in data sets; mean over datasets and M of the test accuracy (%)",
    )
sd, ge = kc.average_curve(all_splits, "sderf")[-1], kc.average_curve(all_splits, "gerf")[-1]
per_split = [kc.accuracy_table(results, S["datasets"], [s], METHODS, SIGMAS) for s in range(S["splits"])]
split_gaps = [kc.average_curve(t, "sderf")[-1] - kc.average_curve(t, "gerf")[-1] for t in per_split]
gap, gap_se = mean_and_se(split_gaps) if S["splits"] > 1 else (split_gaps[0], float("inf"))
split_z = interval_z(samples=max(2, S["splits"]))  # Student-t over the splits
rec.record(
    "sderf_vs_gerf_at_largest_M",
    f"SDERF is more accurate than GERF (FAVOR++) on average at M = {S['M'][-1]}",
    paper="SDERF ≥ GERF (Fig 3)",
    ours={"SDERF": sd, "GERF": ge, "mean gap over splits": gap, "s.e.": gap_se},
    holds=decide(gap, gap_se, above=0.0, z=split_z) if np.isfinite(gap_se) else "inconclusive",
    criterion=criterion_text(
        above=0.0, z=split_z, quantity="SDERF − GERF accuracy averaged over data sets, mean over splits (Student-t)"
    ),
    meaningful_at="standard",
    note="stand-in data sets; the mean over random splits is our extension (the paper uses one split)",
)

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of FAVOR# that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "favor_sharp:Figure 3",
        "stand-in",
        "Paper protocol (90/5/5 split, 10 log-σ, 50 seeds, M=16..128, orthogonal ω) on 4 sklearn UCI-origin sets (iris, wine, breast cancer, digits) replacing 8 unnamed UCI sets; plus 5-split extension.",
    ),
):
    rec.cover(item, status, detail)
rec.finish()  # every cell ran: mark the results file complete
display(Markdown(rec.table()))

# %% [markdown]
# ### What was scaled down, and why
#
# * **Datasets.** The paper's eight UCI sets are unnamed and not available offline; four scikit-learn sets of UCI
#   origin stand in. The verdicts speak for these stand-in sets, not for the paper's.
# * **Splits.** The paper uses one 90/5/5 split; with 8–90 test objects a single split is noisy, so the figure shows
#   the mean over several random splits (standard: 5) and the tables show both.
# * **Quick scale** uses 2 datasets, 5 seeds, $M \in \{16, 128\}$ and 5 values of $\sigma$: a smoke test only.
