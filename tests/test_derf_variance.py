"""FAVOR#'s variance studies (rflib.experiments.derf_variance): the §4 orderings on random set pairs, the Fig 2
curves against the closed forms of PosRF and TrigRF, and the gaps read off the curves."""

import numpy as np
import pytest

from rflib.experiments import derf_variance as dv
from rflib.features import dense_exp as de


def test_objective_orderings_obey_the_inclusions_of_section_4():
    rows = dv.objective_orderings(np.random.default_rng(3), trials=4, d=5, n_x=12, n_y=15)
    assert len(rows) == 4 and all(set(r) == set(de.METHODS) for r in rows)
    assert all(dv.ordering_holds(r) for r in rows)
    assert all(r["positive"] > r["gerf"] for r in rows)  # anisotropic, shifted sets: GERF's fit strictly helps
    again = dv.objective_orderings(np.random.default_rng(3), trials=4, d=5, n_x=12, n_y=15)
    assert rows == again


def test_ordering_holds_detects_each_violated_inequality():
    ok = {"aderf": 1.0, "saderf": 2.0, "gerf": 3.0, "positive": 4.0, "sderf": 0.5}
    assert dv.ordering_holds(ok)
    assert dv.ordering_holds(ok | {"saderf": 1.0 - 5e-11})  # within the round-off slack
    assert not dv.ordering_holds(ok | {"aderf": 2.1})
    assert not dv.ordering_holds(ok | {"gerf": 4.5})
    assert not dv.ordering_holds(ok | {"sderf": 3.1})  # SDERF above GERF
    assert dv.ordering_holds(ok | {"sderf": 1.5})  # ADERF vs SDERF: no fixed order
    with pytest.raises(ValueError, match="missing \\['sderf'\\]"):
        dv.ordering_holds({k: v for k, v in ok.items() if k != "sderf"})


def test_regime_curves_equal_the_closed_forms_of_posrf_and_trigrf():
    """PosRF (A = 0, B = I): log(Var/K²) = log expm1(‖x + y‖²); TrigRF: log(e^v + ½e^{−v} − 1), v = ‖x − y‖².
    The normal regime draws 𝒳 then 𝒴 as σ·N(0, I) from rng_for(regime, σ index, repetition)."""
    sigmas, L, d, n_sets = (0.3, 0.6), 20, 4, 3
    calls = []

    def rng_for(regime, si, rep):
        calls.append((regime, si, rep))
        return np.random.default_rng([si, rep])

    curves = dv.regime_curves(
        rng_for, ["normal"], ("trig", "positive"), sigmas, n_sets=n_sets, L=L, d=d, progress=False
    )
    assert calls == [("normal", si, rep) for si in range(2) for rep in range(n_sets)]
    for si, sigma in enumerate(sigmas):
        pos, trig = [], []
        for rep in range(n_sets):
            rng = np.random.default_rng([si, rep])
            X, Y = sigma * rng.normal(size=(L, d)), sigma * rng.normal(size=(L, d))
            s = np.sum((X[:, None] + Y[None]) ** 2, -1)
            v = np.sum((X[:, None] - Y[None]) ** 2, -1)
            pos.append(np.mean(np.log(np.expm1(s))))
            trig.append(np.mean(np.log(np.exp(v) + 0.5 * np.exp(-v) - 1)))
        assert curves["normal", "positive"][si] == pytest.approx(np.mean(pos), rel=1e-10)
        assert curves["normal", "trig"][si] == pytest.approx(np.mean(trig), rel=1e-10)
    with pytest.raises(ValueError, match="regimes must be one of"):
        dv.regime_curves(rng_for, ["uniform"], ("gerf",), sigmas, n_sets=1, L=L, d=d, progress=False)
    with pytest.raises(ValueError, match="methods must be one of"):
        dv.regime_curves(rng_for, ["normal"], ("favor",), sigmas, n_sets=1, L=L, d=d, progress=False)


def test_max_gap_and_worst_excess_read_the_curves_pointwise():
    curves = {
        ("r", "gerf"): np.array([1.0, 3.0, 2.0]),
        ("r", "sderf"): np.array([0.5, 0.0, 2.5]),
        ("r", "aderf"): np.array([0.9, 0.1, 1.0]),
        ("r", "trig"): np.array([2.0, 2.0, 2.0]),
    }
    assert dv.max_gap(curves, "r", "sderf") == 3.0  # GERF − SDERF = (0.5, 3, −0.5)
    assert dv.max_gap(curves, "r", "aderf") == 2.9
    assert dv.max_gap(curves, "r", "gerf", reference="trig") == 1.0
    # SDERF − min(GERF, ADERF) = (−0.4, −0.1, 1.5); with TrigRF as well the last point is SDERF − 1 = 1.5
    assert dv.worst_excess(curves, "r", ("gerf", "aderf")) == pytest.approx(1.5)
    assert dv.worst_excess(curves, "r", ("gerf",)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no curve for regime 'r' and method 'saderf'"):
        dv.max_gap(curves, "r", "saderf")
    with pytest.raises(ValueError, match="at least one method"):
        dv.worst_excess(curves, "r", ())
