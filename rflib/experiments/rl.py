"""PPO (clipped surrogate, Schulman et al. 2017) and TRPO (Schulman et al. 2015) for the dense / KAMA / Toeplitz
policies of :mod:`rflib.experiments.policies`, on gymnasium MuJoCo tasks (KAMA-NNs §6.2, Figs 3–5).

Hyperparameters default to OpenAI baselines (the paper's implementation). PPO as ``ppo1/run_mujoco.py``
(:class:`PPOConfig`): 2 048 steps per iteration, clip 0.2, entropy coefficient 0, 10 epochs, Adam 3·10⁻⁴ with a
linear schedule (learning rate and clip both decay to 0), minibatch 64, γ = 0.99, λ = 0.95. TRPO as
``trpo_mpi/run_mujoco.py`` (:class:`TRPOConfig`): 1 024 steps per iteration, max KL 0.01, 10 conjugate-gradient
steps with damping 0.1, a halving line search, λ = 0.98, 5 value epochs of Adam 10⁻³ (ε = 10⁻⁸) in minibatches of
64; the Fisher-vector products use the whole batch (baselines subsamples every 5th step). Both normalise
observations by a running mean/std clipped to [−5, 5]. The value function is a separate dense MLP of the policy's
hidden sizes (the paper structures the policy; Table 1 counts the policy only).

:func:`train` runs several seeds of one (task, policy) in lockstep in one process: rollouts on the CPU in numpy (the
policies' dense weight matrices materialised once per iteration and stacked, so a step costs three batched small
matmuls), and one jitted update per iteration (:func:`_ppo_iteration` scans every minibatch step,
:func:`_trpo_iteration` does the whole TRPO step), ``vmap``-ed over the runs for dense and Toeplitz policies and
mapped over them one after another for KAMA (:func:`_over_runs`). :func:`run_jobs` spreads such batches over
processes, and :func:`run_plans` the batches of several studies (Figs 3, 4 and 5) in one pool.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import jax
import jax.flatten_util
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

    @property
    def scale(self) -> np.ndarray:
        return np.sqrt(self.var + 1e-8)

    def normalise(self, obs: np.ndarray, clip: float) -> np.ndarray:
        return _standardise(obs, self.mean, self.scale, clip)


def _standardise(obs, mean, scale, clip: float) -> np.ndarray:
    """(obs − mean) / scale clipped to [−clip, clip], elementwise: one run's normaliser, or the runs' stacked
    (:func:`_stacked_normalisers`) applied to their observations at once — the same numbers either way."""
    return np.clip((obs - mean) / scale, -clip, clip)


def _stacked_normalisers(rms: list[RunningMeanStd]) -> tuple[np.ndarray, np.ndarray]:
    """The runs' observation means and scales, stacked: (N, obs_dim) each."""
    return np.stack([r.mean for r in rms]), np.stack([r.scale for r in rms])


# The pins of pyproject.toml, for the install command a missing-package error names.
GYMNASIUM_INSTALL = "pip install 'gymnasium[mujoco]==1.4.0' 'mujoco==4.0.0'"


def _missing_simulator(what: str) -> RuntimeError:
    return RuntimeError(
        f"the RL experiments need {what}, which is not installed. Run `make` (it installs the pinned versions), or "
        f"`{GYMNASIUM_INSTALL}` in the project's environment"
    )


def make_env(name: str):
    """A gymnasium environment, with an error that names the pinned install command when gymnasium or MuJoCo is
    missing, and one that lists the known tasks for an unknown name."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a gymnasium task id such as 'Hopper-v5', got {name!r}")
    try:
        import gymnasium
        from gymnasium.error import DependencyNotInstalled
    except ModuleNotFoundError as exc:
        raise _missing_simulator("gymnasium") from exc
    try:
        return gymnasium.make(name)
    except DependencyNotInstalled as exc:
        raise _missing_simulator("MuJoCo (gymnasium's mujoco extra)") from exc
    except gymnasium.error.Error as exc:  # an unknown or misspelt id
        known = sorted(TASK_SIZES)
        raise ValueError(f"name {name!r} is not a gymnasium task ({exc}); the paper's are {known}") from exc


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


@dataclass(frozen=True)
class TRPOConfig:
    """TRPO hyperparameters (baselines ``trpo_mpi/run_mujoco.py`` defaults; KAMA-NNs Fig 4's policies are 2×32 with
    K = 100 rotations per matrix)."""

    steps_per_iteration: int = 1024
    max_kl: float = 0.01
    cg_iters: int = 10
    cg_damping: float = 0.1
    backtracks: int = 10
    gamma: float = 0.99
    lam: float = 0.98
    vf_iters: int = 5
    vf_learning_rate: float = 1e-3
    minibatch: int = 64
    obs_clip: float = 5.0
    hidden: tuple[int, ...] = (32, 32)
    rotations: int = 100


ADAM = optax.scale_by_adam(eps=1e-5)  # PPO's Adam direction (baselines ppo1); the scheduled learning rate scales it
VF_ADAM = optax.scale_by_adam(eps=1e-8)  # TRPO's value-function Adam (baselines' MpiAdam)


def _adam_step(params, opt_state, grads, lr, adam=ADAM):
    updates, opt_state = adam.update(grads, opt_state, params)
    return jax.tree.map(lambda p, u: p - lr * u, params, updates), opt_state


def _minibatches(data, perms):
    """Scan over minibatches: perms (B, minibatch) row indices of data's (T, ...) arrays."""
    return jax.tree.map(lambda v: v[perms], data)


@partial(jax.jit, static_argnames=("architecture", "sizes"))
def _ppo_iteration(params, opt_state, data, perms, lr, clip, planes, *, architecture, sizes):
    """One PPO iteration for a stack of runs: every epoch's minibatch steps (clipped surrogate + value regression,
    Adam) in one ``lax.scan`` per run, over the runs by :func:`_over_runs`.  data: (N, T, …); perms: (N, steps,
    minibatch)."""

    def one_run(params, opt_state, data, perms, planes):
        structure = policies.Structure(architecture, sizes, planes)

        def loss_fn(p, batch):
            logp = policies.log_prob(p["policy"], structure, batch["obs"], batch["actions"])
            ratio = jnp.exp(logp - batch["logp"])
            adv = batch["adv"]
            surrogate = jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - clip, 1 + clip) * adv)
            value_loss = jnp.mean((_value(p["value"], batch["obs"]) - batch["returns"]) ** 2)
            return -jnp.mean(surrogate) + value_loss

        def step(carry, batch):
            params, opt_state = carry
            grads = jax.grad(loss_fn)(params, batch)
            return _adam_step(params, opt_state, grads, lr), None

        (params, opt_state), _ = jax.lax.scan(step, (params, opt_state), _minibatches(data, perms))
        return params, opt_state

    return _over_runs(one_run, architecture)(params, opt_state, data, perms, planes)


def _gaussian_kl(mean_old, log_std_old, mean_new, log_std_new):
    """KL(N(mean_old, σ_old²) ‖ N(mean_new, σ_new²)) of diagonal Gaussians over the action dims: (..., a) → (...)."""
    var_old, var_new = jnp.exp(2 * log_std_old), jnp.exp(2 * log_std_new)
    return jnp.sum(log_std_new - log_std_old + (var_old + (mean_old - mean_new) ** 2) / (2 * var_new) - 0.5, axis=-1)


def conjugate_gradient(matvec, b, iters: int):
    """Solve A x = b for a symmetric positive definite A given as ``matvec`` by ``iters`` CG steps from x = 0 (as
    baselines' ``cg``, residual tolerance 1e-10 → stop updating). b: (n,) → x: (n,)."""

    def body(_, state):
        x, r, p, rr = state
        Ap = matvec(p)
        alpha = rr / jnp.maximum(p @ Ap, 1e-30)
        live = rr > 1e-10
        x = jnp.where(live, x + alpha * p, x)
        r_new = jnp.where(live, r - alpha * Ap, r)
        rr_new = r_new @ r_new
        p = jnp.where(live, r_new + (rr_new / jnp.maximum(rr, 1e-30)) * p, p)
        return x, r_new, p, jnp.where(live, rr_new, rr)

    x0 = jnp.zeros_like(b)
    x, _, _, _ = jax.lax.fori_loop(0, iters, body, (x0, b, b, b @ b))
    return x


@partial(jax.jit, static_argnames=("architecture", "sizes", "config"))
def _trpo_iteration(params, vf_state, data, vf_perms, planes, *, architecture, sizes, config: TRPOConfig):
    """One TRPO iteration for a stack of runs (Schulman et al. 2015, as baselines' ``trpo_mpi``): the natural
    gradient of the surrogate by ``cg_iters`` conjugate-gradient steps on the Fisher (the Hessian of the mean KL,
    damped), scaled to KL = max_kl, then a backtracking line search (halving, at most ``backtracks`` steps; accept
    the first step with KL ≤ 1.5·max_kl and a positive improvement, else keep the old policy); then ``vf_iters``
    epochs of Adam on the value function. Over the runs by :func:`_over_runs`. Returns (params, vf_state, accepted
    KL)."""

    def one_run(params, vf_state, data, vf_perms, planes):
        structure = policies.Structure(architecture, sizes, planes)
        flat, unravel = jax.flatten_util.ravel_pytree(params["policy"])
        obs, actions, adv, logp_old = data["obs"], data["actions"], data["adv"], data["logp"]
        mean_old = jax.lax.stop_gradient(policies.mean_action(params["policy"], structure, obs))
        log_std_old = jax.lax.stop_gradient(params["policy"]["log_std"])

        def surrogate(f):
            return jnp.mean(jnp.exp(policies.log_prob(unravel(f), structure, obs, actions) - logp_old) * adv)

        def mean_kl(f):
            p = unravel(f)
            return jnp.mean(_gaussian_kl(mean_old, log_std_old, policies.mean_action(p, structure, obs), p["log_std"]))

        g = jax.grad(surrogate)(flat)

        def fisher_vector(v):
            return jax.jvp(jax.grad(mean_kl), (flat,), (v,))[1] + config.cg_damping * v

        x = conjugate_gradient(fisher_vector, g, config.cg_iters)
        shs = 0.5 * x @ fisher_vector(x)
        full_step = x * jnp.sqrt(config.max_kl / jnp.maximum(shs, 1e-30))
        fractions = 0.5 ** jnp.arange(config.backtracks)
        candidates = flat + fractions[:, None] * full_step
        surr_new, kl_new = jax.vmap(surrogate)(candidates), jax.vmap(mean_kl)(candidates)
        ok = jnp.isfinite(surr_new) & (kl_new <= 1.5 * config.max_kl) & (surr_new - surrogate(flat) > 0)
        chosen = jnp.argmax(ok)
        accepted = jnp.any(ok)
        new_flat = jnp.where(accepted & jnp.all(jnp.isfinite(full_step)), candidates[chosen], flat)
        policy = unravel(new_flat)

        def value_step(carry, batch):
            value_params, state = carry
            grads = jax.grad(lambda v: jnp.mean((_value(v, batch["obs"]) - batch["returns"]) ** 2))(value_params)
            return _adam_step(value_params, state, grads, config.vf_learning_rate, VF_ADAM), None

        (value, vf_state), _ = jax.lax.scan(
            value_step, (params["value"], vf_state), _minibatches({"obs": obs, "returns": data["returns"]}, vf_perms)
        )
        return {"policy": policy, "value": value}, vf_state, jnp.where(accepted, kl_new[chosen], 0.0)

    return _over_runs(one_run, architecture)(params, vf_state, data, vf_perms, planes)


def _over_runs(one_run, architecture: str):
    """one_run over the stack of runs: ``vmap`` for dense and Toeplitz policies; one run after another for KAMA,
    whose weight matrices are Givens scans updated in place — batched over runs they would go through XLA:CPU's
    generic gathers and scatters (measured 3–5× slower for the Givens gradient, ``benchmarks --suite
    kama_gradients``, and 2–4× for the whole update)."""
    if architecture != "kama":
        return jax.vmap(one_run)
    return lambda *args: jax.lax.map(lambda run: one_run(*run), args)


def _stack(trees):
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *trees)


def _numpy_policies(params, structures):
    """Per run: the dense weight matrices, biases and action std as numpy, stacked over runs: mats[l] (N, out, in)."""
    mats, biases = [], []
    for i, structure in enumerate(structures):
        one = jax.tree.map(lambda v, i=i: v[i], params["policy"])
        mats.append([np.asarray(W) for W in policies.weight_matrices(one, structure)])
        biases.append([np.asarray(layer["b"]) for layer in one["layers"]])
    stacked_mats = [np.stack(layer) for layer in zip(*mats, strict=True)]
    stacked_biases = [np.stack(layer) for layer in zip(*biases, strict=True)]
    return stacked_mats, stacked_biases, np.exp(np.asarray(params["policy"]["log_std"]))


def _mean_actions(mats, biases, obs):
    h = obs
    for i, (W, b) in enumerate(zip(mats, biases, strict=True)):
        h = np.einsum("noi,ni->no", W, h) + b
        if i < len(mats) - 1:
            h = np.tanh(h)
    return h


def train(
    env_name: str,
    architecture: str,
    total_steps: int,
    seeds,
    *,
    algorithm: str = "ppo",
    config: PPOConfig | TRPOConfig | None = None,
    progress: bool = False,
) -> list[dict]:
    """Train one policy per seed with PPO or TRPO, all runs in lockstep in one process: the runs' environments are
    stepped one after another, their policies evaluated together (stacked numpy matmuls) and updated by one jitted
    call per iteration (:func:`_ppo_iteration`, :func:`_trpo_iteration`). Each run has its own
    environment (reset with its seed), observation normaliser, action-noise and minibatch generator
    (``np.random.default_rng(seed)``) and initial parameters (``jax.random.key(seed)``), so a run's result does not
    depend on which runs share its batch, up to float round-off: a batch of another size compiles to other code
    (batched matmuls of dense and Toeplitz updates; for KAMA, whose updates run one after another, a batch of one
    drops XLA's loop), and a run diverges from round-off over iterations.

    Args:
      env_name: a gymnasium task; architecture: one of ``policies.ARCHITECTURES``; total_steps: environment steps
        per run (whole iterations, at least one); seeds: integer seeds, one run each.
      algorithm: ``"ppo"`` (:class:`PPOConfig`) or ``"trpo"`` (:class:`TRPOConfig`); config: defaults to the
        algorithm's.
    Returns:
      Per seed, {"steps": (I,), "return": (I,) mean return of the episodes finished in each iteration (NaN if none),
      "episodes": [(step, return), …], "parameters": trainable policy numbers, "seconds": wall time of the batch,
      "batch_size": its number of runs, "env_steps": environment steps of the run, "action_reach": the hidden units
      and observation inputs its action can read (:func:`policies.action_reach`); TRPO also "kl": the KL of each
      iteration's accepted step, 0 when the line search kept the old policy}.
    """
    config = _algorithm_config(algorithm, config)
    total_steps = _checks.positive_int("total_steps", total_steps)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one run")
    start_time = time.perf_counter()
    envs = [make_env(env_name) for _ in seeds]
    obs_dim, act_dim = envs[0].observation_space.shape[0], envs[0].action_space.shape[0]
    inits = []
    for seed in seeds:
        k_pol, k_val = jax.random.split(jax.random.key(seed))
        pol, structure = policies.init(k_pol, architecture, obs_dim, act_dim, config.hidden, config.rotations)
        inits.append(({"policy": pol, "value": _value_init(k_val, (obs_dim, *config.hidden, 1))}, structure))
    params = _stack([p for p, _ in inits])
    structures = [s for _, s in inits]
    planes = _stack([s.planes for s in structures]) if architecture == "kama" else None
    sizes = structures[0].sizes
    opt_state = jax.vmap(ADAM.init)(params) if algorithm == "ppo" else jax.vmap(VF_ADAM.init)(params["value"])
    N, T = len(seeds), config.steps_per_iteration
    iterations = max(1, total_steps // T)
    rms = [RunningMeanStd((obs_dim,)) for _ in seeds]
    rngs = [np.random.default_rng(seed) for seed in seeds]
    value_fn = jax.jit(jax.vmap(_value))
    obs = np.stack([env.reset(seed=seed)[0] for env, seed in zip(envs, seeds, strict=True)])
    ep_return = np.zeros(N)
    episodes = [[] for _ in seeds]
    curves, kls = np.zeros((N, iterations)), np.zeros((N, iterations))
    for it in bar(range(iterations), f"{algorithm.upper()} {architecture} on {env_name} × {N}", progress):
        mats, biases, std = _numpy_policies(params, structures)
        mean, scale = _stacked_normalisers(rms)  # fixed until the iteration's update
        # each run's T action-noise draws at once: the same numbers, in the same order, as one draw per step
        noises = np.stack([rng.standard_normal((T, act_dim)) for rng in rngs])
        logps = np.sum(-0.5 * noises**2 - np.log(std)[:, None] - 0.5 * math.log(2 * math.pi), axis=2)
        raw_obs, acts = np.zeros((N, T, obs_dim)), np.zeros((N, T, act_dim))
        rewards, dones, bootstrap_obs = np.zeros((N, T)), np.zeros((N, T)), {}
        finished = [[] for _ in seeds]
        for t in range(T):
            raw_obs[:, t] = obs
            mu = _mean_actions(mats, biases, _standardise(obs, mean, scale, config.obs_clip))
            a = mu + std * noises[:, t]
            acts[:, t] = a
            for n, env in enumerate(envs):
                ob, r, terminated, truncated, _ = env.step(a[n])
                rewards[n, t] = r
                ep_return[n] += r
                if terminated or truncated:
                    dones[n, t] = 1.0
                    if truncated and not terminated:
                        bootstrap_obs[n, t] = ob.copy()
                    finished[n].append(ep_return[n])
                    episodes[n].append((it * T + t + 1, float(ep_return[n])))
                    ep_return[n] = 0.0
                    ob, _ = env.reset()
                obs[n] = ob
        norm_obs = _standardise(raw_obs, mean[:, None], scale[:, None], config.obs_clip)
        values = np.asarray(value_fn(params["value"], jnp.asarray(norm_obs)))
        last = _standardise(obs, mean, scale, config.obs_clip)
        last_values = np.asarray(value_fn(params["value"], jnp.asarray(last[:, None, :])))[:, 0]
        bootstrap = np.zeros((N, T))
        for (n, t), final in bootstrap_obs.items():  # a truncated episode's return continues past its end
            final_obs = jax.tree.map(lambda v, n=n: v[n], params["value"])
            bootstrap[n, t] = config.gamma * float(
                _value(final_obs, jnp.asarray(rms[n].normalise(final, config.obs_clip)))
            )
        adv, returns = np.zeros((N, T)), np.zeros((N, T))
        for n in range(N):
            adv[n], returns[n] = gae(
                rewards[n] + bootstrap[n], values[n], dones[n], last_values[n], config.gamma, config.lam
            )
        adv = (adv - adv.mean(axis=1, keepdims=True)) / (adv.std(axis=1, keepdims=True) + 1e-8)
        data = {"obs": norm_obs, "actions": acts, "logp": logps, "adv": adv, "returns": returns}
        data = {k: jnp.asarray(v, jnp.float32) for k, v in data.items()}
        per_epoch = T // config.minibatch
        epochs = config.epochs if algorithm == "ppo" else config.vf_iters
        perms = np.stack(
            [
                np.concatenate([rng.permutation(T)[: per_epoch * config.minibatch] for _ in range(epochs)]).reshape(
                    -1, config.minibatch
                )
                for rng in rngs
            ]
        )
        if algorithm == "ppo":
            fraction_left = 1 - it / iterations  # baselines' linear schedule, per iteration
            params, opt_state = _ppo_iteration(
                params,
                opt_state,
                data,
                jnp.asarray(perms),
                config.learning_rate * fraction_left,
                config.clip * fraction_left,
                planes,
                architecture=architecture,
                sizes=sizes,
            )
        else:
            params, opt_state, kl = _trpo_iteration(
                params,
                opt_state,
                data,
                jnp.asarray(perms),
                planes,
                architecture=architecture,
                sizes=sizes,
                config=config,
            )
            kls[:, it] = np.asarray(kl)
        for n in range(N):
            rms[n].update(raw_obs[n])
            curves[n, it] = float(np.mean(finished[n])) if finished[n] else float("nan")
    for env in envs:
        env.close()
    seconds = time.perf_counter() - start_time
    count = policies.parameter_count(architecture, obs_dim, act_dim, config.hidden, config.rotations)
    steps = (np.arange(iterations) + 1) * T
    return [
        {
            "steps": steps,
            "return": curves[n],
            "episodes": episodes[n],
            "parameters": count,
            "seconds": seconds,
            "batch_size": N,
            "env_steps": iterations * T,
            "action_reach": policies.action_reach(structures[n]),
            **({"kl": kls[n].tolist()} if algorithm == "trpo" else {}),
        }
        for n in range(N)
    ]


def train_ppo(
    env_name: str,
    architecture: str,
    total_steps: int,
    seed: int = 0,
    config: PPOConfig = PPOConfig(),
    *,
    progress: bool = False,
) -> dict:
    """One PPO run: :func:`train` with a single seed (its result dict)."""
    return train(env_name, architecture, total_steps, [seed], config=config, progress=progress)[0]


# --- studies: many runs and their summaries (KAMA-NNs §6.2, Figs 3 and 5) ------------------------------------------


def _algorithm_config(algorithm: str, config) -> PPOConfig | TRPOConfig:
    """The config checked against the algorithm: ``"ppo"`` takes a :class:`PPOConfig`, ``"trpo"`` a
    :class:`TRPOConfig` (None: the algorithm's defaults)."""
    _checks.one_of("algorithm", algorithm, ("ppo", "trpo"))
    config = config or (PPOConfig() if algorithm == "ppo" else TRPOConfig())
    if not isinstance(config, PPOConfig if algorithm == "ppo" else TRPOConfig):
        raise ValueError(f"config must be a {'PPOConfig' if algorithm == 'ppo' else 'TRPOConfig'} for {algorithm!r}")
    return config


def _seed_for(seed_for):
    _checks.callable_arg("seed_for", seed_for, "an integer seed")
    return seed_for


def _train_job(job) -> list[dict]:
    env, architecture, steps, seeds, algorithm, config = job
    return train(env, architecture, steps, seeds, algorithm=algorithm, config=config)


# JAX settings that change a run's numbers: a spawned worker starts with JAX's defaults (or the environment's), so it
# takes the parent's values instead (a notebook turns partitionable threefry off, which draws other random streams)
_WORKER_FLAGS = ("jax_threefry_partitionable", "jax_enable_x64")


def _configure_worker(flags: dict) -> None:
    for name, value in flags.items():
        jax.config.update(name, value)


def run_jobs(jobs, *, workers: int = 1, progress: bool = False, label: str = "runs") -> list[list[dict]]:
    """Run :func:`train` jobs — tuples (env, architecture, steps, seeds, algorithm, config), each one batch of seeds —
    and return each job's per-seed results in order. ``workers`` > 1 runs the jobs in that many processes (``spawn``:
    each starts its own JAX, configured as this process's for the settings that change numbers: the random-stream
    mode and float64), longest first. The batches are the jobs themselves whatever ``workers`` is, so the results
    do not depend on the number of processes. ``progress``: a bar over the jobs."""
    workers = _checks.positive_int("workers", workers)
    jobs = list(jobs)
    if workers == 1 or len(jobs) == 1:
        return [_train_job(job) for job in bar(jobs, label, progress)]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    order = sorted(range(len(jobs)), key=lambda j: -jobs[j][2] * len(jobs[j][3]))  # longest first
    results = [None] * len(jobs)
    flags = {name: bool(getattr(jax.config, name)) for name in _WORKER_FLAGS}
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_configure_worker,
        initargs=(flags,),
    ) as pool:
        futures = {pool.submit(_train_job, jobs[j]): j for j in order}
        from concurrent.futures import as_completed

        for future in bar(as_completed(futures), label, progress, total=len(jobs)):
            results[futures[future]] = future.result()
    return results


def plan_train_runs(
    tasks: dict,
    seed_for,
    *,
    architectures=policies.ARCHITECTURES,
    algorithm: str = "ppo",
    config: PPOConfig | TRPOConfig | None = None,
) -> tuple[list, Callable[[list], dict]]:
    """The jobs of :func:`train_runs` and the function that files their outputs: (jobs, assemble), for
    :func:`run_plans` to run with other studies' jobs in one pool. Every argument is checked here, before any run
    (a bad one found inside a pool would surface only after the pool's other jobs)."""
    seed_for = _seed_for(seed_for)
    config = _algorithm_config(algorithm, config)
    architectures = () if isinstance(architectures, str) else tuple(architectures)
    if not architectures:
        raise ValueError("architectures must be a non-empty sequence of names, e.g. ('dense', 'kama')")
    for a in architectures:
        policies.parameter_count(a, 1, 1)  # names an unknown architecture before any run
    if not isinstance(tasks, dict) or not tasks:
        raise ValueError("tasks must be a non-empty dict {env name: (environment steps per run, number of seeds)}")
    jobs, keys = [], []
    for env, task in tasks.items():
        if not isinstance(task, tuple | list) or len(task) != 2:
            raise ValueError(f"tasks[{env!r}] must be (environment steps per run, number of seeds), got {task!r:.60}")
        steps = _checks.positive_int(f"tasks[{env!r}] steps", task[0])
        n_seeds = _checks.positive_int(f"tasks[{env!r}] seeds", task[1])
        for architecture in architectures:
            jobs.append((env, architecture, steps, [seed_for(env, s) for s in range(n_seeds)], algorithm, config))
            keys.append((env, architecture))

    def assemble(outputs):
        return {(env, a, s): run for (env, a), runs in zip(keys, outputs, strict=True) for s, run in enumerate(runs)}

    return jobs, assemble


def train_runs(
    tasks: dict,
    seed_for,
    *,
    architectures=policies.ARCHITECTURES,
    algorithm: str = "ppo",
    config: PPOConfig | TRPOConfig | None = None,
    workers: int = 1,
    progress: bool = False,
) -> dict:
    """Figs 3 and 4: one run from scratch (:func:`train`, PPO or TRPO) per (task, architecture, seed index).

    tasks: {env name: (environment steps per run, number of seeds)}; seed_for: ``seed_for(env, s)`` → the integer seed
    of run s on env (the same for every architecture, so they see the same environment seeds). The seeds of a (task,
    architecture) are trained together in one batch; ``workers`` processes share the batches (:func:`run_jobs`).
    Returns {(env, architecture, s): the run's result}. ``progress``: a bar over the batches.
    """
    jobs, assemble = plan_train_runs(tasks, seed_for, architectures=architectures, algorithm=algorithm, config=config)
    return assemble(run_jobs(jobs, workers=workers, progress=progress, label=f"{algorithm.upper()} runs"))


def plan_rotation_ablation(
    env: str, steps: int, n_seeds: int, rotations, seed_for, *, config: PPOConfig = PPOConfig()
) -> tuple[list, Callable[[list], dict]]:
    """The jobs of :func:`rotation_ablation` and the function that files their outputs: (jobs, assemble). Every
    argument is checked here, before any run."""
    seed_for = _seed_for(seed_for)
    config = _algorithm_config("ppo", config)
    steps = _checks.positive_int("steps", steps)
    n_seeds = _checks.positive_int("n_seeds", n_seeds)
    rotations = [_checks.positive_int("rotations", K) for K in rotations]
    if not rotations or len(set(rotations)) != len(rotations):
        raise ValueError(f"rotations must name at least one K, each once, got {rotations!r:.60}")
    seeds = [seed_for(s) for s in range(n_seeds)]
    jobs = [(env, "kama", steps, seeds, "ppo", replace(config, rotations=K)) for K in rotations]
    return jobs, lambda outputs: dict(zip(rotations, outputs, strict=True))


def rotation_ablation(
    env: str,
    steps: int,
    n_seeds: int,
    rotations,
    seed_for,
    *,
    config: PPOConfig = PPOConfig(),
    workers: int = 1,
    progress: bool = False,
) -> dict:
    """Fig 5: PPO runs of KAMA policies with K rotations per matrix (``config`` with ``rotations=K``), for every K of
    ``rotations`` and seeds ``seed_for(s)``, s < n_seeds.  Returns {K: [the run's result per seed]}. ``progress``: a
    bar over the batches."""
    jobs, assemble = plan_rotation_ablation(env, steps, n_seeds, rotations, seed_for, config=config)
    return assemble(run_jobs(jobs, workers=workers, progress=progress, label=f"K ablation on {env}"))


def run_plans(plans: dict, *, workers: int = 1, progress: bool = False, label: str = "runs") -> dict:
    """Several studies' runs in one pool: plans {name: (jobs, assemble)} from :func:`plan_train_runs` and
    :func:`plan_rotation_ablation` → {name: assemble(that plan's outputs)}, the same as running each plan alone
    (the batches are the jobs), but with every job of every plan scheduled longest first over the ``workers``
    processes, so no core waits at the end of one study while another has work left."""
    if not isinstance(plans, dict) or not plans:
        raise ValueError(
            "plans must be a non-empty dict {name: (jobs, assemble)} from plan_train_runs / plan_rotation_ablation"
        )
    bounds, jobs = {}, []
    for name, plan in plans.items():
        if not (isinstance(plan, tuple) and len(plan) == 2 and isinstance(plan[0], list) and callable(plan[1])):
            raise ValueError(f"plans[{name!r}] must be (jobs, assemble) from plan_train_runs / plan_rotation_ablation")
        plan_jobs = plan[0]
        bounds[name] = (len(jobs), len(jobs) + len(plan_jobs))
        jobs += plan_jobs
    outputs = run_jobs(jobs, workers=workers, progress=progress, label=label)
    return {name: assemble(outputs[slice(*bounds[name])]) for name, (_, assemble) in plans.items()}


def random_policy_returns(env_name: str, episodes: int, seed: int) -> np.ndarray:
    """(episodes,) undiscounted returns of the uniform random policy on ``env_name``: every action drawn uniformly
    from the environment's action box, episodes run to termination or the task's time limit, the environment reset
    with ``seed``, ``seed + 1``, … and the action space seeded with ``seed``. The baseline that "a policy learns" is
    measured against (the paper's curves start from randomly initialised policies)."""
    episodes = _checks.positive_int("episodes", episodes)
    seed = _checks.integer("seed", seed, low=0)
    env = make_env(env_name)
    env.action_space.seed(seed)
    returns = np.zeros(episodes)
    try:
        for episode in range(episodes):
            env.reset(seed=seed + episode)
            done = False
            while not done:
                _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
                returns[episode] += reward
                done = terminated or truncated
    finally:
        env.close()
    return returns


def simulator_seconds_per_step(env_name: str, steps: int, seed: int) -> float:
    """Wall seconds per step of ``env_name``'s simulator alone: uniform random actions (the action space seeded with
    ``seed``), timed over ``steps`` steps after a warm-up of min(steps, 200), resets included (the environment reset
    with ``seed``, ``seed + 1``, …) at the random policy's episode lengths — shorter than a trained policy's on tasks
    that end when the body falls (Hopper, Walker2d, the pendulums), so those pay more resets here than in training.
    What the tasks differ by in a training step's cost;
    :func:`throughput` measures the whole step, policy and updates included, on the tasks actually trained."""
    steps = _checks.positive_int("steps", steps)
    seed = _checks.integer("seed", seed, low=0)
    env = make_env(env_name)
    env.action_space.seed(seed)
    episode = 0
    try:
        env.reset(seed=seed)
        for phase_steps in (min(steps, 200), steps):
            start = time.perf_counter()
            for _ in range(phase_steps):
                _, _, terminated, truncated, _ = env.step(env.action_space.sample())
                if terminated or truncated:
                    episode += 1
                    env.reset(seed=seed + episode)
            elapsed = time.perf_counter() - start
    finally:
        env.close()
    return elapsed / steps


def learned_threshold(random_returns, rng: np.random.Generator, resamples: int = 2_000) -> tuple[float, float]:
    """(threshold, its standard error): the score a policy must beat to count as learned — the uniform random
    policy's mean episode return plus one standard deviation of its episode returns (:func:`random_policy_returns`)
    — with the s.e. of that sum from ``resamples`` bootstrap resamples of the episodes (the mean and the std are
    both estimated and correlated; returns are skewed, so no normal formula).  random_returns: (episodes,)."""
    r = np.asarray(random_returns, dtype=float)
    if r.ndim != 1 or r.size < 2 or not np.all(np.isfinite(r)):
        raise ValueError(f"random_returns must be ≥ 2 finite episode returns, got shape {r.shape}")
    resamples = _checks.positive_int("resamples", resamples)
    boot = r[rng.integers(0, r.size, size=(resamples, r.size))]
    sums = boot.mean(axis=1) + boot.std(axis=1, ddof=1)
    return float(r.mean() + r.std(ddof=1)), float(sums.std(ddof=1))


def excess_over_threshold(score: float, score_se: float, threshold: tuple[float, float]) -> tuple[float, float]:
    """(excess, its standard error): a mean final score minus the :func:`learned_threshold` ``(value, s.e.)`` it must
    beat, the two independent standard errors added in quadrature."""
    score = _checks.real_number("score", score)
    score_se = _checks.real_number("score_se", score_se, low=0.0, what="a standard error")
    value = _checks.real_number("threshold value", threshold[0])
    value_se = _checks.real_number("threshold s.e.", threshold[1], low=0.0, what="a standard error")
    return score - value, math.hypot(score_se, value_se)


def throughput(runs) -> float:
    """Environment steps per second of wall time per process over results of :func:`train`: the runs of one batch
    share its wall time, so each run is charged ``seconds / batch_size``."""
    runs = list(runs)
    if not runs:
        raise ValueError("runs must hold at least one result of train()")
    return sum(r["env_steps"] for r in runs) / sum(r["seconds"] / r["batch_size"] for r in runs)


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
