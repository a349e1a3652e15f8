"""PPO for the structured policies (KAMA-NNs §6.2.1): GAE against a direct sum, the running normaliser, and a short
training run on a real MuJoCo task that is deterministic and improves the return."""

import numpy as np
import pytest

from rflib import rl


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


@pytest.mark.parametrize("architecture", ["kama"])
def test_short_ppo_run_on_inverted_pendulum_is_deterministic_and_learns(architecture):
    config = rl.PPOConfig(steps_per_iteration=512, epochs=4, hidden=(16, 16), rotations=24)
    run = rl.train_ppo("InvertedPendulum-v5", architecture, 512 * 6, seed=3, config=config, progress=False)
    again = rl.train_ppo("InvertedPendulum-v5", architecture, 512 * 6, seed=3, config=config, progress=False)
    np.testing.assert_array_equal(run["return"], again["return"])
    returns = np.array([r for _, r in run["episodes"]])
    assert len(returns) > 20
    assert returns[-10:].mean() > 2 * returns[:10].mean()
    assert run["parameters"] == (24 + 4 + 16) + (24 + 16 + 16) + (24 + 1 + 1)
