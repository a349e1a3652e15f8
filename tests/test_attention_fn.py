"""rflib.attention.make_attention_fn: a drop-in attention_fn with Flax's layout and jax.nn.dot_product_attention's
1/√d convention, for FAVOR+, FAVOR# and HRF, used inside a small Flax model that trains."""

from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from rflib import attention, projections
from rflib.features import classic, hybrid

B, L, H, D = 2, 24, 3, 8


def _qkv(key, scale=1.0, dv=D):
    kq, kk, kv = jax.random.split(key, 3)
    return (
        scale * jax.random.normal(kq, (B, L, H, D)),
        scale * jax.random.normal(kk, (B, L, H, D)),
        jax.random.normal(kv, (B, L, H, dv)),
    )


def _heads_first(x):
    return jnp.swapaxes(x, 1, 2)  # (B, L, H, d) -> (B, H, L, d)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", attention.ATTENTION_KINDS)
def test_attention_fn_is_rflib_attention_in_flax_layout_with_the_one_over_sqrt_d_convention(key, kind, causal):
    """Exactly rflib's attention on (B, H, L, d) inputs scaled by d^{-1/4}, with the projections drawn from the key."""
    kp, kd = jax.random.split(key)
    Q, K, V = _qkv(kd, dv=5)
    fn = attention.make_attention_fn(kind, D, projection_key=kp, num_features=64, causal=causal)
    out = fn(Q, K, V)
    assert out.shape == (B, L, H, 5)
    q, k, v = _heads_first(Q) * D**-0.25, _heads_first(K) * D**-0.25, _heads_first(V)
    if kind == "favor+":
        expected = attention.linear_attention(
            q, k, v, partial(classic.positive_features, projections.orthogonal(kp, 64, D)), causal=causal
        )
    elif kind == "favor#":
        expected = attention.favor_sharp_attention(q, k, v, projections.orthogonal(kp, 64, D), causal=causal)
    else:
        k1, k2, k3 = jax.random.split(kp, 3)
        est = hybrid.angular_hybrid_estimator(
            projections.orthogonal(k1, 8, D), projections.orthogonal(k2, 8, D), projections.gaussian(k3, 3, D)
        )
        expected = attention.linear_attention(q, k, v, est, causal=causal)
    np.testing.assert_allclose(out, _heads_first(expected), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", ["favor+", "favor#"])
def test_attention_fn_estimates_jax_dot_product_attention(key, kind, causal):
    """With 4 096 features the estimate is within 5 % of jax.nn.dot_product_attention (scale 1/√d, is_causal), and
    at least 4× closer to it than to attention at the temperatures a wrong convention gives (no scaling: scale 1;
    1/d instead of 1/√d). The key is fixed; measured 1.0–2.4 % against 10–39 %."""
    kp, kd = jax.random.split(key)
    Q, K, V = _qkv(kd, scale=0.5)
    approx = attention.make_attention_fn(kind, D, projection_key=kp, num_features=4096, causal=causal)(Q, K, V)

    def distance(scale=None):
        target = jax.nn.dot_product_attention(Q, K, V, is_causal=causal, scale=scale)
        return float(jnp.linalg.norm(approx - target) / jnp.linalg.norm(target))

    assert distance() < 0.05, distance()
    assert min(distance(1.0), distance(1.0 / D)) > 4 * distance()


def test_redraw_policies(key):
    """ "never": one estimator for every call; "per_call": new projections for new inputs, the same for the same."""
    kp, k1, k2 = jax.random.split(key, 3)
    Q1, K1, V1 = _qkv(k1)
    Q2, _, _ = _qkv(k2)
    never = attention.make_attention_fn("favor+", D, projection_key=kp, num_features=32)
    per_call = attention.make_attention_fn("favor+", D, projection_key=kp, num_features=32, redraw="per_call")
    np.testing.assert_array_equal(per_call(Q1, K1, V1), per_call(Q1, K1, V1))
    assert not np.allclose(per_call(Q1, K1, V1), never(Q1, K1, V1))
    digest1, digest2 = attention._digest(_heads_first(Q1)), attention._digest(_heads_first(Q2))
    assert int(digest1) != int(digest2)
    W_call = projections.orthogonal(jax.random.fold_in(kp, digest1), 32, D)
    expected = attention.linear_attention(
        *(_heads_first(x) * s for x, s in ((Q1, D**-0.25), (K1, D**-0.25), (V1, 1.0))),
        partial(classic.positive_features, W_call),
    )
    np.testing.assert_allclose(per_call(Q1, K1, V1), _heads_first(expected), rtol=1e-12)


def test_attention_fn_refuses_what_it_cannot_do(key):
    Q, K, V = _qkv(key)
    fn = attention.make_attention_fn("favor+", D, projection_key=key)
    with pytest.raises(ValueError, match="causal=True"):
        fn(Q, K, V, mask=jnp.ones((B, H, L, L), bool))
    with pytest.raises(ValueError, match="drop out"):
        fn(Q, K, V, dropout_rate=0.1, deterministic=False)
    with pytest.raises(ValueError, match="head_dim = 8"):
        fn(Q[..., :4], K[..., :4], V)
    with pytest.raises(ValueError, match="query must hold real numbers"):  # was cast to 0/1 by the d^(-1/4) scaling
        fn(Q > 0, K, V)
    with pytest.raises(ValueError, match="value must be real"):
        fn(Q, K, V + 1j)
    with pytest.raises(ValueError, match="key must have"):
        fn(Q, K[0, :, 0], V)
    for bad, match in (
        (dict(kind="performer"), "kind"),
        (dict(redraw="sometimes"), "redraw"),
        (dict(projection_key=0), "jax.random key"),
        (dict(num_features=0), "num_features"),
        (dict(kind="hrf", num_features=4), "≥ 8"),
        (dict(method="relu"), "method"),
    ):
        args = dict(kind="favor+", head_dim=D, projection_key=key) | bad
        with pytest.raises(ValueError, match=match):
            attention.make_attention_fn(args.pop("kind"), args.pop("head_dim"), **args)


class _TinyModel(nn.Module):
    """Embed tokens, one multi-head attention layer with the drop-in attention_fn, read out per token."""

    attention_fn: object

    @nn.compact
    def __call__(self, x):
        h = nn.Dense(16)(x)
        h = h + nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=16, attention_fn=self.attention_fn)(h, h)
        return nn.Dense(1)(nn.gelu(h))[..., 0]


# HRF's estimates are signed, so a row's denominator can come near 0 (the estimator, not a bug): with 64 features its
# training curve depended on XLA's thread count (reduction order); 256 features and a smaller step make it stable.
@pytest.mark.parametrize(
    ("kind", "causal", "num_features", "learning_rate"),
    [("favor+", False, 64, 1e-2), ("favor+", True, 64, 1e-2), ("favor#", False, 64, 1e-2), ("hrf", True, 256, 3e-3)],
)
def test_a_flax_model_with_the_drop_in_attention_trains(kind, causal, num_features, learning_rate):
    """A Flax MultiHeadDotProductAttention with attention_fn=make_attention_fn(...) (head_dim 8, float32) learns a
    task that needs attention, the running mean (causal) or the mean (bidirectional) of the inputs: 60 Adam steps
    cut the loss at least threefold, every gradient stays finite."""
    x = jax.random.normal(jax.random.key(1), (16, 12, 4), jnp.float32)
    signal = x[..., 0]
    target = (
        jnp.cumsum(signal, axis=1) / jnp.arange(1, 13)
        if causal
        else jnp.broadcast_to(signal.mean(1, keepdims=True), signal.shape)
    )
    fn = attention.make_attention_fn(
        kind, 8, projection_key=jax.random.key(2), num_features=num_features, causal=causal
    )
    model = _TinyModel(fn)
    params = model.init(jax.random.key(3), x)
    optimiser = optax.adam(learning_rate)
    state = optimiser.init(params)

    def loss(params):
        return jnp.mean((model.apply(params, x) - target) ** 2)

    @jax.jit
    def step(params, state):
        value, grads = jax.value_and_grad(loss)(params)
        updates, state = optimiser.update(grads, state)
        finite = jnp.all(jnp.array([jnp.all(jnp.isfinite(g)) for g in jax.tree_util.tree_leaves(grads)]))
        return optax.apply_updates(params, updates), state, value, finite

    first = float(loss(params))
    for _ in range(60):
        params, state, value, finite = step(params, state)
        assert bool(finite)
    assert float(loss(params)) < first / 3, (first, float(loss(params)))
