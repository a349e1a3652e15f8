"""HRF §4.1 studies (rflib.experiments.hrf_studies): Figs 2/5 on the sphere, Table 1's UCI protocol, Fig 6's HRF-C
study and Fig 4's FLOP accounting, against closed forms, exact values and Monte Carlo with variance-derived bounds."""

import math

import jax
import numpy as np
import pytest

from rflib import kernels, moments, sphere
from rflib.experiments import datasets, hrf_studies, simulation
from rflib.features import hybrid


def test_sphere_methods_carry_the_closed_forms_of_lemma_2_2_eq_47_and_theorem_f_1():
    r, theta = 1.25, np.linspace(0.0, np.pi, 9)
    methods = hrf_studies.sphere_methods(r, M=128, m=16, n=8)
    assert list(methods) == [
        "trig (M = 128)",
        "FAVOR+ (M = 128)",
        "angular hybrid (16, 8)",
        "Gaussian hybrid (16, 8), σ = 1/r",
    ]
    trig, favor, angular, gaussian = methods.values()
    np.testing.assert_array_equal(trig.log_mse(theta), sphere.log_mse_trig(theta, r, 128))
    np.testing.assert_array_equal(favor.log_mse(theta), sphere.log_mse_hyperbolic(theta, r, 128))
    np.testing.assert_array_equal(angular.log_mse(theta), sphere.log_mse_angular_hybrid(theta, r, 16, 8))
    np.testing.assert_array_equal(gaussian.log_mse(theta), sphere.log_mse_gaussian_hybrid(theta, r, 16, 8, sigma=1 / r))
    assert angular.shapes == {"W_pos": (16, 2), "W_trig": (16, 2), "T": (8, 2)} and trig.shapes == {"W": (128, 2)}
    assert "σ = 2/r" in list(hrf_studies.sphere_methods(r, M=8, m=2, n=4, sigma_r=2.0))[3]
    with pytest.raises(ValueError, match="M must be a positive integer"):
        hrf_studies.sphere_methods(r, M=0, m=2, n=4)


@pytest.mark.parametrize("r", [0.5, 1.5])
def test_exact_relative_error_of_trig_peaks_at_pi_with_lemma_3_4s_value(r):
    """Lemma 3.4: max_θ ε(trig) = W(r)/√(2m) with W(r) = e^{2r²}(1 − e^{−4r²}), attained at θ = π."""
    theta = np.linspace(0.0, np.pi, 181)
    eps = hrf_studies.exact_relative_error(hrf_studies.sphere_methods(r, M=32, m=4, n=8)["trig (M = 32)"], theta, r)
    assert np.argmax(eps) == theta.size - 1
    assert eps[-1] == pytest.approx(math.exp(2 * r**2) * (1 - math.exp(-4 * r**2)) / math.sqrt(64), rel=1e-12)


def test_pointwise_errors_agree_with_the_closed_form_within_five_standard_errors():
    r, thetas = 1.0, np.array([0.3, 1.5, 2.8])
    method = hrf_studies.sphere_methods(r, M=8, m=2, n=4)["FAVOR+ (M = 8)"]
    out = hrf_studies.pointwise_errors(
        lambda i: jax.random.fold_in(jax.random.key(11), i), thetas, r, method.make, method.shapes, 4000
    )
    exact = hrf_studies.exact_relative_error(method, thetas, r)
    assert np.all(np.abs(out["rel_err"] - exact) < 5 * out["se_rel"])
    assert np.all(out["q05"] <= out["q95"])
    x, y = kernels.pair_at_angle(thetas[1], r)  # angle i uses key_for(i)
    est = simulation.pointwise_estimates(
        jax.random.fold_in(jax.random.key(11), 1), x, y, method.make, method.shapes, 4000
    )
    assert out["q95"][1] == np.quantile(est, 0.95)


def test_random_pair_at_angle_is_a_unit_pair_at_exactly_that_angle():
    x, y = hrf_studies.random_pair_at_angle(np.random.default_rng(3), 64, 0.7)
    assert np.linalg.norm(x) == pytest.approx(1.0, abs=1e-14) and np.linalg.norm(y) == pytest.approx(1.0, abs=1e-14)
    assert float(x @ y) == pytest.approx(math.cos(0.7), abs=1e-14)
    x2, _ = hrf_studies.random_pair_at_angle(np.random.default_rng(3), 64, 0.7)
    np.testing.assert_array_equal(x, x2)


@pytest.mark.parametrize("name", ["FAVOR+ (M = 8)", "angular hybrid (2, 4)"])
def test_speed_trick_reduced_draws_match_full_draws_within_five_standard_errors(name):
    """iid projections see a pair only through its Gram matrix: the 2-D reduction of a pair in ℝ¹⁶
    gives estimates of the same law, so both z-scores are within 5."""
    x, y = hrf_studies.random_pair_at_angle(np.random.default_rng(5), 16, math.pi / 4)
    make, shapes, _ = hrf_studies.sphere_methods(1.0, M=8, m=2, n=4)[name]
    z_mean, z_mse = hrf_studies.speed_trick_z_scores(jax.random.key(1), jax.random.key(2), x, y, make, shapes, 3000)
    assert abs(z_mean) < 5 and abs(z_mse) < 5


@pytest.mark.parametrize("d", [4, 13, 50])
def test_projection_flop_matched_m_is_the_largest_m_within_m_times_d(d):
    M, n = 512, 8
    m = hrf_studies.projection_flop_matched_m(M, n, d)
    assert hybrid.angular_hybrid_cost(m, n, d)["total_flops"] <= M * d
    assert hybrid.angular_hybrid_cost(m + 1, n, d)["total_flops"] > M * d


def test_uci_study_monte_carlo_matches_the_closed_forms_on_the_same_pairs():
    """The iid trig reference's Monte Carlo MSE agrees with Lemma 2.2 on the pairs the study drew: with R draws
    the sum of M bounded cosines is nearly Gaussian, so the MSE has relative standard error ≈ √(2/R)."""
    Z = datasets.standardize_to_sphere(np.random.default_rng(0).normal(size=(40, 4)))
    reps, n_pairs, draws, M, m, n = 2, 6, 3000, 16, 4, 2
    names = list(hrf_studies.uci_methods(4, M=M, m=m, n=n))
    out = hrf_studies.uci_mse_study(
        Z,
        pair_rng=lambda rep: np.random.default_rng([7, rep]),
        draw_key=lambda rep, name: jax.random.fold_in(jax.random.key(rep), names.index(name)),
        reps=reps,
        n_pairs=n_pairs,
        draws=draws,
        M=M,
        m=m,
        n=n,
    )
    assert set(out["mse"]) == set(hrf_studies.uci_methods(4, M=M, m=m, n=n))
    assert out["m_alt"] == hrf_studies.projection_flop_matched_m(M, n, 4)
    closed = []
    for rep in range(reps):  # the study's pairs, redrawn from the same generators
        rng = np.random.default_rng([7, rep])
        i = rng.integers(0, 40, size=n_pairs)
        j = (i + rng.integers(1, 40, size=n_pairs)) % 40
        assert np.all(i != j)
        closed.append(float(np.mean(moments.classic.mse_trig(Z[i], Z[j], M))))
    assert out["closed_form"]["iid trig"] == pytest.approx(1e3 * np.mean(closed), rel=1e-12)
    mc = out["mse"]["iid trig (reference)"][0]
    orf = out["closed_form"]["ORF-reg"]  # exact, by quadrature: the Monte Carlo agrees within its error
    assert abs(out["mse"]["ORF-reg"][0] - orf) < 5 * math.sqrt(2 / draws) * orf
    assert abs(mc - out["closed_form"]["iid trig"]) < 5 * math.sqrt(2 / draws) * out["closed_form"]["iid trig"]
    assert out["closed_form_per_rep"]["iid trig"] == pytest.approx([1e3 * c for c in closed], rel=1e-12)
    assert np.mean(out["mse_per_rep"]["iid trig (reference)"]) == pytest.approx(mc, rel=1e-12)
    # an unbiased estimator's squared-bias estimate has mean 0 and s.d. ≈ √2·Var/draws per pair
    assert abs(out["squared_bias"]["iid trig (reference)"][0]) < 5 * math.sqrt(2) * mc / draws
    assert np.mean(out["squared_bias_per_rep"]["iid trig (reference)"]) == pytest.approx(
        out["squared_bias"]["iid trig (reference)"][0], rel=1e-12
    )


def test_uci_fixed_projection_mse_is_the_exact_squared_error_of_the_deterministic_trig_estimator():
    """With a fixed W the trig estimate is exp((‖x‖² + ‖y‖²)/2) · mean_i cos ω_iᵀ(x − y) (HRF eq 2), so the MSE on
    the study's pairs is computed exactly; a W of the wrong width is refused."""
    Z = datasets.standardize_to_sphere(np.random.default_rng(1).normal(size=(30, 3)))
    W = np.random.default_rng(2).normal(size=(5, 3))
    mse_per_rep = hrf_studies.uci_fixed_projection_mse(
        Z, W, pair_rng=lambda rep: np.random.default_rng([3, rep]), reps=3, n_pairs=7
    )
    per_rep = []
    for rep in range(3):
        rng = np.random.default_rng([3, rep])
        i = rng.integers(0, 30, size=7)
        j = (i + rng.integers(1, 30, size=7)) % 30
        x, y = Z[i], Z[j]
        estimate = np.exp((np.sum(x**2, 1) + np.sum(y**2, 1)) / 2) * np.cos((x - y) @ W.T).mean(axis=1)
        per_rep.append(np.mean((estimate - np.exp(np.sum(x * y, 1))) ** 2))
    assert mse_per_rep == pytest.approx([1e3 * x for x in per_rep], rel=1e-12)
    with pytest.raises(ValueError, match="W has 4 columns but Z has 3"):
        hrf_studies.uci_fixed_projection_mse(Z, np.ones((5, 4)), pair_rng=np.random.default_rng, reps=1, n_pairs=2)


def test_hrfc_study_trig_and_favor_columns_are_unbiased_mse_estimates():
    """Lemma 2.2: averaged over trials, the trig and FAVOR+ MSEs on the evaluation pairs approach the closed-form
    mean MSE of those pairs, within 5 standard errors over trials."""
    data = datasets.clustered_queries_keys(
        jax.random.key(4), [0.08, 0.05, 0.04, 0.03], d=10, points_per_cluster=40, centre_norm=10.0, same_sign=2
    )
    ms, trials, n_eval = (6, 12), 100, 15
    res = hrf_studies.hrfc_mse_study(
        data.X,
        data.Y,
        eval_rng=np.random.default_rng(9),
        draw_key=lambda m, t: jax.random.fold_in(jax.random.key(m), t),
        ms=ms,
        trials=trials,
        n_eval=n_eval,
        kmeans_seed=0,
    )
    assert set(res) == set(hrf_studies.CLUSTER_METHODS) and all(v.shape == (2, trials) for v in res.values())
    rng = np.random.default_rng(9)  # the study's evaluation points
    X = data.X[rng.choice(data.X.shape[0], n_eval, replace=False)][:, None]
    Y = data.Y[rng.choice(data.Y.shape[0], n_eval, replace=False)][None]
    for name, kind in (("trig", "trig"), ("FAVOR+", "hyperbolic")):
        for mi, m in enumerate(ms):
            closed = float(np.mean(np.exp(np.asarray(moments.classic.log_mse(X, Y, m, kind=kind)))))
            runs = res[name][mi]
            assert abs(runs.mean() - closed) < 5 * runs.std() / math.sqrt(trials), (name, m)
    assert np.all(res["HRF-C (eq 88, clipped)"] > 0)


def test_hrfc_study_validates_its_arguments():
    X = np.ones((4, 3))
    with pytest.raises(ValueError, match="n_eval must be an integer in"):
        hrf_studies.hrfc_mse_study(X, X, eval_rng=None, draw_key=None, ms=(2,), trials=1, n_eval=5, kmeans_seed=0)
    with pytest.raises(ValueError, match="same dimension"):
        hrf_studies.hrfc_mse_study(
            X, np.ones((4, 2)), eval_rng=None, draw_key=None, ms=(2,), trials=1, n_eval=2, kmeans_seed=0
        )


def test_attention_flops_of_fig_4_worked_by_hand():
    """d = 16: hybrid (8, 8): F = 4·8·9 = 288, map 16·(2·8 + 8) + 2·16·8 = 640, attention 2·288·16 = 9216;
    FAVOR+ (256): F = 512, map 16·256 = 4096, attention 2·512·16 = 16384."""
    out = hrf_studies.attention_flops(16, m=8, n=8, favor_projections=256)
    assert out["angular hybrid (8, 8)"] == {
        "features": 288,
        "feature_flops": 640,
        "attention_flops": 9216,
        "total": 9856,
    }
    assert out["FAVOR+ (256)"] == {"features": 512, "feature_flops": 4096, "attention_flops": 16384, "total": 20480}
    with pytest.raises(ValueError, match="d_qk"):
        hrf_studies.attention_flops(0)


def test_hybrid_trig_floor_bounds_the_exact_mse_ratio_at_any_norms():
    """MSE(angular hybrid (m, n)) / MSE(iid trig, M) ≥ hybrid_trig_floor at every pair (Theorem D.1 vs Lemma 2.2),
    whatever the norms, and the floor crosses 1 exactly at hybrid_can_beat_trig_above."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(400, 6)), rng.normal(size=(400, 6))
    X *= rng.uniform(0.2, 1.5, size=(400, 1))
    Y *= rng.uniform(0.2, 1.5, size=(400, 1))
    M, m, n = 512, 64, 8
    ratio = np.exp(np.asarray(moments.hybrid.log_mse_angular_hybrid(X, Y, m, n))) / moments.classic.mse_trig(X, Y, M)
    theta = np.arccos(np.sum(X * Y, 1) / np.linalg.norm(X, axis=1) / np.linalg.norm(Y, axis=1))
    assert np.all(ratio >= hrf_studies.hybrid_trig_floor(theta, M=M, m=m, n=n) * (1 - 1e-12))
    star = hrf_studies.hybrid_can_beat_trig_above(M=M, m=m, n=n)
    assert np.degrees(star) == pytest.approx(123.619, abs=1e-3)
    assert hrf_studies.hybrid_trig_floor(star, M=M, m=m, n=n) == pytest.approx(1.0, rel=1e-12)
    assert hrf_studies.hybrid_can_beat_trig_above(M=M, m=M, n=n) == 0.0  # unmatched: no angle is excluded


def test_uci_exact_mse_matches_the_closed_forms_on_its_pairs():
    Z = hrf_studies.TABLE1_PREPROCESSINGS["z-score, unit norm (ours)"](np.random.default_rng(1).normal(size=(50, 5)))
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-12)
    out = hrf_studies.uci_exact_mse(Z, rng=np.random.default_rng(2), n_pairs=30, M=64, m=8, n=8)
    rng = np.random.default_rng(2)
    i = rng.integers(0, 50, size=30)
    j = (i + rng.integers(1, 50, size=30)) % 50
    assert out["iid trig"] == pytest.approx(1e3 * float(np.mean(moments.classic.mse_trig(Z[i], Z[j], 64))), rel=1e-12)
    orf = np.exp(moments.classic.log_mse_trig_orthogonal(Z[i], Z[j], 64))
    assert out["ORF-reg"] == pytest.approx(1e3 * float(np.mean(orf)), rel=1e-12) and out["ORF-reg"] < out["iid trig"]
    assert 0.0 <= out["beyond"] <= 1.0 and out["floor"] > 0


def test_radius_for_orf_mse_finds_the_norm_that_gives_the_target():
    """At the returned radius the exact ORF-reg MSE on the same pairs is the target; targets beyond the bracket, and
    points not on the unit sphere, are refused."""
    Z = datasets.standardize_to_sphere(np.random.default_rng(4).normal(size=(60, 6)), radius=1.0)
    r = hrf_studies.radius_for_orf_mse(Z, 2.0, rng_seed=5, n_pairs=40, M=64)
    at_r = hrf_studies.uci_exact_mse(r * Z, rng=np.random.default_rng(5), n_pairs=40, M=64, m=8, n=8)["ORF-reg"]
    assert at_r == pytest.approx(2.0, rel=1e-6) and 0.25 < r < 2.0
    with pytest.raises(ValueError, match="target must lie between"):
        hrf_studies.radius_for_orf_mse(Z, 1e9, rng_seed=5, n_pairs=40, M=64)
    with pytest.raises(ValueError, match="norm 1"):
        hrf_studies.radius_for_orf_mse(2 * Z, 2.0, rng_seed=5, n_pairs=40, M=64)
