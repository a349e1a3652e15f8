"""Products of Givens rotations (KAMA-NNs, Choromanski et al. AISTATS 2019 §2, §5).

A Givens rotation G_{I,J}^Θ (paper §2) is the identity except for G[I,I] = G[J,J] = cos Θ, G[J,I] = sin Θ and
G[I,J] = −sin Θ. A KAMA matrix is P = G₁ G₂ ⋯ G_k. It is never formed to be applied: :func:`apply` rotates two
coordinates per rotation, O(k) work per vector (6 flops per rotation), vectorised over a batch of vectors.

Two laws of random products:

- :func:`random_product` — **the paper's law** (Kac's random walk): k independent rotations, each with a uniform pair
  I ≠ J (I uniform, J = I + U mod d with U uniform on {1, …, d−1}) and Θ ~ Unif[0, 2π). Pairs may overlap.
- :func:`random_layers` — **a fast variant, not the paper's law**: layers of d/2 *disjoint* pairs (a uniformly random
  perfect matching per layer), so a whole layer is applied as one vectorised gather/scatter.

Rectangular layers (§2.3): for d_out ≤ d_in, W = diag(s) · P[:d_out, :] with P of size d_in; for d_out > d_in,
W = P[:, :d_in] · diag(s) with P of size d_out. Indices are 0-based; Θ is in radians; logs are natural.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks


class GivensProduct(NamedTuple):
    """P = G_{I₀,J₀}^{Θ₀} ⋯ G_{I_{k−1},J_{k−1}}^{Θ_{k−1}} acting on ℝ^d.  first, second: (k,) int; angles: (k,)."""

    first: jax.Array
    second: jax.Array
    angles: jax.Array
    d: int


class GivensLayers(NamedTuple):
    """Layers of disjoint rotations; layer 0 is the leftmost factor.  first, second, angles: (layers, d // 2)."""

    first: jax.Array
    second: jax.Array
    angles: jax.Array
    d: int


def givens_matrix(d: int, i: int, j: int, theta, *, dtype=None) -> jax.Array:
    """The dense d×d rotation G_{i,j}^θ of paper §2 (for tests and small illustrations).  Returns (d, d)."""
    d = _checks.positive_int("d", d)
    i, j = _distinct_indices(i, j, d)
    theta = _checks.real_number("theta", theta)
    if dtype is not None and not jnp.issubdtype(dtype, jnp.floating):
        raise ValueError(f"dtype must be a floating dtype (cos θ and sin θ would be truncated), got {jnp.dtype(dtype)}")
    c, s = jnp.cos(theta), jnp.sin(theta)
    G = jnp.eye(d, dtype=dtype or jnp.result_type(float))
    return G.at[i, i].set(c).at[j, j].set(c).at[j, i].set(s).at[i, j].set(-s)


def _distinct_indices(i, j, d: int) -> tuple[int, int]:
    i = _checks.integer("i", i, low=0, high=d - 1)
    j = _checks.integer("j", j, low=0, high=d - 1)
    if i == j:
        raise ValueError(f"i and j must be distinct (a rotation acts on a plane), got i = j = {i}")
    return i, j


def rotations_for(d: int, c: float = 5.0) -> int:
    """k = ⌈c · d · ln d⌉ rotations (the experiments' k = 5 d log d uses c = 5; Definition 1's 𝒢_C has c = C/2)."""
    d = _checks.positive_int("d", d)
    if d < 2:
        raise ValueError(f"Givens rotations need d ≥ 2, got d={d}")
    c = _checks.positive_float("c", c)
    return max(1, math.ceil(c * d * math.log(d)))


def random_pairs(key, k: int, d: int) -> tuple[jax.Array, jax.Array]:
    """k independent pairs, uniform over ordered pairs (I, J) with I ≠ J.  Returns (first, second): (k,) each."""
    k = _checks.positive_int("k", k)
    d = _checks.integer("d", d, low=2)
    k_i, k_u = jax.random.split(key)
    first = jax.random.randint(k_i, (k,), 0, d)
    second = (first + jax.random.randint(k_u, (k,), 1, d)) % d
    return first, second


def random_product(key, k: int, d: int, *, dtype=None) -> GivensProduct:
    """The paper's random KAMA product (Kac's random walk, §2): k iid rotations, uniform I ≠ J, Θ ~ Unif[0, 2π)."""
    k = _checks.positive_int("k", k)
    d = _checks.positive_int("d", d)
    if d < 2:
        raise ValueError(f"Givens rotations need d ≥ 2, got d={d}")
    k_pairs, k_angles = jax.random.split(key)
    first, second = random_pairs(k_pairs, k, d)
    angles = jax.random.uniform(k_angles, (k,), dtype=dtype, maxval=2 * jnp.pi)
    return GivensProduct(first, second, angles, d)


def random_layers(key, n_layers: int, d: int, *, dtype=None) -> GivensLayers:
    """Fast variant (not the paper's law): each layer pairs the coordinates by a uniform random perfect matching
    (odd d leaves one coordinate untouched per layer) with iid angles Θ ~ Unif[0, 2π); n_layers · ⌊d/2⌋ rotations."""
    n_layers = _checks.positive_int("n_layers", n_layers)
    d = _checks.positive_int("d", d)
    if d < 2:
        raise ValueError(f"Givens rotations need d ≥ 2, got d={d}")
    k_perm, k_angles = jax.random.split(key)
    perms = jax.vmap(lambda kk: jax.random.permutation(kk, d))(jax.random.split(k_perm, n_layers))
    half = d // 2
    angles = jax.random.uniform(k_angles, (n_layers, half), dtype=dtype, maxval=2 * jnp.pi)
    return GivensLayers(perms[:, :half], perms[:, half : 2 * half], angles, d)


def as_product(layers: GivensLayers) -> GivensProduct:
    """The same matrix written as a flat product (rotations within a layer commute)."""
    return GivensProduct(layers.first.reshape(-1), layers.second.reshape(-1), layers.angles.reshape(-1), layers.d)


def _check_rotations(rotations: GivensProduct | GivensLayers, name: str = "product") -> None:
    """Raise if concrete rotation indices are not integers, leave [0, d) or pair a coordinate with itself (the gathers
    and scatters would clamp, drop or wrap them silently), or if concrete angles are not finite real numbers, one per
    rotation (a NaN angle made every output NaN; a complex one lost its imaginary part). ``name``: the caller's
    argument. Free under jit."""
    if not isinstance(rotations, GivensProduct | GivensLayers):
        raise ValueError(f"{name} must be a GivensProduct or GivensLayers, got {type(rotations).__name__}")
    first, second, d = rotations.first, rotations.second, rotations.d
    if _checks.is_concrete(first) and _checks.is_concrete(second):
        with jax.ensure_compile_time_eval():
            first, second = np.asarray(first), np.asarray(second)
        if first.shape != second.shape or np.any((first < 0) | (first >= d) | (second < 0) | (second >= d)):
            raise ValueError(f"{name} has rotation indices outside [0, {d}) or unpaired index arrays")
        if np.any(first == second):
            raise ValueError(f"{name} has a rotation with I = J, which is not a rotation")
        if not (np.issubdtype(first.dtype, np.integer) and np.issubdtype(second.dtype, np.integer)):
            raise ValueError(f"{name}'s rotation indices must be integers, got {first.dtype} and {second.dtype}")
    angles = rotations.angles
    if _checks.is_concrete(angles):
        _checks.real_dtype(f"{name}'s angles", angles)
        if np.shape(angles) != np.shape(rotations.first) or not _checks.all_finite(angles):
            raise ValueError(f"{name}'s angles must be finite, one per rotation (the shape of its index arrays)")


def _check_batch(X, d: int, name: str = "X") -> jax.Array:
    X = _checks.finite_array(name, X, (1, 2))
    if X.shape[-1] != d:
        raise ValueError(f"{name} must be vectors of shape (d,) or (n, d) with d={d}, got {X.shape}")
    return X


def apply(product: GivensProduct, X) -> jax.Array:
    """P x for every row x of X, rotating two coordinates per rotation (G_k first): O(k · n) work, no d×d matrix.

    X: (d,) or (n, d).  Returns the same shape.
    """
    _check_rotations(product)
    X = _check_batch(X, product.d)
    rows = X.reshape(-1, product.d).T  # (d, n): each rotation updates two contiguous rows in place
    out = _apply_rows(rows, product.first, product.second, product.angles)
    return out.T.reshape(X.shape)


def apply_transpose(product: GivensProduct, X) -> jax.Array:
    """Pᵀ x for every row x of X (G₁ᵀ first).  X: (d,) or (n, d)."""
    _check_rotations(product)
    X = _check_batch(X, product.d)
    rows = X.reshape(-1, product.d).T
    rev = GivensProduct(product.first[::-1], product.second[::-1], -product.angles[::-1], product.d)
    out = _apply_rows(rows, rev.first, rev.second, rev.angles)
    return out.T.reshape(X.shape)


@jax.jit
def _apply_rows(rows, first, second, angles):
    """rows: (d, n) ← G₀ ⋯ G_{k−1} rows, scanning from the last rotation to the first."""

    def rotate(r, rotation):
        # Gather the two rows, compute both new rows behind an optimisation barrier, scatter them back with
        # unique indices: XLA:CPU then updates the carry in place, O(n) per rotation. Without the barrier (or with
        # two dynamic_update_slices) it copies the whole (d, n) carry every step — measured 25× slower at d = 1024.
        i, j, theta = rotation
        pair = jnp.stack([i, j])
        a, b = r[pair]
        c, s = jnp.cos(theta).astype(r.dtype), jnp.sin(theta).astype(r.dtype)
        new = jax.lax.optimization_barrier(jnp.stack([c * a - s * b, s * a + c * b]))
        return r.at[pair].set(new, unique_indices=True), None

    out, _ = jax.lax.scan(rotate, rows, (first, second, angles), reverse=True)
    return out


def apply_layers(layers: GivensLayers, X) -> jax.Array:
    """P x for the disjoint-pair variant: one vectorised gather/scatter per layer, O(d · n) per layer.

    X: (d,) or (n, d).  Returns the same shape.
    """
    _check_rotations(layers, "layers")
    X = _check_batch(X, layers.d)
    rows = X.reshape(-1, layers.d).T
    return _apply_layer_rows(rows, layers.first, layers.second, layers.angles).T.reshape(X.shape)


@jax.jit
def _apply_layer_rows(rows, first, second, angles):
    def rotate(r, layer):
        i, j, theta = layer
        a, b = r[i], r[j]
        c, s = jnp.cos(theta)[:, None].astype(r.dtype), jnp.sin(theta)[:, None].astype(r.dtype)
        return r.at[i].set(c * a - s * b).at[j].set(s * a + c * b), None

    out, _ = jax.lax.scan(rotate, rows, (first, second, angles), reverse=True)
    return out


@partial(jax.jit, static_argnums=(1, 2, 3, 4))
def random_matrices(key, n: int, k: int, d: int, dtype=None) -> jax.Array:
    """n independent d×d random KAMA matrices of the paper's law (k rotations each), built 256 at a time with
    vmap.  Returns (n, d, d).

    Under vmap the batched scatter formulation is faster than :func:`matrix`'s in-place one (measured 3× at
    d = 32), so the batch builds rows with ``.at[].set``.
    """
    n = _checks.positive_int("n", n)  # n = 0 failed with an unclear error
    k, d = _checks.positive_int("k", k), _checks.integer("d", d, low=2)
    keys = jax.random.split(key, n)
    eye = jnp.eye(d, dtype=dtype or jnp.result_type(float))

    def one(kk):
        product = random_product(kk, k, d, dtype=dtype)

        def rotate(r, rotation):
            i, j, theta = rotation
            a, b = r[i], r[j]
            c, s = jnp.cos(theta).astype(r.dtype), jnp.sin(theta).astype(r.dtype)
            return r.at[i].set(c * a - s * b).at[j].set(s * a + c * b), None

        out, _ = jax.lax.scan(rotate, eye, (product.first, product.second, product.angles), reverse=True)
        return out

    return jax.lax.map(one, keys, batch_size=min(n, 256))


def matrix(product: GivensProduct, *, dtype=None) -> jax.Array:
    """The dense d×d matrix P, by rotating the identity's columns (O(k · d)).

    Differentiable in the angles by reverse mode (``jax.grad``/``jax.vjp``, also forward-over-reverse as in a
    Hessian–vector product) through the sweep of :func:`_matrix_rows_bwd`, which un-rotates P step by step in place
    instead of reading back the rows the forward scan saved (0.2 against 0.7 ms for d = 64, k = 200 on the 2-core
    CPU, ``python -m benchmarks --suite kama_gradients``; memory is O(k · d) either way); ``jax.jvp`` of this
    function itself is not supported (use :func:`apply` on the identity). Under ``vmap`` the scans are batched,
    which XLA:CPU runs 3–5× slower than one product after another (``lax.map``): the policies' trainers map over
    runs for that reason.
    """
    _check_rotations(product)
    eye = jnp.eye(product.d, dtype=dtype or jnp.result_type(product.angles.dtype, float))
    return _matrix_rows(eye, product.first, product.second, product.angles)


@jax.custom_vjp
def _matrix_rows(rows, first, second, angles):
    return _apply_rows(rows, first, second, angles)


def _matrix_rows_fwd(rows, first, second, angles):
    out = _apply_rows(rows, first, second, angles)
    return out, (first, second, angles, out)


def _matrix_rows_bwd(residuals, out_bar):
    """Cotangents of (rows, angles) for out = G₀ ⋯ G_{k−1} rows, from out alone (no state saved per step).

    With A_r = G₀ ⋯ G_{r−1}, the rows after rotation r are S_r = A_rᵀ out and their cotangent is S̄_r = A_rᵀ out̄;
    since d/dθ of (c a − s b, s a + c b) is (−new_b, new_a), θ̄_r = ⟨S̄_r[J], S_r[I]⟩ − ⟨S̄_r[I], S_r[J]⟩. One
    sweep r = 0, …, k − 1 reads that and applies G_rᵀ to [S_r | S̄_r]; it ends at [rows | rows̄].
    """
    first, second, angles, out = residuals
    n = out.shape[1]
    swept, angles_bar = _sweep_rows(jnp.concatenate([out, out_bar.astype(out.dtype)], axis=1), first, second, angles)
    return swept[:, n:], None, None, angles_bar.astype(angles.dtype)


_matrix_rows.defvjp(_matrix_rows_fwd, _matrix_rows_bwd)


@jax.jit
def _sweep_rows(both, first, second, angles):
    """both: (d, 2n) = [S₀ | S̄₀].  Returns ([rows | rows̄], θ̄: (k,))."""
    n = both.shape[1] // 2

    def unrotate(r, rotation):
        # Emitting the rotated pair and reducing it after the scan keeps the update in place, as in _apply_rows;
        # a reduction inside the step costs 4× (0.6 vs 0.15 ms at d = 64, k = 200, with unroll = 2).
        i, j, theta = rotation
        pair = jnp.stack([i, j])
        a, b = r[pair]
        c, s = jnp.cos(theta).astype(r.dtype), jnp.sin(theta).astype(r.dtype)
        new = jax.lax.optimization_barrier(jnp.stack([c * a + s * b, c * b - s * a]))
        return r.at[pair].set(new, unique_indices=True), new

    swept, pairs = jax.lax.scan(unrotate, both, (first, second, angles), unroll=2)
    # θ̄_r from the pair after G_rᵀ: the form ⟨ū_J, u_I⟩ − ⟨ū_I, u_J⟩ is invariant under a common plane rotation
    return swept, jnp.sum(pairs[:, 1, n:] * pairs[:, 0, :n] - pairs[:, 0, n:] * pairs[:, 1, :n], axis=1)


# --- rectangular (truncated) layers, §2.3 ---------------------------------------------------------------------------


def layer_size(d_out: int, d_in: int) -> int:
    """D = max(d_out, d_in): the size of the rotations behind a d_out × d_in KAMA layer."""
    return max(_checks.positive_int("d_out", d_out), _checks.positive_int("d_in", d_in))


def layer_matrix(product: GivensProduct, scales, d_out: int, d_in: int) -> jax.Array:
    """W (d_out, d_in): diag(s) P[:d_out] if d_out ≤ d_in, else P[:, :d_in] diag(s).  scales: (min(d_out, d_in),)."""
    D = layer_size(d_out, d_in)
    if product.d != D:
        raise ValueError(f"a {d_out}×{d_in} layer needs rotations of size {D}, got {product.d}")
    scales = _checks.finite_array("scales", scales, 1)
    if scales.shape != (min(d_out, d_in),):
        raise ValueError(f"scales must have shape ({min(d_out, d_in)},), got {scales.shape}")
    P = matrix(product, dtype=jnp.result_type(scales.dtype, product.angles.dtype))
    return scales[:, None] * P[:d_out] if d_out <= d_in else P[:, :d_in] * scales[None, :]


def layer_apply(product: GivensProduct, scales, X, d_out: int, d_in: int) -> jax.Array:
    """W x for every row of X (n, d_in) without forming W: O(k + D) per vector.  Returns (n, d_out)."""
    D = layer_size(d_out, d_in)
    if product.d != D:
        raise ValueError(f"a {d_out}×{d_in} layer needs rotations of size {D}, got {product.d}")
    X = jnp.atleast_2d(_check_batch(X, d_in))
    scales = _checks.finite_array("scales", scales, 1)
    if scales.shape != (min(d_out, d_in),):
        raise ValueError(f"scales must have shape ({min(d_out, d_in)},), got {scales.shape}")
    if d_out <= d_in:
        return apply(product, X)[:, :d_out] * scales
    padded = jnp.pad(X * scales, ((0, 0), (0, D - d_in)))
    return apply(product, padded)


# --- cost accounting, §2 and §4 -------------------------------------------------------------------------------------


def flops(k: int) -> int:
    """Multiplications + additions to apply k rotations to one vector: 4 + 2 per rotation."""
    return 6 * _checks.positive_int("k", k)


def storage(k: int, d: int) -> int:
    """Numbers stored for a random KAMA block (paper §2): two indices and one angle per rotation, plus d scales."""
    return 3 * _checks.positive_int("k", k) + _checks.positive_int("d", d)


def dense_flops(d_out: int, d_in: int) -> int:
    """Multiply-adds of a dense matvec, counted as 2 d_out d_in flops."""
    return 2 * _checks.positive_int("d_out", d_out) * _checks.positive_int("d_in", d_in)


# --- Givens coordinate descent on SO(d), §5.1 (Algorithm 1, Theorem 3) ----------------------------------------------


class DescentStep(NamedTuple):
    """One step of Algorithm 1: the new M, the chosen pair (I < J), the angle, the decrease of F and ‖∇F(M)‖²_F."""

    M: np.ndarray
    pair: tuple[int, int]
    angle: float
    decrease: float
    grad_norm_sq: float


def rotate_columns(M, i: int, j: int, theta: float) -> np.ndarray:
    """M · G_{j,i}^θ = M exp(θ A_{i,j}) (the geodesic of §5.1): only columns i and j change.  M: (d, d)."""
    M = np.array(_checks.finite_numpy("M", M, 2), copy=True)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be a square matrix, got shape {M.shape}")
    i, j = _distinct_indices(i, j, M.shape[0])
    theta = _checks.real_number("theta", theta)
    c, s = math.cos(theta), math.sin(theta)
    a, b = M[:, i].copy(), M[:, j].copy()
    M[:, i], M[:, j] = c * a - s * b, s * a + c * b
    return M


def procrustes_objective(M, T) -> float:
    """F(M) = ‖M − T‖²_F, the objective of the Theorem 3 check."""
    M, T = _checks.finite_numpy("M", M, 2), _checks.finite_numpy("T", T, 2)
    if M.shape != T.shape:
        raise ValueError(f"M and T must have one shape, got {M.shape} and {T.shape}")
    return float(np.sum((M - T) ** 2))


def procrustes_descent_step(M, T) -> DescentStep:
    """Algorithm 1 for F(M) = ‖M − T‖²_F with exact line search in closed form.

    With N = Tᵀ M, α = N_II + N_JJ, β = N_JI − N_IJ: F(M G_{J,I}^Θ) = const − 2(α cos Θ + β sin Θ), so the best
    angle is atan2(β, α), the decrease is 2(√(α² + β²) − α) and the directional derivative ∇_{I,J}F = −2β. Every
    pair I < J is searched; the best one is taken. ‖∇F‖²_F = 2 Σ_{I<J} (∇_{I,J}F)².
    """
    M, T = _checks.finite_numpy("M", M, 2), _checks.finite_numpy("T", T, 2)
    if M.shape[0] != M.shape[1] or M.shape != T.shape or M.shape[0] < 2:
        raise ValueError(f"M and T must be square matrices of one shape, got {M.shape} and {T.shape}")
    N = T.T @ M
    i, j = np.triu_indices(M.shape[0], k=1)
    diag = np.diag(N)
    alpha = diag[i] + diag[j]
    beta = N[j, i] - N[i, j]
    gains = 2 * (np.hypot(alpha, beta) - alpha)
    best = int(np.argmax(gains))
    theta = float(np.arctan2(beta[best], alpha[best]))
    pair = (int(i[best]), int(j[best]))
    return DescentStep(
        M=rotate_columns(M, *pair, theta),
        pair=pair,
        angle=theta,
        decrease=float(gains[best]),
        grad_norm_sq=float(2 * np.sum((2 * beta) ** 2)),
    )


def givens_descent_step(objective, M, *, n_grid: int = 64) -> DescentStep:
    """Algorithm 1 for any objective F: SO(d) → ℝ: for every plane I < J, minimise Φ(Θ) = F(M G_{J,I}^Θ) over
    Θ ∈ [−π, π) (a grid of ``n_grid`` angles, refined by bounded Brent search around the best grid point), then
    take the best plane. Directional derivatives ∇_{I,J}F are central differences (step 1e-6), so
    ``grad_norm_sq`` = 2 Σ_{I<J} (∇_{I,J}F)² is approximate. Cost: d(d−1)/2 line searches per step.
    """
    from scipy import optimize

    M = _checks.finite_numpy("M", M, 2)
    if M.shape[0] != M.shape[1] or M.shape[0] < 2:
        raise ValueError(f"M must be a square matrix of size ≥ 2, got shape {M.shape}")
    n_grid = _checks.positive_int("n_grid", n_grid)
    d = M.shape[0]
    f0 = float(objective(M))
    grid = np.linspace(-math.pi, math.pi, n_grid, endpoint=False)
    width = 2 * math.pi / n_grid
    best, grad_sq, h = (f0, (0, 1), 0.0), 0.0, 1e-6
    for i in range(d):
        for j in range(i + 1, d):

            def phi(theta, i=i, j=j):
                return float(objective(rotate_columns(M, i, j, theta)))

            grad_sq += ((phi(h) - phi(-h)) / (2 * h)) ** 2
            start = grid[int(np.argmin([phi(t) for t in grid]))]
            res = optimize.minimize_scalar(phi, bounds=(start - width, start + width), method="bounded")
            if res.fun < best[0]:
                best = (float(res.fun), (i, j), float(res.x))
    value, pair, theta = best
    return DescentStep(rotate_columns(M, *pair, theta), pair, theta, f0 - value, 2 * grad_sq)


def theorem_3_bound(grad_norm_sq: float, d: int, curvature_bound: float) -> float:
    """Theorem 3's guaranteed decrease per step: ‖∇F(M)‖² / (2 d (d − 1) B)."""
    grad_norm_sq = _checks.real_number("grad_norm_sq", grad_norm_sq, low=0.0)
    d = _checks.integer("d", d, low=2)
    curvature_bound = _checks.real_number("curvature_bound", curvature_bound, low=0.0, low_open=True)
    return grad_norm_sq / (2 * d * (d - 1) * curvature_bound)
