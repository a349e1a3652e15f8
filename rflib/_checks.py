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


def is_concrete(x) -> bool:
    """True for a value, False for a tracer (inside jit/grad/vmap, where value checks cannot run)."""
    return not isinstance(x, jax.core.Tracer)


def all_finite(arr) -> bool:
    """No NaN or inf in ``arr`` (a concrete array). Arrays in host memory are read by numpy: an eager ``jnp`` check
    compiles two primitives for every new shape (≈ 70–95 ms each time on the 2-core CPU); an array on an accelerator
    is reduced there, so that it never travels to the host."""
    if isinstance(arr, jax.Array) and any(device.platform != "cpu" for device in arr.devices()):
        # evaluated eagerly even while a surrounding function is being traced (arr is a closed-over constant then)
        with jax.ensure_compile_time_eval():
            return bool(jnp.all(jnp.isfinite(arr)))
    return bool(np.isfinite(np.asarray(arr)).all())


def finite_result(caller: str, out, cause: str):
    """``out`` of an eager call, or a ``ValueError`` naming ``caller`` and ``cause`` if it holds NaN or inf: for
    results that are finite whenever the (checked) inputs are and the dtype's range allows, so that a non-finite one
    is an overflow to report, never a value to pass on. Nothing under ``jit``, where ``out`` is a tracer."""
    if is_concrete(out) and not all_finite(out):
        raise ValueError(f"{caller}: the result is not finite in {out.dtype}: {cause}")
    return out


def positive_int(name: str, value) -> int:
    """Return ``value`` as an int, or raise if it is not an integer ≥ 1."""
    return integer(name, value, low=1)


def positive_float(name: str, value) -> float:
    """Return ``value`` as a float, or raise if it is not a finite number > 0."""
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, numbers.Real)
        or not np.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r:.60}")
    return float(value)


def _dtype_of(name: str, x) -> np.dtype:
    """The dtype ``x`` would have as an array, without converting a tracer; raise for non-numeric input."""
    if isinstance(x, str | bytes):
        raise ValueError(f"{name} must be a numeric array, got a string {x!r:.40}")
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(x).dtype
        except (TypeError, ValueError) as err:  # ragged nested lists
            raise ValueError(f"{name} must be a rectangular numeric array: {err}") from None
    return np.dtype(dtype)


def real_dtype(name: str, x):
    """The floating dtype ``x`` is computed in: floats keep theirs, integers become the default float; bool, complex,
    string and object input is refused (a silent cast would drop the imaginary part or read True as 1.0), and so are
    JAX's low-precision floats (bfloat16, float8), with the cast that fixes it."""
    dtype = _dtype_of(name, x)
    if dtype == np.bool_:
        raise ValueError(f"{name} must hold real numbers, got a bool array; convert it explicitly (x.astype(float))")
    if np.issubdtype(dtype, np.complexfloating):
        raise ValueError(f"{name} must be real, got {dtype}: pass the real and imaginary parts separately")
    if np.issubdtype(dtype, np.floating):
        return jnp.dtype(dtype) if dtype.itemsize <= 8 else jnp.result_type(float)
    if np.issubdtype(dtype, np.integer):
        return jnp.result_type(float)
    if jnp.issubdtype(dtype, jnp.floating):  # bfloat16, float8: floats to JAX, not to numpy
        raise ValueError(
            f"{name} is {dtype}: rflib computes in float16, float32 or float64 (its stabilisers and tolerances are not "
            f"checked in {dtype}); cast it first, e.g. {name}.astype(jnp.float32)"
        )
    raise ValueError(f"{name} must be a real numeric array, got dtype {dtype}")


#: The floating dtypes :func:`real_dtype` returns unchanged: a strong JAX array of one of them is used as it is, its
#: dtype not inspected further.
_KEPT_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def real_array(name: str, x, ndim: int | tuple[int, ...]) -> jax.Array:
    """:func:`finite_array` without the value check: dtype, rank and non-emptiness only, never a device round trip.
    For entry points that screen finiteness inside their compiled function (:func:`sums_finite`, then
    :func:`raise_for_nonfinite_input` only when the screen fails)."""
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    # a JAX array of the right dtype is used as it is: jnp.asarray would dispatch a copy that the compiled call
    # waits for (≈ 0.05 ms an argument on the CPU, measured in an eager linear_attention call at L = 1 024); a
    # strong float32/float64/float16 JAX array, the common case, skips the dtype inspection (what it would conclude)
    if isinstance(x, jax.Array) and x.dtype in _KEPT_FLOATS and not x.weak_type:  # weak types would not promote alike
        arr = x
    else:
        dtype = real_dtype(name, x)
        reuse = isinstance(x, jax.Array) and x.dtype == dtype and not x.weak_type
        arr = x if reuse else jnp.asarray(x, dtype=dtype)
    if arr.ndim not in allowed:
        want = " or ".join(str(a) for a in allowed)
        raise ValueError(f"{name} must have {want} dimension(s), got shape {arr.shape}")
    if 0 in arr.shape:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    return arr


def finite_array(name: str, x, ndim: int | tuple[int, ...]) -> jax.Array:
    """Convert ``x`` to a floating JAX array and check its dtype, rank and (when concrete) that it is finite.

    Floats keep their precision, integers are promoted to the default float (float64 with x64 enabled); bool,
    complex, string and object input raises. Under ``jit`` only the dtype and shape are checked (free).

    Args:
      name: argument name used in error messages (the caller's parameter name).
      x: array-like.
      ndim: allowed rank or ranks.
    """
    concrete = is_concrete(x)  # a numpy constant becomes a tracer once converted inside jit: check it first
    arr = real_array(name, x, ndim)
    if concrete and not all_finite(x if isinstance(x, jax.Array) else np.asarray(x, dtype=arr.dtype)):
        raise ValueError(f"{name} contains NaN or inf; clean or rescale the input first")
    return arr


def finite_flags(*arrays) -> jax.Array:
    """(len(arrays),) bool: whether each array is free of NaN and inf, computed inside a compiled function."""
    return jnp.stack([jnp.all(jnp.isfinite(a)) for a in arrays])


def sums_finite(*arrays) -> jax.Array:
    """() bool, inside a compiled function: whether Σ of every array's sums is finite. A NaN or inf anywhere makes it
    False (a sum holding one is never finite), and only a sum that overflows gives a false alarm: the cheap screen
    before :func:`raise_for_nonfinite_input` names the culprit. One add-reduction per array, fused with its other
    reads: at L = 1 024 it added ≈ 0.05 ms to an attention call where one ``isfinite`` pass per input added ≈ 0.3 ms
    (2-core CPU). Half-precision arrays are summed in float32, so that their sums do not overflow at 65 504."""
    return jnp.isfinite(sum(jnp.sum(a, dtype=jnp.promote_types(a.dtype, jnp.float32)) for a in arrays))


@jax.jit
def _finite_flags_compiled(arrays):
    return finite_flags(*arrays)


def raise_for_nonfinite_input(inputs: dict[str, jax.Array]) -> None:
    """Raise for the first of ``inputs`` (name → concrete array) that has a NaN or inf; return if none has. The
    exact scan behind :func:`sums_finite`, run only when that screen failed."""
    raise_unless_finite(_finite_flags_compiled(tuple(inputs.values())), tuple(inputs))


def raise_unless_finite(flags, names: tuple[str, ...]) -> None:
    """Raise for the first input whose flag (from :func:`finite_flags`) is False, reading all flags in one transfer;
    nothing under ``jit`` (the flags are tracers then). ``names`` name the flagged inputs in order."""
    if not is_concrete(flags):
        return
    for name, ok in zip(names, np.asarray(flags), strict=True):
        if not ok:
            raise ValueError(f"{name} contains NaN or inf; clean or rescale the input first")


def square_matrix(name: str, A, d: int, *, invertible: bool = False) -> jax.Array:
    """A finite real or complex (d, d) matrix (bool, string and object arrays refused); with ``invertible``, also a
    condition number ≤ 1e12 (an inverse is taken: a singular A gave NaN downstream). Values are checked only when
    concrete."""
    dtype = _dtype_of(name, A)
    if dtype == np.bool_ or not np.issubdtype(dtype, np.number):
        raise ValueError(f"{name} must hold real or complex numbers, got dtype {dtype}")
    arr = jnp.asarray(A)
    if arr.shape != (d, d):
        raise ValueError(f"{name} must be a ({d}, {d}) matrix to act on {d}-dimensional inputs, got shape {arr.shape}")
    if is_concrete(arr):
        if not all_finite(arr):
            raise ValueError(f"{name} contains NaN or inf")
        if invertible:
            cond = float(np.linalg.cond(np.asarray(arr)))
            if not np.isfinite(cond) or cond > 1e12:
                raise ValueError(f"{name} must be invertible (condition number {cond:.3g}); its inverse is used")
    return arr


def finite_numpy(name: str, x, ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """:func:`finite_array` for the numpy (float64) modules: a finite float64 ``np.ndarray`` of an allowed rank."""
    if not is_concrete(x):
        raise ValueError(f"{name} must be a concrete array (this function runs in numpy, not under jax.jit)")
    real_dtype(name, x)
    arr = np.asarray(x, dtype=np.float64)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise ValueError(f"{name} must have {want} dimension(s), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf; clean or rescale the input first")
    return arr


def real_number(
    name: str, value, *, low=None, high=None, low_open: bool = False, high_open: bool = False, what: str = ""
) -> float:
    """Return ``value`` as a float, or raise if it is not a finite real number in the given (closed by default)
    range. Concrete values only: a traced value is returned unchecked (checks stay free under ``jit``)."""
    if not is_concrete(value):
        return value
    if isinstance(value, bool | np.bool_ | str | bytes) or np.ndim(value) != 0:
        raise ValueError(f"{name} must be a real number, got {value!r:.60}")
    dtype = np.asarray(value).dtype
    if not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r:.60} of type {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    suffix = f" ({what})" if what else ""
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '≥'} {low}{suffix}, got {value}")
    if high is not None and (value > high or (high_open and value == high)):
        raise ValueError(f"{name} must be {'<' if high_open else '≤'} {high}{suffix}, got {value}")
    return value


def integer(name: str, value, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not an integer in [low, high] (bounds optional)."""
    integral = isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)
    if not integral or (low is not None and value < low) or (high is not None and value > high):
        if low == 1 and high is None:
            wanted = "a positive integer (≥ 1)"
        elif low is None and high is None:
            wanted = "an integer"
        else:
            wanted = f"an integer in [{'-∞' if low is None else low}, {'∞' if high is None else high}]"
        raise ValueError(f"{name} must be {wanted}, got {value!r:.60}")
    return int(value)


def callable_arg(name: str, value, returns: str = "a random key or generator"):
    """Return ``value`` if it is callable (the notebooks pass named key streams such as
    ``partial(run.keys, "purpose")``), else raise naming it and what it should return."""
    if not callable(value):
        raise ValueError(f"{name} must be a callable returning {returns}, got {type(value).__name__}")
    return value


def one_of(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise naming them."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r:.60}")
    return value


def positive_entries(name: str, x) -> None:
    """Raise if a concrete ``x`` has an entry ≤ 0 (checked before any conversion, so it also works under jit)."""
    if is_concrete(x):
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
    real_dtype(name, x)
    rank = jnp.ndim(x)
    arr = finite_array(name, x, rank if rank >= 1 else 1)
    if dim is not None and arr.shape[-1] != dim:
        raise ValueError(f"{name} must have last axis {dim}, got shape {arr.shape}")
    return arr


def elementwise(name: str, x) -> jax.Array:
    """Check a real, finite (when concrete) scalar or array of any shape, for functions applied elementwise."""
    real_dtype(name, x)
    return finite_array(name, x, jnp.ndim(x))


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
    if is_concrete(x):
        with jax.ensure_compile_time_eval():
            has_zero = bool(jnp.any(jnp.all(x == 0, axis=-1)))
        if has_zero:
            raise ValueError(f"{name} has a zero row: angles are undefined for zero vectors")


def values_in_range(
    name: str, x, *, low=None, high=None, low_open: bool = False, high_open: bool = False, what: str = ""
) -> None:
    """Raise if a concrete array ``x`` has an entry below ``low`` or above ``high`` (the bounds themselves are
    excluded when ``low_open`` / ``high_open``). A no-op under ``jit`` (tracers cannot be read), so it is free there."""
    if not is_concrete(x):
        return
    with jax.ensure_compile_time_eval():
        arr = np.asarray(x)
        below = low is not None and bool(np.any(arr <= low if low_open else arr < low))
        above = high is not None and bool(np.any(arr >= high if high_open else arr > high))
    if below or above:
        lo = "" if low is None else f"{low} {'<' if low_open else '≤'} "
        hi = "" if high is None else f" {'<' if high_open else '≤'} {high}"
        suffix = f" ({what})" if what else ""
        raise ValueError(
            f"{name} must satisfy {lo}{name}{hi}{suffix}, got values in [{arr.min():.6g}, {arr.max():.6g}]"
        )
