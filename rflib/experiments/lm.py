"""A small word-level LSTM language model in JAX with tied input/output embeddings (HRF §4.2, App I).

The HRF language-model experiment needs queries and keys of a softmax over a vocabulary: queries are the model's
top hidden states q_t, keys the output embeddings k_c, and p(c | context) = SM(q_t, k_c) / Σ_c' SM(q_t, k_c').
With tied embeddings and no output bias, every logit is exactly an inner product q_tᵀk_c, so the softmax is the
softmax kernel the random features approximate.

Training: truncated back-propagation through time over contiguous batches (Zaremba et al. 2014 layout), Adam
(optax) with global-norm clipping. Everything is jitted once per shape.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rflib import _checks, moments
from rflib._atomic import write_atomically
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


def hidden_states(params: LSTMParams, tokens, state, *, dropout: float = 0.0, key=None):
    """Top-layer outputs for a batch of sequences.  tokens (B, T) int → (B, T, h), final state.

    ``dropout`` > 0 (training only, needs ``key``): inverted dropout on the non-recurrent connections — the embedded
    input, between layers and on the top output — as in Zaremba et al. (2014); the recurrent state is not dropped.
    """

    def drop(x, k):
        keep = jax.random.bernoulli(k, 1.0 - dropout, x.shape)
        return jnp.where(keep, x / (1.0 - dropout), 0.0).astype(x.dtype)

    n_layers = len(params.layers)
    masks = None if dropout == 0.0 else jax.random.split(key, (n_layers + 1) * tokens.shape[1])
    masks = None if masks is None else masks.reshape(tokens.shape[1], n_layers + 1, *masks.shape[1:])

    def step(carry, inp):
        tok_t, mask_keys = inp
        x = params.embedding[tok_t]
        new = []
        for i, (layer, layer_state) in enumerate(zip(params.layers, carry, strict=True)):
            if mask_keys is not None:
                x = drop(x, mask_keys[i])
            h, c = _cell(layer, layer_state, x)
            new.append((h, c))
            x = h
        if mask_keys is not None:
            x = drop(x, mask_keys[n_layers])
        return tuple(new), x

    final, outs = jax.lax.scan(step, state, (jnp.swapaxes(tokens, 0, 1), masks))
    return jnp.swapaxes(outs, 0, 1), final


def logits(params: LSTMParams, queries) -> jax.Array:
    """Tied-embedding logits q ᵀ k_c for every class: (..., h) → (..., V). No bias: logit = log SM(q, k_c)."""
    return queries @ params.embedding.T


def _loss(params, inputs, targets, state, dropout=0.0, key=None):
    h, final = hidden_states(params, inputs, state, dropout=dropout, key=key)
    lp = jax.nn.log_softmax(logits(params, h), axis=-1)
    nll = -jnp.take_along_axis(lp, targets[..., None], axis=-1)[..., 0]
    return nll.mean(), final


_loss_jit = jax.jit(_loss)  # module level: evaluate() is called every epoch and must not recompile each time
_hidden_states_jit = jax.jit(hidden_states)


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


PTB_RECIPE = dict(
    hidden=200,
    n_layers=2,
    batch=32,
    bptt=35,
    epochs=30,
    learning_rate=2e-3,
    decay=0.5,
    min_gain=0.02,
    min_learning_rate=1e-4,
    clip=5.0,
    dropout=0.25,
)
"""The training recipe of the committed PTB checkpoint (``make ptb-lm``): HRF App I's architecture (2-layer LSTM,
hidden 200, tied embeddings), trained with full-softmax cross-entropy, Adam, Zaremba-style dropout and a
validation-driven learning-rate decay (halved whenever an epoch lowers the validation loss by less than 0.02 nats,
≈ 2 % of perplexity), run until the rate falls below 10⁻⁴ (at most 30 epochs). The paper gives the architecture
only; the optimiser settings are ours."""


def train_lstm_epochs(
    key,
    train_ids,
    valid_ids,
    *,
    vocab_size: int,
    hidden: int = 200,
    n_layers: int = 2,
    batch: int = 32,
    bptt: int = 35,
    epochs: int = 12,
    learning_rate: float = 2e-3,
    decay: float = 0.5,
    min_gain: float = 1e-3,
    min_learning_rate: float = 0.0,
    clip: float = 5.0,
    dropout: float = 0.25,
    max_steps: int | None = None,
    progress: bool = False,
) -> tuple[LSTMParams, dict]:
    """Train the LSTM LM epoch by epoch and keep the parameters with the best validation loss.

    Each epoch runs truncated BPTT once through the batched training stream (state carried between windows, reset at
    the epoch's start) with Adam (global-norm clipping ``clip``) and dropout ``dropout`` (:func:`hidden_states`), then
    measures the validation loss; when it did not improve on the best by ``min_gain`` nats, the learning rate is
    multiplied by ``decay``, and training stops once the rate falls below ``min_learning_rate`` (or after ``epochs``).
    Deterministic for a given key. ``max_steps``: stop after that many steps in all (to check reproducibility
    cheaply); the returned parameters are then the last ones.

    Returns the best parameters and a log: ``step_losses`` (training loss of every step, nats/token), ``epochs``
    (per epoch: learning rate, mean training loss, validation loss and perplexity e^CE), ``best_epoch`` and
    ``stopped`` ("min_learning_rate" or "epochs").
    """
    data = batchify(train_ids, batch)
    epochs = _checks.positive_int("epochs", epochs)
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must lie in [0, 1), got {dropout}")
    if not 0.0 < decay <= 1.0:
        raise ValueError(f"decay must lie in (0, 1], got {decay}")
    if not (np.isfinite(min_gain) and min_gain >= 0.0):
        raise ValueError(f"min_gain must be a finite number of nats ≥ 0, got {min_gain}")
    if not (np.isfinite(min_learning_rate) and 0.0 <= min_learning_rate < learning_rate):
        raise ValueError(f"min_learning_rate must lie in [0, learning_rate = {learning_rate}), got {min_learning_rate}")
    key_init, key_drop = jax.random.split(key)
    params = init_lstm(key_init, vocab_size, hidden, n_layers)
    optimizer = optax.chain(optax.clip_by_global_norm(clip), optax.scale_by_adam())
    opt_state = optimizer.init(params)

    @jax.jit
    def update(params, opt_state, inputs, targets, state, lr, step_key):
        grad_fn = jax.value_and_grad(_loss, has_aux=True)
        (loss, final), grads = grad_fn(params, inputs, targets, state, dropout, step_key)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = jax.tree.map(lambda p, u: p - lr * u, params, updates)
        return params, opt_state, loss, jax.lax.stop_gradient(final)

    windows = range(0, data.shape[1] - 1 - bptt + 1, bptt)
    lr, best_loss, best, step = learning_rate, np.inf, params, 0
    log: dict = {"step_losses": [], "epochs": [], "best_epoch": None, "stopped": "epochs"}
    for epoch in range(1, epochs + 1):
        state, epoch_losses = zero_state(params, batch), []
        for pos in bar(windows, f"epoch {epoch}/{epochs}", progress):
            inputs = jnp.asarray(data[:, pos : pos + bptt])
            targets = jnp.asarray(data[:, pos + 1 : pos + bptt + 1])
            step_key = jax.random.fold_in(key_drop, step)
            params, opt_state, loss, state = update(params, opt_state, inputs, targets, state, lr, step_key)
            epoch_losses.append(float(loss))
            step += 1
            if max_steps is not None and step >= max_steps:
                log["step_losses"].extend(epoch_losses)
                return params, log
        log["step_losses"].extend(epoch_losses)
        valid_loss, _ = evaluate(params, valid_ids, batch=10, bptt=bptt)
        log["epochs"].append(
            {
                "epoch": epoch,
                "learning_rate": lr,
                "train_loss": float(np.mean(epoch_losses)),
                "valid_loss": valid_loss,
                "valid_perplexity": float(np.exp(valid_loss)),
            }
        )
        gain = best_loss - valid_loss
        if gain > 0.0:
            best_loss, best, log["best_epoch"] = valid_loss, params, epoch
        if not gain >= min_gain:
            lr *= decay
            if lr < min_learning_rate:
                log["stopped"] = "min_learning_rate"
                break
    return best, log


def convergence_summary(log: dict) -> str:
    """One sentence on how a :func:`train_lstm_epochs` log ended: epochs run, why training stopped, the last epoch's
    relative change of validation perplexity and the best epoch. A log without epochs (a fixed-step run) says so."""
    epochs = log.get("epochs") or []
    if not epochs:
        return "This model was trained for a fixed number of steps, not to convergence."
    ppl = [e["valid_perplexity"] for e in epochs]
    last_change = 100.0 * (ppl[-1] / ppl[-2] - 1.0) if len(ppl) > 1 else float("nan")
    why = {
        "min_learning_rate": f"its learning rate fell below {log.get('recipe', {}).get('min_learning_rate')}",
        "epochs": "it reached its epoch limit",
    }.get(log.get("stopped", "epochs"), str(log.get("stopped")))
    return (
        f"Training ran {len(epochs)} epochs and stopped because {why} (learning rate {epochs[-1]['learning_rate']:.3g} "
        f"in the last epoch); the last epoch changed validation perplexity by {last_change:+.2f} %; best epoch "
        f"{log.get('best_epoch')} (perplexity {min(ppl):.1f})."
    )


def checkpoint_reproduction(retrained_log: dict, committed_log: dict, tolerance_nats: float) -> dict:
    """Whether a retrained model reproduces a committed one, judged portably.

    float32 training is bitwise reproducible only on one CPU type (vector widths change the order of sums), so a
    retrain elsewhere reaches a different model of the same quality. The portable criterion: the two logs' best
    validation losses (ln of their ``valid_perplexity``) differ by less than ``tolerance_nats``. Returns
    ``{"holds", "gap_nats", "bitwise"}``, ``bitwise`` being whether the parameter hashes (``sha256``) agree.
    """
    tolerance_nats = _checks.positive_float("tolerance_nats", tolerance_nats)
    for name, log in (("retrained_log", retrained_log), ("committed_log", committed_log)):
        missing = {"valid_perplexity", "sha256"} - set(log)
        if missing:
            raise ValueError(f"{name} lacks {sorted(missing)}: pass a log written by tools/train_ptb_lm.py")
        _checks.real_number(f"{name}['valid_perplexity']", log["valid_perplexity"], low=1.0, what="a perplexity")
    gap = float(abs(np.log(retrained_log["valid_perplexity"]) - np.log(committed_log["valid_perplexity"])))
    bitwise = retrained_log["sha256"] == committed_log["sha256"]
    return {"holds": gap < tolerance_nats, "gap_nats": gap, "bitwise": bitwise}


def params_sha256(params: LSTMParams) -> str:
    """SHA-256 of the parameters' values (shapes, dtypes and little-endian bytes in a fixed order): a content hash
    that, unlike the hash of an .npz file, does not depend on the archive's timestamps."""
    digest = hashlib.sha256()
    for name, array in _named_arrays(params):
        a = np.ascontiguousarray(np.asarray(array))
        digest.update(f"{name}:{a.dtype.str}:{a.shape};".encode())
        digest.update(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
    return digest.hexdigest()


def _named_arrays(params: LSTMParams):
    yield "embedding", params.embedding
    for i, (W, b) in enumerate(params.layers):
        yield f"layer{i}_W", W
        yield f"layer{i}_b", b


def save_checkpoint(path, params: LSTMParams) -> str:
    """Write the parameters to ``path`` (.npz, atomically) and return their :func:`params_sha256`."""

    def write(tmp):
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **{name: np.asarray(a) for name, a in _named_arrays(params)})

    write_atomically(Path(path), write)
    return params_sha256(params)


def load_checkpoint(path, sha256: str | None = None) -> LSTMParams:
    """Read parameters written by :func:`save_checkpoint`; with ``sha256``, refuse a file whose content differs."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no checkpoint at {path}: run `make ptb-lm` to train it (40 min to 2 h on 2 cores)")
    with np.load(path) as z:
        n_layers = sum(1 for name in z.files if name.endswith("_W"))
        params = LSTMParams(
            jnp.asarray(z["embedding"]),
            tuple((jnp.asarray(z[f"layer{i}_W"]), jnp.asarray(z[f"layer{i}_b"])) for i in range(n_layers)),
        )
    if sha256 is not None and params_sha256(params) != sha256:
        raise ValueError(
            f"{path} does not hold the expected parameters (SHA-256 {sha256[:12]}…): retrain with `make ptb-lm`"
        )
    return params


def evaluate(params: LSTMParams, ids, *, batch: int = 10, bptt: int = 35) -> tuple[float, np.ndarray]:
    """Mean cross-entropy (nats per token) on a stream, and the top hidden states (queries) it produced.

    Returns (loss, queries: (n_tokens, h)).
    """
    data = batchify(ids, batch)
    state = zero_state(params, batch)
    total, count, queries = 0.0, 0, []
    for pos in range(0, data.shape[1] - 1, bptt):
        end = min(pos + bptt, data.shape[1] - 1)
        inputs = jnp.asarray(data[:, pos:end])
        targets = jnp.asarray(data[:, pos + 1 : end + 1])
        h, _ = _hidden_states_jit(params, inputs, state)
        loss, state = _loss_jit(params, inputs, targets, state)
        total += float(loss) * inputs.size
        count += inputs.size
        queries.append(np.asarray(h).reshape(-1, h.shape[-1]))
    return total / count, np.concatenate(queries)


def distribution_metrics(p_true, p_hat, order=None) -> dict[str, jax.Array]:
    """Distances between a true and an approximated distribution over classes, per row (HRF §4.2, Fig 3).

    With cumulative distributions F, F̂ over the class index (classes taken in the sequence ``order``, a permutation
    of the V columns; default: column order): 1-D Wasserstein W₁ = Σ_c |F(c) − F̂(c)| (unit spacing, so it is in units
    of class-index positions and depends on the order), Kolmogorov–Smirnov KS = max_c |F(c) − F̂(c)|, and the
    fraction of negative entries of ``p_hat``. Shapes: (n, V), (n, V) → each (n,).
    """
    p_true = _checks.points("p_true", p_true)
    p_hat = _checks.points("p_hat", p_hat, dim=p_true.shape[1])
    if order is not None:
        order = np.asarray(order)
        if order.shape != (p_true.shape[1],) or not np.array_equal(np.sort(order), np.arange(p_true.shape[1])):
            raise ValueError(f"order must be a permutation of the {p_true.shape[1]} classes, got shape {order.shape}")
        p_true, p_hat = p_true[:, order], p_hat[:, order]
    gap = jnp.abs(jnp.cumsum(p_true, axis=1) - jnp.cumsum(p_hat, axis=1))
    return {
        "wasserstein": jnp.sum(gap, axis=1),
        "ks": jnp.max(gap, axis=1),
        "negative_fraction": jnp.mean(p_hat < 0, axis=1),
    }


def softmax_distribution(Q, K) -> np.ndarray:
    """p = softmax(Q Kᵀ) row by row: each query's true distribution over the V classes (HRF §4.2). (n, d), (V, d) →
    (n, V), numpy."""
    return np.asarray(jax.nn.softmax(jnp.asarray(Q @ K.T), axis=1))


def query_blind_levels(Q, K, references: dict) -> dict:
    """Where W₁ and KS sit for estimates that ignore the query: {name: {"wasserstein", "ks"}}, the query-averaged
    :func:`distribution_metrics` between each query's p (:func:`softmax_distribution`) and the one distribution
    ``references[name]`` (V,) given to every query (e.g. uniform, or the classes' frequencies). Q: (n, d), K: (V, d)."""
    Q = _checks.finite_numpy("Q", Q, 2)
    K = _checks.finite_numpy("K", K, 2)
    if K.shape[1] != Q.shape[1]:
        raise ValueError(f"K must have Q's {Q.shape[1]} columns, got shape {K.shape}")
    p = softmax_distribution(Q, K)
    levels = {}
    for name, reference in references.items():
        reference = _checks.finite_numpy(f"references[{name!r}]", reference, 1)
        if reference.shape != (K.shape[0],) or (reference < 0).any() or not np.isclose(reference.sum(), 1.0):
            raise ValueError(
                f"references[{name!r}] must be a distribution over the {K.shape[0]} classes (non-negative, sum 1), "
                f"got shape {reference.shape}"
            )
        metrics = distribution_metrics(p, np.broadcast_to(reference, p.shape))
        levels[name] = {k: float(np.mean(metrics[k])) for k in ("wasserstein", "ks")}
    return levels


def normalise_estimates(estimates) -> jax.Array:
    """p̂_c = ŜM(q, k_c) / Σ_c' ŜM(q, k_c') row by row: (n, V) → (n, V). Rows that sum to 0 raise."""
    estimates = jnp.asarray(estimates)
    totals = jnp.sum(estimates, axis=1, keepdims=True)
    if bool(jnp.any(totals == 0)):
        raise ValueError("a row of estimates sums to 0: the approximate distribution is undefined")
    return estimates / totals


READINGS = ("clipped", "signed", "absolute")
"""How a row of signed estimates ŜM(q, k_c) induces a distribution over the classes (the paper does not say):
``clipped`` max(ŜM, 0) / Σ max(ŜM, 0) — a distribution, our main reading; ``signed`` ŜM / Σ ŜM — sums to 1 but has
negative entries, so its "CDF" leaves [0, 1] and KS can exceed 1; ``absolute`` |ŜM| / Σ |ŜM|."""


def induced_distribution(estimates, reading: str = "clipped") -> jax.Array:
    """The distribution over classes induced by signed kernel estimates under one of :data:`READINGS`.

    (n, V) → (n, V). Under ``clipped``, a row with no positive estimate carries no information about the classes and
    induces the uniform distribution (it happens when one draw of trig features gives every class the same sign, e.g.
    for a query much longer than every key); under ``signed`` a row summing to 0 raises.
    """
    _checks.one_of("reading", reading, READINGS)
    estimates = jnp.asarray(estimates)
    if reading == "signed":
        return normalise_estimates(estimates)
    weights = jnp.maximum(estimates, 0.0) if reading == "clipped" else jnp.abs(estimates)
    totals = jnp.sum(weights, axis=1, keepdims=True)
    uniform = jnp.full_like(weights, 1.0 / weights.shape[1])
    return jnp.where(totals > 0, weights / jnp.where(totals > 0, totals, 1.0), uniform)


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
    views=None,
    progress: bool = False,
    per_query: bool = False,
):
    """HRF Fig 3 / Table 4: how well each estimator's induced p̂ reproduces the softmax distribution p = softmax(QKᵀ).

    For every seed, size M and method, one draw of :func:`softmax_kernel_estimates` (key ``key_for(seed, M,
    method)``; the Gaussian hybrid's radius is the RMS norm of all queries and keys, its σ = 1/radius) is turned into a
    distribution (:func:`induced_distribution`) and scored by :func:`distribution_metrics` averaged over the
    queries; ``negative_fraction`` is the fraction of negative *estimates* ŜM (whatever the reading) and
    ``no_positive_fraction`` the fraction of queries none of whose estimates is positive (the clipped reading then
    induces the uniform distribution).

    Args:
      Q: (n, d) queries; K: (V, d) keys (float64 numpy).
      seeds: number of independent draws; sizes: the feature counts M; progress: show a bar over the seeds.
      views: None (the main reading: ``clipped``, column order), or {name: (reading, order)} to score the same draws
        under several readings (:data:`READINGS`) and class orders (a permutation of the V columns, or None).
      per_query: also return each metric's seed × query table by its margins, for :func:`crossed_mean_se`.
    Returns:
      (method, M) → metric → (mean, std) over seeds of the query-averaged W₁, KS and negative fraction; with
      ``views``, {name: that mapping}. With ``per_query``, the pair (that, margins), where margins has the same keys
      and holds metric → (per-seed means (seeds,), per-query means over the seeds (n,)) instead of (mean, std).
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
    named = {"main": ("clipped", None)} if views is None else dict(views)
    for reading, _ in named.values():
        _checks.one_of("views' reading", reading, READINGS)
    p_true = softmax_distribution(Q, K)
    r_common = float(np.sqrt(np.mean(np.concatenate([np.sum(Q**2, 1), np.sum(K**2, 1)]))))
    rows = {name: {(method, M): [] for method in methods for M in sizes} for name in named}
    query_sums = {name: {(method, M): {} for method in methods for M in sizes} for name in named}
    for si in bar(range(seeds), "Table 4, seeds", progress):
        for M in sizes:
            for method in methods:
                key = key_for(si, M, method)
                estimates = softmax_kernel_estimates(method, M, key, Q, K, n_lambda=n_lambda, radius=r_common)
                on_host = np.asarray(estimates)
                by_query = {
                    "negative_fraction": np.mean(on_host < 0, axis=1),
                    "no_positive_fraction": np.all(on_host <= 0, axis=1).astype(np.float64),
                }
                for name, (reading, order) in named.items():
                    out = distribution_metrics(p_true, induced_distribution(estimates, reading), order)
                    out = {k: np.asarray(v, dtype=np.float64) for k, v in out.items()} | by_query
                    rows[name][method, M].append({k: float(np.mean(v)) for k, v in out.items()})
                    sums = query_sums[name][method, M]
                    for k, v in out.items():
                        sums[k] = sums.get(k, 0.0) + v
    summaries = {
        name: {
            key: {k: (np.mean([r[k] for r in runs]), np.std([r[k] for r in runs])) for k in runs[0]}
            for key, runs in per_view.items()
        }
        for name, per_view in rows.items()
    }
    margins = {
        name: {
            key: {k: (np.array([r[k] for r in runs]), query_sums[name][key][k] / seeds) for k in runs[0]}
            for key, runs in per_view.items()
        }
        for name, per_view in rows.items()
    }
    if views is None:
        summaries, margins = summaries["main"], margins["main"]
    return (summaries, margins) if per_query else summaries


def crossed_mean_se(a, b=None) -> tuple[float, float]:
    """A metric's mean over a seeds × queries table, or the gap between two methods' means, and its standard error
    with both the seeds (draws) and the queries taken as samples.

    ``a`` (and ``b``) are a table's margins as :func:`softmax_metrics_study` returns them with ``per_query``: the
    per-seed means (R,) and the per-query means over the seeds (n,). Alone: the mean, and the variance estimate
    var(seed means)/R + var(query means)/n (ddof 1 each), the conservative estimator for a crossed design (it counts
    the interaction term twice; :func:`rflib.experiments.kernel_classification.mean_paired_gap` uses the same).
    With ``b``: the gap a − b of two methods drawn independently but scored on the same queries, so the seed terms
    add and the query term is taken on the paired differences, var(a's query means − b's)/n.
    """
    tables = [a] if b is None else [a, b]
    seed_means, query_means = [], []
    for name, table in zip("ab", tables, strict=False):
        if not isinstance(table, tuple | list) or len(table) != 2:
            raise ValueError(f"{name} must be a pair (per-seed means, per-query means), got {type(table).__name__}")
        by_seed, by_query = (np.asarray(v, dtype=np.float64) for v in table)
        if by_seed.ndim != 1 or by_query.ndim != 1 or by_seed.size < 2 or by_query.size < 2:
            raise ValueError(f"{name} must hold two 1-D margins of at least 2 values each (seeds ≥ 2, queries ≥ 2)")
        if not (np.isfinite(by_seed).all() and np.isfinite(by_query).all()):
            raise ValueError(f"{name}'s margins must be finite")
        seed_means.append(by_seed)
        query_means.append(by_query)
    if b is not None and query_means[0].shape != query_means[1].shape:
        raise ValueError(
            f"a and b must be scored on the same queries, got {query_means[0].size} and {query_means[1].size}"
        )
    mean = float(np.mean(seed_means[0]) - (np.mean(seed_means[1]) if b is not None else 0.0))
    by_query = query_means[0] - (query_means[1] if b is not None else 0.0)
    variance = sum(np.var(v, ddof=1) / v.size for v in seed_means) + np.var(by_query, ddof=1) / by_query.size
    return mean, float(np.sqrt(variance))


def _log_two_sinh_sq_half(t):
    """log(2 sinh²(t/2)) for t ≥ 0, stable for large t (= t + 2 log(1 − e^{−t}) − log 2); −inf at t = 0."""
    return t + 2.0 * np.log(-np.expm1(-t)) - np.log(2.0)


def relative_error_profile(Q, K, M: int, *, n_lambda: int, radius: float, chunk: int = 50) -> dict[str, float]:
    """Exact diagnosis of HRF Fig 3: how noisy each estimator of :func:`softmax_kernel_estimates` is on the classes
    that carry the softmax's mass.

    For each query q and class c the closed-form relative MSE of ŜM(q, k_c) with M features (iid projections):
    trig 2 sinh²(‖q − k‖²/2)/M and FAVOR+ 2 sinh²(‖q + k‖²/2)/M (HRF Lemma 2.2 divided by SM²); the hybrids with
    m = M/n_lambda per base, E λ̂² rel_FAVOR+(m) + E(1 − λ̂)² rel_trig(m) (Theorem 3.1, case I), with the angular λ's
    moments (Lemma 3.2) or the normalised Gaussian λ's (Theorem F.1, σ = 1/radius, r = radius). Returns, per method,
    the mean over queries of Σ_c p_c log₁₀(relative MSE), p = softmax(Q Kᵀ): 0 means a typical relative error of
    100 %. Q: (n, d), K: (V, d).
    """
    Q = _checks.finite_numpy("Q", Q, 2)
    K = _checks.finite_numpy("K", K, 2)
    M = _checks.positive_int("M", M)
    m = M // _checks.positive_int("n_lambda", n_lambda)
    if m < 1:
        raise ValueError(f"M = {M} leaves no projection per base with n_lambda = {n_lambda}; use M ≥ n_lambda")
    kk = np.sum(K**2, axis=1)
    totals = {method: 0.0 for method in SOFTMAX_ESTIMATORS}
    for start in range(0, Q.shape[0], chunk):
        q = Q[start : start + chunk]
        qq, dot = np.sum(q**2, axis=1)[:, None], q @ K.T
        p = np.asarray(jax.nn.softmax(jnp.asarray(dot), axis=1))
        z_sq, delta_sq = qq + kk + 2 * dot, np.maximum(qq + kk - 2 * dot, 0.0)
        log_trig, log_pos = _log_two_sinh_sq_half(delta_sq), _log_two_sinh_sq_half(z_sq)  # × 1/M, 1/m below
        cos = np.clip(dot / np.sqrt(qq * kk), -1.0, 1.0)
        lam = {
            "Angular": moments.hybrid.angular_lambda_moments(np.arccos(cos), n_lambda),
            "Gaussian": moments.hybrid.normalized_gaussian_lambda_moments(
                delta_sq, n_lambda, sigma=1.0 / radius, r=radius
            ),
        }
        logs = {"FAVOR+": log_pos - np.log(M), "Trig.": log_trig - np.log(M)}
        for name, mom in lam.items():
            logs[name] = np.logaddexp(
                np.log(np.asarray(mom.second)) + log_pos, np.log(np.asarray(mom.one_minus_second)) + log_trig
            ) - np.log(m)
        for name, log_rel in logs.items():
            totals[name] += float(np.sum(p * np.where(p > 0, log_rel, 0.0)) / np.log(10.0))
    return {name: total / Q.shape[0] for name, total in totals.items()}


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
