"""The KAMA-NNs kernel studies (rflib.experiments.kama_kernels, notebook 07): the counted cost crossover, Theorem 1's
MSE ratios against the first-order law, the gain table, the counterexamples, the k sweep, Figs 1–2 and Theorem 3's
descent — closed forms and exact cases where they exist, Monte Carlo with fixed keys and tolerances of a few standard
errors computed from the same draws otherwise; plus the Figs 1–2 datasets and the PNG closed-form check."""

import math
import zlib

import jax
import numpy as np
import pytest

from rflib import kernels, projections
from rflib.experiments import datasets, kama_kernels, simulation
from rflib.features import png
from rflib.moments import png as png_moments


def keyring(seed):
    """A stand-in for the notebooks' named keys: the same (purpose, indices) always gives the same key."""

    def key(*indices):
        return jax.random.fold_in(jax.random.key(seed), zlib.crc32(repr(indices).encode()))

    return key


def test_cost_crossover_counts_6k_flops_and_3k_plus_d_numbers_and_crosses_at_62_and_64():
    d_grid = np.arange(2, 257)
    k, flops, storage, flop_cross, storage_cross = kama_kernels.cost_crossover(d_grid)
    for d in (2, 13, 64, 256):
        kd = math.ceil(5 * d * math.log(d))
        assert k[d - 2] == kd
        assert flops[d - 2] == pytest.approx(6 * kd / (2 * d * d), rel=1e-15)
        assert storage[d - 2] == pytest.approx((3 * kd + d) / d**2, rel=1e-15)
    assert 6 * k[13 - 2] == 1002 and 2 * 13**2 == 338  # the notebook's note: boston's d = 13
    assert (flop_cross, storage_cross) == (62, 64)
    assert flops[flop_cross - 3] >= 1 > flops[flop_cross - 2] and np.all(flops[flop_cross - 2 :] < 1)
    assert storage[storage_cross - 3] >= 1 > storage[storage_cross - 2] and np.all(storage[storage_cross - 2 :] < 1)


def test_wins_from_needs_a_win_at_every_larger_measured_d():
    dims = (16, 32, 64, 128)
    dense = {("dense", d, 1): 1.0 for d in dims}
    noisy = {("kama", 16, 1): 2.0, ("kama", 32, 1): 0.5, ("kama", 64, 1): 2.0, ("kama", 128, 1): 0.5}
    assert kama_kernels.wins_from({**dense, **noisy}, "kama", 1, dims) == 128  # the win at 32 does not last
    always = {("kama", d, 1): 0.5 for d in dims}
    assert kama_kernels.wins_from({**dense, **always}, "kama", 1, dims) == 16
    never = {("kama", d, 1): 1.0 for d in dims}  # a tie is no win
    assert kama_kernels.wins_from({**dense, **never}, "kama", 1, dims) is None
    with pytest.raises(ValueError, match="no .* entry"):
        kama_kernels.wins_from(dense, "kama", 1, dims)


@pytest.mark.parametrize("d", [4, 32])
def test_angular_orthogonal_mse_ratio_is_the_quadrature_gain_law(d):
    thetas = np.array([0.3, 1.2, math.pi / 2, 2.5])
    closed = png_moments.angular_orthogonal_mse_ratio(thetas, d)
    for theta, ratio in zip(thetas, closed, strict=True):
        x, y = kernels.pair_at_angle(theta, d=d)
        law = png_moments.gain_law("sgn", x, y)
        assert ratio == pytest.approx(law.mse_orthogonal(d, d) / law.mse_iid(d), abs=1e-12)
    with pytest.raises(ValueError, match="theta"):
        png_moments.angular_orthogonal_mse_ratio(0.0, d)  # K = 1: MSE_URN = 0, the ratio is undefined


@pytest.fixture(scope="module")
def theorem1():
    d, thetas, draws = (
        16,
        (math.pi / 3, math.pi / 2),
        3_000,
    )  # the notebook's quick d; at d = 8 the O(d⁻²) terms exceed the slack
    key = keyring(1)
    return d, thetas, draws, key, kama_kernels.theorem1_angular_ratios(key, (d,), thetas, draws)


def test_theorem1_ratios_are_the_angular_mses_over_the_exact_urn_mse(theorem1):
    d, thetas, draws, key, ratios = theorem1
    for theta in thetas:
        x, y = kernels.pair_at_angle(theta, d=d)
        K = 1 - 2 * theta / math.pi
        W = projections.sample("orthogonal", key(d, "orn"), d, d, draws=draws)
        sq, se, *_ = simulation.error_summary(png.estimates("sgn", W, x, y), K)
        mse_urn = (1 - K**2) / d  # sgn features are ±1: Var F = 1 − K²
        assert ratios["orn", d, theta] == pytest.approx((sq / mse_urn, se / mse_urn), rel=1e-9)
        assert ratios["law", d, theta][0] == pytest.approx(
            png_moments.angular_orthogonal_mse_ratio(theta, d), abs=1e-12
        )
        assert ratios["slack", d, theta][0] == pytest.approx(0.5 / d**2 / mse_urn, rel=1e-12)
        urn, urn_se = ratios["urn", d, theta]
        assert abs(urn - 1) < 4 * urn_se  # URN's MSE is Var F / m exactly
        orn, orn_se = ratios["orn", d, theta]
        assert abs(orn - ratios["law", d, theta][0]) < 4 * orn_se + ratios["slack", d, theta][0]
        assert orn < 1 - 5 * orn_se  # orthogonal rows help the angular kernel (H ≠ 0 for 0 < θ < π)


def test_theorem1_law_deviations_are_the_excess_over_the_slack_in_standard_errors(theorem1):
    d, thetas, _, _, ratios = theorem1
    fake = {}
    for t in thetas:
        fake["orn", d, t] = (0.7, 0.01)
        fake["law", d, t] = (0.66, 0.0)
        fake["slack", d, t] = (0.02, 0.0)
    z = kama_kernels.theorem1_law_deviations(fake, (d,), thetas)
    assert set(z) == {(d, round(t, 3)) for t in thetas}
    assert all(v == pytest.approx((0.04 - 0.02) / 0.01) for v in z.values())
    assert max(kama_kernels.theorem1_law_deviations(ratios, (d,), thetas).values()) < 4
    with pytest.raises(ValueError, match="no orn/law/slack entry"):
        kama_kernels.theorem1_law_deviations(fake, (d + 1,), thetas)


def test_gain_table_predicts_the_angular_gain_and_uses_one_iid_and_one_haar_stack():
    d, theta, draws = 16, math.pi / 2, 4_000
    x, y = kernels.pair_at_angle(theta, d=d)
    key = keyring(2)
    table = kama_kernels.orthogonal_gain_table(("sgn", "relu"), x, y, key, draws)
    sgn = table["sgn"]
    assert sgn["kernel"] == pytest.approx(0.0, abs=1e-12)
    assert sgn["predicted"] == pytest.approx((d - 1) * 8 * math.sin(theta) ** 2 / math.pi**2 / (2 * d * d), abs=1e-12)
    assert abs(sgn["gap"] - sgn["predicted"]) < 4 * (sgn["urn_se"] + sgn["orn_se"]) + 0.5 / d**2
    assert sgn["gap_se"] == pytest.approx(math.hypot(sgn["urn_se"], sgn["orn_se"]))
    W = projections.sample("iid", key("urn"), d, d, draws=draws)
    urn, urn_se, *_ = simulation.error_summary(png.estimates("relu", W, x, y), table["relu"]["kernel"])
    assert (table["relu"]["urn"], table["relu"]["urn_se"]) == (urn, urn_se)
    with pytest.raises(ValueError, match="name must be one of"):
        kama_kernels.orthogonal_gain_table(("gelu",), x, y, key, draws)


def test_he2_pair_covariance_is_positive_where_the_first_order_gain_vanishes():
    """Counterexample 2 to Theorem 1: f = u² − 1 on orthogonal inputs has H = 0 and a positive pair covariance."""
    key = keyring(3)
    out = kama_kernels.orthogonal_pair_covariances("he2", key, (8,), 200_000, theta=math.pi / 2)
    cov, se, h_norm_sq = out[8]
    assert h_norm_sq == pytest.approx(0.0, abs=1e-12)
    assert cov > 5 * se
    x, y = kernels.pair_at_angle(math.pi / 2, d=8)
    assert (cov, se) == png_moments.orthogonal_pair_covariance("he2", key(8), x, y, 200_000)


def test_parallel_inputs_give_every_law_a_zero_mse():
    """Counterexample 1 to Theorem 1: at y = 2x, K = 1 and every estimate is exactly 1."""
    mse = kama_kernels.parallel_input_mse(jax.random.key(4), np.ones(16) / 4, draws=20)
    assert mse == {"urn": 0.0, "orn": 0.0, "kama": 0.0}


def test_k_sweep_is_biased_for_one_rotation_and_mixed_at_5_d_ln_d():
    d, draws = 8, 3_000
    out = kama_kernels.kama_k_sweep(d, math.pi / 6, (0.07, 5.0), draws, keyring(5), np.random.default_rng(0))
    assert out["kernel"] == pytest.approx(2 / 3, abs=1e-12) and out["urn_variance"] == pytest.approx(5 / 9)
    few, many = out["sweep"][0.07], out["sweep"][5.0]
    assert (few["k"], many["k"]) == (1, round(5 * d * math.log(d)))
    assert few["untouched"] == d * (1 - 2 / d) and many["untouched"] == pytest.approx(d * 0.75 ** many["k"])
    _, _, bias, bias_se = few["axis"]
    assert abs(bias) > 5 * bias_se  # one rotation leaves most rows axis-aligned
    _, _, bias, bias_se = many["axis"]
    assert abs(bias) < 4 * bias_se
    haar = 3 / (d * (d + 2))  # E u⁴ of a coordinate of a uniform unit vector; E u⁸ = 105 / (d(d+2)(d+4)(d+6))
    se = math.sqrt((105 / (d * (d + 2) * (d + 4) * (d + 6)) - haar**2) / draws)
    assert abs(many["fourth"] - haar) < 4 * se
    assert few["fourth"] > 10 * haar
    orn_mse, orn_se, *_ = out["orn"]
    assert abs(many["axis"][0] - orn_mse) < 4 * math.hypot(many["axis"][1], orn_se)


def parallel_points(n=6):
    """Rows that are power-of-two multiples of one vector (exact after normalising): every pair has K = 1 exactly and
    every estimate is exactly 1."""
    return np.outer(2.0 ** np.arange(n), np.array([0.3, -1.0, 0.5, 2.0]))


def test_fig1_pointwise_mse_is_zero_on_parallel_points_and_var_over_m_for_urn():
    zero = kama_kernels.pointwise_mse_by_blocks(
        {"parallel": parallel_points()}, lambda name: np.random.default_rng(0), keyring(6), (1, 2), 10, 5
    )
    assert set(zero) == {("parallel", b, m) for b in (1, 2) for m in png.LAWS}
    assert all(v == (0.0, 0.0) for v in zero.values())
    X = np.random.default_rng(1).normal(size=(12, 4))
    out = kama_kernels.pointwise_mse_by_blocks(
        {"gauss": X}, lambda name: np.random.default_rng(2), keyring(7), (1,), 20, 3_000
    )
    rng = np.random.default_rng(2)
    i = rng.choice(12, size=20)
    j = (i + rng.integers(1, 12, size=20)) % 12
    assert np.all(i != j)
    K = np.array([png_moments.kernel("sgn", X[a], X[b]) for a, b in zip(i, j, strict=True)])
    mse, se = out["gauss", 1, "urn"]
    assert abs(mse - np.mean((1 - K**2) / 4)) < 4 * se


def test_fig2_gram_error_is_zero_on_parallel_points_and_uses_min_of_points_and_n():
    zero = kama_kernels.gram_error_by_blocks(
        {"parallel": parallel_points(n=7)}, lambda name: np.random.default_rng(0), keyring(8), (1, 2), 5, 3
    )
    assert all(v[:2] == (0.0, 0.0) and v[2:] == (5, 4) for v in zero.values())
    X = np.random.default_rng(3).normal(size=(9, 3))
    key = keyring(9)
    out = kama_kernels.gram_error_by_blocks({"gauss": X}, lambda name: np.random.default_rng(4), key, (2,), 50, 4)
    Xp = X[np.random.default_rng(4).permutation(9)]
    W = projections.sample("orthogonal", key("gauss", 2, "orn"), 6, 3, draws=4)
    errs = simulation.gram_errors("sgn", W, Xp, png_moments.gram("sgn", Xp))
    assert out["gauss", 2, "orn"] == (errs.mean(), errs.std(ddof=1) / 2, 9, 3)


def test_summaries_over_blocks():
    results = {}
    for b, scale in ((1, 1.0), (2, 0.5)):
        for m, v in (("urn", 4.0), ("orn", 2.0), ("kama", 2.2), ("horn", 3.0)):
            results["a", b, m] = (v * scale, 0.1, 10, 3)
    assert kama_kernels.mean_ratio_to_urn(results, ["a"], (1, 2)) == {"a, orn": 0.5, "a, kama": 0.55, "a, horn": 0.75}
    assert kama_kernels.largest_relative_difference(results, ["a"], (1, 2)) == pytest.approx(0.1)
    assert kama_kernels.method_series(results, "a", (1, 2), ("urn",)) == {"urn": [(4.0, 0.1, 10, 3), (2.0, 0.1, 10, 3)]}
    with pytest.raises(ValueError, match="no entry"):
        kama_kernels.mean_ratio_to_urn(results, ["b"], (1,))


def test_procrustes_descent_meets_theorem_3_and_solves_d_2_in_one_step():
    theta = 2.0
    T = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    values, slack, drift = kama_kernels.procrustes_descent(T, 3)
    assert values[0] == pytest.approx(np.sum((np.eye(2) - T) ** 2))
    assert values[1] == pytest.approx(0.0, abs=1e-24)  # one plane, exact line search
    assert slack >= -1e-12 and drift < 1e-14
    from scipy import stats

    T = stats.special_ortho_group.rvs(6, random_state=np.random.default_rng(0))
    values, slack, drift = kama_kernels.procrustes_descent(T, 40)
    assert values.shape == (41,) and np.all(np.diff(values) <= 1e-12)
    assert slack >= -1e-12 and drift < 1e-12
    with pytest.raises(ValueError, match="square"):
        kama_kernels.procrustes_descent(np.ones((2, 3)), 1)


def test_closed_forms_against_quadrature_cover_every_activation():
    x, y = np.array([0.8, 0.3, -0.2]), np.array([0.1, 1.1, 0.4])
    out = png_moments.closed_forms_against_quadrature(x, y)
    assert list(out) == list(png.ACTIVATIONS)
    assert math.isnan(out["tanh"][0])
    for name, (closed, quad) in out.items():
        if name != "tanh":
            assert closed == png_moments.kernel(name, x, y) and quad == pytest.approx(closed, abs=1e-10)


def test_kama_kernel_datasets_are_z_scored_with_the_documented_dimensions():
    sets = datasets.kama_kernel_datasets(["g50c", "boston", "cpu*", "insurance", "wine*", "parkinson*"], seed=0)
    dims = {"g50c": 50, "boston": 13, "cpu*": 10, "insurance": 85, "wine*": 13, "parkinson*": 30}
    assert {name: X.shape[1] for name, X in sets.items()} == dims
    assert sets["boston"].shape[0] == 506 and sets["wine*"].shape[0] == 178 and sets["g50c"].shape[0] == 550
    for X in sets.values():
        np.testing.assert_allclose(X.mean(0), 0.0, atol=1e-10)
        std = X.std(0)
        np.testing.assert_allclose(std[std > 0], 1.0, rtol=1e-10)
    np.testing.assert_array_equal(sets["g50c"], datasets.zscore_rows(datasets.make_g50c(0)[0]))
    with pytest.raises(ValueError, match="names must be one of"):
        datasets.kama_kernel_datasets(["cpu"])


def test_studies_name_bad_arguments():
    with pytest.raises(ValueError, match="key must be a callable"):
        kama_kernels.theorem1_angular_ratios(jax.random.key(0), (8,), (1.0,), 10)
    with pytest.raises(ValueError, match="draws must be"):
        kama_kernels.theorem1_angular_ratios(keyring(0), (8,), (1.0,), 0)
    with pytest.raises(ValueError, match=r"dims\[0\]"):
        kama_kernels.cost_crossover([1, 2])
    with pytest.raises(ValueError, match="datasets"):
        kama_kernels.pointwise_mse_by_blocks({"x": np.ones(3)}, np.random.default_rng, keyring(0), (1,), 1, 1)


@pytest.mark.parametrize("study", [kama_kernels.pointwise_mse_by_blocks, kama_kernels.gram_error_by_blocks])
def test_block_studies_refuse_a_single_draw_since_it_has_no_standard_error(study):
    X = np.random.default_rng(0).normal(size=(5, 3))
    with pytest.raises(ValueError, match="draws must be at least 2"):
        study({"x": X}, lambda name: np.random.default_rng(1), keyring(0), (1,), 4, 1)
