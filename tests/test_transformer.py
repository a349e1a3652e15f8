"""The small patch Transformer used as FAVOR#'s attention testbed: shapes, patching, the exact and random-feature
attention paths, determinism and a training sanity check."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rflib import attention
from rflib.experiments import transformer as tf

BATCH = 64
CFG = tf.Config(image_side=8, patch=4, d_model=8, heads=2, layers=1, mlp=16, classes=3)


def images(n=12, seed=0):
    return np.random.default_rng(seed).uniform(size=(n, 64)).astype(np.float32)


def test_patchify_is_row_major_non_overlapping():
    img = np.arange(64, dtype=np.float32).reshape(1, 8, 8)
    patches = np.asarray(tf.patchify(img, CFG))
    assert patches.shape == (1, 4, 16)
    np.testing.assert_array_equal(patches[0, 1], img[0, :4, 4:].ravel())
    np.testing.assert_array_equal(patches[0, 2], img[0, 4:, :4].ravel())


def test_config_errors_are_named():
    with pytest.raises(ValueError, match="multiple of heads"):
        tf.init_params(jax.random.key(0), tf.Config(d_model=10, heads=4))
    with pytest.raises(ValueError, match="attention must be one of"):
        tf.logits(tf.init_params(jax.random.key(0), CFG), images(), CFG, "favor#")
    with pytest.raises(ValueError, match="features"):
        tf.logits(tf.init_params(jax.random.key(0), CFG), images(), CFG, "sderf")


def test_captured_attention_inputs_reproduce_the_softmax_block():
    params = tf.init_params(jax.random.key(1), CFG)
    ((q, k, v),) = tf.queries_keys_values(params, images(), CFG)
    assert q.shape == (12, 2, 4, 4)
    scale = 4**-0.25
    reference = jax.nn.softmax(jnp.einsum("bhld,bhsd->bhls", q, k) / 2.0, axis=-1) @ v
    np.testing.assert_allclose(
        np.asarray(attention.softmax_attention(q * scale, k * scale, v)), np.asarray(reference), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("kind", ["positive", "sderf", "saderf"])
def test_random_feature_models_approach_softmax_with_many_features(kind):
    """The mean logit error over six draws of ω falls by well over 3× from M = 4 to M = 4096 (the estimator's
    standard deviation alone would fall 32×). Single draws are not compared: with these queries/keys
    (‖q + k‖ up to ≈ 3 after scaling) FAVOR+'s error is heavy-tailed, and one draw at M = 4096 was 5× its median
    in float64 as in float32 — a property of positive features, not of the implementation."""
    params = tf.init_params(jax.random.key(2), CFG)
    exact = np.asarray(tf.logits(params, images(), CFG))

    def mean_error(M):
        draws = [tf.logits(params, images(), CFG, kind, features=M, key=jax.random.key(s)) for s in range(3, 9)]
        return np.mean([np.abs(np.asarray(d) - exact).mean() for d in draws])

    few = np.asarray(tf.logits(params, images(), CFG, kind, features=4, key=jax.random.key(3)))
    assert np.all(np.isfinite(few))
    assert mean_error(4096) < 0.3 * mean_error(4)
    again = np.asarray(tf.logits(params, images(), CFG, kind, features=4, key=jax.random.key(3)))
    np.testing.assert_array_equal(few, again)


def test_training_is_deterministic_and_reduces_the_loss():
    rng = np.random.default_rng(0)
    labels = rng.integers(3, size=96)
    x = rng.uniform(size=(96, 64)).astype(np.float32) * 0.2
    x[:, :16] += labels[:, None] * 0.5  # the class is readable from the first patch
    params = tf.init_params(jax.random.key(4), CFG)
    run = dict(
        cfg=CFG, kind="sderf", features=8, steps=30, batch=32, learning_rate=3e-3, key=jax.random.key(5), progress=False
    )
    trained, losses = tf.train(params, x, labels, **run)
    _, again = tf.train(params, x, labels, **run)
    np.testing.assert_array_equal(losses, again)
    assert losses[-5:].mean() < 0.7 * losses[:5].mean()
    assert tf.accuracy(trained, x, labels, CFG, "sderf", features=8, key=jax.random.key(6)) > 0.6


@pytest.mark.timeout(120, method="thread")  # a deadlock blocks in C, where the signal method cannot interrupt
def test_aderf_training_steps_finish():
    """Regression: ADERF's fit once ran two independent eigh calls, which XLA:CPU ran concurrently and which
    deadlocked inside the jitted training step of the MNIST-sized model (every runtime thread idle)."""
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(BATCH, 28 * 28)).astype(np.float32)
    labels = rng.integers(10, size=BATCH)
    params = tf.init_params(jax.random.key(7), tf.MNIST)
    _, losses = tf.train(
        params, x, labels, kind="aderf", features=16, steps=2, batch=BATCH, key=jax.random.key(8), progress=False
    )
    assert np.all(np.isfinite(losses)) and losses.shape == (2,)


def test_attention_tv_errors_are_total_variations_that_fall_with_the_number_of_features():
    captured = tf.queries_keys_values(tf.init_params(jax.random.key(9), CFG), images(), CFG)
    calls = []

    def key_for(layer, M, draw):
        calls.append((layer, M, draw))
        return jax.random.key(1000 * M + draw)

    kinds = ("positive", "sderf")
    mean, se, per_draw = tf.attention_tv_errors(captured, CFG, (2, 1024), 3, kinds, key_for, progress=False)
    assert calls == [(0, M, draw) for M in (2, 1024) for draw in range(3)]
    for kind in kinds:
        assert all(0 <= mean[kind, M] <= 1 and se[kind, M] >= 0 for M in (2, 1024))  # rows are distributions
        assert mean[kind, 1024] < 0.5 * mean[kind, 2]
        for M in (2, 1024):  # one layer: the per-draw values are the draws themselves, summarised by mean and s.e.
            assert per_draw[kind, M].shape == (3,) and mean[kind, M] == pytest.approx(per_draw[kind, M].mean())
            assert se[kind, M] == pytest.approx(per_draw[kind, M].std(ddof=1) / np.sqrt(3))
    with pytest.raises(ValueError, match="kinds must be one of"):
        tf.attention_tv_errors(captured, CFG, (2,), 1, ("softmax",), key_for, progress=False)


def test_captured_log_relative_variance_of_posrf_is_its_closed_form():
    """PosRF: log(Var/K²) = log expm1(‖q + k‖²) per pair, q and k scaled by d_h^{−1/4}; mean over pairs, then over
    layers, the first ``images`` images and every head."""
    captured = tf.queries_keys_values(tf.init_params(jax.random.key(10), CFG), images(), CFG)
    out = tf.captured_log_relative_variance(captured, CFG, 2, ("positive", "gerf"))
    scale = CFG.head_dim**-0.25
    expected = []
    for q, k, _ in captured:
        q, k = np.asarray(q, np.float64) * scale, np.asarray(k, np.float64) * scale
        for b in range(2):
            for h in range(CFG.heads):
                s = np.sum((q[b, h][:, None] + k[b, h][None]) ** 2, -1)
                expected.append(np.mean(np.log(np.expm1(s))))
    assert out["positive"] == pytest.approx(np.mean(expected), rel=1e-5)  # float32 inputs
    assert out["gerf"] <= out["positive"] + 1e-6
    assert tf.captured_log_relative_variance(captured, CFG, 500, ("positive",))["positive"] == pytest.approx(
        tf.captured_log_relative_variance(captured, CFG, 12, ("positive",))["positive"], rel=1e-12
    )  # more images than captured: all of them


def test_accuracy_over_draws_is_the_mean_and_spread_of_single_draw_accuracies():
    params = tf.init_params(jax.random.key(11), CFG)
    labels = np.arange(12) % 3
    keys = [jax.random.key(s) for s in (1, 2, 3)]
    single = [tf.accuracy(params, images(), labels, CFG, "gerf", features=4, key=k) for k in keys]
    mean, sd = tf.accuracy_over_draws(params, images(), labels, CFG, "gerf", 4, keys)
    assert mean == pytest.approx(np.mean(single)) and sd == pytest.approx(np.std(single, ddof=1))
    assert np.isnan(tf.accuracy_over_draws(params, images(), labels, CFG, "gerf", 4, keys[:1])[1])
    with pytest.raises(ValueError, match="at least one key"):
        tf.accuracy_over_draws(params, images(), labels, CFG, "gerf", 4, [])


def test_warm_start_finetuning_starts_every_model_from_the_base_with_the_named_keys():
    rng = np.random.default_rng(2)
    x, labels = images(64, seed=3), rng.integers(3, size=64)
    base = tf.init_params(jax.random.key(12), CFG)
    calls = []

    def key_for(name):
        calls.append(name)
        return jax.random.key(7 if name == "softmax" else 100 + name)

    eval_keys = [jax.random.key(20)]
    run = dict(cfg=CFG, steps=2, batch=32, learning_rate=1e-3)
    rows = tf.warm_start_finetuning(
        base,
        (x, labels),
        (x[:24], labels[:24]),
        Ms=(4,),
        kinds=("positive",),
        key_for=key_for,
        eval_keys=eval_keys,
        progress=False,
        **run,
    )
    assert calls == ["softmax", 4] and list(rows) == [("softmax", None), ("positive", 4)]
    assert rows["softmax", None]["zero_shot"] == tf.accuracy(base, x[:24], labels[:24], CFG)
    tuned, _ = tf.train(base, x, labels, kind="positive", features=4, key=jax.random.key(104), progress=False, **run)
    row = rows["positive", 4]
    assert row["fine_tuned"] == tf.accuracy(tuned, x[:24], labels[:24], CFG, "positive", features=4, key=eval_keys[0])
    assert row["zero_shot"] == tf.accuracy(base, x[:24], labels[:24], CFG, "positive", features=4, key=eval_keys[0])
    assert np.isnan(row["draw_sd"]) and np.isnan(row["zero_shot_sd"]) and np.isnan(row["fine_tuned_sd"])  # one draw
    with pytest.raises(ValueError, match="kinds must be one of"):
        tf.warm_start_finetuning(
            base, (x, labels), (x, labels), Ms=(4,), kinds=("softmax",), key_for=key_for, eval_keys=eval_keys, **run
        )
