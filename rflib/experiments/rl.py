"""PPO (clipped surrogate, Schulman et al. 2017) for the dense / KAMA / Toeplitz policies of
:mod:`rflib.experiments.policies`, on gymnasium MuJoCo tasks (KAMA-NNs §6.2.1).

Hyperparameters default to OpenAI baselines' ``ppo1/run_mujoco.py`` (the paper's implementation): 2 048 steps per
iteration, clip 0.2, entropy coefficient 0, 10 epochs, Adam 3·10⁻⁴ with a linear schedule (learning rate and clip
both decay to 0), minibatch 64, γ = 0.99, λ = 0.95, observations normalised by a running mean/std and clipped to
[−5, 5]. The value function is a separate dense MLP of the policy's hidden sizes (the paper structures the policy;
Table 1 counts the policy only).

Rollouts run on the CPU in numpy (one environment, the policy's dense weight matrices materialised once per
iteration, so a step costs three small matmuls); the update is one jitted minibatch step shared by every call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rflib import _checks
from rflib.experiments import policies
from rflib.experiments.progress_bars import bar


@dataclass(frozen=True)
class PPOConfig:
    """PPO hyperparameters (baselines ppo1 MuJoCo defaults)."""

    steps_per_iteration: int = 2048
    clip: float = 0.2
    epochs: int = 10
    minibatch: int = 64
    learning_rate: float = 3e-4
    gamma: float = 0.99
    lam: float = 0.95
    obs_clip: float = 5.0
    hidden: tuple[int, ...] = (64, 64)
    rotations: int = 200


@dataclass
class RunningMeanStd:
    """Running mean and variance of observations (parallel-variance update), as baselines' ``RunningMeanStd``."""

    shape: tuple[int, ...]
    mean: np.ndarray = field(init=False)
    var: np.ndarray = field(init=False)
    count: float = 1e-4

    def __post_init__(self):
        self.mean = np.zeros(self.shape)
        self.var = np.ones(self.shape)

    def update(self, batch: np.ndarray) -> None:
        b_mean, b_var, n = batch.mean(0), batch.var(0), batch.shape[0]
        delta, total = b_mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + b_var * n + delta**2 * self.count * n / total) / total
        self.count = total

    def normalise(self, obs: np.ndarray, clip: float) -> np.ndarray:
        return np.clip((obs - self.mean) / np.sqrt(self.var + 1e-8), -clip, clip)


def make_env(name: str):
    """A gymnasium environment, with an error that names the fix when gymnasium or MuJoCo is missing."""
    try:
        import gymnasium
    except ModuleNotFoundError as exc:  # pragma: no cover - exercised only without the dependency
        raise RuntimeError(
            "the RL experiments need gymnasium[mujoco]; run `make` (it installs the pinned versions)"
        ) from exc
    return gymnasium.make(name)


def _value_init(key, sizes):
    params = []
    for i, (d_in, d_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        params.append(
            {"w": jax.random.normal(jax.random.fold_in(key, i), (d_out, d_in)) / math.sqrt(d_in), "b": jnp.zeros(d_out)}
        )
    return params


def _value(params, obs):
    h = obs
    for i, layer in enumerate(params):
        h = h @ layer["w"].T + layer["b"]
        if i < len(params) - 1:
            h = jnp.tanh(h)
    return h[..., 0]


def gae(rewards, values, dones, last_value, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimation.  rewards, values, dones: (T,); dones[t] = episode ended after step t
    (terminated; truncation is bootstrapped by the caller through ``values``).  Returns (advantages, returns)."""
    T = len(rewards)
    adv = np.zeros(T)
    next_value, running = last_value, 0.0
    for t in reversed(range(T)):
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * nonterminal - values[t]
        running = delta + gamma * lam * nonterminal * running
        adv[t] = running
        next_value = values[t]
    return adv, adv + values


TASK_SIZES = {
    "InvertedPendulum-v5": (4, 1),
    "InvertedDoublePendulum-v5": (9, 1),
    "Swimmer-v5": (8, 2),
    "Hopper-v5": (11, 3),
    "HalfCheetah-v5": (17, 6),
    "Walker2d-v5": (17, 6),
}
"""gymnasium v5 MuJoCo tasks → (observation, action) dimensions, for counting parameters without a simulator."""

OPTIMIZER = optax.inject_hyperparams(optax.adam)(learning_rate=3e-4, eps=1e-5)


@partial(jax.jit, static_argnames=("architecture", "sizes"))
def _update(params, opt_state, batch, clip, planes, *, architecture, sizes):
    """One PPO minibatch step (clipped surrogate + value regression); compiled once per architecture and sizes."""
    structure = policies.Structure(architecture, sizes, planes)

    def loss_fn(p):
        logp = policies.log_prob(p["policy"], structure, batch["obs"], batch["actions"])
        ratio = jnp.exp(logp - batch["logp"])
        adv = batch["adv"]
        surrogate = jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - clip, 1 + clip) * adv)
        value_loss = jnp.mean((_value(p["value"], batch["obs"]) - batch["returns"]) ** 2)
        return -jnp.mean(surrogate) + value_loss

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def _numpy_policy(params, structure):
    mats = [np.asarray(W) for W in policies.weight_matrices(params, structure)]
    biases = [np.asarray(layer["b"]) for layer in params["layers"]]
    std = np.exp(np.asarray(params["log_std"]))

    def mean(obs):
        h = obs
        for i, (W, b) in enumerate(zip(mats, biases, strict=True)):
            h = h @ W.T + b
            if i < len(mats) - 1:
                h = np.tanh(h)
        return h

    return mean, std


def train_ppo(
    env_name: str,
    architecture: str,
    total_steps: int,
    seed: int = 0,
    config: PPOConfig = PPOConfig(),
    *,
    progress: bool = False,
) -> dict:
    """Train one policy with PPO.  Returns {"steps": (I,), "return": (I,) mean return of the episodes finished in
    each iteration (NaN if none), "episodes": [(step, return), …], "parameters": trainable policy numbers}.
    ``progress``: show a bar over the PPO iterations."""
    total_steps = _checks.positive_int("total_steps", total_steps)
    env = make_env(env_name)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    key = jax.random.key(seed)
    k_pol, k_val = jax.random.split(key)
    pol, structure = policies.init(k_pol, architecture, obs_dim, act_dim, config.hidden, config.rotations)
    params = {"policy": pol, "value": _value_init(k_val, (obs_dim, *config.hidden, 1))}
    iterations = max(1, total_steps // config.steps_per_iteration)
    opt_state = OPTIMIZER.init(params)
    rms = RunningMeanStd((obs_dim,))
    rng = np.random.default_rng(seed)
    value_fn = jax.jit(_value)

    obs, _ = env.reset(seed=seed)
    episode_return, episodes, curve_steps, curve_returns = 0.0, [], [], []
    T = config.steps_per_iteration
    for it in bar(range(iterations), f"PPO {architecture} on {env_name}", progress):
        mean_fn, std = _numpy_policy(params["policy"], structure)
        raw_obs = np.zeros((T, obs_dim))
        acts, logps, rewards, dones = np.zeros((T, act_dim)), np.zeros(T), np.zeros(T), np.zeros(T)
        bootstrap = np.zeros(T)  # value of the truncated episode's final observation, added to its reward
        truncated_at = []
        finished = []
        for t in range(T):
            raw_obs[t] = obs
            o = rms.normalise(obs, config.obs_clip)
            mu = mean_fn(o)
            a = mu + std * rng.standard_normal(act_dim)
            logps[t] = float(np.sum(-0.5 * ((a - mu) / std) ** 2 - np.log(std) - 0.5 * math.log(2 * math.pi)))
            acts[t] = a
            obs, r, terminated, truncated, _ = env.step(a)
            rewards[t], episode_return = r, episode_return + r
            if terminated or truncated:
                dones[t] = 1.0
                if truncated and not terminated:
                    truncated_at.append((t, obs.copy()))
                finished.append(episode_return)
                episodes.append((it * T + t + 1, episode_return))
                episode_return = 0.0
                obs, _ = env.reset()
        norm_obs = rms.normalise(raw_obs, config.obs_clip)
        values = np.asarray(value_fn(params["value"], jnp.asarray(norm_obs)))
        for t, final_obs in truncated_at:
            bootstrap[t] = config.gamma * float(
                value_fn(params["value"], jnp.asarray(rms.normalise(final_obs, config.obs_clip)))
            )
        last_value = float(value_fn(params["value"], jnp.asarray(rms.normalise(obs, config.obs_clip))))
        adv, returns = gae(rewards + bootstrap, values, dones, last_value, config.gamma, config.lam)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        fraction_left = 1 - it / iterations  # baselines' linear schedule, per iteration
        clip = config.clip * fraction_left
        opt_state.hyperparams["learning_rate"] = jnp.asarray(config.learning_rate * fraction_left)
        data = {"obs": norm_obs, "actions": acts, "logp": logps, "adv": adv, "returns": returns}
        for _ in range(config.epochs):
            order = rng.permutation(T)
            for start in range(0, T - config.minibatch + 1, config.minibatch):
                idx = order[start : start + config.minibatch]
                batch = {k: jnp.asarray(v[idx], jnp.float32) for k, v in data.items()}
                params, opt_state, _ = _update(
                    params, opt_state, batch, clip, structure.planes, architecture=architecture, sizes=structure.sizes
                )
        rms.update(raw_obs)
        curve_steps.append((it + 1) * T)
        curve_returns.append(float(np.mean(finished)) if finished else float("nan"))
    env.close()
    return {
        "steps": np.array(curve_steps),
        "return": np.array(curve_returns),
        "episodes": episodes,
        "parameters": policies.parameter_count(architecture, obs_dim, act_dim, config.hidden, config.rotations),
    }


# --- studies: many runs and their summaries (KAMA-NNs §6.2, Figs 3 and 5) ------------------------------------------


def _seed_for(seed_for):
    _checks.callable_arg("seed_for", seed_for, "an integer seed")
    return seed_for


def train_runs(
    tasks: dict,
    seed_for,
    *,
    architectures=policies.ARCHITECTURES,
    config: PPOConfig = PPOConfig(),
    progress: bool = False,
) -> dict:
    """Fig 3: one PPO run from scratch (:func:`train_ppo`) per (task, architecture, seed index).

    tasks: {env name: (environment steps per run, number of seeds)}; seed_for: ``seed_for(env, s)`` → the integer seed
    of run s on env (the same for every architecture, so they see the same environment seeds).
    Returns {(env, architecture, s): train_ppo's result}. ``progress``: a bar over the seeds of each (task,
    architecture).
    """
    seed_for = _seed_for(seed_for)
    for a in architectures:
        policies.parameter_count(a, 1, 1)  # names an unknown architecture before any run
    runs = {}
    for env, (steps, n_seeds) in tasks.items():
        _checks.positive_int(f"tasks[{env!r}] seeds", n_seeds)
        for architecture in architectures:
            for s in bar(range(n_seeds), f"{env}, {architecture}", progress):
                runs[env, architecture, s] = train_ppo(
                    env, architecture, steps, seed=seed_for(env, s), config=config, progress=False
                )
    return runs


def rotation_ablation(
    env: str, steps: int, n_seeds: int, rotations, seed_for, *, config: PPOConfig = PPOConfig(), progress: bool = False
) -> dict:
    """Fig 5: PPO runs of KAMA policies with K rotations per matrix (``config`` with ``rotations=K``), for every K of
    ``rotations`` and seeds ``seed_for(s)``, s < n_seeds.  Returns {K: [train_ppo's result per seed]}. ``progress``: a
    bar over the K."""
    seed_for = _seed_for(seed_for)
    n_seeds = _checks.positive_int("n_seeds", n_seeds)
    rotations = [_checks.positive_int("rotations", K) for K in rotations]
    ablation = {}
    for K in bar(rotations, f"K ablation on {env}", progress):
        config_k = replace(config, rotations=K)
        ablation[K] = [
            train_ppo(env, "kama", steps, seed=seed_for(s), config=config_k, progress=False) for s in range(n_seeds)
        ]
    return ablation


def learning_curves(runs: dict, env: str, architecture: str) -> tuple[np.ndarray, np.ndarray]:
    """(environment steps (I,) of seed 0's run, per-iteration mean returns (seeds, I)) of :func:`train_runs`'s runs
    of ``architecture`` on ``env``, seeds in order."""
    n_seeds = sum(1 for e, a, _ in runs if (e, a) == (env, architecture))
    if n_seeds == 0:
        raise ValueError(f"runs has no run of {architecture!r} on {env!r}")
    return runs[env, architecture, 0]["steps"], np.array([runs[env, architecture, s]["return"] for s in range(n_seeds)])


def final_score(returns) -> float:
    """A run's final score: the NaN-ignoring mean of the per-iteration mean returns over the last quarter of the
    iterations (at least one).  returns: (I,)."""
    r = np.asarray(returns, dtype=float)
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"returns must be a non-empty (iterations,) curve, got shape {r.shape}")
    tail = r[-max(1, len(r) // 4) :]
    return float(np.nanmean(tail))


def final_scores(runs: dict) -> dict:
    """{(env, architecture): [:func:`final_score` of each seed's run, in seed order]} from :func:`train_runs`'s runs."""
    scores = {}
    for (env, architecture, _), run in runs.items():
        scores.setdefault((env, architecture), []).append(final_score(run["return"]))
    return scores


def score_summary(scores: dict) -> dict:
    """{key: (mean, std) over seeds} of :func:`final_scores`'s (or any {key: [score per seed]}) scores."""
    return {k: (float(np.mean(v)), float(np.std(v))) for k, v in scores.items()}


def learning_progress(runs: dict, scores: dict, architectures=policies.ARCHITECTURES) -> tuple[dict, dict]:
    """Learning progress = mean final score − the task's start, where the start is the mean first-iteration return
    of all its runs (≈ a random policy), so tasks with negative returns compare correctly.

    runs: :func:`train_runs`'s; scores: :func:`final_scores`'s.  Returns ({env: start}, {env: {architecture:
    progress}}).
    """
    envs = list(dict.fromkeys(env for env, _, _ in runs))
    n_seeds = {env: 1 + max(s for e, _, s in runs if e == env) for env in envs}
    start = {
        env: float(np.nanmean([runs[env, a, s]["return"][0] for a in architectures for s in range(n_seeds[env])]))
        for env in envs
    }
    progress = {env: {a: float(np.mean(scores[env, a])) - start[env] for a in architectures} for env in envs}
    return start, progress


def rank_correlation(scores_by_k: dict) -> float:
    """Spearman ρ between K and the final scores of :func:`rotation_ablation`'s runs ({K: [score per seed]}, one
    point per run), or NaN with fewer than three K (Fig 5's "improves with K")."""
    from scipy import stats

    Ks = list(scores_by_k)
    counts = {len(v) for v in scores_by_k.values()}
    if len(counts) != 1:
        raise ValueError(f"scores_by_k must hold the same number of seeds for every K, got counts {sorted(counts)}")
    if len(Ks) <= 2:
        return float("nan")
    return stats.spearmanr(np.repeat(Ks, counts.pop()), np.concatenate([scores_by_k[K] for K in Ks])).statistic


def rank_trend(scores_by_k: dict) -> tuple[float, float, float]:
    """Spearman's test of "the score grows with K" over :func:`rotation_ablation`'s runs ({K: [score per seed]}, one
    point per run): (ρ, one-sided p-value for an increasing trend, one-sided p-value for a decreasing one); NaNs with
    fewer than three K."""
    from scipy import stats

    rho = rank_correlation(scores_by_k)
    if not np.isfinite(rho):
        return float("nan"), float("nan"), float("nan")
    Ks = list(scores_by_k)
    x = np.repeat(Ks, len(scores_by_k[Ks[0]]))
    y = np.concatenate([scores_by_k[K] for K in Ks])
    return (
        float(rho),
        float(stats.spearmanr(x, y, alternative="greater").pvalue),
        float(stats.spearmanr(x, y, alternative="less").pvalue),
    )
