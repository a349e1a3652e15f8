import itertools
import re
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from rflib import attention, features, projections
from rflib.features import classic, dense_exp


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


def test_the_default_causal_chunk_is_64_tokens_on_a_cpu_and_equal_chunks_of_at_most_512_elsewhere(key, monkeypatch):
    """chunk_size=None reaches the compiled calls as default_chunk_size(L) from every entry point (the drop-in
    attention_fn included); on the CPU that is 64 and the output equals an explicit chunk_size=64 bitwise. The
    accelerator branch is checked by recording what reaches the compiled calls under a patched backend name, without
    compiling anything under it."""
    kw, kx = jax.random.split(key)
    Q, K, V = _qkv(kx, L=40)
    W = projections.gaussian(kw, 12, Q.shape[1])
    fmap = partial(features.positive_features, W)
    drop_in = attention.make_attention_fn("favor+", Q.shape[1], projection_key=kw, num_features=12, causal=True)
    received = []

    class Recorded(Exception):
        pass

    def calls_with_default():
        """The chunk_size each entry point hands its compiled function, for one call with chunk_size left out."""
        received.clear()
        for call in (
            lambda: attention.linear_attention(Q, K, V, fmap, causal=True),
            lambda: attention.favor_sharp_attention(Q, K, V, W, causal=True),
            lambda: drop_in(Q[None, :, None], K[None, :, None], V[None, :, None]),
        ):
            with pytest.raises(Recorded):
                call()
        return received[:]

    def record(position):
        def recorder(*args):
            received.append(args[position])
            raise Recorded

        return recorder

    assert jax.default_backend() == "cpu"
    assert attention.default_chunk_size(10_000) == attention.default_chunk_size(5) == 64
    np.testing.assert_array_equal(
        attention.linear_attention(Q, K, V, fmap, causal=True),
        attention.linear_attention(Q, K, V, fmap, causal=True, chunk_size=64),
    )
    np.testing.assert_array_equal(
        attention.favor_sharp_attention(Q, K, V, W, causal=True),
        attention.favor_sharp_attention(Q, K, V, W, causal=True, chunk_size=64),
    )
    monkeypatch.setattr(attention, "_linear_attention", record(6))  # (Q, K, V, arrays, spec, causal, chunk_size)
    monkeypatch.setattr(attention, "_favor_sharp", record(6))  # (Q, K, V, W, method, causal, chunk_size, eps)
    assert calls_with_default() == [64, 64, 64]
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert calls_with_default() == [40, 40, 40]
    lengths = {300: 300, 512: 512, 520: 260, 4096: 512, 10_000: 500, 32_768: 512}
    assert {L: attention.default_chunk_size(L) for L in lengths} == lengths
    with pytest.raises(ValueError, match="length"):
        attention.default_chunk_size(0)


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


def _log_space_reference(q_log, k_log, V, causal):
    """Exact oracle from full log features: row-normalised exp(logsumexp_m(q_log_im + k_log_jm)) V, in float64 (and
    differentiable: the gradient oracle at logit spreads beyond float range)."""
    q_log, k_log, V = (jnp.asarray(a, jnp.float64) for a in (q_log, k_log, V))
    log_scores = jax.nn.logsumexp(q_log[:, None, :] + k_log[None, :, :], axis=2)
    if causal:
        log_scores = jnp.where(jnp.tril(jnp.ones(log_scores.shape, bool)), log_scores, -jnp.inf)
    return jax.nn.softmax(log_scores, axis=1) @ V


def _points_of_norm(key, norm, L, d, dtype):
    x = jax.random.normal(key, (L, d), dtype)
    return norm * x / jnp.linalg.norm(x, axis=1, keepdims=True)


POSITIVE_MAPS = {"positive": features.positive_features, "hyperbolic": features.hyperbolic_features}


@pytest.mark.parametrize("chunk_size", [7, 60])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", sorted(POSITIVE_MAPS))
def test_positive_feature_attention_is_exact_at_logit_spreads_beyond_float64_range(key, name, causal, chunk_size):
    """‖q‖ = ‖k‖ = 60 gives logit spreads of ~10³ nats, past e^{±709}: per-row stabilisation loses whole rows, the
    per-feature one (with the token-by-token fallback for chunks where a later key dominates) matches the log-space
    oracle to round-off, for chunks smaller than and equal to the sequence."""
    kw, kq, kk, kv = jax.random.split(key, 4)
    L, d = 60, 16
    Q, K = (_points_of_norm(k, 60.0, L, d, jnp.float64) for k in (kq, kk))
    V = jax.random.normal(kv, (L, 3))
    W = projections.orthogonal(kw, 24, d)
    fmap = partial(POSITIVE_MAPS[name], W)
    fq, fk = fmap(Q), fmap(K)
    expected = _log_space_reference(fq.log_body, fk.log_scale[:, None] + fk.log_body, V, causal)
    out = attention.linear_attention(Q, K, V, fmap, causal=causal, chunk_size=chunk_size)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-9, atol=1e-9)


FLOAT32_FAMILIES = [("linear", "positive"), ("linear", "hyperbolic")] + [("favor#", m) for m in dense_exp.METHODS]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("kind", "name"), FLOAT32_FAMILIES, ids=lambda v: str(v))
def test_float32_attention_stays_finite_up_to_norm_100(key, kind, name, causal):
    """Issue-level guarantee: float32 causal and bidirectional attention is finite for ‖q‖, ‖k‖ up to 100 at d = 64,
    for every positive family (FAVOR+, hyperbolic, the FAVOR# DERFs); these went NaN from ‖x‖ ≈ 12 (causal FAVOR#)
    or 50 (FAVOR+) with per-row stabilisation. For FAVOR+ the float32 result also matches the log-space oracle
    built from the same float32 features, to the rounding of logits of size ~10³ (ulp ≈ 6e-5)."""
    kw, kq, kk, kv = jax.random.split(key, 4)
    L, d = 80, 64
    W = projections.orthogonal(kw, 64, d, dtype=jnp.float32)
    V = jax.random.normal(kv, (L, 4), jnp.float32)
    for norm in (1.0, 12.0, 25.0, 100.0):
        Q, K = (_points_of_norm(k, norm, L, d, jnp.float32) for k in (kq, kk))
        if kind == "linear":
            fmap = partial(POSITIVE_MAPS[name], W)
            out = attention.linear_attention(Q, K, V, fmap, causal=causal, chunk_size=16)
            jitted = jax.jit(
                lambda Q, K, V, f=fmap: attention.linear_attention(Q, K, V, f, causal=causal, chunk_size=16)
            )
            np.testing.assert_allclose(np.asarray(jitted(Q, K, V)), np.asarray(out), rtol=1e-5, atol=1e-5)
        else:
            out = attention.favor_sharp_attention(Q, K, V, W, method=name, causal=causal, chunk_size=16)
        assert out.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(out))), f"non-finite at ‖x‖ = {norm}"
        if kind == "linear":
            fq, fk = fmap(Q), fmap(K)
            k_log = fk.log_scale[:, None] + fk.log_body
            expected = _log_space_reference(fq.log_body, k_log, V, causal)
            spread = float(jnp.max(jnp.abs(fq.log_body)) + jnp.max(jnp.abs(k_log)))
            tolerance = 64 * float(jnp.finfo(jnp.float32).eps) * max(spread, 1.0) * float(jnp.max(jnp.abs(V)))
            np.testing.assert_allclose(np.asarray(out), expected, atol=tolerance, err_msg=f"‖x‖ = {norm}")


@pytest.mark.parametrize("causal", [False, True])
def test_float32_signed_feature_attention_is_finite_or_refuses(key, causal):
    """Trigonometric and HRF features are signed, so only a per-row scale is available: at ‖x‖ = 100 the result is
    either finite or an eager ValueError that says the output is not finite and suggests float64 or rescaling."""
    from rflib.features import hybrid

    kw, kq, kk, kv, kh = jax.random.split(key, 5)
    L, d = 48, 64
    W = projections.orthogonal(kw, 64, d, dtype=jnp.float32)
    k1, k2, k3 = jax.random.split(kh, 3)
    hrf = hybrid.angular_hybrid_estimator(
        *(projections.orthogonal(k, m, d, dtype=jnp.float32) for k, m in ((k1, 16), (k2, 16), (k3, 4)))
    )
    V = jax.random.normal(kv, (L, 4), jnp.float32)
    for norm in (1.0, 25.0, 100.0):
        Q, K = (_points_of_norm(k, norm, L, d, jnp.float32) for k in (kq, kk))
        for fmap in (classic.trig_estimator(W), hrf):
            try:
                out = attention.linear_attention(Q, K, V, fmap, causal=causal)
            except ValueError as err:
                assert "not finite" in str(err) and "float64" in str(err)
            else:
                assert bool(jnp.all(jnp.isfinite(out)))


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


def _attention_calls(key):
    """name -> (call(Q, K, V, W, causal), {input corrupted: the name the error gives it}): every public attention
    entry point and map kind; W is the feature map's projection in linear attention, an argument in FAVOR#."""
    from rflib.features import hybrid

    d = 8
    k1, k2, k3 = jax.random.split(key, 3)
    hrf = hybrid.angular_hybrid_estimator(*(projections.orthogonal(k, m, d) for k, m in ((k1, 8), (k2, 8), (k3, 4))))
    linear = {
        "positive": lambda W: partial(features.positive_features, W),
        "hyperbolic": lambda W: partial(features.hyperbolic_features, W),
        "trig": classic.trig_estimator,
        "hrf": lambda W: hrf,
    }
    qkv = {"Q": "Q", "K": "K", "V": "V"}
    calls = {"softmax": (lambda Q, K, V, W, c: attention.softmax_attention(Q, K, V, causal=c), qkv)}
    for name, make in linear.items():
        calls[name] = (
            lambda Q, K, V, W, c, make=make: attention.linear_attention(Q, K, V, make(W), causal=c, chunk_size=4),
            qkv if name == "hrf" else qkv | {"W": "feature_map's array 0"},
        )
    for method in dense_exp.METHODS:
        calls[f"favor# {method}"] = (
            lambda Q, K, V, W, c, m=method: attention.favor_sharp_attention(
                Q, K, V, W, method=m, causal=c, chunk_size=4
            ),
            qkv | {"W": "W"},
        )
    return calls


@pytest.mark.parametrize("causal", [False, True])
def test_a_nan_or_inf_anywhere_in_any_input_is_named_by_every_attention_entry_point(key, causal):
    """The eager entry points screen their inputs by their sums inside the compiled call (cheap; issue 21's eager
    overhead) and scan them exactly only when the screen fails. Every entry point and map, both directions, NaN, +inf
    and -inf, in the first and the last row of each input and in W: the culprit is named, including where the output
    would have come out finite (a causal key at -inf logit in the last row: weight 0 for the only query that sees
    it, so an output-only check would pass it silently)."""
    kw, kx = jax.random.split(key)
    Q, K, V = _qkv(kx, L=10, d=8, dv=3, batch=(2,))
    W = projections.orthogonal(kw, 8, 8)
    for name, (call, inputs) in _attention_calls(key).items():
        args = {"Q": Q, "K": K, "V": V, "W": W}
        assert bool(jnp.all(jnp.isfinite(call(*args.values(), causal)))), name
        for target, named in inputs.items():
            rows = [(0, 0, 0), (1, -1, -1)] if target != "W" else [(0, 0), (-1, -1)]
            for where, bad in itertools.product(rows, (jnp.nan, jnp.inf, -jnp.inf)):
                corrupted = dict(args, **{target: args[target].at[where].set(bad)})
                with pytest.raises(ValueError, match=re.escape(named) + r".* contains NaN or inf"):
                    call(*corrupted.values(), causal)


def test_the_input_screen_has_no_misses_and_its_false_alarms_pass():
    """sums_finite is False for any NaN or inf (whatever the other entries), and a false alarm (finite inputs whose
    sum overflows) falls through the exact scan: an eager call with such inputs returns its finite output."""
    from rflib import _checks

    finite = jnp.ones((4, 3), jnp.float32)
    for bad in (jnp.nan, jnp.inf, -jnp.inf):
        assert not bool(_checks.sums_finite(finite, finite.at[2, 1].set(bad)))
    assert not bool(_checks.sums_finite(finite.at[0, 0].set(jnp.inf), finite.at[0, 0].set(-jnp.inf)))
    huge = jnp.full((8, 4), 3e38, jnp.float32)  # finite, but its sum overflows float32
    assert not bool(_checks.sums_finite(huge)) and bool(jnp.all(jnp.isfinite(huge)))
    _checks.raise_for_nonfinite_input({"V": huge})  # no culprit: returns
    Q = jnp.zeros((8, 4), jnp.float32)  # uniform weights 1/8: the output is the mean of V, 3e38, finite
    out = attention.softmax_attention(Q, Q, huge[:, :1])
    np.testing.assert_allclose(np.asarray(out), 3e38, rtol=1e-6)


def test_the_screen_names_what_overflowed_and_sums_half_precision_in_float32():
    """A float64 W beyond float32's range is named as W (the screened array is the cast one); softmax's own overflow
    names the logits; float16 inputs whose sums pass 65 504 are no false alarm (summed in float32)."""
    from rflib import _checks

    Q, K, V = (jnp.asarray(a, jnp.float32) for a in _qkv(jax.random.key(3), L=6, d=4, dv=2))
    W = np.ones((4, 4))
    W[0, 0] = 1e39  # finite in float64, inf once cast to Q's float32
    with pytest.raises(ValueError, match="W contains NaN or inf"):
        attention.favor_sharp_attention(Q, K, V, W)
    with pytest.raises(ValueError, match="logits QKᵀ or the weighted sums of V overflowed"):
        big = jnp.full_like(Q, 1e20)  # finite, but q·k = 4e40 overflows float32
        attention.softmax_attention(big, big, V)
    half = jnp.ones((300, 300), jnp.float16)  # sum 90 000 > 65 504
    assert bool(_checks.sums_finite(half))


@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_with_an_asymmetric_hrf_estimator(key, causal):
    """An Estimator's Ψ₁ maps the queries and Ψ₂ the keys: HRF attention = D⁻¹ (Ψ₁(Q)Ψ₂(K)ᵀ masked) V."""
    from rflib.features import hybrid

    kw, kx = jax.random.split(key)
    Q, K, V = _qkv(kx)
    k1, k2, k3 = jax.random.split(kw, 3)
    d = Q.shape[1]
    est = hybrid.angular_hybrid_estimator(
        projections.gaussian(k1, 8, d), projections.gaussian(k2, 8, d), projections.gaussian(k3, 3, d)
    )
    out = attention.linear_attention(Q, K, V, est, causal=causal, chunk_size=8)
    np.testing.assert_allclose(out, _masked_reference(est.estimate(Q, K), V, causal), rtol=1e-8, atol=1e-10)


def test_hot_paths_compile_once_and_never_again_for_new_values_of_the_same_shapes(count_compiles):
    """A second call with new values (same shapes, dtypes, static options) must not recompile anything: no jit
    cache misses from closures, Python scalars or shape-dependent constants on the speed paths."""
    from rflib.features import classic, dense_exp, hybrid

    d, m, L = 8, 16, 64
    keys = jax.random.split(jax.random.key(3), 8)
    W = projections.orthogonal(keys[0], m, d).astype(jnp.float32)
    T = projections.gaussian(keys[1], 3, d).astype(jnp.float32)
    hrf = hybrid.angular_hybrid_estimator(W, W, T)

    def inputs(k):
        q, kk, v = jax.random.split(k, 3)
        return tuple(0.3 * jax.random.normal(x, (2, L, d), jnp.float32) for x in (q, kk, v))

    calls = {
        "softmax": lambda Q, K, V: attention.softmax_attention(Q, K, V, causal=True),
        "favor+ bidirectional": lambda Q, K, V: attention.linear_attention(
            Q, K, V, partial(classic.positive_features, W)
        ),
        "favor+ causal": lambda Q, K, V: attention.linear_attention(
            Q, K, V, partial(classic.positive_features, W), causal=True
        ),
        "hrf causal": lambda Q, K, V: attention.linear_attention(Q, K, V, hrf, causal=True),
        # a new projection and a freshly built estimator per call: their arrays are arguments, not constants
        "favor+ new projection": lambda Q, K, V: attention.linear_attention(
            Q, K, V, partial(classic.positive_features, W + Q[0, 0, 0])
        ),
        "hrf rebuilt": lambda Q, K, V: attention.linear_attention(
            Q, K, V, hybrid.angular_hybrid_estimator(W + Q[0, 0, 0], W, T)
        ),
        "favor#": lambda Q, K, V: attention.favor_sharp_attention(Q, K, V, W),
        "favor# causal": lambda Q, K, V: attention.favor_sharp_attention(Q, K, V, W, causal=True),
        "trig map": lambda Q, K, V: classic.trig_features(W, Q[0]),
        "sderf fit and map": lambda Q, K, V: dense_exp.query_features(dense_exp.fit("sderf", Q[0], K[0]), W, Q[0]),
    }
    assert count_compiles(jax.jit(lambda x: 2 * x + 1), jnp.ones(3)) == 1  # the counter sees compilations
    for name, call in calls.items():
        call(*inputs(keys[2]))  # warm-up: compiles
        assert count_compiles(call, *inputs(keys[3])) == 0, f"{name} recompiled for new values of the same shapes"


@pytest.mark.parametrize("fmap", ["positive", "hrf"])
def test_causal_linear_attention_memory_is_linear_in_length(fmap):
    """XLA's compiled buffer plan for causal linear attention grows like L and cannot hold an L×L or L×F×d_v
    intermediate (F features): working memory at 8L ≈ 8× that at L (64× if it grew like L²; the span is wide because
    XLA's fusion choices move the plan by up to a quarter at one length), a few L×(F + d) arrays in all."""
    from rflib.features import classic, hybrid

    d, m = 16, 32
    W = projections.gaussian(jax.random.key(0), m, d).astype(jnp.float32)
    fm = partial(classic.positive_features, W) if fmap == "positive" else hybrid.angular_hybrid_estimator(W, W, W[:2])
    n_features = m if fmap == "positive" else 4 * m * 3

    def working(L):
        x = jnp.zeros((1, L, d), jnp.float32)
        stats = jax.jit(lambda Q, K, V: attention.linear_attention(Q, K, V, fm, causal=True)).lower(x, x, x)
        stats = stats.compile().memory_analysis()
        return stats.temp_size_in_bytes + stats.output_size_in_bytes

    L = 8192
    small, large = working(L // 8), working(L)
    assert 5 < large / small < 11
    assert large <= 8 * L * (n_features + d) * 4  # a few L × (F + d) float32 arrays: features, values, output
    assert large < min(L * L, L * n_features * d) * 4  # smaller than one L×L or L×F×d_v float32 array


def _quadratic_positive_attention(fmap, Q, K, V, causal):
    """The definition, autodiff-able: D⁻¹ (φ(Q)φ(K)ᵀ, masked) V from the dense features (the gradient oracle)."""
    scores = fmap(Q).dense() @ fmap(K).dense().T
    if causal:
        scores = jnp.tril(scores)
    return scores @ V / jnp.sum(scores, axis=1, keepdims=True)


def _log_space_positive_attention(fmap, Q, K, V, causal):
    """The same definition from log features (:func:`_log_space_reference`; one sequence): exact where the dense
    features over- or underflow."""
    fq, fk = fmap(Q), fmap(K)
    return _log_space_reference(fq.log_body, fk.log_scale[:, None] + fk.log_body, V, causal)


@pytest.mark.parametrize("chunk_size", [1, 6, 64])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", sorted(POSITIVE_MAPS))
def test_positive_attention_gradients_equal_autodiff_of_the_quadratic_definition(key, name, causal, chunk_size):
    """The written-out VJPs (bidirectional, and causal over the chunk scan) against reverse-mode autodiff of the
    quadratic reference, float64, for Q, K and V, chunks smaller than, equal to and larger than the sequence; and
    against central differences (``jax.test_util.check_grads``)."""
    kw, kd = jax.random.split(key)
    Q, K, V = _qkv(kd, L=23, d=6, dv=4, scale=0.7)
    fmap = partial(POSITIVE_MAPS[name], projections.orthogonal(kw, 10, 6))
    tangent = jax.random.normal(jax.random.key(7), (23, 4))

    def loss(attend):
        return lambda Q, K, V: jnp.sum(jnp.sin(attend(Q, K, V)) * tangent)

    ours = jax.grad(
        loss(partial(attention.linear_attention, feature_map=fmap, causal=causal, chunk_size=chunk_size)),
        argnums=(0, 1, 2),
    )(Q, K, V)
    expected = jax.grad(loss(partial(_quadratic_positive_attention, fmap, causal=causal)), argnums=(0, 1, 2))(Q, K, V)
    for got, want in zip(ours, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    check_grads(
        partial(attention.linear_attention, feature_map=fmap, causal=causal, chunk_size=chunk_size),
        (Q, K, V),
        order=1,
        modes=["rev"],
    )


@pytest.mark.parametrize("causal", [False, True])
def test_gradients_reach_the_projection_through_the_factored_query_logits(key, causal):
    """Bidirectional attention forms the queries' log features as one product with the projection
    (:class:`~rflib.features.base.LinearLogits`), so its written-out VJP differentiates that product too: the gradient
    for W equals autodiff of the quadratic reference (float64), positive and hyperbolic maps."""
    kw, kd = jax.random.split(key)
    W = projections.orthogonal(kw, 10, 6)
    for batch in ((), (3,)):  # one sequence (called unbatched on the CPU) and a batch (vmapped, W broadcast)
        Q, K, V = _qkv(kd, L=21, d=6, dv=4, scale=0.7, batch=batch)
        tangent = jax.random.normal(jax.random.key(5), V.shape)
        quadratic = partial(_quadratic_positive_attention, causal=causal)
        for _ in batch:
            quadratic = jax.vmap(quadratic, in_axes=(None, 0, 0, 0))
        for feature_map in POSITIVE_MAPS.values():

            def loss(W, attend, feature_map=feature_map, Q=Q, K=K, V=V, tangent=tangent):
                return jnp.sum(jnp.sin(attend(partial(feature_map, W), Q, K, V)) * tangent)

            ours = jax.grad(loss)(W, lambda f, Q, K, V: attention.linear_attention(Q, K, V, f, causal=causal))
            expected = jax.grad(loss)(W, quadratic)
            np.testing.assert_allclose(ours, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_a_positive_map_without_factors_gives_the_same_attention_and_gradients(key, causal):
    """A positive map written outside rflib may give ``log_body`` without :class:`LinearLogits`: attention then
    takes the log features as they are. Output and gradients equal those of the factored map (float64)."""
    kw, kd = jax.random.split(key)
    Q, K, V = _qkv(kd, L=29, d=6, dv=4, scale=0.8)
    W = projections.orthogonal(kw, 12, 6)
    factored = partial(features.positive_features, W)

    def unfactored(X):
        return factored(X)._replace(linear_logits=None)

    def loss(fmap):
        return lambda Q, K, V: jnp.sum(jnp.cos(attention.linear_attention(Q, K, V, fmap, causal=causal)))

    np.testing.assert_allclose(
        attention.linear_attention(Q, K, V, unfactored, causal=causal),
        attention.linear_attention(Q, K, V, factored, causal=causal),
        rtol=1e-12,
        atol=1e-13,
    )
    got = jax.grad(loss(unfactored), argnums=(0, 1, 2))(Q, K, V)
    want = jax.grad(loss(factored), argnums=(0, 1, 2))(Q, K, V)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("causal", [False, True])
def test_favor_sharp_gradients_equal_autodiff_of_the_quadratic_definition(key, causal):
    """FAVOR# goes through the same written-out VJPs (its fitted parameters are stop-gradient by design), the
    projection W included (bidirectionally through the per-sequence factored product W Bᵀ)."""
    kw, kd = jax.random.split(key)
    Q, K, V = _qkv(kd, L=19, d=5, dv=3, scale=0.6)
    W = projections.orthogonal(kw, 8, 5)

    def quadratic(Q, K, V, W):
        params = jax.lax.stop_gradient(dense_exp.fit("sderf", Q, K))
        est = dense_exp.estimator(params, W)
        scores = est.query_features(Q).dense() @ est.key_features(K).dense().T
        scores = jnp.tril(scores) if causal else scores
        return scores @ V / jnp.sum(scores, axis=1, keepdims=True)

    def loss(attend):
        return lambda Q, K, V, W: jnp.sum(jnp.cos(attend(Q, K, V, W)))

    ours = jax.grad(
        loss(lambda Q, K, V, W: attention.favor_sharp_attention(Q, K, V, W, causal=causal, chunk_size=4)),
        argnums=(0, 1, 2, 3),
    )(Q, K, V, W)
    expected = jax.grad(loss(quadratic), argnums=(0, 1, 2, 3))(Q, K, V, W)
    for got, want in zip(ours, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


def _tanh_loss_gradients(attend, *args):
    """The gradient of Σ tanh(attend(*args)) with respect to every argument (a bounded loss, so that every output
    element gets a cotangent of order one)."""
    return jax.grad(lambda *a: jnp.sum(jnp.tanh(attend(*a))), argnums=tuple(range(len(args))))(*args)


def test_batched_causal_gradients_equal_autodiff_with_the_fallback_in_one_sequence(key):
    """The causal VJP over 2 × 3 sequences (the batched chunk layout) against autodiff of the log-space definition,
    float64, with ‖q‖ = ‖k‖ = 60 in one sequence only: the token-by-token fallback runs for chunks that the other five
    sequences share, and ordinary chunks take the fast path."""
    kw, kq, kk, kv, kq1, kk1 = jax.random.split(key, 6)
    L, d = 40, 8
    W = projections.orthogonal(kw, 16, d)
    fmap = partial(features.positive_features, W)
    Q, K = (0.5 * jax.random.normal(k, (2, 3, L, d)) for k in (kq, kk))
    Q = Q.at[0, 1].set(_points_of_norm(kq1, 60.0, L, d, jnp.float64))
    K = K.at[0, 1].set(_points_of_norm(kk1, 60.0, L, d, jnp.float64))
    V = jax.random.normal(kv, (2, 3, L, 3))
    log_space = jax.vmap(jax.vmap(partial(_log_space_positive_attention, fmap, causal=True)))
    ours = _tanh_loss_gradients(
        partial(attention.linear_attention, feature_map=fmap, causal=True, chunk_size=8), Q, K, V
    )
    expected = _tanh_loss_gradients(log_space, Q, K, V)
    for got, want in zip(ours, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("causal", [False, True])
def test_positive_attention_gradients_survive_logit_spreads_beyond_float_range(key, causal):
    """‖q‖ = ‖k‖ = 60 (logit spreads ~10³ nats: the causal token-by-token fallback runs, in the gradient too): float64
    gradients are finite and equal autodiff of the log-space definition; float32 ones are finite and within 1e-3."""
    kw, kq, kk, kv = jax.random.split(key, 4)
    L, d = 40, 8
    Q, K = (_points_of_norm(k, 60.0, L, d, jnp.float64) for k in (kq, kk))
    V = jax.random.normal(kv, (L, 3))
    W = projections.orthogonal(kw, 16, d)
    fmap = partial(features.positive_features, W)
    log_space = partial(_log_space_positive_attention, fmap, causal=causal)
    ours = _tanh_loss_gradients(
        partial(attention.linear_attention, feature_map=fmap, causal=causal, chunk_size=8), Q, K, V
    )
    expected = _tanh_loss_gradients(log_space, Q, K, V)
    for got, want in zip(ours, expected, strict=True):
        assert bool(jnp.all(jnp.isfinite(got)))
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    W32, Q32, K32, V32 = (a.astype(jnp.float32) for a in (W, Q, K, V))
    attend32 = partial(
        attention.linear_attention, feature_map=partial(features.positive_features, W32), causal=causal, chunk_size=8
    )
    ours32 = _tanh_loss_gradients(attend32, Q32, K32, V32)
    for got, want in zip(ours32, expected, strict=True):
        assert got.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(got)))
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * float(jnp.max(jnp.abs(want))))


def test_causal_gradient_memory_keeps_one_state_per_chunk_not_per_token():
    """Reverse mode of causal positive attention: XLA's compiled buffer plan holds no L×F×d_v residual (one prefix
    state per token), only features and one state per chunk, and grows like L."""
    d, m, dv = 16, 64, 64
    W = projections.gaussian(jax.random.key(0), m, d).astype(jnp.float32)
    fm = partial(classic.positive_features, W)

    def working(L):
        x, v = jnp.zeros((1, L, d), jnp.float32), jnp.zeros((1, L, dv), jnp.float32)
        grad = jax.grad(
            lambda Q, K, V: jnp.sum(attention.linear_attention(Q, K, V, fm, causal=True)), argnums=(0, 1, 2)
        )
        stats = jax.jit(grad).lower(x, x, v).compile().memory_analysis()
        return stats.temp_size_in_bytes + stats.output_size_in_bytes

    L = 4096
    small, large = working(L // 2), working(L)
    assert 1.7 < large / small < 2.3
    assert large < L * m * dv * 4 / 2  # well under one L×F×d_v float32 array


def test_long_bidirectional_attention_and_its_gradient_equal_the_quadratic_definition(key):
    """At L = 1 024 (S-long state and gradient sums), forward and gradient equal the quadratic reference and its
    autodiff (float64)."""
    kw, kd = jax.random.split(key)
    Q, K, V = _qkv(kd, L=1024, d=6, dv=4, scale=0.7)
    fmap = partial(classic.positive_features, projections.orthogonal(kw, 10, 6))
    tangent = jax.random.normal(jax.random.key(7), (1024, 4))

    def loss(attend):
        return lambda Q, K, V: jnp.sum(jnp.sin(attend(Q, K, V)) * tangent)

    ours = partial(attention.linear_attention, feature_map=fmap)
    reference = partial(_quadratic_positive_attention, fmap, causal=False)
    np.testing.assert_allclose(ours(Q, K, V), reference(Q, K, V), rtol=1e-11, atol=1e-12)
    got = jax.grad(loss(ours), argnums=(0, 1, 2))(Q, K, V)
    want = jax.grad(loss(reference), argnums=(0, 1, 2))(Q, K, V)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["positive", "hyperbolic"])
def test_feature_stabilisers_carry_no_gradient_and_change_none(key, name):
    """The per-row maximum that positive maps move between log scale and log body is a stop-gradient constant: the
    gradient of the dense features equals autodiff of the textbook formula (Performer Lemma 1) in float64."""
    kw, kx = jax.random.split(key)
    W = projections.orthogonal(kw, 12, 5)
    X = 0.8 * jax.random.normal(kx, (9, 5))
    C = jax.random.normal(jax.random.key(11), (9, 12 if name == "positive" else 24))

    def textbook(X):
        proj = X @ W.T
        half_norm = 0.5 * jnp.sum(X**2, axis=1, keepdims=True)
        if name == "positive":
            return jnp.exp(proj - half_norm) / jnp.sqrt(12.0)
        return jnp.concatenate([jnp.exp(proj - half_norm), jnp.exp(-proj - half_norm)], axis=1) / jnp.sqrt(24.0)

    ours = getattr(classic, name)
    np.testing.assert_allclose(ours(W, X), textbook(X), rtol=1e-13)
    np.testing.assert_allclose(
        jax.grad(lambda X: jnp.sum(ours(W, X) * C))(X), jax.grad(lambda X: jnp.sum(textbook(X) * C))(X), rtol=1e-12
    )
