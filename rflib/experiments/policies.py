"""Gaussian MLP policies with dense, KAMA or Toeplitz weight matrices (KAMA-NNs §6.2, Table 1).

Every policy maps an observation through three matrices (obs → h → h → act) with tanh after the two hidden layers;
the action distribution is N(mean, diag(exp(log_std))²) with a state-independent log-std, as in OpenAI baselines'
``MlpPolicy``. The three parameterisations of each matrix W (d_out × d_in) plus a dense bias:

- ``"dense"``: d_out · d_in weights;
- ``"kama"``: K learned angles of K Givens rotations of size D = max(d_out, d_in) whose planes are drawn once and
  frozen, plus min(d_out, d_in) learned row/column scales (§2.3, §6.2): K + min(d_out, d_in) numbers;
- ``"toeplitz"``: W[i, j] = t[i − j + d_in − 1], d_out + d_in − 1 numbers (Choromanski et al. 2018).

Parameters are a dict pytree (trainable); the frozen KAMA planes live in a separate :class:`Structure`.
Initialisation (not specified by the paper, our choice): angles ~ U[0, 2π), scales 1 (an orthogonal start);
dense and Toeplitz entries ~ N(0, 1/d_in); biases 0; log-std 0.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks, kama

ARCHITECTURES = ("dense", "kama", "toeplitz")


class Structure(NamedTuple):
    """What is fixed about a policy: its architecture, layer sizes and (for KAMA) the frozen rotation planes."""

    architecture: str
    sizes: tuple[int, ...]  # (obs, h, h, act)
    planes: tuple[tuple[np.ndarray, np.ndarray], ...] | None  # per layer (first, second) for KAMA


def toeplitz_matrix(t, d_out: int, d_in: int) -> jax.Array:
    """The d_out × d_in Toeplitz matrix W[i, j] = t[i − j + d_in − 1].  t: (d_out + d_in − 1,)."""
    d_out, d_in = _checks.positive_int("d_out", d_out), _checks.positive_int("d_in", d_in)
    t = _checks.finite_array("t", t, 1)
    if t.shape != (d_out + d_in - 1,):
        raise ValueError(f"a {d_out}×{d_in} Toeplitz matrix needs {d_out + d_in - 1} parameters, got {t.shape}")
    idx = np.arange(d_out)[:, None] - np.arange(d_in)[None, :] + d_in - 1
    return t[idx]


def _layer_shapes(sizes) -> list[tuple[int, int]]:
    return [(d_out, d_in) for d_in, d_out in zip(sizes[:-1], sizes[1:], strict=True)]


# readings of a rectangular KAMA layer's diagonal of scales: min(d_out, d_in), d_out, d_in
KAMA_SCALE_LENGTHS = ("min", "out", "in")


def parameter_count(
    architecture: str, obs_dim: int, act_dim: int, hidden=(64, 64), rotations: int = 200, kama_scales: str = "min"
) -> int:
    """Trainable numbers of the policy's mean network (weights + biases, no log-std), as Table 1 counts them.

    ``kama_scales`` reads a rectangular KAMA layer's diagonal of scales: ``"min"`` (ours: min(d_out, d_in) singular
    values, as the layer is built), or ``"out"`` / ``"in"`` (a scale per output / input unit), the readings the
    paper leaves open."""
    _check_architecture(architecture)
    _checks.one_of("kama_scales", kama_scales, KAMA_SCALE_LENGTHS)
    total = 0
    for d_out, d_in in _layer_shapes((obs_dim, *hidden, act_dim)):
        scales = {"min": min(d_out, d_in), "out": d_out, "in": d_in}[kama_scales]
        weights = {
            "dense": d_out * d_in,
            "kama": rotations + scales,
            "toeplitz": d_out + d_in - 1,
        }[architecture]
        total += weights + d_out
    return total


def _check_architecture(architecture: str) -> None:
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}; choose one of {ARCHITECTURES}")


def init(key, architecture: str, obs_dim: int, act_dim: int, hidden=(64, 64), rotations: int = 200):
    """A fresh policy.  Returns (params, structure); params holds per-layer weights and biases and ``log_std``."""
    _check_architecture(architecture)
    obs_dim = _checks.positive_int("obs_dim", obs_dim)
    act_dim = _checks.positive_int("act_dim", act_dim)
    hidden = tuple(_checks.positive_int("hidden", h) for h in hidden)
    sizes = (obs_dim, *hidden, act_dim)
    layers, planes = [], []
    for i, (d_out, d_in) in enumerate(_layer_shapes(sizes)):
        k_w, k_planes = jax.random.split(jax.random.fold_in(key, i))
        if architecture == "dense":
            weights = {"w": jax.random.normal(k_w, (d_out, d_in)) / math.sqrt(d_in)}
        elif architecture == "toeplitz":
            weights = {"t": jax.random.normal(k_w, (d_out + d_in - 1,)) / math.sqrt(d_in)}
        else:
            rotations = _checks.positive_int("rotations", rotations)
            product = kama.random_product(k_planes, rotations, kama.layer_size(d_out, d_in))
            planes.append((np.asarray(product.first), np.asarray(product.second)))
            weights = {"angles": product.angles, "scales": jnp.ones(min(d_out, d_in))}
        layers.append(weights | {"b": jnp.zeros(d_out)})
    params = {"layers": layers, "log_std": jnp.zeros(act_dim)}
    return params, Structure(architecture, sizes, tuple(planes) if architecture == "kama" else None)


def weight_matrices(params, structure: Structure) -> list[jax.Array]:
    """The dense d_out × d_in matrix of every layer (differentiable in the trainable parameters)."""
    out = []
    for i, ((d_out, d_in), layer) in enumerate(zip(_layer_shapes(structure.sizes), params["layers"], strict=True)):
        if structure.architecture == "dense":
            out.append(layer["w"])
        elif structure.architecture == "toeplitz":
            out.append(toeplitz_matrix(layer["t"], d_out, d_in))
        else:
            first, second = structure.planes[i]
            product = kama.GivensProduct(
                jnp.asarray(first), jnp.asarray(second), layer["angles"], kama.layer_size(d_out, d_in)
            )
            out.append(kama.layer_matrix(product, layer["scales"], d_out, d_in))
    return out


def mean_action(params, structure: Structure, obs) -> jax.Array:
    """The policy mean for observations obs: (..., obs_dim) → (..., act_dim); tanh after hidden layers."""
    h = jnp.asarray(obs)
    weights = weight_matrices(params, structure)
    for i, (W, layer) in enumerate(zip(weights, params["layers"], strict=True)):
        h = h @ W.T + layer["b"]
        if i < len(weights) - 1:
            h = jnp.tanh(h)
    return h


def action_reach(structure: Structure) -> tuple[int, tuple[int, ...]]:
    """How much of the network the action can read: (the number of last-layer hidden units, the indices of the
    observation inputs) on which the mean action depends for generic trainable values.

    A KAMA layer keeps the first rows (columns) of a product of K Givens rotations on frozen planes (KAMA-NNs §2.3),
    so a coordinate that no rotation touches stays a unit vector: with K = 10 rotations of size 64 the action layer's
    one row is e₀ with probability (1 − 2/64)¹⁰ ≈ 0.73, and the action reads a single hidden unit whatever training
    does to the angles. The support is that of the product with fixed random angles in [0.2, 1.3] rad (a structural
    zero stays exactly 0; a generic entry is not — equal angles would not do: rotations on (I, J) then (J, I) by the
    same angle cancel) and unit scales; dense and Toeplitz layers connect every unit."""
    if not isinstance(structure, Structure):
        raise ValueError(f"structure must be a policies.Structure from policies.init, got {type(structure).__name__}")
    supports = []
    for i, (d_out, d_in) in enumerate(_layer_shapes(structure.sizes)):
        if structure.architecture != "kama":
            supports.append(np.ones((d_out, d_in), dtype=bool))
            continue
        first, second = structure.planes[i]
        angles = np.random.default_rng(i).uniform(0.2, 1.3, len(first))  # generic: no exact cancellation
        product = kama.GivensProduct(
            jnp.asarray(first), jnp.asarray(second), jnp.asarray(angles), kama.layer_size(d_out, d_in)
        )
        supports.append(np.asarray(kama.layer_matrix(product, jnp.ones(min(d_out, d_in)), d_out, d_in)) != 0)
    reach = supports[-1]
    hidden = int(np.count_nonzero(reach.any(axis=0)))
    for support in reversed(supports[:-1]):
        reach = (reach.astype(np.int64) @ support.astype(np.int64)) > 0
    return hidden, tuple(int(j) for j in np.flatnonzero(reach.any(axis=0)))


def log_prob(params, structure: Structure, obs, actions) -> jax.Array:
    """log N(actions; mean(obs), diag(exp(log_std))²): (..., act_dim) → (...)."""
    mean = mean_action(params, structure, obs)
    log_std = params["log_std"]
    z = (actions - mean) * jnp.exp(-log_std)
    return jnp.sum(-0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi), axis=-1)


def entropy(params) -> jax.Array:
    """Entropy of the Gaussian action distribution (state-independent)."""
    return jnp.sum(params["log_std"] + 0.5 * math.log(2 * math.pi * math.e))


def parameter_table(configs: dict, sizes: dict) -> dict:
    """Table 1 (KAMA-NNs §6.2): for every configuration ``configs`` {algorithm: (hidden sizes, rotations K)} and task
    ``sizes`` {task: (obs_dim, act_dim)}, the dense policy's trainable numbers (:func:`parameter_count`) and the KAMA
    and Toeplitz policies' as a percentage of it: {(algorithm, task): {"dense": int, "kama": %, "toeplitz": %}}."""
    table = {}
    for algorithm, (hidden, rotations) in configs.items():
        for task, (obs, act) in sizes.items():
            dense = parameter_count("dense", obs, act, hidden, rotations)
            shares = {a: 100 * parameter_count(a, obs, act, hidden, rotations) / dense for a in ("kama", "toeplitz")}
            table[algorithm, task] = {"dense": dense, **shares}
    return table
