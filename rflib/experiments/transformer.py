"""A small Transformer encoder for image-patch sequences, with exact or random-feature attention (FAVOR# §5.3 stand-in).

Images are cut into non-overlapping p×p patches (MNIST: 49 tokens of 16 pixels), linearly embedded with learned
positions, passed through pre-LayerNorm blocks (multi-head self-attention + GELU MLP) and mean-pooled into a
linear classifier. The attention of every block is one of:

- ``"softmax"``: exact attention, softmax(QKᵀ/√d_h)V;
- ``"positive"`` (FAVOR+), ``"gerf"`` (FAVOR++), ``"saderf"`` / ``"aderf"`` / ``"sderf"`` (FAVOR#): linear attention
  with random features whose DERF parameters are fitted to each sequence and head (``rflib.attention.
  favor_sharp_attention``), M features per head, with the projections ω redrawn for every training step (one
  sign-fixed orthogonal matrix per layer, shared by the heads) and fixed by a key at evaluation.

Everything is a pure function of (params, inputs, key); training uses optax Adam and is jitted once per shape.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rflib import _checks, attention, projections
from rflib.experiments.progress_bars import bar
from rflib.features import dense_exp
from rflib.moments import dense_exp as dense_exp_moments

ATTENTIONS = ("softmax", *dense_exp.METHODS)


class Config(NamedTuple):
    """Architecture: image side, patch side, model width, heads, blocks, MLP width, classes."""

    image_side: int = 28
    patch: int = 4
    d_model: int = 64
    heads: int = 4
    layers: int = 2
    mlp: int = 128
    classes: int = 10

    @property
    def tokens(self) -> int:
        return (self.image_side // self.patch) ** 2

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads


MNIST = Config()
"""28×28 images as 49 patches of 4×4, width 64, 4 heads of 16, 2 blocks, MLP 128, 10 classes."""


def _check_config(cfg: Config) -> Config:
    for name in cfg._fields:
        _checks.positive_int(name, getattr(cfg, name))
    if cfg.image_side % cfg.patch:
        raise ValueError(f"image_side {cfg.image_side} must be a multiple of patch {cfg.patch}")
    if cfg.d_model % cfg.heads:
        raise ValueError(f"d_model {cfg.d_model} must be a multiple of heads {cfg.heads}")
    return cfg


def _check_attention(kind: str, features: int | None):
    if kind not in ATTENTIONS:
        raise ValueError(f"attention must be one of {ATTENTIONS}, got {kind!r}")
    if kind != "softmax":
        _checks.positive_int("features", features)


def init_params(key, cfg: Config = MNIST) -> dict:
    """Glorot-uniform weights, zero biases, unit LayerNorm gains, N(0, 0.02²) positions."""
    cfg = _check_config(cfg)
    glorot = jax.nn.initializers.glorot_uniform()
    keys = iter(jax.random.split(key, 4 + 4 * cfg.layers))
    d, p2 = cfg.d_model, cfg.patch**2

    def dense(k, n_in, n_out):
        return {"w": glorot(k, (n_in, n_out), jnp.float32), "b": jnp.zeros(n_out, jnp.float32)}

    def norm():
        return {"g": jnp.ones(d, jnp.float32), "b": jnp.zeros(d, jnp.float32)}

    blocks = [
        {
            "norm1": norm(),
            "qkv": dense(next(keys), d, 3 * d),
            "out": dense(next(keys), d, d),
            "norm2": norm(),
            "mlp1": dense(next(keys), d, cfg.mlp),
            "mlp2": dense(next(keys), cfg.mlp, d),
        }
        for _ in range(cfg.layers)
    ]
    return {
        "embed": dense(next(keys), p2, d),
        "pos": 0.02 * jax.random.normal(next(keys), (cfg.tokens, d), jnp.float32),
        "blocks": blocks,
        "norm": norm(),
        "head": dense(next(keys), d, cfg.classes),
    }


def patchify(images, cfg: Config = MNIST) -> jax.Array:
    """(B, side²) or (B, side, side) images → (B, tokens, patch²) row-major non-overlapping patches."""
    side, p = cfg.image_side, cfg.patch
    x = jnp.asarray(images).reshape(-1, side // p, p, side // p, p)
    return x.transpose(0, 1, 3, 2, 4).reshape(x.shape[0], (side // p) ** 2, p * p)


def _layer_norm(x, prm):
    mean = jnp.mean(x, -1, keepdims=True)
    var = jnp.var(x, -1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-6) * prm["g"] + prm["b"]


def _attend(q, k, v, kind, W):
    """q, k, v: (B, H, L, d_h) → (B, H, L, d_h), with the usual 1/√d_h temperature split as d_h^{-1/4} on q and k."""
    scale = q.shape[-1] ** -0.25
    if kind == "softmax":
        return attention.softmax_attention(q * scale, k * scale, v)
    return attention.favor_sharp_attention(q * scale, k * scale, v, W, method=kind)


def _forward(params, images, cfg: Config, kind: str, Ws, capture: bool = False):
    x = patchify(images, cfg) @ params["embed"]["w"] + params["embed"]["b"] + params["pos"]
    B, L, d = x.shape
    captured = []
    for i, blk in enumerate(params["blocks"]):
        h = _layer_norm(x, blk["norm1"]) @ blk["qkv"]["w"] + blk["qkv"]["b"]
        q, k, v = (t.reshape(B, L, cfg.heads, cfg.head_dim).transpose(0, 2, 1, 3) for t in jnp.split(h, 3, -1))
        if capture:
            captured.append((q, k, v))
        a = _attend(q, k, v, kind, None if Ws is None else Ws[i])
        x = x + a.transpose(0, 2, 1, 3).reshape(B, L, d) @ blk["out"]["w"] + blk["out"]["b"]
        h = jax.nn.gelu(_layer_norm(x, blk["norm2"]) @ blk["mlp1"]["w"] + blk["mlp1"]["b"])
        x = x + h @ blk["mlp2"]["w"] + blk["mlp2"]["b"]
    pooled = jnp.mean(_layer_norm(x, params["norm"]), axis=1)
    logits = pooled @ params["head"]["w"] + params["head"]["b"]
    return (logits, captured) if capture else logits


def draw_projections(key, cfg: Config, features: int) -> jax.Array:
    """One sign-fixed orthogonal (features, d_h) matrix with χ row norms per layer: (layers, features, d_h)."""
    return projections.orthogonal_batch(key, cfg.layers, features, cfg.head_dim)


def logits(params, images, cfg: Config = MNIST, kind: str = "softmax", *, features: int | None = None, key=None):
    """Class logits (B, classes). Random-feature attention needs ``features`` (M per head) and a ``key``."""
    _check_attention(kind, features)
    Ws = None if kind == "softmax" else draw_projections(key, cfg, features)
    return _logits_jit(params, jnp.asarray(images, jnp.float32), cfg, kind, Ws)


@partial(jax.jit, static_argnames=("cfg", "kind"))
def _logits_jit(params, images, cfg, kind, Ws):
    return _forward(params, images, cfg, kind, Ws)


def queries_keys_values(params, images, cfg: Config = MNIST) -> list[tuple[jax.Array, jax.Array, jax.Array]]:
    """Per layer, the (B, heads, tokens, d_h) queries, keys and values of the *softmax* model on ``images``."""
    _, captured = jax.jit(partial(_forward, cfg=cfg, kind="softmax", Ws=None, capture=True))(
        params, jnp.asarray(images, jnp.float32)
    )
    return captured


def accuracy(
    params, images, labels, cfg: Config = MNIST, kind: str = "softmax", *, features=None, key=None, batch: int = 1000
) -> float:
    """Classification accuracy, in batches; random-feature attention uses one fixed draw of ω (from ``key``)."""
    _check_attention(kind, features)
    Ws = None if kind == "softmax" else draw_projections(key, cfg, features)
    images = np.asarray(images, np.float32)
    labels = np.asarray(labels)
    correct = 0
    for start in range(0, len(images), batch):
        out = _logits_jit(params, jnp.asarray(images[start : start + batch]), cfg, kind, Ws)
        correct += int(jnp.sum(jnp.argmax(out, -1) == labels[start : start + batch]))
    return correct / len(images)


def _loss(params, images, labels, cfg, kind, Ws):
    out = _forward(params, images, cfg, kind, Ws)
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(out, labels))


@partial(jax.jit, static_argnames=("cfg", "kind", "features"))
def _train_step(params, state, xb, yb, k, learning_rate, *, cfg, kind, features):
    """One Adam step; jitted once per (shape, configuration), shared by every call of :func:`train`.

    The learning rate is traced, so fine-tuning at another rate reuses the compiled step.
    """
    Ws = None if kind == "softmax" else draw_projections(k, cfg, features)
    loss, grads = jax.value_and_grad(_loss)(params, xb, yb, cfg, kind, Ws)
    updates, state = optax.adam(learning_rate).update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


def train(
    params,
    images,
    labels,
    *,
    cfg: Config = MNIST,
    kind: str = "softmax",
    features: int | None = None,
    steps: int,
    batch: int = 128,
    learning_rate: float = 1e-3,
    key,
    progress: bool = False,
) -> tuple[dict, np.ndarray]:
    """Adam on the cross-entropy; mini-batches drawn without replacement per epoch from ``key``.

    Random-feature attention redraws ω every step (from ``key``). Returns the trained parameters and the per-step
    training losses. Deterministic given the key. ``progress``: show a bar over the steps.
    """
    _check_attention(kind, features)
    steps = _checks.positive_int("steps", steps)
    images = np.asarray(images, np.float32)
    labels = np.asarray(labels)
    if len(images) != len(labels) or len(images) < batch:
        raise ValueError(f"need as many labels as images and at least one batch, got {len(images)}, {len(labels)}")
    state = optax.adam(learning_rate).init(params)
    step = partial(_train_step, cfg=cfg, kind=kind, features=features)
    rate = jnp.asarray(_checks.positive_float("learning_rate", learning_rate), jnp.float32)

    order_key, feature_key = jax.random.split(key)
    per_epoch = len(images) // batch
    losses = []
    order = None
    for t in bar(range(steps), f"train {kind}" + (f" M={features}" if features else ""), progress):
        if t % per_epoch == 0:
            order = np.asarray(jax.random.permutation(jax.random.fold_in(order_key, t // per_epoch), len(images)))
        idx = order[(t % per_epoch) * batch : (t % per_epoch + 1) * batch]
        params, state, loss = step(params, state, images[idx], labels[idx], jax.random.fold_in(feature_key, t), rate)
        losses.append(loss)
    return params, np.asarray(jnp.stack(losses))


# --- the FAVOR# §5.3 stand-in studies: approximation of learned attention, kernel variance, warm start ----------


def attention_tv_errors(captured, cfg: Config, Ms, draws: int, kinds, key_for, *, progress: bool = False):
    """How well random-feature attention approximates a trained model's softmax attention (FAVOR# §5.3 stand-in).

    For every layer's captured (q, k, ·) of shape (B, heads, tokens, d_h) (:func:`queries_keys_values`), scaled by
    d_h^{−1/4} as in the model, the exact attention matrix A = softmax(QKᵀ/√d_h) and its estimate Â (the output of
    ``attention.favor_sharp_attention`` with V = I_tokens) are compared by the mean total variation
    ½Σ_j|Â_ij − A_ij| over rows, heads and images. For each M and draw < ``draws`` one sign-fixed orthogonal
    (M, d_h) matrix from ``key_for(layer, M, draw)`` (``projections.orthogonal``) serves every kind.

    ``progress``: show a bar over the M of each layer.

    Returns:
      (mean, standard error, per draw): (kind, M) → the mean over layers × draws, its standard error over the draws
      (ddof 1, NaN for one draw), and the (draws,) array of each draw's mean over layers — paired across kinds, since
      one ω serves every kind, so differences between kinds are best judged draw by draw.
    """
    draws = _checks.positive_int("draws", draws)
    for kind in kinds:
        _checks.one_of("kinds", kind, dense_exp.METHODS)
    for M in Ms:
        _checks.positive_int("Ms", M)
    scale_qk = cfg.head_dim**-0.25
    identity = np.eye(cfg.tokens, dtype=np.float32)
    tv = {(kind, M): np.zeros((len(captured), draws)) for kind in kinds for M in Ms}
    for layer, (q, k, _) in enumerate(captured):
        q, k = q * scale_qk, k * scale_qk
        values = np.broadcast_to(identity, q.shape[:2] + identity.shape)
        exact = np.asarray(attention.softmax_attention(q, k, values))
        for M in bar(Ms, f"layer {layer + 1}", progress):
            for draw in range(draws):
                W = projections.orthogonal(key_for(layer, M, draw), M, cfg.head_dim)
                for kind in kinds:
                    est = np.asarray(attention.favor_sharp_attention(q, k, values, W, method=kind))
                    tv[kind, M][layer, draw] = 0.5 * np.abs(est - exact).sum(-1).mean()
    per_draw = {key: val.mean(axis=0) for key, val in tv.items()}
    mean_tv = {key: float(val.mean()) for key, val in per_draw.items()}
    se_tv = {
        key: float(val.std(ddof=1) / np.sqrt(draws)) if draws > 1 else float("nan") for key, val in per_draw.items()
    }
    return mean_tv, se_tv, per_draw


def captured_log_relative_variance(captured, cfg: Config, images: int, kinds) -> dict[str, float]:
    """FAVOR#'s kernel-level criterion on a trained model's queries and keys: per kind (``"trig"`` or a
    ``dense_exp.METHODS`` name), the mean over layers, the first ``images`` images and every head of the mean over
    query–key pairs of log(Var/K²) for one feature (closed form, ``moments.dense_exp.method_log_relative_variance``,
    parameters fitted per sequence and head; FAVOR# eq 14 / Figs 1–2). ``captured`` as in :func:`attention_tv_errors`.
    Δ is a sum of non-negative terms, so float32 inputs suffice."""
    images = _checks.positive_int("images", images)
    for kind in kinds:
        _checks.one_of("kinds", kind, ("trig", *dense_exp.METHODS))
    scale_qk = cfg.head_dim**-0.25
    log_rel_var = {kind: [] for kind in kinds}
    for q, k, _ in captured:
        q_h, k_h = np.asarray(q) * scale_qk, np.asarray(k) * scale_qk
        for b in range(min(images, q_h.shape[0])):
            for h in range(cfg.heads):
                for kind in log_rel_var:
                    log_rel_var[kind].append(
                        float(
                            np.mean(
                                np.asarray(dense_exp_moments.method_log_relative_variance(kind, q_h[b, h], k_h[b, h]))
                            )
                        )
                    )
    return {kind: float(np.mean(v)) for kind, v in log_rel_var.items()}


def accuracy_over_draws(params, images, labels, cfg: Config, kind: str, features: int, keys) -> tuple[float, float]:
    """Test accuracy of random-feature attention for independent evaluation draws of ω (one per key of ``keys``):
    (mean, standard deviation with ddof = 1 over draws; NaN for a single draw)."""
    keys = list(keys)
    if not keys:
        raise ValueError("keys must hold at least one key (one evaluation draw of ω each)")
    acc = [accuracy(params, images, labels, cfg, kind, features=features, key=key) for key in keys]
    return float(np.mean(acc)), float(np.std(acc, ddof=1)) if len(acc) > 1 else float("nan")


def warm_start_finetuning(
    base,
    train_data,
    test_data,
    *,
    cfg: Config = MNIST,
    Ms,
    kinds,
    steps: int,
    batch: int,
    learning_rate: float,
    key_for,
    eval_keys,
    progress: bool = False,
) -> dict:
    """The GLUE protocol of FAVOR# Table 1 in miniature: every model starts from the trained softmax model ``base``,
    swaps in its attention and is fine-tuned by :func:`train` for the same ``steps`` (ω redrawn every step).

    The softmax model is fine-tuned with key ``key_for("softmax")``; for each M every kind is fine-tuned with key
    ``key_for(M)`` (the same mini-batches for every kind). Zero-shot and fine-tuned accuracies of the random-feature
    models are :func:`accuracy_over_draws` over ``eval_keys``.

    Args:
      train_data, test_data: (images, labels) pairs.
      progress: show a bar over the kinds for each M.
    Returns:
      ``{("softmax", None): {"zero_shot", "fine_tuned"}, (kind, M): {"zero_shot", "fine_tuned", "zero_shot_sd",
      "fine_tuned_sd", "draw_sd"}}``, accuracies in [0, 1]; ``*_sd`` the standard deviations over evaluation draws
      (ddof 1, NaN for one draw), draw_sd the larger of the two.
    """
    for kind in kinds:
        _checks.one_of("kinds", kind, dense_exp.METHODS)
    for M in Ms:
        _checks.positive_int("Ms", M)
    (X_train, y_train), (X_test, y_test) = train_data, test_data
    eval_keys = list(eval_keys)
    if not eval_keys:
        raise ValueError("eval_keys must hold at least one key (one evaluation draw of ω each)")
    run = dict(cfg=cfg, steps=steps, batch=batch, learning_rate=learning_rate, progress=False)
    softmax_tuned, _ = train(base, X_train, y_train, key=key_for("softmax"), **run)
    rows = {
        ("softmax", None): {
            "zero_shot": accuracy(base, X_test, y_test, cfg),
            "fine_tuned": accuracy(softmax_tuned, X_test, y_test, cfg),
        }
    }
    for M in Ms:
        for kind in bar(kinds, f"swap + fine-tune, M = {M}", progress):
            tuned, _ = train(base, X_train, y_train, kind=kind, features=M, key=key_for(M), **run)
            (zero_shot, zero_sd), (fine_tuned, fine_sd) = (
                accuracy_over_draws(base, X_test, y_test, cfg, kind, M, eval_keys),
                accuracy_over_draws(tuned, X_test, y_test, cfg, kind, M, eval_keys),
            )
            rows[kind, M] = {
                "zero_shot": zero_shot,
                "fine_tuned": fine_tuned,
                "zero_shot_sd": zero_sd,
                "fine_tuned_sd": fine_sd,
                "draw_sd": max(zero_sd, fine_sd),
            }
    return rows
