"""FAVOR#'s variance studies (§4 inclusions, §5.1 Figs 1–2): the objective orderings on random anisotropic set
pairs, the relative-variance curves over regimes and input scales σ, and the gaps read off those curves.

Everything is closed form (``rflib.moments.dense_exp``); the only randomness is the sets, drawn from the numpy
generators the caller passes, so a notebook names every stream it uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rflib import _checks
from rflib.experiments import datasets
from rflib.experiments.progress_bars import bar
from rflib.features import dense_exp
from rflib.moments import dense_exp as moments

CurveKey = tuple[str, str]
"""(regime, method): the key of one relative-variance curve."""


def objective_orderings(
    rng: np.random.Generator, *, trials: int = 6, d: int = 8, n_x: int = 40, n_y: int = 50
) -> list[dict[str, float]]:
    """Optimal shifted log-variances L̄* (eq 14) of every family of ``dense_exp.METHODS`` on ``trials`` random
    anisotropic set pairs (§4, the inclusions behind Fig 1's Venn diagram); fits with no ridge (ε = 0).

    Per trial, from ``rng`` in this order: 𝒳 = (G₁ · s₁) Q + c₁ with G₁ (n_x, d) standard normal, per-coordinate
    scales s₁ ~ Unif[0.1, 1]^d, Q the Q factor of a (d, d) standard normal matrix and a shift c₁ ~ N(0, 0.3²)^d;
    then 𝒴 = G₂ · s₂ + c₂ with G₂ (n_y, d) (not rotated).

    Returns:
      One dict per trial, method → L̄*(θ*) (float).
    """
    trials = _checks.positive_int("trials", trials)
    d_t = _checks.positive_int("d", d)
    n_x = _checks.positive_int("n_x", n_x)
    n_y = _checks.positive_int("n_y", n_y)
    rows = []
    for _ in range(trials):
        Xt = rng.normal(size=(n_x, d_t)) * rng.uniform(0.1, 1.0, d_t) @ np.linalg.qr(rng.normal(size=(d_t, d_t)))[
            0
        ] + rng.normal(0, 0.3, d_t)
        Yt = rng.normal(size=(n_y, d_t)) * rng.uniform(0.1, 1.0, d_t) + rng.normal(0, 0.3, d_t)
        st = dense_exp.set_statistics(Xt, Yt)
        rows.append(
            {m: float(moments.shifted_log_variance(dense_exp.fit(m, Xt, Yt, eps=0.0), st)) for m in dense_exp.METHODS}
        )
    return rows


def ordering_holds(v: dict[str, float]) -> bool:
    """Whether one row of :func:`objective_orderings` obeys the provable orders L̄*_ADE ≤ L̄*_SADE ≤ L̄*_GE ≤ L̄_Pos
    and L̄*_SDE ≤ L̄*_GE (§4; Lemma A.1), each up to a round-off slack of 10⁻¹⁰ per step."""
    missing = sorted(set(dense_exp.METHODS) - set(v))
    if missing:
        raise ValueError(f"v needs a value for every method of dense_exp.METHODS, missing {missing}")
    ok = v["aderf"] <= v["saderf"] + 1e-10 <= v["gerf"] + 2e-10 <= v["positive"] + 3e-10
    return bool(ok and v["sderf"] <= v["gerf"] + 1e-10)


def regime_curves(
    rng_for: Callable[..., np.random.Generator],
    regimes: Sequence[str],
    methods: Sequence[str],
    sigmas: Sequence[float],
    *,
    n_sets: int,
    L: int,
    mnist_pool=None,
    d: int = 64,
    progress: bool = False,
) -> dict[CurveKey, np.ndarray]:
    """FAVOR# Figs 1 (bottom) and 2 (§5.1, App. B.1): mean log(Var/K²) of one random feature (M = 1) per regime,
    method and σ, each method fitted to each pair of sets.

    For every regime, σ index ``si`` and repetition ``rep < n_sets``: the sets 𝒳, 𝒴 (each (L, d)) are
    ``datasets.variance_regime_sets(rng_for(regime, si, rep), regime, σ, L, mnist_pool=mnist_pool, d=d)``; each
    method's value is the mean over the L² pairs of ``moments.dense_exp.method_log_relative_variance``; the curve
    is the mean of those values over the ``n_sets`` repetitions.

    Args:
      rng_for: (regime, σ index, repetition) → numpy generator of that pair of sets.
      regimes: names from ``datasets.VARIANCE_REGIMES``.
      methods: ``"trig"`` and/or names from ``dense_exp.METHODS``.
      sigmas: the σ grid (n_σ,).
      n_sets: pairs of sets per (regime, σ); L: points per set; mnist_pool, d: see ``variance_regime_sets``.
      progress: show a bar over σ for each regime.

    Returns:
      (regime, method) → (n_σ,) curve.
    """
    n_sets = _checks.positive_int("n_sets", n_sets)
    for regime in regimes:
        _checks.one_of("regimes", regime, datasets.VARIANCE_REGIMES)
    for m in methods:
        _checks.one_of("methods", m, ("trig", *dense_exp.METHODS))
    if len(sigmas) == 0:
        raise ValueError("sigmas must be a non-empty grid of input scales")
    curves = {(r, m): np.zeros(len(sigmas)) for r in regimes for m in methods}
    for regime in regimes:
        for si, sigma in enumerate(bar(sigmas, regime, progress)):
            for rep in range(n_sets):
                set_rng = rng_for(regime, si, rep)
                X_set, Y_set = datasets.variance_regime_sets(set_rng, regime, sigma, L, mnist_pool=mnist_pool, d=d)
                for m in methods:
                    curves[regime, m][si] += float(
                        np.mean(np.asarray(moments.method_log_relative_variance(m, X_set, Y_set)))
                    )
            for m in methods:
                curves[regime, m][si] /= n_sets
    return curves


def _curve(curves: dict[CurveKey, np.ndarray], regime: str, method: str) -> np.ndarray:
    if (regime, method) not in curves:
        raise ValueError(f"curves has no curve for regime {regime!r} and method {method!r}")
    return curves[regime, method]


def max_gap(curves: dict[CurveKey, np.ndarray], regime: str, better: str, *, reference: str = "gerf") -> float:
    """max over σ of (``reference`` − ``better``) in nats: how far ``better``'s mean log relative variance drops
    below the reference's (GERF, the previous best) at its best σ. ``curves`` from :func:`regime_curves`."""
    return float(np.max(_curve(curves, regime, reference) - _curve(curves, regime, better)))


def worst_excess(
    curves: dict[CurveKey, np.ndarray], regime: str, others: Sequence[str], *, method: str = "sderf"
) -> float:
    """max over σ of ``method``'s curve minus the pointwise best (lowest) of ``others``: ≤ 0 when ``method`` is
    best at every σ ("SDERF outperforms or is on par with the other methods in all setups", §5.1)."""
    if len(others) == 0:
        raise ValueError("others must name at least one method to compare with")
    best_other = np.min([_curve(curves, regime, m) for m in others], axis=0)
    return float(np.max(_curve(curves, regime, method) - best_other))
