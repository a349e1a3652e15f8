"""rflib.fastmath.sincos: the float32 CPU fast path against float64 numpy, and the library fallbacks."""

import jax
import jax.numpy as jnp
import numpy as np

from rflib import fastmath


def _grid():
    quarter_pi_multiples = np.float32(np.pi / 4) * np.arange(-10_400, 10_400)
    return np.concatenate(
        [
            np.linspace(-fastmath.FAST_LIMIT, fastmath.FAST_LIMIT, 1_000_001),
            np.linspace(-10, 10, 100_001),
            quarter_pi_multiples,
            np.nextafter(quarter_pi_multiples, np.float32(np.inf)),
            [0.0, -0.0, 1e-30, -1e-30],
        ]
    ).astype(np.float32)


def test_float32_fast_path_is_accurate_to_1e_7_absolute():
    x = _grid()
    assert np.abs(x).max() <= fastmath.FAST_LIMIT  # so the fast path is the one taken
    s, c = jax.jit(fastmath.sincos)(x)
    assert s.dtype == c.dtype == jnp.float32
    x64 = x.astype(np.float64)
    assert np.abs(np.asarray(s, np.float64) - np.sin(x64)).max() < 1e-7
    assert np.abs(np.asarray(c, np.float64) - np.cos(x64)).max() < 1e-7
    # the path really is the reduced one (libm rounds correctly; the polynomial does not everywhere)
    assert not np.array_equal(np.asarray(s), np.asarray(jnp.sin(x)))


def test_large_arguments_and_float64_use_the_library_functions():
    big = np.linspace(-1e5, 1e5, 10_001).astype(np.float32)
    s, c = jax.jit(fastmath.sincos)(big)
    np.testing.assert_array_equal(np.asarray(s), np.asarray(jax.jit(jnp.sin)(big)))
    np.testing.assert_array_equal(np.asarray(c), np.asarray(jax.jit(jnp.cos)(big)))
    x64 = np.linspace(-50, 50, 1001)
    s64, c64 = fastmath.sincos(x64)
    assert s64.dtype == jnp.float64
    np.testing.assert_array_equal(np.asarray(s64), np.asarray(jnp.sin(x64)))
    np.testing.assert_array_equal(np.asarray(fastmath.cos(x64)), np.asarray(jnp.cos(x64)))


def test_sincos_columns_is_sincos_joined_by_columns_on_every_path():
    """[sin x | cos x] from the fast float32 path, the large-argument fallback and float64: exactly the
    concatenation of :func:`fastmath.sincos`'s outputs, rows kept; 1-D input is refused."""
    small = np.linspace(-20, 20, 3 * 64).astype(np.float32).reshape(3, 64)
    big = (1e4 * small).astype(np.float32)
    for x in (small, big, small.astype(np.float64)):
        joined = jax.jit(fastmath.sincos_columns)(x)
        s, c = jax.jit(fastmath.sincos)(x)
        assert joined.shape == (3, 128) and joined.dtype == x.dtype
        np.testing.assert_array_equal(np.asarray(joined), np.concatenate([np.asarray(s), np.asarray(c)], axis=1))
    with np.testing.assert_raises_regex(ValueError, "x must be 2-D"):
        fastmath.sincos_columns(small.ravel())
