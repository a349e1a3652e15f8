"""PPO for the structured policies (KAMA-NNs §6.2.1): GAE against a direct sum, the running normaliser, and a short
training run on a real MuJoCo task that is deterministic and improves the return."""

import dataclasses
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rflib.experiments import policies, rl


def test_gae_matches_the_direct_discounted_sum_and_stops_at_episode_ends():
    rng = np.random.default_rng(0)
    T, gamma, lam = 12, 0.9, 0.8
    rewards, values = rng.normal(size=T), rng.normal(size=T)
    dones = np.zeros(T)
    dones[4] = 1.0
    last_value = 0.7
    adv, returns = rl.gae(rewards, values, dones, last_value, gamma, lam)
    next_values = np.append(values[1:], last_value) * (1 - dones)
    deltas = rewards + gamma * next_values - values
    for t in range(T):
        end = 5 if t <= 4 else T  # the advantage never looks past the end of its episode
        expected = sum((gamma * lam) ** (u - t) * deltas[u] for u in range(t, end))
        assert adv[t] == pytest.approx(expected, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(returns, adv + values)


def test_running_mean_std_matches_the_batch_statistics():
    rng = np.random.default_rng(1)
    data = rng.normal(loc=3.0, scale=2.0, size=(1000, 3))
    rms = rl.RunningMeanStd((3,))
    for chunk in np.split(data, 10):
        rms.update(chunk)
    np.testing.assert_allclose(rms.mean, data.mean(0), rtol=1e-6)
    np.testing.assert_allclose(rms.var, data.var(0), rtol=1e-4)
    z = rms.normalise(np.array([[1e6, 0.0, 3.0]]), clip=5.0)
    assert z[0, 0] == 5.0 and abs(z[0, 2]) < 0.1


def test_the_runs_stacked_normalisers_give_each_run_its_own_normalisation_exactly():
    # train() normalises all runs' observations at once; each run must get exactly its own normaliser's numbers
    rng = np.random.default_rng(2)
    runs = [rl.RunningMeanStd((4,)) for _ in range(3)]
    for n, rms in enumerate(runs):
        rms.update(rng.normal(loc=n, scale=n + 1.0, size=(50, 4)))
    obs = rng.normal(scale=8.0, size=(3, 7, 4))  # (runs, steps, obs_dim), some beyond the clip
    mean, scale = rl._stacked_normalisers(runs)
    stacked = rl._standardise(obs, mean[:, None], scale[:, None], 5.0)
    one_step = rl._standardise(obs[:, 0], mean, scale, 5.0)
    for n, rms in enumerate(runs):
        np.testing.assert_array_equal(stacked[n], rms.normalise(obs[n], 5.0))
        np.testing.assert_array_equal(one_step[n], rms.normalise(obs[n, 0], 5.0))
    assert np.abs(stacked).max() == 5.0


# Small KAMA runs on InvertedDoublePendulum shared by the determinism, trust-region and batch tests below: the same
# configurations, so one compiled PPO and TRPO iteration per batch size serve them all (a TRPO iteration took 4.5 s
# to compile under this suite's flags). TRPO's max_kl is not the default, so the trust-region test sees whether the
# configured value reaches the line search.
SMALL_TASK, SMALL_STEPS, SMALL_BATCH, SMALL_ALONE = "InvertedDoublePendulum-v5", 768, [4, 7], [7]
SMALL_KAMA = {
    "ppo": rl.PPOConfig(steps_per_iteration=256, epochs=2, hidden=(8, 8), rotations=12),
    "trpo": rl.TRPOConfig(steps_per_iteration=256, hidden=(8, 8), rotations=12, max_kl=0.005),
}


def _small_kama_runs(algorithm):
    """(the batch of seeds 4 and 7, seed 7 alone): three iterations of 256 steps each."""
    config = SMALL_KAMA[algorithm]
    return tuple(
        rl.train(SMALL_TASK, "kama", SMALL_STEPS, seeds, algorithm=algorithm, config=config)
        for seeds in (SMALL_BATCH, SMALL_ALONE)
    )


@pytest.fixture(scope="module")
def small_ppo_runs():
    return _small_kama_runs("ppo")


@pytest.fixture(scope="module")
def small_trpo_runs():
    return _small_kama_runs("trpo")


def test_ppo_is_deterministic_given_the_seed(small_ppo_runs):
    """train_ppo is train with one seed, and the same seed gives the same run bit for bit."""
    run = small_ppo_runs[1][0]
    again = rl.train_ppo(SMALL_TASK, "kama", SMALL_STEPS, seed=SMALL_ALONE[0], config=SMALL_KAMA["ppo"], progress=False)
    np.testing.assert_array_equal(run["return"], again["return"])
    assert run["episodes"] == again["episodes"]
    _, structure = policies.init(
        jax.random.split(jax.random.key(SMALL_ALONE[0]))[0], "kama", 9, 1, (8, 8), SMALL_KAMA["ppo"].rotations
    )
    assert run["action_reach"] == again["action_reach"] == policies.action_reach(structure)  # the run's own planes


def test_ppo_with_a_kama_policy_learns_inverted_pendulum():
    """Four PPO iterations (8 192 steps) raise the mean episode return by more than half on a real MuJoCo task
    (seeds 0, 1, 2 gave 2.9×, 2.1×, 2.2×; a float-level change of trajectory acts like another seed)."""
    config = rl.PPOConfig(hidden=(32, 32), rotations=50)
    run = rl.train_ppo("InvertedPendulum-v5", "kama", 4 * 2048, seed=0, config=config, progress=False)
    assert run["return"][-1] > 1.5 * run["return"][0]
    assert run["parameters"] == (50 + 4 + 32) + (50 + 32 + 32) + (50 + 1 + 1)


def test_task_sizes_are_gymnasiums_observation_and_action_dimensions_and_every_task_steps():
    """All six of the paper's tasks (only two are trained at standard scale) build and simulate a full episode."""
    for name, (obs, act) in rl.TASK_SIZES.items():
        env = rl.make_env(name)
        assert (env.observation_space.shape[0], env.action_space.shape[0]) == (obs, act), name
        env.close()
        assert np.isfinite(rl.random_policy_returns(name, episodes=1, seed=0)).all(), name


TINY = rl.PPOConfig(steps_per_iteration=128, epochs=1, minibatch=64, hidden=(8, 8), rotations=12)


def test_train_runs_and_rotation_ablation_are_train_ppo_with_the_named_seeds():
    runs = rl.train_runs(
        {"InvertedPendulum-v5": (256, 2)}, lambda env, s: 100 + s, architectures=("kama", "dense"), config=TINY
    )
    assert list(runs) == [("InvertedPendulum-v5", a, s) for a in ("kama", "dense") for s in (0, 1)]
    direct = rl.train_ppo("InvertedPendulum-v5", "dense", 256, seed=101, config=TINY, progress=False)
    # trained in a batch of two seeds or alone: the same run up to the round-off of the batched matmuls
    np.testing.assert_allclose(runs["InvertedPendulum-v5", "dense", 1]["return"], direct["return"], rtol=1e-9)
    assert [s for s, _ in runs["InvertedPendulum-v5", "dense", 1]["episodes"]] == [s for s, _ in direct["episodes"]]
    ablation = rl.rotation_ablation("InvertedPendulum-v5", 128, 1, (3, 7), lambda s: 5 + s, config=TINY)
    assert [r[0]["parameters"] for r in ablation.values()] == [
        policies.parameter_count("kama", 4, 1, (8, 8), K) for K in (3, 7)
    ]
    seven = rl.train_ppo(
        "InvertedPendulum-v5", "kama", 128, seed=5, config=dataclasses.replace(TINY, rotations=7), progress=False
    )
    np.testing.assert_allclose(ablation[7][0]["return"], seven["return"], rtol=1e-9)
    with pytest.raises(ValueError, match="seed_for must be a callable"):
        rl.train_runs({"InvertedPendulum-v5": (256, 1)}, 3)
    with pytest.raises(ValueError, match="unknown architecture"):
        rl.train_runs({"InvertedPendulum-v5": (256, 1)}, lambda env, s: s, architectures=("lowrank",))


def fake_runs():
    """Two tasks, two architectures, two seeds of hand-made curves."""
    curves = {
        ("a", "dense", 0): [0.0, 2.0, 4.0, 8.0],
        ("a", "dense", 1): [2.0, 4.0, 6.0, 10.0],
        ("a", "kama", 0): [1.0, 1.0, 1.0, 4.0],
        ("a", "kama", 1): [1.0, 1.0, 1.0, np.nan],
        ("b", "dense", 0): [-4.0, -2.0, 0.0, 2.0],
        ("b", "dense", 1): [-6.0, -2.0, 0.0, 4.0],
        ("b", "kama", 0): [-5.0, -1.0, 0.0, 6.0],
        ("b", "kama", 1): [-5.0, -1.0, 0.0, 0.0],
    }
    return {k: {"steps": np.array([10, 20, 30, 40]), "return": np.array(v)} for k, v in curves.items()}


def test_final_score_is_the_nan_ignoring_mean_of_the_last_quarter():
    assert rl.final_score([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]) == 7.5
    assert rl.final_score([5.0, 1.0, 3.0]) == 3.0  # at least one iteration
    assert rl.final_score([1.0, np.nan, 2.0, 4.0, 6.0, 8.0, 9.0, np.nan]) == 9.0
    with pytest.raises(ValueError, match="non-empty"):
        rl.final_score([])


def test_scores_progress_curves_and_rank_correlation_of_known_runs():
    runs = fake_runs()
    scores = rl.final_scores(runs)
    assert list(scores) == [("a", "dense"), ("a", "kama"), ("b", "dense"), ("b", "kama")]
    assert scores["a", "dense"] == [8.0, 10.0] and scores["b", "kama"] == [6.0, 0.0]
    assert scores["a", "kama"][0] == 4.0 and np.isnan(scores["a", "kama"][1])  # no finished episode in the tail
    summary = rl.score_summary({k: v for k, v in scores.items() if k != ("a", "kama")})
    assert summary["a", "dense"] == (9.0, 1.0) and summary["b", "kama"] == (3.0, 3.0)
    start, progress = rl.learning_progress(runs, scores, architectures=("dense", "kama"))
    assert start == {"a": 1.0, "b": -5.0}  # mean first-iteration return over every run of the task
    assert progress["b"] == {"dense": 3.0 + 5.0, "kama": 3.0 + 5.0} and progress["a"]["dense"] == 8.0
    steps, curves = rl.learning_curves(runs, "b", "kama")
    np.testing.assert_array_equal(steps, [10, 20, 30, 40])
    np.testing.assert_array_equal(curves, [[-5.0, -1.0, 0.0, 6.0], [-5.0, -1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="no run"):
        rl.learning_curves(runs, "c", "kama")
    tied_k_ranks = [1.5, 1.5, 3.5, 3.5, 5.5, 5.5]  # Spearman ρ = Pearson r of (average) ranks; each K has 2 runs
    assert rl.rank_correlation({10: [1.0, 2.0], 20: [3.0, 4.0], 50: [5.0, 6.0]}) == pytest.approx(
        np.corrcoef(tied_k_ranks, [1, 2, 3, 4, 5, 6])[0, 1], rel=1e-12
    )
    assert rl.rank_correlation({10: [1.0], 20: [3.0], 50: [5.0]}) == pytest.approx(1.0)
    assert rl.rank_correlation({10: [3.0], 20: [2.0], 50: [1.0]}) == pytest.approx(-1.0)
    assert np.isnan(rl.rank_correlation({10: [1.0], 200: [2.0]}))
    # Spearman's test both ways: scores rising with K (ρ < 1 only through the tied K of each pair of seeds)
    rho, p_up, p_down = rl.rank_trend({10: [1.0, 2.0], 20: [3.0, 4.0], 50: [5.0, 6.0]})
    assert rho > 0.95 and p_up < 0.01 and p_down > 0.99 and p_up + p_down == pytest.approx(1.0)
    assert all(np.isnan(v) for v in rl.rank_trend({10: [1.0], 200: [2.0]}))
    with pytest.raises(ValueError, match="same number of seeds"):
        rl.rank_correlation({10: [1.0], 20: [1.0, 2.0], 50: [3.0]})


def test_conjugate_gradient_solves_a_symmetric_positive_definite_system():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    A = A @ A.T + 6 * np.eye(6)
    b = rng.normal(size=6)
    x = rl.conjugate_gradient(lambda v: jnp.asarray(A) @ v, jnp.asarray(b), iters=6)
    np.testing.assert_allclose(A @ np.asarray(x), b, atol=1e-9)


def test_gaussian_kl_matches_the_closed_form_and_vanishes_at_equality():
    m0, s0, m1, s1 = np.array([0.3, -1.0]), np.array([0.1, -0.4]), np.array([0.5, -0.2]), np.array([0.0, 0.2])
    expected = sum(
        np.log(np.exp(b) / np.exp(a)) + (np.exp(2 * a) + (x - y) ** 2) / (2 * np.exp(2 * b)) - 0.5
        for x, a, y, b in zip(m0, s0, m1, s1, strict=True)
    )
    assert float(rl._gaussian_kl(m0, s0, m1, s1)) == pytest.approx(expected, rel=1e-12)
    assert float(rl._gaussian_kl(m0, s0, m0, s0)) == 0.0


def test_trpo_keeps_every_accepted_step_inside_the_trust_region_and_is_deterministic(small_trpo_runs):
    """Baselines' acceptance rule: KL(old ‖ new) ≤ 1.5 max_kl, with the configured (non-default) max_kl; a run is the
    same with the same seed."""
    config = SMALL_KAMA["trpo"]
    runs = small_trpo_runs[0]
    again = rl.train(SMALL_TASK, "kama", SMALL_STEPS, SMALL_BATCH, algorithm="trpo", config=config)
    for r, a in zip(runs, again, strict=True):
        np.testing.assert_array_equal(r["return"], a["return"])
        assert len(r["kl"]) == 3 and all(0.0 <= kl <= 1.5 * config.max_kl for kl in r["kl"])
    assert max(kl for r in runs for kl in r["kl"]) > 0  # some step was taken
    with pytest.raises(ValueError, match="config must be a TRPOConfig"):
        rl.train("InvertedPendulum-v5", "kama", 256, [1], algorithm="trpo", config=rl.PPOConfig())


def test_a_kama_run_is_the_same_alone_or_in_a_batch(small_ppo_runs, small_trpo_runs):
    """KAMA runs of a batch are updated one after another (lax.map, see rl._over_runs): each run's update must use
    that run's own parameters, data and planes only. PPO and TRPO (whose Fisher products differentiate the Givens
    sweep forward), on InvertedDoublePendulum, whose rewards are continuous, so the first update reaches the second
    iteration's returns. Not bit for bit in general: a batch of one compiles to different code (XLA drops a one-trip
    loop), and under this suite's compiler flags the run's TRPO KL moved by up to 6e-10 relative in float64 at the
    default max_kl = 0.01 (bit for bit at this configuration's 0.005, and with XLA's default flags); feeding every run
    the first run's data moves returns by 5–19 % and the KL by 64 % (measured at max_kl = 0.01), so rtol = 1e-6 sits
    three orders of magnitude from either."""
    for algorithm, (batch, alone) in (("ppo", small_ppo_runs), ("trpo", small_trpo_runs)):
        np.testing.assert_allclose(batch[1]["return"], alone[0]["return"], rtol=1e-6)
        assert [s for s, _ in batch[1]["episodes"]] == [s for s, _ in alone[0]["episodes"]]
        if algorithm == "trpo":
            np.testing.assert_allclose(batch[1]["kl"], alone[0]["kl"], rtol=1e-6)


def test_run_plans_files_every_study_as_if_it_ran_alone():
    """Notebook 08 trains Figs 3–5 in one pool: each study's runs must come back under their own keys, equal to
    running that study by itself."""
    runs_args = ({"InvertedPendulum-v5": (128, 2)}, lambda env, s: 100 + s)
    ablation_args = ("InvertedPendulum-v5", 128, 1, (3, 7), lambda s: 5 + s)
    together = rl.run_plans(
        {
            "runs": rl.plan_train_runs(*runs_args, architectures=("dense",), config=TINY),
            "ablation": rl.plan_rotation_ablation(*ablation_args, config=TINY),
        }
    )
    alone = rl.train_runs(*runs_args, architectures=("dense",), config=TINY)
    assert list(together["runs"]) == list(alone)
    for key, run in alone.items():
        np.testing.assert_array_equal(together["runs"][key]["return"], run["return"])
    ablation = rl.rotation_ablation(*ablation_args, config=TINY)
    assert list(together["ablation"]) == [3, 7]
    for K, runs in ablation.items():
        np.testing.assert_array_equal(together["ablation"][K][0]["return"], runs[0]["return"])
    with pytest.raises(ValueError, match="plans must be a non-empty dict"):
        rl.run_plans({})
    with pytest.raises(ValueError, match=r"plans\['runs'\] must be \(jobs, assemble\)"):
        rl.run_plans({"runs": ([], lambda outputs: outputs, None)})
    # every argument is checked while planning, before a pool starts
    for bad, match in (
        (dict(tasks={}), "tasks must be a non-empty dict"),
        (dict(tasks={"InvertedPendulum-v5": 128}), r"tasks\['InvertedPendulum-v5'\] must be"),
        (dict(tasks={"InvertedPendulum-v5": (0, 1)}), r"tasks\['InvertedPendulum-v5'\] steps"),
        (dict(architectures="kama"), "architectures must be a non-empty sequence"),
        (dict(algorithm="sac"), "algorithm must be one of"),
        (dict(algorithm="trpo", config=TINY), "config must be a TRPOConfig"),
    ):
        args = dict(tasks={"InvertedPendulum-v5": (128, 1)}, seed_for=lambda env, s: s) | bad
        with pytest.raises(ValueError, match=match):
            rl.plan_train_runs(**args)
    with pytest.raises(ValueError, match="config must be a PPOConfig"):
        rl.plan_rotation_ablation(*ablation_args, config=rl.TRPOConfig())
    with pytest.raises(ValueError, match="each once"):
        rl.plan_rotation_ablation("InvertedPendulum-v5", 128, 1, (3, 3), lambda s: s)
    with pytest.raises(ValueError, match="steps"):
        rl.plan_rotation_ablation("InvertedPendulum-v5", 0, 1, (3,), lambda s: s)


@pytest.mark.parametrize("partitionable", [False, True])
def test_run_jobs_spread_over_processes_returns_the_single_process_results_in_order(partitionable):
    """Whatever random-stream mode this process runs (a notebook turns partitionable threefry off; the environment of
    the tests, which spawned workers inherit, sets it off too), the workers draw the same streams."""
    jobs = [
        ("InvertedPendulum-v5", "toeplitz", 128, [4, 5], "ppo", TINY),
        ("InvertedPendulum-v5", "dense", 256, [6], "ppo", TINY),
    ]
    before = jax.config.jax_threefry_partitionable
    jax.config.update("jax_threefry_partitionable", partitionable)
    try:
        alone = rl.run_jobs(jobs)
        spread = rl.run_jobs(jobs, workers=2)  # the same batches, in two spawned processes
    finally:
        jax.config.update("jax_threefry_partitionable", before)
    assert [len(x) for x in spread] == [2, 1]
    for a, b in zip(alone[0] + alone[1], spread[0] + spread[1], strict=True):
        np.testing.assert_array_equal(a["return"], b["return"])
    assert rl.throughput(alone[0]) > 0


def test_the_uniform_random_policy_baseline_is_seeded_and_runs_whole_episodes():
    """InvertedPendulum pays +1 a step until the pole falls (or the 1 000-step limit): a random policy's returns are
    whole numbers, a few steps long; the same seed repeats them exactly, another seed gives other episodes."""
    first = rl.random_policy_returns("InvertedPendulum-v5", 8, seed=3)
    assert first.shape == (8,) and np.all(first == np.round(first)) and np.all((first >= 1) & (first < 1000))
    np.testing.assert_array_equal(first, rl.random_policy_returns("InvertedPendulum-v5", 8, seed=3))
    assert not np.array_equal(first, rl.random_policy_returns("InvertedPendulum-v5", 8, seed=4))
    with pytest.raises(ValueError, match="episodes"):
        rl.random_policy_returns("InvertedPendulum-v5", 0, seed=3)


def test_the_simulator_timing_is_a_positive_time_per_step_and_refuses_bad_input():
    seconds = rl.simulator_seconds_per_step("InvertedPendulum-v5", 300, seed=1)  # episodes end: resets are timed too
    assert 0 < seconds < 0.01
    with pytest.raises(ValueError, match="steps"):
        rl.simulator_seconds_per_step("InvertedPendulum-v5", 0, seed=1)
    with pytest.raises(ValueError, match="seed"):
        rl.simulator_seconds_per_step("InvertedPendulum-v5", 10, seed=-1)


def test_the_excess_over_the_threshold_adds_standard_errors_in_quadrature():
    assert rl.excess_over_threshold(12.0, 3.0, (7.0, 4.0)) == (5.0, 5.0)
    assert rl.excess_over_threshold(-1.0, 0.0, (2.0, 0.0)) == (-3.0, 0.0)
    with pytest.raises(ValueError, match="score_se must be finite"):
        rl.excess_over_threshold(1.0, np.nan, (0.0, 1.0))
    with pytest.raises(ValueError, match="threshold s.e. must be ≥ 0"):
        rl.excess_over_threshold(1.0, 1.0, (0.0, -1.0))


def test_the_learned_threshold_is_mean_plus_std_with_a_bootstrap_standard_error():
    """For normal returns the s.e. of mean + std is σ·√(1/n + 1/(2(n−1))) to first order; the bootstrap agrees within
    its own resampling error, and the same generator state gives the same numbers."""
    n, sigma = 400, 3.0
    returns = np.random.default_rng(5).normal(10.0, sigma, n)
    threshold, se = rl.learned_threshold(returns, np.random.default_rng(0))
    assert threshold == pytest.approx(returns.mean() + returns.std(ddof=1))
    assert se == pytest.approx(sigma * np.sqrt(1 / n + 1 / (2 * (n - 1))), rel=0.15)
    assert (threshold, se) == rl.learned_threshold(returns, np.random.default_rng(0))
    with pytest.raises(ValueError, match="random_returns"):
        rl.learned_threshold([1.0], np.random.default_rng(0))


def test_make_env_names_the_pinned_install_command_when_gymnasium_or_mujoco_is_missing(monkeypatch):
    import tomllib

    import gymnasium

    pins = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
    for pin in ("gymnasium[mujoco]==1.4.0", "mujoco==4.0.0"):
        assert pin in pins["dependencies"] and pin in rl.GYMNASIUM_INSTALL, "the error must name pyproject's pins"

    def no_mujoco(name, **kwargs):
        raise gymnasium.error.DependencyNotInstalled("No module named 'mujoco'")

    with monkeypatch.context() as patch:
        patch.setattr(gymnasium, "make", no_mujoco)
        with pytest.raises(RuntimeError, match="MuJoCo") as info:
            rl.make_env("Hopper-v5")
        assert rl.GYMNASIUM_INSTALL in str(info.value)
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "gymnasium", None)  # import gymnasium now raises ModuleNotFoundError
        with pytest.raises(RuntimeError, match="need gymnasium") as info:
            rl.make_env("Hopper-v5")
        assert rl.GYMNASIUM_INSTALL in str(info.value)
    with pytest.raises(ValueError, match="Hopper-v5"):
        rl.make_env("Hoper-v5")
    with pytest.raises(ValueError, match="gymnasium task id"):
        rl.make_env(None)
