"""Kernel classification with random features (FAVOR# §5.2): the exact classifier, the random-feature classifiers
against the exact one at large M, the split and the σ selection rule."""

import jax
import numpy as np
import pytest
from scipy.special import logsumexp

from rflib import projections
from rflib.experiments import datasets
from rflib.experiments import kernel_classification as kc
from rflib.features import dense_exp as de


def blobs(seed=0, n=60, d=3):
    rng = np.random.default_rng(seed)
    labels = rng.integers(3, size=n)
    centres = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])[:, :d] * 1.5
    return centres[labels] + 0.4 * rng.normal(size=(n, d)), labels


def test_split_is_a_shuffled_partition_with_the_papers_proportions():
    train, val, test = kc.split_indices(np.random.default_rng(0), 178)
    assert (len(train), len(val), len(test)) == (160, 9, 9)
    assert sorted(np.concatenate([train, val, test]).tolist()) == list(range(178))
    with pytest.raises(ValueError, match="at least 3"):
        kc.split_indices(np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="summing to 1"):
        kc.split_indices(np.random.default_rng(0), 10, (0.5, 0.5, 0.5))


def test_exact_classifier_is_the_gaussian_kernel_sum_argmax():
    X, y = blobs()
    Xtr, ytr, Xq, yq = X[:45], y[:45], X[45:], y[45:]
    onehot = np.eye(3)[ytr]
    K = np.exp(-0.5 * np.sum((Xq[:, None] - Xtr[None]) ** 2, axis=-1))
    expected = np.mean(np.argmax(K @ onehot, axis=1) == yq)
    assert kc.exact_accuracy(Xtr, onehot, Xq, yq) == pytest.approx(expected)
    # Scaled by 40 every kernel value underflows in a naive computation (all scores 0, argmax → class 0); in log space
    # the nearest training point dominates each sum, so the classifier becomes 1-nearest-neighbour, an exact oracle.
    nearest = np.argmin(np.sum((Xq[:, None] - Xtr[None]) ** 2, axis=-1), axis=1)
    one_nn = np.mean(ytr[nearest] == yq)
    assert kc.exact_accuracy(40.0 * Xtr, onehot, 40.0 * Xq, yq) == pytest.approx(one_nn)
    assert one_nn != np.mean(yq == 0)  # the naive underflowed answer would differ


@pytest.mark.parametrize("method", ["positive", "sderf", "aderf"])
def test_random_feature_classifiers_agree_with_the_exact_one_for_many_features(key, method):
    X, y = blobs(seed=1)
    Xtr, ytr, Xq, yq = 0.7 * X[:45], y[:45], 0.7 * X[45:], y[45:]
    onehot = np.eye(3)[ytr]
    exact = kc.exact_accuracy(Xtr, onehot, Xq, yq)
    params = de.fit(method, Xq, Xtr)
    Ws = projections.orthogonal_batch(key, 4, 4096, 3)
    acc = np.asarray(kc.derf_accuracies(params, params, Ws, Xtr, onehot, Xq, yq))
    assert acc.shape == (4,) and np.all(np.abs(acc - exact) <= 1 / len(yq) + 1e-12)


@pytest.mark.parametrize("method", ["gerf", "sderf", "aderf"])
def test_random_feature_scores_are_those_of_the_exact_products_at_large_sigma(method):
    """At σ = 100 the fitted features span more than float64's range, so sums stabilised per row underflow for
    whole classes (the previous implementation got 15–70 % of these predictions wrong for GERF, SDERF and ADERF;
    PosRF's features stay within the range there, so it is not a case of this test).
    The oracle is each class score's logsumexp over every (feature, training object) term, in float64: labelling the
    queries with its argmax, every draw's accuracy must be exactly 1."""
    X, y = blobs(seed=0, n=80)
    Xtr, ytr, Xq = 100.0 * X[:60], y[:60], 100.0 * X[60:]
    onehot = np.eye(3)[ytr]
    params = de.fit(method, Xq, Xtr)
    Ws = projections.orthogonal_batch(jax.random.key(0), 3, 16, 3)
    sets = []
    for W in Ws:
        train_scale, train_logit = (np.asarray(v) for v in de.logits(params, W, Xtr, 2))
        log_train = (train_scale - 0.5 * np.sum(Xtr**2, axis=1))[:, None] + train_logit  # (n, M)
        log_terms = np.asarray(de.logits(params, W, Xq, 1)[1])[:, :, None] + log_train.T[None]  # (q, M, n)
        log_scores = [logsumexp(log_terms[:, :, ytr == c].reshape(len(Xq), -1), axis=1) for c in range(3)]
        labels = np.argmax(np.stack(log_scores, axis=1), axis=1)
        # the training objects' largest log-features lie further apart than float64's range (e^-745 underflows), the
        # case this test is for; and the oracle's labels are not one class (the old form's fallback)
        assert np.ptp(log_train.max(axis=1)) > 745.0 and len(np.unique(labels)) > 1
        sets.append((params, Xq, labels))
    accuracies = np.asarray(kc.derf_accuracies_per_query_set(params, Ws, Xtr, onehot, tuple(sets)))
    np.testing.assert_array_equal(np.diagonal(accuracies), 1.0)


def test_trig_classifier_agrees_with_the_exact_one_for_many_features(key):
    X, y = blobs(seed=2)
    Xtr, ytr, Xq, yq = X[:45], y[:45], X[45:], y[45:]
    onehot = np.eye(3)[ytr]
    Ws = projections.orthogonal_batch(key, 3, 8192, 3)
    thetas = jax.random.uniform(jax.random.key(5), (3, 8192), maxval=2 * np.pi)
    acc = np.asarray(kc.trig_accuracies(Ws, thetas, Xtr, onehot, Xq, yq))
    assert np.all(np.abs(acc - kc.exact_accuracy(Xtr, onehot, Xq, yq)) <= 1 / len(yq) + 1e-12)
    with pytest.raises(ValueError, match="one phase per ω"):
        kc.trig_accuracies(Ws, thetas[:, :5], Xtr, onehot, Xq, yq)


def test_query_sets_sharing_a_training_side_give_each_sets_own_accuracies(key):
    """The per-query-set forms (one training side per draw, as split_accuracies uses them for TrigRF and PosRF)
    equal one call per set, draw by draw; a set whose labels do not match its queries is named."""
    X, y = blobs(seed=3, n=80)
    Xtr, onehot = X[:50], np.eye(3)[y[:50]]
    sets = ((X[50:62], y[50:62]), (X[62:], y[62:]))
    Ws = projections.orthogonal_batch(key, 12, 16, 3)  # 12 draws
    thetas = jax.random.uniform(jax.random.key(6), (12, 16), maxval=2 * np.pi)
    together = np.asarray(kc.trig_accuracies_per_query_set(Ws, thetas, Xtr, onehot, sets))
    alone = [np.asarray(kc.trig_accuracies(Ws, thetas, Xtr, onehot, Xq, yq)) for Xq, yq in sets]
    assert together.shape == (2, 12) and np.array_equal(together, np.stack(alone))
    per_object = kc.trig_accuracies_per_query_set(Ws, thetas, Xtr, onehot, sets, per_object=True)
    assert [c.shape for c in per_object] == [(12, 12), (12, 18)]
    np.testing.assert_allclose(np.stack([c.mean(axis=1) for c in per_object]), together, rtol=1e-15)
    params = [de.fit("sderf", Xq, Xtr) for Xq, _ in sets]
    shared = de.fit("positive", sets[0][0], Xtr)
    for p_query, p_train in ((params, params[0]), ((shared, shared), shared)):
        sets_with_params = tuple((p, Xq, yq) for p, (Xq, yq) in zip(p_query, sets, strict=True))
        together = np.asarray(kc.derf_accuracies_per_query_set(p_train, Ws, Xtr, onehot, sets_with_params))
        alone = [np.asarray(kc.derf_accuracies(p, p_train, Ws, Xtr, onehot, Xq, yq)) for p, Xq, yq in sets_with_params]
        assert together.shape == (2, 12) and np.array_equal(together, np.stack(alone))
        per_object = kc.derf_accuracies_per_query_set(p_train, Ws, Xtr, onehot, sets_with_params, per_object=True)
        assert {tuple(np.unique(c).tolist()) for c in per_object} <= {(0.0,), (1.0,), (0.0, 1.0)}
        np.testing.assert_allclose(np.stack([c.mean(axis=1) for c in per_object]), together, rtol=1e-15)
    with pytest.raises(ValueError, match="labels"):
        kc.trig_accuracies_per_query_set(Ws, thetas, Xtr, onehot, (sets[0], (X[62:], y[50:62])))
    for bad in ((), (sets[0][0],), "sets"):
        with pytest.raises(ValueError, match="query_sets"):
            kc.trig_accuracies_per_query_set(Ws, thetas, Xtr, onehot, bad)
    with pytest.raises(ValueError, match="query_sets"):
        kc.derf_accuracies_per_query_set(shared, Ws, Xtr, onehot, sets)  # (X, labels) pairs: no parameters


def test_sigma_selection_takes_the_best_and_breaks_ties_in_the_middle():
    assert kc.best_sigma_index([0.5, 0.9, 0.9, 0.1]) == 1  # two tied: the lower one
    assert kc.best_sigma_index([0.9, 0.9, 0.9, 0.9, 0.1]) == 1  # four tied: the lower median
    assert kc.best_sigma_index([0.9, 0.9, 0.9, 0.1]) == 1
    assert kc.best_sigma_index([0.1, 0.2, 0.9]) == 2
    with pytest.raises(ValueError, match="finite non-empty"):
        kc.best_sigma_index([np.nan, 0.2])


def test_bad_shapes_are_named(key):
    X, y = blobs()
    with pytest.raises(ValueError, match="onehot needs one row per training object"):
        kc.exact_accuracy(X[:10], np.eye(3)[y[:9]], X[10:], y[10:])
    with pytest.raises(ValueError, match="labels needs one entry per query"):
        kc.exact_accuracy(X[:10], np.eye(3)[y[:10]], X[10:], y[:3])


def test_classification_set_zscores_every_feature_and_keeps_constant_ones_at_zero():
    X, y = datasets.classification_set("iris")
    assert X.shape == (150, 4) and X.dtype == np.float64 and sorted(set(y.tolist())) == [0, 1, 2]
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(X.std(axis=0), 1.0, rtol=1e-12)
    X, y = datasets.classification_set("digits")
    constant = np.ptp(X, axis=0) == 0
    assert constant.any() and np.all(X[:, constant] == 0)  # digits' always-blank border pixels
    np.testing.assert_allclose(X[:, ~constant].std(axis=0), 1.0, rtol=1e-12)
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.classification_set("mnist")


def test_split_accuracies_reports_the_exact_classifier_and_converges_to_it(key):
    X, y = blobs(seed=3, n=200)
    sigmas, calls = [0.6, 1.0], []

    def draw_key(si, M):
        calls.append((si, M))
        return jax.random.fold_in(key, si)

    out = kc.split_accuracies(
        X, y, np.random.default_rng(4), draw_key, sigmas=sigmas, Ms=(4096,), seeds=2, methods=("trig", "sderf")
    )
    assert calls == [(0, 4096), (1, 4096)]
    assert out["exact"].shape == (2, 2) and out["sderf"].shape == out["trig"].shape == (1, 2, 2)
    train, val, test = kc.split_indices(np.random.default_rng(4), 200)
    onehot = np.eye(3)[y[train]]
    for si, sigma in enumerate(sigmas):
        for part, idx in enumerate((val, test)):
            exact = kc.exact_accuracy(sigma * X[train], onehot, sigma * X[idx], y[idx])
            assert out["exact"][part, si] == exact
            for m in ("trig", "sderf"):  # mean over 2 draws, each within one object of the exact classifier
                assert abs(out[m][0, part, si] - exact) <= 1 / len(idx) + 1e-12


def test_accuracy_sweep_runs_each_split_with_its_named_streams():
    settings = dict(sigmas=[1.0], Ms=(8,), seeds=2, methods=("positive",))
    results = kc.accuracy_sweep(
        ["iris"],
        2,
        lambda n, s: np.random.default_rng([7, s]),
        lambda n, s, si, M: jax.random.key(100 * s + M),
        progress=False,
        **settings,
    )
    assert sorted(results) == [("iris", 0), ("iris", 1)]
    X, y = datasets.classification_set("iris")
    direct = kc.split_accuracies(X, y, np.random.default_rng([7, 1]), lambda si, M: jax.random.key(100 + M), **settings)
    np.testing.assert_array_equal(results["iris", 1]["positive"], direct["positive"])
    np.testing.assert_array_equal(results["iris", 1]["exact"], direct["exact"])
    # every draw's test accuracy is kept, and its mean is the stored test accuracy
    np.testing.assert_allclose(direct["test_draws"]["positive"].mean(axis=-1), direct["positive"][:, 1], rtol=1e-12)
    # every test object's accuracy over the draws is kept: the other margin, with the same grand mean
    objects = direct["test_objects"]["positive"]
    assert objects.shape == (1, 1, len(kc.split_indices(np.random.default_rng([7, 1]), len(y))[2]))
    assert set(np.unique(objects * 2).tolist()) <= {0.0, 1.0, 2.0}  # 2 draws: 0, 1/2 or 1 of them correct
    np.testing.assert_allclose(objects.mean(axis=-1), direct["positive"][:, 1], rtol=1e-12)


def _crossed_split(correct_a, correct_b, validation_a, validation_b) -> dict:
    """A split_accuracies-shaped dict from full (n_M, n_σ, seeds, n_test) correctness tables of two methods."""
    return {
        "a": validation_a,
        "b": validation_b,
        "test_draws": {"a": correct_a.mean(axis=-1), "b": correct_b.mean(axis=-1)},
        "test_objects": {"a": correct_a.mean(axis=-2), "b": correct_b.mean(axis=-2)},
    }


def test_paired_gap_takes_each_method_at_its_validated_sigma_and_both_margins_of_the_draws_by_objects_table():
    rng = np.random.default_rng(0)
    correct_a = (rng.random((1, 2, 5, 7)) < 0.7).astype(float)  # (n_M, n_σ, seeds, n_test)
    correct_b = (rng.random((1, 2, 5, 7)) < 0.4).astype(float)
    split = _crossed_split(
        correct_a,
        correct_b,
        np.array([[[0.1, 0.9], [0.5, 0.7]]]),  # a validates σ index 1
        np.array([[[0.9, 0.1], [0.5, 0.0]]]),  # b validates σ index 0
    )
    table = 100 * (correct_a[0, 1] - correct_b[0, 0])  # (seeds, n_test) at the validated σ
    by_draw, by_object = table.mean(axis=1), table.mean(axis=0)
    results = {("d", 0): split, ("d", 1): split}
    gap, se = kc.paired_gap(results, ["d"], [0, 1], "a", "b")["d", 0]
    assert gap == pytest.approx(table.mean())
    both = by_draw.var(ddof=1) / 5 + by_object.var(ddof=1) / 7
    assert se == pytest.approx(np.sqrt(2 * both) / 2)  # two splits, averaged
    gap, se = kc.paired_gap(results, ["d"], [0, 1], "a", "b", objects=False)["d", 0]
    assert se == pytest.approx(np.sqrt(2 * by_draw.var(ddof=1) / 5) / 2)  # test objects held fixed
    with pytest.raises(ValueError, match="split_ids must name at least one split"):
        kc.paired_gap({}, ["d"], [], "a", "b")
    with pytest.raises(ValueError, match="cells must name"):
        kc.mean_paired_gap(results, [], [0], "a", "b")
    with pytest.raises(ValueError, match="b must be one of the methods"):
        kc.mean_paired_gap(results, [("d", 0)], [0], "a", "sderf")
    with pytest.raises(ValueError, match="no split 2"):
        kc.paired_gap(results, ["d"], [0, 2], "a", "b")


def test_mean_paired_gap_sums_a_datasets_cells_per_test_object_and_adds_independent_draws():
    """Two M cells of one data set share its test objects: their object means are summed per object before the
    variance; a second data set's objects and every cell's draws add independently."""
    rng = np.random.default_rng(1)
    tables = {name: (rng.random((2, 1, 6, n)) < 0.6).astype(float) for name, n in (("d", 9), ("e", 4))}
    validation = np.zeros((2, 2, 1))
    results = {(name, 0): _crossed_split(t, np.zeros_like(t), validation, validation) for name, t in tables.items()}
    cells = [("d", 0), ("d", 1), ("e", 1)]
    gap, se = kc.mean_paired_gap(results, cells, [0], "a", "b")
    per_cell = [100 * tables[name][mi, 0] for name, mi in cells]  # (seeds, n_test) each
    assert gap == pytest.approx(np.mean([t.mean() for t in per_cell]))
    draws = sum(t.mean(axis=1).var(ddof=1) / 6 for t in per_cell)
    objects = (per_cell[0].mean(axis=0) + per_cell[1].mean(axis=0)).var(ddof=1) / 9
    objects += per_cell[2].mean(axis=0).var(ddof=1) / 4
    assert se == pytest.approx(np.sqrt(draws + objects) / 3)


def test_crossed_standard_error_covers_draw_and_object_sampling():
    """Monte Carlo check of the estimator on a crossed random-effects table d(i, r) = o_i + r_r + e_ir: its mean
    is σ_O²/n + σ_R²/R + 2σ_E²/(nR) (the interaction counted twice, so conservative), and the gaps' spread over
    replications is the true σ_O²/n + σ_R²/R + σ_E²/(nR). Fixed key; tolerances 4 Monte Carlo s.e."""
    rng = np.random.default_rng(2)
    n, R, reps = 12, 8, 4000
    var_o, var_r, var_e = 1.0, 2.0, 3.0
    gaps, estimates = [], []
    validation = np.zeros((1, 2, 1))
    for _ in range(reps):
        d = (
            rng.normal(0, np.sqrt(var_o), (1, 1, 1, n))
            + rng.normal(0, np.sqrt(var_r), (1, 1, R, 1))
            + rng.normal(0, np.sqrt(var_e), (1, 1, R, n))
        ) / 100
        gap, se = kc.mean_paired_gap(
            {("d", 0): _crossed_split(d, np.zeros_like(d), validation, validation)}, [("d", 0)], [0], "a", "b"
        )
        gaps.append(gap)
        estimates.append(se**2)
    truth = var_o / n + var_r / R + var_e / (n * R)
    expected = truth + var_e / (n * R)
    estimates = np.asarray(estimates)
    assert abs(estimates.mean() - expected) < 4 * estimates.std(ddof=1) / np.sqrt(reps)
    spread = np.var(gaps, ddof=1)
    assert abs(spread - truth) < 4 * truth * np.sqrt(2 / (reps - 1))


def test_load_classification_dispatches_to_the_uci_and_scikit_learn_sets():
    X, y = datasets.load_classification("cmc")
    assert X.shape == (1473, 9) and y.max() == 2
    np.testing.assert_array_equal(datasets.load_classification("iris")[0], datasets.classification_set("iris")[0])
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.load_classification("abalone")


def test_accuracy_table_takes_the_validated_sigma_and_averages_splits():
    sigmas = np.array([0.1, 1.0, 10.0])
    # (validation, test) rows per σ; validation ties between σ = 1 and 10 go to σ = 1
    curve = {
        "a": np.array([[0.5, 0.9, 0.9], [0.2, 0.6, 1.0]]),
        "b": np.array([[0.9, 0.1, 0.1], [0.4, 0.0, 0.0]]),
    }
    assert kc.accuracy_at_validated_sigma(curve["a"], sigmas) == (0.6, 1.0)
    split = {
        "sderf": np.stack([curve["a"], curve["b"]]),  # M index 0 and 1
        "gerf": np.stack([curve["b"], curve["b"]]),
        "exact": curve["a"],
    }
    other = {
        "sderf": np.stack([curve["b"], curve["b"]]),
        "gerf": np.stack([curve["a"], curve["a"]]),
        "exact": curve["b"],
    }
    results = {("d1", 0): split, ("d1", 1): other, ("d2", 0): split, ("d2", 1): split}
    table = kc.accuracy_table(results, ["d1", "d2"], [0, 1], ("gerf", "sderf"), sigmas)
    np.testing.assert_allclose(table["d1"]["sderf"], [50.0, 40.0])  # (60 + 40)/2, (40 + 40)/2
    np.testing.assert_allclose(table["d1"]["gerf"], [50.0, 50.0])
    assert table["d1"]["exact"] == pytest.approx(50.0) and table["d2"]["exact"] == pytest.approx(60.0)
    np.testing.assert_allclose(table["d2"]["sderf"], [60.0, 40.0])
    assert kc.wins(table, ("gerf", "sderf")) == (3, 4)  # d1: M0 tie (a win), M1 loss; d2: M0 win, M1 tie (a win)
    np.testing.assert_allclose(kc.average_curve(table, "sderf"), [55.0, 40.0])
    with pytest.raises(ValueError, match="curve must have shape"):
        kc.accuracy_at_validated_sigma(curve["a"][:, :2], sigmas)


def test_shortfall_decomposition_splits_the_gap_to_the_exact_kernel_into_bandwidth_and_estimator_parts():
    sigmas = np.array([0.1, 1.0, 10.0])
    exact = np.array([[0.2, 0.5, 0.9], [0.3, 0.6, 0.8]])  # validated σ = 10 (index 2), test 0.8 there
    method = np.array([[[0.9, 0.1, 0.1], [0.25, 0.0, 0.0]]])  # validates σ = 0.1, test 0.25 there
    split = {"gerf": method, "exact": exact}
    out = kc.shortfall_decomposition({("d", 0): split}, ["d"], [0], "gerf", sigmas)["d", 0]
    assert out["bandwidth"] == pytest.approx(50.0)  # exact at its σ (80) − exact at the method's σ (30)
    assert out["estimator"] == pytest.approx(5.0)  # exact (30) − the method (25), both at the method's σ
    assert out["bandwidth"] + out["estimator"] == pytest.approx(100 * (0.8 - 0.25))  # the whole shortfall
    assert out["sigma"] == pytest.approx(0.1) and out["exact sigma"] == pytest.approx(10.0)
    with pytest.raises(ValueError, match="split_ids must name at least one split"):
        kc.shortfall_decomposition({}, ["d"], [], "gerf", sigmas)
    with pytest.raises(ValueError, match="method must be one of"):
        kc.shortfall_decomposition({("d", 0): split}, ["d"], [0], "GERF", sigmas)
