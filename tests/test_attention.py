from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rflib import attention, features, projections


def _qkv(key, L=37, d=8, dv=5, scale=0.5, batch=()):
    kq, kk, kv = jax.random.split(key, 3)
    return (
        scale * jax.random.normal(kq, batch + (L, d)),
        scale * jax.random.normal(kk, batch + (L, d)),
        jax.random.normal(kv, batch + (L, dv)),
    )


def _masked_reference(A, V, causal):
    """D⁻¹ A V with A: (L, S) nonnegative (or any) scores, masked to j ≤ i when causal; plain numpy."""
    A = np.asarray(A, dtype=np.float64)
    if causal:
        A = np.tril(A)
    return (A @ np.asarray(V)) / A.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("causal", [False, True])
def test_softmax_attention_matches_the_definition(key, causal):
    Q, K, V = _qkv(key)
    expected = _masked_reference(np.exp(np.asarray(Q) @ np.asarray(K).T), V, causal)
    np.testing.assert_allclose(attention.softmax_attention(Q, K, V, causal=causal), expected, rtol=1e-12)


def test_softmax_attention_is_stable_for_large_logits(key):
    Q, K, V = _qkv(key, scale=40.0)
    out = attention.softmax_attention(Q, K, V)
    assert bool(jnp.all(jnp.isfinite(out)))


def test_causal_toy_from_the_performer_tests():
    """q = k = 1 and v = [1, 0, 0] give [1, 1/2, 1/3] for causal attention (google-research fast_attention_test)."""
    Q = K = jnp.ones((3, 1))
    V = jnp.array([[1.0], [0.0], [0.0]])
    expected = np.array([[1.0], [0.5], [1 / 3]])
    np.testing.assert_allclose(attention.softmax_attention(Q, K, V, causal=True), expected, rtol=1e-14)
    W = projections.gaussian(jax.random.key(0), 4, 1)
    for fmap in (features.positive_features, features.hyperbolic_features):
        out = attention.linear_attention(Q, K, V, partial(fmap, W), causal=True)
        np.testing.assert_allclose(out, expected, rtol=1e-13)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("fmap", [features.positive_features, features.hyperbolic_features, features.trig_features])
def test_linear_attention_equals_normalised_feature_products(key, causal, fmap):
    """Linear attention = D⁻¹ (φ(Q)φ(K)ᵀ masked) V computed quadratically, for every map and both directions."""
    kw, kx = jax.random.split(key)
    Q, K, V = _qkv(kx)
    W = projections.orthogonal(kw, 16, Q.shape[1])
    A = fmap(W, Q).dense() @ fmap(W, K).dense().T
    out = attention.linear_attention(Q, K, V, partial(fmap, W), causal=causal, chunk_size=8)
    np.testing.assert_allclose(out, _masked_reference(A, V, causal), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("chunk_size", [1, 5, 16, 64, 100])
def test_causal_linear_attention_does_not_depend_on_chunk_size(key, chunk_size):
    kw, kx = jax.random.split(key)
    Q, K, V = _qkv(kx, L=50)
    fmap = partial(features.positive_features, projections.gaussian(kw, 12, Q.shape[1]))
    reference = attention.linear_attention(Q, K, V, fmap, causal=True, chunk_size=50)
    out = attention.linear_attention(Q, K, V, fmap, causal=True, chunk_size=chunk_size)
    np.testing.assert_allclose(out, reference, rtol=1e-12)


def test_linear_attention_accepts_dense_feature_maps_and_batch_axes(key):
    kw, kx = jax.random.split(key)
    Q, K, V = _qkv(kx, L=20, batch=(2, 3))
    W = projections.gaussian(kw, 10, Q.shape[-1])
    dense = attention.linear_attention(Q, K, V, partial(features.positive, W), causal=True)
    factored = attention.linear_attention(Q, K, V, partial(features.positive_features, W), causal=True)
    assert dense.shape == (2, 3, 20, V.shape[-1])
    np.testing.assert_allclose(dense, factored, rtol=1e-10)
    single = attention.linear_attention(Q[1, 2], K[1, 2], V[1, 2], partial(features.positive_features, W), causal=True)
    np.testing.assert_allclose(factored[1, 2], single, rtol=1e-12)


def test_linear_attention_error_falls_like_one_over_sqrt_m(key):
    """Seeded: FAVOR+ attention error, averaged over 8 feature draws, falls ≈ 8× from m = 16 to m = 1024 (1/√m)."""
    kx, kw = jax.random.split(key)
    Q, K, V = _qkv(kx, L=64, d=4, scale=0.4)
    exact = attention.softmax_attention(Q, K, V)

    def mean_error(m):
        errs = []
        for k in jax.random.split(kw, 8):
            fmap = partial(features.positive_features, projections.orthogonal(k, m, 4))
            errs.append(float(jnp.linalg.norm(attention.linear_attention(Q, K, V, fmap) - exact)))
        return np.mean(errs) / float(jnp.linalg.norm(exact))

    coarse, fine = mean_error(16), mean_error(1024)
    assert 4.0 < coarse / fine < 16.0


@pytest.mark.parametrize("causal", [False, True])
def test_float32_linear_attention_stays_finite_where_raw_features_overflow(key, causal):
    """‖q‖²/2 ≈ 100 makes e^{−‖q‖²/2}… underflow and e^{ωᵀk} overflow in float32; the stabilised path must not."""
    kw, kx = jax.random.split(key)
    Q, K, V = (a.astype(jnp.float32) for a in _qkv(kx, L=40, d=8, scale=5.0))
    W = projections.orthogonal(kw, 32, 8, dtype=jnp.float32)
    fmap32 = partial(features.positive_features, W)
    assert not bool(jnp.all(jnp.isfinite(features.positive(W, K))) & jnp.all(features.positive(W, Q) > 0))
    out32 = attention.linear_attention(Q, K, V, fmap32, causal=causal)
    assert out32.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(out32)))
    W64, Q64, K64, V64 = (jnp.asarray(a, jnp.float64) for a in (W, Q, K, V))
    out64 = attention.linear_attention(Q64, K64, V64, partial(features.positive_features, W64), causal=causal)
    np.testing.assert_allclose(out32, out64, rtol=2e-3, atol=2e-3)


def test_bad_attention_inputs_raise(key):
    Q, K, V = _qkv(key, L=6)
    fmap = partial(features.positive_features, projections.gaussian(key, 4, Q.shape[1]))
    with pytest.raises(ValueError, match="same feature size"):
        attention.softmax_attention(Q, K[:, :3], V)
    with pytest.raises(ValueError, match="same sequence length"):
        attention.linear_attention(Q, K, V[:4], fmap)
    with pytest.raises(ValueError, match="causal attention needs as many queries"):
        attention.softmax_attention(Q[:3], K, V, causal=True)
    with pytest.raises(ValueError, match="Q contains NaN"):
        attention.softmax_attention(Q.at[0, 0].set(jnp.nan), K, V)
    with pytest.raises(ValueError, match="chunk_size"):
        attention.linear_attention(Q, K, V, fmap, causal=True, chunk_size=0)
