"""Suite 2: exact softmax attention vs linear attention over sequence length L, bidirectional and causal.

The exact peer is ``jax.nn.dot_product_attention`` (XLA's implementation; ``scale=1`` since rflib's convention has
no implicit 1/√d — inputs are scaled by d^{-1/4}). The linear methods are rflib's FAVOR+ (positive features,
orthogonal W), FAVOR# (SDERF fitted per sequence; the fit is included) and HRF (the angular hybrid estimator, Ψ₁ for
queries and Ψ₂ for keys), all with m = 256 projections (HRF: 2m = 512 features from 2m' + n = 67 projections). One
head, d = 64, float32. Wall time is the median of jitted calls (compile excluded); memory is XLA's compiled buffer
plan for temporaries + output (:func:`benchmarks.harness.working_bytes`), read without running.

Run:  .venv/bin/python -m benchmarks --suite attention_scaling
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from benchmarks import harness
from rflib import attention, projections
from rflib.experiments.progress_bars import bar
from rflib.features import classic

METHODS = ("exact", "FAVOR+", "FAVOR#", "HRF")


def _attention_fns(d: int, m: int, key) -> dict:
    k1, k2 = jax.random.split(key)
    W = projections.orthogonal(k1, m, d).astype(jnp.float32)
    hrf = harness.angular_hrf(k2, m, d)

    def exact(Q, K, V, causal):
        out = jax.nn.dot_product_attention(Q[:, :, None], K[:, :, None], V[:, :, None], scale=1.0, is_causal=causal)
        return out[:, :, 0]

    return {
        "exact": exact,
        "FAVOR+": lambda Q, K, V, causal: attention.linear_attention(
            Q, K, V, partial(classic.positive_features, W), causal=causal
        ),
        "FAVOR#": lambda Q, K, V, causal: attention.favor_sharp_attention(Q, K, V, W, method="sderf", causal=causal),
        "HRF": lambda Q, K, V, causal: attention.linear_attention(Q, K, V, hrf, causal=causal),
    }


def run(
    lengths=(256, 512, 1024, 2048, 4096, 8192, 16384, 32768),
    d: int = 64,
    m: int = 256,
    repeats: int = 5,
    methods=METHODS,
    exact_max_length: int = 32768,
    seed: int = 0,
    *,
    progress: bool = False,
) -> list[dict]:
    """One row per (method, causal, L): median ms, working memory (bytes) and whether the output is finite.
    Exact attention above ``exact_max_length`` is planned (memory) but not run (ms None)."""
    key = jax.random.key(seed)
    fns = _attention_fns(d, m, jax.random.fold_in(key, 1))
    rows = []
    for L in bar(lengths, "attention: L", progress, leave=False):
        kq, kk, kv = jax.random.split(jax.random.fold_in(key, L), 3)
        Q, K = (d**-0.25 * jax.random.normal(k, (1, L, d), jnp.float32) for k in (kq, kk))
        V = jax.random.normal(kv, (1, L, d), jnp.float32)
        for causal in (False, True):
            for method in methods:
                fn = harness.compiled(partial(fns[method], causal=causal), Q, K, V)
                memory = harness.working_bytes(fn)
                row = {"method": method, "causal": causal, "L": L, "memory_bytes": memory, "ms": None}
                if method != "exact" or L <= exact_max_length:
                    out = fn(Q, K, V)
                    row["finite"] = bool(jnp.all(jnp.isfinite(out)))
                    calls = max(1, min(repeats, int(repeats * 4096 / L)))
                    row["ms"] = 1e3 * harness.seconds(fn, Q, K, V, repeats=calls, min_seconds=0.0)
                    del out
                rows.append(row)
    return rows


def speedups(rows: list[dict]) -> list[dict]:
    """exact ms / linear ms per (method, causal, L) where both were run."""
    exact = {(r["causal"], r["L"]): r["ms"] for r in rows if r["method"] == "exact" and r["ms"] is not None}
    return [
        {"method": r["method"], "causal": r["causal"], "L": r["L"], "speedup": exact[r["causal"], r["L"]] / r["ms"]}
        for r in rows
        if r["method"] != "exact" and (r["causal"], r["L"]) in exact and r["ms"]
    ]


COLUMNS = ["method", "causal", "L", "ms", "memory_MiB", "finite"]
FORMATS = {"ms": ".2f", "memory_MiB": ".1f"}


def with_mib(rows: list[dict]) -> list[dict]:
    """Rows with memory in MiB for display."""
    return [{**r, "memory_MiB": None if r["memory_bytes"] is None else r["memory_bytes"] / 2**20} for r in rows]


def time_curves(rows: list[dict], causal: bool) -> dict[str, tuple[list, list]]:
    """{method: (L values, ms)} of the runs with the given ``causal`` flag that were timed, one entry per method of
    :data:`METHODS` in order (empty where none was timed)."""
    curves = {}
    for method in METHODS:
        sel = [r for r in rows if r["method"] == method and r["causal"] == causal and r["ms"] is not None]
        curves[method] = ([r["L"] for r in sel], [r["ms"] for r in sel])
    return curves


def memory_curves(rows: list[dict]) -> dict[str, tuple[list, list]]:
    """{method: (L values, compiled working memory in MiB)} of the causal rows, per method of :data:`METHODS`."""
    curves = {}
    for method in METHODS:
        sel = [r for r in rows if r["method"] == method and r["causal"]]
        curves[method] = ([r["L"] for r in sel], [r["memory_bytes"] / 2**20 for r in sel])
    return curves


def crossovers(rows: list[dict], at_length: int = 16384) -> tuple[dict, dict]:
    """Per linear method and direction ("FAVOR+, causal", ...): the L from which it beats exact attention
    (:func:`harness.crossover` of exact/linear time ratios, None if never) and its speed-up at L = ``at_length``
    rounded to 0.1 (None where not measured). Returns (crossovers, speed-ups)."""
    speed = speedups(rows)
    found, at = {}, {}
    for method in METHODS[1:]:
        for causal in (False, True):
            sel = [s for s in speed if s["method"] == method and s["causal"] == causal]
            label = f"{method}, {'causal' if causal else 'bidirectional'}"
            found[label] = harness.crossover([s["L"] for s in sel], [1 / s["speedup"] for s in sel])
            at[label] = next((round(s["speedup"], 1) for s in sel if s["L"] == at_length), None)
    return found, at


def memory_slopes(rows: list[dict], min_length: int = 2048) -> dict[str, float]:
    """Per method: the log–log slope of causal working memory against L over L ≥ ``min_length`` (rounded to 0.01;
    1 for O(L), 2 for O(L²)); methods with fewer than two such rows are left out."""
    slopes = {}
    for method in METHODS:
        sel = [r for r in rows if r["method"] == method and r["causal"] and r["L"] >= min_length]
        if len(sel) >= 2:
            slopes[method] = round(harness.loglog_slope([r["L"] for r in sel], [r["memory_bytes"] for r in sel]), 2)
    return slopes
