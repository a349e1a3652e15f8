"""Training both attention types on the self-attention separation task from noisy samples (beyond the paper).

Data (our study beyond the paper, notebook 10 §4): class 0 has a spike a ~ U[0, 0.1], class 1 a ~ U[0.7, 1.5]; b ~
U[0.1, 0.3], c = 1 − b, a random special row j3 (Def D.1's layout), plus N(0, (noise·√log n)²) on every entry.

Model: one attention layer with learned X = QKᵀ and V (softmax, or linear = scores / row sum), m learned readout
directions with a learned threshold, ReLU, max-pooling over the n rows and a linear output; logistic loss, Adam,
full batch. Linear attention's row sums can cross 0 while X is learned, so sums smaller than ``min_row_sum`` in
magnitude are replaced by ±``min_row_sum`` (a guard the fixed-weight construction never needs).
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rflib import _checks, separation
from rflib.experiments.progress_bars import bar


def noisy_self_data(rng: np.random.Generator, n: int, d: int, size: int, noise: float):
    """``size`` samples A: (size, n, d) float32 and labels (size,) in {0, 1}."""
    size = _checks.positive_int("size", size)
    labels = rng.integers(0, 2, size=size)
    s = math.sqrt(math.log(n))
    A = np.empty((size, n, d))
    for i, y in enumerate(labels):
        a = rng.uniform(0.7, 1.5) if y else rng.uniform(0.0, 0.1)
        b = rng.uniform(0.1, 0.3)
        A[i] = separation.self_data(n, d, a, b, 1 - b, int(rng.integers(n)))
    A += noise * s * rng.standard_normal(A.shape)
    return A.astype(np.float32), labels


def init(key, d: int, m: int) -> dict:
    """Parameters: X (d, d), V (d, d) near the identity, readouts W (d, m), threshold, output weights and bias."""
    kx, kv, kw, ku = jax.random.split(key, 4)
    return {
        "X": 0.1 * jax.random.normal(kx, (d, d), jnp.float32) / math.sqrt(d),
        "V": jnp.eye(d, dtype=jnp.float32) + 0.01 * jax.random.normal(kv, (d, d), jnp.float32),
        "W": jax.random.normal(kw, (d, m), jnp.float32) / math.sqrt(d),
        "tau": jnp.zeros((), jnp.float32),
        "u": jax.random.normal(ku, (m,), jnp.float32) / math.sqrt(m),
        "b0": jnp.zeros((), jnp.float32),
    }


def logits(params, A, kind: str, min_row_sum: float = 1e-3) -> jax.Array:
    """Class-1 logits for A: (N, n, d) → (N,)."""
    S = jnp.einsum("bid,de,bje->bij", A, params["X"], A)
    if kind == "exp":
        weights = jax.nn.softmax(S, axis=-1)
    elif kind == "lin":
        total = S.sum(-1, keepdims=True)
        total = jnp.where(jnp.abs(total) < min_row_sum, jnp.where(total < 0, -min_row_sum, min_row_sum), total)
        weights = S / total
    else:
        raise ValueError(f"kind must be 'exp' or 'lin', got {kind!r}")
    c = weights @ A @ params["V"]
    hidden = jax.nn.relu(c @ params["W"] - params["tau"]).max(axis=1)
    return hidden @ params["u"] + params["b0"]


@partial(jax.jit, static_argnames=("kind", "optimizer"))
def _step(params, state, A, y, *, kind, optimizer):
    def loss_fn(p):
        return jnp.mean(optax.sigmoid_binary_cross_entropy(logits(p, A, kind), y))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


_OPTIMIZER = optax.adam(1e-2)


def train(key, A, labels, kind: str, *, m: int = 16, steps: int = 300) -> tuple[dict, np.ndarray]:
    """Full-batch Adam (lr 10⁻²) on the logistic loss.  Returns (params, losses)."""
    steps = _checks.positive_int("steps", steps)
    A, y = jnp.asarray(A, jnp.float32), jnp.asarray(labels, jnp.float32)
    params = init(key, A.shape[-1], m)
    state = _OPTIMIZER.init(params)
    losses = []
    for _ in range(steps):
        params, state, loss = _step(params, state, A, y, kind=kind, optimizer=_OPTIMIZER)
        losses.append(loss)
    return params, np.asarray(jnp.stack(losses))


def accuracy(params, A, labels, kind: str) -> float:
    """Fraction of samples whose logit sign matches the label."""
    pred = np.asarray(logits(params, jnp.asarray(A, jnp.float32), kind)) > 0
    return float(np.mean(pred == np.asarray(labels).astype(bool)))


def accuracy_sweep(
    ns, d: int, size: int, noise: float, seeds: int, steps: int, data_rng, init_key, *, progress: bool = False
) -> dict[tuple[str, int], list[float]]:
    """Test accuracy of both attention types trained end to end, per sequence length (notebook 10 §4).

    For each n of ``ns``: one generator ``data_rng(n)`` draws a training set and then a test set of ``size``
    samples each (:func:`noisy_self_data`, A: (size, n, d)); then, per kind ("exp", "lin") and per seed
    0 … ``seeds`` − 1, :func:`train` for ``steps`` full-batch Adam steps from ``init_key(seed)`` and
    :func:`accuracy` on the test set. Returns {(kind, n): [accuracy per seed]}. ``progress``: a bar over
    the seeds of each (kind, n).
    """
    d, size, seeds = (_checks.positive_int(k, v) for k, v in (("d", d), ("size", size), ("seeds", seeds)))
    steps = _checks.positive_int("steps", steps)
    _checks.real_number("noise", noise, low=0.0)
    _checks.callable_arg("data_rng", data_rng, "a numpy Generator")
    _checks.callable_arg("init_key", init_key, "a JAX key")
    accuracies = {}
    for n in ns:
        rng = data_rng(n)
        A_train, y_train = noisy_self_data(rng, n, d, size, noise)
        A_test, y_test = noisy_self_data(rng, n, d, size, noise)
        for kind in separation.KINDS:
            accs = []
            for sd in bar(range(seeds), f"train {kind}, n = {n}", progress, leave=False):
                params, _ = train(init_key(sd), A_train, y_train, kind, steps=steps)
                accs.append(accuracy(params, A_test, y_test, kind))
            accuracies[kind, n] = accs
    return accuracies


def accuracy_stats(accuracies: dict) -> dict:
    """Mean and standard deviation (numpy's, ddof = 0) over seeds of each entry of an :func:`accuracy_sweep`
    result: {(kind, n): [accuracy per seed]} → {(kind, n): (mean, std)}."""
    if not isinstance(accuracies, dict) or not accuracies:
        raise ValueError("accuracies must be a non-empty dict {(kind, n): [accuracy per seed]}")
    for key, accs in accuracies.items():
        if len(accs) == 0:
            raise ValueError(f"accuracies[{key!r}] is empty")
    return {key: (np.mean(accs), np.std(accs)) for key, accs in accuracies.items()}
