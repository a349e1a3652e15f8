"""rflib.experiments.families: every estimator family at one budget of 64 features (notebook 00 §5, README)."""

import math
import zlib

import jax
import numpy as np
import pytest

from rflib import kernels, projections
from rflib.experiments import families
from rflib.features import dense_exp

D, F = 5, 64


def _inputs(key, n=3):
    kx, ky, kv = jax.random.split(key, 3)
    return 0.3 * jax.random.normal(kx, (n, D)), 0.3 * jax.random.normal(ky, (n, D)), jax.random.normal(kv, (n, 2))


def _draw(key):
    k1, k2, k3, k4 = jax.random.split(key, 4)
    W = projections.sample("orthogonal", k1, F, D)
    W_trig, T = projections.sample("orthogonal", k3, 4, D), projections.sample("iid", k4, 3, D)
    return W, projections.sample("givens", k2, F, D), W_trig, T


def _draw_zero(key_for, d):
    """The (law, key, m, d) of draw 0 as family_errors documents them."""
    return [
        ("orthogonal", key_for("W", 0), F, d),
        ("givens", key_for("givens", 0), F, d),
        ("orthogonal", key_for("hybrid trig", 0), 4, d),
        ("iid", key_for("hybrid sign", 0), 3, d),
    ]


def test_every_family_has_64_features_and_only_png_estimates_the_angular_kernel(key):
    X, Y, _ = _inputs(key)
    built = families.every_family(*_draw(key), sderf=dense_exp.fit("sderf", X, Y))
    assert len(built) == 8
    for name, (est, _) in built.items():
        assert est.query_features(X).body.shape[1] == F and est.key_features(Y).body.shape[1] == F, name
    assert [name for name, (_, kernel) in built.items() if kernel == "angular"] == [
        "PNG sgn on KAMA Givens rows (KAMA-NNs eq 2)"
    ]


def test_every_family_on_haar_rows_is_unbiased_for_its_kernel(key):
    """Every estimator whose rows are marginally Gaussian averages to the softmax kernel within 5 s.e. Excluded: the
    Givens rows (not Haar). The angular hybrid's sign projections are drawn independently of its bases, as HRF
    Theorem 3.1 requires, so it is unbiased too."""
    X, Y, _ = _inputs(key)
    sderf = dense_exp.fit("sderf", X, Y)
    K = np.asarray(kernels.softmax_kernel(X, Y))
    draws = [families.every_family(*_draw(jax.random.fold_in(key, i)), sderf=sderf) for i in range(150)]
    for name in draws[0]:
        if "KAMA" in name:
            continue
        est = np.stack([np.asarray(d[name][0].estimate(X, Y)) for d in draws])
        se = est.std(0) / math.sqrt(len(draws))
        assert np.all(np.abs(est.mean(0) - K) <= 5 * se + 1e-12), name


def test_family_errors_are_deterministic_with_nan_attention_error_only_for_the_angular_family(key):
    X, Y, V = _inputs(key, n=6)

    asked = []

    def key_for(kind, draw):
        asked.append((kind, draw))
        return jax.random.fold_in(jax.random.fold_in(key, zlib.crc32(kind.encode())), draw)

    errors = families.family_errors(key_for, X, Y, V, 2, features=F)
    assert set(asked) == {(k, i) for i in (0, 1) for k in ("W", "givens", "hybrid sign", "hybrid trig")}
    assert errors == families.family_errors(key_for, X, Y, V, 2, features=F)
    W, W_givens, W_trig, T = (projections.sample(*a) for a in _draw_zero(key_for, X.shape[1]))
    est = families.every_family(W, W_givens, W_trig, T, sderf=dense_exp.fit("sderf", X, Y))
    K = np.asarray(kernels.softmax_kernel(X, Y))
    for name, rows in errors.items():  # draw 0 is the estimator built from the named streams
        if "PNG" not in name:
            expected = np.linalg.norm(np.asarray(est[name][0].estimate(X, Y)) - K) / np.linalg.norm(K)
            np.testing.assert_allclose(rows[0][0], expected, rtol=1e-10, err_msg=name)
    for name, rows in errors.items():
        assert len(rows) == 2 and all(np.isfinite(k) and k > 0 for k, _ in rows), name
        assert all(math.isnan(a) for _, a in rows) == ("PNG" in name), name
    with pytest.raises(ValueError, match="features"):
        families.family_errors(key_for, X, Y, V, 1, features=32)
    with pytest.raises(ValueError, match="T must have shape"):
        families.every_family(
            W, W_givens, W_trig, T[:2], sderf=dense_exp.fit("sderf", X, Y)
        )  # the angular hybrid has 4·4·(3 + 1) = 64
