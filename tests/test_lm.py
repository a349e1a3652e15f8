"""The small LSTM language model (tied embeddings) and the distribution metrics of HRF Fig 3 / Table 4."""

import itertools

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
    direct = lm.distribution_metrics(jax.nn.softmax(Q @ K.T, axis=1), lm.induced_distribution(est, "clipped"))
    direct["negative_fraction"] = np.mean(np.asarray(est) < 0, axis=1)  # of the estimates, not of the clipped p̂
    for name, values in direct.items():
        mean, std = out["Gaussian", 8][name]
        assert std == 0.0 and mean == pytest.approx(float(jnp.mean(values)), rel=1e-12)


def test_softmax_metrics_study_scores_one_set_of_draws_under_several_views():
    """Each view re-scores the same draws: the signed reading of one draw equals distribution_metrics of the signed
    p̂; a reversed class order changes W₁ but not the negative fraction."""
    rng = np.random.default_rng(4)
    Q, K = 1.5 * rng.normal(size=(3, 4)), 1.5 * rng.normal(size=(12, 4))
    views = {"main": ("clipped", None), "signed": ("signed", None), "reversed": ("clipped", np.arange(12)[::-1])}
    out = lm.softmax_metrics_study(
        Q, K, key_for=lambda si, M, method: jax.random.key(5), seeds=2, sizes=(8,), n_lambda=4, views=views
    )
    est = lm.softmax_kernel_estimates("Trig.", 8, jax.random.key(5), Q, K, n_lambda=4, radius=1.0)
    signed = lm.distribution_metrics(jax.nn.softmax(Q @ K.T, axis=1), lm.normalise_estimates(est))
    assert out["signed"]["Trig.", 8]["ks"][0] == pytest.approx(float(jnp.mean(signed["ks"])), rel=1e-12)
    assert out["main"]["Trig.", 8]["ks"][0] <= 1.0
    assert out["reversed"]["Trig.", 8]["negative_fraction"] == out["main"]["Trig.", 8]["negative_fraction"]
    assert out["reversed"]["Trig.", 8]["wasserstein"] != out["main"]["Trig.", 8]["wasserstein"]
    with pytest.raises(ValueError, match="reading must be one of"):
        lm.softmax_metrics_study(
            Q, K, key_for=lambda *a: jax.random.key(0), seeds=1, sizes=(8,), n_lambda=4, views={"x": ("raw", None)}
        )


def test_softmax_metrics_study_margins_are_the_seed_by_query_table_s():
    """per_query: the per-seed means are the query averages the summary is made of, and the per-query means
    average each query's metric over the seeds (checked against the draws scored directly)."""
    rng = np.random.default_rng(7)
    Q, K = rng.normal(size=(5, 3)), rng.normal(size=(11, 3))
    key_for = lambda si, M, method: jax.random.fold_in(jax.random.key(3), si)  # noqa: E731
    summary, margins = lm.softmax_metrics_study(Q, K, key_for=key_for, seeds=3, sizes=(8,), n_lambda=4, per_query=True)
    p_true = jax.nn.softmax(Q @ K.T, axis=1)
    table = np.stack(
        [
            lm.distribution_metrics(
                p_true,
                lm.induced_distribution(
                    lm.softmax_kernel_estimates("Trig.", 8, key_for(si, 8, "Trig."), Q, K, n_lambda=4, radius=1.0)
                ),
            )["wasserstein"]
            for si in range(3)
        ]
    )
    by_seed, by_query = margins["Trig.", 8]["wasserstein"]
    np.testing.assert_allclose(by_seed, table.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(by_query, table.mean(axis=0), rtol=1e-12)
    mean, std = summary["Trig.", 8]["wasserstein"]
    assert mean == pytest.approx(by_seed.mean(), rel=1e-12) and std == pytest.approx(by_seed.std(), rel=1e-12)
    draws = [
        np.asarray(lm.softmax_kernel_estimates("Trig.", 8, key_for(si, 8, "Trig."), Q, K, n_lambda=4, radius=1.0))
        for si in range(3)
    ]
    for metric, per_query in (
        ("negative_fraction", lambda e: np.mean(e < 0, axis=1)),
        ("no_positive_fraction", lambda e: np.all(e <= 0, axis=1).astype(float)),
    ):
        table = np.stack([per_query(e) for e in draws])
        np.testing.assert_allclose(margins["Trig.", 8][metric][0], table.mean(axis=1), rtol=1e-12)
        np.testing.assert_allclose(margins["Trig.", 8][metric][1], table.mean(axis=0), rtol=1e-12)
    views = {"main": ("clipped", None), "signed": ("signed", None)}
    by_view = lm.softmax_metrics_study(
        Q, K, key_for=key_for, seeds=3, sizes=(8,), n_lambda=4, views=views, per_query=True
    )[1]
    np.testing.assert_allclose(by_view["main"]["Trig.", 8]["wasserstein"][1], by_query, rtol=1e-12)
    assert not np.allclose(by_view["signed"]["Trig.", 8]["wasserstein"][1], by_query)


def test_crossed_mean_se_on_a_worked_table():
    """A 3 × 4 table and a second one: the mean and var(row means)/R + var(column means)/n, and for the gap the seed
    terms of both plus the query term of the paired column differences."""
    a = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 5.0, 3.0], [0.0, 1.0, 3.0, 6.0]])
    b = np.array([[1.0, 1.0, 1.0, 2.0], [0.0, 2.0, 1.0, 1.0], [1.0, 1.0, 2.0, 2.0]])
    margins = lambda t: (t.mean(axis=1), t.mean(axis=0))  # noqa: E731
    mean, se = lm.crossed_mean_se(margins(a))
    assert mean == pytest.approx(a.mean())
    assert se**2 == pytest.approx(a.mean(1).var(ddof=1) / 3 + a.mean(0).var(ddof=1) / 4)
    gap, gap_se = lm.crossed_mean_se(margins(a), margins(b))
    assert gap == pytest.approx(a.mean() - b.mean())
    expected = a.mean(1).var(ddof=1) / 3 + b.mean(1).var(ddof=1) / 3 + (a.mean(0) - b.mean(0)).var(ddof=1) / 4
    assert gap_se**2 == pytest.approx(expected)


def test_crossed_mean_se_covers_seed_and_query_sampling():
    """Monte Carlo on two independent crossed tables sharing query effects, x(r, i) = o_i + s_r + e_ri: the gap's
    variance estimate averages at least the gaps' true variance (the interaction counted twice), and the query
    effect cancels in the gap only through the pairing. Fixed seed; 4 Monte Carlo s.e."""
    rng = np.random.default_rng(11)
    n, R, reps = 10, 6, 4000
    var_o, var_s, var_e, var_c = 1.0, 2.0, 3.0, 0.5  # var_c: a method-specific query effect, not cancelled
    gaps, estimates = [], []
    for _ in range(reps):
        shared = rng.normal(0, np.sqrt(var_o), (1, n))
        tables = [
            shared
            + rng.normal(0, np.sqrt(var_c), (1, n))
            + rng.normal(0, np.sqrt(var_s), (R, 1))
            + rng.normal(0, np.sqrt(var_e), (R, n))
            for _ in range(2)
        ]
        gap, se = lm.crossed_mean_se(*[(t.mean(axis=1), t.mean(axis=0)) for t in tables])
        gaps.append(gap)
        estimates.append(se**2)
    truth = 2 * (var_c / n + var_s / R + var_e / (n * R))
    estimates = np.asarray(estimates)
    assert abs(estimates.mean() - (truth + 2 * var_e / (n * R))) < 4 * estimates.std(ddof=1) / np.sqrt(reps)
    assert abs(np.var(gaps, ddof=1) - truth) < 4 * truth * np.sqrt(2 / (reps - 1))


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        ((np.ones(3),), None, "must be a pair"),
        ((np.ones(1), np.ones(4)), None, "at least 2 values"),
        ((np.ones(3), np.array([1.0, np.nan])), None, "finite"),
        ((np.ones(3), np.ones(4)), (np.ones(3), np.ones(5)), "same queries"),
    ],
)
def test_crossed_mean_se_refuses_bad_margins(a, b, match):
    with pytest.raises(ValueError, match=match):
        lm.crossed_mean_se(a, b)


def test_induced_distributions_on_a_worked_example():
    est = jnp.array([[2.0, -1.0, 1.0, 0.0]])
    np.testing.assert_allclose(lm.induced_distribution(est, "clipped"), [[2 / 3, 0, 1 / 3, 0]])
    np.testing.assert_allclose(lm.induced_distribution(est, "signed"), [[1.0, -0.5, 0.5, 0]])
    np.testing.assert_allclose(lm.induced_distribution(est, "absolute"), [[0.5, 0.25, 0.25, 0]])
    # the signed reading's "CDF" is 1, 0.5, 1, 1: against a point mass on the last class, KS = 1 (clipped: 1 too)
    # but W₁ differs; against a point mass on class 1 the signed gap reaches 1.5 > 1, impossible for distributions
    p = jnp.array([[0.0, 1.0, 0.0, 0.0]])
    assert float(lm.distribution_metrics(p, lm.induced_distribution(est, "signed"))["ks"][0]) == pytest.approx(1.0)
    assert (
        float(lm.distribution_metrics(jnp.array([[0, 0, 0, 1.0]]), lm.induced_distribution(est, "signed"))["ks"][0])
        == 1.0
    )
    # no positive estimate: no information, the uniform distribution (the signed reading of a zero row raises)
    np.testing.assert_allclose(
        lm.induced_distribution(jnp.array([[-1.0, -2.0], [1.0, -1.0]]), "clipped"), [[0.5, 0.5], [1, 0]]
    )
    with pytest.raises(ValueError, match="sums to 0"):
        lm.induced_distribution(jnp.array([[1.0, -1.0]]), "signed")
    with pytest.raises(ValueError, match="reading must be one of"):
        lm.induced_distribution(est, "softmax")


def test_distribution_metrics_follow_the_class_order():
    p, q = jnp.array([[1.0, 0.0, 0.0]]), jnp.array([[0.0, 0.0, 1.0]])
    assert float(lm.distribution_metrics(p, q)["wasserstein"][0]) == 2.0
    assert float(lm.distribution_metrics(p, q, order=[0, 2, 1])["wasserstein"][0]) == 1.0
    with pytest.raises(ValueError, match="order must be a permutation of the 3 classes"):
        lm.distribution_metrics(p, q, order=[0, 0, 1])


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


def test_relative_error_profile_is_the_softmax_weighted_closed_form_relative_mse():
    """Against rflib.moments' closed forms pair by pair (Lemma 2.2, Theorem 3.1 with Lemma 3.2 / Theorem F.1)."""
    rng = np.random.default_rng(6)
    Q, K = rng.normal(size=(7, 5)), 0.7 * rng.normal(size=(11, 5))
    M, n, radius = 32, 4, 1.3
    out = lm.relative_error_profile(Q, K, M, n_lambda=n, radius=radius, chunk=3)
    x, y = Q[:, None, :], K[None, :, :]
    p = np.asarray(jax.nn.softmax(Q @ K.T, axis=1))
    rel = lambda log_mse: np.asarray(moments.classic.log_relative_mse(log_mse, x, y))  # noqa: E731
    theta = np.arccos(np.clip((Q @ K.T) / np.outer(np.linalg.norm(Q, axis=1), np.linalg.norm(K, axis=1)), -1, 1))
    delta_sq = np.sum((x - y) ** 2, axis=-1)
    expected = {
        "Trig.": rel(moments.classic.log_mse_trig(x, y, M)),
        "FAVOR+": rel(moments.classic.log_mse_hyperbolic(x, y, M)),
        "Angular": rel(
            moments.hybrid.log_mse_bipolar_hybrid(x, y, M // n, moments.hybrid.angular_lambda_moments(theta, n))
        ),
        "Gaussian": rel(
            moments.hybrid.log_mse_bipolar_hybrid(
                x, y, M // n, moments.hybrid.normalized_gaussian_lambda_moments(delta_sq, n, 1 / radius, radius)
            )
        ),
    }
    for method, log_rel in expected.items():
        assert out[method] == pytest.approx(float(np.mean(np.sum(p * log_rel, axis=1))) / np.log(10), rel=1e-10)


def test_epoch_training_keeps_the_best_epoch_decays_on_stalls_and_round_trips_through_a_checkpoint(key, tmp_path):
    ids = np.tile(np.arange(12), 200)  # cyclic: learnable, and the validation loss soon stops improving
    params, log = lm.train_lstm_epochs(
        key,
        ids,
        ids[:400],
        vocab_size=12,
        hidden=16,
        n_layers=1,
        batch=4,
        bptt=10,
        epochs=6,
        learning_rate=2e-2,
        decay=0.5,
        dropout=0.1,
    )
    epochs = log["epochs"]
    assert len(epochs) == 6 and len(log["step_losses"]) == 6 * ((600 - 1) // 10)
    valid = [e["valid_loss"] for e in epochs]
    assert log["best_epoch"] - 1 == int(np.argmin(valid)) and valid[0] > valid[log["best_epoch"] - 1]
    for before, after in itertools.pairwise(epochs):  # the rate halves exactly after epochs that did not improve
        best_so_far = min((e["valid_loss"] for e in epochs[: before["epoch"] - 1]), default=np.inf)
        improved = before["valid_loss"] <= best_so_far - 1e-3  # the default min_gain
        assert after["learning_rate"] == pytest.approx(before["learning_rate"] * (1.0 if improved else 0.5))
    loss, _ = lm.evaluate(params, ids[:400], batch=10, bptt=10)
    assert loss == pytest.approx(valid[log["best_epoch"] - 1], rel=1e-6)  # the best epoch's parameters come back
    digest = lm.save_checkpoint(tmp_path / "m.npz", params)
    assert digest == lm.params_sha256(params)
    again = lm.load_checkpoint(tmp_path / "m.npz", sha256=digest)
    np.testing.assert_array_equal(again.embedding, params.embedding)
    with pytest.raises(ValueError, match="make ptb-lm"):
        lm.load_checkpoint(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="dropout must lie in"):
        lm.train_lstm_epochs(key, ids, ids, vocab_size=12, hidden=4, n_layers=1, batch=2, bptt=5, dropout=1.0)


def test_epoch_training_decays_below_the_minimum_gain_and_stops_below_the_minimum_rate(key):
    """With a minimum gain no epoch after the first can reach, the rate halves after every later epoch: 2e-2, 2e-2,
    1e-2, 5e-3, and the next halving (2.5e-3) falls below min_learning_rate = 3e-3: training stops after 4 of the 10
    epochs allowed."""
    ids = np.tile(np.arange(12), 200)
    small = dict(vocab_size=12, hidden=8, n_layers=1, batch=4, bptt=10, learning_rate=2e-2, decay=0.5, dropout=0.0)
    _, log = lm.train_lstm_epochs(key, ids, ids[:400], epochs=10, min_gain=50.0, min_learning_rate=3e-3, **small)
    assert [e["learning_rate"] for e in log["epochs"]] == pytest.approx([2e-2, 2e-2, 1e-2, 5e-3])
    assert log["stopped"] == "min_learning_rate"
    valid = [e["valid_perplexity"] for e in log["epochs"]]
    summary = lm.convergence_summary({**log, "recipe": {"min_learning_rate": 3e-3}})
    assert "ran 4 epochs" in summary and "fell below 0.003" in summary
    assert f"{100 * (valid[3] / valid[2] - 1):+.2f} %" in summary
    _, log = lm.train_lstm_epochs(key, ids, ids[:400], epochs=2, min_gain=0.0, **small)
    assert log["stopped"] == "epochs" and len(log["epochs"]) == 2
    assert "fixed number of steps" in lm.convergence_summary({"epochs": []})
    for bad in (dict(min_gain=-1.0), dict(min_gain=np.nan), dict(min_learning_rate=2e-2), dict(min_learning_rate=-1.0)):
        with pytest.raises(ValueError, match="min_gain|min_learning_rate"):
            lm.train_lstm_epochs(key, ids, ids, epochs=1, **{**small, **bad})


def test_checkpoint_reproduction_judges_quality_not_bits():
    """A retrain on another CPU type holds other bits but (if the recipe is sound) the same perplexity: the criterion
    compares ln-perplexities against the tolerance and reports bitwise agreement on the side."""
    committed = {"valid_perplexity": 114.6, "sha256": "a" * 64}
    same = lm.checkpoint_reproduction(dict(committed), committed, tolerance_nats=0.02)
    assert same == {"holds": True, "gap_nats": 0.0, "bitwise": True}
    close = lm.checkpoint_reproduction({"valid_perplexity": 116.0, "sha256": "b" * 64}, committed, 0.02)
    assert close["holds"] and not close["bitwise"]
    assert close["gap_nats"] == pytest.approx(np.log(116.0 / 114.6), rel=1e-12)
    far = lm.checkpoint_reproduction({"valid_perplexity": 117.0, "sha256": "a" * 64}, committed, 0.02)
    assert not far["holds"] and far["bitwise"]  # ln(117 / 114.6) = 0.0207 > 0.02
    with pytest.raises(ValueError, match="tolerance_nats"):
        lm.checkpoint_reproduction(committed, committed, tolerance_nats=0.0)
    with pytest.raises(ValueError, match="retrained_log lacks"):
        lm.checkpoint_reproduction({"valid_perplexity": 114.6}, committed, 0.02)
    with pytest.raises(ValueError, match="committed_log\\['valid_perplexity'\\]"):
        lm.checkpoint_reproduction(committed, {**committed, "valid_perplexity": np.nan}, 0.02)


def test_query_blind_levels_are_the_metrics_against_one_distribution_for_every_query():
    """Zero queries make p uniform over three classes: the uniform reference scores 0, and the point mass on the first
    class gives CDF gaps (2/3, 1/3, 0), so W₁ = 1 and KS = 2/3 exactly; p itself is softmax(Q Kᵀ)."""
    Q, K = np.zeros((4, 2)), np.arange(6.0).reshape(3, 2)
    levels = lm.query_blind_levels(Q, K, {"uniform": np.full(3, 1 / 3), "point": np.array([1.0, 0.0, 0.0])})
    assert levels["uniform"] == pytest.approx({"wasserstein": 0.0, "ks": 0.0}, abs=1e-15)
    assert levels["point"] == pytest.approx({"wasserstein": 1.0, "ks": 2 / 3}, rel=1e-14)
    Q = np.array([[0.3, -1.2]])
    logits = Q @ K.T
    np.testing.assert_allclose(lm.softmax_distribution(Q, K), np.exp(logits) / np.exp(logits).sum(), rtol=1e-14)
    for bad, match in (
        ({"neg": np.array([1.5, -0.5, 0.0])}, "must be a distribution"),
        ({"short": np.array([0.5, 0.5])}, "must be a distribution"),
        ({"nan": np.array([np.nan, 0.5, 0.5])}, "NaN or inf"),
    ):
        with pytest.raises(ValueError, match=match):
            lm.query_blind_levels(Q, K, bad)
    with pytest.raises(ValueError, match="columns"):
        lm.query_blind_levels(Q, K[:, :1], {"uniform": np.full(3, 1 / 3)})
