import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from rflib import projections


def test_gaussian_projection_shape_and_determinism(key):
    W = projections.gaussian(key, 7, 3)
    assert W.shape == (7, 3) and W.dtype == jnp.float64
    np.testing.assert_array_equal(W, projections.gaussian(key, 7, 3))


@pytest.mark.parametrize("m,d", [(4, 4), (3, 8), (10, 4), (130, 64)])
def test_orthogonal_rows_are_orthogonal_within_each_block(key, m, d):
    W = np.asarray(projections.orthogonal(key, m, d))
    assert W.shape == (m, d)
    for start in range(0, m, d):
        block = W[start : start + d]
        unit = block / np.linalg.norm(block, axis=1, keepdims=True)
        np.testing.assert_allclose(unit @ unit.T, np.eye(len(block)), atol=1e-12)


def test_haar_blocks_are_orthogonal_to_round_off(key):
    Q = np.asarray(projections.haar_orthogonal(key, 5, 16))
    for q in Q:
        assert np.max(np.abs(q @ q.T - np.eye(16))) < 1e-12


def test_orthogonal_row_norms_are_chi_distributed(key):
    d = 6
    W = projections.orthogonal(key, 3000, d)
    norms = np.linalg.norm(np.asarray(W), axis=1)
    assert stats.kstest(norms, stats.chi(df=d).cdf).pvalue > 1e-3


def test_fixed_norms_option_gives_sqrt_d(key):
    W = projections.orthogonal(key, 5, 9, norms="fixed")
    np.testing.assert_allclose(np.linalg.norm(np.asarray(W), axis=1), 3.0, rtol=1e-13)


def test_orthogonal_blocks_are_independent_draws(key):
    W = np.asarray(projections.orthogonal(key, 8, 4))
    assert not np.allclose(
        np.abs(W[:4] / np.linalg.norm(W[:4], axis=1, keepdims=True)),
        np.abs(W[4:] / np.linalg.norm(W[4:], axis=1, keepdims=True)),
    )


def _positive_feature_mean(W, z):
    """Mean over rows ω of exp(ωᵀz − ‖z‖²/2): unbiased for 1 iff every row is marginally N(0, I)."""
    return float(jnp.mean(jnp.exp(W @ z - 0.5 * z @ z)))


# d = 4, z = e₁: per-row relative variance e^{‖z‖²} − 1 = 1.718; with 400 000 rows the standard error of the mean
# is ≤ √(1.718 / 4·10⁵) = 0.0021 (rows within a block are negatively correlated, which only lowers it): 5σ = 0.0104.
_N_BLOCKS, _D, _TOL = 100_000, 4, 0.0104


def test_orthogonal_positive_features_are_unbiased_regression_for_unfixed_qr(key):
    """implementations.md §0: E[exp(ωᵀz)] = exp(‖z‖²/2) must hold for orthogonal ω (target 1.6487 at z = e₁).

    The public Performer/HRF code (QR without the sign fix) gives ≈ 1.37, i.e. a ratio ≈ 0.83: this test fails there.
    """
    z = jnp.zeros(_D).at[0].set(1.0)
    W = projections.orthogonal(key, _N_BLOCKS * _D, _D)
    assert abs(_positive_feature_mean(W, z) - 1.0) < _TOL
    z_random = jnp.array([0.5, -0.3, 0.8, 0.1])
    assert abs(_positive_feature_mean(W, z_random) - 1.0) < _TOL * np.sqrt(np.expm1(z_random @ z_random) / np.expm1(1))


def test_the_regression_test_has_power_unfixed_qr_is_biased(key):
    """The same check on the sign_fix=False path (the public-code bug) lands far outside the tolerance."""
    z = jnp.zeros(_D).at[0].set(1.0)
    W_bug = projections.orthogonal(key, _N_BLOCKS * _D, _D, sign_fix=False)
    mean = _positive_feature_mean(W_bug, z) * np.exp(0.5)
    assert mean == pytest.approx(1.37, abs=0.03)  # the value reported in implementations.md §0
    assert abs(_positive_feature_mean(W_bug, z) - 1.0) > 10 * _TOL


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_invalid_sizes_raise_naming_the_argument(key, bad):
    with pytest.raises(ValueError, match="m must be a positive integer"):
        projections.gaussian(key, bad, 3)
    with pytest.raises(ValueError, match="d must be a positive integer"):
        projections.orthogonal(key, 3, bad)


def test_invalid_norms_option_raises(key):
    with pytest.raises(ValueError, match="norms"):
        projections.orthogonal(key, 3, 3, norms="unit")


def test_orthogonal_batch_has_the_law_of_orthogonal(key):
    """Batched ORF: each draw is orthogonal within blocks, with χ_d lengths (E‖ω‖² = d), and draws differ."""
    W = np.asarray(projections.orthogonal_batch(key, 400, 20, 8))
    assert W.shape == (400, 20, 8)
    dirs = W / np.linalg.norm(W, axis=-1, keepdims=True)
    gram = np.einsum("bij,bkj->bik", dirs[:, :8], dirs[:, :8])
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(8), gram.shape), atol=1e-12)
    sq = np.sum(W**2, axis=-1).ravel()
    assert abs(sq.mean() - 8) < 5 * sq.std() / np.sqrt(sq.size)
    assert not np.allclose(W[0], W[1])
    # marginally N(0, I): the first coordinate of every row has variance 1 and no sign bias
    first = W[:, :, 0].ravel()
    assert abs(first.mean()) < 5 / np.sqrt(first.size) and abs(first.var() - 1) < 0.05


@pytest.mark.parametrize("law", projections.LAWS)
def test_sample_draws_every_law_key_first_with_the_documented_shapes(law):
    key = jax.random.key(5)
    W = projections.sample(law, key, 10, 4)
    assert W.shape == (10, 4) and bool(jnp.all(jnp.isfinite(W)))
    np.testing.assert_array_equal(W, projections.sample(law, key, 10, 4))  # same key, same matrix
    batch = projections.sample(law, key, 10, 4, draws=3)
    assert batch.shape == (3, 10, 4)
    assert not np.allclose(batch[0], batch[1])
    if law not in ("iid", "halton", "halton-shift"):  # block-structured laws: the d rows of a block are orthogonal
        directions = W[:4] / jnp.linalg.norm(W[:4], axis=1, keepdims=True)
        np.testing.assert_allclose(directions @ directions.T, np.eye(4), atol=1e-12)


@pytest.mark.parametrize("key", [jax.random.key(8), jax.random.PRNGKey(8)], ids=["typed key", "raw key"])
@pytest.mark.parametrize("law", ["halton", "halton-shift"])
def test_a_batch_of_halton_draws_is_the_single_draws_from_the_split_keys(law, key):
    """Each draw of a batch is halton_gaussian seeded by an integer drawn from its key of jax.random.split(key, draws),
    bit for bit, though the batch draws its seeds and takes Φ⁻¹ for all draws at once."""
    batch = projections.sample(law, key, 9, 5, draws=4)
    randomisation = "shift" if law == "halton-shift" else "scramble"
    singles = [
        projections.halton_gaussian(
            int(jax.random.randint(k, (), 0, np.iinfo(np.int32).max)), 9, 5, randomisation=randomisation
        )
        for k in jax.random.split(key, 4)
    ]
    np.testing.assert_array_equal(batch, np.stack(singles))
    np.testing.assert_array_equal(batch[2], projections.sample(law, jax.random.split(key, 4)[2], 9, 5))


def test_sample_matches_the_law_functions_it_names():
    key = jax.random.key(6)
    np.testing.assert_array_equal(projections.sample("iid", key, 7, 3), projections.gaussian(key, 7, 3))
    np.testing.assert_array_equal(projections.sample("orthogonal", key, 7, 3), projections.orthogonal(key, 7, 3))
    np.testing.assert_array_equal(
        projections.sample("orthogonal", key, 7, 3, draws=2), projections.orthogonal_batch(key, 2, 7, 3)
    )
    np.testing.assert_array_equal(projections.sample("sorf", key, 7, 3), projections.structured_orthogonal(key, 7, 3))
    with pytest.raises(ValueError, match="law must be one of"):
        projections.sample("gaussian", key, 7, 3)
    with pytest.raises(ValueError, match="draws must be a positive integer"):
        projections.sample("iid", key, 7, 3, draws=0)
