"""Givens products (KAMA-NNs §2), their fast application, truncated layers, and Algorithm 1 / Theorem 3 (§5.1)."""

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
from scipy import stats

from rflib import kama
from rflib.experiments import policies


def dense_product(product):
    P = np.eye(product.d)
    for i, j, theta in zip(
        np.asarray(product.first), np.asarray(product.second), np.asarray(product.angles), strict=True
    ):
        P = P @ np.asarray(kama.givens_matrix(product.d, int(i), int(j), float(theta)))
    return P


def test_givens_rotation_identities():
    d, i, j, theta = 6, 1, 4, 0.7
    G = np.asarray(kama.givens_matrix(d, i, j, theta))
    np.testing.assert_allclose(G @ G.T, np.eye(d), atol=1e-15)
    assert np.linalg.det(G) == pytest.approx(1.0, abs=1e-14)
    A = np.zeros((d, d))
    A[i, j], A[j, i] = 1.0, -1.0
    np.testing.assert_allclose(scipy.linalg.expm(-theta * A), G, atol=1e-14)
    np.testing.assert_allclose(np.asarray(kama.givens_matrix(d, j, i, theta)), G.T, atol=0)
    np.testing.assert_allclose(np.asarray(kama.givens_matrix(d, i, j, -theta)), G.T, atol=0)
    v = np.arange(1.0, d + 1)
    Gv = G @ v
    assert Gv[i] == pytest.approx(math.cos(theta) * v[i] - math.sin(theta) * v[j])
    assert Gv[j] == pytest.approx(math.sin(theta) * v[i] + math.cos(theta) * v[j])
    np.testing.assert_array_equal(np.delete(Gv, [i, j]), np.delete(v, [i, j]))


def test_fast_application_equals_the_dense_product_in_the_papers_order():
    product = kama.random_product(jax.random.key(0), 40, 7)
    P = dense_product(product)
    X = np.random.default_rng(0).normal(size=(5, 7))
    np.testing.assert_allclose(np.asarray(kama.apply(product, X)), X @ P.T, atol=1e-13)
    np.testing.assert_allclose(np.asarray(kama.apply(product, X[0])), P @ X[0], atol=1e-13)
    np.testing.assert_allclose(np.asarray(kama.apply_transpose(product, X)), X @ P, atol=1e-13)
    np.testing.assert_allclose(np.asarray(kama.matrix(product)), P, atol=1e-13)


@pytest.mark.parametrize("d", [2, 64, 512])
def test_random_products_are_orthogonal_to_1e_12(d):
    product = kama.random_product(jax.random.key(d), kama.rotations_for(d), d)
    P = np.asarray(kama.matrix(product))
    assert np.abs(P @ P.T - np.eye(d)).max() < 1e-12
    assert np.linalg.det(P) == pytest.approx(1.0, abs=1e-9)


def test_pair_sampler_never_repeats_an_index_and_is_uniform_over_pairs():
    d, k = 5, 40_000
    first, second = map(np.asarray, kama.random_pairs(jax.random.key(1), k, d))
    assert np.all(first != second) and first.min() >= 0 and second.max() < d
    counts = np.zeros((d, d))
    np.add.at(counts, (first, second), 1)
    observed = counts[~np.eye(d, dtype=bool)]
    assert stats.chisquare(observed).pvalue > 1e-3  # d(d − 1) = 20 ordered pairs, equally likely
    angles = np.asarray(kama.random_product(jax.random.key(2), k, d).angles)
    assert angles.min() >= 0 and angles.max() < 2 * np.pi
    assert stats.kstest(angles / (2 * np.pi), "uniform").pvalue > 1e-3


def test_disjoint_layers_variant_matches_its_flat_product_and_uses_each_coordinate_once_per_layer():
    layers = kama.random_layers(jax.random.key(3), 6, 9)
    first, second = np.asarray(layers.first), np.asarray(layers.second)
    for a, b in zip(first, second, strict=True):
        touched = np.concatenate([a, b])
        assert len(set(touched)) == len(touched) == 8  # 4 disjoint pairs; one coordinate of 9 left out
    X = np.random.default_rng(1).normal(size=(3, 9))
    flat = kama.as_product(layers)
    np.testing.assert_allclose(np.asarray(kama.apply_layers(layers, X)), X @ dense_product(flat).T, atol=1e-13)


@pytest.mark.parametrize(("d_out", "d_in"), [(3, 8), (8, 8), (8, 3)])
def test_truncated_layers_have_orthonormal_rows_or_columns_and_fast_apply_matches(d_out, d_in):
    D = kama.layer_size(d_out, d_in)
    product = kama.random_product(jax.random.key(4), 60, D)
    W1 = np.asarray(kama.layer_matrix(product, np.ones(min(d_out, d_in)), d_out, d_in))
    assert W1.shape == (d_out, d_in)
    gram = W1 @ W1.T if d_out <= d_in else W1.T @ W1
    np.testing.assert_allclose(gram, np.eye(min(d_out, d_in)), atol=1e-13)
    scales = np.linspace(0.5, 2.0, min(d_out, d_in))
    W = np.asarray(kama.layer_matrix(product, scales, d_out, d_in))
    X = np.random.default_rng(2).normal(size=(4, d_in))
    np.testing.assert_allclose(np.asarray(kama.layer_apply(product, scales, X, d_out, d_in)), X @ W.T, atol=1e-13)


def test_learned_angles_are_differentiable_through_the_dense_weight():
    product = kama.random_product(jax.random.key(5), 12, 4)

    def loss(angles):
        return jnp.sum(kama.matrix(product._replace(angles=angles))[0] ** 3)

    grad = jax.grad(loss)(product.angles)
    eps = 1e-6
    e = jnp.zeros_like(product.angles).at[3].set(eps)
    fd = (loss(product.angles + e) - loss(product.angles - e)) / (2 * eps)
    assert float(grad[3]) == pytest.approx(float(fd), rel=1e-6, abs=1e-9)


@pytest.mark.parametrize(("d", "k"), [(2, 5), (7, 40), (64, 200)])
def test_matrix_gradient_by_the_reversible_sweep_equals_autodiff_of_the_scan(d, k):
    """kama.matrix's reverse mode recomputes the intermediate products by un-rotating (no stored states): it must
    equal plain autodiff of the forward scan (kama.apply on the identity), also forward-over-reverse (a
    Hessian–vector product, as TRPO's Fisher products take) and under vmap."""
    product = kama.random_product(jax.random.key(d + k), k, d)
    target = jax.random.normal(jax.random.key(1), (d, d))

    def loss(matrix_of, angles):
        return jnp.sum(jnp.sin(matrix_of(product._replace(angles=angles))) * target)

    def swept(p):
        return kama.matrix(p)

    def autodiff(p):
        return kama.apply(p, jnp.eye(d)).T  # rows of P x for the basis vectors: P's columns

    np.testing.assert_array_equal(np.asarray(swept(product)), np.asarray(autodiff(product)))
    grad, reference = (jax.grad(partial(loss, f))(product.angles) for f in (swept, autodiff))
    np.testing.assert_allclose(
        np.asarray(grad), np.asarray(reference), rtol=0, atol=1e-12 * float(jnp.abs(reference).max())
    )
    v = jax.random.normal(jax.random.key(2), (k,))
    hvp, hvp_reference = (jax.jvp(jax.grad(partial(loss, f)), (product.angles,), (v,))[1] for f in (swept, autodiff))
    np.testing.assert_allclose(
        np.asarray(hvp), np.asarray(hvp_reference), rtol=0, atol=1e-12 * float(jnp.abs(hvp_reference).max())
    )
    # the cotangent of the rotated rows too (matrix passes the identity, but the VJP returns it): random rows
    rows, rows_bar = (jax.random.normal(jax.random.key(s), (d, 3)) for s in (3, 4))
    by_sweep, by_autodiff = (
        jax.vjp(lambda r, a, f=f: f(r, product.first, product.second, a), rows, product.angles)[1](rows_bar)
        for f in (kama._matrix_rows, kama._apply_rows)
    )
    for got, want in zip(by_sweep, by_autodiff, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=1e-12 * float(jnp.abs(want).max()))
    batch = jnp.stack([product.angles, 0.5 * product.angles])
    batched = jax.vmap(jax.grad(partial(loss, swept)))(batch)
    np.testing.assert_allclose(
        np.asarray(batched[0]), np.asarray(grad), rtol=0, atol=1e-14 * float(jnp.abs(grad).max())
    )
    np.testing.assert_allclose(
        np.asarray(batched[1]),
        np.asarray(jax.grad(partial(loss, autodiff))(batch[1])),
        rtol=0,
        atol=1e-12 * float(jnp.abs(grad).max()),
    )


def test_cost_accounting_and_the_crossover_at_the_papers_k():
    assert kama.flops(10) == 60 and kama.storage(10, 4) == 34
    assert kama.rotations_for(32) == math.ceil(5 * 32 * math.log(32)) == 555
    faster = [d for d in range(2, 200) if kama.flops(kama.rotations_for(d)) < kama.dense_flops(d, d)]
    smaller = [d for d in range(2, 200) if kama.storage(kama.rotations_for(d), d) < d * d]
    assert faster == list(range(62, 200))  # 6k < 2d² only from d = 62 (ERRATA.md KAMA-E7)
    assert smaller == list(range(64, 200))  # 3k + d < d² only from d = 64 ("d ≳ 70")


def test_toeplitz_matrix_layout():
    W = np.asarray(policies.toeplitz_matrix(np.arange(6.0), 2, 5))
    np.testing.assert_array_equal(W, [[4, 3, 2, 1, 0], [5, 4, 3, 2, 1]])
    with pytest.raises(ValueError, match="needs 6 parameters"):
        policies.toeplitz_matrix(np.arange(5.0), 2, 5)


def haar_special_orthogonal(d, seed):
    T = stats.special_ortho_group.rvs(d, random_state=seed)
    assert np.linalg.det(T) > 0
    return T


def test_line_search_closed_form_matches_brute_force_and_the_directional_derivative():
    d = 5
    rng = np.random.default_rng(6)
    T = haar_special_orthogonal(d, 1)
    M = haar_special_orthogonal(d, 2)
    step = kama.procrustes_descent_step(M, T)
    thetas = np.linspace(-np.pi, np.pi, 20_001)
    best = min(
        (kama.procrustes_objective(kama.rotate_columns(M, i, j, t), T), (i, j))
        for i in range(d)
        for j in range(i + 1, d)
        for t in thetas[::50]
    )
    f0 = kama.procrustes_objective(M, T)
    assert f0 - kama.procrustes_objective(step.M, T) == pytest.approx(step.decrease, abs=1e-12)
    assert step.decrease >= f0 - best[0] - 1e-3
    i, j = step.pair
    h = 1e-6
    grads = {}
    for a in range(d):
        for b in range(a + 1, d):
            grads[a, b] = (
                kama.procrustes_objective(kama.rotate_columns(M, a, b, h), T)
                - kama.procrustes_objective(kama.rotate_columns(M, a, b, -h), T)
            ) / (2 * h)
    assert step.grad_norm_sq == pytest.approx(2 * sum(g**2 for g in grads.values()), rel=1e-7)
    del rng


@pytest.mark.parametrize("d", [4, 8, 16])
def test_theorem_3_every_descent_step_beats_its_bound_and_iterates_stay_orthogonal(d):
    T = haar_special_orthogonal(d, d)
    M = np.eye(d)
    f = [kama.procrustes_objective(M, T)]
    slack, bound_sum = [], 0.0
    for _ in range(400):
        step = kama.procrustes_descent_step(M, T)
        bound = kama.theorem_3_bound(step.grad_norm_sq, d, curvature_bound=4.0)
        slack.append(step.decrease - bound)
        bound_sum += bound
        M = step.M
        f.append(kama.procrustes_objective(M, T))
    assert min(slack) >= -1e-12
    assert f[0] - f[-1] >= bound_sum - 1e-10
    assert np.abs(M @ M.T - np.eye(d)).max() < 1e-12
    assert f[-1] < 1e-10


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="i and j must be distinct"):
        kama.givens_matrix(4, 2, 2, 0.1)
    with pytest.raises(ValueError, match="j must be an integer"):
        kama.givens_matrix(4, 0, 1.5, 0.1)
    with pytest.raises(ValueError, match="d ≥ 2"):
        kama.random_product(jax.random.key(0), 3, 1)
    product = kama.random_product(jax.random.key(0), 3, 4)
    with pytest.raises(ValueError, match="X must be vectors of shape"):
        kama.apply(product, np.ones((2, 5)))
    with pytest.raises(ValueError, match="X contains NaN"):
        kama.apply(product, np.full((2, 4), np.nan))
    with pytest.raises(ValueError, match="X must hold real numbers"):
        kama.apply(product, np.ones((2, 4), bool))
    bad = product._replace(second=product.first)
    with pytest.raises(ValueError, match="I = J"):
        kama.apply(bad, np.ones((2, 4)))
    with pytest.raises(ValueError, match="n must be a positive integer"):  # an unclear error from the split before
        kama.random_matrices(jax.random.key(0), 0, 4, 3)
    with pytest.raises(ValueError, match="dtype must be a floating dtype"):  # cos and sin were truncated to 0
        kama.givens_matrix(4, 0, 2, 0.3, dtype=jnp.int32)
    for angles in (product.angles.at[1].set(jnp.nan), product.angles[:2]):  # a NaN angle, one angle short
        with pytest.raises(ValueError, match="product.s angles must be finite, one per rotation"):
            kama.matrix(product._replace(angles=angles))
    with pytest.raises(ValueError, match="product's angles must be real"):
        kama.apply(product._replace(angles=product.angles + 1j), np.ones((2, 4)))
    with pytest.raises(ValueError, match="rotation indices must be integers"):
        kama.apply(product._replace(first=product.first.astype(float)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="rotations of size 8"):
        kama.layer_matrix(product, np.ones(3), 3, 8)
    with pytest.raises(ValueError, match="square matrices"):
        kama.procrustes_descent_step(np.eye(3), np.eye(4))


def test_median_seconds_times_a_call_after_compiling_it():
    from rflib.experiments import timing

    calls = []

    def fn(x):
        calls.append(1)
        return jnp.sin(x)

    seconds = timing.median_seconds(fn, jnp.ones(3), repeats=3, min_seconds=0.001)
    assert 0 < seconds < 0.5 and len(calls) >= 4  # one warm-up call, then at least one call per repeat
    with pytest.raises(ValueError, match="repeats"):
        timing.median_seconds(fn, jnp.ones(3), repeats=0)


def test_batched_random_matrices_equal_the_single_product_construction():
    key, n, k, d = jax.random.key(9), 3, 50, 6
    batch = np.asarray(kama.random_matrices(key, n, k, d))
    for i, kk in enumerate(jax.random.split(key, n)):
        np.testing.assert_allclose(batch[i], np.asarray(kama.matrix(kama.random_product(kk, k, d))), atol=1e-14)


def test_generic_descent_step_agrees_with_the_closed_form_line_search():
    d = 4
    T = haar_special_orthogonal(d, 11)
    M = haar_special_orthogonal(d, 12)
    closed = kama.procrustes_descent_step(M, T)
    generic = kama.givens_descent_step(lambda X: kama.procrustes_objective(X, T), M)
    assert generic.pair == closed.pair
    assert generic.decrease == pytest.approx(closed.decrease, rel=1e-6)
    assert generic.grad_norm_sq == pytest.approx(closed.grad_norm_sq, rel=1e-5)
    np.testing.assert_allclose(generic.M, closed.M, atol=1e-4)
