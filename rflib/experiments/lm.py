"""A small word-level LSTM language model in JAX with tied input/output embeddings (HRF §4.2, App I).

The HRF language-model experiment needs queries and keys of a softmax over a vocabulary: queries are the model's
top hidden states q_t, keys the output embeddings k_c, and p(c | context) = SM(q_t, k_c) / Σ_c' SM(q_t, k_c').
With tied embeddings and no output bias, every logit is exactly an inner product q_tᵀk_c, so the softmax is the
softmax kernel the random features approximate.

Training: truncated back-propagation through time over contiguous batches (Zaremba et al. 2014 layout), Adam
(optax) with global-norm clipping. Everything is jitted once per shape.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rflib import _checks
from rflib.experiments.progress_bars import bar
from rflib.features import classic, hybrid


class LSTMParams(NamedTuple):
    """embedding: (V, h) tied input/output embeddings; layers: per layer (W: (in + h, 4h), b: (4h,))."""

    embedding: jax.Array
    layers: tuple


def init_lstm(key, vocab_size: int, hidden: int, n_layers: int = 2, *, dtype=jnp.float32) -> LSTMParams:
    """Uniform(±0.1) initialisation as in Zaremba et al.; forget-gate bias 1. Training runs in ``dtype``
    (float32 by default: twice as fast on CPU, and the model needs no more)."""
    vocab_size = _checks.positive_int("vocab_size", vocab_size)
    hidden = _checks.positive_int("hidden", hidden)
    n_layers = _checks.positive_int("n_layers", n_layers)
    keys = jax.random.split(key, n_layers + 1)
    embedding = jax.random.uniform(keys[0], (vocab_size, hidden), dtype=dtype, minval=-0.1, maxval=0.1)
    layers = []
    for k in keys[1:]:
        W = jax.random.uniform(k, (2 * hidden, 4 * hidden), dtype=dtype, minval=-0.1, maxval=0.1)
        b = jnp.zeros(4 * hidden, dtype=dtype).at[hidden : 2 * hidden].set(1.0)
        layers.append((W, b))
    return LSTMParams(embedding, tuple(layers))


def zero_state(params: LSTMParams, batch: int):
    """(h, c) per layer, each (batch, hidden)."""
    hidden, dtype = params.embedding.shape[1], params.embedding.dtype
    return tuple((jnp.zeros((batch, hidden), dtype), jnp.zeros((batch, hidden), dtype)) for _ in params.layers)


def _cell(layer, carry, x):
    W, b = layer
    h, c = carry
    gates = jnp.concatenate([x, h], axis=-1) @ W + b
    i, f, g, o = jnp.split(gates, 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return h, c


def hidden_states(params: LSTMParams, tokens, state):
    """Top-layer outputs for a batch of sequences.  tokens (B, T) int → (B, T, h), final state."""

    def step(carry, tok_t):
        x = params.embedding[tok_t]
        new = []
        for layer, layer_state in zip(params.layers, carry, strict=True):
            h, c = _cell(layer, layer_state, x)
            new.append((h, c))
            x = h
        return tuple(new), x

    final, outs = jax.lax.scan(step, state, jnp.swapaxes(tokens, 0, 1))
    return jnp.swapaxes(outs, 0, 1), final


def logits(params: LSTMParams, queries) -> jax.Array:
    """Tied-embedding logits q ᵀ k_c for every class: (..., h) → (..., V). No bias: logit = log SM(q, k_c)."""
    return queries @ params.embedding.T


def _loss(params, inputs, targets, state):
    h, final = hidden_states(params, inputs, state)
    lp = jax.nn.log_softmax(logits(params, h), axis=-1)
    nll = -jnp.take_along_axis(lp, targets[..., None], axis=-1)[..., 0]
    return nll.mean(), final


def batchify(ids, batch: int) -> np.ndarray:
    """Token ids (N,) → (batch, N // batch): each row a contiguous stream, as in Zaremba et al."""
    ids = np.asarray(ids)
    batch = _checks.positive_int("batch", batch)
    n = ids.size // batch
    if n < 2:
        raise ValueError(f"{ids.size} tokens are too few for {batch} streams")
    return ids[: n * batch].reshape(batch, n)


def train_lstm(
    key,
    train_ids,
    *,
    vocab_size: int,
    hidden: int = 200,
    n_layers: int = 2,
    batch: int = 20,
    bptt: int = 35,
    steps: int = 1000,
    learning_rate: float = 3e-3,
    clip: float = 5.0,
    dtype=jnp.float32,
    progress: bool = False,
) -> tuple[LSTMParams, list[float]]:
    """Train the LSTM LM for ``steps`` truncated-BPTT steps (wrapping around the stream).

    Returns the parameters and the training loss (nats per token) of every step. ``progress``: show a bar over the
    steps.
    """
    data = batchify(train_ids, batch)
    params = init_lstm(key, vocab_size, hidden, n_layers, dtype=dtype)
    optimizer = optax.chain(optax.clip_by_global_norm(clip), optax.adam(learning_rate))
    opt_state = optimizer.init(params)

    @jax.jit
    def update(params, opt_state, inputs, targets, state):
        (loss, final), grads = jax.value_and_grad(_loss, has_aux=True)(params, inputs, targets, state)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss, jax.lax.stop_gradient(final)

    state = zero_state(params, batch)
    losses, pos = [], 0
    for _ in bar(range(steps), "training the LSTM", progress):
        if pos + bptt + 1 > data.shape[1]:
            pos, state = 0, zero_state(params, batch)
        inputs = jnp.asarray(data[:, pos : pos + bptt])
        targets = jnp.asarray(data[:, pos + 1 : pos + bptt + 1])
        params, opt_state, loss, state = update(params, opt_state, inputs, targets, state)
        losses.append(float(loss))
        pos += bptt
    return params, losses


def evaluate(params: LSTMParams, ids, *, batch: int = 10, bptt: int = 35) -> tuple[float, np.ndarray]:
    """Mean cross-entropy (nats per token) on a stream, and the top hidden states (queries) it produced.

    Returns (loss, queries: (n_tokens, h)).
    """
    data = batchify(ids, batch)
    loss_fn = jax.jit(_loss)
    hid_fn = jax.jit(hidden_states)
    state = zero_state(params, batch)
    total, count, queries = 0.0, 0, []
    for pos in range(0, data.shape[1] - 1, bptt):
        end = min(pos + bptt, data.shape[1] - 1)
        inputs = jnp.asarray(data[:, pos:end])
        targets = jnp.asarray(data[:, pos + 1 : end + 1])
        h, _ = hid_fn(params, inputs, state)
        loss, state = loss_fn(params, inputs, targets, state)
        total += float(loss) * inputs.size
        count += inputs.size
        queries.append(np.asarray(h).reshape(-1, h.shape[-1]))
    return total / count, np.concatenate(queries)


def distribution_metrics(p_true, p_hat) -> dict[str, jax.Array]:
    """Distances between a true and an approximated distribution over classes, per row (HRF §4.2, Fig 3).

    With cumulative distributions F, F̂ over the class index: 1-D Wasserstein W₁ = Σ_c |F(c) − F̂(c)| (unit spacing),
    Kolmogorov–Smirnov KS = max_c |F(c) − F̂(c)|, and the fraction of negative approximate probabilities.
    Shapes: (n, V), (n, V) → each (n,).
    """
    p_true = _checks.points("p_true", p_true)
    p_hat = _checks.points("p_hat", p_hat, dim=p_true.shape[1])
    gap = jnp.abs(jnp.cumsum(p_true, axis=1) - jnp.cumsum(p_hat, axis=1))
    return {
        "wasserstein": jnp.sum(gap, axis=1),
        "ks": jnp.max(gap, axis=1),
        "negative_fraction": jnp.mean(p_hat < 0, axis=1),
    }


def normalise_estimates(estimates) -> jax.Array:
    """p̂_c = ŜM(q, k_c) / Σ_c' ŜM(q, k_c') row by row: (n, V) → (n, V). Rows that sum to 0 raise."""
    estimates = jnp.asarray(estimates)
    totals = jnp.sum(estimates, axis=1, keepdims=True)
    if bool(jnp.any(totals == 0)):
        raise ValueError("a row of estimates sums to 0: the approximate distribution is undefined")
    return estimates / totals


SOFTMAX_ESTIMATORS = ("FAVOR+", "Trig.", "Gaussian", "Angular")  # the rows of HRF Table 4


def softmax_kernel_estimates(method: str, M: int, key, Q, K, *, n_lambda: int, radius: float) -> jax.Array:
    """One draw of the (n, V) matrix ŜM(q, k_c) by one of HRF Table 4's estimators with M features per point (iid
    Gaussian projections): ``"FAVOR+"`` (hyperbolic, HRF eq 3), ``"Trig."`` (HRF eq 2), and the hybrids with
    m = M // n_lambda projections per base and n_lambda λ-projections, ``"Angular"`` (HRF eq 19) and
    ``"Gaussian"`` (App F's normalised Gaussian λ with σ = 1/radius, norm radius).  Q: (n, d), K: (V, d)."""
    _checks.one_of("method", method, SOFTMAX_ESTIMATORS)
    M = _checks.positive_int("M", M)
    d = _checks.points("Q", Q).shape[1]
    keys = jax.random.split(key, 3)
    if method == "FAVOR+":
        return classic.hyperbolic_estimator(jax.random.normal(keys[0], (M, d))).estimate(Q, K)
    if method == "Trig.":
        return classic.trig_estimator(jax.random.normal(keys[0], (M, d))).estimate(Q, K)
    n_lambda = _checks.positive_int("n_lambda", n_lambda)
    m = M // n_lambda
    if m < 1:
        raise ValueError(f"M = {M} leaves no projection per base with n_lambda = {n_lambda}; use M ≥ n_lambda")
    W_pos, W_trig = jax.random.normal(keys[0], (m, d)), jax.random.normal(keys[1], (m, d))
    T = jax.random.normal(keys[2], (n_lambda, d))
    bases = [classic.hyperbolic_estimator(W_pos), classic.trig_estimator(W_trig)]
    if method == "Angular":
        lam = hybrid.angular_lambda(T)
    else:
        radius = _checks.positive_float("radius", radius)
        lam = hybrid.normalized_gaussian_lambda(T, sigma=1.0 / radius, r=radius)
    return hybrid.hybrid_direct(bases, [lam], Q, K)


def softmax_metrics_study(
    Q,
    K,
    *,
    key_for,
    seeds: int,
    sizes,
    n_lambda: int,
    methods=SOFTMAX_ESTIMATORS,
    progress: bool = False,
) -> dict[tuple[str, int], dict[str, tuple[float, float]]]:
    """HRF Fig 3 / Table 4: how well each estimator's p̂ reproduces the softmax distribution p = softmax(Q Kᵀ).

    For every seed, size M and method, one draw of :func:`softmax_kernel_estimates` (key ``key_for(seed, M,
    method)``; the Gaussian hybrid's radius is the RMS norm of all queries and keys, its σ = 1/radius), normalised
    row-wise (:func:`normalise_estimates`) and scored by :func:`distribution_metrics` averaged over the queries.

    Args:
      Q: (n, d) queries; K: (V, d) keys (float64 numpy).
      seeds: number of independent draws; sizes: the feature counts M; progress: show a bar over the seeds.
    Returns:
      (method, M) → metric name → (mean, std) over seeds of the query-averaged W₁, KS and negative fraction.
    """
    Q = _checks.finite_numpy("Q", Q, 2)
    K = _checks.finite_numpy("K", K, 2)
    if K.shape[1] != Q.shape[1]:
        raise ValueError(f"K must have Q's {Q.shape[1]} columns, got shape {K.shape}")
    seeds = _checks.positive_int("seeds", seeds)
    _checks.callable_arg("key_for", key_for, "a JAX key for (seed, M, method)")
    sizes = [_checks.positive_int("sizes", M) for M in sizes]
    n_lambda = _checks.positive_int("n_lambda", n_lambda)
    for method in methods:
        _checks.one_of("methods", method, SOFTMAX_ESTIMATORS)
    p_true = np.asarray(jax.nn.softmax(jnp.asarray(Q @ K.T), axis=1))
    r_common = float(np.sqrt(np.mean(np.concatenate([np.sum(Q**2, 1), np.sum(K**2, 1)]))))
    rows = {(method, M): [] for method in methods for M in sizes}
    for si in bar(range(seeds), "Table 4, seeds", progress):
        for M in sizes:
            for method in methods:
                key = key_for(si, M, method)
                estimates = softmax_kernel_estimates(method, M, key, Q, K, n_lambda=n_lambda, radius=r_common)
                p_hat = normalise_estimates(estimates)
                out = distribution_metrics(p_true, p_hat)
                rows[method, M].append({k: float(jnp.mean(v)) for k, v in out.items()})
    return {
        key: {name: (np.mean([r[name] for r in runs]), np.std([r[name] for r in runs])) for name in runs[0]}
        for key, runs in rows.items()
    }


def beats_at_every_size(summary, winners, losers, sizes, metrics, *, every_winner: bool = False) -> bool:
    """HRF Fig 3's orderings as a verdict on a :func:`softmax_metrics_study` summary: True when, at every M of
    ``sizes`` and for every metric of ``metrics`` (lower is better), the best mean over seeds among ``winners`` — the
    worst one with ``every_winner`` — is strictly below the best mean among ``losers``."""
    winners, losers = tuple(winners), tuple(losers)
    if not winners or not losers:
        raise ValueError("winners and losers must each name at least one method")
    missing = sorted({(m, M) for m in winners + losers for M in sizes} - set(summary))
    if missing:
        raise ValueError(f"summary has no entry for (method, M) = {missing[:3]}")
    pick = max if every_winner else min
    return all(
        pick(summary[w, M][k][0] for w in winners) < min(summary[v, M][k][0] for v in losers)
        for M in sizes
        for k in metrics
    )
