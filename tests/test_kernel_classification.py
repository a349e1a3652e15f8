"""Kernel classification with random features (FAVOR# §5.2): the exact classifier, the random-feature classifiers
against the exact one at large M, the split and the σ selection rule."""

import jax
import numpy as np
import pytest

from rflib import projections
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
    far = 40.0 * Xq  # all kernel values underflow in a naive computation; the log-space version still decides
    assert 0.0 <= kc.exact_accuracy(40.0 * Xtr, onehot, far, yq) <= 1.0


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


def test_sigma_selection_takes_the_best_and_breaks_ties_towards_small_sigma():
    assert kc.best_sigma_index([0.5, 0.9, 0.9, 0.1]) == 1
    with pytest.raises(ValueError, match="finite non-empty"):
        kc.best_sigma_index([np.nan, 0.2])


def test_bad_shapes_are_named(key):
    X, y = blobs()
    with pytest.raises(ValueError, match="onehot needs one row per training object"):
        kc.exact_accuracy(X[:10], np.eye(3)[y[:9]], X[10:], y[10:])
    with pytest.raises(ValueError, match="labels needs one entry per query"):
        kc.exact_accuracy(X[:10], np.eye(3)[y[:10]], X[10:], y[:3])
