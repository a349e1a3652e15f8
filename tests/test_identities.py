"""rflib.experiments.identities: the quadrature checks of notebooks 00 and 01 (HRF Lemmas 2.2–2.4, 2.3)."""

import math

import jax
import numpy as np
import pytest

from rflib import features, moments
from rflib.experiments import identities
from rflib.features import classic

MAPS = {"trig": features.trig, "positive": features.positive, "hyperbolic": features.hyperbolic}
LOG_MSE = {
    "trig": moments.classic.log_mse_trig,
    "positive": moments.classic.log_mse_positive,
    "hyperbolic": moments.classic.log_mse_hyperbolic,
}


def test_classic_features_are_unbiased_and_lemma_2_2_is_exact_by_quadrature():
    rows = identities.moments_vs_quadrature(MAPS, LOG_MSE, (0.5, 1.2), (0.3, 2.9), 4, n_points=80)
    assert len(rows) == 2 * 2 * 3 and [row[:3] for row in rows[:3]] == [(n, 0.5, 0.3) for n in MAPS]
    assert max(abs(row[3]) for row in rows) < 1e-10
    assert max(abs(row[4]) for row in rows) < 1e-10
    with pytest.raises(ValueError, match="same maps"):
        identities.moments_vs_quadrature(MAPS, {"trig": LOG_MSE["trig"]}, (0.5,), (0.3,), 4)


def test_complex_exp_special_cases_have_the_positive_and_trig_single_feature_mses():
    x, y = np.array([0.5, -0.3]), np.array([0.2, 0.6])
    rows = identities.complex_exp_vs_quadrature({"I": np.eye(2) + 0j, "iI": 1j * np.eye(2)}, x, y, n_points=80)
    (_, bias_i, mse_i, closed_i, dev_i), (_, bias_ii, mse_ii, closed_ii, dev_ii) = rows
    assert max(bias_i, bias_ii) < 1e-10 and max(dev_i, dev_ii) < 1e-9
    # A = I is the (non-antithetic) positive estimator, A = iI the trigonometric one (HRF §2.3)
    assert mse_i == pytest.approx(math.exp(LOG_MSE["positive"](x, y, 1)), rel=1e-10)
    assert mse_ii == pytest.approx(math.exp(LOG_MSE["trig"](x, y, 1)), rel=1e-10)
    with pytest.raises(ValueError, match="one shape"):
        identities.complex_exp_vs_quadrature({"I": np.eye(2)}, x, np.ones(3))


def test_max_abs_gap_of_trig_and_positive_with_zero_projections_is_2_sinh_of_half_the_squared_norms(key):
    X, Y = 0.4 * jax.random.normal(key, (3, 4)), 0.3 * jax.random.normal(jax.random.fold_in(key, 1), (2, 4))
    W = np.zeros((5, 4))  # cos 0 = 1, sin 0 = 0, e⁰ = 1: trig gives e^{s/2}, positive e^{−s/2}, s = ‖x‖² + ‖y‖²
    s = np.sum(np.asarray(X) ** 2, 1)[:, None] + np.sum(np.asarray(Y) ** 2, 1)[None, :]
    gap = identities.max_abs_gap(classic.trig_estimator(W), classic.positive_estimator(W), X, Y)
    assert gap == pytest.approx(float(np.max(2 * np.sinh(s / 2))), rel=1e-12)
    assert identities.max_abs_gap(classic.trig_estimator(W), classic.trig_estimator(W), X, Y) == 0.0


def test_hybrid_feature_maps_equal_eq_8_for_every_lambda_and_have_dimension_4m_n_plus_1(key):
    gaps, dim = identities.hybrid_feature_map_gaps(lambda t: jax.random.fold_in(key, t), 2, d=5, m=3, n=2)
    assert len(gaps) == 4 and max(gaps.values()) < 1e-10
    assert dim == 4 * 3 * (2 + 1)
    with pytest.raises(ValueError, match="trials"):
        identities.hybrid_feature_map_gaps(lambda t: key, 0)
