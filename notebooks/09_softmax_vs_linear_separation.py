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
# # 09 · Why softmax attention outperforms linear attention: the separation results (Figs 3, 4, 5, 7)
#
# *Deng, Song, Yuan, Zhou*, arXiv 2310.11685v2, §3–§7 and Appendices D–F.
#
# **What the paper claims.** Two classes of inputs D0, D1 and two fixed-weight networks of one shape —
# attention → inner products with $m$ random ±1 readouts → thresholded ReLU $\phi_\tau$ → sum → ReLU:
# $F_{\exp}$ with softmax attention and $F_{\rm lin}$ with linear attention (raw scores divided by their row sum).
# "With high probability over the readouts", $F_{\exp} > 0$ on D1, $F_{\exp} = 0$ on D0, and $F_{\rm lin} = 0$ on
# both — for a toy softmax-regression model (§3–5), self-attention with $QK^\top = 1_{d\times d}$ (Thm 1.1 / 6.2,
# App. D) or $I_d$ (App. E), and cross-attention (Thm 1.2, App. F). §7 plots Monte Carlo "success rates" of the
# four-way event $E_{\rm success}$ while sweeping $n, d, m, a_0, a_1, c$; **the text gives no numbers**.
#
# **How we check it.** The success rate has an exact formula (our derivation, not in the paper): the readouts
# $y_l$ are iid, and each $F$'s sign is a union of per-neuron events, so with $p_B$ = P[a neuron fires on one of the three "zero" networks]
# and $p_{BG}$ = P[it fires there or on $F_{\exp}$(D1)],
#
# $$P(E_{\rm success}\mid\text{data}) = (1-p_B)^m - (1-p_{BG})^m,$$
#
# averaged over where the special rows fall. `separation.success_probability` computes it (exactly by enumerating
# all $2^d$ sign vectors for $d \le 14$, otherwise from sampled sign vectors); `separation.simulate_success` runs
# the networks end to end. Every curve below is the simulation over the exact prediction.
#
# **Corrections applied** (ids of ERRATA.md): Def F.1's columns "2..d" (SVL-E8) — otherwise Lemma F.2 fails;
# Lemma E.1's exponents (SVL-E14); Fig 7(d, e)'s d = 12 violates $n = (d-1)t$ at $n = 200$, so we use d = 11
# (SVL-E18). The toy model's threshold τ is never given: we use τ = 0.5 (SVL-E4).

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from rflib import separation as sp
from rflib.experiments import separation_sweeps as ss
from rflib.notebook import plotting
from rflib.notebook.results import interval_z
from rflib.notebook.scaffold import markdown_table, start

PAPER_GRIDS = dict(
    toy_n=tuple(range(100, 2001, 10)),
    toy_m=tuple(range(1, 101)),
    self_grid=dict(
        n=tuple(range(200, 1001, 10)),
        d=(4, 6, 10, 18, 34, 66),
        m=tuple(range(1, 81)),
        c=tuple(np.round(np.arange(0.5, 0.9001, 0.005), 3)),  # panels in the paper's order: n, d, m, c, a0, a1
        a0=tuple(np.round(np.arange(0.01, 0.801, 0.01), 3)),
        a1=tuple(np.round(np.arange(0.1, 3.001, 0.036), 3)),
    ),
    cross_grid=dict(
        n=tuple(range(200, 1001, 10)),
        d=(2, 3, 5, 6, 9, 11, 21, 26, 41, 51),
        m=tuple(range(1, 81)),
        a1=tuple(np.round(np.arange(0.1, 3.001, 0.036), 3)),
        a0=tuple(np.round(np.arange(0.01, 0.901, 0.01), 3)),
    ),
)
SETTINGS = {
    # trials: end-to-end networks per point (the paper: 100 for Figs 4/5/7, 1 000 for Fig 3); sigma_samples: sign
    # vectors for the exact formula when d > 14; grids: values swept per panel.
    "quick": dict(
        trials=10,
        toy_trials=100,
        sigma_samples=20_000,
        toy_n=(100, 1000),
        toy_m=(1, 4),
        self_grid=dict(n=(200, 400), m=(1, 15)),
        cross_grid=dict(d=(6, 11)),
    ),
    # The paper's sweeps (§7, App F.6) at its 100 models per point (1 000 for Fig 3).
    "standard": dict(trials=100, toy_trials=1000, sigma_samples=200_000, **PAPER_GRIDS),
    # The same grids with ten times the models and five times the sign vectors: tighter simulation-vs-formula bands.
    "paper": dict(trials=1000, toy_trials=10_000, sigma_samples=1_000_000, **PAPER_GRIDS),
}
run = start("09_softmax_vs_linear_separation", scale, seed, SETTINGS)
S, keys, rec = run.settings, run.keys, run.recorder
rng = keys.rng("simulations")
# All sign vectors for d ≤ 14 (exact), else a fixed sample per d (the exact formula becomes an estimate).
sigmas_for = sp.sign_vector_source(S["sigma_samples"], lambda d: keys.rng("sign vectors", d))

# %% [markdown]
# ## 1 · The constructions in numbers
#
# Self-attention, $n = 200$, $d = 22$, $b = 0.2$, $c = 0.8$, $X = 1_{d\times d}$: softmax turns the $\Theta(\log n)$
# score gap of the spike row into a $\Theta(1)$ attention weight, linear attention into an $O(1/n)$ one. With a
# rank-one $QK^\top$ every linear-attention row is the *same* pooled vector.

# %%
# (softmax c0 at the spike row, softmax c0 at another row, linear c0) / s, at n = 200, d = 22, b = 0.2, c = 0.8
outs = {a: ss.spike_row_outputs(200, 22, a, 0.2, 0.8) for a in (0.01, 0.7, 1.2)}
rows = [[a, f"{spike:.4f}", f"{other:.4f}", f"{lin:.5f}"] for a, (spike, other, lin) in outs.items()]
header = ["a", "softmax c₀(j₃)/s", "softmax c₀(j ≠ j₃)/s", "linear c₀/s (every row)"]
display(Markdown(markdown_table(header, rows)))
rec.record(
    "closed_form_sample_values",
    "The constructions' attention outputs at n = 200 (self-attention, X = 1, a1 = 1.2) equal an independent "
    "computation: softmax puts 1.1998·s on the spike, linear attention 0.01312·s (Θ(1) vs O(1/n): notebook 10 §1)",
    paper="Lemmas D.3, D.11 (bounds)",
    ours={"softmax c0(j3)/s": outs[1.2][0], "linear c0/s": outs[1.2][2]},
    holds=abs(outs[1.2][0] - 1.1998) < 5e-5 and abs(outs[1.2][2] - 0.01312) < 5e-6,
    criterion="agreement with the independent values to their last printed digit (1.1998 ± 5e-5, 0.01312 ± 5e-6)",
    note="the independent values come from a separate float64 computation of the same construction",
)

# %% [markdown]
# ## 2 · Fig 3: the toy softmax-regression model
#
# $u = Ax$ with D0 entries iid $U[\log n, 1.4\log n]$ and D1 adding one entry $4\log n$ (our sampling; the paper
# gives none), readouts $y \in \{\pm1\}^{n\times m}$, τ = 0.5. On D1, $\langle f_{\exp}, y_l\rangle \ge 2f_j - 1
# \approx 1$ whenever $y_l[j] = +1$, and every other network stays below τ for $n \gtrsim 100$, so the prediction is
# $1 - 2^{-m}$ (not the $1 - \delta/\mathrm{poly}(n)$ of the lemmas). (a) $m = \lfloor\log n\rfloor$; (b) $n = 1000$.

# %%
toy_points_a = [(n, max(1, int(math.log(n)))) for n in S["toy_n"]]  # m = ⌊log n⌋
toy_a, pred_a = ss.toy_success_rates(toy_points_a, S["toy_trials"], rng, desc="Fig 3a", progress=True)
toy_b, pred_b = ss.toy_success_rates(
    [(1000, m) for m in S["toy_m"]], S["toy_trials"], rng, desc="Fig 3b", progress=True
)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
axes[0].plot(S["toy_n"], toy_a, "o", ms=3, label=f"simulation ({S['toy_trials']} models per point)")
axes[0].plot(S["toy_n"], pred_a, "k-", lw=1, label="prediction 1 − 2^(−m)")
RATE = "success rate (fraction of models)"
axes[0].set(xlabel="sequence length n (tokens)", ylabel=RATE, title="(a) m = ⌊log n⌋, τ = 0.5")
axes[1].plot(S["toy_m"], toy_b, "o", ms=3, label="simulation")
axes[1].plot(S["toy_m"], pred_b, "k-", lw=1, label="prediction 1 − 2^(−m)")
axes[1].set(xlabel="readout neurons m (count)", ylabel=RATE, title="(b) n = 1000, τ = 0.5")
plotting.finish_figure(
    fig, "separation_fig3_toy", f"Fig 3 ({scale} scale): toy softmax regression", legend=dict(fontsize=8)
)
toy_agree = min(ss.fraction_in_band(sim, pred, S["toy_trials"]) for sim, pred in ((toy_a, pred_a), (toy_b, pred_b)))
# every point by the exact binomial test (Bonferroni over the points) and the pooled bias over all of them
toy_test = ss.binomial_agreement([*toy_a, *toy_b], [*pred_a, *pred_b], S["toy_trials"])
POOLED_Z = interval_z(parts=2)  # two tests decide each agreement claim
rec.record(
    "fig3_toy_matches_prediction",
    "The toy model's success rate equals 1 − 2^(−m) (τ = 0.5) at every point of both panels",
    paper="Lemmas 5.1–5.4: success w.h.p.; Fig 3 plots it (no numbers)",
    ours=toy_test
    | {
        "fraction of points within 4 s.e.": toy_agree,
        f"simulated success at n = 1000, m = {S['toy_m'][-1]}": toy_b[-1],
    },
    holds=toy_test["bonferroni_p"] >= 0.05 and abs(toy_test["pooled_z"]) < POOLED_Z,
    criterion=f"no point rejected by the exact binomial test at 5 % after Bonferroni over the points, and the pooled "
    f"standardised bias |z| < {POOLED_Z:.2f}",
    # the paper's Fig 3 uses 1 000 models per point (our "paper" row runs ten times more, for tighter bands)
    reduced=f"{S['toy_trials']:,} of the paper's 1 000 models per point" if S["toy_trials"] < 1000 else "",
    note="τ is not given in the paper; 1 − 2^(−m) is the exact rate, not 1 − δ/poly(n)",
)

# %% [markdown]
# ## 3 · Figs 5 and 4: self-attention with $X = 1_{d\times d}$ and $X = I_d$
#
# Defaults (§7.2): $n = 200$, $d = 22$, $m = \max\{\lfloor\log(n/\delta)\rfloor, 15\} = 15$, $a_0 = 0.01$,
# $a_1 = 1.2$, $b = 0.2$, $c = 0.8$, τ = $(c + 0.1)\sqrt{\log n}$; the n-sweep uses $d = 12$, the d-sweep $n = 256$.
# The c-sweep keeps $b = 0.2$ (so $b + c \ne 1$, as in the paper). Panels are labelled by parameter (ERRATA.md SVL-E17).

# %%
SELF_BASE = dict(n=200, d=22, a0=0.01, a1=1.2, b=0.2, c=0.8)
# Each panel sweeps one parameter from the defaults (ss.sweep_point: the n-sweep at d = 12, the d-sweep at n = 256,
# m = max{⌊log(n/δ)⌋, 15}): the exact formula with sigmas_for(d), then S["trials"] simulated networks from rng.
self_res = {
    X: ss.success_sweep("self", S["self_grid"], dict(SELF_BASE, X=X), sigmas_for, S["trials"], rng, progress=True)
    for X in ("ones", "identity")
}
SWEEP_AXIS_LABELS = {
    "n": "sequence length n (tokens)",
    "d": "embedding dimension d",
    "m": "readout neurons m (count)",
    "a1": "D1 spike a₁ (units of √log n)",
    "a0": "D0 spike a₀ (units of √log n)",
    "c": "constant column c (units of √log n; b = 0.2)",
}
SWEEP_STYLE = dict(xlabels=SWEEP_AXIS_LABELS, ylabel="P(E_success) (probability)", ylim=(-0.03, 1.03))
per_point = f"{S['trials']} simulated models per point over the exact formula"
fig = plotting.sweep_panels(
    {"X = I (Fig 4)": self_res["identity"], "X = 1 (Fig 5)": self_res["ones"]}, S["self_grid"], **SWEEP_STYLE
)
plotting.finish_figure(fig, "separation_fig4_fig5_self", f"Figs 4/5 ({scale} scale): self-attention, {per_point}")

# %% [markdown]
# ## 4 · Fig 7: cross-attention
#
# $X = V = I_d$, τ = 0.9, $a_0 = 0.01$, $a_1 = 3$, $n = 200$, $d = 11$ (the paper's d = 12 is impossible at
# $n = 200$), $m = \lfloor\log(n/\delta)\rfloor = 9$.

# %%
CROSS_BASE = dict(n=200, d=11, a0=0.01, a1=3.0)
# m = ⌊log(n/δ)⌋
cross_res = ss.success_sweep("cross", S["cross_grid"], CROSS_BASE, sigmas_for, S["trials"], rng, progress=True)
fig = plotting.sweep_panels({"cross-attention": cross_res}, S["cross_grid"], **SWEEP_STYLE)
plotting.finish_figure(fig, "separation_fig7_cross", f"Fig 7 ({scale} scale): cross-attention, {per_point}")

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of Deng et al. that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "softmax_linear:Theorem 1.1",
        "Monte Carlo",
        "Informal of App D (= Thm 6.2). Seeded readouts (5 seeds, all 256 points, n=256, d=130, m=48); exact enumeration only at d≤14; paper defaults 0.891 < 0.99.",
    ),
    (
        "softmax_linear:Theorem 1.2",
        "Monte Carlo",
        "Informal of App F. Seeded readouts (3 seeds, (j2,j3) grid covering every key group, n=200, d=41, m=40); exact enumeration at paper default d=11 gives 0.9166.",
    ),
    (
        "softmax_linear:Lemma 3.1",
        "checked exactly",
        "Quoted (Hoeffding); checked exactly on one bounded input over all 2¹⁶ sign vectors (tests/test_separation_lemmas.py).",
    ),
    (
        "softmax_linear:Definition 3.2",
        "implemented",
        "sp.normalise(u,'lin') (raw scores over row sum; raises on ~0 row sums); toy inputs are u = Ax directly.",
    ),
    (
        "softmax_linear:Definition 3.3",
        "implemented",
        "sp.normalise(u,'exp'), float64 with the row max subtracted (overflow-safe).",
    ),
    (
        "softmax_linear:Definition 3.4",
        "implemented",
        "Inside sp.network / sp.network_batch: np.maximum(scores − τ, 0); the outer φ is redundant.",
    ),
    (
        "softmax_linear:Definition 3.5",
        "implemented",
        "sp.network(f, Y, τ) on (n,) f with Y∈{±1}^{n×m}; sp.simulate_toy_success. Paper calls it three-layer, Def 3.6 four-layer.",
    ),
    ("softmax_linear:Figure 1", "not applicable", "Illustration only; no data."),
    ("softmax_linear:Figure 2", "not applicable", "Illustration only; no data."),
    (
        "softmax_linear:Definition 3.6",
        "implemented",
        "sp.network(sp.normalise(u,'lin'), Y, τ); same readouts and τ as F_exp.",
    ),
    (
        "softmax_linear:Definition 3.7",
        "implemented",
        "sp.rademacher; sp.readouts_for: ⌊log(n/δ)⌋, floor 15 for §7.2 self-attention (rounding is an assumption).",
    ),
    (
        "softmax_linear:Definition 3.8",
        "implemented",
        "sp.toy_logits: iid uniform (assumed sampling) or adversarial ⌈n^0.6⌉ high entries; the adversarial mode is never exercised by a test.",
    ),
    (
        "softmax_linear:Figure 3",
        run.coverage_status("paper scale"),
        "Full grids (n 100..2000 step 10, m=⌊log n⌋; m 1..100 at n=1000), 1000 models per point; τ=0.5 and uniform logits assumed (paper gives neither).",
    ),
    (
        "softmax_linear:Lemma 4.1",
        "checked exactly",
        "Deterministic cores exact (max weights ≤ 1.4/n and n^-0.6; exact two-binomial tails ≤ Hoeffding) in tests/test_separation_lemmas.py; 'C sufficiently large' is not checkable as printed.",
    ),
    (
        "softmax_linear:Lemma 4.2",
        "checked exactly",
        "Parts 1–3 exact: f_lin,j = 4/(n+3), 2f_j − 1 ≥ 1/4, and the sign equals σ_j on every sign vector (tests/test_separation_lemmas.py).",
    ),
    (
        "softmax_linear:Lemma 5.1",
        "Monte Carlo",
        "test_toy_model_outcomes: 200 seeded (Y, u) draws at n=1000, m=20, τ=0.5 (margin < −0.25); Fig 3 simulation against 1−2^−m.",
    ),
    (
        "softmax_linear:Lemma 5.2",
        "Monte Carlo",
        "Iff F_exp(D1)>0 ⇔ ∃l y_l[j]=+1 asserted on 200 seeded draws; simulated rate matches 1−2^−m at all Fig 3 points (claim).",
    ),
    (
        "softmax_linear:Lemma 5.3",
        "Monte Carlo",
        "test_toy_model_outcomes: zero-side margins < −0.25 on 200 seeded draws (n=1000, τ=0.5).",
    ),
    (
        "softmax_linear:Lemma 5.4",
        "Monte Carlo",
        "test_toy_model_outcomes: F_lin(D1) margin < −0.25 on 200 seeded draws (n=1000, τ=0.5).",
    ),
    ("softmax_linear:Definition 6.1", "implemented", "Restates Def D.1; sp.self_data."),
    (
        "softmax_linear:Figure 4",
        run.coverage_status("paper scale"),
        "All six panels on the paper's grids, 100 models per point, against the exact formula (sampled σ for d>14); c-panel keeps b=0.2, a0=0.01 assumed.",
    ),
    (
        "softmax_linear:Figure 5",
        run.coverage_status("paper scale"),
        "All six panels on the paper's grids (409 points), 100 models per point, against the exact formula; 'X=1_{n²}' read as 1_{d×d} (SVL-E2).",
    ),
    (
        "softmax_linear:Theorem 6.2",
        "Monte Carlo",
        "Informal of App D (conclusions garbled, SVL-E13). Seeded all-points test (5 readouts); paper default exact-formula estimate 0.891 (fails ≥0.99). Notebook 10 shows linear separates with another X.",
    ),
    (
        "softmax_linear:Fact A.1",
        "checked exactly",
        "sp.scores_by_tensor_trick equals A1 X A2ᵀ to 1e−12 (row-major vec); column-major shown wrong. exp applied entrywise to both sides.",
    ),
    (
        "softmax_linear:Definition C.1",
        "implemented",
        "sp.attention(A1,A2,A3,X,V,'lin') = (S/rowsum) A3 V with S = A1 X A2ᵀ; raises when a row sum is ~0.",
    ),
    (
        "softmax_linear:Definition C.2",
        "implemented",
        "sp.network(c, Y, τ), Y∈{±1}^{d×m}; batched sp.network_batch with row multiplicities (tested equal to full network).",
    ),
    ("softmax_linear:Figure 6", "not applicable", "Illustration only; no data."),
    (
        "softmax_linear:Claim C.3",
        "checked exactly",
        "Same test: reshaping (A1⊗A2)vec(X) to (n,n) gives rows (A1)_{j0} X A2ᵀ to 1e−12; α is the row sum.",
    ),
    (
        "softmax_linear:Definition C.4",
        "implemented",
        "sp.attention(..., 'exp'): stable row softmax of A1 X A2ᵀ times A3 V.",
    ),
    (
        "softmax_linear:Claim C.5",
        "checked exactly",
        "Covered by the tensor-trick test (entrywise exp commutes with the reshape); printed transpose slip SVL-E19.",
    ),
    (
        "softmax_linear:Definition C.6",
        "implemented",
        "sp.network with Y∈{±1}^{d×m}; same Y, X, V, τ shared with F_lin in every trial.",
    ),
    (
        "softmax_linear:Definition D.1",
        "implemented",
        "sp.self_data / sp.self_data_batch (0-based; n multiple of d−2 enforced).",
    ),
    (
        "softmax_linear:Lemma D.2",
        "checked exactly",
        "Every part exact (scores are powers of n to 1e-10; weight bounds) at (n, d) = (200, 22), (60, 12), (256, 130) in tests/test_separation_lemmas.py (SVL-E10).",
    ),
    (
        "softmax_linear:Lemma D.3",
        "checked exactly",
        "Parts 1, 2, 4 exact in tests/test_separation_lemmas.py; Part 5 is false as printed (SVL-E21): 0.151·s against 0.01·s at n = 200, d = 22.",
    ),
    (
        "softmax_linear:Lemma D.4",
        "Monte Carlo",
        "Part 2 (known false) refuted with 200 000 sampled σ (≈0.2498); Part 1 only implied by the WHP test's iff (fires ⇔ y[0]=y[d−1]=+1).",
    ),
    (
        "softmax_linear:Theorem D.5",
        "Monte Carlo",
        "test_self_attention_separates_every_point: 5 seeded readouts, all 256 D1 points, margin > 0.5·s (n=256, d=130, m=48).",
    ),
    (
        "softmax_linear:Lemma D.6",
        "checked exactly",
        "Every part exact at three (n, d) settings and two a0 in tests/test_separation_lemmas.py (SVL-E11).",
    ),
    (
        "softmax_linear:Lemma D.7",
        "checked exactly",
        "Every bullet exact at three (n, d) settings in tests/test_separation_lemmas.py.",
    ),
    (
        "softmax_linear:Lemma D.8",
        "Monte Carlo",
        "Only implicit: the WHP test's zero-side margin < −0.04·s over all D0 points and 5×48 seeded neurons (d=130). Proof cites D.3 for D.7 (SVL-E11).",
    ),
    (
        "softmax_linear:Theorem D.9",
        "Monte Carlo",
        "WHP test zero side over all 256 D0 points, 5 seeded readouts (n=256, d=130, m=48). Header says D1 (SVL-E11).",
    ),
    (
        "softmax_linear:Lemma D.10",
        "checked exactly",
        "Every part exact (linear scores and weights) in tests/test_separation_lemmas.py (SVL-E12).",
    ),
    (
        "softmax_linear:Lemma D.11",
        "checked exactly",
        "Parts 1, 2, 4, 5 exact in tests/test_separation_lemmas.py; c_{d−1} = c·s in tests/test_separation.py.",
    ),
    (
        "softmax_linear:Lemma D.12",
        "Monte Carlo",
        "Only implicit: WHP test zero side covers F_lin on all D1 points for 5 seeded readouts (d=130).",
    ),
    (
        "softmax_linear:Theorem D.13",
        "Monte Carlo",
        "WHP test zero side (5 seeded readouts, every D1 point); notebook 10 shows it fails for X′=e0e0ᵀ+n⁻²·1 (other QKᵀ). Proof cites D.4 (SVL-E11).",
    ),
    (
        "softmax_linear:Lemma D.14",
        "checked exactly",
        "Every part exact in tests/test_separation_lemmas.py (printed QKᵀ = I_d read as 1_{d×d}, SVL-E12).",
    ),
    ("softmax_linear:Lemma D.15", "checked exactly", "Parts 1, 2, 4, 5 exact in tests/test_separation_lemmas.py."),
    (
        "softmax_linear:Lemma D.16",
        "Monte Carlo",
        "Only implicit in the WHP test zero side (all D0 points, 5 seeded readouts, d=130).",
    ),
    (
        "softmax_linear:Theorem D.17",
        "Monte Carlo",
        "WHP test zero side: every D0 point, 5 seeded readouts (n=256, d=130, m=48).",
    ),
    (
        "softmax_linear:Lemma E.1",
        "checked exactly",
        "Parts 1–4 exact (corrected exponents, SVL-E14) at b ∈ {0.1, 0.15, 0.19} in tests/test_separation_lemmas.py.",
    ),
    ("softmax_linear:Lemma E.2", "checked exactly", "Parts 1–6 exact in tests/test_separation_lemmas.py (SVL-E15)."),
    (
        "softmax_linear:Lemma E.3",
        "Monte Carlo",
        "Only implicit in the WHP test with X=identity, but at b=0.2, c=0.8 (b²+c²≠1, outside App E). Part 2 actually holds, unlike D.4.",
    ),
    (
        "softmax_linear:Theorem E.4",
        "Monte Carlo",
        "WHP test X=identity, 5 seeded readouts, all points, all four outcomes, but at b=0.2, c=0.8 rather than E.4's b²+c²=1, b<0.2.",
    ),
    (
        "softmax_linear:Definition F.1",
        "implemented",
        "sp.cross_data with the SVL-E8 fix (A1 columns 2..d all log n), asserted in the test; n multiple of d−1 enforced.",
    ),
    (
        "softmax_linear:Lemma F.2",
        "checked exactly",
        "Every part exact at d ∈ {11, 41}, a1 ∈ {1.5, 3} in tests/test_separation_lemmas.py (SVL-E8).",
    ),
    ("softmax_linear:Lemma F.3", "checked exactly", "Every part exact in tests/test_separation_lemmas.py."),
    (
        "softmax_linear:Lemma F.4",
        "Monte Carlo",
        "Only implicit (cross WHP test, 3 seeds). Printed '= 1/10' (exact 1/4) and j3 for j2 (SVL-E16); '<0.5' fails often at paper d.",
    ),
    (
        "softmax_linear:Theorem F.5",
        "Monte Carlo",
        "Cross WHP test: 3 seeded readouts over a (j2, j3) grid covering every key group, margin > 0.5 (n=200, d=41, m=40).",
    ),
    (
        "softmax_linear:Lemma F.6",
        "checked exactly",
        "Every part exact with row j2 for the printed row label (SVL-E16; the literal label is false, tested) in tests/test_separation_lemmas.py.",
    ),
    ("softmax_linear:Lemma F.7", "checked exactly", "Every part exact in tests/test_separation_lemmas.py."),
    (
        "softmax_linear:Lemma F.8",
        "Monte Carlo",
        "Only implicit in the cross WHP test's zero side (< −0.4 below τ=0.9). The printed 0.5 level is far from w.h.p. at paper sizes.",
    ),
    (
        "softmax_linear:Theorem F.9",
        "Monte Carlo",
        "Cross WHP test zero side: 3 seeded readouts, grid covering every key group (n=200, d=41, m=40).",
    ),
    ("softmax_linear:Lemma F.10", "checked exactly", "Every part exact in tests/test_separation_lemmas.py."),
    (
        "softmax_linear:Lemma F.11",
        "checked exactly",
        "Every part exact with row j2 for the printed label (SVL-E16; the literal Part 3 is false, tested) in tests/test_separation_lemmas.py.",
    ),
    ("softmax_linear:Lemma F.12", "Monte Carlo", "Only implicit in the cross WHP test zero side (3 seeded readouts)."),
    (
        "softmax_linear:Theorem F.13",
        "Monte Carlo",
        "Cross WHP test zero side: 3 seeded readouts, every key group (n=200, d=41, m=40).",
    ),
    (
        "softmax_linear:Lemma F.14",
        "checked exactly",
        "Every part exact with the corrected row labels (SVL-E16) in tests/test_separation_lemmas.py.",
    ),
    ("softmax_linear:Lemma F.15", "checked exactly", "Every part exact in tests/test_separation_lemmas.py."),
    ("softmax_linear:Lemma F.16", "Monte Carlo", "Only implicit in the cross WHP test zero side (3 seeded readouts)."),
    (
        "softmax_linear:Theorem F.17",
        "Monte Carlo",
        "Cross WHP test zero side: 3 seeded readouts, every key group (n=200, d=41, m=40). Proof cites F.4 (SVL-E16).",
    ),
    (
        "softmax_linear:Figure 7",
        run.coverage_status("paper scale"),
        "All five panels on the paper's grids (342 points), 100 models per point; panels (d, e) use d=11 because the paper's d=12 violates n=(d−1)t (SVL-E18).",
    ),
):
    rec.cover(item, status, detail)

# %% [markdown]
# ## 5 · Paper vs ours
#
# The paper reports only plots. We state, per figure, how well simulation and the exact formula agree, and what the
# formula says at the paper's default point — where the theorems promise "with high probability".

# %%
# Documented from the standard-scale run: the exact test finds small disagreements we have not explained yet. The
# formula for d > 14 is estimated from one shared sample of sign vectors per d (its error is common to every point of
# a panel and not in the binomial variance); an exact count for every d would remove it.
UNEXPLAINED = {
    "Fig 4": "pooled bias z = −2.7 over 409 points (the simulation sits slightly below the formula on average); a "
    "rerun with another seed and 300 models per point gave z = +1.8, so the spread exceeds the binomial one",
    "Fig 7": "one point of 342 at Bonferroni p = 0.04",
}
for label, res, fig_name in (
    ("self, X = 1", self_res["ones"], "Fig 5"),
    ("self, X = I", self_res["identity"], "Fig 4"),
    ("cross", cross_res, "Fig 7"),
):
    agree = ss.sweep_in_band(res, S["trials"])
    test = ss.binomial_agreement([v[1] for v in res.values()], [v[0] for v in res.values()], S["trials"])
    rec.record(
        f"{fig_name.replace(' ', '').lower()}_simulation_matches_formula",
        f"{fig_name} ({label}): simulated success rates agree with the exact formula at every point",
        paper=f"{fig_name}: Monte Carlo success rates (no numbers)",
        ours=test | {"fraction of points within 4 s.e.": agree},
        holds=test["bonferroni_p"] >= 0.05 and abs(test["pooled_z"]) < POOLED_Z,
        criterion=f"no point rejected by the exact binomial test at 5 % after Bonferroni over the points, and the pooled "
        f"standardised bias |z| < {POOLED_Z:.2f} (the formula is estimated from sampled sign vectors for d > 14)",
        # the paper's Figs 4, 5 and 7 use 100 models per point
        reduced=f"{S['trials']:,} of the paper's 100 models per point" if S["trials"] < 100 else "",
        meaningful_at="standard",
        # the paper scale's run (2026-11-25) agreed at every point of every figure: pooled z = +1.3 (Fig 4), −1.3 (Fig 7)
        expected="fails" if fig_name in UNEXPLAINED and scale != "paper" else "holds",
        because=UNEXPLAINED.get(fig_name, "") if scale != "paper" else "",
    )

defaults = {
    "self, X = 1 (n=200, d=22, m=15)": sp.success_probability("self", 15, sigmas_for(22), **SELF_BASE, X="ones"),
    "self, X = I (n=200, d=22, m=15)": sp.success_probability("self", 15, sigmas_for(22), **SELF_BASE, X="identity"),
    "cross (n=200, d=11, m=9)": sp.success_probability("cross", 9, sigmas_for(11), **CROSS_BASE),
}
summary = ", ".join(f"{k}: {v:.3f}" for k, v in defaults.items())
display(Markdown(f"**Exact P(E_success) at the paper's defaults:** {summary}"))
rec.record(
    "whp_at_paper_sizes",
    "At the paper's experimental sizes the networks distinguish the classes with high probability (≥ 0.99)",
    paper="Thms 1.1, 1.2, 6.2: 'with high probability'",
    ours=defaults,
    holds=min(defaults.values()) >= 0.99,
    criterion="the exact success probability ≥ 0.99 at each default setting",
    expected="fails",
    because="the theorems are asymptotic; at the paper's own sizes the exact probability is 0.76–0.92 (their constants "
    "are not small at n = 200)",
    note="an independent computation gives 0.890 / 0.763 / 0.917; the theorems are asymptotic (d = ω(n^0.02), poly(log n) ≤ n^0.01)",
)
if "m" in S["self_grid"] and len(S["self_grid"]["m"]) > 3:
    ms, exact_m, _ = ss.sweep_panel(self_res["ones"], "m")
    rec.record(
        "success_not_monotone_in_m",
        "More readout neurons eventually lower the success rate (self-attention, X = 1)",
        paper="m = O(log(n/δ)) (no upper limit stated)",
        ours={"peak m": ms[int(np.argmax(exact_m))], "P at peak": max(exact_m), f"P at m = {ms[-1]}": exact_m[-1]},
        holds=None,
        note="P(F_exp(D1) > 0) = 1 − (3/4)^m grows with m, but each neuron may also fire falsely (p_B > 0)",
    )
rec.finish()  # every cell ran: mark the results file complete
display(Markdown(rec.table()))

# %% [markdown]
# ### What was scaled down, and why
#
# * **Grids.** Nothing is scaled down at standard scale: every panel sweeps the paper's grid (n in steps of 10, a₁ in
#   steps of 0.036, …) with the paper's 100 simulated models per point (1 000 for Fig 3). `make paper` keeps the grids
#   and simulates ten times as many models per point, which tightens the simulation-vs-formula band by √10.
# * **Exact formula.** For d > 14 the per-neuron probabilities come from a fixed sample of sign vectors
#   (`sigma_samples`); the curves are then estimates with standard error ≤ √(p(1−p)/N) per neuron probability.
# * **Quick scale** runs two points per panel with 10 models each: a smoke test only.
