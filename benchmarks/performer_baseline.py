"""The public Performer FAVOR+ code's algorithm, re-implemented here as the benchmarks' baseline, and a loader for the
unmodified public file when the user has a copy.

The public JAX implementation (google-research ``performer/fast_attention/jax/fast_attention.py``,
``make_fast_softmax_attention``) cannot be vendored here. :func:`favor_plus` re-implements what it computes, in our
words, so that ``make bench`` always has the baseline:

- features ratio·(exp(x̃ωᵀ − ‖x̃‖²/2 − max) + ε) with x̃ = d^{-1/4}x, ratio = m^{-1/2}, ε = 10⁻⁴, the max taken per
  query row and over all keys and features for keys (a shift that does not cancel exactly once ε is added);
- bidirectional: the plain products Z = K'ᵀV, T = K'ᵀ1, out = Q'Z / Q'T, differentiated by autodiff;
- causal: a token-by-token ``lax.scan`` over prefix sums, with a hand-written VJP whose reverse scan recovers each
  prefix state by subtracting the token's outer product (O(L) memory, no stabilisation).

Layout (batch, L, heads, d) as the public code's ``dot_product_attention``. When ``RFLIB_PERFORMER_REFERENCE`` names a
copy of the public file, :func:`load_public` imports it unmodified (its ``gin`` and ``absl`` imports are satisfied by
inert stand-ins) and the attention suite times it too.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types

import jax
import jax.numpy as jnp

EPS = 1e-4
ENV = "RFLIB_PERFORMER_REFERENCE"


def _features(W, X, is_query: bool):
    """Positive features of X: (batch, heads, L, d) with W: (m, d) → (batch, heads, L, m)."""
    d = X.shape[-1]
    X = X * d**-0.25
    projected = jnp.einsum("bhld,md->bhlm", X, W)
    half_norm = 0.5 * jnp.sum(X * X, axis=-1, keepdims=True)
    shift = jnp.max(projected, axis=-1, keepdims=True) if is_query else jnp.max(projected, axis=(-2, -1), keepdims=True)
    return W.shape[0] ** -0.5 * (jnp.exp(projected - half_norm - shift) + EPS)


def _causal_numerator_and_denominator(qs, ks, vs):
    """Σ_{j≤i} (q_i·k_j) (v_j, 1) by a token scan; qs, ks: (L, B, m), vs: (L, B, d_v + 1) → (L, B, d_v + 1)."""

    def step(state, qkv):
        q, k, v = qkv
        state = state + jnp.einsum("bm,bv->bmv", k, v)
        return state, jnp.einsum("bm,bmv->bv", q, state)

    state = jnp.zeros(ks.shape[1:] + vs.shape[-1:], qs.dtype)
    final, out = jax.lax.scan(step, state, (qs, ks, vs))
    return out, final


@jax.custom_vjp
def _causal_prefix(qs, ks, vs):
    return _causal_numerator_and_denominator(qs, ks, vs)[0]


def _causal_prefix_fwd(qs, ks, vs):
    out, final = _causal_numerator_and_denominator(qs, ks, vs)
    return out, (final, qs, ks, vs)


def _causal_prefix_bwd(residuals, g):
    final, qs, ks, vs = residuals

    def step(carry, xs):
        state, state_ct = carry
        q, k, v, ct = xs
        q_ct = jnp.einsum("bv,bmv->bm", ct, state)
        state_ct = state_ct + jnp.einsum("bv,bm->bmv", ct, q)
        k_ct = jnp.einsum("bmv,bv->bm", state_ct, v)
        v_ct = jnp.einsum("bmv,bm->bv", state_ct, k)
        state = state - jnp.einsum("bm,bv->bmv", k, v)
        return (state, state_ct), (q_ct, k_ct, v_ct)

    _, grads = jax.lax.scan(step, (final, jnp.zeros_like(final)), (qs, ks, vs, g), reverse=True)
    return grads


_causal_prefix.defvjp(_causal_prefix_fwd, _causal_prefix_bwd)


def favor_plus(query, key, value, W, causal: bool = False):
    """FAVOR+ attention as the public Performer code computes it: (batch, L, heads, d) inputs, W: (m, d) projections
    (d^{-1/4} scaling inside, as there) → (batch, L, heads, d_v). Jitted."""
    return _favor_plus(query, key, value, W, causal)


def _favor_plus_impl(query, key, value, W, causal: bool):
    q, k, v = (jnp.swapaxes(x, 1, 2) for x in (query, key, value))  # (batch, heads, L, ·)
    qp, kp = _features(W, q, True), _features(W, k, False)
    values = jnp.concatenate([v, jnp.ones(v.shape[:-1] + (1,), v.dtype)], axis=-1)
    if causal:
        batch, heads, L, m = qp.shape

        def tokens_first(x):
            return jnp.moveaxis(x, 2, 0).reshape(L, batch * heads, x.shape[-1])

        out = _causal_prefix(tokens_first(qp), tokens_first(kp), tokens_first(values))
        out = jnp.moveaxis(out.reshape(L, batch, heads, -1), 0, 2)
    else:
        out = jnp.einsum("bhlm,bhmv->bhlv", qp, jnp.einsum("bhlm,bhlv->bhmv", kp, values))
    return jnp.swapaxes(out[..., :-1] / out[..., -1:], 1, 2)


_favor_plus = jax.jit(_favor_plus_impl, static_argnames="causal")  # ε read at trace time: tests may set it first


def load_public(causal: bool):
    """The unmodified public ``make_fast_softmax_attention`` from the file named by ``RFLIB_PERFORMER_REFERENCE``, or
    None if the variable is unset. Returns ``(attention(query, key, value, W), projection_matrix)``, its layout being
    (batch, L, heads, d); the projection is replaced by the caller's W so both codes use the same one."""
    path = os.environ.get(ENV)
    if not path:
        return None
    for name, module in _stand_ins().items():
        sys.modules.setdefault(name, module)
    spec = importlib.util.spec_from_file_location("performer_fast_attention", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def attention(query, key, value, W):
        fn = module.make_fast_softmax_attention(
            query.shape[-1], nb_features=W.shape[0], redraw_features=False, unidirectional=causal
        )
        fn.__self__.projection_matrix = W
        return fn(query, key, value)

    return attention


def _stand_ins() -> dict[str, types.ModuleType]:
    """Inert ``gin`` and ``absl.logging`` modules: the public file only registers names with gin and logs a line."""
    gin = types.ModuleType("gin")
    gin.configurable = lambda fn=None, **_: fn if fn is not None else (lambda f: f)
    gin.external_configurable = lambda fn, *_, **__: fn
    absl = types.ModuleType("absl")
    logging = types.ModuleType("absl.logging")
    logging.info = lambda *_, **__: None
    absl.logging = logging
    return {"gin": gin, "absl": absl, "absl.logging": logging}
