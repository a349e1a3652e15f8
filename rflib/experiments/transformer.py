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
from rflib.features import dense_exp

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
    progress: bool = True,
) -> tuple[dict, np.ndarray]:
    """Adam on the cross-entropy; mini-batches drawn without replacement per epoch from ``key``.

    Random-feature attention redraws ω every step (from ``key``). Returns the trained parameters and the per-step
    training losses. Deterministic given the key.
    """
    from tqdm.auto import tqdm

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
    for t in tqdm(range(steps), desc=f"train {kind}" + (f" M={features}" if features else ""), disable=not progress):
        if t % per_epoch == 0:
            order = np.asarray(jax.random.permutation(jax.random.fold_in(order_key, t // per_epoch), len(images)))
        idx = order[(t % per_epoch) * batch : (t % per_epoch + 1) * batch]
        params, state, loss = step(params, state, images[idx], labels[idx], jax.random.fold_in(feature_key, t), rate)
        losses.append(loss)
    return params, np.asarray(jnp.stack(losses))
