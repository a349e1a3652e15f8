"""The small LSTM language model (tied embeddings) and the distribution metrics of HRF Fig 3 / Table 4."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rflib import moments
from rflib.experiments import lm


def test_tied_logits_are_inner_products_with_the_embeddings(key):
    params = lm.init_lstm(key, 50, 8, n_layers=2, dtype=jnp.float64)
    h, state = lm.hidden_states(params, jnp.zeros((3, 5), dtype=jnp.int32), lm.zero_state(params, 3))
    assert h.shape == (3, 5, 8) and len(state) == 2
    np.testing.assert_allclose(lm.logits(params, h), jnp.einsum("bth,vh->btv", h, params.embedding), rtol=1e-12)


def test_training_learns_a_deterministic_sequence_and_is_reproducible(key):
    ids = np.tile(np.arange(12), 400)  # a cyclic corpus: perfectly predictable after one token
    params, losses = lm.train_lstm(
        key, ids, vocab_size=12, hidden=16, n_layers=1, batch=4, bptt=10, steps=150, learning_rate=1e-2
    )
    assert losses[0] > 2.0 and np.mean(losses[-10:]) < 0.2
    loss, queries = lm.evaluate(params, ids[:400], batch=2, bptt=10)
    assert loss < 0.2 and queries.shape[1] == 16
    _, losses_again = lm.train_lstm(
        key, ids, vocab_size=12, hidden=16, n_layers=1, batch=4, bptt=10, steps=5, learning_rate=1e-2
    )
    np.testing.assert_array_equal(losses_again, losses[:5])


def test_distribution_metrics_on_a_worked_example():
    p = jnp.array([[0.5, 0.5, 0.0]])
    q = jnp.array([[0.0, 0.5, 0.5]])
    out = lm.distribution_metrics(p, q)
    assert float(out["wasserstein"][0]) == pytest.approx(1.0)  # |0.5| + |0.5| + 0
    assert float(out["ks"][0]) == pytest.approx(0.5)
    assert float(out["negative_fraction"][0]) == 0.0
    same = lm.distribution_metrics(p, p)
    assert float(same["wasserstein"][0]) == 0.0 and float(same["ks"][0]) == 0.0
    neg = lm.distribution_metrics(p, jnp.array([[1.2, -0.4, 0.2]]))
    assert float(neg["negative_fraction"][0]) == pytest.approx(1 / 3)


def test_normalise_estimates_rejects_zero_rows():
    np.testing.assert_allclose(lm.normalise_estimates(jnp.array([[1.0, 3.0]])), [[0.25, 0.75]])
    with pytest.raises(ValueError, match="sums to 0"):
        lm.normalise_estimates(jnp.array([[1.0, -1.0]]))


def test_batchify_needs_enough_tokens():
    assert lm.batchify(np.arange(10), 3).shape == (3, 3)
    with pytest.raises(ValueError, match="too few"):
        lm.batchify(np.arange(5), 3)
    assert jax.numpy.asarray(lm.batchify(np.arange(10), 2))[1, 0] == 5


@pytest.mark.parametrize("method", ["FAVOR+", "Trig.", "Angular"])
def test_table_4_estimators_are_unbiased_within_their_closed_form_spread(method):
    """The mean of R independent draws is within 5 standard errors √(MSE_M/R) of SM, MSE_M from the closed forms
    (Lemma 2.2, Theorem 3.1 with Lemma 3.2); both hybrid bases get m = M / n_lambda projections."""
    rng = np.random.default_rng(0)
    Q, K = 0.4 * rng.normal(size=(3, 4)), 0.4 * rng.normal(size=(5, 4))
    M, n_lambda, R = 16, 4, 4000
    draw = jax.vmap(lambda k: lm.softmax_kernel_estimates(method, M, k, Q, K, n_lambda=n_lambda, radius=0.8))
    mean = np.asarray(draw(jax.random.split(jax.random.key(3), R))).mean(0)
    x, y = Q[:, None], K[None]
    log_mse = {
        "FAVOR+": lambda: moments.classic.log_mse(x, y, M, kind="hyperbolic"),
        "Trig.": lambda: moments.classic.log_mse(x, y, M, kind="trig"),
        "Angular": lambda: moments.hybrid.log_mse(x, y, M // n_lambda, n=n_lambda),
    }[method]()
    z = (mean - np.exp(Q @ K.T)) / np.sqrt(np.exp(np.asarray(log_mse)) / R)
    assert np.abs(z).max() < 5


def test_table_4_estimators_refuse_unknown_methods_and_too_few_features():
    Q = np.ones((2, 3))
    with pytest.raises(ValueError, match="method must be one of"):
        lm.softmax_kernel_estimates("ORF", 8, jax.random.key(0), Q, Q, n_lambda=8, radius=1.0)
    with pytest.raises(ValueError, match="use M ≥ n_lambda"):
        lm.softmax_kernel_estimates("Angular", 4, jax.random.key(0), Q, Q, n_lambda=8, radius=1.0)


def test_softmax_metrics_study_averages_the_query_metrics_of_each_draw():
    """With a key that ignores the seed every draw is the same: std 0, and the mean is the query-averaged
    distribution_metrics of one normalised draw of softmax_kernel_estimates (radius = RMS norm of Q and K)."""
    rng = np.random.default_rng(1)
    Q, K = 0.5 * rng.normal(size=(4, 3)), 0.5 * rng.normal(size=(9, 3))
    out = lm.softmax_metrics_study(
        Q, K, key_for=lambda si, M, method: jax.random.key(M), seeds=3, sizes=(8,), n_lambda=4
    )
    assert set(out) == {(method, 8) for method in lm.SOFTMAX_ESTIMATORS}
    radius = float(np.sqrt(np.mean(np.concatenate([np.sum(Q**2, 1), np.sum(K**2, 1)]))))
    est = lm.softmax_kernel_estimates("Gaussian", 8, jax.random.key(8), Q, K, n_lambda=4, radius=radius)
    direct = lm.distribution_metrics(jax.nn.softmax(Q @ K.T, axis=1), lm.normalise_estimates(est))
    for name, values in direct.items():
        mean, std = out["Gaussian", 8][name]
        assert std == 0.0 and mean == pytest.approx(float(jnp.mean(values)), rel=1e-12)


def test_softmax_metrics_study_w1_shrinks_like_one_over_root_m():
    """FAVOR+'s p̂ error is O(1/√M): 64× more features cut the seed-averaged W₁ by well over 4× (√64 = 8)."""
    rng = np.random.default_rng(2)
    Q, K = 0.3 * rng.normal(size=(5, 4)), 0.3 * rng.normal(size=(30, 4))
    out = lm.softmax_metrics_study(
        Q,
        K,
        key_for=lambda si, M, method: jax.random.fold_in(jax.random.key(si), M),
        seeds=4,
        sizes=(16, 1024),
        n_lambda=8,
        methods=("FAVOR+",),
    )
    assert out["FAVOR+", 16]["wasserstein"][0] > 4 * out["FAVOR+", 1024]["wasserstein"][0]
    with pytest.raises(ValueError, match="K must have Q's 4 columns"):
        lm.softmax_metrics_study(Q, K[:, :3], key_for=None, seeds=1, sizes=(8,), n_lambda=8)


def test_beats_at_every_size_on_a_worked_summary():
    summary = {
        ("A", 8): {"w": (1.0, 0.0)},
        ("B", 8): {"w": (3.0, 0.0)},
        ("C", 8): {"w": (2.0, 0.0)},
        ("A", 16): {"w": (1.0, 0.0)},
        ("B", 16): {"w": (1.5, 0.0)},
        ("C", 16): {"w": (1.2, 0.0)},
    }
    assert lm.beats_at_every_size(summary, ["A", "B"], ["C"], (8, 16), ["w"])  # best of A, B < C
    assert not lm.beats_at_every_size(summary, ["A", "B"], ["C"], (8, 16), ["w"], every_winner=True)  # B ≥ C
    assert lm.beats_at_every_size(summary, ["A", "B"], ["C"], (8,), ["w"], every_winner=False)
    assert not lm.beats_at_every_size(summary, ["C"], ["A"], (8, 16), ["w"])
    with pytest.raises(ValueError, match="no entry"):
        lm.beats_at_every_size(summary, ["A"], ["D"], (8,), ["w"])
