"""Monte Carlo of random-feature estimators at fixed input pairs: many independent draws of the random matrices.

For iid Gaussian projections, an estimator of SM(x, y) depends on ω only through (ωᵀx, ωᵀy), whose law is fixed by the
Gram matrix of (x, y). :func:`reduce_to_span` maps a pair in ℝ^d to a pair in ℝ² with the same Gram matrix, so
simulations at d = 64 can be run in d = 2 *exactly in distribution* (our "speed trick", checked by
tests/test_simulation_and_data.py::test_two_dimensional_and_full_dimensional_simulations_agree_in_distribution). This
does not hold for structured (orthogonal, Hadamard, QMC) projections: use the full-dimensional pairs for those.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks, attention, kernels, moments, projections, quadrature, sharding, sphere
from rflib.experiments.progress_bars import bar
from rflib.features import hybrid, png

Sampler = Callable[[jax.Array, int, int], jax.Array]


def reduce_to_span(x, y) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) ∈ ℝ^d × ℝ^d → (x', y') ∈ ℝ² × ℝ² with the same norms and inner product: x' = ‖x‖e₁."""
    x = np.asarray(_checks.vectors("x", x), dtype=np.float64)
    y = np.asarray(_checks.vectors("y", y, dim=x.shape[-1]), dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x and y must be single vectors (d,), got shape {x.shape}")
    nx = np.linalg.norm(x)
    if nx == 0:
        return np.zeros(2), np.array([np.linalg.norm(y), 0.0])
    along = x @ y / nx
    return np.array([nx, 0.0]), np.array([along, np.sqrt(max(y @ y - along**2, 0.0))])


def gaussian_sampler(key, rows: int, d: int) -> jax.Array:
    """Default sampler: iid N(0, 1) entries, (rows, d)."""
    return jax.random.normal(key, (rows, d))


def paired_estimates(
    key,
    X,
    Y,
    make_estimator: Callable[..., object],
    shapes: Mapping[str, tuple[int, int]],
    draws: int,
    *,
    samplers: Mapping[str, Sampler] | None = None,
    matrices: Mapping[str, np.ndarray] | None = None,
    law: str = "iid",
    chunk: int = 4096,
) -> np.ndarray:
    """Estimates of SM(x_i, y_i) for the rows of X and Y (pairs, not all combinations), ``draws`` times, each draw
    with freshly sampled random matrices.

    Args:
      key: JAX key; the same key and ``chunk`` give the same estimates. Another ``chunk`` draws the same matrices,
        but XLA compiles another batch shape, which may change the estimates by round-off (a few ulp).
      X, Y: (p, d) the p pairs.
      make_estimator: called as ``make_estimator(**matrices)`` → an :class:`~rflib.features.base.Estimator`
        (e.g. ``hybrid.angular_hybrid_estimator`` with matrices named W_pos, W_trig, T). Must be traceable by
        ``jax.vmap``. Pass the same object on every call to reuse the compiled simulator.
      shapes: name → (rows, d) of each random matrix.
      draws: number of independent draws.
      samplers: name → ``sampler(key, rows, d)`` (traceable), default :func:`gaussian_sampler`; e.g.
        ``projections.orthogonal`` for ORF.
      matrices: name → pre-drawn stack (draws, rows, d), for samplers that cannot be traced (e.g. scrambled Halton).
      law: the projection law (:data:`rflib.projections.LAWS`) of every matrix that ``samplers`` and ``matrices`` do
        not give: ``"iid"`` and ``"sorf"`` are sampled inside the compiled simulator; the other laws (batched QR,
        Halton's scipy sequence, Givens and HD products) are pre-drawn as (draws, rows, d) stacks by
        :func:`rflib.projections.sample` from a key split off ``key``.
      chunk: draws evaluated per vmapped batch (bounds memory); each batch is split over every visible device.

    Returns:
      (draws, p) float64 numpy array.
    """
    draws = _checks.positive_int("draws", draws)
    chunk = _checks.positive_int("chunk", chunk)
    X = jnp.asarray(_checks.points("X", X))
    Y = jnp.asarray(_checks.points("Y", Y, dim=X.shape[1]))
    if X.shape != Y.shape:
        raise ValueError(f"X and Y must hold the same number of pairs, got shapes {X.shape} and {Y.shape}")
    law = _checks.one_of("law", law, projections.LAWS)
    samplers = dict(samplers or {})
    matrices = dict(matrices or {})
    if law == "sorf":
        samplers = {name: projections.structured_orthogonal for name in shapes} | samplers
    elif law != "iid" and (names := [n for n in shapes if n not in matrices and n not in samplers]):
        stack_key, key = jax.random.split(key)
        stack_keys = jax.random.split(stack_key, len(names))
        drawn_stacks = zip(names, stack_keys, strict=True)
        matrices = {n: projections.sample(law, k, *shapes[n], draws=draws) for n, k in drawn_stacks} | matrices
    for name, stack in matrices.items():
        if np.shape(stack) != (draws, *shapes[name]):
            raise ValueError(f"matrices[{name!r}] must have shape {(draws, *shapes[name])}, got {np.shape(stack)}")
    drawn = tuple(sorted((n, s, samplers.get(n, gaussian_sampler)) for n, s in shapes.items() if n not in matrices))
    given = tuple(sorted(matrices))
    batched = _batched_estimates(make_estimator, drawn, given)
    draw_keys = jax.random.split(key, draws)
    out = []
    for i in range(0, draws, chunk):  # each chunk's draws split over every visible device (rflib.sharding)
        chunk_keys, n = sharding.shard_leading(draw_keys[i : i + chunk])
        stacks = [sharding.shard_leading(jnp.asarray(matrices[m][i : i + chunk], dtype=X.dtype))[0] for m in given]
        out.append(np.asarray(batched(chunk_keys, X, Y, *stacks))[:n])
    return np.concatenate(out)


def pointwise_estimates(key, x, y, make_estimator, shapes, draws: int, **kwargs) -> np.ndarray:
    """:func:`paired_estimates` for one pair x, y: (d,) → (draws,)."""
    x = _checks.vectors("x", x)
    return paired_estimates(key, jnp.atleast_2d(x), jnp.atleast_2d(y), make_estimator, shapes, draws, **kwargs)[:, 0]


@functools.lru_cache(maxsize=64)
def _batched_estimates(make_estimator, drawn, given):
    """One jitted, vmapped simulator per (factory, drawn matrices, given matrices); X and Y are arguments."""

    def one(k, X, Y, *stacks):
        keys = jax.random.split(k, max(len(drawn), 1))
        mats = {
            name: sampler(kk, *shape).astype(X.dtype)
            for (name, shape, sampler), kk in zip(drawn, keys[: len(drawn)], strict=True)
        }
        mats.update(zip(given, stacks, strict=True))
        return make_estimator(**mats).paired(X, Y)

    return jax.jit(jax.vmap(one, in_axes=(0, None, None) + (0,) * len(given)))


# --- Monte Carlo summaries (KAMA-NNs Figs 1–2) ------------------------------------------------------------


def error_summary(estimates, K) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Monte Carlo summary over independent draws (axis 0): (MSE, its standard error s(err²)/√R, mean error,
    its standard error; s the sample standard deviation).  estimates: (R, …), R ≥ 2; K: the exact value(s),
    broadcastable to (…)."""
    err = np.asarray(estimates) - np.asarray(K)
    if err.ndim == 0 or err.shape[0] < 2:
        raise ValueError(f"estimates needs at least 2 draws along axis 0 for a standard error, got shape {err.shape}")
    root = math.sqrt(err.shape[0])
    return (err**2).mean(0), (err**2).std(0, ddof=1) / root, err.mean(0), err.std(0, ddof=1) / root


def relative_frobenius_error(K_hat, K) -> np.ndarray:
    """‖K̂ − K‖_F / ‖K‖_F (the paper's printed denominator ‖K(X̂)‖_F is a typo).  K_hat: (…, N, N)."""
    K = np.asarray(K)
    return np.linalg.norm(np.asarray(K_hat) - K, axis=(-2, -1)) / np.linalg.norm(K)


def gram_errors(name: str, W, X, K) -> np.ndarray:
    """‖K̂(X) − K‖_F / ‖K‖_F for every matrix in W: (draws, m, d), one draw at a time (no (draws, N, N) array).

    X: (N, d); K: (N, N) the exact kernel matrix.  Returns (draws,).
    """
    X, K = jnp.asarray(X), jnp.asarray(K)
    norm = jnp.linalg.norm(K)
    return np.asarray(jax.lax.map(lambda w: jnp.linalg.norm(png.gram_estimate(name, w, X) - K) / norm, jnp.asarray(W)))


# --- Monte Carlo of MSEs at fixed pairs (Performer Lemma 2, HRF Lemma 2.2, Fig 1, Theorem 3.1) ----------------------


def mse_and_standard_error(estimates, target) -> tuple[float, float]:
    """Empirical MSE of R independent estimates around the exact ``target`` and its standard error.

    estimates: (R,), R ≥ 2; target: the exact value (a number). Returns (mean of (e − target)², s/√R), s the sample
    standard deviation of (e − target)²: the standard error used for every "within 5σ" Monte Carlo check of a
    closed-form MSE.
    """
    estimates = _checks.finite_numpy("estimates", estimates, 1)
    target = _checks.real_number("target", target)
    mse, mse_se, _, _ = error_summary(estimates, target)
    return mse, mse_se


def count_within_band(empirical, closed, sigma, *, n_sigma: float = 5.0, floor: float = 1e-24) -> int:
    """How many i have |empirical_i − closed_i| ≤ n_sigma·sigma_i + floor: a Monte Carlo MSE against its closed
    form. ``floor`` absorbs round-off where an estimator is exact and both MSEs are ~0 (e.g. trig at θ = 0).

    empirical, closed, sigma: (k,) each.
    """
    empirical = _checks.finite_numpy("empirical", empirical, 1)
    closed = _checks.finite_numpy("closed", closed, 1)
    sigma = _checks.finite_numpy("sigma", sigma, 1)
    if not empirical.shape == closed.shape == sigma.shape:
        raise ValueError(
            f"empirical, closed and sigma must have one shape, got {empirical.shape}, {closed.shape}, {sigma.shape}"
        )
    _checks.values_in_range("sigma", sigma, low=0.0)
    n_sigma = _checks.positive_float("n_sigma", n_sigma)
    floor = _checks.real_number("floor", floor, low=0.0)
    return int(sum(abs(e - c) <= n_sigma * s + floor for e, c, s in zip(empirical, closed, sigma, strict=True)))


def single_feature_mse(
    key_for, feature_maps, log_mses, thetas, d: int, draws: int, *, n_points: int = 120, progress: bool = False
) -> dict[str, list[tuple[float, float, float]]]:
    """Lemma 2.2 of HRF (Performer Lemma 2) by seeded Monte Carlo, one feature at a time.

    For each angle θ_i: the unit pair x = e₁, y at angle θ_i in ℝ^d (:func:`rflib.kernels.pair_at_angle`), ``draws``
    iid rows ω ~ N(0, I_d) drawn from ``key_for(i)``, and for every feature map the single-feature estimates
    e(ω) (:func:`rflib.quadrature.single_feature_estimates`).

    Args:
      key_for: i → JAX key of angle i.
      feature_maps: name → ``feature_map(W, X)`` (rflib.features.trig, positive, hyperbolic, …).
      log_mses: name → ``log_mse(x, y, m)``, the closed form under test (rflib.moments.classic).
      thetas: (k,) angles.
      d, draws: dimension and number of single-feature draws per angle.
      n_points: Gauss–Hermite points per axis of the exact fourth moment.
      progress: show a bar over the angles.

    Returns:
      name → one (empirical MSE, closed-form MSE with m = 1, σ) per angle, σ = √((E(e − SM)⁴ − MSE²)/draws) the
      exact standard error of the empirical MSE (fourth moment by quadrature).
    """
    _checks.callable_arg("key_for", key_for, "a JAX key")
    thetas = _checks.finite_numpy("thetas", thetas, 1)
    d = _checks.integer("d", d, low=2)
    draws = _checks.positive_int("draws", draws)
    n_points = _checks.positive_int("n_points", n_points)
    if set(feature_maps) != set(log_mses):
        raise ValueError(
            f"feature_maps and log_mses must name the same maps, got {sorted(feature_maps)} and {sorted(log_mses)}"
        )
    mc = {name: [] for name in feature_maps}
    for i, theta in enumerate(bar(thetas, "Lemma 2.2 Monte Carlo, angles", progress)):
        x, y = kernels.pair_at_angle([theta], d=d)
        W = np.asarray(projections.gaussian(key_for(i), draws, d))
        for name, fmap in feature_maps.items():
            estimates = quadrature.single_feature_estimates(fmap, W, x[0], y[0])
            closed = float(jnp.exp(log_mses[name](x[0], y[0], 1)))  # the claim under test
            exact = quadrature.estimator_moments(fmap, x[0], y[0], n_points=n_points)  # only for σ
            empirical = error_summary(estimates, np.exp(x[0] @ y[0]))[0]
            sigma = np.sqrt(max(exact["fourth"] - exact["mse"] ** 2, 0.0) / draws)
            mc[name].append((empirical, closed, sigma))
    return mc


def exp_projection_means(key, samplers, z) -> dict[str, tuple[float, float]]:
    """Mean and standard error of exp(ωᵀz) over the rows ω of ``sampler(key)``, for each sampler.

    For rows that are marginally N(0, I_d) the mean is e^{‖z‖²/2} (the positive features' unbiasedness, Performer
    Lemma 1); orthogonal rows from QR without the sign fix are not, and the mean is biased (Performer Thm 2 needs
    Haar blocks). samplers: label → ``sampler(key)`` returning (N, d), N ≥ 2; z: (d,). Returns label → (mean, s/√N),
    s the sample standard deviation.
    """
    z = _checks.vectors("z", z)
    if z.ndim != 1:
        raise ValueError(f"z must be a single vector (d,), got shape {z.shape}")
    out = {}
    for label, sampler in samplers.items():
        values = np.exp(np.asarray(sampler(key) @ z))
        if values.size < 2:
            raise ValueError(f"samplers[{label!r}] must draw at least 2 rows for a standard error, got {values.size}")
        out[label] = (values.mean(), values.std(ddof=1) / np.sqrt(values.size))
    return out


def qr_sign_bias(key, n_rows: int, d: int) -> dict[str, tuple[float, float]]:
    """The unfixed-QR bug (google-research#436) on positive features: :func:`exp_projection_means` at z = e₁ ∈ ℝ^d
    for ``n_rows`` rows, all three from ``key``, of "iid Gaussian" (:func:`rflib.projections.gaussian`),
    "orthogonal, sign-fixed QR (rflib)" (:func:`rflib.projections.orthogonal`) and "orthogonal, unfixed QR (public
    code)" (``orthogonal(..., sign_fix=False)``). The first two have mean e^{1/2}; the third is biased (≈1.37 at
    d = 4). Returns label → (mean, standard error)."""
    n_rows = _checks.positive_int("n_rows", n_rows)
    d = _checks.positive_int("d", d)
    z = jnp.zeros(d).at[0].set(1.0)
    samplers = {
        "iid Gaussian": lambda k: projections.gaussian(k, n_rows, d),
        "orthogonal, sign-fixed QR (rflib)": lambda k: projections.orthogonal(k, n_rows, d),
        "orthogonal, unfixed QR (public code)": lambda k: projections.orthogonal(k, n_rows, d, sign_fix=False),
    }
    return exp_projection_means(key, samplers, z)


def orthogonal_over_iid_mse(
    key_for, feature_map, log_mse, x, y, ms, redraws: int, *, progress: bool = False
) -> list[tuple[float, float]]:
    """MSE of m orthogonal random features (ORF, Performer §2.4) over the closed-form iid MSE, for each m.

    For each m, ``redraws`` independent ORF matrices with m rows are drawn in one call of
    :func:`rflib.projections.orthogonal` from ``key_for(m)`` (its blocks of d rows are independent, so consecutive
    groups of ⌈m/d⌉ blocks, truncated to m rows, are independent ORF matrices); the m-feature estimate is the mean of
    the single-feature estimates of ``feature_map`` at the pair (x, y).

    Args:
      key_for: m → JAX key.
      feature_map: ``feature_map(W, X)``; log_mse: its iid closed form ``log_mse(x, y, m)`` (rflib.moments.classic).
      x, y: (d,) the pair. ms: the numbers of features m. redraws: ORF matrices per m. progress: a bar over the m.
    Returns:
      one (MSE(ORF)/MSE(iid), 2 standard errors of that ratio) per m. Performer Thm 2: < 1 for m ≤ d.
    """
    _checks.callable_arg("key_for", key_for, "a JAX key")
    x = _checks.finite_numpy("x", x, 1)
    y = _checks.finite_numpy("y", y, 1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have one shape (d,), got {x.shape} and {y.shape}")
    ms = [_checks.positive_int("ms", m) for m in ms]
    redraws = _checks.positive_int("redraws", redraws)
    d = x.shape[0]
    sm = float(np.exp(x @ y))
    out = []
    for m in bar(ms, "ORF vs iid MSE, m", progress):
        rows_per_draw = -(-m // d) * d
        W_all = projections.orthogonal(key_for(m), redraws * rows_per_draw, d)
        W_all = np.asarray(W_all).reshape(redraws, rows_per_draw, d)[:, :m].reshape(-1, d)
        single = quadrature.single_feature_estimates(feature_map, W_all, x, y)
        mse, mse_se, _, _ = error_summary(single.reshape(redraws, m).mean(axis=1), sm)
        iid = float(jnp.exp(log_mse(x, y, m)))
        out.append((mse / iid, 2 * mse_se / iid))
    return out


def attention_errors(
    key_for, Q, K, V, estimators, feature_dims, seeds: int, *, progress: bool = False
) -> dict[str, np.ndarray]:
    """Relative error ‖Âtt − Att‖_F / ‖Att‖_F of linear attention with random features (Performer §2.1–2.4).

    Args:
      key_for: (seed s, index j of F) → JAX key; the same key draws every estimator's projections at (s, j).
      Q, K: (L, d) queries and keys (already scaled); V: (L, d_v) values.
      estimators: name → (feature map ``fmap(W, X)``, sampler ``sampler(key, rows, d)``, feature columns per
        projection): at feature dimension F the sampler draws F // columns rows.
      feature_dims: the feature dimensions F. seeds: independent draws per F.
      progress: show a bar over the seeds.
    Returns:
      name → (len(feature_dims), seeds) relative errors.
    """
    _checks.callable_arg("key_for", key_for, "a JAX key")
    Q = _checks.points("Q", Q)
    K = _checks.points("K", K, dim=Q.shape[1])
    V = _checks.points("V", V)
    if not Q.shape[0] == K.shape[0] == V.shape[0]:
        raise ValueError(f"Q, K and V must have one length L, got {Q.shape}, {K.shape}, {V.shape}")
    feature_dims = [_checks.positive_int("feature_dims", F) for F in feature_dims]
    seeds = _checks.positive_int("seeds", seeds)
    exact_att = attention.softmax_attention(Q, K, V)
    exact_norm = jnp.linalg.norm(exact_att)
    errors = {name: np.zeros((len(feature_dims), seeds)) for name in estimators}
    for s in bar(range(seeds), "attention errors, seeds", progress):
        for j, F in enumerate(feature_dims):
            for name, (fmap, sampler, columns_per_projection) in estimators.items():
                W = sampler(key_for(s, j), F // columns_per_projection, Q.shape[1])
                approx = attention.linear_attention(Q, K, V, functools.partial(fmap, W))
                errors[name][j, s] = float(jnp.linalg.norm(approx - exact_att) / exact_norm)
    return errors


def mse_at_angles(
    key_for, thetas, r: float, estimators, draws: int, *, progress: bool = False
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Monte Carlo MSE of estimators of SM(x, y) at the pairs ‖x‖ = ‖y‖ = r, angle θ_i, in ℝ² (HRF Fig 1).

    For iid projections the estimates depend on (x, y) only through their Gram matrix, so ℝ² is exact in
    distribution for any d (:func:`reduce_to_span`).

    Args:
      key_for: (i, name) → JAX key of angle i and estimator ``name``.
      thetas: (k,) angles. r: the common norm.
      estimators: name → (``make_estimator``, shapes) as taken by :func:`pointwise_estimates` (d = 2).
      draws: independent estimates per angle. progress: show a bar over the angles.
    Returns:
      name → (MSE, its standard error), each (k,) over the angles (:func:`mse_and_standard_error`).
    """
    _checks.callable_arg("key_for", key_for, "a JAX key")
    thetas = _checks.finite_numpy("thetas", thetas, 1)
    r = _checks.real_number("r", r, low=0.0)
    draws = _checks.positive_int("draws", draws)
    rows = {name: [] for name in estimators}
    for i, theta in enumerate(bar(thetas, f"Monte Carlo MSE at r = {r:g}, angles", progress)):
        x, y = kernels.pair_at_angle(theta, r)
        for name, (make, shapes) in estimators.items():
            est = pointwise_estimates(key_for(i, name), x, y, make, shapes, draws)
            rows[name].append(mse_and_standard_error(est, np.exp(x @ y)))
    return {name: (np.array([row[0] for row in r]), np.array([row[1] for row in r])) for name, r in rows.items()}


def angular_hybrid_mse_table(
    key_for, radii, thetas, m: int, n: int, draws: int, *, monte_carlo_up_to: float = 0.5
) -> list[dict]:
    """The angular hybrid's MSE at ‖x‖ = ‖y‖ = r, angle θ, four ways (HRF Theorem 3.1, Theorem D.1, eq 47).

    For every (r, θ): ``generic`` = Theorem 3.1 composed with Lemmas 2.2 and 3.2 at the vectors
    (:func:`rflib.moments.hybrid.log_mse_angular_hybrid`), ``corrected`` and ``printed`` = eq 47 on the sphere
    corrected and as printed (:func:`rflib.sphere.log_mse_angular_hybrid`), and, where r ≤ ``monte_carlo_up_to``,
    ``mc`` = (MSE, standard error) of ``draws`` estimates by :func:`rflib.features.hybrid.angular_hybrid_estimator`
    with m, m, n iid rows in ℝ² from ``key_for(r, θ)`` (else None; FAVOR+'s kurtosis makes larger r unreliable).

    Returns one dict {"r", "theta", "generic", "corrected", "printed", "mc"} per (r, θ), r outermost.
    """
    _checks.callable_arg("key_for", key_for, "a JAX key")
    m = _checks.positive_int("m", m)
    n = _checks.positive_int("n", n)
    draws = _checks.positive_int("draws", draws)
    monte_carlo_up_to = _checks.real_number("monte_carlo_up_to", monte_carlo_up_to)
    shapes = {"W_pos": (m, 2), "W_trig": (m, 2), "T": (n, 2)}
    rows = []
    for r in radii:
        for theta in thetas:
            x, y = kernels.pair_at_angle(theta, r)
            row = {
                "r": r,
                "theta": theta,
                "generic": float(jnp.exp(moments.hybrid.log_mse_angular_hybrid(x, y, m, n))),
                "corrected": float(np.exp(sphere.log_mse_angular_hybrid(theta, r, m, n))),
                "printed": float(np.exp(sphere.log_mse_angular_hybrid(theta, r, m, n, printed=True))),
                "mc": None,
            }
            if r <= monte_carlo_up_to:
                est = pointwise_estimates(key_for(r, theta), x, y, hybrid.angular_hybrid_estimator, shapes, draws)
                row["mc"] = mse_and_standard_error(est, np.exp(x @ y))
            rows.append(row)
    return rows


def angular_hybrid_variants(key_for, x, y, m: int, n: int, draws: int) -> dict[bool, tuple[float, float, float]]:
    """HRF Theorem 3.1's two variants of the angular hybrid at one pair: (I) independent ω for the two bases,
    (II) shared ω (:func:`rflib.features.hybrid.shared_angular_hybrid_estimator`).

    x, y: (d,) the pair; m, n: base and λ projections; draws: Monte Carlo estimates per variant, iid rows drawn
    from ``key_for(shared)``. Returns shared → (closed-form MSE, Monte Carlo MSE, its standard error).
    """
    _checks.callable_arg("key_for", key_for, "a JAX key")
    x = _checks.finite_numpy("x", x, 1)
    y = _checks.finite_numpy("y", y, 1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have one shape (d,), got {x.shape} and {y.shape}")
    m = _checks.positive_int("m", m)
    n = _checks.positive_int("n", n)
    draws = _checks.positive_int("draws", draws)
    d = x.shape[0]
    out = {}
    for shared in (False, True):
        shapes = {"W_pos": (m, d), "T": (n, d)} | ({} if shared else {"W_trig": (m, d)})
        make = hybrid.shared_angular_hybrid_estimator if shared else hybrid.angular_hybrid_estimator
        est = pointwise_estimates(key_for(shared), x, y, make, shapes, draws)
        mse, se = mse_and_standard_error(est, np.exp(x @ y))
        closed = float(jnp.exp(moments.hybrid.log_mse_angular_hybrid(x, y, m, n, shared=shared)))
        out[shared] = (closed, mse, se)
    return out


def loglog_slope(x, y, *, x_min: float | None = None) -> float:
    """Least-squares slope of log y against log x over the points with x ≥ ``x_min`` (all if None); NaN when fewer
    than two points remain. A Monte Carlo error falls like F^{-1/2}: slope −1/2 (Performer §2.3).  x, y: (k,) > 0."""
    x = _checks.finite_numpy("x", x, 1)
    y = _checks.finite_numpy("y", y, 1)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have one shape, got {x.shape} and {y.shape}")
    _checks.values_in_range("x", x, low=0.0, low_open=True)
    _checks.values_in_range("y", y, low=0.0, low_open=True)
    log_y = np.log(y)
    if x_min is None:
        return float(np.polyfit(np.log(x), log_y, 1)[0])
    keep = x >= _checks.real_number("x_min", x_min)
    return float(np.polyfit(np.log(x[keep]), log_y[keep], 1)[0]) if keep.sum() >= 2 else float("nan")


def slope_over_draws(x, y, *, x_min: float | None = None) -> tuple[float, float]:
    """The log-log slope of each independent draw's curve (:func:`loglog_slope` over x ≥ ``x_min``), averaged over
    draws, and the standard error of that mean (std/√N over the N draws; needs N ≥ 2).  x: (k,) > 0; y: (k, N) > 0,
    column j one draw's values at every x."""
    y = _checks.finite_numpy("y", y, 2)
    if y.shape[1] < 2:
        raise ValueError(f"y must hold at least 2 draws (columns) for a standard error, got shape {y.shape}")
    slopes = np.array([loglog_slope(x, y[:, j], x_min=x_min) for j in range(y.shape[1])])
    if not np.isfinite(slopes).all():
        raise ValueError(f"fewer than two x ≥ x_min = {x_min}: no slope to fit")
    return float(slopes.mean()), float(slopes.std(ddof=1) / np.sqrt(slopes.size))


def paired_log_ratio(a, b) -> tuple[float, float]:
    """Geometric mean of a/b over paired draws, exp(mean(log a − log b)), and 2 standard errors of that mean log
    ratio, s/√N over the N ≥ 2 pairs (s: the sample standard deviation, N − 1 in its denominator).  a, b: (…) > 0,
    one shape (e.g. (F values, seeds))."""
    a = _checks.finite_numpy("a", a)
    b = _checks.finite_numpy("b", b)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {a.shape} and {b.shape}")
    _checks.values_in_range("a", a, low=0.0, low_open=True)
    _checks.values_in_range("b", b, low=0.0, low_open=True)
    if a.size < 2:
        raise ValueError(f"a and b need at least 2 pairs for a standard error, got {a.size}")
    log_gap = np.log(a) - np.log(b)
    return float(np.exp(log_gap.mean())), float(2 * log_gap.std(ddof=1) / np.sqrt(log_gap.size))
