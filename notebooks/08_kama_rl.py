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
# # 08 · KAMA-NNs: compact RL policies (§6.2, Table 1, Figs 3–5)
#
# *Choromanski, Pacchiano, Pennington, Tang, "KAMA-NNs"*, AISTATS 2019, §6.2.
#
# **What the paper claims.** Policies whose three weight matrices (obs → 64 → 64 → act) are KAMA layers — $K = 200$
# Givens rotations per matrix with frozen random planes, learned angles, learned row scales — trained with PPO
# (OpenAI baselines; TRPO with 2 × 32 policies and $K = 100$) on MuJoCo tasks:
# 1. use about 15–17 % of the dense policy's parameters (Table 1; Toeplitz policies 7–8 %);
# 2. beat Toeplitz policies of similar size "across most tasks" and trail dense policies somewhat (Fig 3 with PPO,
#    Fig 4 with TRPO);
# 3. improve as $K$ grows, $K \in \{10, 20, 50, 100, 200\}$ (Fig 5).
#
# The text gives no reward numbers (only plots), no number of time steps (baselines' MuJoCo default is $10^6$), and
# no initialisation; TRPO (Fig 4) used some Roboschool "(R)" tasks that no longer install — we run TRPO on
# gymnasium's MuJoCo tasks instead.
#
# **Our setting.** PPO and TRPO re-implemented in JAX with baselines' MuJoCo hyperparameters
# (`rflib.experiments.rl`; PPO as `ppo1`: 2 048 steps per iteration, clip 0.2 and learning rate 3·10⁻⁴ decaying
# linearly, 10 epochs of minibatch 64, γ = 0.99, λ = 0.95; TRPO as `trpo_mpi`: 1 024 steps per iteration, max KL
# 0.01, 10 conjugate-gradient steps with damping 0.1, a halving line search, λ = 0.98, 5 value epochs at 10⁻³; both
# with running observation normalisation), the policies of `rflib.experiments.policies` (angles ~ U[0, 2π), scales
# 1, an orthogonal start; a separate dense value network), and gymnasium 1.4's MuJoCo v5 tasks (the real simulator,
# offline). The seeds of one (task, policy) are trained in lockstep in one process (their policies evaluated
# together and updated by one jitted JAX call per iteration, vectorised over the seeds for dense and Toeplitz
# policies), and the batches of all the notebook's studies are spread over all CPU cores (`rl.run_plans`, one
# process per core). Curves are the mean return of the episodes finished in each iteration,
# mean ± std over seeds.

# %% tags=["parameters"]
scale = "standard"  # one of "quick" (CI smoke test), "standard" (make), "paper" (make paper)
seed = 0

# %%

import math
import os
from functools import partial

import numpy as np
from IPython.display import Markdown, display
from scipy import stats

from rflib.experiments import policies, rl
from rflib.notebook import plotting
from rflib.notebook.results import (
    combine,
    decide,
    decide_smaller,
    decide_test,
    interval_z,
    majority,
    mean_and_se,
    mean_se_entry,
    samples_to_decide,
    sign_test,
)
from rflib.notebook.scaffold import markdown_table, start

SETTINGS = {
    # ppo_tasks / trpo_tasks: {env: (steps per run, seeds)}; ablation: (env, steps, seeds, K values) with PPO.
    "quick": dict(
        ppo_tasks={"InvertedPendulum-v5": (4_096, 2)},
        trpo_tasks={"InvertedPendulum-v5": (2_048, 2)},
        ablation=("InvertedPendulum-v5", 4_096, 1, (10, 200)),
        ablation_confirm=(0, ()),
        simulator_steps=300,
    ),
    "standard": dict(
        # TRPO's final scores vary up to 5-fold between seeds: 10 seeds (see the criteria below)
        ppo_tasks={"InvertedDoublePendulum-v5": (102_400, 5), "Hopper-v5": (204_800, 5)},
        trpo_tasks={"InvertedDoublePendulum-v5": (102_400, 10), "Hopper-v5": (102_400, 10)},
        # Fig 5: 102 400 steps × 5 seeds since 2026-12-07 (was 40 960 × 3, under which K ≤ 20 had barely started)
        ablation=("InvertedPendulum-v5", 102_400, 5, (10, 20, 50, 100, 200)),
        # (fresh seeds, K): the K that 5 seeds left undecided on 2026-12-07, decided on new runs (§3; declared before
        # those runs)
        ablation_confirm=(7, (20, 50)),
        simulator_steps=4_000,  # per task, for the cost projection of the paper's protocol (§2)
    ),
    "paper": dict(
        ppo_tasks={task: (1_000_000, 5) for task in rl.TASK_SIZES},
        trpo_tasks={task: (1_000_000, 5) for task in rl.TASK_SIZES},
        ablation=("Hopper-v5", 1_000_000, 5, (10, 20, 50, 100, 200)),
        ablation_confirm=(0, ()),  # which K 5 seeds of Hopper leave undecided is not known: none declared
        simulator_steps=4_000,
    ),
}
# rl.run_jobs's processes, one per core; the batches, so the results, do not depend on it. Quick scale trains in this
# process: there, spawning a JAX process per core costs more CPU than its runs (test_rl checks the pool gives the same)
WORKERS = 1 if scale == "quick" else (os.cpu_count() or 1)
run = start("08_kama_rl", scale, seed, SETTINGS)
S, keys, rec = run.settings, run.keys, run.recorder
LABEL = {"dense": "dense (2×64)", "kama": "KAMA (K = 200)", "toeplitz": "Toeplitz"}

# %% [markdown]
# ## 1 · Table 1: how many parameters?
#
# Trainable numbers of the policy's mean network: dense $d_{out}d_{in}$ weights, KAMA $K + \min(d_{out}, d_{in})$
# (angles and scales; the planes are drawn from a seed), Toeplitz $d_{out} + d_{in} - 1$, plus a dense bias per
# layer. PPO policies are 2×64 with $K = 200$, TRPO policies 2×32 with $K = 100$. A rectangular KAMA layer has
# min(d_out, d_in) scales as we build it; the paper does not say how it counted them, so the KAMA claim's reason
# also counts one scale per output and per input unit. The paper's TRPO row is lost in the
# text; its PPO row reads KAMA 15 / 15 / 17 %, Toeplitz 7 / 7 / 8 % (HalfCheetah / Walker / Hopper).

# %%
PAPER_TABLE1 = {"HalfCheetah-v5": (15, 7), "Walker2d-v5": (15, 7), "Hopper-v5": (17, 8)}
POLICIES = {"PPO": ((64, 64), 200), "TRPO": ((32, 32), 100)}  # hidden sizes, rotations K per matrix
# {(algorithm, task): {"dense": count, "kama": % of dense, "toeplitz": % of dense}}; sizes from gymnasium v5
table1 = policies.parameter_table(POLICIES, {env: rl.TASK_SIZES[env] for env in PAPER_TABLE1})
paper = {(algo, env): PAPER_TABLE1[env] if algo == "PPO" else ("—", "—") for algo, env in table1}
rows = [
    [algo, env, t["dense"], *map("{:.1f} % (paper {})".format, (t["kama"], t["toeplitz"]), paper[algo, env])]
    for (algo, env), t in table1.items()
]
display(Markdown(markdown_table(["algorithm", "task", "dense parameters", "KAMA / dense", "Toeplitz / dense"], rows)))
kama_readings = {  # the KAMA share (PPO) under the other readings of a rectangular layer's scales
    reading: [
        100
        * policies.parameter_count("kama", *rl.TASK_SIZES[env], *POLICIES["PPO"], kama_scales=reading)
        / table1["PPO", env]["dense"]
        for env in PAPER_TABLE1
    ]
    for reading in ("out", "in")
}
ppo_shares = {  # "a/b/c" %, HalfCheetah / Walker / Hopper, for the coverage table
    reading: "/".join(f"{share:.1f}" for share in shares)
    for reading, shares in {
        "toeplitz": [table1["PPO", env]["toeplitz"] for env in PAPER_TABLE1],
        "kama": [table1["PPO", env]["kama"] for env in PAPER_TABLE1],
        "kama, a scale per output unit": kama_readings["out"],
    }.items()
}
for column, (kind, paper_label) in enumerate((("kama", "KAMA"), ("toeplitz", "Toeplitz"))):
    rec.record(
        f"table1_{kind}_parameter_ratio",
        f"{paper_label} policies use the printed share of the dense policy's parameters (PPO: "
        f"{' / '.join(f'{p[column]} %' for p in PAPER_TABLE1.values())})",
        paper={env: p[column] for env, p in PAPER_TABLE1.items()},
        ours={env: round(table1["PPO", env][kind], 1) for env in PAPER_TABLE1},
        holds=all(abs(table1["PPO", env][kind] - p[column]) < 0.5 for env, p in PAPER_TABLE1.items()),
        criterion="exact count within 0.5 points of the printed integer percentage (its rounding) on every task",
        expected="fails" if kind == "kama" else "holds",
        because=f"our count gives a rectangular KAMA layer min(d_out, d_in) scales, as it is built; a scale per output "
        f"unit gives {' / '.join(f'{s:.1f}' for s in kama_readings['out'])} %, per input unit "
        f"{' / '.join(f'{s:.1f}' for s in kama_readings['in'])} % — the printed 15 / 15 / 17 % to their rounding — "
        "while the log-std adds < 0.1 point: the paper most likely counted one of those (it does not say)"
        if kind == "kama"
        else "",
    )

# %% [markdown]
# ## 2 · Fig 3 (PPO) and Fig 4 (TRPO): dense, KAMA and Toeplitz policies
#
# Each (algorithm, task, architecture, seed) is one run from scratch; the final score is the mean over the last
# quarter of the iterations of the per-iteration mean episode return. Run $s$ on a task has the same environment
# seed for every architecture. Criteria, fixed before the runs:
#
# - **learns**: per (task, architecture), the final score must exceed the **uniform random policy**'s mean return on
#   the task (measured separately: `rl.random_policy_returns`, 100 episodes, actions uniform on the action box) by
#   more than one standard deviation of a random episode's return — the margin at which a learned policy's score
#   stands out from a single random episode (`rl.learned_threshold`) — decided by the mean ± t·s.e. over seeds
#   (Student-t at the Bonferroni level over the cells; the threshold's bootstrap s.e. added in quadrature). We also
#   print each run's gain over its own first iteration. *Changed 2026-11-26, after review:* the baseline was each
#   run's own first-iteration return; that criterion held at standard scale (gains 490–982, the smallest 5.3 s.e.
#   above 0) but measured learning against an initial policy, not against a random one. *Also changed 2026-11-26,
#   in two steps:* (1) InvertedDoublePendulum joined InvertedPendulum and Hopper; TRPO on it with 5 seeds left
#   "learns" inconclusive (dense: 4.0 s.e. above the threshold against t = 5.44 for 5 seeds at the Bonferroni level
#   over 9 cells), so it drew 10 seeds (the first 5 are the same runs), each interval using its own task's number of
#   seeds; (2) that run left TRPO Hopper's dense policy at 5.1 s.e. against t = 5.44 (4.85 before the third task
#   widened the family). InvertedPendulum, which every policy drives to its 1 000-step cap and which therefore
#   cannot separate the architectures, left Figs 3/4 at standard scale (it stays in the K ablation, quick and paper
#   scale), and TRPO Hopper draws 10 seeds too. Every run of both steps scored far above the threshold; the changes
#   buy power, not a different criterion;
# - **KAMA beats Toeplitz on most tasks**, **KAMA approaches dense** (progress ratio ≥ 0.7): per task with t-intervals
#   over seeds at the Bonferroni level over the tasks (t = 3.50 for 5 seeds and 2.69 for 10 over two tasks), then
#   `majority` over tasks. *Changed 2026-11-26, after review:* these two claims decided each task at the unadjusted
#   t (2.78 and 2.26), against the project's rule for a claim decided part by part; with the correction TRPO's
#   "approaches dense" turned from holds to **inconclusive** (InvertedDoublePendulum's ratio, 1.54 ± 0.33 in the
#   run before, 1.49 ± 0.42 in the re-run, reaches below 0.7; Hopper's stays above), and TRPO's
#   InvertedDoublePendulum lead over Toeplitz (2.5 s.e. before, 2.0 in the re-run) is no longer decided, which left
#   that claim inconclusive as before. A one-sided Mann–Whitney U test per task is recorded beside the t-interval
#   verdict as a distribution-free check (a measurement, not a second verdict): in the re-runs it is below the
#   Bonferroni level 0.025 only for TRPO on Hopper (p = 0.012 on 2026-11-27, 0.022 on 2026-11-28; KAMA ahead in
#   80 % / 77 % of run pairs), where the t-interval (1.7 / 2.4 s.e. against t = 2.69) is not; the returns are
#   skewed, so the two tests can disagree.
# - **Reproducibility.** Runs repeat bit for bit on one machine (the RL test checks a pool of processes against one
#   process). The re-run of 2026-11-27, with the code and seeds of the run before, reproduced every
#   InvertedDoublePendulum score exactly but not Hopper's or the K ablation's at K ≥ 20 (e.g. PPO Hopper KAMA
#   766 → 704). No code on their path changed between the two runs, so the likely cause is the host: XLA compiles
#   for the CPU it finds (this run: AMD EPYC without AVX-512; the earlier one is not recorded), and a different
#   vector width can change the last bits of a float32 sum in the larger layers, from which a run diverges; we have
#   not confirmed it on the earlier host. No verdict changed.
# - *Changed 2026-11-28:* the gradient of a KAMA weight matrix in its angles is taken by a reversible sweep
#   (`kama.matrix` un-rotates P in place in reverse mode instead of reading back the rows its forward scan saved, 3.4×
#   faster at d = 64, k = 200; it equals autodiff of the scan to round-off in float64, `tests/test_kama.py` asserting
#   1e-12 of the largest entry), and the KAMA updates of a batch run one after another (`lax.map`) instead of `vmap`-ed:
#   batched, XLA:CPU runs the Givens gradient 3–5× slower (`benchmarks --suite kama_gradients`) and the whole update
#   2–4× slower. The notebook took 16.1 and 15.4 min on a machine at 196 and 185 GFLOP/s (identical results), against
#   35.5–35.9 min at 150 on 2026-11-27. KAMA runs moved by float32 round-off, from which a run diverges (PPO Hopper KAMA
#   704 → 710, TRPO InvertedDoublePendulum KAMA 3 992 → 3 855). Each KAMA run's update is computed from that run's
#   numbers alone; alone or in a batch of two, a run agrees to round-off, not bit for bit (a batch of one compiles to
#   other code): in float32 with XLA's default flags, as here, TRPO's accepted KL after three iterations agreed exactly
#   and PPO's returns to 2e-12 relative, where `vmap`-ed updates differ by 2e-5 in the KL; under the test suite's
#   compiler flags both ways differ by up to 6e-10 in float64 (`tests/test_rl.py` checks the run to 1e-6, a mixing of
#   runs' data moves it by 5–64 %).
#   Dense and Toeplitz code did not change and repeats bit for bit between the two versions on this host (checked on two
#   Hopper seeds with PPO and TRPO), yet their scores moved against the committed run of 2026-11-27 as well (TRPO
#   InvertedDoublePendulum dense 2 688 → 3 213, PPO Hopper dense 679 → 744; PPO InvertedDoublePendulum dense unchanged),
#   which again points at the host. No verdict changed; TRPO's progress ratios are now 1.28 ± 0.15 (Hopper) and 1.20 ±
#   0.34 (InvertedDoublePendulum, interval reaching 0.29). Since then the runs of Figs 3, 4 and 5 share one pool of
#   processes (`rl.run_plans`, longest batch first), where each study had its own and a core waited at the end of each
#   (57 s at the end of TRPO's in the 15.4-minute run); the batches, so the results, are the same, bit for bit, and the
#   notebook took 13.9 min (machine at 191 GFLOP/s) — and 17.6 min in a re-run with the same code an hour later (192
#   GFLOP/s by the matmul probe, yet 26 % more CPU time: this machine's speed varies beyond what the probe sees).
# - *Changed 2026-11-29:* a batch's rollouts normalise the runs' observations and draw their action noise (each run's
#   T draws of an iteration at once, from its own generator) in one array operation per step instead of one per run:
#   the runs are the same bit for bit (checked against the code before on PPO and TRPO batches of dense, KAMA and
#   Toeplitz policies on Hopper, InvertedDoublePendulum and InvertedPendulum). Interleaved timings (3 rounds) gave
#   13.0–13.3 s against 13.0–16.9 s for 4 PPO iterations of 5 dense Hopper runs and 19.4–21.0 against 20.3–22.3 s
#   for 4 TRPO iterations of 10 Toeplitz InvertedDoublePendulum runs: a few per cent at most, within this machine's
#   noise, since ≈ 70 % of a PPO Hopper step is gymnasium and MuJoCo (profile). A
#   re-run with it took 29.8 min (2026-11-29, matmul probe 166 GFLOP/s; 2 824 / 3 615 steps per second per process for
#   PPO / TRPO against 4 751 / 6 285 in the committed run): the machine ran 1.7× slower, not the code. It repeated the
#   committed run's InvertedDoublePendulum PPO scores and the K = 10 ablation exactly and moved the others as the host
#   does (TRPO InvertedDoublePendulum dense back to 2 688, the value of 2026-11-27); no verdict changed. The committed
#   results are those of the full `make` of 2026-12-07, whose returns equal the run of 2026-11-28 exactly (the same
#   host type); only its throughput and the cost projected from it differ.

# %%
# Every RL run of this notebook — Figs 3 and 4 here, the K ablation of §3 — in one pool of WORKERS processes, longest
# batch first (rl.run_plans; the batches, so the results, are those of running each study alone).
# {(task, architecture, s): run}; run s on a task has the seed keys.integer(algorithm run, task, s);
# the ablation: {K: [PPO run of a KAMA policy with PPOConfig(rotations=K), per seed keys.integer("k ablation run", s)]}
env_ab, steps_ab, seeds_ab, Ks = S["ablation"]
CONFIRM_SEEDS, confirm_K = S["ablation_confirm"]
trained = rl.run_plans(
    {
        "PPO": rl.plan_train_runs(S["ppo_tasks"], partial(keys.integer, "ppo run")),
        "TRPO": rl.plan_train_runs(
            S["trpo_tasks"], partial(keys.integer, "trpo run"), algorithm="trpo", config=rl.TRPOConfig()
        ),
        "K ablation": rl.plan_rotation_ablation(
            env_ab, steps_ab, seeds_ab, Ks, partial(keys.integer, "k ablation run")
        ),
        **(
            {
                "K confirmation": rl.plan_rotation_ablation(
                    env_ab, steps_ab, CONFIRM_SEEDS, confirm_K, partial(keys.integer, "k ablation confirmation run")
                )
            }
            if confirm_K
            else {}
        ),
    },
    workers=WORKERS,
    progress=True,
)
runs_by_algorithm = {"PPO": trained["PPO"], "TRPO": trained["TRPO"]}
CURVE_AXES = dict(xlabel="environment steps", ylabel="mean episode return")
for algorithm, runs in runs_by_algorithm.items():
    tasks = list(dict.fromkeys(env for env, _, _ in runs))
    label = {
        (env, a): f"{LABEL[a] if algorithm == 'PPO' else LABEL[a].replace('64', '32').replace('200', '100')}, "
        f"{runs[env, a, 0]['parameters']} parameters"
        for env, a, _ in runs
    }
    panels = {env: {label[env, a]: rl.learning_curves(runs, env, a) for a in policies.ARCHITECTURES} for env in tasks}
    fig, _ = plotting.mean_std_panels(panels, **CURVE_AXES)
    settings = S["ppo_tasks"] if algorithm == "PPO" else S["trpo_tasks"]
    plotting.finish_figure(
        fig,
        f"kama_rl_{algorithm.lower()}",
        f"Fig {3 if algorithm == 'PPO' else 4} ({scale} scale): {algorithm}, mean ± std over seeds; "
        f"{', '.join(f'{e}: {st:,} steps × {n} seeds' for e, (st, n) in settings.items())} (paper: 10⁶ steps, 5 seeds)",
        fontsize=9,
    )

# %%
RANDOM_EPISODES = 100
random_returns = {  # the uniform random policy's episode returns per task, the "learns" baseline
    env: rl.random_policy_returns(env, RANDOM_EPISODES, keys.integer("random policy", env))
    for env in dict.fromkeys([*S["ppo_tasks"], *S["trpo_tasks"]])
}
display(
    Markdown(
        f"**Uniform random policy ({RANDOM_EPISODES} episodes): episode return, mean ± std**\n\n"
        + markdown_table(
            ["task", "random policy"], [[e, f"{r.mean():.1f} ± {r.std(ddof=1):.1f}"] for e, r in random_returns.items()]
        )
    )
)


def z_text(z: dict, settings: dict) -> str:
    """The interval's t-quantiles {task: t} in words, one per distinct seed count: "2.78 (5 seeds) / 2.26 (10 seeds)"."""
    by_seeds = {settings[env][1]: t for env, t in z.items()}
    return " / ".join(f"{t:.2f} ({n} seeds)" for n, t in by_seeds.items())


def interval_words(env: str, mean: float, se: float, z: float, spec: str, against: float = 0.0) -> str:
    """One task's estimate and its t-interval in words, e.g. "Hopper-v5: +190 ± 120 s.e. (+1.6 s.e. from 0; interval
    -230 … +609, t = 3.50)"; spec formats the numbers (a leading + signs the estimate and the interval's ends),
    against is the value the claim compares with."""
    away = f"{(mean - against) / se:+.1f} s.e. from {against:g}; " if se > 0 else ""
    interval = f"{mean - z * se:{spec}} … {mean + z * se:{spec}}"
    return f"{env}: {mean:{spec}} ± {se:{spec.lstrip('+')}} s.e. ({away}interval {interval}, t = {z:.2f})"


def seeds_words(seeds: int, mean: float, se: float, z: float, against: float = 0.0) -> str:
    """What deciding an undecided task would take, in words: ", ≈ 40 seeds per architecture would decide it" (either
    way; :func:`samples_to_decide`: were the estimate and its spread per seed to hold), or nothing if it is decided."""
    if not (np.isfinite(mean) and np.isfinite(se)):
        return ""
    needed = samples_to_decide(seeds, mean, se, z, against)
    if needed <= seeds:
        return ""
    return f", ≈ {needed:,.0f} seeds per architecture would decide it" if needed < 1e5 else ", no seed count in reach"


for algorithm, runs in runs_by_algorithm.items():
    settings = S["ppo_tasks"] if algorithm == "PPO" else S["trpo_tasks"]
    tasks = list(settings)
    tag = algorithm.lower()
    scores = rl.final_scores(runs)  # {(task, architecture): [final score per seed]}
    summary = rl.score_summary(scores)  # {(task, architecture): (mean, std) over seeds}
    rows = [[env, *("{:.1f} ± {:.1f}".format(*summary[env, a]) for a in policies.ARCHITECTURES)] for env in tasks]
    display(
        Markdown(
            f"**{algorithm}: final score (mean ± std over seeds)**\n\n"
            + markdown_table(["task", *(LABEL[a] for a in policies.ARCHITECTURES)], rows)
        )
    )
    score_se = {key: mean_and_se(v) for key, v in scores.items()}  # (mean, s.e.) over seeds
    # Student-t over each task's seeds at the Bonferroni level over the tasks (a claim decided task by task)
    rl_z = {env: interval_z(samples=settings[env][1], parts=len(tasks)) for env in tasks}
    reduced = run.reduced(
        ", ".join(f"{e} {st:,} steps × {n} seeds" for e, (st, n) in settings.items()) + " (paper: 10⁶ steps × 5 seeds)",
        f"{tag}_tasks",
    )
    # learning: each run's final score minus its own first-iteration return, per (task, architecture)
    gains = {
        (env, a): [
            rl.final_score(runs[env, a, s]["return"]) - runs[env, a, s]["return"][0] for s in range(settings[env][1])
        ]
        for env in tasks
        for a in policies.ARCHITECTURES
    }
    gain_se = {k: mean_and_se(v) for k, v in gains.items()}
    learn_z = {env: interval_z(samples=settings[env][1], parts=len(gains)) for env in tasks}
    # the excess over the uniform random policy's mean + one std (bootstrap s.e.), s.e.s in quadrature
    thresholds = {env: rl.learned_threshold(random_returns[env], keys.rng("random threshold", env)) for env in tasks}
    over_random = {}
    for (env, a), (score, se) in score_se.items():
        excess, excess_se = rl.excess_over_threshold(score, se, thresholds[env])
        over_random[env, a] = (excess, excess_se, random_returns[env].mean(), thresholds[env][0])
    learn_verdicts = {
        (env, a): decide(excess, se, above=0.0, z=learn_z[env]) for (env, a), (excess, se, _, _) in over_random.items()
    }
    rec.record(
        f"{tag}_every_policy_learns",
        f"{algorithm}: every policy learns on every task shown (final score above the uniform random policy's mean "
        "return by more than one random episode's standard deviation)",
        paper="Figs 3/4: every curve rises",
        ours={
            f"{env} | {a}": {
                "final score": score_se[env, a][0],
                "random policy": round(random_mean, 1),
                "threshold (random mean + std)": round(threshold, 1),
                "excess over the threshold": excess,
                "s.e.": se,
                "gain over first iteration": gain_se[env, a][0],
            }
            for (env, a), (excess, se, random_mean, threshold) in over_random.items()
        },
        holds=combine(learn_verdicts.values()),
        criterion=f"per (task, architecture), final score − (uniform random policy's mean return + one std of its "
        f"episode returns, {RANDOM_EPISODES} episodes), mean ± t·s.e., t = {z_text(learn_z, settings)} (seeds, Student-t at the Bonferroni "
        "level over the cells; the threshold's bootstrap s.e. in quadrature), above 0; fails if any is wholly below",
        meaningful_at="standard",
        reduced=reduced,
        expected="holds or inconclusive" if algorithm == "PPO" else "holds",
        because=""
        if algorithm != "PPO"
        else "every cell held in every run before the evening of 2026-12-07; in that evening's run (new initial "
        "policies, see the changes above) PPO's Toeplitz policies on Hopper split between seeds that run far and "
        "seeds that do not, and a t-interval on the mean of such a split reaches below 0 with 5 seeds; this run: "
        + (
            "; ".join(
                f"{env} {a}: {over_random[env, a][0]:+.0f} ± {over_random[env, a][1]:.0f} (t = {learn_z[env]:.2f}), "
                f"final scores {min(scores[env, a]):.0f}–{max(scores[env, a]):.0f}, "
                f"{sum(v > thresholds[env][0] for v in scores[env, a])} of {len(scores[env, a])} seeds above the "
                f"threshold {thresholds[env][0]:.1f}"
                for (env, a), v in learn_verdicts.items()
                if v != "holds"
            )
            or "every cell is decided above the threshold"
        ),
    )
    rec.record(
        f"{tag}_kama_beats_toeplitz",
        f"{algorithm}: KAMA policies reach a higher return than Toeplitz policies on most tasks",
        paper="Figs 3/4: 'across most tasks KAMA-NNs policies achieve better performance than Toeplitz policies'",
        ours={env: {a: mean_se_entry(score_se[env, a]) for a in policies.ARCHITECTURES} for env in tasks},
        holds=majority(decide_smaller(score_se[env, "toeplitz"], score_se[env, "kama"], z=rl_z[env]) for env in tasks),
        criterion=f"per task, KAMA's mean final score − Toeplitz's, ± t·s.e. over seeds (Student-t at the Bonferroni level "
        f"over the tasks, t = {z_text(rl_z, settings)}), above 0; holds if more than half of the tasks hold, fails if no "
        "majority is possible, else inconclusive",
        meaningful_at="standard",
        reduced=reduced,
        expected="inconclusive",
        because="at standard scale no task's interval for KAMA − Toeplitz lies below 0 and at most one lies above "
        "(a majority of two tasks needs both); this run: "
        + "; ".join(
            interval_words(env, diff, diff_se, rl_z[env], "+,.0f")
            + seeds_words(settings[env][1], diff, diff_se, rl_z[env])
            for env in tasks
            for diff, diff_se in [
                (
                    score_se[env, "kama"][0] - score_se[env, "toeplitz"][0],
                    np.hypot(score_se[env, "kama"][1], score_se[env, "toeplitz"][1]),
                )
            ]
        ),
        note="JAX re-implementation with baselines' hyperparameters; gymnasium v5 tasks",
    )
    # the same comparison without the normal approximation: one-sided Mann–Whitney U of KAMA's final scores against
    # Toeplitz's per task (independent runs; exact null distribution unless scores tie)
    by_ranks = {}
    for env in tasks:
        kama, toeplitz = np.asarray(scores[env, "kama"]), np.asarray(scores[env, "toeplitz"])
        tied = np.unique(np.concatenate([kama, toeplitz])).size < kama.size + toeplitz.size
        test = stats.mannwhitneyu(kama, toeplitz, alternative="greater", method="asymptotic" if tied else "exact")
        by_ranks[env] = {
            "share of (KAMA, Toeplitz) run pairs won by KAMA": float(test.statistic) / (kama.size * toeplitz.size),
            "one-sided p": float(test.pvalue),
            "Bonferroni level over the tasks": 0.05 / len(tasks),
        }
    rec.record(
        f"{tag}_kama_beats_toeplitz_by_ranks",
        f"{algorithm}: the KAMA-vs-Toeplitz comparison by ranks (Mann–Whitney U), a check of the t-interval verdict",
        paper=None,
        ours=by_ranks,
        holds=None,
        note="a measurement, not a second verdict: a task whose p is below the Bonferroni level would be decided by "
        "ranks; with 5 seeds the smallest possible one-sided p is 1/252 ≈ 0.004, with 10 seeds 1/184 756",
    )
    _, progress = rl.learning_progress(runs, scores)  # ({task: start}, {task: {architecture: progress}})
    kama_vs_dense = {env: progress[env]["kama"] / progress[env]["dense"] for env in tasks}
    # s.e. of each progress ratio by the delta method from the two architectures' s.e. over seeds (independent runs)
    ratio_se = {
        env: abs(kama_vs_dense[env])
        * np.hypot(score_se[env, "kama"][1] / progress[env]["kama"], score_se[env, "dense"][1] / progress[env]["dense"])
        for env in tasks
    }
    rec.record(
        f"{tag}_kama_approaches_dense",
        f"{algorithm}: KAMA policies approach dense ones (learning progress at least 70 % of dense on most tasks)",
        paper="Figs 3/4: KAMA trails dense policies somewhat (no numbers)",
        ours={
            env: {"progress ratio KAMA / dense": kama_vs_dense[env], "s.e.": ratio_se[env], **progress[env]}
            for env in tasks
        },
        holds=majority(
            # a ratio is meaningful only when dense learned (progress > 0); otherwise its uncertainty is unbounded
            decide(kama_vs_dense[env], ratio_se[env], above=0.7, z=rl_z[env])
            if progress[env]["dense"] > 0 and np.isfinite(kama_vs_dense[env]) and np.isfinite(ratio_se[env])
            else decide(0.0, np.inf, above=0.7)
            for env in tasks
        ),
        criterion=f"per task, the progress ratio KAMA / dense ± t·s.e. (delta method over seeds, Student-t at the "
        f"Bonferroni level over the tasks, t = {z_text(rl_z, settings)}) above 0.7 (our reading of 'trails dense "
        "somewhat'); holds if more than half of the tasks hold, fails if no majority is possible, else inconclusive",
        meaningful_at="standard",
        reduced=reduced,
        expected="inconclusive",
        because="at standard scale no task's ratio is decided below 0.7 and at most one above (a majority of two "
        "tasks needs both); this run: "
        + "; ".join(
            interval_words(env, kama_vs_dense[env], ratio_se[env], rl_z[env], ".2f", 0.7)
            + seeds_words(settings[env][1], kama_vs_dense[env], ratio_se[env], rl_z[env], 0.7)
            for env in tasks
        ),
        note="progress = final score − mean first-iteration return on the task; > 1 means KAMA learned faster",
    )

# %% [markdown]
# ### Throughput, and what the paper's protocol costs
#
# Every run records its wall time; the runs of one batch share it. `rl.throughput` gives the environment steps per
# second of one process (policy evaluation, simulator and updates included), measured here with one process per
# core. The paper's protocol (10⁶ steps × 5 seeds, PPO and TRPO on six tasks, and the K ablation) is projected from
# it for 2 and 16 cores, assuming the processes do not slow each other down beyond what was measured here (the
# work is independent runs). The standard runs step InvertedDoublePendulum and Hopper only, and HalfCheetah, Walker2d
# and Swimmer simulate more bodies per step; so (since 2026-12-07, after a review called the projection a lower
# bound) every task's simulator is also timed alone (`rl.simulator_seconds_per_step`, random actions, 4 000 steps),
# and each task's projected time per step is the measured one with the measured tasks' simulator share swapped for
# its own. What this still leaves out: the policies' slightly larger inputs and outputs on the bigger tasks, and
# that a batch's runs step in lockstep, so a run's share of the per-iteration overhead falls with the batch size
# (TRPO is measured in batches of 10 runs here, the paper's protocol batches its 5 seeds).

# %%
per_algorithm = {algorithm: rl.throughput(runs.values()) for algorithm, runs in runs_by_algorithm.items()}
# the simulator's own cost per step on every task of the paper's protocol (random actions, this process, one core)
simulator = {
    task: rl.simulator_seconds_per_step(task, S["simulator_steps"], keys.integer("simulator timing", task))
    for task in rl.TASK_SIZES
}
paper = SETTINGS["paper"]
N_ARCH = len(policies.ARCHITECTURES)
paper_parts = {  # {part: (algorithm measured, {task: environment steps})}
    "PPO": ("PPO", {task: st * n * N_ARCH for task, (st, n) in paper["ppo_tasks"].items()}),
    "TRPO": ("TRPO", {task: st * n * N_ARCH for task, (st, n) in paper["trpo_tasks"].items()}),
    "PPO K ablation": (
        "PPO",
        {paper["ablation"][0]: paper["ablation"][1] * paper["ablation"][2] * len(paper["ablation"][3])},
    ),
}


def seconds_per_step(algorithm: str, task: str) -> float:
    """One process's wall seconds per environment step of ``algorithm`` on ``task``: the measured time per step on
    this scale's tasks, with their step-weighted simulator cost swapped for ``task``'s."""
    settings = S["ppo_tasks"] if algorithm == "PPO" else S["trpo_tasks"]
    weights = {t: st * n for t, (st, n) in settings.items()}
    measured_simulator = sum(w * simulator[t] for t, w in weights.items()) / sum(weights.values())
    return 1 / per_algorithm[algorithm] - measured_simulator + simulator[task]


core_hours = {
    part: sum(steps * seconds_per_step(algorithm, task) for task, steps in by_task.items()) / 3600
    for part, (algorithm, by_task) in paper_parts.items()
}
unadjusted = {  # the projection from this scale's tasks alone, as before 2026-12-07: a lower bound
    part: sum(by_task.values()) / per_algorithm[algorithm] / 3600 for part, (algorithm, by_task) in paper_parts.items()
}
display(
    Markdown(
        "Simulator alone, random actions (µs per step): "
        + ", ".join(f"{task} {1e6 * t:.0f}" for task, t in simulator.items())
    )
)
rows = [
    [
        part,
        f"{sum(paper_parts[part][1].values()):,}",
        f"{per_algorithm[paper_parts[part][0]]:,.0f}",
        f"{unadjusted[part]:.1f}",
        f"{core_hours[part]:.1f}",
        f"{core_hours[part] / 2:.1f}",
        f"{core_hours[part] / 16:.1f}",
    ]
    for part in paper_parts
]
rows.append(
    [
        "total",
        f"{sum(sum(by_task.values()) for _, by_task in paper_parts.values()):,}",
        "",
        f"{sum(unadjusted.values()):.1f}",
        f"{sum(core_hours.values()):.1f}",
        f"{sum(core_hours.values()) / 2:.1f}",
        f"{sum(core_hours.values()) / 16:.1f}",
    ]
)
header = [
    "part",
    "environment steps",
    "steps / s / process (measured)",
    "core-hours at that rate",
    "core-hours, each task's simulator",
    "hours on 2 cores",
    "hours on 16 cores",
]
display(Markdown(f"Measured with {WORKERS} processes on this machine:\n\n" + markdown_table(header, rows)))
rec.record(
    "paper_protocol_cost",
    "Measured throughput and the projected wall time of the paper's RL protocol (10⁶ steps × 5 seeds, PPO and TRPO "
    "on six tasks, K ablation)",
    ours={
        "steps_per_second_per_process": per_algorithm,
        "simulator_microseconds_per_step": {task: 1e6 * t for task, t in simulator.items()},
        "workers": WORKERS,
        "core_hours_at_the_measured_rate": sum(unadjusted.values()),
        "core_hours": sum(core_hours.values()),
        "hours_on_2_cores": sum(core_hours.values()) / 2,
        "hours_on_16_cores": sum(core_hours.values()) / 16,
    },
    holds=None,
    note="per task, the measured seconds per step of this scale's training runs with their simulator share "
    "replaced by that task's (timed alone, random actions); policy and update costs as measured (the paper's "
    "policies have the same widths; larger observation and action sizes cost a little more); 16 cores: the runs "
    "are independent processes, assumed not to slow each other beyond what 2 processes did here",
)

# %% [markdown]
# ## 3 · Fig 5: more rotations, better policies?
#
# The same PPO runs with KAMA policies of $K$ rotations per matrix.

# %%
ablation = trained["K ablation"]  # trained in §2's pool
curves = {f"K = {K}": (ablation[K][0]["steps"], [r["return"] for r in ablation[K]]) for K in Ks}  # mean over seeds
panel = {f"{env_ab}, KAMA policies": curves}
fig, axes = plotting.mean_std_panels(panel, panel_size=(5.5, 3.8), band=False, extra=1, **CURVE_AXES)
ab_scores = {K: [rl.final_score(r["return"]) for r in ablation[K]] for K in Ks}
axes[1].errorbar(Ks, [np.mean(ab_scores[K]) for K in Ks], yerr=[np.std(ab_scores[K]) for K in Ks], fmt="o-", capsize=3)
random_ab = random_returns.get(env_ab)
if random_ab is None:  # the ablation task is not among the training tasks at this scale
    random_ab = rl.random_policy_returns(env_ab, RANDOM_EPISODES, keys.integer("random policy", env_ab))
threshold_ab, threshold_ab_se = rl.learned_threshold(random_ab, keys.rng("random threshold", env_ab))
for ax in axes[:2]:
    ax.axhline(random_ab.mean(), color="k", ls=":", lw=1, label="uniform random policy (mean)")
axes[1].legend(fontsize=8)
axes[1].set(
    xscale="log", xlabel="rotations K per matrix", ylabel="final score (mean ± std over seeds)", title="Fig 5 stand-in"
)
caption = (
    f"Fig 5 stand-in ({scale} scale): {steps_ab:,} steps × {seeds_ab} seeds per K (paper: 10⁶ steps); dotted: the "
    f"uniform random policy's mean return ({RANDOM_EPISODES} episodes)"
)
plotting.finish_figure(fig, "kama_rl_ablation", caption, fontsize=9)
rho, p_up, p_down = rl.rank_trend(ab_scores)  # Spearman ρ(K, final score) over every run, one-sided p-values
rec.record(
    "return_grows_with_K",
    "The return of KAMA policies grows with the number of rotations K",
    paper="Fig 5: performance improves with K ∈ {10, 20, 50, 100, 200}",
    ours={
        "final score by K": {K: float(np.mean(v)) for K, v in ab_scores.items()},
        "Spearman ρ(K, score)": rho,
        "one-sided p (increasing)": p_up,
    },
    holds=decide_test(p_up, p_down) if np.isfinite(rho) else decide(0.0, np.inf, above=0.0),  # < 3 K: undecidable
    criterion="Spearman's test over every run: holds if the one-sided p-value for an increasing trend < 0.025, fails "
    "if the one for a decreasing trend is, else inconclusive",
    meaningful_at="standard",
    reduced=run.reduced(f"{steps_ab:,} steps × {seeds_ab} seeds per K", "ablation"),
    note=f"stand-in task: {env_ab} (the paper's ablation task is not stated for Fig 5; our paper scale uses Hopper)",
)

# the "learns" rule of Figs 3/4 for every K: final score above the random policy's mean + one std (seeds' s.e. and
# the threshold's bootstrap s.e. in quadrature, Student-t at the Bonferroni level over the K values)
ab_excess = (
    {
        K: rl.excess_over_threshold(m, se, (threshold_ab, threshold_ab_se))
        for K, (m, se) in ((K, mean_and_se(ab_scores[K])) for K in Ks)
    }
    if seeds_ab > 1
    else {}
)
ab_z = interval_z(samples=seeds_ab, parts=len(Ks)) if seeds_ab > 1 else math.inf
ab_verdicts = {K: decide(e, se, above=0.0, z=ab_z) for K, (e, se) in ab_excess.items()}
undecided_K = [K for K, v in ab_verdicts.items() if v == "inconclusive"]
rec.record(
    "ablation_every_K_learns",
    "Fig 5 stand-in: the KAMA policy learns at every K (final score above the uniform random policy's mean return by "
    "more than one random episode's standard deviation)",
    paper="Fig 5: every K's curve rises",
    ours={
        "random policy (mean)": float(random_ab.mean()),
        "threshold (random mean + std)": threshold_ab,
        **{
            f"K = {K}": {"excess over the threshold": e, "s.e.": se, "final score per seed": ab_scores[K]}
            for K, (e, se) in ab_excess.items()
        },
    },
    holds=combine(ab_verdicts.values()) if ab_excess else decide(0.0, np.inf, above=0.0),  # one seed: undecidable
    criterion=f"per K, mean final score − (random mean + std), ± t·s.e. over seeds (t = {ab_z:.2f}: Student-t at the "
    "Bonferroni level over the K values; the threshold's bootstrap s.e. in quadrature) above 0; fails if any is wholly "
    "below",
    meaningful_at="standard",
    reduced=run.reduced(f"{steps_ab:,} steps × {seeds_ab} seeds per K", "ablation"),
    expected="holds or inconclusive" if scale == "paper" else "inconclusive",
    because=f"with {seeds_ab} seed(s) per K the interval is ± {ab_z:.1f} s.e.; where a K's seeds split between "
    "policies that have mastered the task and ones still near its start, it reaches below 0 — "
    + (
        "; ".join(
            f"K = {K}: {ab_excess[K][0]:+.0f} ± {ab_excess[K][1]:.0f}, final scores {min(ab_scores[K]):.0f}–"
            f"{max(ab_scores[K]):.0f}, {sum(v > threshold_ab for v in ab_scores[K])} of {seeds_ab} seeds above the "
            f"threshold {threshold_ab:.1f}"
            for K in undecided_K
        )
        + "; the other K are decided above it"
        if undecided_K
        else ("in this run every K is decided" if ab_excess else "one seed gives no s.e.")
    ),
    note=f"{seeds_ab} seed(s) per K: the interval is ± {ab_z:.1f} s.e., too wide to decide the claim at this scale "
    "(5 seeds give ± 4.6); the figure's dotted line is the random policy"
    if seeds_ab < 5
    else "",
)

# %% [markdown]
# **Fresh seeds for the $K$ that the first seeds left undecided.** Declared on 2026-12-07, after the committed run
# of that day had left $K = 20$ and $K = 50$ undecided and before any of these runs: those two $K$ get
# `ablation_confirm` (7) new PPO runs each, under keys of their own (trained in §2's pool), and are decided by a
# one-sided **sign test** of "a run's median final score lies above the threshold" (exact binomial, at 0.025 / 2,
# Bonferroni over the two). A sign test, not a t-interval, because those $K$'s seeds split between policies that
# mastered the task and policies near its start: the mean of such a split has an s.e. that a handful of seeds does
# not shrink, while "does a typical run clear the random policy" is what "learns" asks. 7 runs all above give
# p = 1/128 < 0.0125; one at or below the threshold leaves that $K$ undecided. The other $K$ keep their t-interval
# verdicts above; the claim combines both. (Paper scale trains Hopper, where which $K$ would need it is unknown:
# none is declared there, and the claim is the t-intervals' alone.)

# %%
confirm_scores = {K: [rl.final_score(r["return"]) for r in trained["K confirmation"][K]] for K in confirm_K}
confirm_tests = {K: sign_test(v, threshold_ab) for K, v in confirm_scores.items()}
confirm_verdicts = {K: decide_test(*confirm_tests[K], alpha=0.025 / len(confirm_K)) for K in confirm_K}
two_stage = {K: confirm_verdicts.get(K, v) for K, v in ab_verdicts.items()}
confirm_set = "{" + ", ".join(map(str, confirm_K)) + "}"
rec.record(
    "ablation_every_K_learns_with_fresh_seeds",
    "Fig 5 stand-in: the KAMA policy learns at every K, each K undecided by its first seeds decided on fresh ones "
    "(a typical run's final score above the uniform random policy's mean return + one std)",
    paper="Fig 5: every K's curve rises",
    ours={
        "threshold (random mean + std)": threshold_ab,
        "decided by the first seeds' t-intervals": {K: v for K, v in ab_verdicts.items() if K not in confirm_K},
        **{
            f"K = {K}, {CONFIRM_SEEDS} fresh seeds": {
                "final score per seed": confirm_scores[K],
                "runs above the threshold": int(sum(v > threshold_ab for v in confirm_scores[K])),
                "one-sided p (median above)": confirm_tests[K][0],
                "one-sided p (median below)": confirm_tests[K][1],
            }
            for K in confirm_K
        },
    },
    holds=combine(two_stage.values()) if two_stage else decide(0.0, np.inf, above=0.0),  # one seed: undecidable
    # at paper scale no K is declared for fresh seeds: the claim is then ablation_every_K_learns, documented alike
    expected="holds or inconclusive" if scale == "paper" else "holds",
    criterion=f"for K ∈ {confirm_set}, {CONFIRM_SEEDS} fresh seeds and a one-sided exact sign test of their "
    f"final scores against the threshold (median above at p < 0.025 / {max(len(confirm_K), 1)} holds, median below "
    "at that level fails, ties dropped), declared before those runs; for every other K, the first seeds' verdict of "
    "`ablation_every_K_learns`; holds if every K holds, fails if any fails, else inconclusive",
    meaningful_at="standard",
    reduced=run.reduced(
        f"{steps_ab:,} steps × {seeds_ab} seeds per K"
        + (f" (+ {CONFIRM_SEEDS} for K ∈ {confirm_set})" if confirm_K else ""),
        "ablation",
    ),
    note="the threshold's bootstrap s.e. is not in the sign test; the closest final score decides how much it "
    "could matter: "
    + (
        ", ".join(f"K = {K}: lowest {min(v):.1f}" for K, v in confirm_scores.items())
        + f" against {threshold_ab:.1f} ± {threshold_ab_se:.1f}"
        if confirm_scores
        else "no K is declared for fresh seeds at this scale"
    ),
)

# %% [markdown]
# **Reading Fig 5's stand-in.** Until 2026-12-07 the ablation ran 40 960 steps × 3 seeds per $K$. There the
# small-$K$ policies had barely started ($K = 10$ ended 1.1 ± 0.5 above the random policy's threshold of 8.3,
# $K = 20$ 9.1 ± 4.6, against 172–724 for $K \ge 50$), so the trend compared policies that learned with policies
# that had hardly begun, and "every $K$ learns" could not be decided (± 9.9 s.e. with 3 seeds); it was left to paper
# scale, never run. A probe on seeds apart from this notebook's (PPO, InvertedPendulum, 102 400 steps × 5 seeds,
# 37 s for $K \in \{10, 20\}$) found both learning (final scores 20.5 ± 0.5 and 19.7 ± 1.2), so standard scale now
# runs that budget for every $K$ (08 then took 13.1–13.4 min, was 11.9), and the claim is meant to be decided here
# (± 4.6 s.e.). The settings were changed after the inconclusive run had been seen; the criterion was not. In the
# runs of 2026-12-07 before the evening change below (the slow-spell `make`'s, committed until then) $K = 10$
# learned, decided (+11.7 ± 0.6 over the threshold), and $K = 100$ and $200$ reached the task's maximum of 1 000 on
# every seed; but $K = 20$ (+58 ± 39) and $K = 50$ (+577 ± 179) stayed undecided: their seeds split between
# policies that had mastered the task and ones still near its start (final scores 19–218 and 59–1 000, every seed
# above the threshold), and a 5-seed t-interval on the mean cannot decide such a split. So the claim stayed
# **inconclusive**, documented as such; the trend claim compared policies that all left the random policy behind on
# average, and held (Spearman ρ = 0.91, one-sided p = 1e-10). **Decided on fresh
# seeds** (claim `ablation_every_K_learns_with_fresh_seeds`, its sign test declared before the runs): all 7 new runs
# of $K = 20$ (final scores 16.5–909) and all 7 of $K = 50$ (25–976) ended above the threshold of 8.3 ± 0.5,
# p = 1/128 each against the 0.0125 needed, so every $K$ learned: the claim **held** (at this reduced scale:
# *scaled*). The evening's run (new initial policies, the change below) draws every run afresh and decides the same
# way: $K = 10$ +11.6 ± 0.5 and now $K = 20$ +11.0 ± 0.7 are decided (none of its 5 seeds mastered the task this
# time: 17–20), $K = 100$ +973 ± 19 and $K = 200$ at the cap, $K = 50$ undecided (+565 ± 191, final scores
# 24–1 000), so `ablation_every_K_learns` stays inconclusive; its fresh seeds again all clear the threshold
# ($K = 20$: 19.8–45; $K = 50$: 19.9–773), p = 1/128 each, and the two-stage claim holds; the trend holds
# (ρ = 0.88, p = 3e-9). Which $K = 20$ and $K = 50$ runs master the task moves from draw to draw; the next paragraph
# gives a candidate reason.

# %% [markdown]
# **What a small-$K$ action can read.** (Found 2026-12-07: in the committed run of that day, drawn under the random
# streams of the time (next bullet), $K = 10$ and $K = 20$ had identical final scores on their first seed, to 16
# digits, and retraining both alone gave identical curves at every iteration.) A KAMA layer keeps the first rows
# (columns) of a product of $K$ Givens rotations of size $D = \max(d_\text{out}, d_\text{in})$ on frozen random
# planes (§2.3, §6.2). A coordinate that no rotation touches stays a unit vector, whatever training does to the
# angles. Each rotation touches coordinate 0 with probability $2/D$, so the action layer's first row (its only row on
# InvertedPendulum) is $e_0$ with probability $(1 - 2/64)^K$: 0.73 at $K = 10$, 0.53 at $K = 20$, 0.20 at $K = 50$.
# Then the action reads one hidden unit. If coordinate 0 is untouched in the two layers below as well (each a draw of
# its own), that unit reads one unit of the first hidden layer, which reads the first observation input alone (on
# InvertedPendulum, the cart position), through three scales and biases: such a policy cannot see the pole. On that
# seed both $K = 10$ and $K = 20$ drew such a chain, so both policies were the same function of their scales and
# biases, with the same start and the same gradients. The support is structural: `policies.action_reach` reads it off
# the frozen planes (tested against the action's Jacobian), and every run records it. The table below gives, for every
# ablation run of this notebook (the first seeds and the fresh ones), what its action can read and its final score,
# with the rank correlation pooled over all runs and within each $K$ (how much an action reads is drawn with $K$, so
# the pooled one partly measures $K$ again; the within-$K$ one does not). It was looked at after the scores: a
# candidate mechanism for the trend, not a test of it, recorded without a verdict. In the evening's run of
# 2026-12-07 (39 runs): the 17 runs whose action reads the cart position alone all ended at 17–20 (every $K = 10$
# run, 11 of the 12 $K = 20$ runs, one $K = 50$ run); the 13 that read all four inputs ended at 755–1 000; those
# reading two or three lay between (24–833). Within $K$, ρ = 0.48 at $K = 20$ and 0.76 at $K = 50$. A policy that
# sees only the cart still beats the random policy (≈ 20 against 5.2), but none of them balanced the pole.
#
# - *Changed 2026-12-07 (evening):* the pool's spawned processes now take this notebook's JAX settings that change
#   numbers (`rl.run_jobs`: the random-stream mode and float64). Until then they started with JAX's default,
#   partitionable threefry, while the notebook (and a run in this process, as at quick scale or on a one-core
#   machine) draws with it off, so the same seed gave a different initial policy in a pool than outside one, against
#   the promise that the results do not depend on the number of processes (the test ran under an environment that
#   hid it; it now checks both modes). Every standard-scale run of this notebook therefore starts from other
#   initial weights and planes than the runs before: its values differ from theirs by more than
#   round-off, as a new draw of seeds would. One verdict moved with the draw: PPO's Toeplitz policies on Hopper split between
#   seeds that run far and seeds that do not (+782 ± 328 over the threshold; t = 4.85 for 5 seeds at the Bonferroni
#   level over the 6 cells), so `ppo_every_policy_learns`, which held in every earlier run, is inconclusive in this
#   one; its documented outcome is now "holds or inconclusive", this run's values in its reason (the criterion is
#   unchanged). The other verdicts, and the fresh-seed and trend claims of §3, came out as before.

# %%
ab_runs = [(K, "first", s, r) for K in Ks for s, r in enumerate(ablation[K])] + [
    (K, "fresh", s, r) for K in confirm_K for s, r in enumerate(trained["K confirmation"][K])
]
reach_rows = [
    {
        "K": K,
        "seeds": which,
        "seed": s,
        "hidden units read": r["action_reach"][0],
        "inputs read": ", ".join(map(str, r["action_reach"][1])),
        "final score": (ab_scores if which == "first" else confirm_scores)[K][s],
    }
    for K, which, s, r in ab_runs
]
n_inputs = [len(r["action_reach"][1]) for *_, r in ab_runs]
width_ab = rl.PPOConfig().hidden[-1]  # the action layer's rotations act on max(hidden, actions) = hidden coordinates
scores_all = [row["final score"] for row in reach_rows]
reach_rho = float(stats.spearmanr(n_inputs, scores_all)[0]) if len(ab_runs) > 2 and len(set(n_inputs)) > 1 else math.nan
within_K = {}  # K → Spearman ρ(inputs read, final score) over that K's runs, where they differ in what they read
for K in Ks:
    pairs = [(n, v) for (k, *_), n, v in zip(ab_runs, n_inputs, scores_all, strict=True) if k == K]
    if len(pairs) > 2 and len({n for n, _ in pairs}) > 1:
        within_K[K] = float(stats.spearmanr(*zip(*pairs, strict=True))[0])
by_reach = {n: [v for m, v in zip(n_inputs, scores_all, strict=True) if m == n] for n in sorted(set(n_inputs))}
display(
    Markdown(
        markdown_table(
            ["observation inputs the action reads", "runs", "final score: median", "range"],
            [[n, len(v), f"{np.median(v):.0f}", f"{min(v):.0f}–{max(v):.0f}"] for n, v in by_reach.items()],
        )
        + f"\n\nSpearman ρ(inputs read, final score) over all {len(ab_runs)} runs: {reach_rho:.2f}; within each K "
        "whose runs differ in what they read: "
        + (", ".join(f"K = {K}: {r:.2f}" for K, r in within_K.items()) or "none")
        + " (post hoc, descriptive)."
        + (
            " Inputs of InvertedPendulum: 0 cart position, 1 pole angle, 2 cart velocity, 3 pole angular velocity."
            if env_ab.startswith("InvertedPendulum")
            else ""
        )
    )
)
rec.record(
    "ablation_action_reach",
    "Diagnosis of Fig 5's stand-in: how many hidden units and observation inputs each ablation run's action can read "
    "(fixed by its frozen planes), beside its final score",
    ours={
        "runs": reach_rows,
        "final score by inputs read": {
            n: {"runs": len(v), "median": float(np.median(v)), "min": min(v), "max": max(v)}
            for n, v in by_reach.items()
        },
        "Spearman ρ(inputs read, final score)": reach_rho,
        "Spearman ρ within K": within_K,
        f"P(the action layer's first row untouched) = (1 − 2/{width_ab})^K": {K: (1 - 2 / width_ab) ** K for K in Ks},
    },
    holds=None,
    note="looked at after the final scores (post hoc): an explanation of the trend, not a test of it",
)

# %% [markdown]
# ## Coverage of the paper
#
# The numbered items of KAMA-NNs that this notebook accounts for, each with its status (see
# `rflib.notebook.coverage.STATUSES`); `REPRODUCTION.md` collects them into the per-paper coverage table.

# %%
for item, status, detail in (
    (
        "kama:Remark 1",
        "implemented",
        "Policies train only angles and scales; planes are frozen in policies.Structure; kama.layer_apply computes Sx in O(k) (policies materialise W via layer_matrix). Parameter counts follow it.",
    ),
    (
        "kama:Figure 3",
        run.coverage_status("reduced", "ppo_tasks"),
        f"PPO on {', '.join(f'{e} ({st:,} steps × {n} seeds)' for e, (st, n) in S['ppo_tasks'].items())} (paper: 10⁶ steps × 5 seeds on more tasks); gymnasium v5 tasks and a JAX PPO with baselines' hyperparameters instead of OpenAI baselines; paper scale runs all six tasks.",
    ),
    (
        "kama:Figure 4",
        run.coverage_status("reduced", "trpo_tasks"),
        f"TRPO (JAX, baselines' trpo_mpi settings; 2×32 policies, K = 100) on {', '.join(f'{e} ({st:,} steps × {n} seeds)' for e, (st, n) in S['trpo_tasks'].items())}; gymnasium's MuJoCo tasks replace the unidentified Roboschool '(R)' tasks; paper scale runs six tasks at 10⁶ steps × 5 seeds.",
    ),
    (
        "kama:Table 1",
        run.coverage_status("paper scale"),
        f"Exact counting at the paper's sizes (2×64, K = 200, gymnasium v5 dims): Toeplitz {ppo_shares['toeplitz']} % matches; KAMA {ppo_shares['kama']} %, ~1 point low with min(d_out, d_in) scales per layer; one scale per output unit gives the printed 15/15/17 % ({ppo_shares['kama, a scale per output unit']}). Paper's TRPO row lost.",
    ),
    (
        "kama:Figure 5",
        run.coverage_status("reduced", "ablation"),
        f"PPO only (no TRPO), one task ({S['ablation'][0]}), {S['ablation'][1]:,} steps × {S['ablation'][2]} seeds per K, K ∈ {S['ablation'][3]}; paper: PPO and TRPO on unnamed tasks, 10⁶ steps.",
    ),
):
    rec.cover(item, status, detail)
rec.finish()  # every cell ran: mark the results file complete
display(Markdown(rec.table()))

# %% [markdown]
# ### What was scaled down, and why
#
# * **Steps.** The paper (via baselines) trains 10⁶ steps per run and 5 seeds. At standard scale PPO runs
#   InvertedDoublePendulum (102 400 steps) and Hopper (204 800) with the paper's 5 seeds, TRPO both tasks at
#   102 400 steps with 10 seeds (its final scores vary up to 5-fold between seeds), and the K ablation 102 400 steps
#   × 5 seeds per K on InvertedPendulum (and 7 fresh seeds each for
#   K = 20 and 50, which those left undecided, §3). These are two of the paper's five tasks on which every policy learns
#   measurably within the 15-minute budget on 2 cores and the architectures can differ: InvertedPendulum is learned
#   to its 1 000-step cap by every policy (987 / 984 / 986 with PPO in our earlier standard runs), and HalfCheetah's
#   policies were still worse than a random one after 40 960 steps. Swimmer is learned but cannot separate the
#   architectures at this budget: in a probe of 2026-12-07 (PPO, 102 400 steps × 3 seeds) every policy cleared the
#   random policy's threshold (10.3) with final scores of 34.9–37.2 (dense), 34.6–35.8 (KAMA) and 33.3–37.3
#   (Toeplitz) — PPO's known plateau near 35, the same for all three within a point. Swimmer, HalfCheetah, Walker2d
#   and InvertedPendulum run at paper scale. With two tasks, "most tasks" needs KAMA ahead on both.
#   `make paper` runs the full protocol (six tasks, PPO and TRPO, 10⁶ steps × 5 seeds); its cost is projected from
#   the measured throughput above (the table above has this run's figure), each task's simulator timed alone since
#   2026-12-07 (HalfCheetah's turns out cheaper per step than Hopper's, Walker2d's as dear; the correction lowers
#   the projection by 13 % in its first run): 12.2 core-hours in the committed run (15.3 from the measured rate
#   alone), 6.1 hours on this 2-core machine and about 0.8 hours on 16 cores, since `rl.run_jobs` gives every core a
#   process. That run, the re-run of 2026-12-08 00:03 UTC, fell in a slow spell (PPO 3 320 steps/s/process; this
#   notebook took 28.9 min, over its budget), as did the two before it that evening (12.6 and 12.9 core-hours;
#   27.3 and 29.5 min): the first run of 2026-12-07, at 207 GFLOP/s, measured 7.4 core-hours uncorrected (3.7 h on 2 cores, 0.46 h on 16),
#   and 6.5–7.9 core-hours (3.3–3.9 h, 0.4–0.5 h) in the runs of 2026-11-25/26. The re-run
#   of 2026-11-27 fell in a slow spell of the machine (a 2048³ float32 matmul at 150 GFLOP/s against 310–363 on
#   other days; this notebook took 35.5 and 35.9 min against 12.3–13.3) and measured 20.7 and 21.1 core-hours:
#   10.5 hours on 2 cores, 1.3 on 16. The four runs of 2026-11-28 (KAMA's faster gradient, then one pool, see §2;
#   machine at 185–196 GFLOP/s, 13.9–17.6 min, the 17.6-minute one committed until 2026-12-07) measured 8.5–10.7 core-hours: 4.2–5.4
#   hours on 2 cores, 0.5–0.7 on 16. It has not been run here; it
#   needs a machine with more cores (no GPU: the environments step on the CPU).
# * **Tasks.** gymnasium's MuJoCo v5 tasks replace the 2019 gym/Roboschool versions.
# * **Trainers.** PPO and TRPO are our JAX re-implementations with baselines' hyperparameters, not baselines itself.
# * **Quick scale** runs 2 PPO iterations and 2 TRPO iterations on InvertedPendulum: a smoke test only.
