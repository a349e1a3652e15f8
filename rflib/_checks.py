"""Input validation shared by every public function.

Each check raises ``ValueError`` naming the offending argument and saying what is expected, so that bad input
fails loudly at the call site instead of turning into a silent NaN deep inside a jitted computation.
Finiteness is checked only on concrete arrays: inside ``jax.jit`` the values are tracers and cannot be read.
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _all_finite(arr) -> bool:
    # Evaluated eagerly even while a surrounding function is being traced (arr is a closed-over constant then).
    with jax.ensure_compile_time_eval():
        return bool(jnp.all(jnp.isfinite(arr)))


def positive_int(name: str, value) -> int:
    """Return ``value`` as an int, or raise if it is not an integer ≥ 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer (≥ 1), got {value!r}")
    return int(value)


def positive_float(name: str, value) -> float:
    """Return ``value`` as a float, or raise if it is not a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def finite_array(name: str, x, ndim: int | tuple[int, ...]) -> jax.Array:
    """Convert ``x`` to a floating JAX array and check its rank and (when concrete) that it is finite.

    Args:
      name: argument name used in error messages.
      x: array-like.
      ndim: allowed rank or ranks.
    """
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    concrete = _is_concrete(x)  # a numpy constant becomes a tracer once converted inside jit: check it first
    arr = jnp.asarray(x)
    if not jnp.issubdtype(arr.dtype, jnp.floating):
        arr = arr.astype(jnp.result_type(float))
    if arr.ndim not in allowed:
        want = " or ".join(str(a) for a in allowed)
        raise ValueError(f"{name} must have {want} dimension(s), got shape {arr.shape}")
    if any(s == 0 for s in arr.shape):
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if concrete and not _all_finite(x if isinstance(x, jax.Array) else np.asarray(x)):
        raise ValueError(f"{name} contains NaN or inf; clean or rescale the input first")
    return arr


def positive_entries(name: str, x) -> None:
    """Raise if a concrete ``x`` has an entry ≤ 0 (checked before any conversion, so it also works under jit)."""
    if _is_concrete(x):
        with jax.ensure_compile_time_eval():
            ok = bool(np.all(np.asarray(x) > 0))
        if not ok:
            raise ValueError(f"{name} must have only positive entries")


def points(name: str, x, dim: int | None = None) -> jax.Array:
    """Check a set of points ``x: (n, d)`` (rows are points); optionally require ``d == dim``."""
    arr = finite_array(name, x, 2)
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} must have {dim} columns (one per input dimension), got shape {arr.shape}")
    return arr


def vectors(name: str, x, dim: int | None = None) -> jax.Array:
    """Check ``x: (..., d)`` with at least one axis; optionally require the last axis to be ``dim``."""
    arr = jnp.asarray(x)
    arr = finite_array(name, arr, arr.ndim if arr.ndim >= 1 else 1)
    if dim is not None and arr.shape[-1] != dim:
        raise ValueError(f"{name} must have last axis {dim}, got shape {arr.shape}")
    return arr


def projection_matrix(name: str, w, dim: int) -> jax.Array:
    """Check a projection matrix ``w: (m, d)`` whose rows are the random directions ω_i, with ``d == dim``."""
    arr = finite_array(name, w, 2)
    if arr.shape[1] != dim:
        raise ValueError(
            f"{name} must have shape (m, {dim}) to project {dim}-dimensional inputs, got shape {arr.shape}"
        )
    return arr


def nonzero_rows(name: str, x) -> None:
    """Raise if a (concrete) ``x: (n, d)`` has an all-zero row, e.g. where an angle would be undefined."""
    if _is_concrete(x):
        with jax.ensure_compile_time_eval():
            has_zero = bool(jnp.any(jnp.all(x == 0, axis=-1)))
        if has_zero:
            raise ValueError(f"{name} has a zero row: angles are undefined for zero vectors")
