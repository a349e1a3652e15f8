"""Suite 6: FAVOR+ attention forward and forward + backward, against the Performer baseline timed in the same run,
and as a fraction of this machine's dense-matmul FLOP/s; plus the eager overhead of the public entry point.

- **Against the public Performer code.** rflib's drop-in (:func:`rflib.attention.make_attention_fn`, FAVOR+) and
  :func:`benchmarks.performer_baseline.favor_plus` (the public code's algorithm) take the same (batch, L, heads, d)
  inputs and the same orthogonal W (m = 256, d = 64, float32). Each row's times are medians of ``rounds`` rounds in
  which every contender's forward is called, in a shuffled order (interleaved, so drifts of the machine's speed hit
  all alike; each call repeated to last at least ``min_seconds``, its mean the round's value), then as many rounds
  of their forward + backward; the ratio baseline time / rflib time (> 1: rflib faster) is the geometric mean of the
  per-round ratios, with its delta-method standard error (:func:`harness.paired_ratio`). Forwards and gradients are
  timed in separate rounds: a call that flushes the caches (a gradient, a large matmul) at a random place in a round
  adds its noise to every ratio of the round. With ``RFLIB_PERFORMER_REFERENCE`` naming a copy of the public file,
  the unmodified public code is timed too (``public ms``).
- **Gradients.** Forward + backward is ``jax.grad`` of Σ out ⊙ C for a fixed cotangent C, with respect to query, key
  and value. ``grad / fwd`` is its time over the forward's, from further shuffled rounds that call rflib's forward,
  its forward + backward and the matmul below once each (geometric mean of per-round ratios, with its s.e.). Memory
  is XLA's compiled buffer plan (temporaries + outputs) of the forward + backward, read without running.
- **Distance to the machine's limit.** Those rounds time a float32 (n × n)·(n × n) matmul (n = 2048) for the
  machine's dense FLOP/s (the "matmul" row: 2n³ / its median time over all rounds). Linear attention's useful work
  is counted as its matmuls: the two feature projections (2·L·d·m each) and the state and read-out products
  (2·L·m·(d_v + 1) each), ×3 for forward + backward; achieved FLOP/s over the matmul's is ``fraction``, per round
  (work / attention time over 2n³ / matmul time), with its s.e. Elementwise work (exponentials) is not counted.
- **Eager overhead.** :func:`rflib.attention.linear_attention` called eagerly (validation, one compiled call, one
  read of its finiteness flags) against the same call inside the caller's ``jax.jit``, at L = 1 024, with the
  projection W an argument of both (as a model's parameters are). ``jit, W constant ms`` times the caller's jit with
  W closed over instead (a constant XLA could fold): on the 2-core CPU it was within the noise of the argument form
  (2026-11-26), so neither baseline flatters the eager call.

Run:  .venv/bin/python -m benchmarks --suite attention_gradients
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import harness, performer_baseline
from benchmarks.harness import interleaved_samples, paired_overhead, paired_ratio
from rflib import attention, projections
from rflib.experiments.progress_bars import bar
from rflib.features import classic

MATMUL_N = 2048


def useful_flops(batch_heads: int, L: int, d: int, m: int, d_v: int, backward: bool) -> float:
    """Linear attention's matmul FLOPs: projections 2·(2Ldm) + state and read-out 2·(2Lm(d_v + 1)), per sequence;
    ×3 with the backward pass (the usual 1 : 2 forward : backward count)."""
    forward = batch_heads * (4 * L * d * m + 4 * L * m * (d_v + 1))
    return 3 * forward if backward else forward


def gradient_flop_ratio(L: int, d: int, m: int, d_v: int, causal: bool, chunk: int = 64) -> float:
    """(forward + backward) / forward of FAVOR+ attention counted in product FLOPs alone, gradients for Q, K and V:
    the ratio a perfectly matmul-bound implementation would show.

    Forward: the two projections (2·L·d·m each); bidirectionally the state and read-out (2·L·m·(d_v + 1) each),
    causally per chunk of C rows q̂k̂ᵀ (2C²m), scores·ṽ (2C²(d_v + 1)), q̂·state and k̂ᵀṽ (2Cm(d_v + 1) each).
    Backward: each product's two operand gradients, except the projections' (W gets none), i.e. the projections
    once more, twice the other products.
    """
    projections = 2 * (2 * L * d * m)
    if causal:
        v = d_v + 1
        forward = projections + -(-L // chunk) * (2 * chunk**2 * (m + v) + 2 * (2 * chunk * m * v))
    else:
        forward = useful_flops(1, L, d, m, d_v, backward=False)
    rest = forward - projections
    return (forward + projections + 2 * rest) / forward


def _grad(fn, cotangent):
    return jax.jit(jax.grad(lambda q, k, v: jnp.sum(fn(q, k, v) * cotangent), argnums=(0, 1, 2)))


def _attention_only(fn):
    """``fn(q, k, v)`` called with the round's shared arguments (q, k, v, and the matmul's two operands)."""
    return lambda q, k, v, a, b: fn(q, k, v)


def run(
    lengths=(4096, 16384),
    batched=(4, 4096, 8),
    d: int = 64,
    m: int = 256,
    rounds: int = 21,
    min_seconds: float = 0.02,
    eager_length: int = 1024,
    seed: int = 0,
    *,
    progress: bool = False,
) -> list[dict]:
    """One row per (shape, direction): rflib's and the baseline's forward and forward + backward ms, their ratios,
    grad/fwd, compiled memory of forward + backward, and the fraction of matmul FLOP/s; a "matmul" row; and one
    "eager" row per direction."""
    key = jax.random.key(seed)
    W = projections.orthogonal(jax.random.fold_in(key, 1), m, d).astype(jnp.float32)
    A, B = (jax.random.normal(k, (MATMUL_N, MATMUL_N), jnp.float32) for k in jax.random.split(jax.random.key(0)))
    matmul = jax.jit(jnp.matmul)
    matmul_seconds = []
    rows = []
    shapes = [(1, L, 1) for L in lengths] + [tuple(batched)]
    for batch, L, heads in bar(shapes, "attention gradients", progress, leave=False):
        kq, kk, kv, kc = jax.random.split(jax.random.fold_in(key, L * batch), 4)
        Q, K, V, C = (jax.random.normal(k, (batch, L, heads, d), jnp.float32) for k in (kq, kk, kv, kc))
        Q, K = 0.5 * Q, 0.5 * K
        for causal in (False, True):
            ours = attention.make_attention_fn(
                "favor+", d, projection_key=jax.random.fold_in(key, 1), num_features=m, causal=causal
            )
            theirs = partial(performer_baseline.favor_plus, W=W, causal=causal)
            forwards = {"rflib": jax.jit(ours), "baseline": jax.jit(theirs)}
            public = performer_baseline.load_public(causal)
            if public is not None:
                forwards["public"] = jax.jit(partial(public, W=W))
            grads = {name: _grad(fn, C) for name, fn in forwards.items()}
            order = 2 * shapes.index((batch, L, heads)) + int(causal)  # a fresh shuffled order per comparison
            # the comparison: forwards in their own rounds, gradients in theirs (a call that flushes the caches —
            # a gradient, the 2048³ matmul — placed at random in a round adds its noise to every ratio of the round)
            timed = partial(interleaved_samples, rounds=rounds, order_seed=order, min_seconds=min_seconds)
            fwd, grad = timed(forwards, (Q, K, V)), timed(grads, (Q, K, V))
            # grad / fwd and the distance to the matmul rate: rflib's two calls and the matmul, in shared rounds
            own = {
                "fwd": _attention_only(forwards["rflib"]),
                "grad": _attention_only(grads["rflib"]),
                "matmul": lambda q, k, v, a, b: matmul(a, b),
            }
            limit = timed(own, (Q, K, V, A, B))
            matmul_seconds += limit["matmul"]
            median_ms = {name: 1e3 * float(np.median(v)) for name, v in fwd.items()}
            median_ms |= {f"{name} grad": 1e3 * float(np.median(v)) for name, v in grad.items()}
            fwd_ratio, fwd_se = paired_ratio(fwd["baseline"], fwd["rflib"])
            grad_ratio, grad_se = paired_ratio(grad["baseline"], grad["rflib"])
            grad_over_fwd, grad_over_fwd_se = paired_ratio(limit["grad"], limit["fwd"])
            # achieved / matmul FLOP/s = (work / t_attention) / (2n³ / t_matmul): a per-round ratio of times
            work = useful_flops(batch * heads, L, d, m, d, backward=False) / (2 * MATMUL_N**3)
            fraction_fwd, fraction_fwd_se = (work * x for x in paired_ratio(limit["matmul"], limit["fwd"]))
            fraction_grad, fraction_grad_se = (3 * work * x for x in paired_ratio(limit["matmul"], limit["grad"]))
            memory = {name: harness.working_bytes(g.lower(Q, K, V).compile()) for name, g in grads.items()}
            rows.append(
                {
                    "case": f"{batch}×{heads} heads, L = {L}" if batch * heads > 1 else f"L = {L}",
                    "causal": causal,
                    "fwd ms": median_ms["rflib"],
                    "grad ms": median_ms["rflib grad"],
                    "grad / fwd": grad_over_fwd,
                    "grad / fwd s.e.": grad_over_fwd_se,
                    "FLOP grad / fwd": gradient_flop_ratio(L, d, m, d, causal, attention.default_chunk_size(L)),
                    "baseline fwd ms": median_ms["baseline"],
                    "baseline grad ms": median_ms["baseline grad"],
                    "fwd ratio": fwd_ratio,
                    "fwd ratio s.e.": fwd_se,
                    "grad ratio": grad_ratio,
                    "grad ratio s.e.": grad_se,
                    "rounds": rounds,
                    "grad MiB": memory["rflib"] / 2**20,
                    "baseline grad MiB": memory["baseline"] / 2**20,
                    "public fwd ms": median_ms.get("public"),
                    "public grad ms": median_ms.get("public grad"),
                    "fraction fwd": fraction_fwd,
                    "fraction fwd s.e.": fraction_fwd_se,
                    "fraction grad": fraction_grad,
                    "fraction grad s.e.": fraction_grad_se,
                }
            )
    flops_per_s = 2 * MATMUL_N**3 / float(np.median(matmul_seconds))
    rows.insert(0, {"case": f"matmul {MATMUL_N}³ float32", "GFLOP/s": flops_per_s / 1e9})
    rows += eager_overhead(W, eager_length, d, rounds=4 * rounds, min_seconds=min_seconds)
    return rows


def eager_overhead(W, L: int, d: int, rounds: int, min_seconds: float = 0.0) -> list[dict]:
    """Per direction: :func:`rflib.attention.linear_attention` called eagerly vs inside ``jax.jit``, (1, L, d), W an
    argument of both; and the jitted call with W a compile-time constant, for reference. Rounds in shuffled order."""
    kq, kk, kv = jax.random.split(jax.random.key(7), 3)
    Q, K, V = (0.5 * jax.random.normal(k, (1, L, d), jnp.float32) for k in (kq, kk, kv))
    rows = []
    for causal in (False, True):

        def eager(Q, K, V, W, causal=causal):
            return attention.linear_attention(Q, K, V, partial(classic.positive_features, W), causal=causal)

        jitted, folded = jax.jit(eager), jax.jit(partial(eager, W=W))

        def constant_w(Q, K, V, W, folded=folded):
            return folded(Q, K, V)

        fns = {"eager": eager, "jit": jitted, "folded": constant_w}
        samples = interleaved_samples(fns, (Q, K, V, W), rounds, order_seed=int(causal), min_seconds=min_seconds)
        overhead, se = paired_overhead(samples["eager"], samples["jit"])
        rows.append(
            {
                "case": f"eager call, L = {L}",
                "causal": causal,
                "fwd ms": 1e3 * float(np.median(samples["eager"])),
                "jit ms": 1e3 * float(np.median(samples["jit"])),
                "jit, W constant ms": 1e3 * float(np.median(samples["folded"])),
                "eager overhead": overhead,
                "eager overhead s.e.": se,
                "rounds": rounds,
            }
        )
    return rows


COLUMNS = [
    "case",
    "causal",
    "fwd ms",
    "grad ms",
    "grad / fwd",
    "grad / fwd s.e.",
    "FLOP grad / fwd",
    "baseline fwd ms",
    "baseline grad ms",
    "fwd ratio",
    "fwd ratio s.e.",
    "grad ratio",
    "grad ratio s.e.",
    "grad MiB",
    "baseline grad MiB",
    "public fwd ms",
    "public grad ms",
    "fraction fwd",
    "fraction fwd s.e.",
    "fraction grad",
    "fraction grad s.e.",
    "jit ms",
    "jit, W constant ms",
    "eager overhead",
    "eager overhead s.e.",
    "GFLOP/s",
]
FORMATS = {
    "fwd ms": ".2f",
    "grad ms": ".2f",
    "grad / fwd": ".2f",
    "grad / fwd s.e.": ".2f",
    "FLOP grad / fwd": ".2f",
    "baseline fwd ms": ".2f",
    "baseline grad ms": ".2f",
    "fwd ratio": ".2f",
    "fwd ratio s.e.": ".2f",
    "grad ratio": ".2f",
    "grad ratio s.e.": ".2f",
    "grad MiB": ".1f",
    "baseline grad MiB": ".1f",
    "public fwd ms": ".2f",
    "public grad ms": ".2f",
    "fraction fwd": ".1%",
    "fraction fwd s.e.": ".1%",
    "fraction grad": ".1%",
    "fraction grad s.e.": ".1%",
    "jit ms": ".2f",
    "jit, W constant ms": ".2f",
    "eager overhead": ".1%",
    "eager overhead s.e.": ".1%",
    "GFLOP/s": ".1f",
}
