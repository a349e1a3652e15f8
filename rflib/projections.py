"""Random projection matrices W: (m, d) whose rows ω_1..ω_m are the random directions of a feature map.

One vocabulary for every paper: :func:`sample` draws from a law named by a string, key first, and every law is
also a function with its own options (sign fix, norms, rotations). Same key ⇒ bit-identical matrix.

=============  ===========================================================================  ================
law            rows                                                                          marginal law
=============  ===========================================================================  ================
``"iid"``      iid N(0, I_d) (KAMA-NNs' URN)                                                 N(0, I_d), exact
``"orthogonal"`` blocks of d sign-fixed Haar-orthogonal directions, χ_d lengths (ORF, ORN)   N(0, I_d), exact
``"sorf"``     blocks √D·HD₁HD₂HD₃ (SORF / ORF-Had), D = 2^⌈log₂ d⌉, columns truncated to d     approximate
``"horn"``     blocks (HD₃)(HD₂)(HD₁), first d rows and columns, χ_D lengths (KAMA-NNs' HORN)  approximate
``"givens"``   blocks of k random Givens rotations (KAMA-NNs' law, Kac's walk), χ_d lengths   approximate
``"halton"``   Φ⁻¹ of a scrambled Halton sequence (randomised QMC)                            N(0, I_d), exact
``"halton-shift"`` Φ⁻¹ of the Halton sequence shifted by a uniform vector mod 1 (Avron et al. 2016)  N(0, I_d), exact
=============  ===========================================================================  ================
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg

from rflib import _checks, kama

LAWS = ("iid", "orthogonal", "sorf", "horn", "givens", "halton", "halton-shift")


def gaussian(key, m: int, d: int, *, dtype=None) -> jax.Array:
    """iid rows ω_i ~ N(0, I_d).  Returns W: (m, d)."""
    m = _checks.positive_int("m", m)
    d = _checks.positive_int("d", d)
    return jax.random.normal(key, (m, d), dtype=dtype)


def haar_orthogonal(key, n_blocks: int, d: int, *, dtype=None, sign_fix: bool = True) -> jax.Array:
    """``n_blocks`` independent d×d orthogonal matrices.  Returns (n_blocks, d, d).

    Each block is Q from the QR decomposition of a Gaussian matrix G = QR, with Q's columns multiplied by
    sign(diag R) (Mezzadri 2007, *How to generate random matrices from the classical compact groups*, §5). Only
    then is Q Haar-distributed. ``sign_fix=False`` reproduces the bug of the public Performer/HRF code, which
    orthogonalises by QR without the sign fix: with LAPACK's convention the rows of Qᵀ then lean towards ±e_i, so
    they are not marginally uniform on the sphere and positive random features become biased. It exists only to
    demonstrate that bug; never use it for estimation.
    """
    n_blocks = _checks.positive_int("n_blocks", n_blocks)
    d = _checks.positive_int("d", d)
    return _haar_orthogonal(key, n_blocks, d, dtype, sign_fix)


@partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _haar_orthogonal(key, n_blocks, d, dtype, sign_fix):
    gauss = jax.random.normal(key, (n_blocks, d, d), dtype=dtype)
    q, r = jnp.linalg.qr(gauss)
    if sign_fix:
        signs = jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1))
        signs = jnp.where(signs == 0, 1.0, signs)
        q = q * signs[:, None, :]
    return q


def orthogonal(key, m: int, d: int, *, dtype=None, norms: str = "chi", sign_fix: bool = True) -> jax.Array:
    """Orthogonal random features (ORF; Yu et al. 2016, Performer §2.4).  Returns W: (m, d).

    Rows come in ⌈m/d⌉ independent blocks of d mutually orthogonal Haar-uniform directions (the last block
    truncated), so any m ≥ 1 works, including m > d. Each row is then given a length:

    - ``norms="chi"``: independent χ_d lengths (the norms of fresh N(0, I_d) vectors), so that every row is
      marginally N(0, I_d) and every estimator that is unbiased for iid Gaussian ω stays unbiased;
    - ``norms="fixed"``: every length √d ("regularised" ORF, Performer's ``scaling=1``). Rows are then uniform on
      the sphere of radius √d, not Gaussian, and exponential estimators are biased.

    ``sign_fix`` is passed to :func:`haar_orthogonal`; ``False`` reproduces the public-code bug (demonstration only).
    """
    m = _checks.positive_int("m", m)
    d = _checks.positive_int("d", d)
    if norms not in ("chi", "fixed"):
        raise ValueError(f"norms must be 'chi' or 'fixed', got {norms!r}")
    return _orthogonal(key, m, d, dtype, norms, sign_fix)


@partial(jax.jit, static_argnums=(1, 2, 3, 4, 5))
def _orthogonal(key, m, d, dtype, norms, sign_fix):
    return _orthogonal_batch(key, 1, m, d, dtype, norms, sign_fix)[0]


def orthogonal_batch(key, draws: int, m: int, d: int, *, dtype=None, norms: str = "chi") -> jax.Array:
    """``draws`` independent ORF matrices in one batched QR (no ``vmap``).  Returns (draws, m, d).

    Same law as :func:`orthogonal` (sign-fixed Haar blocks, χ_d or √d lengths). Prefer this to ``vmap`` over
    :func:`orthogonal`: batched QR inside ``vmap`` scales badly on the CPU backend.
    """
    draws = _checks.positive_int("draws", draws)
    m = _checks.positive_int("m", m)
    d = _checks.positive_int("d", d)
    if norms not in ("chi", "fixed"):
        raise ValueError(f"norms must be 'chi' or 'fixed', got {norms!r}")
    return _orthogonal_batch(key, draws, m, d, dtype, norms, True)


@partial(jax.jit, static_argnums=(1, 2, 3, 4, 5, 6))
def _orthogonal_batch(key, draws, m, d, dtype, norms, sign_fix):
    n_blocks = math.ceil(m / d)
    key_dirs, key_norms = jax.random.split(key)
    # Rows of Qᵀ are the columns of Q: orthonormal, and (with the sign fix) each uniform on the sphere.
    blocks = _haar_orthogonal(key_dirs, draws * n_blocks, d, dtype, sign_fix)
    directions = jnp.swapaxes(blocks, -1, -2).reshape(draws, n_blocks * d, d)[:, :m]
    if norms == "chi":
        lengths = jnp.linalg.norm(jax.random.normal(key_norms, (draws, m, d), dtype=directions.dtype), axis=-1)
    else:
        lengths = jnp.full((draws, m), math.sqrt(d), dtype=directions.dtype)
    return directions * lengths[..., None]


def structured_orthogonal(key, m: int, d: int, *, dtype=None) -> jax.Array:
    """SORF / ORF-Had (Yu et al. 2016): blocks √D · H D₁ H D₂ H D₃ with H the normalised Walsh–Hadamard matrix of
    size D = next power of 2 ≥ d and D_i iid Rademacher diagonals.  Returns W: (m, d).

    Inputs are implicitly zero-padded from d to D: the first d columns of each D×D block act on the padded input
    exactly as the full block does. Rows have length √D in ℝ^D (not χ_D), so exponential estimators built on SORF
    are slightly biased; ⌈m/D⌉ independent blocks are stacked and truncated to m rows.
    """
    m = _checks.positive_int("m", m)
    d = _checks.positive_int("d", d)
    D = 1 << (d - 1).bit_length()
    n_blocks = math.ceil(m / D)
    hadamard = jnp.asarray(scipy.linalg.hadamard(D), dtype=dtype or jnp.result_type(float)) / math.sqrt(D)
    signs = jax.random.rademacher(key, (n_blocks, 3, D), dtype=hadamard.dtype)
    blocks = jnp.einsum("ij,bj,jk,bk,kl,bl->bil", hadamard, signs[:, 0], hadamard, signs[:, 1], hadamard, signs[:, 2])
    return (math.sqrt(D) * blocks).reshape(n_blocks * D, D)[:m, :d]


def halton_gaussian(seed: int, m: int, d: int, *, randomisation: str = "scramble") -> np.ndarray:
    """Randomised quasi-Monte Carlo projections (Halton-R): ω = Φ⁻¹(u) for the first m points u of a randomised
    d-dimensional Halton sequence. ``randomisation="scramble"``: ``scipy.stats.qmc.Halton(d, scramble=True,
    seed=seed)``; ``"shift"``: the plain Halton sequence plus one uniform vector, modulo 1 (Cranley–Patterson, the
    randomisation of Avron et al. 2016). Either way each u is uniform on [0, 1)^d, so each ω is exactly N(0, I_d).
    ``"none"``: the plain (deterministic) sequence from its second point on — its first point is 0, where Φ⁻¹ is
    −∞ —; ``seed`` is ignored and the estimator built from it is biased (a diagnostic reading, not a random law).

    u is clipped to [1e-12, 1 − 1e-12] before Φ⁻¹. Returns a numpy array W: (m, d); the same seed gives the same matrix.
    """
    m = _checks.positive_int("m", m)
    d = _checks.positive_int("d", d)
    _checks.one_of("randomisation", randomisation, ("scramble", "shift", "none"))
    seed = _checks.integer("seed", seed, low=0)  # 2.5 was read as 2, "3" as 3
    return _halton_gaussians([seed], m, d, randomisation)[0]


def _halton_gaussians(seeds, m: int, d: int, randomisation: str) -> np.ndarray:
    """:func:`halton_gaussian` for each of the integer ``seeds`` at once.  Returns (len(seeds), m, d).

    Only the scrambled sequence is built per seed (scipy scrambles in its constructor); the plain sequence of
    ``"shift"`` is built once, and Φ⁻¹ runs once over the whole stack. ``"none"`` ignores the seeds.
    """
    from scipy import stats  # ~1 s to import; only this sampler needs it

    if randomisation == "scramble":
        u = np.stack([stats.qmc.Halton(d, scramble=True, seed=int(s)).random(m) for s in seeds])
    elif randomisation == "none":
        u = np.broadcast_to(stats.qmc.Halton(d, scramble=False).fast_forward(1).random(m), (len(seeds), m, d))
    else:
        shifts = np.stack([np.random.default_rng(int(s)).uniform(size=d) for s in seeds])
        u = (stats.qmc.Halton(d, scramble=False).random(m) + shifts[:, None, :]) % 1.0
    return stats.norm.ppf(np.clip(u, 1e-12, 1 - 1e-12))


def sample(law: str, key, m: int, d: int, *, draws: int | None = None, rotations: int | None = None, dtype=None):
    """W: (m, d) rows of ``law`` (one of :data:`LAWS`, module docstring), or (draws, m, d) independent matrices.

    Args:
      law: the projection law.
      key: a ``jax.random`` key (``"halton"`` derives its scrambling seed from it).
      m, d: rows and dimension; m need not be a multiple of d (the last block is truncated).
      draws: if given, that many independent matrices in one batched call.
      rotations: Givens rotations per block for ``"givens"`` (default ⌈5 d ln d⌉, KAMA-NNs' experiments).
      dtype: floating dtype (default: JAX's default float).
    """
    _checks.one_of("law", law, LAWS)
    m = _checks.positive_int("m", m)
    d = _checks.positive_int("d", d)
    if draws is not None:
        return _sample_batch(law, key, _checks.positive_int("draws", draws), m, d, rotations, dtype)
    if law in ("horn", "givens"):
        return _sample_batch(law, key, 1, m, d, rotations, dtype)[0]
    return _sample_one(law, key, m, d, dtype)


def _sample_one(law, key, m, d, dtype):
    if law == "iid":
        return gaussian(key, m, d, dtype=dtype)
    if law == "orthogonal":
        return orthogonal(key, m, d, dtype=dtype)
    if law == "sorf":
        return structured_orthogonal(key, m, d, dtype=dtype)
    return _halton_stack(law, [int(_halton_seed(key))], m, d, dtype)[0]


def _halton_seed(key) -> jax.Array:
    """The integer seed of a ``"halton"`` or ``"halton-shift"`` matrix, drawn from its key."""
    return jax.random.randint(key, (), 0, np.iinfo(np.int32).max)


def _halton_batch(law, keys, m, d, dtype):
    """:func:`_sample_one`'s ``"halton"`` or ``"halton-shift"`` matrix for each key, the seeds drawn in one call.
    Returns (len(keys), m, d)."""
    return _halton_stack(law, np.asarray(jax.vmap(_halton_seed)(keys)), m, d, dtype)


def _halton_stack(law, seeds, m, d, dtype):
    """The ``"halton"`` or ``"halton-shift"`` matrices of integer ``seeds`` as a (len(seeds), m, d) JAX array."""
    randomisation = "shift" if law == "halton-shift" else "scramble"
    return jnp.asarray(_halton_gaussians(seeds, m, d, randomisation), dtype=dtype or jnp.result_type(float))


def _sample_batch(law, key, draws, m, d, rotations, dtype):
    dtype = jnp.dtype(dtype or jnp.result_type(float))
    if law == "iid":
        return jax.random.normal(key, (draws, m, d), dtype=dtype)
    if law == "orthogonal":
        return orthogonal_batch(key, draws, m, d, dtype=dtype)
    if law in ("halton", "halton-shift"):
        return _halton_batch(law, jax.random.split(key, draws), m, d, dtype)
    if law == "sorf":
        return jnp.stack([_sample_one(law, k, m, d, dtype) for k in jax.random.split(key, draws)])
    n_blocks = math.ceil(m / d)
    k_dirs, k_norms = jax.random.split(key)
    if law == "givens":
        k = kama.rotations_for(d) if rotations is None else _checks.positive_int("rotations", rotations)
        blocks = kama.random_matrices(k_dirs, draws * n_blocks, k, d, dtype)
        width = d
    else:
        width = 1 << (d - 1).bit_length()
        blocks = _hadamard_blocks(k_dirs, draws * n_blocks, width, dtype)[:, :d, :d]
    directions = blocks.reshape(draws, n_blocks * d, d)[:, :m]
    lengths = jnp.linalg.norm(jax.random.normal(k_norms, (draws, m, width), dtype=dtype), axis=-1)
    return directions * lengths[..., None]


def _hadamard_blocks(key, n: int, D: int, dtype) -> jax.Array:
    """n independent (H D₃)(H D₂)(H D₁) blocks with orthonormal H: unit-length orthogonal rows.  Returns (n, D, D)."""
    W = structured_orthogonal(key, n * D, D, dtype=dtype)
    return W.reshape(n, D, D) / math.sqrt(D)
