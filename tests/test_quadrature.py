import numpy as np
import pytest

from rflib import quadrature


def test_standard_normal_rule_integrates_gaussian_moments_exactly():
    nodes, weights = quadrature.standard_normal_rule(1, 10)
    g = nodes[:, 0]
    assert weights.sum() == pytest.approx(1.0, rel=1e-14)
    assert weights @ g**2 == pytest.approx(1.0, rel=1e-13)
    assert weights @ g**4 == pytest.approx(3.0, rel=1e-13)
    assert weights @ g**6 == pytest.approx(15.0, rel=1e-13)
    assert abs(weights @ g**5) < 1e-12


def test_standard_normal_rule_gives_the_moment_generating_function():
    nodes, weights = quadrature.standard_normal_rule(2, 60)
    a = np.array([0.7, -1.3])
    assert weights @ np.exp(nodes @ a) == pytest.approx(np.exp(a @ a / 2), rel=1e-13)


def test_projection_rule_handles_dependent_directions_and_matches_the_mgf():
    rng = np.random.default_rng(0)
    x = rng.normal(size=6)
    directions = np.stack([x, 2 * x])  # rank 1
    W, weights = quadrature.projection_rule(directions, n_points=50)
    assert W.shape == (50, 6)
    assert weights @ np.exp(W @ x) == pytest.approx(np.exp(x @ x / 2), rel=1e-12)


def test_projection_rule_nodes_live_in_the_span():
    rng = np.random.default_rng(1)
    V = rng.normal(size=(2, 5))
    W, _ = quadrature.projection_rule(V, n_points=7)
    residual = W - W @ np.linalg.pinv(V) @ V
    assert np.max(np.abs(residual)) < 1e-12


def test_projection_rule_rejects_non_finite_directions():
    with pytest.raises(ValueError, match="directions"):
        quadrature.projection_rule(np.array([[np.nan, 1.0]]))
