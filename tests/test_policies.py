"""Dense / KAMA / Toeplitz Gaussian MLP policies (KAMA-NNs §6.2): Table 1's parameter ratios, the structured weight
matrices, gradients through the frozen-plane KAMA layers, and the Gaussian log-density."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from rflib.experiments import policies

# gymnasium v5 observation / action sizes
TASKS = {"HalfCheetah": (17, 6), "Walker2d": (17, 6), "Hopper": (11, 3)}


PAPER_PPO_PERCENT = {"HalfCheetah": (15, 7), "Walker2d": (15, 7), "Hopper": (17, 8)}  # KAMA, Toeplitz (Table 1)


def hand_count(kind: str, sizes, rotations: int) -> int:
    """Weights + biases of an MLP with layer sizes ``sizes`` counted by hand: a dense d_out × d_in matrix has
    d_out·d_in numbers, a KAMA one K angles and min(d_out, d_in) scales, a Toeplitz one d_out + d_in − 1 diagonals."""
    total = 0
    for d_in, d_out in zip(sizes, sizes[1:], strict=False):
        total += {"dense": d_out * d_in, "kama": rotations + min(d_out, d_in), "toeplitz": d_out + d_in - 1}[kind]
        total += d_out  # the bias
    return total


@pytest.mark.parametrize(("hidden", "rotations"), [((64, 64), 200), ((32, 32), 100)])  # PPO and TRPO policies
def test_parameter_counts_match_a_hand_count(hidden, rotations):
    for obs, act in TASKS.values():
        for kind in policies.ARCHITECTURES:
            expected = hand_count(kind, (obs, *hidden, act), rotations)
            assert policies.parameter_count(kind, obs, act, hidden, rotations) == expected


def test_table_1_ppo_ratios_against_the_paper():
    """The paper prints (PPO) KAMA 15 / 15 / 17 % and Toeplitz 7 / 7 / 8 %: counting the mean network's weights and
    biases reproduces the Toeplitz column to its printed rounding, and falls 0.6–1.2 points short of the KAMA
    column (the paper does not say what else it counted: ERRATA.md KAMA-E15)."""
    for task, (obs, act) in TASKS.items():
        dense = policies.parameter_count("dense", obs, act)
        kama, toeplitz = (100 * policies.parameter_count(k, obs, act) / dense for k in ("kama", "toeplitz"))
        paper_kama, paper_toeplitz = PAPER_PPO_PERCENT[task]
        assert round(toeplitz) == paper_toeplitz
        assert 0.5 < paper_kama - kama < 1.5
        for reading in ("out", "in"):  # a scale per output (or input) unit gives the printed KAMA shares
            share = 100 * policies.parameter_count("kama", obs, act, kama_scales=reading) / dense
            assert round(share) == paper_kama
    with pytest.raises(ValueError, match="kama_scales"):
        policies.parameter_count("kama", 11, 3, kama_scales="max")


@pytest.mark.parametrize("architecture", policies.ARCHITECTURES)
def test_counted_parameters_are_the_trainable_ones(architecture):
    params, _ = policies.init(jax.random.key(0), architecture, 11, 3, (16, 16), rotations=40)
    n = sum(x.size for x in jax.tree.leaves(params["layers"]))
    assert n == policies.parameter_count(architecture, 11, 3, (16, 16), rotations=40)


def test_kama_policy_starts_orthogonal_and_toeplitz_has_constant_diagonals():
    params, structure = policies.init(jax.random.key(1), "kama", 5, 2, (8, 8), rotations=60)
    W_in, W_mid, W_out = (np.asarray(W) for W in policies.weight_matrices(params, structure))
    np.testing.assert_allclose(W_in.T @ W_in, np.eye(5), atol=1e-12)  # expanding layer: orthonormal columns
    np.testing.assert_allclose(W_mid @ W_mid.T, np.eye(8), atol=1e-12)
    np.testing.assert_allclose(W_out @ W_out.T, np.eye(2), atol=1e-12)  # shrinking layer: orthonormal rows
    params, structure = policies.init(jax.random.key(2), "toeplitz", 5, 2, (8, 8))
    W = np.asarray(policies.weight_matrices(params, structure)[0])
    for offset in range(-7, 5):
        assert np.ptp(np.diagonal(W, offset)) == 0


@pytest.mark.parametrize(("architecture", "rotations", "seed"), [("kama", 10, 0), ("kama", 20, 1), ("kama", 40, 2)])
def test_action_reach_is_where_the_actions_jacobian_is_nonzero(architecture, rotations, seed):
    """The inputs action_reach names are exactly those the mean action's Jacobian reads, at a generic point (trained
    angles and scales drawn at random); the hidden units it counts are the action layer's nonzero columns."""
    params, structure = policies.init(jax.random.key(seed), architecture, 4, 1, (16, 16), rotations=rotations)
    params = jax.tree.map(lambda x: x + 0.3 * jax.random.normal(jax.random.key(seed + 100), x.shape), params)
    hidden, inputs = policies.action_reach(structure)
    obs = jax.random.normal(jax.random.key(seed + 200), (4,))
    jacobian = np.asarray(jax.jacobian(lambda o: policies.mean_action(params, structure, o))(obs))
    assert inputs == tuple(np.flatnonzero(np.abs(jacobian).max(axis=0) > 0))
    W_out = np.asarray(policies.weight_matrices(params, structure)[-1])
    assert hidden == np.count_nonzero(np.abs(W_out).max(axis=0) > 0)


def test_action_reach_of_untouched_and_connected_kama_chains():
    """Planes that never touch coordinate 0 leave each layer's first row / column a unit vector: the action reads one
    hidden unit and one input whatever the angles. One rotation on (0, 1) in every layer widens each to two."""
    sizes = (3, 6, 6, 1)
    untouched = tuple((np.array([2, 4]), np.array([3, 5])) for _ in range(3))
    assert policies.action_reach(policies.Structure("kama", sizes, untouched)) == (1, (0,))
    linked = tuple((np.array([0, 2]), np.array([1, 3])) for _ in range(3))
    assert policies.action_reach(policies.Structure("kama", sizes, linked)) == (2, (0, 1))
    back_and_forth = tuple((np.array([0, 1]), np.array([1, 0])) for _ in range(3))  # cancel only at equal angles
    assert policies.action_reach(policies.Structure("kama", sizes, back_and_forth)) == (2, (0, 1))
    for architecture in ("dense", "toeplitz"):
        assert policies.action_reach(policies.Structure(architecture, sizes, None)) == (6, (0, 1, 2))
    with pytest.raises(ValueError, match="structure must be a policies.Structure"):
        policies.action_reach((1, 2))


def test_gradients_reach_angles_scales_and_biases_but_planes_stay_frozen():
    params, structure = policies.init(jax.random.key(3), "kama", 4, 2, (6, 6), rotations=30)
    obs = jax.random.normal(jax.random.key(4), (10, 4))

    def loss(p):
        return jnp.sum(policies.mean_action(p, structure, obs) ** 2)

    grads = jax.grad(loss)(params)
    for layer in grads["layers"]:
        assert set(layer) == {"angles", "scales", "b"}
        assert all(float(jnp.abs(v).max()) > 0 for v in layer.values())
    eps = 1e-6
    bumped = jax.tree.map(lambda x: x, params)
    bumped["layers"][1]["angles"] = params["layers"][1]["angles"].at[5].add(eps)
    fd = (loss(bumped) - loss(params)) / eps
    assert float(grads["layers"][1]["angles"][5]) == pytest.approx(float(fd), rel=1e-4, abs=1e-8)


def test_log_prob_is_the_diagonal_gaussian_density():
    params, structure = policies.init(jax.random.key(5), "dense", 3, 2, (4, 4))
    params["log_std"] = jnp.array([-0.3, 0.4])
    obs = np.array([[0.1, -0.2, 0.3]])
    actions = np.array([[0.5, -1.0]])
    mean = np.asarray(policies.mean_action(params, structure, obs))[0]
    expected = stats.norm.logpdf(actions[0], mean, np.exp([-0.3, 0.4])).sum()
    assert float(policies.log_prob(params, structure, obs, actions)[0]) == pytest.approx(expected, rel=1e-12)
    assert float(policies.entropy(params)) == pytest.approx(
        sum(stats.norm(0, math.exp(s)).entropy() for s in (-0.3, 0.4)), rel=1e-12
    )


def test_unknown_architecture_is_named():
    with pytest.raises(ValueError, match="unknown architecture"):
        policies.init(jax.random.key(0), "lowrank", 3, 1)


def test_parameter_table_gives_the_dense_count_and_table_1_percentages():
    table = policies.parameter_table({"PPO": ((64, 64), 200)}, {"HalfCheetah-v5": (17, 6), "Hopper-v5": (11, 3)})
    cheetah = table["PPO", "HalfCheetah-v5"]
    assert cheetah["dense"] == (17 * 64 + 64) + (64 * 64 + 64) + (64 * 6 + 6)
    kama = (200 + 17 + 64) + (200 + 64 + 64) + (200 + 6 + 6)
    toeplitz = (64 + 17 - 1 + 64) + (64 + 64 - 1 + 64) + (6 + 64 - 1 + 6)
    assert cheetah["kama"] == pytest.approx(100 * kama / cheetah["dense"], rel=1e-15)
    assert cheetah["toeplitz"] == pytest.approx(100 * toeplitz / cheetah["dense"], rel=1e-15)
    assert (round(table["PPO", "Hopper-v5"]["kama"], 1), round(table["PPO", "Hopper-v5"]["toeplitz"], 1)) == (15.8, 7.8)
    with pytest.raises(ValueError, match="unknown architecture"):
        policies.parameter_count("lowrank", 3, 1)
