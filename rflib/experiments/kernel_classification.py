"""Kernel classification with random features (FAVOR# §5.2, App. B.2; also CRT's protocol).

The predictor is an unnormalised kernel sum: class scores r*(u) = Σ_i K(σu, σu_i) r_i over the training objects
u_i with one-hot labels r_i, K the Gaussian kernel K(x, y) = exp(−‖x − y‖²/2), prediction argmax r*. With random
features φ⁽¹⁾, φ⁽²⁾ of the *softmax* kernel, K(x, y) = e^{−‖x‖²/2} exp(xᵀy) e^{−‖y‖²/2}; the query-side factor is a
positive per-row constant and cannot change the argmax, so only the training side carries it. The training sum
Sᵀ R (M × classes) is precomputed once, O(nMd), and each query then costs O(M(d + classes)).

Inputs here are already scaled by σ. All accuracies are vectorised over a stack of random draws (seeds).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks
from rflib.features import dense_exp
from rflib.features.dense_exp import DERF


def split_indices(rng: np.random.Generator, n: int, fractions=(0.9, 0.05, 0.05)) -> tuple[np.ndarray, ...]:
    """Shuffle range(n) and cut it into train / validation / test index arrays (paper: 90 % / 5 % / 5 %).

    Every part gets at least one object; the test part takes what remains after the first two.
    """
    n = _checks.positive_int("n", n)
    if len(fractions) != 3 or not np.isclose(sum(fractions), 1.0) or min(fractions) <= 0:
        raise ValueError(f"fractions must be three positive numbers summing to 1, got {fractions}")
    if n < 3:
        raise ValueError(f"need at least 3 objects to split into train/validation/test, got {n}")
    order = rng.permutation(n)
    n_val = max(1, round(fractions[1] * n))
    n_test = max(1, round(fractions[2] * n))
    n_train = n - n_val - n_test
    return order[:n_train], order[n_train : n_train + n_val], order[n_train + n_val :]


def _check_problem(X_train, onehot, X_query, labels):
    X_train = _checks.points("X_train", X_train)
    X_query = _checks.points("X_query", X_query, X_train.shape[1])
    onehot = _checks.finite_array("onehot", onehot, 2)
    if onehot.shape[0] != X_train.shape[0]:
        raise ValueError(f"onehot needs one row per training object ({X_train.shape[0]}), got {onehot.shape}")
    labels = jnp.asarray(labels)
    if labels.shape != (X_query.shape[0],):
        raise ValueError(f"labels needs one entry per query ({X_query.shape[0]}), got shape {labels.shape}")
    return X_train, onehot, X_query, labels


def exact_accuracy(X_train, onehot, X_query, labels) -> float:
    """Accuracy of argmax_c Σ_i exp(−‖x − u_i‖²/2) r_ic, computed per row in log space (no underflow).

    X_train: (n, d), onehot: (n, C), X_query: (q, d), labels: (q,) ints.
    """
    X_train, onehot, X_query, labels = _check_problem(X_train, onehot, X_query, labels)
    return float(_exact_accuracy(X_train, onehot, X_query, labels))


@jax.jit
def _exact_accuracy(X_train, onehot, X_query, labels):
    sq = jnp.sum(X_query**2, 1)[:, None] + jnp.sum(X_train**2, 1)[None, :] - 2.0 * X_query @ X_train.T
    log_k = -0.5 * jnp.maximum(sq, 0.0)
    scores = jnp.exp(log_k - jnp.max(log_k, axis=1, keepdims=True)) @ onehot
    return jnp.mean(jnp.argmax(scores, axis=1) == labels)


def derf_accuracies(params_query: DERF, params_train: DERF, Ws, X_train, onehot, X_query, labels) -> jax.Array:
    """Accuracies of the DERF kernel classifier for each projection matrix in ``Ws``: (S, M, d) → (S,).

    The query side uses f⁽¹⁾ of ``params_query``, the training side f⁽²⁾ of ``params_train``; pass the same
    parameters twice (fitted on queries 𝒳 = query objects and keys 𝒴 = training objects, as in the paper).
    Ties in the argmax go to the lowest class index.
    """
    X_train, onehot, X_query, labels = _check_problem(X_train, onehot, X_query, labels)
    Ws = _checks.finite_array("Ws", Ws, 3)
    return _derf_accuracies(params_query, params_train, Ws, X_train, onehot, X_query, labels)


@jax.jit
def _derf_accuracies(params_query, params_train, Ws, X_train, onehot, X_query, labels):
    def one(W):
        train = dense_exp.side_features(params_train, W, X_train, 2)
        log_scale = train.log_scale - 0.5 * jnp.sum(X_train**2, axis=1)  # Gaussian kernel: e^{−‖u‖²/2}
        class_sums = (jnp.exp(log_scale - jnp.max(log_scale))[:, None] * train.body).T @ onehot
        query = dense_exp.side_features(params_query, W, X_query, 1).body  # per-row scale cannot change argmax
        return jnp.mean(jnp.argmax(query @ class_sums, axis=1) == labels)

    return jax.vmap(one)(Ws)


def trig_accuracies(Ws, thetas, X_train, onehot, X_query, labels) -> jax.Array:
    """Accuracies with TrigRF Gaussian-kernel features √2 cos(ωᵀx + θ) (eqs 5–7, sign corrected; the e^{±‖x‖²/2}
    factors cancel against the Gaussian kernel's). Ws: (S, M, d), thetas: (S, M) → (S,)."""
    X_train, onehot, X_query, labels = _check_problem(X_train, onehot, X_query, labels)
    Ws = _checks.finite_array("Ws", Ws, 3)
    thetas = _checks.finite_array("thetas", thetas, 2)
    if thetas.shape != Ws.shape[:2]:
        raise ValueError(f"thetas must have shape {Ws.shape[:2]} (one phase per ω), got {thetas.shape}")
    return _trig_accuracies(Ws, thetas, X_train, onehot, X_query, labels)


@jax.jit
def _trig_accuracies(Ws, thetas, X_train, onehot, X_query, labels):
    def one(W, theta):
        class_sums = jnp.cos(X_train @ W.T + theta).T @ onehot
        return jnp.mean(jnp.argmax(jnp.cos(X_query @ W.T + theta) @ class_sums, axis=1) == labels)

    return jax.vmap(one)(Ws, thetas)


def best_sigma_index(validation_accuracy) -> int:
    """Index of the σ with the highest mean validation accuracy; ties go to the smallest σ (first index)."""
    acc = np.asarray(validation_accuracy, dtype=np.float64)
    if acc.ndim != 1 or acc.size == 0 or not np.all(np.isfinite(acc)):
        raise ValueError(f"validation_accuracy must be a finite non-empty 1-D array, got shape {acc.shape}")
    return int(np.flatnonzero(acc >= acc.max() - 1e-12)[0])
