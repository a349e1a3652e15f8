"""Exact softmax attention and linear (random-feature) attention, bidirectional and causal.

Conventions (Performer §2.1, HRF §4): rows are tokens; Q: (..., L, d), K: (..., S, d), V: (..., S, d_v), any
leading batch/head axes. Softmax attention is Att(Q, K, V) = D⁻¹ A V with A = exp(QKᵀ) (no 1/√d: scale Q and K
by d^{-1/4} beforehand for the usual convention), D = diag(A 1). Linear attention replaces A by φ(Q)φ(K)ᵀ and
reorders the products so that nothing L×S is formed:
out = φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1).

Stabilisation is exact: every constant it divides by cancels between numerator and denominator.

- Positive maps (FAVOR+, hyperbolic, every FAVOR# DERF) carry full log features (``Features.log_body``) and are
  stabilised **per feature**: feature m of the keys is divided by its largest value s_m over the keys a query sees,
  and query i weights feature m by e^{log φ_m(q_i) + s_m − c_i} with c_i = max_m(log φ_m(q_i) + s_m). The term that
  attains c_i contributes exactly 1, so the denominator is ≥ 1 and the output is finite for any finite input, in
  float32 too. Causal attention runs chunk by chunk (prefix state carried by ``lax.scan``) with per-feature chunk
  maxima; a chunk where a later key dominates a feature an earlier query needs (a denominator below √tiny) is redone
  token by token with exact prefix maxima, behind ``lax.cond``, so ordinary inputs pay one reduction per chunk.
- Their gradients are written out (``jax.custom_vjp``) in the same stabilised units: reverse mode keeps the bounded
  features (bidirectional) or the log features, from which it recomputes them, and one prefix state per chunk (causal;
  never one per token), and the maxima, which cancel exactly, carry no gradient.
- Signed maps (trigonometric, hybrid) are stabilised per row: the per-query scale of φ(Q) cancels and is dropped, and
  keys are rescaled by the largest key log-scale the query sees. A denominator ≥ √tiny means the terms lost to
  underflow change the result by a relative < L·F·√tiny; but the denominator is an estimate that can be ≤ 0 (the
  estimator, not a bug). An eager call whose output is not finite raises ``ValueError`` instead of returning NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks, projections, sharding
from rflib.features import classic, dense_exp, hybrid
from rflib.features.base import Estimator, Features, LinearLogits

_QKV_RANKS = (2, 3, 4, 5)  # (L, d) with up to three leading batch/head axes


def _check_qkv(Q, K, V, causal: bool):
    """Dtypes, ranks and shapes of Q, K, V (no device round trip: finiteness is flagged inside the compiled call)."""
    Q = _checks.real_array("Q", Q, _QKV_RANKS)
    K = _checks.real_array("K", K, _QKV_RANKS)
    V = _checks.real_array("V", V, _QKV_RANKS)
    if not Q.ndim == K.ndim == V.ndim:
        raise ValueError(f"Q, K and V need the same number of axes, got shapes {Q.shape}, {K.shape}, {V.shape}")
    if K.shape[:-2] != Q.shape[:-2] or V.shape[:-2] != Q.shape[:-2]:
        raise ValueError(f"Q, K, V need the same leading axes, got {Q.shape}, {K.shape}, {V.shape}")
    if K.shape[-1] != Q.shape[-1]:
        raise ValueError(f"Q and K need the same feature size d, got Q {Q.shape} and K {K.shape}")
    if V.shape[-2] != K.shape[-2]:
        raise ValueError(f"K and V need the same sequence length, got K {K.shape} and V {V.shape}")
    if causal and Q.shape[-2] != K.shape[-2]:
        raise ValueError(f"causal attention needs as many queries as keys, got Q {Q.shape} and K {K.shape}")
    return Q, K, V


@partial(jax.jit, static_argnames="causal")
def _softmax_attention(Q, K, V, causal):
    logits = jnp.einsum("...ld,...sd->...ls", Q, K)
    if causal:
        L = Q.shape[-2]
        logits = jnp.where(jnp.tril(jnp.ones((L, L), dtype=bool)), logits, -jnp.inf)
    out = jnp.einsum("...ls,...sv->...lv", jax.nn.softmax(logits, axis=-1), V)
    return out, jnp.stack([_checks.sums_finite(Q, K, V), jnp.all(jnp.isfinite(out)), jnp.array(True)])


def softmax_attention(Q, K, V, *, causal: bool = False) -> jax.Array:
    """Exact softmax attention D⁻¹ exp(QKᵀ) V, max-subtracted per row (Performer eq 1).

    Shapes: Q (..., L, d), K (..., S, d), V (..., S, d_v) → (..., L, d_v). ``causal`` masks keys after the query
    (needs L == S). Memory O(L·S): this is the quadratic reference.

    Raises:
      ValueError: bad shapes, NaN/inf input, or (eager calls only) an output that is not finite (the logits QKᵀ or
      the weighted sums of V overflowed), with the fix.
    """
    Q, K, V = _check_qkv(Q, K, V, causal)
    out, flags = _softmax_attention(Q, K, V, causal)
    overflow = "the logits QKᵀ or the weighted sums of V overflowed: rescale Q, K or V, or use float64"
    return _checked_output("softmax_attention", out, flags, lambda: {"Q": Q, "K": K, "V": V}, overflow=overflow)


def _as_features(phi) -> Features:
    if isinstance(phi, Features):
        return phi
    arr = jnp.asarray(phi)
    return Features(jnp.zeros(arr.shape[:-1], arr.dtype), arr)


def _with_ones(V, weights):
    """[w·V, w]: (S, d_v + 1), so that one product φ(K)ᵀ[w·V, w] gives numerator and denominator state together."""
    return jnp.concatenate([weights[:, None] * V, weights[:, None]], axis=1)


@jax.jit
def _linear_bidirectional(q_body, k_log, k_body, V):
    # The per-key scale e^{k_log − max} multiplies the value rows (S × (d_v + 1)), not the features (S × F): the same
    # sum, fewer multiplies, and XLA:CPU no longer fuses the scaling into the S-long contraction (7× slower at
    # S = 16 384 when it did). The barrier keeps XLA:GPU from fusing the feature map's producers into these products:
    # with the HRF map's Kronecker blocks that fusion fails to compile on an H200 (jaxlib 0.11.2, "Reshape input and
    # output shapes must be the same"); on the CPU nothing is fused into a product either way.
    q_body, k_log, k_body = jax.lax.optimization_barrier((q_body, k_log, k_body))
    state = k_body.T @ _with_ones(V, jnp.exp(k_log - jnp.max(k_log)))
    out = q_body @ state
    return out[:, :-1] / out[:, -1:], out[:, -1]


def _trusted_floor(dtype):
    """√tiny: a denominator (in units where every term is ≤ 1) above it loses < (number of terms)·√tiny, relatively,
    to terms that underflowed; below it the exact token-by-token path takes over."""
    return jnp.sqrt(jnp.finfo(dtype).tiny)


@partial(jax.jit, static_argnames="chunk_size")
def _linear_causal(q_body, k_log, k_body, V, chunk_size):
    L, F = q_body.shape
    n_chunks = math.ceil(L / chunk_size)
    pad = n_chunks * chunk_size - L
    # Padded queries are ones (so their discarded rows never divide by zero); padded keys contribute nothing.
    q_body = jnp.pad(q_body, ((0, pad), (0, 0)), constant_values=1.0)
    k_body = jnp.pad(k_body, ((0, pad), (0, 0)))
    k_log = jnp.pad(k_log, (0, pad), constant_values=jnp.min(k_log))
    V = jnp.pad(V, ((0, pad), (0, 0)))

    def chunks(a):
        return a.reshape((n_chunks, chunk_size) + a.shape[1:])

    lower = jnp.tril(jnp.ones((chunk_size, chunk_size), dtype=bool))

    def step(carry, xs):
        kv_state, k_state, state_max = carry
        q_c, k_log_c, k_body_c, v_c = xs
        # Query i uses the constant max_{j ≤ i} log-scale of its keys: it cancels in its own row.
        query_max = jnp.maximum(state_max, jax.lax.cummax(k_log_c))
        exponents = jnp.where(lower, k_log_c[None, :] - query_max[:, None], -jnp.inf)
        scores = (q_c @ k_body_c.T) * jnp.exp(exponents)
        state_weight = jnp.exp(state_max - query_max)[:, None]
        numerator = scores @ v_c + state_weight * (q_c @ kv_state)
        denominator = jnp.sum(scores, axis=1) + state_weight[:, 0] * (q_c @ k_state)
        new_max = query_max[-1]
        k_c = jnp.exp(k_log_c - new_max)[:, None] * k_body_c
        rescale = jnp.exp(state_max - new_max)
        carry = (kv_state * rescale + k_c.T @ v_c, k_state * rescale + jnp.sum(k_c, axis=0), new_max)
        return carry, (numerator / denominator[:, None], denominator)

    init = (
        jnp.zeros((F, V.shape[1]), q_body.dtype),
        jnp.zeros((F,), q_body.dtype),
        jnp.array(-jnp.inf, k_log.dtype),
    )
    _, (out, denominator) = jax.lax.scan(step, init, (chunks(q_body), chunks(k_log), chunks(k_body), chunks(V)))
    return out.reshape(n_chunks * chunk_size, V.shape[1])[:L], denominator.reshape(-1)[:L]


#: Tokens per causal chunk when ``chunk_size=None``: 64 on a CPU; on an accelerator (GPU, TPU) at most 512.
#: Each chunk is one sequential step of the prefix scan. On an NVIDIA H200 a step is a few small kernel launches, so
#: longer chunks win (benchmarks/recorded/nvidia-h200/causal_chunks.json, 2026-11-27): causal FAVOR+ at L = 32 768 took
#: 31.3 ms forward with 64-token chunks, 5.5 ms with 512 (exact attention: 6.9 ms), 4 × 8 heads × 4 096 took 4.8 vs
#: 2.6 ms (exact 3.8 ms); chunks of 1 024–2 048 are faster still for one long sequence but their gradients keep
#: L·chunk_size masked scores (4 × 8 × 4 096 at 1 024: 6.0 GiB, as much as exact attention).
CPU_CHUNK_SIZE = 64
ACCELERATOR_CHUNK_SIZE = 512


def default_chunk_size(length: int) -> int:
    """The causal chunk length used when ``chunk_size=None``: :data:`CPU_CHUNK_SIZE` if JAX's default backend is the
    CPU; on any other, the fewest chunks of at most :data:`ACCELERATOR_CHUNK_SIZE` tokens, made equal so that little
    is padded (L = 520: two chunks of 260, not 512 + 8 padded to 1 024; L ≤ 512: one chunk of L). Every chunk length
    gives the same result to round-off; it sets speed and the gradient's memory (L·chunk_size saved scores per
    sequence). The backend is JAX's default, not the device of the arrays: pass ``chunk_size`` for arrays placed
    elsewhere."""
    length = _checks.positive_int("length", length)
    if jax.default_backend() == "cpu":
        return CPU_CHUNK_SIZE
    return math.ceil(length / math.ceil(length / ACCELERATOR_CHUNK_SIZE))


def _chunk_size(chunk_size, length: int) -> int:
    """``chunk_size`` checked, or the backend's default for a sequence of ``length`` tokens if it is None."""
    return default_chunk_size(length) if chunk_size is None else _checks.positive_int("chunk_size", chunk_size)


def linear_attention(
    Q,
    K,
    V,
    feature_map: Callable[[jax.Array], Features | jax.Array] | Estimator,
    *,
    causal: bool = False,
    chunk_size: int | None = None,
) -> jax.Array:
    """Random-feature (linear) attention φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1)  (Performer eq 4–5, FAVOR).

    Args:
      Q, K, V: (..., L, d), (..., S, d), (..., S, d_v).
      feature_map: X (n, d) → :class:`Features` or a dense (n, F) array, applied row-wise, e.g.
        ``partial(rflib.features.positive_features, W)``, used for queries and keys alike; or an
        :class:`~rflib.features.base.Estimator` (Ψ₁ for queries, Ψ₂ for keys), e.g. an HRF
        ``hybrid.angular_hybrid_estimator(W_pos, W_trig, T)``.
      causal: query i attends to keys j ≤ i only (needs L == S). Computed chunk by chunk with prefix sums
        carried by ``lax.scan``: a masked chunk_size × chunk_size product inside each chunk plus the running
        state φ(K)ᵀV of earlier chunks, so the forward pass keeps O(L·(F + d_v) + F·d_v + chunk_size²), never L×L or
        L×F×d_v.
      chunk_size: tokens per causal chunk (results agree to round-off for every value; it sets speed and, with
        gradients, memory: L·chunk_size saved scores per sequence); None: :func:`default_chunk_size` (64 on the CPU
        backend, chunks of at most 512 on any other). A longer chunk also makes the token-by-token fallback, where
        it is needed, a longer sequential scan.

    Returns:
      (..., L, d_v). Positive maps (those that return ``Features.log_body``) are stabilised per feature (module
      docstring), so they give a finite result for any finite input, float32 included, and have a written-out
      gradient. Signed maps (trigonometric, hybrid) are stabilised per row; their denominator is an estimate that can
      be ≤ 0 (the estimator, not a bug).

    Raises:
      ValueError: bad shapes, NaN/inf input, or (eager calls only) an output that is not finite, with the fix.
    """
    Q, K, V = _check_qkv(Q, K, V, causal)
    chunk_size = _chunk_size(chunk_size, Q.shape[-2])
    if not (callable(feature_map) or isinstance(feature_map, Estimator)):
        raise ValueError(f"feature_map must be a feature map X -> Features or an Estimator, got {feature_map!r:.60}")
    if isinstance(feature_map, Estimator) and feature_map.paired_direct is not None:
        feature_map = feature_map._replace(paired_direct=None)  # attention uses the feature maps alone
    arrays, spec = _split_map(feature_map)
    out, flags = _linear_attention(Q, K, V, arrays, spec, causal, chunk_size)

    def named_inputs():
        return {"Q": Q, "K": K, "V": V} | {
            f"feature_map's array {i} (shape {a.shape})": a for i, a in enumerate(arrays)
        }

    return _checked_output("linear_attention", out, flags, named_inputs)


@partial(jax.jit, static_argnames=("spec", "causal", "chunk_size"))
def _linear_attention(Q, K, V, arrays, spec, causal, chunk_size):
    """The compiled body of :func:`linear_attention`: the feature map rebuilt from its arrays and static ``spec``
    (:func:`_split_map`), then attention. Returns the output and flags (inputs' sums finite, output finite, map
    positive)."""
    feature_map = _build_map(spec, iter(arrays))
    query_map, key_map = (
        (feature_map.query_features, feature_map.key_features)
        if isinstance(feature_map, Estimator)
        else (feature_map, feature_map)
    )
    flat_q, flat_k = Q.reshape(-1, Q.shape[-1]), K.reshape(-1, K.shape[-1])
    phi_q, phi_k = _as_features(query_map(flat_q)), _as_features(key_map(flat_k))
    positive = phi_q.log_body is not None and phi_k.log_body is not None
    if positive:  # stabilised per feature, always
        out = _attend_log(_log_factors(phi_q), _full_log(_log_factors(phi_k)), V, causal, chunk_size)
    else:
        out, _ = _attend(phi_q.body, phi_k.log_scale, phi_k.body, V, causal, chunk_size)
    screen = _checks.sums_finite(Q, K, V, *arrays)
    return out, jnp.stack([screen, jnp.all(jnp.isfinite(out)), jnp.array(positive)])


def _split_map(obj):
    """A feature map or estimator as (its arrays, a hashable spec), so that one compiled function serves every
    projection of the same shapes: ``functools.partial`` chains and NamedTuples (``Estimator``, ``LambdaEstimator``)
    are taken apart, arrays become arguments, everything else (functions, numbers, names) is static. Anything
    unhashable is kept whole, by identity (a new such object compiles anew)."""
    if isinstance(obj, jax.Array | np.ndarray):
        return [obj], _ARRAY
    if isinstance(obj, partial):
        parts = [_split_map(a) for a in obj.args]
        names = tuple(sorted(obj.keywords))
        parts_kw = [_split_map(obj.keywords[k]) for k in names]
        arrays = [a for arrs, _ in parts + parts_kw for a in arrs]
        keywords = tuple(zip(names, (sp for _, sp in parts_kw), strict=True))
        return arrays, ("partial", obj.func, tuple(sp for _, sp in parts), keywords)
    if isinstance(obj, tuple):
        parts = [_split_map(a) for a in obj]
        return [a for arrs, _ in parts for a in arrs], ("tuple", type(obj), tuple(sp for _, sp in parts))
    try:
        hash(obj)
    except TypeError:
        return [], ("static", _ByIdentity(obj))
    return [], ("static", obj)


def _build_map(spec, arrays):
    """The inverse of :func:`_split_map`: the object back from its spec and an iterator over its arrays."""
    if spec == _ARRAY:
        return next(arrays)
    kind = spec[0]
    if kind == "partial":
        _, func, args, keywords = spec
        return partial(func, *(_build_map(a, arrays) for a in args), **{k: _build_map(v, arrays) for k, v in keywords})
    if kind == "tuple":
        _, cls, items = spec
        values = [_build_map(item, arrays) for item in items]
        return cls(*values) if hasattr(cls, "_fields") else cls(values)
    value = spec[1]
    return value.obj if isinstance(value, _ByIdentity) else value


_ARRAY = ("array",)


class _ByIdentity:
    """Hashable by identity: lets an unhashable part of a feature map be a static argument of ``jax.jit``."""

    def __init__(self, obj):
        self.obj = obj

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return isinstance(other, _ByIdentity) and other.obj is self.obj


def _checked_output(caller: str, out, flags, inputs: Callable[[], dict[str, jax.Array]], overflow: str | None = None):
    """Return ``out`` of an eager call, or raise: for the first of ``inputs()`` (name → array, built only then) with a
    NaN or inf, else for a non-finite output, with its cause. ``flags`` come from the compiled call: whether the
    inputs' sums are finite (:func:`rflib._checks.sums_finite`, a cheap screen: the inputs are scanned exactly only
    when it fails), whether the output is finite, whether the map is positive. ``overflow`` replaces the cause given
    for a positive map's non-finite output. One transfer of three flags; nothing under ``jit``, where they are
    tracers."""
    if not _checks.is_concrete(flags):
        return out
    inputs_screen, output_finite, positive = np.asarray(flags)
    if not inputs_screen:
        _checks.raise_for_nonfinite_input(inputs())
    if not output_finite:
        cause = (
            (overflow or "the weighted sums of V overflowed: rescale V or use float64")
            if positive
            else "a denominator underflowed or cancelled to 0: signed (trigonometric or hybrid) features are "
            "stabilised per row only, so use float64, rescale Q and K (e.g. by d^(-1/4)), or use a positive feature map"
        )
        raise ValueError(f"{caller}: the output is not finite in {out.dtype}: {cause}")
    return out


def _per_sequence(fn: Callable, batch: int) -> Callable:
    """``fn`` (one sequence) mapped over a leading axis of ``batch`` sequences: ``jax.vmap``, except for a single
    sequence on the CPU, which is called unbatched (XLA:CPU ran the batched form of its products ~20 % slower at
    L = 16 384). Elsewhere the batched form is kept: on an H200 (jaxlib 0.11.2) one of the unbatched bidirectional
    graphs of the attention benchmark failed to compile in XLA:GPU, while the batched ones compiled for every map."""
    if batch == 1 and jax.default_backend() == "cpu":
        return lambda *args: jax.tree_util.tree_map(lambda x: x[None], fn(*(a[0] for a in args)))
    return jax.vmap(fn)


def _attend(q_body, k_log, k_body, V, causal, chunk_size):
    """Linear attention from query bodies (per-query scales dropped: they cancel) and key features, stabilised per row.

    q_body: (..., L, F) or flattened (B·L, F); k_log: (..., S) or (B·S,); k_body likewise; V: (..., S, d_v).
    Returns the output (..., L, d_v) and each query's denominator (..., L) in units where every term is ≤ 1.
    """
    lead = V.shape[:-2]
    batch = math.prod(lead)
    q_body = q_body.reshape(batch, -1, q_body.shape[-1])
    k_log = k_log.reshape(batch, V.shape[-2])
    k_body = k_body.reshape(batch, V.shape[-2], -1)
    V_flat = V.reshape(batch, V.shape[-2], V.shape[-1])
    per_sequence = partial(_linear_causal, chunk_size=chunk_size) if causal else _linear_bidirectional
    out, denominator = sharding.map_leading(_per_sequence(per_sequence, batch), q_body, k_log, k_body, V_flat)
    return out.reshape(lead + out.shape[-2:]), denominator.reshape(lead + denominator.shape[-1:])


def favor_sharp_attention(
    Q,
    K,
    V,
    W,
    *,
    method: str = "sderf",
    causal: bool = False,
    chunk_size: int | None = None,
    eps: float = dense_exp.DEFAULT_EPS,
) -> jax.Array:
    """FAVOR# (FAVOR#, §2.2 and §5.3): linear attention with DERF features fitted to the current queries and keys.

    For every sequence (every leading index: batch, head) the closed-form optimal parameters θ* of ``method`` are
    computed from that sequence's queries 𝒳 = Q and keys 𝒴 = K (O(Ld² + d³), no L×L matrix), gradients are stopped
    through θ* (unbiasedness holds for any fixed θ, and eigh has NaN gradients at repeated eigenvalues), and
    attention is φ⁽¹⁾(Q)(φ⁽²⁾(K)ᵀV) / φ⁽¹⁾(Q)(φ⁽²⁾(K)ᵀ1) with the asymmetric maps f⁽¹⁾, f⁽²⁾.

    Args:
      Q, K, V: (..., L, d), (..., S, d), (..., S, d_v). Like :func:`softmax_attention` there is no implicit 1/√d:
        scale Q and K by d^{-1/4} for the usual convention.
      W: (M, d) random directions shared by every sequence, marginally N(0, I_d): sign-fixed orthogonal blocks with
        χ norms (``rflib.projections.orthogonal``) as in the paper's App. B, or iid.
      method: ``"sderf"`` (FAVOR# in the speech runs), ``"saderf"`` (FAVOR# in GLUE), ``"aderf"``, ``"gerf"``
        (= FAVOR++), ``"positive"`` (= FAVOR+).
      causal: query i sees keys j ≤ i. θ* is still fitted on the whole sequence, so with ``causal=True`` the
        second moments of later keys influence earlier outputs (not their values); the paper treats only
        bidirectional attention.
      chunk_size, eps: as in :func:`linear_attention` and :func:`rflib.features.dense_exp.fit`.

    Returns:
      (..., L, d_v), stabilised per feature (module docstring): finite for any finite Q, K, V, float32 included,
      bidirectional and causal.
    """
    Q, K, V = _check_qkv(Q, K, V, causal)
    W = _checks.real_array("W", W, 2)
    if W.shape[1] != Q.shape[-1]:
        raise ValueError(f"W must have shape (m, {Q.shape[-1]}) to project the queries, got shape {W.shape}")
    _checks.one_of("method", method, dense_exp.METHODS)
    chunk_size = _chunk_size(chunk_size, Q.shape[-2])
    eps = _checks.real_number("eps", eps, low=0.0)
    W = W.astype(Q.dtype)  # the array the compiled call screens is the one scanned on failure
    out, flags = _favor_sharp(Q, K, V, W, method, causal, chunk_size, eps)
    return _checked_output("favor_sharp_attention", out, flags, lambda: {"Q": Q, "K": K, "V": V, "W": W})


@partial(jax.jit, static_argnames=("method", "causal", "chunk_size"))
def _favor_sharp(Q, K, V, W, method, causal, chunk_size, eps):
    d = Q.shape[-1]

    def fitted(q, k):
        stats = dense_exp.set_statistics(q, k)
        return jax.lax.stop_gradient(dense_exp.fit_statistics(method, jax.lax.stop_gradient(stats), eps=eps))

    def log_features(q, k):
        params = fitted(q, k)
        return dense_exp.linear_logits(params, W, q, 1), _full_log(dense_exp.linear_logits(params, W, k, 2))

    q_factors, k_log = jax.vmap(log_features)(Q.reshape(-1, Q.shape[-2], d), K.reshape(-1, K.shape[-2], d))
    out = _attend_log(q_factors, k_log, V, causal, chunk_size)
    return out, jnp.stack([_checks.sums_finite(Q, K, V, W), jnp.all(jnp.isfinite(out)), jnp.array(True)])


def _log_factors(phi: Features) -> LinearLogits:
    """The factors of a positive map's log features (:class:`~rflib.features.base.LinearLogits`). A map that gives
    only ``log_body`` (one written outside rflib) is its own points, with an empty projection: (n, 0)."""
    if phi.linear_logits is not None:
        return phi.linear_logits
    F = phi.log_body.shape[-1]
    empty = jnp.zeros((F, 0), phi.log_body.dtype)
    return LinearLogits(phi.log_scale, phi.log_body, empty, jnp.zeros(F, phi.log_body.dtype))


def _is_factored(factors: LinearLogits) -> bool:
    """Whether ``factors`` hold a projection (static: from shapes); with an empty one, the points are log features."""
    return factors.projections.shape[-1] != 0


def _logits(factors: LinearLogits) -> jax.Array:
    """The log features without the per-row term: (..., n, F) from any :func:`_log_factors` (batched too)."""
    if not _is_factored(factors):
        return factors.points + factors.column_bias[..., None, :]
    return factors.logits()


def _full_log(factors: LinearLogits) -> jax.Array:
    """The log features with the per-row term, (n, F): the keys' side of :func:`_attend_log`."""
    return factors.row_log_scale[:, None] + _logits(factors)


def _attend_log(q: LinearLogits, k_log, V, causal, chunk_size):
    """Positive-feature attention from full log features, stabilised per feature (module docstring).

    q: the queries' :func:`_log_factors` (points (..., L, p) or flattened (B·L, p); projections and column bias shared,
    (F, p) and (F,), or per sequence, (..., F, p) and (..., F)); their row term is not used (per-query constants
    cancel). k_log: (..., S, F) or flattened (B·S, F), scales included; V: (..., S, d_v) → (..., L, d_v).
    """
    lead = V.shape[:-2]
    batch = math.prod(lead)
    F = q.column_bias.shape[-1]

    def per_sequence(x, trailing: int):  # shared (trailing axes only) or one per sequence
        if x.ndim == trailing:
            return jnp.broadcast_to(x, (batch,) + x.shape)
        return x.reshape((batch,) + x.shape[-trailing:])

    q = LinearLogits(
        None,
        q.points.reshape(batch, -1, q.points.shape[-1]),
        per_sequence(q.projections, 2),
        per_sequence(q.column_bias, 1),
    )
    k_log = k_log.reshape(batch, V.shape[-2], F)
    V_flat = V.reshape(batch, V.shape[-2], V.shape[-1])
    if causal:
        out = sharding.map_leading(partial(_linear_causal_log, chunk_size=chunk_size), _logits(q), k_log, V_flat)
    else:
        attend = _per_sequence(partial(_linear_bidirectional_log, factored=_is_factored(q)), batch)
        out = sharding.map_leading(attend, q.points, q.projections, q.column_bias, k_log, V_flat)  # a block per device
    return out.reshape(lead + out.shape[-2:])


def _causal_tokens(q_log, k_log, values, state, state_max):
    """Exact causal attention over a run of tokens, one token at a time, with per-feature prefix maxima.

    q_log, k_log: (B, C, F); values: (B, C, d_v + 1) (values and a ones column); state: (B, F, d_v + 1), the sums
    Σ_j e^{k_log_jm − state_max_m}(v_j, 1) over earlier tokens; state_max: (B, F). Returns (B, C, d_v + 1): each
    query's numerator and denominator in units of e^{c_i}, denominator ≥ 1.
    """

    def step(carry, xs):
        state, state_max = carry
        q, k, v = xs
        new_max = jax.lax.stop_gradient(jnp.maximum(state_max, k))  # maxima cancel exactly: they carry no gradient
        safe_max = jnp.where(jnp.isfinite(new_max), new_max, 0.0)
        state = state * jnp.exp(state_max - safe_max)[..., None] + jnp.exp(k - safe_max)[..., None] * v[:, None, :]
        shifted = q + new_max
        weights = jnp.exp(shifted - jax.lax.stop_gradient(jnp.max(shifted, axis=-1, keepdims=True)))
        return (state, new_max), jnp.einsum("bf,bfv->bv", weights, state)

    xs = tuple(jnp.moveaxis(a, 1, 0) for a in (q_log, k_log, values))
    _, out = jax.lax.scan(step, (state, state_max), xs)
    return jnp.moveaxis(out, 0, 1)


def _chunk_fast(q, k, values, state, state_max):
    """One causal chunk by the chunk-level per-feature maxima (the fast path of :func:`_causal_chunk_fwd`).

    q, k: (B, C, F) log features; values: (B, C, d_v + 1) (values and a ones column); state: (B, F, d_v + 1), the
    sums Σ_j e^{k_jm − state_max_m}(v_j, 1) over earlier chunks; state_max: (B, F). Returns the unnormalised rows
    (B, C, d_v + 1) in units of e^{c_i}, the new state and maximum, and the masked scores q̂k̂ᵀ (B, C, C), which the
    gradient keeps.
    """
    C = q.shape[1]
    new_max, safe_max, q_hat, k_hat = _chunk_features(q, k, state_max)
    earlier = state * jnp.exp(state_max - safe_max)[..., None]
    lower = jnp.tril(jnp.ones((C, C), dtype=bool))
    scores = jnp.where(lower, jnp.einsum("bif,bjf->bij", q_hat, k_hat), 0.0)
    rows = scores @ values + q_hat @ earlier
    new_state = earlier + jnp.einsum("bjf,bjv->bfv", k_hat, values)
    return rows, new_state, new_max, scores


def _chunk_features(q, k, state_max):
    """A chunk's maxima and stabilised features: new_max = max(state_max, max_j k_j) (B, F), it with −∞ read as 0,
    k̂ = e^{k − new_max} and q̂ = e^{q + new_max − c} (B, C, F), c the row maxima. The maxima carry no gradient (they
    cancel). The gradient recomputes q̂ and k̂ from q and k, which it keeps anyway: two exponentials per element cost
    less than storing two more L × F arrays."""
    new_max = jax.lax.stop_gradient(jnp.maximum(state_max, jnp.max(k, axis=1)))
    safe_max = jnp.where(jnp.isfinite(new_max), new_max, 0.0)
    k_hat = jnp.exp(k - safe_max[:, None, :])
    shifted = q + new_max[:, None, :]
    q_hat = jnp.exp(shifted - jax.lax.stop_gradient(jnp.max(shifted, axis=-1, keepdims=True)))
    return new_max, safe_max, q_hat, k_hat


def _chunk_exact(q, k, values, state, state_max):
    """One causal chunk token by token (:func:`_causal_tokens`): the same outputs as :func:`_chunk_fast`, finite
    where the chunk-level maxima underflow a query's denominator."""
    _, new_state, new_max, _ = _chunk_fast(q, k, values, state, state_max)
    rows = _causal_tokens(q, k, values, state, state_max)
    return rows[..., :-1] / rows[..., -1:], new_state, new_max


def _causal_chunk_fwd(q, k, values, state, state_max, real_rows):
    """One chunk of causal positive-feature attention, stabilised per feature: the step of :func:`_causal_scan`.

    q, k: (B, C, F) log features; values: (B, C, d_v + 1); state, state_max: the prefix carried by the scan;
    real_rows: (C,) which rows are not padding. Returns the normalised output (B, C, d_v), the new state and maximum,
    and what the gradient keeps of this chunk. Where a real row's denominator falls below √tiny the chunk is redone
    token by token (``lax.cond``), in the gradient too.
    """
    rows, new_state, new_max, scores = _chunk_fast(q, k, values, state, state_max)
    needs_exact = jnp.any(real_rows[None, :] & ~(rows[..., -1] >= _trusted_floor(q.dtype)))
    out = jax.lax.cond(
        needs_exact,
        lambda: _chunk_exact(q, k, values, state, state_max)[0],
        lambda: rows[..., :-1] / rows[..., -1:],
    )
    # kept per chunk: the incoming prefix, scores and denominators; q̂, k̂ and the rescaled state are recomputed
    return out, new_state, new_max, (state, state_max, needs_exact, scores, rows[..., -1:])


def _causal_chunk_bwd(q, k, values, out, kept, g_out, g_state):
    """The chunk's vector-Jacobian product. With h_i = (g_i, −g_i·o_i)/D̂_i and G the cotangent of the new state:
    ∂/∂q_im = q̂_im (Σ_{j≤i} k̂_jm h_i·ṽ_j + (earlier h_i)_m), ∂/∂k_jm = k̂_jm (Σ_{i≥j} q̂_im h_i·ṽ_j + ṽ_j·G_m),
    ∂/∂ṽ_j = Σ_{i≥j} scores_ij h_i + k̂_j G, and the earlier state gets q̂ᵀh + G, rescaled to its own maximum. The
    maxima carry no gradient (they cancel exactly). A chunk that needed the token-by-token path differentiates
    that path instead (autodiff of :func:`_chunk_exact`, this chunk only). Returns (∂q, ∂k, ∂values, ∂state)."""
    state, state_max, needs_exact, scores, denominator = kept

    def fast():
        _, safe_max, q_hat, k_hat = _chunk_features(q, k, state_max)
        earlier = state * jnp.exp(state_max - safe_max)[..., None]
        h = jnp.concatenate([g_out, -jnp.sum(g_out * out, axis=-1, keepdims=True)], axis=-1) / denominator
        lower = jnp.tril(jnp.ones(scores.shape[1:], dtype=bool))
        pair = jnp.where(lower, jnp.einsum("biv,bjv->bij", h, values), 0.0)  # h_i·ṽ_j where j ≤ i
        d_q = q_hat * (pair @ k_hat + h @ jnp.swapaxes(earlier, 1, 2))
        d_k = k_hat * (jnp.swapaxes(pair, 1, 2) @ q_hat + values @ jnp.swapaxes(g_state, 1, 2))
        d_values = jnp.swapaxes(scores, 1, 2) @ h + k_hat @ g_state
        d_earlier = jnp.swapaxes(q_hat, 1, 2) @ h + g_state
        return d_q, d_k, d_values, d_earlier * jnp.exp(state_max - safe_max)[..., None]

    def exact():
        _, vjp = jax.vjp(lambda *a: _chunk_exact(*a, state_max)[:2], q, k, values, state)
        return vjp((g_out, g_state))

    return jax.lax.cond(needs_exact, exact, fast)


def _unbatched_chunks(B: int) -> bool:
    """Whether the chunks of :func:`_to_chunks` drop the batch axis: for one sequence on the CPU, where XLA copied
    (n, 1, C, ...) chunks into the scan's layout (q, k and values: a fifth of the forward at L = 16 384). Elsewhere
    the batched layout is kept, as in :func:`_per_sequence` (measured on the CPU only)."""
    return B == 1 and jax.default_backend() == "cpu"


def _to_chunks(a, chunk_size: int):
    """(B, n·C, ...) → (n, B, C, ...), the scan's axis first; (n, C, ...), a reshape, if :func:`_unbatched_chunks`."""
    B, length = a.shape[:2]
    if _unbatched_chunks(B):
        return a.reshape((length // chunk_size, chunk_size) + a.shape[2:])
    return jnp.moveaxis(a.reshape((B, length // chunk_size, chunk_size) + a.shape[2:]), 1, 0)


def _from_chunks(a, B: int):
    """The inverse of :func:`_to_chunks`: (n, B, C, ...) or (n, C, ...) → (B, n·C, ...)."""
    if _unbatched_chunks(B):
        return a.reshape((1, -1) + a.shape[2:])
    a = jnp.moveaxis(a, 0, 1)
    return a.reshape(a.shape[:1] + (-1,) + a.shape[3:])


def _chunk_axes(B: int):
    """(add, remove) the batch axis of a chunk of :func:`_to_chunks` inside a scan step, identities if it has one."""
    if _unbatched_chunks(B):
        return (lambda a: a[None]), (lambda a: a[0])
    return (lambda a: a), (lambda a: a)


@partial(jax.custom_vjp, nondiff_argnums=(4,))
def _causal_scan(q, k, values, real, chunk_size):
    """Causal positive-feature attention over padded sequences, with a written-out gradient.

    q, k: (B, n·C, F) log features (keys padded with −∞); values: (B, n·C, d_v + 1) (values and a ones column);
    real: (n, C) which rows are not padding. Returns (B, n·C, d_v). The batch stays inside the scan so that the
    exact fallback (:func:`_causal_tokens`) runs for a chunk only when one of its rows needs it. The gradient is a
    reverse scan over the chunks that reads q, k and values themselves (no per-chunk copies) and keeps one prefix
    state per chunk, O(L·F·d_v / chunk_size), never one per token.
    """
    return _causal_scan_forward(q, k, values, real, chunk_size, keep=False)[0]


def _causal_scan_forward(q, k, values, real, chunk_size, keep: bool):
    """The scan of :func:`_causal_scan`: the output (B, n·C, d_v) and, if ``keep``, the chunked output and what each
    chunk keeps for the gradient (:func:`_causal_chunk_fwd`), else None."""
    B, F = q.shape[0], q.shape[-1]
    add, remove = _chunk_axes(B)

    def step(carry, xs):
        q_c, k_c, values_c, real_c = xs
        out, new_state, new_max, kept = _causal_chunk_fwd(add(q_c), add(k_c), add(values_c), *carry, real_c)
        return (new_state, new_max), (remove(out), kept if keep else None)

    init = (jnp.zeros((B, F, values.shape[-1]), q.dtype), jnp.full((B, F), -jnp.inf, q.dtype))
    chunked = (_to_chunks(q, chunk_size), _to_chunks(k, chunk_size), _to_chunks(values, chunk_size), real)
    _, (out, kept) = jax.lax.scan(step, init, chunked)
    return _from_chunks(out, B), ((out, kept) if keep else None)


def _causal_scan_fwd(q, k, values, real, chunk_size):
    result, (out, kept) = _causal_scan_forward(q, k, values, real, chunk_size, keep=True)
    return result, (q, k, values, out, kept)


def _causal_scan_bwd(chunk_size, residuals, g):
    q, k, values, out, kept = residuals
    B = q.shape[0]

    add, remove = _chunk_axes(B)

    def step(g_state, xs):
        q_c, k_c, values_c, out_c, kept_c, g_c = xs
        chunk = (add(q_c), add(k_c), add(values_c), add(out_c), kept_c, add(g_c))
        d_q, d_k, d_values, d_state = _causal_chunk_bwd(*chunk, g_state)
        return d_state, (remove(d_q), remove(d_k), remove(d_values))

    init = jnp.zeros((B, q.shape[-1], values.shape[-1]), q.dtype)
    chunked = tuple(_to_chunks(a, chunk_size) for a in (q, k, values))
    _, grads = jax.lax.scan(step, init, (*chunked, out, kept, _to_chunks(g, chunk_size)), reverse=True)
    d_q, d_k, d_values = (_from_chunks(d, B) for d in grads)
    return d_q, d_k, d_values, None


_causal_scan.defvjp(_causal_scan_fwd, _causal_scan_bwd)


@partial(jax.jit, static_argnames="chunk_size")
def _linear_causal_log(q_log, k_log, V, chunk_size):
    """Causal positive-feature attention from full log features, stabilised per feature (module docstring).

    q_log: (B, L, F), k_log: (B, L, F), V: (B, L, d_v) → (B, L, d_v), chunk by chunk (:func:`_causal_scan`).
    """
    B, L, F = q_log.shape
    n_chunks = math.ceil(L / chunk_size)
    pad = n_chunks * chunk_size - L
    values = jnp.concatenate([V, jnp.ones(V.shape[:-1] + (1,), V.dtype)], axis=-1)
    # Padded keys contribute e^{−∞} = 0; padded queries are discarded (and excluded from the fallback test).
    q_log = jnp.pad(q_log, ((0, 0), (0, pad), (0, 0)))
    k_log = jnp.pad(k_log, ((0, 0), (0, pad), (0, 0)), constant_values=-jnp.inf)
    values = jnp.pad(values, ((0, 0), (0, pad), (0, 0)))
    real = (jnp.arange(n_chunks * chunk_size) < L).reshape(n_chunks, chunk_size)
    return _causal_scan(q_log, k_log, values, real, chunk_size)[:, :L]


def _shifted_query_logits(points, projections, bias, key_max, factored):
    """log φ(q_i)_m + s_m without the per-query term: (L, F). Factored, as the one product
    [points, 1]·[projectionsᵀ; bias + s] (XLA:CPU materialised the broadcast of s added to an (L, F) array, which
    cost half the forward); otherwise points (the log features) + bias + s."""
    if not factored:
        return points + (bias + key_max)[None, :]
    ones = jnp.ones(points.shape[:-1] + (1,), points.dtype)
    augmented = jnp.concatenate([points, ones], axis=-1)
    # full precision: a GPU's default (TF32) would round s_m itself to 10 bits here, an error that does not cancel
    bias_row = (bias + key_max)[None, :]
    return jnp.matmul(augmented, jnp.concatenate([projections.T, bias_row], axis=0), precision="highest")


def _bidirectional_log_parts(points, projections, bias, k_log, V, factored):
    """The forward of :func:`_linear_bidirectional_log`: (output, stabilised query and key features, state, D̂)."""
    key_max = jnp.max(k_log, axis=0)
    k_hat = jnp.exp(k_log - key_max[None, :])
    # the state as (d_v + 1, F) = [Vᵀk̂; Σ_j k̂_j]: a (d_v × S)·(S × F) product ran 1.6× faster than k̂ᵀ[V, 1] here
    state = jnp.concatenate([V.T @ k_hat, jnp.sum(k_hat, axis=0)[None, :]], axis=0)
    shifted = _shifted_query_logits(points, projections, bias, key_max, factored)
    q_hat = jnp.exp(shifted - jnp.max(shifted, axis=1, keepdims=True))
    full = q_hat @ state.T
    denominator = full[:, -1]
    return full[:, :-1] / denominator[:, None], (q_hat, k_hat, state, denominator)


@partial(jax.custom_vjp, nondiff_argnums=(5,))
def _linear_bidirectional_log(points, projections, bias, k_log, V, factored):
    """Positive-feature attention from log features, stabilised per feature (exact, no underflow to 0/0).

    The queries' log features (per-query constants dropped) are points·projectionsᵀ + bias (factored: points (L, p),
    projections (F, p), bias (F,), see :class:`~rflib.features.base.LinearLogits`) or, not factored, points + bias
    (points (L, F), projections (F, 0) unused). k_log: (S, F), V: (S, d_v). With s_m = max_j k_log_jm, the key sums
    Σ_j e^{k_log_jm − s_m}(v_j, 1) are bounded by S, and each query weights feature m by
    e^{q_log_im + s_m − max_m(q_log_im + s_m)} ≤ 1, so the denominator is ≥ 1: the result is finite for any finite
    logits, even in float32.

    Its gradient (:func:`_bidirectional_log_bwd`) is written out, in the same stabilised units, so that reverse mode
    stores only the bounded features q̂, k̂ and costs four (L·F·d_v) products (and the projection's two) instead of
    autodiff's round trip through the maxima and exponentials.
    """
    return _bidirectional_log_parts(points, projections, bias, k_log, V, factored)[0]


def _bidirectional_log_fwd(points, projections, bias, k_log, V, factored):
    out, (q_hat, k_hat, state, denominator) = _bidirectional_log_parts(points, projections, bias, k_log, V, factored)
    kept = points if factored else None  # the projection's gradient needs the points; log features are not kept
    return out, (kept, projections, q_hat, k_hat, state, denominator, out, V)


def _bidirectional_log_bwd(factored, residuals, g):
    """With A_ij = Σ_m e^{a_im + b_jm}, o_i = Σ_j A_ij v_j / D_i and h_i = (g_i, −g_i·o_i) / D̂_i (D̂_i = D_i e^{−c_i}):
    ∂/∂a_im = q̂_im (h_i·state_m), ∂/∂b_jm = k̂_jm ((v_j, 1)·P_m), ∂/∂v_j = Σ_m k̂_jm P_m[:d_v] with P = hᵀq̂ (its columns
    P_m); a = points·projectionsᵀ + bias passes ∂a on by the chain rule. The maxima s and c cancel exactly in o, so
    they carry no gradient; every factor here is ≤ 1 or divided by D̂ ≥ 1."""
    points, projections, q_hat, k_hat, state, denominator, out, V = residuals
    h = jnp.concatenate([g, -jnp.sum(g * out, axis=1, keepdims=True)], axis=1) / denominator[:, None]
    d_a = q_hat * (h @ state)
    P = h.T @ q_hat  # (d_v + 1, F)
    d_k = k_hat * (V @ P[:-1] + P[-1][None, :])
    d_v = k_hat @ P[:-1].T
    d_bias = jnp.sum(d_a, axis=0)
    if not factored:
        return d_a, jnp.zeros_like(projections), d_bias, d_k, d_v
    return d_a @ projections, d_a.T @ points, d_bias, d_k, d_v


_linear_bidirectional_log.defvjp(_bidirectional_log_fwd, _bidirectional_log_bwd)


# --- a drop-in attention_fn for JAX model libraries (Flax) ------------------------------------------------------------

ATTENTION_KINDS = ("favor+", "favor#", "hrf")
REDRAW_POLICIES = ("never", "per_call")


def make_attention_fn(
    kind: str,
    head_dim: int,
    *,
    projection_key,
    num_features: int = 256,
    causal: bool = False,
    redraw: str = "never",
    method: str = "sderf",
    chunk_size: int | None = None,
) -> Callable:
    """A drop-in ``attention_fn`` for Flax's attention layers (``flax.linen.MultiHeadDotProductAttention``) and any
    model written against ``jax.nn.dot_product_attention``'s convention, computed by random-feature attention.

    The returned ``attention_fn(query, key, value, bias=None, mask=None, *, dropout_rate=0.0, deterministic=True,
    dtype=None, …)`` takes query (batch…, L, heads, head_dim), key (batch…, S, heads, head_dim) and value
    (batch…, S, heads, d_v) and returns (batch…, L, heads, d_v). Like ``jax.nn.dot_product_attention`` it estimates
    softmax(q·k / √head_dim): queries and keys are scaled by head_dim^{-1/4} inside, so the caller passes them
    unscaled.

    Args:
      kind: ``"favor+"`` (positive features, Performer), ``"favor#"`` (DERF features fitted to each sequence,
        FAVOR# §2.2; ``method`` picks the family, ``"gerf"`` = FAVOR++), ``"hrf"`` (the angular hybrid of HRF eq 19
        with num_features/8 orthogonal base projections per base and 3 λ projections: 2·num_features features).
      head_dim: d, the query/key size per head.
      projection_key: a ``jax.random`` key the projections are drawn from (sign-fixed orthogonal blocks with χ norms,
        :func:`rflib.projections.orthogonal`).
      num_features: m, projections per estimator.
      causal: query i attends to keys j ≤ i. Pass this instead of a mask: linear attention cannot apply an
        arbitrary L×S mask, and ``attention_fn`` refuses one.
      redraw: the projection redraw policy, explicit: ``"never"`` draws them once here (the same estimator for every
        call; redraw on your own schedule by building a new ``attention_fn`` with a new key), ``"per_call"`` draws
        new ones in every call from ``projection_key`` folded with a 32-bit digest of the query values (as the
        public Performer code does), so each training step sees new projections and the same inputs the same ones.
      method: the DERF family for ``kind="favor#"`` (``rflib.features.dense_exp.METHODS``).
      chunk_size: tokens per causal chunk (speed and gradient memory, as in :func:`linear_attention`); None:
        :func:`default_chunk_size` of each call's length.

    Raises:
      ValueError: an unknown kind, redraw policy or method, a head_dim or num_features < 1; at call time a mask or
        bias, attention dropout, query, key or value not real (bool, complex, …) or of rank outside 3–5, or whose
        last axis is not head_dim; in an eager call, NaN or inf in them (named Q, K, V: the heads-first layout
        :func:`linear_attention` receives).
    """
    _checks.one_of("kind", kind, ATTENTION_KINDS)
    _checks.one_of("redraw", redraw, REDRAW_POLICIES)
    _checks.one_of("method", method, dense_exp.METHODS)
    head_dim = _checks.positive_int("head_dim", head_dim)
    num_features = _checks.positive_int("num_features", num_features)
    chunk_size = None if chunk_size is None else _checks.positive_int("chunk_size", chunk_size)
    if kind == "hrf" and num_features < 8:
        raise ValueError(
            f"num_features must be ≥ 8 for kind='hrf' (num_features/8 base projections), got {num_features}"
        )
    _check_key("projection_key", projection_key)
    fixed = _draw_projections(kind, projection_key, num_features, head_dim) if redraw == "never" else None

    def attention_fn(
        query,
        key,
        value,
        bias=None,
        mask=None,
        broadcast_dropout=True,
        dropout_rng=None,
        dropout_rate=0.0,
        deterministic=True,
        dtype=None,
        precision=None,
    ):
        if mask is not None or bias is not None:
            raise ValueError(
                "random-feature attention cannot apply an attention mask or bias; for causal attention build the "
                "attention_fn with make_attention_fn(..., causal=True) and pass no mask"
            )
        if dropout_rate > 0 and not deterministic:
            raise ValueError("random-feature attention forms no attention weights to drop out: use dropout_rate=0")
        # dtype and rank under their own names before the scaling (a bool query was cast by q · scale)
        query, key, value = (
            _checks.real_array(n, x, _LAYOUT_RANKS) for n, x in zip(_LAYOUT_NAMES, (query, key, value), strict=True)
        )
        for name, x in (("query", query), ("key", key)):
            if x.shape[-1] != head_dim:
                raise ValueError(f"{name} must end in head_dim = {head_dim}, got shape {x.shape}")
        q, k, v = (jnp.swapaxes(x, -3, -2) for x in (query, key, value))  # (batch…, heads, L, d)
        scale = head_dim**-0.25
        draws = (
            fixed
            if fixed is not None
            else _draw_projections(kind, jax.random.fold_in(projection_key, _digest(q)), num_features, head_dim)
        )
        draws = tuple(jax.lax.stop_gradient(w.astype(q.dtype)) for w in draws)
        if kind == "favor#":
            out = favor_sharp_attention(
                q * scale, k * scale, v, draws[0], method=method, causal=causal, chunk_size=chunk_size
            )
        else:
            feature_map = (
                partial(classic.positive_features, draws[0])
                if kind == "favor+"
                else hybrid.angular_hybrid_estimator(*draws)
            )
            out = linear_attention(q * scale, k * scale, v, feature_map, causal=causal, chunk_size=chunk_size)
        out = jnp.swapaxes(out, -3, -2)
        return out.astype(dtype) if dtype is not None else out

    return attention_fn


_LAYOUT_NAMES = ("query", "key", "value")
_LAYOUT_RANKS = tuple(r for r in _QKV_RANKS if r >= 3)  # (batch…, L, heads, d): a heads axis, ≤ 2 batch axes


def _check_key(name: str, key) -> None:
    """Raise unless ``key`` is a ``jax.random`` key: a typed key (``jax.random.key``) or a raw uint32 (2,) one."""
    typed = isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key) and key.shape == ()
    raw = isinstance(key, jax.Array | np.ndarray) and key.dtype == np.uint32 and key.shape == (2,)
    if not (typed or raw):
        raise ValueError(f"{name} must be a jax.random key (e.g. jax.random.key(0)), got {key!r:.60}")


def _draw_projections(kind: str, key, m: int, d: int) -> tuple[jax.Array, ...]:
    """The projections of one estimator of ``kind`` (:func:`make_attention_fn`): (W,) or HRF's (W_pos, W_trig, T)."""
    if kind != "hrf":
        return (projections.orthogonal(key, m, d),)
    k_pos, k_trig, k_lambda = jax.random.split(key, 3)
    return (
        projections.orthogonal(k_pos, m // 8, d),
        projections.orthogonal(k_trig, m // 8, d),
        projections.gaussian(k_lambda, 3, d),
    )


def _digest(x) -> jax.Array:
    """A uint32 digest of the values of ``x`` (the sum of their float32 bit patterns, wrapping): new inputs, new
    projections under ``redraw="per_call"``; the same inputs, the same ones."""
    bits = jax.lax.bitcast_convert_type(jnp.asarray(x, jnp.float32), jnp.uint32)
    return jnp.sum(bits, dtype=jnp.uint32)
