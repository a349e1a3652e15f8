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
# # 00 · Random features for the softmax kernel: a primer
#
# Papers 1 (Hybrid Random Features, HRF) and 2 (FAVOR#) both start from the same two estimators of the softmax
# kernel $\mathrm{SM}(x, y) = \exp(x^\top y)$ and the attention it defines. This notebook reproduces the shared
# background every later notebook relies on:
#
# 1. **Unbiasedness and the closed-form MSEs** of trigonometric, positive and hyperbolic random features
#    (HRF Lemma 2.2 = Performer Lemma 2), checked against exact quadrature and seeded Monte Carlo.
# 2. **Opposite error profiles**: trigonometric features are exact when $x = y$ and worst when the kernel value is
#    small; positive (hyperbolic) features are exact when $x = -y$ and worst when it is large (HRF §1, Fig 1).
# 3. **Orthogonal vs iid projections** (Performer Thm 2): orthogonal rows lower the error, but only if each row is
#    still marginally Gaussian; the public Performer/HRF code's unfixed QR breaks this and biases positive features.
# 4. **Softmax-attention approximation error vs number of features** for trig, positive and orthogonal positive
#    features (Performer §2.3–2.4).
#
# All formulas live in `rflib`; this notebook only calls them.

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
import jax
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from tqdm.auto import tqdm

from rflib import features, kernels, moments, projections
from rflib.experiments import datasets, exact_sweeps, families, identities, simulation
from rflib.notebook import plotting
from rflib.notebook.results import combine, decide, interval_z
from rflib.notebook.scaffold import markdown_table, start

SETTINGS = {
    # m = projections per estimator (HRF Fig 1 uses m = 10); mc_draws = single-feature draws per angle;
    # orth_* = the orthogonal-vs-iid study; att_* = the attention study (feature dimensions F, L tokens);
    # family_draws = independent draws per estimator family in §5.
    "quick": dict(
        d=16,
        m=10,
        n_theta=25,
        n_radius=13,
        mc_angles=5,
        mc_draws=20_000,
        qr_blocks=20_000,
        orth_d=8,
        orth_redraws=4_000,
        att_L=256,
        att_d=16,
        att_F=(16, 64, 256),
        att_seeds=3,
        family_draws=3,
    ),
    "standard": dict(
        d=64,
        m=10,
        n_theta=91,
        n_radius=61,
        mc_angles=13,
        mc_draws=400_000,
        qr_blocks=250_000,
        orth_d=16,
        orth_redraws=50_000,
        att_L=1024,
        att_d=64,
        att_F=(16, 32, 64, 128, 256, 512, 1024),
        att_seeds=30,
        family_draws=30,
    ),
    "paper": dict(
        d=64,
        m=10,
        n_theta=181,
        n_radius=121,
        mc_angles=19,
        mc_draws=2_000_000,
        qr_blocks=1_000_000,
        orth_d=16,
        orth_redraws=400_000,
        att_L=4096,
        att_d=64,
        att_F=(16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
        att_seeds=100,
        family_draws=100,
    ),
}
run = start("00_random_features_primer", scale, seed, SETTINGS, x64=True)
S, keys, rec = run.settings, run.keys, run.recorder

# %% [markdown]
# ## 1 · Three unbiased estimators and their exact MSE
#
# For $\omega \sim \mathcal N(0, I_d)$, $\mathbb E\,e^{\omega^\top u} = e^{\|u\|^2/2}$ and
# $\mathbb E \cos(\omega^\top u) = e^{-\|u\|^2/2}$. With $z = x + y$ and $\Delta = x - y$ this gives three unbiased
# single-feature estimators of $\mathrm{SM}(x,y)$:
#
# | name | feature map $\varphi(u)$ | estimate $\varphi(x)^\top\varphi(y)$ |
# |---|---|---|
# | trigonometric (HRF eq 2) | $m^{-1/2} e^{\|u\|^2/2}(\sin\omega_i^\top u, \cos\omega_i^\top u)_i$ | $e^{(\|x\|^2+\|y\|^2)/2}\frac1m\sum_i \cos\omega_i^\top\Delta$ |
# | positive, FAVOR+ (Performer Lemma 1) | $m^{-1/2} e^{-\|u\|^2/2}(e^{\omega_i^\top u})_i$ | $e^{-(\|x\|^2+\|y\|^2)/2}\frac1m\sum_i e^{\omega_i^\top z}$ |
# | hyperbolic (HRF eq 3, antithetic) | $(2m)^{-1/2} e^{-\|u\|^2/2}(e^{\omega_i^\top u}, e^{-\omega_i^\top u})_i$ | $e^{-(\|x\|^2+\|y\|^2)/2}\frac1m\sum_i \cosh\omega_i^\top z$ |
#
# Using $\operatorname{Var}\cos(g s) = (1-e^{-s^2})^2/2$, $\operatorname{Var}\cosh(g s) = (e^{s^2}-1)^2/2$ and
# $\operatorname{Var} e^{g s} = e^{s^2}(e^{s^2}-1)$ for $g \sim \mathcal N(0,1)$, the MSEs of $m$ iid features are
# (HRF Lemma 2.2, Performer Lemma 2)
#
# $$\mathrm{MSE}^{\rm trig}_m = \frac{e^{\|z\|^2}}{2m\,\mathrm{SM}^2}\big(1-e^{-\|\Delta\|^2}\big)^2,\qquad
#   \mathrm{MSE}^{+}_m = \frac{\mathrm{SM}^2}{m}\big(e^{\|z\|^2}-1\big),\qquad
#   \mathrm{MSE}^{++}_m = \frac{e^{\|z\|^2}\mathrm{SM}^2}{2m}\big(1-e^{-\|z\|^2}\big)^2 .$$
#
# `rflib.moments.classic` implements them in log space. We check them three ways: by exact Gauss–Hermite quadrature over
# $\operatorname{span}\{x, y\}$ (the nodes are fed to the real feature maps), and by seeded Monte Carlo whose
# tolerance ($5\sigma$) comes from the exact fourth moment, also by quadrature. Inputs have equal norms $r$ and angle
# $\theta$; only the plane of $x, y$ matters, so $d$ is irrelevant to the closed forms.

# %%
MAPS = {"trig": features.trig, "positive": features.positive, "hyperbolic": features.hyperbolic}
LOG_MSE = {
    "trig": moments.classic.log_mse_trig,
    "positive": moments.classic.log_mse_positive,
    "hyperbolic": moments.classic.log_mse_hyperbolic,
}

quad_rows = identities.moments_vs_quadrature(MAPS, LOG_MSE, (0.5, 1.0, 1.5), (0.3, 1.6, 2.9), S["d"], n_points=120)
max_bias = max(abs(row[3]) for row in quad_rows)
max_mse_dev = max(abs(row[4]) for row in quad_rows)
print(f"max |E[estimate]/SM − 1| = {max_bias:.2e};  max |closed-form MSE / quadrature MSE − 1| = {max_mse_dev:.2e}")
rec.record(
    "unbiased_by_quadrature",
    "Trig, positive and hyperbolic features are unbiased for SM (exact quadrature)",
    ours={"max_relative_bias": max_bias},
    holds=max_bias < 1e-10,
    criterion="largest relative bias over the (θ, r) grid, by Gauss–Hermite quadrature, < 1e-10",
)
rec.record(
    "lemma_2_2_closed_form_vs_quadrature",
    "HRF Lemma 2.2 / Performer Lemma 2 MSE closed forms equal the exact second moment (r ≤ 1.5)",
    ours={"max_relative_deviation": max_mse_dev},
    holds=max_mse_dev < 1e-10,
    criterion="largest relative gap between closed-form and quadrature second moments < 1e-10",
)

# %% [markdown]
# Seeded Monte Carlo at $r = 1$: $N$ single-feature draws per angle, empirical MSE vs closed form, with the
# $5\sigma$ band from the exact variance of the squared error. The $m$-feature MSE is the single-feature MSE over
# $m$ (iid features), so the curves below are plotted for $m = 10$ as in HRF Fig 1.

# %%
theta_mc = np.linspace(0.0, np.pi, S["mc_angles"])
mc = simulation.single_feature_mse(  # name → (empirical, closed form, σ from the exact 4th moment) per angle
    lambda i: keys("single-feature draws", i), MAPS, LOG_MSE, theta_mc, S["d"], S["mc_draws"], progress=True
)
# Where an estimator is exact (trig at θ = 0, positive and hyperbolic at θ = π) both MSEs are round-off (≤ 1e-24).
within = {name: simulation.count_within_band(*np.array(rows).T, n_sigma=5, floor=1e-24) for name, rows in mc.items()}
print({name: f"{within[name]}/{len(theta_mc)} angles within 5σ" for name in MAPS})
rec.record(
    "lemma_2_2_closed_form_vs_monte_carlo",
    "Empirical MSE of seeded Monte Carlo agrees with the closed forms within 5σ (σ from the exact 4th moment)",
    ours={f"{name}_within_5sigma": f"{within[name]}/{len(theta_mc)}" for name in MAPS},
    holds=all(within[name] == len(theta_mc) for name in MAPS),
    criterion="every angle's empirical MSE within 5σ of the closed form, for every estimator",
    note=f"r = 1, d = {S['d']}, {S['mc_draws']} single-feature draws per angle",
)

# %% [markdown]
# ## 2 · Opposite error profiles
#
# At equal feature dimension $2m$ (trig: $m$ frequencies × sin/cos; hyperbolic: $m$ antithetic pairs; positive:
# $2m$ projections), the relative MSE $\mathrm{MSE}/\mathrm{SM}^2$ depends on $\theta$ and $r$ in opposite ways:
# trig vanishes at $\theta = 0$ ($\Delta = 0$) and explodes as $\theta \to \pi$ where SM is tiny, while the positive
# estimators vanish (hyperbolic) or are smallest (positive) at $\theta = \pi$ and grow with the kernel value. This is
# the observation HRF builds its hybrids on.

# %%
m = S["m"]
theta_grid = np.linspace(0.0, np.pi, S["n_theta"])
x, y = kernels.pair_at_angle(theta_grid, d=S["d"])
m_of = {"trig": m, "hyperbolic": m, "positive": 2 * m}  # equal feature dimension 2m
log_rel = {name: np.asarray(moments.classic.log_relative_mse(LOG_MSE[name](x, y, m_of[name]), x, y)) for name in MAPS}

norm_ratios = np.geomspace(0.25, 4.0, S["n_radius"])
surface = exact_sweeps.log10_mse_ratio(LOG_MSE["trig"], LOG_MSE["hyperbolic"], theta_grid, norm_ratios, m, S["d"])

fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(11, 4.2))
_, ymc = kernels.pair_at_angle(theta_mc, d=S["d"])
sm2 = np.exp(2 * ymc[:, 0])  # SM² = exp(2 xᵀy) with x = e₁
for (name, values), colour in zip(log_rel.items(), plotting.PALETTE, strict=False):
    ax_a.plot(theta_grid, values / np.log(10), color=colour, label=f"{name} (closed form)")
    emp, _, sig = np.array(mc[name]).T / m_of[name]  # m-feature MSE = single-feature MSE / m
    plotting.log10_errorbars(ax_a, theta_mc, emp, 2 * sig, scale=sm2, fmt="o", ms=4, color=colour, capsize=2)
ax_a.set(
    xlabel="angle θ between x and y (rad)",
    ylabel="log₁₀ relative MSE  (MSE / SM²)",
    title=f"(a) r = ‖x‖ = ‖y‖ = 1, feature dimension 2m = {2 * m}",
)
ax_a.set_ylim(-4, 4)
ax_a.legend(loc="upper left")
mesh = ax_b.pcolormesh(theta_grid, norm_ratios, surface, cmap="RdBu_r", vmin=-6, vmax=6, shading="auto")
ax_b.contour(theta_grid, norm_ratios, surface, levels=[0.0], colors="k", linewidths=1)
ax_b.set_yscale("log", base=2)
fig.colorbar(mesh, ax=ax_b, label="log₁₀ (MSE trig / MSE hyperbolic)")
ax_b.set(xlabel="angle θ (rad)", ylabel="‖y‖ / ‖x‖  (‖x‖ = 1)", title="(b) red: hyperbolic better · blue: trig better")
plotting.caption(
    fig,
    f"Markers: seeded Monte Carlo ({S['mc_draws']:,} single-feature draws per angle, ±2σ), "
    f"{scale} scale. Lines and surface: closed forms (HRF Lemma 2.2), m = {m} as in HRF Fig 1.",
    -0.04,
)
plotting.finish_figure(fig, "primer_mse_profiles", tight=False)

# %%
# %% [markdown]
# The crossing is exactly at $\theta^* = \pi/2$: the two MSEs are equal iff
# $\mathrm{SM}^{-1}(1 - e^{-\|\Delta\|^2}) = \mathrm{SM}\,(1 - e^{-\|z\|^2})$, and for $x \perp y$ both
# $\mathrm{SM} = 1$ and $\|\Delta\| = \|z\|$, *whatever the norms* — panel (b) shows the boundary stays at $\pi/2$
# for unequal norms too, while the size of each estimator's advantage grows with the norms.

# %%
# the endpoints are ±inf where one estimator is exact: the crossing is interpolated on the interior
monotone, theta_star = exact_sweeps.crossing_angle(theta_grid, log_rel["trig"] - log_rel["hyperbolic"])
trig_exact_at_0 = bool(log_rel["trig"][0] / np.log(10) < -30)
hyp_exact_at_pi = bool(log_rel["hyperbolic"][-1] / np.log(10) < -30)
print(
    f"trig exact at θ=0: {trig_exact_at_0}; hyperbolic exact at θ=π: {hyp_exact_at_pi}; "
    f"log-ratio monotone in θ: {monotone}; crossing θ* = {theta_star:.4f} rad ({np.degrees(theta_star):.2f}°)"
)
rec.record(
    "opposite_error_profiles",
    "Trig is exact at θ = 0 and hyperbolic at θ = π; trig is better below one crossing angle, hyperbolic above",
    paper="trig accurate for large kernel values, positive for small ones (HRF §1, Fig 1)",
    ours={
        "theta_star_deg": np.degrees(theta_star),
        "trig_exact_at_0": trig_exact_at_0,
        "hyperbolic_exact_at_pi": hyp_exact_at_pi,
        "monotone": monotone,
    },
    holds=trig_exact_at_0 and hyp_exact_at_pi and monotone and abs(theta_star - np.pi / 2) < 1e-6,
    criterion="closed-form MSEs: trig's is 0 at θ = 0, hyperbolic's 0 at θ = π, their ratio monotone in θ with one "
    "crossing at π/2 (to 1e-6)",
    note="r = 1; θ* = π/2 exactly for equal norms",
)

# %% [markdown]
# ## 3 · Orthogonal vs iid projections, and the unfixed-QR bug
#
# Orthogonal random features (ORF) draw the rows of $W$ in blocks of $d$ mutually orthogonal directions, each
# rescaled by an independent $\chi_d$ length, so that every row is still marginally $\mathcal N(0, I_d)$ and every
# estimator above stays unbiased; the negative correlation between rows lowers the MSE (Performer Thm 2 for
# positive features, $m \le d$). The orthogonal block must be **Haar**: QR of a Gaussian matrix with the signs of
# $\operatorname{diag} R$ absorbed into $Q$ (Mezzadri 2007). The public Performer and HRF code skips the sign fix;
# on LAPACK its rows lean towards $\pm e_i$, and estimators that are not even in $\omega$ — positive features — become
# biased (google-research `performer/fast_attention` `GaussianOrthogonalRandomMatrix`, discussed in
# google-research#436). `rflib.projections.orthogonal(..., sign_fix=False)` reproduces the bug for this
# demonstration only.
#
# **(a) bias.** $d = 4$, $z = e_1$: the mean of $e^{\omega^\top z}$ over $N$ orthogonal rows should be
# $e^{1/2} = 1.6487$.

# %%
d_qr = 4
n_rows = S["qr_blocks"] * d_qr
# mean ± s.e. of exp(ωᵀe₁) over n_rows rows of iid, sign-fixed orthogonal and unfixed-QR orthogonal ω (one key)
qr_means = simulation.qr_sign_bias(keys("qr sign study"), n_rows, d_qr)
target = float(np.exp(0.5))
for label, (mean, se) in qr_means.items():
    print(f"{label:<40} {mean:.4f} ± {se:.4f}   ({(mean - target) / se:+.1f} standard errors from {target:.4f})")
fixed_mean, fixed_se = qr_means["orthogonal, sign-fixed QR (rflib)"]
bug_mean, bug_se = qr_means["orthogonal, unfixed QR (public code)"]
rec.record(
    "orthogonal_sign_fixed_unbiased",
    "Sign-fixed orthogonal ω keep positive features unbiased: mean of exp(ωᵀe₁) = e^{1/2} (d = 4)",
    paper=target,
    ours=fixed_mean,
    holds=abs(fixed_mean - target) < 5 * fixed_se,
    criterion="|mean − e^{1/2}| < 5 s.e.",
)
rec.record(
    "unfixed_qr_bias",
    "QR without the sign fix (public Performer/HRF code) biases positive features (d = 4, z = e₁)",
    paper="≈1.37 in a re-run of the public code (no value in the papers)",
    ours=bug_mean,
    holds=abs(bug_mean - target) > 10 * bug_se,
    criterion="|mean − e^{1/2}| > 10 s.e.",
)

# %% [markdown]
# **(b) MSE ratio ORF / iid** for a fixed pair ($d$ = `orth_d`, $\|x\| = \|y\| = 0.6$, $\theta = \pi/3$), as a
# function of $m/d$. The iid MSE is the closed form; the ORF MSE is a seeded Monte Carlo average over independent
# redraws of $W$ (error bars ±2 standard errors). Blocks are independent, so the gain should fade once $m \gg d$.

# %%
d_o = S["orth_d"]
xo, yo = kernels.pair_at_angle([np.pi / 3], 0.6, d=d_o)
ms_o = [max(1, d_o // 4), d_o // 2, d_o, 2 * d_o, 4 * d_o]
ratio = {  # name → (MSE(ORF) / closed-form MSE(iid), 2 s.e.) per m; the same ORF draws for both maps
    name: simulation.orthogonal_over_iid_mse(
        lambda m_o: keys("orthogonal vs iid", m_o), MAPS[name], LOG_MSE[name], xo[0], yo[0], ms_o, S["orth_redraws"]
    )
    for name in tqdm(("trig", "positive"), desc="ORF vs iid")
}

fig, (ax_q, ax_r) = plt.subplots(1, 2, figsize=(11, 3.8))
qr_mean, qr_se = np.array(list(qr_means.values())).T
ax_q.bar(range(3), qr_mean, yerr=2 * qr_se, color=plotting.PALETTE[:3], capsize=4)
ax_q.axhline(target, color="k", ls="--", lw=1, label=r"$\mathbb{E}\,e^{\omega^\top z} = e^{1/2}$")
ax_q.set_xticks(range(3), ["iid", "ORF sign-fixed\n(rflib)", "ORF unfixed QR\n(public code)"])
ax_q.set(
    xlabel="projection matrix",
    ylabel="mean of exp(ωᵀe₁)  (unitless)",
    title=f"(a) bias of the unfixed QR, d = {d_qr}",
)
ax_q.set_ylim(1.0, 1.8)
ax_q.legend(loc="lower right")
for (name, rows), colour in zip(ratio.items(), plotting.PALETTE, strict=False):
    ax_r.errorbar(np.array(ms_o) / d_o, *np.array(rows).T, fmt="o-", color=colour, capsize=3, label=name)
ax_r.axhline(1.0, color="k", ls="--", lw=1)
ax_r.set_xscale("log", base=2)
ax_r.set(
    xlabel="m / d  (blocks of d orthogonal rows)",
    ylabel="MSE(ORF) / MSE(iid)",
    title=f"(b) orthogonal gain, d = {d_o}, r = 0.6, θ = π/3",
)
ax_r.legend()
plotting.caption(
    fig,
    f"{scale} scale: (a) {n_rows:,} rows per sampler; (b) {S['orth_redraws']:,} redraws of W per "
    "point, iid MSE in closed form, ±2 standard errors.",
)
plotting.finish_figure(fig, "primer_orthogonal", tight=False)

# %%
at_d = ms_o.index(d_o)
for name in ratio:
    value, err = ratio[name][at_d]
    print(f"{name}: MSE(ORF)/MSE(iid) at m = d: {value:.3f} ± {err:.3f}")
pos_ratio, pos_err = ratio["positive"][at_d]
rec.record_estimate(  # the ratio's Monte Carlo numerator over the exact iid MSE; pos_err is 2 s.e.
    "orf_lower_mse_positive",
    "Orthogonal projections lower the MSE of positive features at m = d (MSE ratio ORF / iid below 1)",
    paper="MSE(ORF) < MSE(iid) for m ≤ d (Performer Thm 2)",
    estimate=pos_ratio,
    se=pos_err / 2,
    below=1.0,
    quantity="MSE ratio ORF / iid",
)
trig_ratio, trig_err = ratio["trig"][at_d]
rec.record_estimate(
    "orf_lower_mse_trig",
    "Orthogonal projections lower the MSE of trigonometric features at m = d (MSE ratio ORF / iid below 1)",
    paper="MSE(ORF) < MSE(iid) (Yu et al. 2016)",
    estimate=trig_ratio,
    se=trig_err / 2,
    below=1.0,
    quantity="MSE ratio ORF / iid",
)

# %% [markdown]
# ## 4 · Approximating softmax attention
#
# Softmax attention $\mathrm{Att}(Q,K,V) = D^{-1}\exp(QK^\top)V$ (queries and keys pre-scaled by $d^{-1/4}$) is
# replaced by $\hat D^{-1}\varphi(Q)(\varphi(K)^\top V)$, linear in the sequence length $L$ (Performer §2.1). We
# compare, at equal feature dimension $F$ (trig: $F/2$ frequencies; positive: $F$ projections; hyperbolic: $F/2$
# antithetic pairs), the relative error $\|\widehat{\mathrm{Att}} - \mathrm{Att}\|_F / \|\mathrm{Att}\|_F$ on random
# inputs $q, k \sim \mathcal N(0, \sigma^2 I_d)\,d^{-1/4}$ with $\sigma = 0.5$ (so $q^\top k$ has standard deviation
# $\approx 0.25$, a typical post-LayerNorm range), $v \sim \mathcal N(0, I)$, averaged over seeds.

# %%
L_att, d_att = S["att_L"], S["att_d"]
sigma_qk = 0.5
Q, K, V = datasets.gaussian_attention_inputs(*(keys("attention inputs", n) for n in "QKV"), L_att, d_att, sigma_qk)

estimators = {  # name: (feature map, projection sampler, feature columns per projection)
    "trig, iid": (features.trig_features, projections.gaussian, 2),
    "positive, iid": (features.positive_features, projections.gaussian, 1),
    "positive, orthogonal": (features.positive_features, projections.orthogonal, 1),
    "hyperbolic, orthogonal": (features.hyperbolic_features, projections.orthogonal, 2),
}
att_err = simulation.attention_errors(  # name → (len(F), seeds) relative errors; draw (s, j) shared by all maps
    lambda s, j: keys("attention projections", s, j), Q, K, V, estimators, S["att_F"], S["att_seeds"], progress=True
)

fig, ax = plt.subplots(figsize=(6.4, 4.2))
Fs = np.array(S["att_F"])
plotting.quantile_bands(ax, Fs, att_err)  # median line, interquartile band, × = worst draw
ref = np.median(att_err["positive, orthogonal"], axis=1)[0] * np.sqrt(Fs[0] / Fs)
ax.plot(Fs, ref, "k:", lw=1, label=r"$\propto F^{-1/2}$")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set(
    xlabel="feature dimension F (columns of φ)",
    ylabel="relative error ‖Att̂ − Att‖_F / ‖Att‖_F",
    title=f"Softmax attention, L = {L_att}, d = {d_att}",
)
ax.legend(fontsize=8)
plotting.caption(
    fig,
    f"{scale} scale: median and interquartile band over {S['att_seeds']} feature draws, × = worst "
    f"draw; one fixed random Q, K, V (σ = {sigma_qk}).",
    -0.06,
)
plotting.finish_figure(fig, "primer_attention_error", tight=False)

# %% [markdown]
# Trigonometric features can make the normaliser $\hat D$ of a row nearly zero or negative; that row's output then
# explodes. The median error hides this, the worst draw (×) shows it, so the comparison below is made on both.

# %%
median_err = {name: np.median(errs, axis=1) for name, errs in att_err.items()}
worst_err = {name: errs.max(axis=1) for name, errs in att_err.items()}
print(f"worst-draw error, positive iid: {np.round(worst_err['positive, iid'], 3)}")
print(f"worst-draw error, trig iid:     {np.round(worst_err['trig, iid'], 3)}")
small_F = Fs <= d_att
trig_blowup = worst_err["trig, iid"] / worst_err["positive, iid"]
# per F: the mean over paired draws of log(error trig / error positive) and its s.e. (each draw serves both maps)
log_gap = {
    F: simulation.paired_log_ratio(att_err["trig, iid"][i], att_err["positive, iid"][i]) for i, F in enumerate(Fs)
}
log_gap = {F: (float(np.log(ratio)), band / 2) for F, (ratio, band) in log_gap.items()}
# Student-t over the draws, Bonferroni over the F values a claim combines
z_small_F, z_every_F = (interval_z(samples=S["att_seeds"], parts=n) for n in (int(small_F.sum()), len(Fs)))
rec.record(
    "attention_trig_unstable_at_small_F",
    "With few features (F ≤ d), trig attention is less accurate than positive features (paired draws)",
    paper="trig features give unstable attention when the normaliser is near 0 (Performer §2.3)",
    ours={
        "F": Fs[small_F],
        "mean log error ratio trig / positive, s.e.": [log_gap[F] for F in Fs[small_F]],
        "worst_trig_over_worst_positive": trig_blowup[small_F],
    },
    holds=combine(decide(*log_gap[F], above=0.0, z=z_small_F) for F in Fs[small_F]),
    criterion=f"at every F ≤ d, the mean over paired draws of log(error trig / error positive) ± {z_small_F:.2f} s.e. "
    "(Student-t, Bonferroni over F) above 0; fails if any is wholly below 0, else inconclusive",
    meaningful_at="standard",
    reduced=run.reduced(f"{S['att_seeds']} draws, L = {L_att}", "att_seeds", "att_L"),
    note=f"σ = {sigma_qk}, L = {L_att}, d = {d_att}; the worst draws are shown for the instability",
)
rec.record(
    "attention_positive_beats_trig_every_F",
    "Positive features approximate attention better than trig at every F tested (paired draws)",
    paper="positive RFs approximate attention better than trig RFs (Performer §2.3)",
    ours={
        "F": Fs,
        "positive_iid_worst": worst_err["positive, iid"],
        "trig_iid_worst": worst_err["trig, iid"],
        "positive_iid_median": median_err["positive, iid"],
        "trig_iid_median": median_err["trig, iid"],
    },
    holds=combine(decide(*log_gap[F], above=0.0, z=z_every_F) for F in Fs),
    criterion=f"at every F, the mean over paired draws of log(error trig / error positive) ± {z_every_F:.2f} s.e. "
    "(Student-t, Bonferroni over F) above 0; fails if any is wholly below 0, else inconclusive",
    meaningful_at="standard",
    expected="fails",
    because="with the small logits we chose (σ = 0.5) trig becomes the more accurate map once F ≫ d: positive "
    "features win only with few features (the previous claim)",
    reduced=run.reduced(f"{S['att_seeds']} draws, F ≤ {Fs[-1]}", "att_seeds", "att_F"),
    note="with small logits (σ = 0.5) trig catches up once F is large; see the figure",
)

# %% [markdown]
# The Monte Carlo rate $F^{-1/2}$ is asymptotic: with few features the relative error is of order one and
# saturates, so the slope is fitted where $F \ge 2d$ — at least two whole orthogonal blocks, a window fixed before
# looking — per draw, and averaged over draws with its standard error (the full-range slope is reported alongside). Orthogonal
# projections help positive features only within a block ($F \le d$, Performer Thm 2); the ratio is pooled over
# those $F$ as a geometric mean over draws, with a ±2 standard-error band.

# %%
RATE_WINDOW = 2 * d_att  # F ≥ 2d: at least two complete orthogonal blocks, fixed before any error is seen
slope, slope_se = simulation.slope_over_draws(Fs, att_err["positive, orthogonal"], x_min=RATE_WINDOW)
slope_all = simulation.loglog_slope(Fs, median_err["positive, orthogonal"])
orf_ratio, orf_band = simulation.paired_log_ratio(
    att_err["positive, orthogonal"][small_F], att_err["positive, iid"][small_F]
)
print(f"slope (positive, orthogonal): {slope:.3f} ± {slope_se:.3f} for F ≥ {RATE_WINDOW}, {slope_all:.3f} over all F")
print(f"error ratio ORF/iid (positive, F ≤ d): {orf_ratio:.3f} (log ±2 s.e. {orf_band:.3f})")
rec.record_estimate(
    "attention_error_rate",
    "The attention error of orthogonal positive features falls like F^{-1/2} once F ≥ 2d (slope within ±0.05)",
    paper=-0.5,
    estimate=slope,
    se=slope_se,
    within=(-0.55, -0.45),
    quantity="mean log-log slope over draws (F ≥ 2d)",
    extra={"slope of the median, all F": slope_all},
    meaningful_at="standard",
    reduced=run.reduced(f"F ≤ {Fs[-1]}, L = {L_att}", "att_F", "att_L"),
    expected="fails",
    because="over 2d ≤ F ≤ L = 1 024 the slope is −0.40 ± 0.01, shallower than −1/2; the rate is asymptotic, and we "
    "have not identified what slows the decay over this range",
    note="the rate is asymptotic; the window F ≥ 2d is fixed in advance",
)
rec.record_estimate(  # the mean log error ratio over paired draws (same queries, keys and seed); orf_band is 2 s.e.
    "attention_orf_vs_iid",
    "Orthogonal projections lower the attention error of positive features (F ≤ d): mean log error ratio below 0",
    paper="ORF improves FAVOR+ (Performer §2.4, Thm 2)",
    estimate=float(np.log(orf_ratio)),
    se=orf_band / 2,
    below=0.0,
    quantity="mean log error ratio ORF / iid",
    extra={"geometric-mean ratio": orf_ratio},
    meaningful_at="standard",
    # documented from the runs: 30 draws (standard) cannot resolve the gain, the paper scale's 100 at L = 4 096 do
    expected="holds" if scale == "paper" else "inconclusive",
    because="the paper scale's 100 draws at L = 4 096 resolve it: −0.030 ± 0.009 in log ratio, 3.2 s.e. below 0 "
    "(the committed paper-scale run, 2026-11-27)"
    if scale == "paper"
    else "the gain orthogonality gives each kernel entry (Performer Thm 2) is too small at the attention level to "
    "resolve with 30 draws: −0.029 ± 0.027 in log ratio",
)

# %% [markdown]
# ## 5 · Every estimator family in one loop
#
# All four papers' estimators speak one interface (`rflib.features.base.Estimator`): a query-side map $\Psi_1$ and a
# key-side map $\Psi_2$ with the randomness frozen, so that $\hat K(x, y) = \Psi_1(x)^\top\Psi_2(y)$; `estimate(X, Y)`
# gives every pair, and attention takes any of them. Their projections come from one sampler,
# `projections.sample(law, key, m, d)`. Below, every family is built with 64 features per point on the same queries
# and keys ($d = 16$, $\|x\| \approx 1.2$): the relative Frobenius error of the kernel matrix it estimates (the
# softmax kernel, or the angular kernel $1 - 2\theta/\pi$ for the PNG sign features of KAMA-NNs) and of softmax
# attention. Mean ± standard error over independent draws; FAVOR#'s SDERF is fitted to these $X, Y$.

# %%
d_f, n_f, F_f = 16, 256, 64
X_f = 0.3 * jax.random.normal(keys("families", "queries"), (n_f, d_f))
Y_f = 0.3 * jax.random.normal(keys("families", "keys"), (n_f, d_f))
V_f = jax.random.normal(keys("families", "values"), (n_f, 4))
# families.every_family builds the eight estimators from one draw of orthogonal, Givens, trig and sign rows;
# family_errors draws them S["family_draws"] times: name → (kernel matrix error, attention error) per draw.
errors = families.family_errors(
    lambda kind, draw: keys("families", kind, draw), X_f, Y_f, V_f, S["family_draws"], features=F_f
)


def mean_se(values):
    values = np.asarray(values)
    if np.all(np.isnan(values)):
        return "—"
    return f"{values.mean():.3f} ± {values.std(ddof=1) / np.sqrt(values.size):.3f}"


display(
    Markdown(
        markdown_table(
            ["estimator", "kernel matrix error", "attention error"],
            [[name, mean_se([e[0] for e in errs]), mean_se([e[1] for e in errs])] for name, errs in errors.items()],
        )
    )
)

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of HRF that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "hrf:Definition 2.1",
        "implemented",
        "rflib.features (Estimator/Features; trig, positive, hyperbolic maps of eqs 2–3) realises eqs 4–6; unbiasedness checked by quadrature in tests and notebook 00.",
    ),
    (
        "hrf:Lemma 2.2",
        "checked exactly",
        "Closed forms (rflib.moments.classic) vs Gauss–Hermite quadrature over span{x,y}, rtol 1e-10 (deviation 5e-15); seeded Monte Carlo within 5σ as a second check.",
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
# * The closed-form curves are exact at every scale; only Monte Carlo sample sizes and grid resolutions change with
#   `scale` (quick: CI smoke test in well under a minute; standard: the default `make`; paper: larger samples).
# * The attention study uses synthetic Gaussian queries/keys/values rather than a trained model: its purpose here
#   is the dependence on $F$ and the feature family; the HRF and FAVOR# notebooks use real token representations.
# * Monte Carlo estimates of the *positive* estimator's MSE are heavy-tailed (the single-feature relative variance is
#   $e^{\|z\|^2}-1$); at large $\|z\|$ a finite sample typically under-estimates it, so conclusions
#   about the maximum error are based on the closed forms, with Monte Carlo used as a check where its $5\sigma$
#   band, derived from the exact fourth moment, is informative.
