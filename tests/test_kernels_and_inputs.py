"""Exact kernels, and the clear errors every public function gives on bad input."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rflib import attention, features, kernels, moments, projections


def test_kernels_match_their_definitions(key):
    X = np.asarray(jax.random.normal(key, (4, 3)))
    Y = np.asarray(jax.random.normal(jax.random.fold_in(key, 1), (5, 3)))
    np.testing.assert_allclose(kernels.softmax_kernel(X, Y), np.exp(X @ Y.T), rtol=1e-13)
    sq = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(kernels.gaussian_kernel(X, Y, sigma=2.0), np.exp(-sq / 8), rtol=1e-12)
    cos = (X @ Y.T) / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(Y, axis=1))
    np.testing.assert_allclose(kernels.angular_kernel(X, Y), 1 - 2 * np.arccos(cos) / np.pi, rtol=1e-11)


def test_gaussian_kernel_is_the_softmax_kernel_times_norm_factors(key):
    X = jax.random.normal(key, (3, 4))
    lhs = kernels.gaussian_kernel(X, X)
    sq = jnp.sum(X**2, 1)
    rhs = jnp.exp(-sq / 2)[:, None] * kernels.softmax_kernel(X, X) * jnp.exp(-sq / 2)[None, :]
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


def test_angles_are_accurate_near_zero_and_pi():
    x = np.array([[1.0, 0.0]])
    tiny = 1e-9
    y = np.array([[np.cos(tiny), np.sin(tiny)]])
    assert float(kernels.angles(x, y)[0, 0]) == pytest.approx(tiny, rel=1e-6)
    assert float(kernels.angles(x, -y)[0, 0]) == pytest.approx(np.pi - tiny, rel=1e-15)


def test_pair_at_angle_has_the_asked_norms_and_angle():
    thetas = np.array([0.0, 0.4, 1.7, np.pi])
    x, y = kernels.pair_at_angle(thetas, 0.5, 2.0, d=5)
    assert x.shape == y.shape == (4, 5)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 0.5, rtol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 2.0, rtol=1e-15)
    np.testing.assert_allclose(np.diag(np.asarray(kernels.angles(x, y))), thetas, rtol=1e-13, atol=1e-15)
    x1, y1 = kernels.pair_at_angle(0.4, 1.5)
    assert x1.shape == y1.shape == (2,) and float(y1 @ y1) == pytest.approx(1.5**2, rel=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(theta=np.nan), "theta contains NaN"),
        (dict(theta=1.0, norm_x=-1.0), "norm_x must be ≥ 0"),
        (dict(theta=1.0, norm_y=np.inf), "norm_y must be finite"),
        (dict(theta=1.0, d=1), "d must be an integer in"),
        (dict(theta=1j), "theta"),
    ],
)
def test_pair_at_angle_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        kernels.pair_at_angle(**kwargs)


def test_angular_kernel_rejects_zero_vectors():
    with pytest.raises(ValueError, match="zero vectors"):
        kernels.angular_kernel(np.zeros((1, 2)), np.ones((1, 2)))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: kernels.softmax_kernel(np.ones(3), np.ones((2, 3))), "X must have 2 dimension"),
        (lambda: kernels.softmax_kernel(np.ones((2, 3)), np.ones((2, 4))), "Y must have 3 columns"),
        (lambda: kernels.gaussian_kernel(np.ones((2, 3)), np.ones((2, 3)), sigma=0.0), "sigma must be"),
        (lambda: kernels.softmax_kernel(np.full((2, 3), np.inf), np.ones((2, 3))), "X contains NaN or inf"),
        (lambda: features.positive(np.ones((4, 3)), np.ones((2, 5))), r"W must have shape \(m, 5\)"),
        (lambda: features.trig(np.ones((4, 3)), np.array([[np.nan, 1.0, 2.0]])), "X contains NaN"),
        (lambda: features.hyperbolic(np.ones((0, 3)), np.ones((2, 3))), "W must be non-empty"),
        (lambda: moments.classic.mse_trig(np.ones(3), np.ones(3), 0), "m must be a positive integer"),
        (lambda: moments.classic.mse_positive(np.ones(3), np.ones(4), 2), "y must have last axis 3"),
        (lambda: projections.gaussian(jax.random.key(0), 3, 0), "d must be a positive integer"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_checks_do_not_break_jit_and_vmap(key):
    """Finiteness checks are skipped on tracers, so the public maps still compose with jax transformations."""
    W = projections.gaussian(key, 4, 3)
    X = jax.random.normal(jax.random.fold_in(key, 1), (2, 3))
    np.testing.assert_allclose(jax.jit(features.positive)(W, X), features.positive(W, X), rtol=1e-14)
    fmap = partial(features.positive_features, W)
    out = jax.jit(lambda q: attention.linear_attention(q, X, X, fmap))(X)
    assert out.shape == (2, 3)


@pytest.mark.parametrize("dtype", [jnp.float64, jnp.float32, jnp.float16, jnp.bfloat16])
def test_the_finiteness_check_reads_host_arrays_without_compiling_and_finds_every_nan_and_inf(dtype, count_compiles):
    """The eager check of concrete input (``_checks.all_finite``) finds NaN and ±inf in numpy and JAX arrays of every
    float width, and compiles nothing for arrays in host memory (the eager jnp check it replaced compiled two
    primitives for every new shape: ≈ 75 ms each on the 2-core CPU)."""
    from rflib import _checks

    for bad in (np.nan, np.inf, -np.inf):
        values = jnp.asarray(np.array([[0.5, 1.0, 2.0], [3.0, bad, 4.0]]), dtype=dtype)
        assert not _checks.all_finite(values) and not _checks.all_finite(np.asarray(values))
    # shapes no other test uses, so that nothing is cached for them
    clean, dirty = jnp.full((7, 13, 3), 0.25, dtype=dtype), jnp.full((5, 11), np.nan, dtype=dtype)
    verdicts = []

    def check():
        verdicts.extend(_checks.all_finite(a) for a in (clean, np.asarray(clean), dirty))
        return clean

    assert count_compiles(check) == 0 and verdicts == [True, True, False]


def test_real_array_uses_strong_float_jax_arrays_as_they_are_and_converts_everything_else_as_before():
    """``_checks.real_array`` has a fast path for strong float16/32/64 JAX arrays (the common case of every eager
    attention call): they come back as the same object; weak-typed, numpy and integer input take the general path;
    and the fast path's dtypes are exactly ones :func:`_checks.real_dtype` keeps."""
    from rflib import _checks

    for dtype in _checks._KEPT_FLOATS:
        assert _checks.real_dtype("x", np.zeros(1, dtype)) == dtype
        strong = jnp.zeros((2, 3), dtype)
        assert _checks.real_array("x", strong, 2) is strong
    weak = _checks.real_array("x", jnp.asarray([1.0]), 1)
    assert not weak.weak_type and weak.dtype == jnp.result_type(float)
    assert _checks.real_array("x", np.zeros(2, np.float32), 1).dtype == np.float32
    assert _checks.real_array("x", np.arange(3), 1).dtype == jnp.result_type(float)
    with pytest.raises(ValueError, match="x must have 3 dimension"):
        _checks.real_array("x", jnp.zeros((2, 3), jnp.float32), 3)
    with pytest.raises(ValueError, match="x must be non-empty"):
        _checks.real_array("x", jnp.zeros((0, 3), jnp.float32), 2)
    with pytest.raises(ValueError, match="x must hold real numbers, got a bool"):
        _checks.real_array("x", jnp.zeros(2, bool), 1)
    with pytest.raises(ValueError, match=r"x is bfloat16: .* x\.astype\(jnp\.float32\)"):
        _checks.real_array("x", jnp.zeros(2, jnp.bfloat16), 1)
