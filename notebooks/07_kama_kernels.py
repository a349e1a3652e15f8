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
# `rflib.moments.png` (exact kernels, quadrature), `rflib.projections.sample` (the four laws).

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from scipy import stats
from tqdm.auto import tqdm

from benchmarks import kama_rotations
from rflib import kama, kernels, projections
from rflib.experiments import datasets, simulation
from rflib.features import png
from rflib.moments import png as png_moments
from rflib.notebook import plotting
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
        fig2_draws=100,
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


mse_and_se = simulation.error_summary  # (MSE, its s.e., mean error, its s.e.) over independent draws


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
ks = np.array([kama.rotations_for(int(d)) for d in d_grid])
flop_ratio = 6 * ks / (2 * d_grid**2)
storage_ratio = (3 * ks + d_grid) / d_grid**2
flop_cross = int(d_grid[np.argmax(flop_ratio < 1)])
storage_cross = int(d_grid[np.argmax(storage_ratio < 1)])
assert np.all(flop_ratio[d_grid >= flop_cross] < 1) and np.all(storage_ratio[d_grid >= storage_cross] < 1)
print(f"KAMA (k = 5 d ln d) uses fewer flops than dense from d = {flop_cross}, less storage from d = {storage_cross}")

# Wall clock, float32, jitted, compile excluded: batch 1 and 256. The suite `make bench` runs (benchmarks/
# kama_rotations.py) checks each fast path against the materialised matrix for d ≤ 512 before timing it.
bench_rows = kama_rotations.run(dims=S["time_dims"], batches=(1, 256), repeats=S["time_repeats"])
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
fig.suptitle(
    f"KAMA-NNs §2/§4 cost claims ({scale} scale): exact counts, and wall time on this CPU (median of "
    f"{S['time_repeats']}; JAX, jitted)",
    fontsize=10,
)
fig.tight_layout()
plotting.savefig("kama_cost_crossover", fig)
plt.show()

columns = [(n, b) for b in (1, 256) for n in ("dense", "kama", "layers")]
time_rows = [[d, kama.rotations_for(d), *(f"{1e3 * timings[n, d, b]:.3g}" for n, b in columns)] for d in S["time_dims"]]
display(Markdown(markdown_table(["d", "k", *(f"{n} (batch {b}) ms" for n, b in columns)], time_rows)))


def wins_from(name, batch):
    """The smallest measured d from which ``name`` beats dense at every larger measured d (one noisy point cannot
    make a win), or None."""
    dims = S["time_dims"]
    wins = [timings[name, d, batch] < timings["dense", d, batch] for d in dims]
    return next((dims[i] for i in range(len(dims)) if all(wins[i:])), None)


rec.record(
    "kama_flops_and_storage_crossover",
    "KAMA layers with k = 5 d ln d rotations need fewer flops and less storage than dense layers",
    paper="O(d log d) vs O(d²) (§2, §4); the paper's kernel datasets have d ≤ 86",
    ours={"fewer flops from d": flop_cross, "less storage from d": storage_cross},
    holds="scaled",
    note="true only from d ≈ 62–64; at boston's d = 13, KAMA needs 1 002 flops vs 338 dense",
)
wall = {f"{n}, batch {b}": wins_from(n, b) for n in ("kama", "layers") for b in (1, 256)}
rec.record(
    "kama_faster_wall_clock",
    "Applying a random KAMA matrix is faster than a dense matmul (wall clock, the d from which it wins for good)",
    paper="KAMA 'outperforms other orthogonal transforms speed-wise' (Fig 2; no timings given)",
    ours=wall,
    holds="scaled" if any(v is not None for v in wall.values()) else False,
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
rows = []
for name in ("sgn", "heaviside", "relu", "identity", "square", "he2", "cos", "sin", "erf", "exp", "tanh"):
    quad = png_moments.kernel_by_quadrature(name, x_demo, y_demo)
    closed = png_moments.kernel(name, x_demo, y_demo) if name != "tanh" else float("nan")
    rows.append([name, f"{closed:.12g}", f"{quad:.12g}", f"{abs(closed - quad):.1e}"])
display(Markdown(markdown_table(["f", "closed form", "quadrature", "difference"], rows)))
worst = max(
    abs(png_moments.kernel(n, x_demo, y_demo) - png_moments.kernel_by_quadrature(n, x_demo, y_demo))
    for n in ("sgn", "heaviside", "relu", "identity", "square", "he2", "cos", "sin", "erf", "exp")
)
rec.record(
    "png_closed_forms",
    "The PNG kernels' closed forms (Definition 2) agree with exact quadrature",
    ours={"max abs difference": worst},
    holds=worst < 1e-10,
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
ratio_sim = {}
for d in tqdm(S["dims"], desc="Theorem 1, angular"):
    draws = {
        m: projections.sample(png.LAWS[m], keys("theorem 1 draws", d, m), d, d, draws=S["draws"])
        for m in ("urn", "orn", "kama")
    }
    for theta in thetas:
        x, y = kernels.pair_at_angle(theta, d=d)  # x = e₁: where a poorly mixed Kac walk shows
        law = png_moments.gain_law("sgn", x, y)
        for method, W in draws.items():
            sq, se, *_ = mse_and_se(png.estimates("sgn", W, x, y), law.kernel)
            ratio_sim[method, d, theta] = (sq / law.mse_iid(d), se / law.mse_iid(d))
        ratio_sim["law", d, theta] = (law.mse_orthogonal(d, d) / law.mse_iid(d), 0.0)
        ratio_sim["slack", d, theta] = (0.5 / d**2 / law.mse_iid(d), 0.0)  # O(d⁻²) terms, in units of MSE_URN

theta_fine = np.linspace(0.01, np.pi - 0.01, 200)
fig, axes = plt.subplots(1, len(S["dims"]), figsize=(4.6 * len(S["dims"]), 3.8), sharey=True)
for ax, d in zip(np.atleast_1d(axes), S["dims"], strict=True):
    K = 1 - 2 * theta_fine / np.pi
    ax.plot(
        theta_fine,
        1 - (d - 1) / d * (4 * np.sin(theta_fine) ** 2 / np.pi**2) / (1 - K**2),
        "k-",
        lw=1,
        label="first-order law",
    )
    for i, method in enumerate(("urn", "orn", "kama")):
        vals = np.array([ratio_sim[method, d, t] for t in thetas])
        ax.errorbar(
            thetas + 0.02 * (i - 1),
            vals[:, 0],
            yerr=2 * vals[:, 1],
            fmt="o",
            ms=4,
            capsize=2,
            color=plotting.PALETTE[i],
            label=METHOD_LABEL[method],
        )
    ax.axhline(1, color="k", ls=":", lw=0.8)
    ax.set(xlabel="angle θ between x and y (rad)", title=f"d = m = {d}, axis-aligned x, y")
np.atleast_1d(axes)[0].set_ylabel("MSE / MSE_URN (exact)")
np.atleast_1d(axes)[0].legend(fontsize=8)
fig.suptitle(f"Theorem 1/2, angular kernel ({scale} scale): {S['draws']:,} draws per point, ±2 s.e.", fontsize=10)
fig.tight_layout()
plotting.savefig("kama_theorem1_angular", fig)
plt.show()

law_z = {
    (d, round(float(t), 3)): (abs(ratio_sim["orn", d, t][0] - ratio_sim["law", d, t][0]) - ratio_sim["slack", d, t][0])
    / ratio_sim["orn", d, t][1]
    for d in S["dims"]
    for t in thetas
}
worst_z = max(law_z.values())
print("worst (d, θ):", max(law_z, key=law_z.get), f"{worst_z:.2f} s.e. beyond the 0.5/d² slack")
rec.record(
    "theorem1_angular_law",
    "For the angular kernel, ORN's MSE matches the first-order law 1 − (d−1)/d · 4 sin²θ/π² / (1 − K²) × MSE_URN",
    paper="Theorem 1: MSE_ORN ≤ MSE_URN − K(ε)/d (no constant)",
    ours={"worst deviation beyond a 0.5/d² slack, in standard errors": worst_z},
    holds=worst_z < 4,
    note="axis-aligned x, y; the constant the theorem leaves open is 4 sin²θ/π² (d−1)/d² here",
)

# %% [markdown]
# **Other activations** ($d = 32$, $\theta = \pi/3$, unit vectors): measured gap $\mathrm{MSE_{URN}} -
# \mathrm{MSE_{ORN}}$ against the law's $(d-1)\|H\|^2/(2d^2)$. For growing $f$ ($u^2$) the higher-order terms are
# large and the law overshoots.

# %%
d = 32
x, y = kernels.pair_at_angle(np.pi / 3, d=d)
W_urn = projections.sample("iid", keys("other activations", "urn"), d, d, draws=S["draws"])
W_orn = projections.sample("orthogonal", keys("other activations", "orn"), d, d, draws=S["draws"])
gain_rows, gain_ok = [], {}
for name in ("relu", "tanh", "cos", "erf", "identity", "square"):
    law = png_moments.gain_law(name, x, y)
    urn, urn_se, *_ = mse_and_se(png.estimates(name, W_urn, x, y), law.kernel)
    orn, orn_se, *_ = mse_and_se(png.estimates(name, W_orn, x, y), law.kernel)
    gap, gap_se = urn - orn, math.hypot(urn_se, orn_se)
    predicted = (d - 1) * law.h_norm_sq / (2 * d * d)
    gain_ok[name] = abs(gap - predicted) < max(4 * gap_se, 0.15 * predicted)
    gain_rows.append(
        [name, f"{law.kernel:.4f}", f"{urn:.5f}", f"{orn:.5f}", f"{gap:.5f} ± {2 * gap_se:.5f}", f"{predicted:.5f}"]
    )
display(Markdown(markdown_table(["f", "K", "MSE URN", "MSE ORN", "gap (±2 s.e.)", "predicted gap"], gain_rows)))
smooth = [n for n in gain_ok if n != "square"]
rec.record(
    "gain_law_other_activations",
    "The first-order gain law predicts the ORN gain for ReLU, tanh, cos, erf and identity (within 4 s.e. or 15 %)",
    ours={n: bool(v) for n, v in gain_ok.items()},
    holds=all(gain_ok[n] for n in smooth),
    note="our derivation (notes §3.3); u² is shown as the case where second-order terms matter",
)

# %% [markdown]
# **Theorem 1 as printed is false.** (i) For $x \parallel y$ and $f = \mathrm{sgn}$ every estimator is exact, so
# both MSEs are 0 and "$\le \mathrm{MSE_{URN}} - K(\varepsilon)/d$" would need a negative MSE. (ii) For
# $f(u) = u^2 - 1$ and $x \perp y$, $H = 0$: the first-order gain vanishes and the second-order covariance of two
# orthogonal rows is *positive*, so ORN (and KAMA) are **worse** than URN. The covariance $c$ below is a direct
# Monte Carlo estimate over pairs of orthogonal rows; $\mathrm{MSE_{ORN}} - \mathrm{MSE_{URN}} = (d-1)c/m$.

# %%
he2_rows, he2_cov = [], {}
for d in tqdm(S["he2_dims"], desc="He₂ covariance"):
    x, y = kernels.pair_at_angle(np.pi / 2, d=d)
    cov, se = png_moments.orthogonal_pair_covariance("he2", keys("he2 covariance", d), x, y, S["he2_pairs"])
    he2_cov[d] = (cov, se)
    h_norm_sq = png_moments.gain_law("he2", x, y).h_norm_sq
    he2_rows.append([d, f"{h_norm_sq:.1e}", f"{cov:.4f} ± {2 * se:.4f}", f"{cov / se:.1f}"])
display(Markdown(markdown_table(["d", "‖H‖²", "covariance c (±2 s.e.)", "c / s.e."], he2_rows)))
x_par = np.ones(16) / 4
par_key = keys("parallel inputs")
par_mse = {
    m: float(
        np.mean(
            (
                np.asarray(
                    png.estimates("sgn", projections.sample(png.LAWS[m], par_key, 16, 16, draws=50), x_par, 2 * x_par)
                )
                - 1
            )
            ** 2
        )
    )
    for m in ("urn", "orn", "kama")
}
rec.record(
    "theorem1_as_printed",
    "Theorem 1 holds for every f and every x, y away from 0 (MSE_ORN ≤ MSE_URN − K(ε)/d)",
    paper="Theorem 1 (and Theorem 2 for KAMA)",
    ours={"He₂, x ⊥ y: c/s.e. at d = 8": he2_cov[8][0] / he2_cov[8][1], "sgn, x ∥ y: MSEs": par_mse},
    holds=not (he2_cov[8][0] > 5 * he2_cov[8][1]),
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
x_axis, y_axis = kernels.pair_at_angle(np.pi / 6, d=d)
Q, _ = np.linalg.qr(keys.rng("k sweep dense pair").normal(size=(d, 2)))
x_rand, y_rand = Q[:, 0], math.cos(np.pi / 6) * Q[:, 0] + math.sin(np.pi / 6) * Q[:, 1]
K_sweep = png_moments.kernel("sgn", x_axis, y_axis)
urn_ref = 1 - K_sweep**2
orn_W = projections.sample("orthogonal", keys("k sweep", "orn"), d, d, draws=S["draws"])
orn_ref = mse_and_se(png.estimates("sgn", orn_W, x_axis, y_axis), K_sweep)
sweep = {}
for c in tqdm(S["sweep"], desc="k sweep"):
    k = max(1, round(c * d * math.log(d)))
    W = projections.sample("givens", keys("k sweep", "kama", k), d, d, draws=S["draws"], rotations=k)
    sweep[c] = {
        "k": k,
        "axis": mse_and_se(png.estimates("sgn", W, x_axis, y_axis), K_sweep),
        "random": mse_and_se(png.estimates("sgn", W, x_rand, y_rand), K_sweep),
        "untouched": d * (1 - 2 / d) ** k,
        "fourth": float(np.mean((np.asarray(W[:, 0, 0]) / np.linalg.norm(np.asarray(W[:, 0]), axis=-1)) ** 4)),
    }

fig, axes = plt.subplots(1, 3, figsize=(15, 3.8))
cs = np.array(S["sweep"])
for key_name, label, colour in (("axis", "axis-aligned x, y", 0), ("random", "random dense x, y", 1)):
    axes[0].errorbar(
        cs,
        [sweep[c][key_name][0] for c in cs],
        yerr=[2 * sweep[c][key_name][1] for c in cs],
        fmt="o-",
        color=plotting.PALETTE[colour],
        label=f"KAMA, {label}",
        capsize=2,
    )
    axes[1].errorbar(
        cs,
        [sweep[c][key_name][2] for c in cs],
        yerr=[2 * sweep[c][key_name][3] for c in cs],
        fmt="o-",
        color=plotting.PALETTE[colour],
        label=label,
        capsize=2,
    )
axes[0].axhline(urn_ref / d, color="k", ls="--", lw=1, label="URN (exact)")
axes[0].axhline(orn_ref[0], color=plotting.PALETTE[2], ls=":", lw=1.5, label="ORN")
axes[0].set(
    xscale="log",
    yscale="log",
    xlabel="k / (d ln d)",
    ylabel="MSE of the angular estimator",
    title=f"d = m = {d}, θ = π/6",
)
axes[0].legend(fontsize=8)
axes[1].axhline(0, color="k", lw=0.8)
axes[1].set(xscale="log", xlabel="k / (d ln d)", ylabel="bias (mean error)", title="KAMA is biased for small k")
axes[1].legend(fontsize=8)
axes[2].semilogx(cs, [sweep[c]["untouched"] for c in cs], "o-", label="untouched coordinates d(1 − 2/d)^k")
axes[2].semilogx(
    cs, [sweep[c]["fourth"] * d * (d + 2) / 3 for c in cs], "s-", label="E[(Me₀)₀⁴] / Haar value 3/(d(d+2))"
)
axes[2].axhline(1, color="k", ls=":", lw=0.8)
axes[2].axvline(0.5, color="k", ls="--", lw=0.8)
axes[2].set(
    yscale="log",
    xlabel="k / (d ln d)",
    ylabel="ratio to the Haar value (unitless)",
    title="mixing diagnostics (dashed: coupon collector, C = 1)",
)
axes[2].legend(fontsize=8)
fig.suptitle(f"Theorem 2 and the k needed ({scale} scale, {S['draws']:,} draws per point, ±2 s.e.)", fontsize=10)
fig.tight_layout()
plotting.savefig("kama_k_sweep", fig)
plt.show()

c_paper = max(S["sweep"])
paper_k = sweep[c_paper]
rec.record(
    "theorem2_kama_matches_orn",
    "KAMA with k = 5 d ln d rotations is unbiased within noise and matches ORN on axis-aligned inputs",
    paper="Theorem 2 (k = L(ε) d log d); experiments use k = 5 d log d",
    ours={
        "bias / s.e.": paper_k["axis"][2] / paper_k["axis"][3],
        "MSE KAMA": paper_k["axis"][0],
        "MSE ORN": orn_ref[0],
    },
    holds=abs(paper_k["axis"][2]) < 4 * paper_k["axis"][3]
    and abs(paper_k["axis"][0] - orn_ref[0]) < 4 * math.hypot(paper_k["axis"][1], orn_ref[1]),
)
small = [c for c in S["sweep"] if c <= 1.0]
rec.record(
    "kama_finite_k_bias",
    "KAMA is biased when k ≤ d ln d (axis-aligned inputs): the bias exceeds 5 standard errors",
    paper="not discussed",
    ours={f"k = {sweep[c]['k']}": sweep[c]["axis"][2] for c in small},
    holds=all(abs(sweep[c]["axis"][2]) > 5 * sweep[c]["axis"][3] for c in small),
    note="random dense inputs hide it (see the middle panel)",
)

# %% [markdown]
# ## 5 · Fig 1: pointwise MSE of the angular kernel on real data
#
# The paper names boston and wine and nothing else (pairs, repetitions, x-axis, preprocessing). Our protocol
# (notes §4.1): features z-scored per column; `pairs` random pairs of distinct points with a fixed seed;
# $m = b\,d$ rows in $b$ independent blocks; `fig1_draws` independent matrices per (method, $b$); MSE averaged over
# pairs. boston is ISLP's 506 × 12; wine is scikit-learn's 178 × 13 (the paper's wine, with ≥ 550 points, is
# probably UCI wine-quality, which has no offline copy).


# %%
zscore = datasets.zscore_rows  # column z-scores; rows that become exactly zero are dropped


FIG1_LOADERS = {"boston": datasets.load_boston, "wine*": datasets.load_wine}
FIG1_SETS = {name: zscore(FIG1_LOADERS[name]()) for name in S["fig1_sets"]}
fig1 = {}
for name, X in FIG1_SETS.items():
    n, d = X.shape
    pair_rng = keys.rng("fig 1 pairs", name)
    i = pair_rng.choice(n, size=S["pairs"])
    j = (i + pair_rng.integers(1, n, size=S["pairs"])) % n
    K_pairs = np.array([png_moments.kernel("sgn", X[a], X[b]) for a, b in zip(i, j, strict=True)])
    for b in tqdm(S["blocks"], desc=f"Fig 1, {name}"):
        for method in png.LAWS:
            W = projections.sample(
                png.LAWS[method], keys("fig 1 draws", name, b, method), b * d, d, draws=S["fig1_draws"]
            )
            est = np.asarray(png.pair_estimates("sgn", W, X[i], X[j]))
            sq = (est - K_pairs) ** 2
            per_draw = sq.mean(1)
            fig1[name, b, method] = (per_draw.mean(), per_draw.std() / math.sqrt(len(per_draw)))

fig, axes = plt.subplots(1, len(FIG1_SETS), figsize=(5.5 * len(FIG1_SETS), 3.8), squeeze=False)
for ax, name in zip(axes[0], FIG1_SETS, strict=True):
    for mi, method in enumerate(png.LAWS):
        vals = np.array([fig1[name, b, method] for b in S["blocks"]])
        ax.errorbar(
            S["blocks"],
            vals[:, 0],
            yerr=2 * vals[:, 1],
            fmt="o-",
            color=plotting.PALETTE[mi],
            label=METHOD_LABEL[method],
            capsize=2,
            ms=4,
        )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="blocks b (m = b·d rows)",
        ylabel="mean pointwise MSE",
        title=f"{name}: d = {FIG1_SETS[name].shape[1]}, {S['pairs']} pairs",
    )
    ax.set_xticks(S["blocks"], [str(b) for b in S["blocks"]], minor=False)
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.legend(fontsize=8)
fig.suptitle(
    f"Fig 1 ({scale} scale): angular kernel, {S['fig1_draws']:,} draws per point, ±2 s.e.; * = offline stand-in",
    fontsize=10,
)
fig.tight_layout()
plotting.savefig("kama_fig1_pointwise", fig)
plt.show()

fig1_ratio = {
    f"{name}, {method}": float(np.mean([fig1[name, b, method][0] / fig1[name, b, "urn"][0] for b in S["blocks"]]))
    for name in FIG1_SETS
    for method in ("orn", "kama", "horn")
}
display(Markdown("**Mean MSE ratio to URN over b:** " + ", ".join(f"{k}: {v:.3f}" for k, v in fig1_ratio.items())))
rec.record(
    "fig1_pointwise_gains",
    "Pointwise, KAMA, ORN and HORN give moderate MSE gains over URN on boston and wine",
    paper="Fig 1: 'moderate accuracy gains', KAMA ≈ ORN (no numbers)",
    ours=fig1_ratio,
    holds="scaled" if all(v < 1 for v in fig1_ratio.values()) else False,
    note="mean over b of MSE / MSE_URN; wine is scikit-learn's 178-point set, a stand-in",
)

# %% [markdown]
# ## 6 · Fig 2: Frobenius error of the angular kernel matrix
#
# $\varepsilon = \|K(X) - \hat K(X)\|_F / \|K(X)\|_F$ (the printed denominator $\|K(\hat X)\|_F$ is a typo) on
# $N = \min(550, n)$ random points, averaged over independent draws. Datasets: **g50c** re-synthesised
# (Chapelle & Zien: two unit Gaussians, Bayes error 5 %, d = 50), **boston** (ISLP), **insurance** = COIL 2000
# `Caravan` (ISLP, d = 85), and stand-ins marked * for sets with no offline copy: **cpu\*** = scikit-learn diabetes
# (d = 10), **wine\*** = scikit-learn wine (178 points), **parkinson\*** = breast cancer (d = 30). Features z-scored.

# %%
LOADERS = {
    "g50c": lambda: datasets.make_g50c(seed)[0],
    "boston": datasets.load_boston,
    "cpu*": datasets.load_diabetes,
    "insurance": datasets.load_caravan,
    "wine*": datasets.load_wine,
    "parkinson*": datasets.load_breast_cancer,
}
fig2 = {}
for name in tqdm(S["fig2_sets"], desc="Fig 2 datasets"):
    X = zscore(LOADERS[name]())
    X = X[keys.rng("fig 2 points", name).permutation(len(X))[: S["fig2_points"]]]
    n, d = X.shape
    K_exact = png_moments.gram("sgn", X)
    for b in S["blocks"]:
        for method in png.LAWS:
            W = projections.sample(
                png.LAWS[method], keys("fig 2 draws", name, b, method), b * d, d, draws=S["fig2_draws"]
            )
            errs = simulation.gram_errors("sgn", W, X, K_exact)
            fig2[name, b, method] = (errs.mean(), errs.std() / math.sqrt(len(errs)), n, d)

sets = list(S["fig2_sets"])
ncol = min(3, len(sets))
fig, axes = plt.subplots(
    math.ceil(len(sets) / ncol), ncol, figsize=(5 * ncol, 3.6 * math.ceil(len(sets) / ncol)), squeeze=False
)
for ax, name in zip(axes.flat, sets, strict=False):
    for mi, method in enumerate(png.LAWS):
        vals = np.array([fig2[name, b, method][:2] for b in S["blocks"]])
        ax.errorbar(
            S["blocks"],
            vals[:, 0],
            yerr=2 * vals[:, 1],
            fmt="o-",
            color=plotting.PALETTE[mi],
            label=METHOD_LABEL[method],
            capsize=2,
            ms=4,
        )
    _, _, n, d = fig2[name, S["blocks"][0], "urn"]
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="blocks b (m = b·d rows)",
        ylabel="‖K − K̂‖_F / ‖K‖_F",
        title=f"{name}: N = {n}, d = {d}",
    )
    ax.set_xticks(S["blocks"], [str(b) for b in S["blocks"]], minor=False)
    ax.xaxis.set_minor_locator(plt.NullLocator())
for ax in list(axes.flat)[len(sets) :]:
    ax.axis("off")
axes.flat[0].legend(fontsize=8)
fig.suptitle(
    f"Fig 2 ({scale} scale): angular kernel matrix, mean over {S['fig2_draws']} draws (paper: 1 000), "
    "±2 s.e.; * = offline stand-in",
    fontsize=10,
)
fig.tight_layout()
plotting.savefig("kama_fig2_frobenius", fig)
plt.show()

fig2_ratio = {
    f"{name}, {method}": float(np.mean([fig2[name, b, method][0] / fig2[name, b, "urn"][0] for b in S["blocks"]]))
    for name in sets
    for method in ("orn", "kama", "horn")
}
display(Markdown("**Mean error ratio to URN over b:** " + ", ".join(f"{k}: {v:.3f}" for k, v in fig2_ratio.items())))
kama_vs_orn = max(
    abs(fig2[name, b, "kama"][0] - fig2[name, b, "orn"][0]) / fig2[name, b, "orn"][0]
    for name in sets
    for b in S["blocks"]
)
rec.record(
    "fig2_orthogonal_beat_urn",
    "Every orthogonal mechanism (ORN, KAMA, HORN) has a lower kernel-matrix error than URN on every dataset",
    paper="Fig 2: 'almost identical curves substantially better than for the URN mechanism'",
    ours=fig2_ratio,
    holds="scaled" if all(v < 1 for v in fig2_ratio.values()) else False,
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
        note="like is compared with like: ε² is a sum of squared pointwise errors, so (ε_KAMA/ε_URN)² is the "
        "matrix analogue of the MSE ratio; Fig 2 plots ε, not ε², which makes the same gain look smaller, not larger",
    )
rec.record(
    "fig2_kama_equals_orn",
    "KAMA's kernel-matrix error is within 5 % of ORN's at every dataset and b",
    paper="Fig 2: 'almost identical curves'",
    ours={"largest relative difference": kama_vs_orn},
    holds="scaled" if kama_vs_orn < 0.05 else False,
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
descent = {}
for d in S["descent_dims"]:
    T = stats.special_ortho_group.rvs(d, random_state=keys.rng("theorem 3 target", d))
    M = np.eye(d)
    values, slack = [kama.procrustes_objective(M, T)], []
    for _ in range(S["descent_steps"]):
        step = kama.procrustes_descent_step(M, T)
        slack.append(step.decrease - kama.theorem_3_bound(step.grad_norm_sq, d, 4.0))
        M = step.M
        values.append(kama.procrustes_objective(M, T))
    descent[d] = (np.array(values), min(slack), np.abs(M @ M.T - np.eye(d)).max())

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
plotting.savefig("kama_theorem3_descent", fig)
plt.show()
rec.record(
    "theorem3_decrease_bound",
    "Every step of Algorithm 1 decreases F by at least ‖∇F‖² / (2d(d−1)B), and iterates stay in SO(d)",
    paper="Theorem 3",
    ours={
        f"d = {d}": {"min slack": v[1], "orthogonality drift": v[2], "final F": float(v[0][-1])}
        for d, v in descent.items()
    },
    holds=all(v[1] >= -1e-12 and v[2] < 1e-12 for v in descent.values()),
    note="F(M) = ‖M − T‖²_F with B = 4; the paper's 'converges to a stationary point' is only ‖∇F(M_t)‖ → 0",
)
rec.finish()  # every cell ran: mark the results file complete
display(Markdown(rec.table()))

# %% [markdown]
# ### What was scaled down, and why
#
# * **Datasets.** None of the paper's sources is reachable offline. g50c is re-synthesised to its published recipe;
#   boston and insurance (COIL 2000 = ISLP `Caravan`) come from the ISLP wheel; cpu, wine and parkinson are
#   replaced by scikit-learn sets of similar size and dimension (marked *). Features are z-scored; the paper does not
#   say what it did.
# * **Repetitions.** Fig 2 averages `fig2_draws` draws (100 at standard scale, the paper's 1 000 at `make paper`);
#   Fig 1's protocol (pairs, draws, x-axis) is ours because the paper states none.
# * **Speed.** The wall-clock panel is JAX on this 2-core CPU. The paper's law applies one rotation per scan step,
#   which is latency-bound here; a compiled scalar loop (the notes measured numba) or the disjoint-layer variant is
#   needed for the O(k) advantage to show, and only at large d.
# * **Quick scale** uses 600 draws, one dimension, one dataset per figure and one block count: a smoke test whose
#   verdicts are not meaningful.
