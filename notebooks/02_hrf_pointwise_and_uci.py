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
from functools import partial

import jax
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from sklearn.cluster import KMeans
from tqdm.auto import tqdm

from rflib import kernels, moments, sphere
from rflib.experiments import datasets, simulation
from rflib.features import classic, cluster, complex_exp, hybrid
from rflib.notebook import plotting
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


def gaussian_hybrid_for(r, sigma_r=1.0):
    return partial(hybrid.normalized_gaussian_hybrid_estimator, sigma=sigma_r / r, r=r)


ESTIMATORS = {
    f"trig (M = {M_REG})": (classic.trig_estimator, {"W": (M_REG, 2)}),
    f"FAVOR+ (M = {M_REG})": (classic.hyperbolic_estimator, {"W": (M_REG, 2)}),
    f"angular hybrid ({M_HYB}, {N_HYB})": (
        hybrid.angular_hybrid_estimator,
        {"W_pos": (M_HYB, 2), "W_trig": (M_HYB, 2), "T": (N_HYB, 2)},
    ),
}
GAUSS_NAME = f"Gaussian hybrid ({M_HYB}, {N_HYB}), σ = 1/r"
GAUSS_SHAPES = {"W_pos": (M_HYB, 2), "W_trig": (M_HYB, 2), "T": (N_HYB, 2)}


def closed_form_log_mse(name, theta, r):
    """Exact log MSE on the sphere S(r) (Lemma 2.2; corrected eq 47; Theorem F.1 with σ = 1/r)."""
    if name.startswith("trig"):
        return sphere.log_mse_trig(theta, r, M_REG)
    if name.startswith("FAVOR"):
        return sphere.log_mse_hyperbolic(theta, r, M_REG)
    if name.startswith("angular"):
        return sphere.log_mse_angular_hybrid(theta, r, M_HYB, N_HYB)
    return sphere.log_mse_gaussian_hybrid(theta, r, M_HYB, N_HYB, sigma=1.0 / r)


pointwise = {}  # (name, r) -> dict of arrays over θ
for r in RADII:
    makers = dict(ESTIMATORS)
    makers[GAUSS_NAME] = (gaussian_hybrid_for(r), GAUSS_SHAPES)
    for name, (make, shapes) in makers.items():
        rows = {"q05": [], "q95": [], "rel_err": [], "se_rel": []}
        for ti, theta in enumerate(tqdm(thetas, desc=f"r = {r}, {name}", leave=False)):
            x, y = kernels.pair_at_angle(theta, r)
            k = keys("fig 2 draws", str(r), name, ti)
            est = simulation.pointwise_estimates(k, x, y, make, shapes, S["s_draws"])
            sm = np.exp(x @ y)
            sq = (est - sm) ** 2
            rows["q05"].append(np.quantile(est, 0.05))
            rows["q95"].append(np.quantile(est, 0.95))
            rows["rel_err"].append(np.sqrt(sq.mean()) / sm)
            rows["se_rel"].append(sq.std() / np.sqrt(sq.size) / (2 * np.sqrt(sq.mean()) * sm + 1e-300))
        pointwise[name, r] = {k: np.asarray(v) for k, v in rows.items()}
NAMES = [*ESTIMATORS, GAUSS_NAME]

# %% [markdown]
# Check of the speed trick: at $r = 1$, $\theta = \pi/4$, full 64-dimensional draws of the angular hybrid and of
# FAVOR+ give the same mean and MSE as the 2-D draws, within 5 standard errors.

# %%
rng = keys.rng("speed trick pair")
x64 = rng.normal(size=D_INPUT)
x64 /= np.linalg.norm(x64)
u = rng.normal(size=D_INPUT)
u -= (u @ x64) * x64
u /= np.linalg.norm(u)
y64 = np.cos(np.pi / 4) * x64 + np.sin(np.pi / 4) * u
x2, y2 = simulation.reduce_to_span(x64, y64)
trick_ok = []
for name in (f"angular hybrid ({M_HYB}, {N_HYB})", f"FAVOR+ (M = {M_REG})"):
    make, shapes = ESTIMATORS[name]
    shapes64 = {k: (rows, D_INPUT) for k, (rows, _) in shapes.items()}
    full = simulation.pointwise_estimates(
        keys("speed trick", name, "d=64"), x64, y64, make, shapes64, S["s_draws"], chunk=1000
    )
    small = simulation.pointwise_estimates(keys("speed trick", name, "d=2"), x2, y2, make, shapes, S["s_draws"])
    sm = np.exp(x64 @ y64)
    a, b = (full - sm) ** 2, (small - sm) ** 2
    z_mse = (a.mean() - b.mean()) / np.hypot(a.std(), b.std()) * np.sqrt(a.size)
    z_mean = (full.mean() - small.mean()) / np.hypot(full.std(), small.std()) * np.sqrt(full.size)
    trick_ok.append(abs(z_mse) < 5 and abs(z_mean) < 5)
    print(f"{name:28s} z(mean) = {z_mean:+.2f}, z(MSE) = {z_mse:+.2f}")
rec.record(
    "speed_trick_exact_in_distribution",
    "2-D draws reproduce 64-D draws (iid projections depend on the pair only through its Gram matrix)",
    ours={"within_5_se": trick_ok},
    holds=all(trick_ok),
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
        exact = np.exp(0.5 * closed_form_log_mse(name, fine, r) - r**2 * np.cos(fine))
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
plotting.savefig("hrf_fig2_fig5_pointwise", fig)
plt.show()

# %% [markdown]
# The paper's conclusion is about the **maximal** relative error over $\theta$. Exact maxima (closed form, fine
# grid) and the empirical maxima of our simulation:

# %%
table_rows, max_exact, max_emp = [], {}, {}
for r in RADII:
    for name in NAMES:
        exact = np.exp(0.5 * closed_form_log_mse(name, fine, r) - r**2 * np.cos(fine))
        max_exact[name, r] = float(exact.max())
        max_emp[name, r] = float(pointwise[name, r]["rel_err"].max())
        table_rows.append([r, name, f"{max_exact[name, r]:.3g}", f"{max_emp[name, r]:.3g}"])
display(Markdown(markdown_table(["r", "estimator", "max ε exact", "max ε empirical"], table_rows)))
ang = f"angular hybrid ({M_HYB}, {N_HYB})"
regular = [NAMES[0], NAMES[1]]  # trig and FAVOR+
angular_best = all(max_exact[ang, r] < min(max_exact[n, r] for n in regular) for r in RADII)
gauss_best = all(max_exact[GAUSS_NAME, r] < min(max_exact[n, r] for n in regular) for r in RADII)
rec.record(
    "fig2_angular_hybrid_smallest_max_error",
    "The angular hybrid has a smaller maximal relative error than trig and FAVOR+ (M = 128) at r = 1, 1.25, 1.5",
    paper="hybrid has the lowest max relative error (Figs 2, 5; no numbers given)",
    ours={
        f"r={r}": {"hybrid": max_exact[ang, r], "trig": max_exact[NAMES[0], r], "favor": max_exact[NAMES[1], r]}
        for r in RADII
    },
    holds=angular_best,
    note="exact closed forms; the empirical maxima of the simulation are in the table above",
)
rec.record(
    "fig2_gaussian_hybrid",
    "The Gaussian hybrid (σ = 1/r) also beats trig and FAVOR+ on the maximal error ('similar gains')",
    paper="similar gains as the angular hybrid",
    ours={f"r={r}": {"gaussian": max_exact[GAUSS_NAME, r], "angular": max_exact[ang, r]} for r in RADII},
    holds=gauss_best,
    note="σ is not given in the paper; see the σ ablation below",
)
heavy = max_emp[NAMES[1], 1.5] / max_exact[NAMES[1], 1.5]
rec.record(
    "fig2_heavy_tails",
    "FAVOR+'s empirical max relative error from 10⁴ draws underestimates the true one at r = 1.5",
    ours={"empirical_over_exact_favor_r1.5": heavy},
    holds="info",
    note="per-feature kurtosis of FAVOR+ at r = 1.5, θ ≈ 0 is ~1e15 (HRF notes §3.0): compare with closed forms",
)

# %% [markdown]
# **σ ablation for the Gaussian hybrid** (exact maximal relative error, $(m, n) = (16, 8)$):

# %%
ablation = []
for r in RADII:
    row = [r]
    for sigma_r in (0.5, 1.0, 1.5, 2.0):
        log_mse = sphere.log_mse_gaussian_hybrid(fine, r, M_HYB, N_HYB, sigma=sigma_r / r)
        row.append(float(np.exp(sphere.log_relative_error(log_mse, fine, r)).max()))
    row.append(max_exact[ang, r])
    ablation.append(row)
header = ["r", "σr = 0.5", "σr = 1", "σr = 1.5", "σr = 2", "angular hybrid"]
display(Markdown(markdown_table(header, [[f"{v:.3g}" for v in row] for row in ablation])))
rec.record(
    "gaussian_vs_angular_hybrid",
    "For every σ tried, the Gaussian hybrid's max error is above the angular hybrid's",
    ours={f"r={row[0]}": {"best_gaussian": min(row[1:5]), "angular": row[5]} for row in ablation},
    holds="info",
    note="consistent with the paper choosing the angular hybrid for its main results",
)

# %% [markdown]
# ## 2 · Table 1: hybrids vs QMC/ORF baselines on UCI wine and Boston
#
# **Data.** Wine (178 × 13, bundled with scikit-learn) and Boston housing (506 × 12 from the `ISLP` wheel:
# scikit-learn removed `load_boston`, and ISLP's copy omits the ethically problematic `black` column; we drop the
# target `medv`). The paper does not say how it preprocessed the data; raw wine features (proline ≈ 10³) would
# overflow $e^{x^\top y}$. We z-score every column and rescale every point to norm 1.
#
# **Estimators** (the paper defines none of the baselines; standard definitions, HRF notes §2.12):
# trigonometric features with 512 projections drawn iid, as orthogonal random features with $\chi_d$ lengths
# (ORF-reg), as Hadamard products $\sqrt D\,HD_1HD_2HD_3$ (ORF-Had/SORF; inputs zero-padded to $D = 16$, rows of
# fixed length, hence slightly biased) and as randomised (scrambled) Halton points mapped through $\Phi^{-1}$
# (Halton-R); the angular hybrid FLOP-matched as $(m, n) = (64, 8)$ with iid projections (HRF-iid) or with
# orthogonal $\omega$ in both bases and orthogonal $\tau$ (HRF-ort).
#
# **Protocol** (assumed; the paper gives only "100 random pairs" and ± std): each repetition draws 100 random pairs
# of points and estimates each pair's MSE from fresh feature draws (300 at `standard` scale); the table reports the mean over pairs, mean ± std
# over repetitions, in units of $10^{-3}$.

# %%
M_UCI, M_HYB_UCI, N_HYB_UCI = 512, 64, 8
LOADERS = {"Wine": datasets.load_wine, "Boston": datasets.load_boston}
DATA = {name: LOADERS[name]() for name in S.get("uci_datasets", LOADERS)}
PAPER_TABLE1 = {
    "Wine": {
        "HRF-ort": (0.70, 0.08),
        "HRF-iid": (0.85, 0.05),
        "ORF-reg": (1.00, 0.04),
        "ORF-Had": (1.10, 0.06),
        "Halton-R": (4.02, 0.1),
    },
    "Boston": {
        "HRF-ort": (0.72, 0.06),
        "HRF-iid": (0.79, 0.08),
        "ORF-reg": (1.05, 0.03),
        "ORF-Had": (1.14, 0.02),
        "Halton-R": (2.53, 0.08),
    },
}


def uci_methods(d):
    """name → (estimator factory, matrix shapes, projection law); an orthogonal τ is harmless: only its directions
    matter."""
    hyb_shapes = {"W_pos": (M_HYB_UCI, d), "W_trig": (M_HYB_UCI, d), "T": (N_HYB_UCI, d)}
    return {
        "HRF-ort": (hybrid.angular_hybrid_estimator, hyb_shapes, "orthogonal"),
        "HRF-iid": (hybrid.angular_hybrid_estimator, hyb_shapes, "iid"),
        "ORF-reg": (classic.trig_estimator, {"W": (M_UCI, d)}, "orthogonal"),
        "ORF-Had": (classic.trig_estimator, {"W": (M_UCI, d)}, "sorf"),
        "Halton-R": (classic.trig_estimator, {"W": (M_UCI, d)}, "halton"),
        "iid trig (reference)": (classic.trig_estimator, {"W": (M_UCI, d)}, "iid"),
        "iid FAVOR+ (reference)": (classic.hyperbolic_estimator, {"W": (M_UCI, d)}, "iid"),
    }


def projection_flop_matched_m(M, n, d):
    """Largest m with d(2m + n) + 4mn ≤ M·d: the hybrid's feature-map cost within the regular map's projections."""
    return (M * d - n * d) // (2 * d + 4 * n)


table1, closed1 = {}, {}
for dname, raw in DATA.items():
    Z = datasets.standardize_to_sphere(raw, radius=1.0)
    methods = uci_methods(Z.shape[1])
    per_rep = {name: [] for name in methods}
    m_alt = projection_flop_matched_m(M_UCI, N_HYB_UCI, Z.shape[1])
    alt_name = "HRF-iid (m*, 8), projection-FLOP match"
    closed_rows = {"iid trig": [], "iid FAVOR+": [], f"HRF-iid ({M_HYB_UCI}, 8)": [], alt_name: []}
    for rep in tqdm(range(S["uci_reps"]), desc=f"Table 1, {dname}"):
        pair_rng = keys.rng("table 1 pairs", dname, rep)
        i = pair_rng.integers(0, Z.shape[0], size=S["n_pairs"])
        j = (i + pair_rng.integers(1, Z.shape[0], size=S["n_pairs"])) % Z.shape[0]  # j ≠ i; fixed count: one compile
        X, Y = Z[i], Z[j]
        sm = np.exp(np.sum(X * Y, axis=1))
        closed_rows["iid trig"].append(float(np.mean(moments.classic.mse_trig(X, Y, M_UCI))))
        closed_rows["iid FAVOR+"].append(float(np.mean(moments.classic.mse_hyperbolic(X, Y, M_UCI))))
        for m_h, row in ((M_HYB_UCI, f"HRF-iid ({M_HYB_UCI}, 8)"), (m_alt, alt_name)):
            log_mse = moments.hybrid.log_mse_angular_hybrid(X, Y, m_h, N_HYB_UCI)
            closed_rows[row].append(float(np.mean(np.exp(np.asarray(log_mse)))))
        for name, (make, shapes, law) in methods.items():
            k = keys("table 1 draws", dname, rep, name)
            est = simulation.paired_estimates(k, X, Y, make, shapes, S["uci_draws"], law=law, chunk=250)
            per_rep[name].append(float(np.mean((est - sm) ** 2)))
    table1[dname] = {name: (1e3 * np.mean(v), 1e3 * np.std(v)) for name, v in per_rep.items()}
    closed1[dname] = {name: 1e3 * np.mean(v) for name, v in closed_rows.items()}
    print(f"{dname}: projection-FLOP-matched hybrid m* = {m_alt} (d = {Z.shape[1]})")

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
display(
    Markdown(
        "Exact (closed-form) MSE of the iid estimators on the same pairs, ×10⁻³ — the Monte Carlo above should agree "
        "with these, and the last row uses the alternative matching rule d(2m + n) + 4mn ≤ M·d:\n\n"
        + markdown_table(
            ["estimator", *DATA],
            [[name, *(f"{closed1[dn][name]:.3f}" for dn in DATA)] for name in closed1[next(iter(DATA))]],
        )
    )
)
for dname in DATA:
    hrf_mc, hrf_sd = table1[dname]["HRF-iid"]
    hrf_exact = closed1[dname][f"HRF-iid ({M_HYB_UCI}, 8)"]
    rec.record(
        f"table1_{dname.lower()}_monte_carlo_vs_closed_form",
        f"Table 1 ({dname}): our HRF-iid Monte Carlo agrees with its closed form (Theorem D.1) on the same pairs",
        ours={"monte_carlo": hrf_mc, "closed_form": hrf_exact, "std_over_reps": hrf_sd},
        holds=abs(hrf_mc - hrf_exact) < 5 * hrf_sd / np.sqrt(S["uci_reps"]) + 0.05 * hrf_exact,
        note="×10⁻³; tolerance 5 s.e. over repetitions + 5 % (the pairs of each repetition differ)",
    )
    ours = {name: table1[dname][name][0] for name in PAPER_TABLE1[dname]}
    rec.record(
        f"table1_{dname.lower()}_hrf_ort_best",
        f"Table 1 ({dname}): HRF-ort has the lowest MSE among HRF-ort, HRF-iid, ORF-reg, ORF-Had, Halton-R",
        paper={name: v[0] for name, v in PAPER_TABLE1[dname].items()},
        ours=ours,
        holds=min(ours, key=ours.get) == "HRF-ort",
        note="MSE ×10⁻³; preprocessing (z-score, unit norm), base estimator of the baselines (trig), and the ± "
        "protocol are our assumptions; Boston from ISLP (12 features). Random pairs of unit vectors sit near "
        "θ = π/2, where the hybrid's error is largest (notebook 01 §6), so FLOP-matched hybrids lose here",
    )
    rec.record(
        f"table1_{dname.lower()}_ordering",
        f"Table 1 ({dname}): the paper's full ordering HRF-ort < HRF-iid < ORF-reg < ORF-Had < Halton-R",
        paper="HRF-ort < HRF-iid < ORF-reg < ORF-Had < Halton-R",
        ours=" < ".join(sorted(ours, key=ours.get)),
        holds=sorted(ours, key=ours.get) == ["HRF-ort", "HRF-iid", "ORF-reg", "ORF-Had", "Halton-R"],
    )

# %% [markdown]
# **Reading Table 1.** Our Monte Carlo agrees with the exact closed forms, so any disagreement with the paper is not
# simulation noise. With unit-norm data, random pairs of points are nearly orthogonal ($\theta \approx \pi/2$), which
# is exactly where the angular hybrid is *worst* relative to trig/FAVOR+ (notebook 01, §6): $\hat\lambda$ is then
# a coin flip and the hybrid pays for both bases with only $m = 64$ projections each. Neither matching rule (App I's
# $mn = M$ or the projection-FLOP rule) makes the FLOP-matched hybrid competitive with 512 orthogonal trig features
# on such pairs. The paper's preprocessing, norms and matching are not stated; its absolute MSEs (~10⁻³ for ORF
# with 512 features) are about what trig features give here, so the scale is comparable, but the ranking of the
# hybrids is not reproduced.

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
CLUSTER_METHODS = ("HRF-C (eq 88, clipped)", "HRF-C (moment A, extension)", "FAVOR+", "trig")


def hrfc_estimator(Ws, A, centres_x, centres_y):
    pairs = [[complex_exp.diagonal_ce_estimator(Ws[i][j], A[i][j]) for j in range(2)] for i in range(2)]
    return cluster.cluster_hybrid_estimator(pairs, centres_x, centres_y)


cluster_results = {}
S_LISTS = {name: S_LISTS[name] for name in S.get("cluster_sets", S_LISTS)}
for sname, (targets, noise) in S_LISTS.items():
    data = datasets.clustered_queries_keys(
        keys("fig 6 clusters", sname), targets, noise=noise, points_per_cluster=S["cluster_points"]
    )
    km_x = KMeans(n_clusters=2, n_init=10, random_state=seed).fit(data.X)
    km_y = KMeans(n_clusters=2, n_init=10, random_state=seed).fit(data.Y)
    cx, cy = km_x.cluster_centers_, km_y.cluster_centers_
    A_eq88 = [[cluster.real_diagonal_A(cx[i], cy[j]) for j in range(2)] for i in range(2)]
    A_moment = [
        [cluster.moment_diagonal_A(data.X[km_x.labels_ == i], data.Y[km_y.labels_ == j]) for j in range(2)]
        for i in range(2)
    ]
    eval_rng = keys.rng("fig 6 evaluation points", sname)
    X = data.X[eval_rng.choice(data.X.shape[0], S["cluster_eval"], replace=False)]
    Y = data.Y[eval_rng.choice(data.Y.shape[0], S["cluster_eval"], replace=False)]
    exact = np.exp(X @ Y.T)
    res = {name: np.zeros((len(S["cluster_m"]), S["cluster_trials"])) for name in CLUSTER_METHODS}
    for mi, m in enumerate(tqdm(S["cluster_m"], desc=f"Fig 6, {sname}")):
        for t in range(S["cluster_trials"]):
            k = jax.random.split(keys("fig 6 draws", sname, m, t), 3)
            Ws = jax.random.normal(k[0], (2, 2, m, X.shape[1]))
            ests = {
                CLUSTER_METHODS[0]: hrfc_estimator(Ws, A_eq88, cx, cy),
                CLUSTER_METHODS[1]: hrfc_estimator(Ws, A_moment, cx, cy),
                "FAVOR+": classic.hyperbolic_estimator(jax.random.normal(k[1], (m, X.shape[1]))),
                "trig": classic.trig_estimator(jax.random.normal(k[2], (m, X.shape[1]))),
            }
            for name, est in ests.items():
                res[name][mi, t] = float(np.mean((np.asarray(est.estimate(X, Y)) - exact) ** 2))
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
plotting.savefig("hrf_fig6_clustered", fig)
plt.show()

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
display(
    Markdown(
        "Achieved residuals $s_{ij}$ of the generated data vs the paper's lists:\n\n"
        + "\n".join(
            f"- {k}: paper {v['targets']}, ours {np.round(v['s_achieved'], 3).tolist()}"
            for k, v in cluster_results.items()
        )
    )
)
wins = {
    sname: bool(
        np.all(
            out["res"][CLUSTER_METHODS[0]].mean(1)
            < np.minimum(out["res"]["FAVOR+"].mean(1), out["res"]["trig"].mean(1))
        )
    )
    for sname, out in cluster_results.items()
}
moment_wins = {
    sname: bool(np.all(out["res"][CLUSTER_METHODS[1]].mean(1) < out["res"]["FAVOR+"].mean(1)))
    for sname, out in cluster_results.items()
}
rec.record(
    "fig6_moment_A_extension",
    "Extension (not in the paper): HRF-C with the moment-matched A vs FAVOR+ at every m",
    ours={sname: {"hrf_c_moment": out["res"][CLUSTER_METHODS[1]].mean(1)[-1]} for sname, out in cluster_results.items()}
    | {"beats_favor_at_every_m": moment_wins},
    holds="info",
)
rec.record(
    "fig6_hrf_c_beats_favor_and_trig",
    "HRF-C (eq 88 A) has a lower mean MSE than FAVOR+ and trig at every m, on every clustered data set",
    paper="HRF-C best for every m and data set (Fig 6, Table 3)",
    ours={
        sname: {
            "hrf_c_eq88": out["res"][CLUSTER_METHODS[0]].mean(1)[-1],
            "favor": out["res"]["FAVOR+"].mean(1)[-1],
            "trig": out["res"]["trig"].mean(1)[-1],
        }
        for sname, out in cluster_results.items()
    }
    | {"wins_at_every_m": wins},
    holds=all(wins.values()),
    note=f"values at m = {S['cluster_m'][-1]}; generator is ours (App H.3 underspecified), eq 88 clipped to [0.1, 10]. "
    "With noise/centre ≈ 0.32 (σ = √10) eq 88's A is tuned to the centres only and loses to FAVOR+",
)

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
#   15-minute budget (each draw evaluates 2 × 100 × 1 024 trigonometric features per method). Boston comes from ISLP
#   (12 of MASS's 13 predictors). `quick`: wine only, 30 pairs, 50 draws, 2 reps.
# - **Fig 6 / Table 3** use the paper's sizes (1 000 points per cluster, 20 trials, $m$ up to 200) but evaluate the
#   MSE on a random 1 000 × 1 000 subset of the 2 000 × 2 000 pairs (mean over 10⁶ pairs; 4× cheaper). The data
#   generator is ours, because App H.3 does not specify the sign adjustment or the normalisation.
