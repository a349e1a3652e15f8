"""FAVOR# (Likhosherstov et al. 2023): DERF validity and variance (Theorem 4.1), closed-form optima (§3.1, Theorems
4.2 and 4.3, eq 20), their orderings, and the three printed formulas that are wrong (eqs 7, 11 and 16).

Oracles: tensor-product Gauss–Hermite quadrature fed to the real feature maps (the nodes are the projection
matrix W), direct averages over all query–key pairs of the exact moment formula, and scipy minimisation from
random starts. Everything in float64.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpy.polynomial import hermite_e
from scipy import optimize

from rflib import attention, moments, projections
from rflib.features import classic
from rflib.features import dense_exp as de
from rflib.moments import dense_exp as dm

RNG = np.random.default_rng(11)


def anisotropic_sets(L=7, d=3, seed=0, shift=(0.3, -0.2)):
    """Queries and keys with different per-coordinate scales, rotations and nonzero means."""
    rng = np.random.default_rng(seed)
    rot_x, _ = np.linalg.qr(rng.normal(size=(d, d)))
    rot_y, _ = np.linalg.qr(rng.normal(size=(d, d)))
    X = rng.normal(size=(L, d)) * rng.uniform(0.2, 1.0, d) @ rot_x + shift[0]
    Y = rng.normal(size=(L + 2, d)) * rng.uniform(0.2, 1.0, d) @ rot_y + shift[1]
    return X, Y


def random_valid_derf(d, seed=0):
    """Dense symmetric A with eigenvalues in [−0.3, 0.05] and B⁽¹⁾ = I + 0.3G (a generic valid DERF)."""
    return de.random_derf(np.random.default_rng(seed), d)


# ---------------------------------------------------------------------------------------------------------------
# Lemma A.1 and the scalar helpers
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("phi", [0.0, 1e-6, 1e-3, 0.5, 3.0, 100.0, 1e4])
def test_a_star_minimises_the_scalar_objective_lemma_a1(phi):
    def objective(a):
        return float(de.ell(a)) + phi / (1 - 8 * a)

    res = optimize.minimize_scalar(objective, bounds=(-1e4, 0.125 - 1e-9), method="bounded", options={"xatol": 1e-12})
    a = float(de.a_star(phi))
    assert a <= 0 and objective(a) <= res.fun + 1e-12 * max(1.0, abs(res.fun))
    assert abs(a - res.x) < 1e-5 * max(1.0, abs(a))
    printed = (1 - 2 * phi - np.sqrt((2 * phi + 1) ** 2 + 8 * phi)) / 16  # eq 22 as printed
    assert a == pytest.approx(printed, rel=1e-9, abs=1e-15)
    assert float(de.g_of_phi(phi)) == pytest.approx(objective(a), rel=1e-12, abs=1e-15)


def test_a_star_is_accurate_where_the_printed_form_cancels():
    phi = 1e-12
    assert float(de.a_star(phi)) == pytest.approx(-phi / 2, rel=1e-9)  # A*(φ) = −φ/2 + O(φ²)


def test_g_is_concave_and_increasing():
    phi = np.linspace(0, 50, 401)
    g = np.asarray(de.g_of_phi(phi))
    assert g[0] == 0 and np.all(np.diff(g) > 0) and np.all(np.diff(g, 2) <= 1e-12)


# ---------------------------------------------------------------------------------------------------------------
# Theorem 4.1: validity conditions, unbiasedness and variance (eq 15)
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_theorem_4_1_unbiasedness_and_variance_by_quadrature_dense_A(seed):
    params = random_valid_derf(3, seed)
    rng = np.random.default_rng(seed + 10)
    x, y = 0.5 * rng.normal(size=3), 0.5 * rng.normal(size=3)
    mean, second = dm.derf_moments(params, x, y)
    assert mean == pytest.approx(np.exp(x @ y), rel=1e-10)
    assert second == pytest.approx(float(np.exp(dm.log_moment(params, x, y, 2))), rel=1e-10)
    # Eq 15 as printed (valid parameters): Var = D⁴ det(I−8A)^{−1/2} exp(2xᵀ(C₁ + B₁ᵀPB₁)x + 2yᵀ(C₂ + B₂ᵀPB₂)y
    # + 4xᵀB₁ᵀPB₂y) − K², P = (I − 8A)⁻¹.
    A, B1, B2, C1, C2 = (np.asarray(m) for m in params[:5])
    P = np.linalg.inv(np.eye(3) - 8 * A)
    eq15 = (
        np.exp(4 * float(params.log_D))
        / np.sqrt(np.linalg.det(np.eye(3) - 8 * A))
        * np.exp(2 * x @ (C1 + B1.T @ P @ B1) @ x + 2 * y @ (C2 + B2.T @ P @ B2) @ y + 4 * x @ B1.T @ P @ B2 @ y)
    )
    assert second == pytest.approx(eq15, rel=1e-10)


def _gauss_hermite_1d(n=80):
    t, w = hermite_e.hermegauss(n)
    return t, w / w.sum()


@pytest.mark.parametrize("d", [1, 2, 8])
def test_theorem_4_1_moments_in_higher_d_via_1d_products(d):
    """Diagonal A: E[(f₁f₂)ᵏ] = D^{2k} e^{k·c} Π_l E exp(2k a_l ω² + k v_l ω), each a 1-D Gauss–Hermite integral."""
    rng = np.random.default_rng(d)
    a = rng.uniform(-0.3, 0.05, d)
    params = de.derf(np.diag(a), np.eye(d) + 0.3 * rng.normal(size=(d, d)))
    x, y = (
        rng.uniform(0.1, 1.5) * rng.normal(size=d) / np.sqrt(d),
        rng.uniform(0.1, 1.5) * rng.normal(size=d) / np.sqrt(d),
    )
    t, w = _gauss_hermite_1d()
    v = np.asarray(params.B1) @ x + np.asarray(params.B2) @ y
    c = x @ np.asarray(params.C1) @ x + y @ np.asarray(params.C2) @ y
    for k in (1, 2):
        log_integrals = sum(np.log(w @ np.exp(2 * k * a[i] * t**2 + k * v[i] * t)) for i in range(d))
        log_expected = 2 * k * float(params.log_D) + k * c + log_integrals
        assert float(dm.log_moment(params, x, y, k)) == pytest.approx(log_expected, rel=1e-11, abs=1e-11)
    assert float(dm.log_moment(params, x, y, 1)) == pytest.approx(x @ y, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 5])
def test_random_derf_has_a_dense_A_in_its_eigenvalue_range_and_satisfies_theorem_4_1(seed):
    params = de.random_derf(np.random.default_rng(seed), 4)
    A, B1, B2, C1, C2 = (np.asarray(m) for m in params[:5])
    eig = np.linalg.eigvalsh(A)
    assert np.all(eig >= -0.3) and np.all(eig <= 0.05)
    assert np.abs(A - np.diag(np.diag(A))).max() > 1e-3  # dense, not diagonal
    P4 = np.linalg.inv(np.eye(4) - 4 * A)
    np.testing.assert_allclose(B1.T @ P4 @ B2, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(C1, -0.5 * B1.T @ P4 @ B1, atol=1e-12)
    np.testing.assert_allclose(C2, -0.5 * B2.T @ P4 @ B2, atol=1e-12)
    assert float(params.log_D) == pytest.approx(0.25 * np.linalg.slogdet(np.eye(4) - 4 * A)[1], abs=1e-13)
    # the documented draw order: the rotation's matrix, the eigenvalues, then G
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    A0 = Q @ np.diag(rng.uniform(-0.3, 0.05, 4)) @ Q.T
    np.testing.assert_allclose(A, 0.5 * (A0 + A0.T), rtol=0, atol=1e-15)  # derf() stores the symmetric part
    np.testing.assert_array_equal(B1, np.eye(4) + 0.3 * rng.normal(size=(4, 4)))
    with pytest.raises(ValueError, match="rng must be a numpy Generator"):
        de.random_derf(0, 4)
    with pytest.raises(ValueError, match="d must be"):
        de.random_derf(np.random.default_rng(0), 0)


def test_moment_diverges_beyond_the_validity_region():
    params = de.derf(np.diag([0.1, -0.2]), np.eye(2))  # 1/16 ≤ 0.1 < 1/8: variance finite, fourth moment infinite
    assert np.isfinite(float(dm.log_moment(params, np.ones(2), np.ones(2), 2)))
    assert float(dm.log_moment(params, np.ones(2), np.ones(2), 3)) == np.inf


def test_derf_raises_for_invalid_parameters():
    with pytest.raises(ValueError, match="8A ≺ I"):
        de.derf(np.diag([0.125, 0.0]), np.eye(2))
    params = de.derf(np.diag([0.05, 0.0]), np.eye(2))
    with pytest.raises(ValueError, match="side must be 1 .queries. or 2 .keys."):  # 3 took the key side silently
        de.linear_logits(params, np.eye(2), np.ones((3, 2)), 3)
    stats = de.set_statistics(np.eye(2), np.ones((3, 2)))
    with pytest.raises(ValueError, match="eps must be finite"):  # NaN parameters before
        de.fit_statistics("aderf", stats, eps=float("nan"))
    with pytest.raises(ValueError, match="stats must be SetStatistics"):
        de.fit_statistics("gerf", (np.zeros(2),), eps=1e-8)
    with pytest.raises(ValueError, match="singular"):
        de.derf(np.zeros((2, 2)), np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(ValueError, match="B constraint"):
        de.derf(np.zeros((2, 2)), np.eye(2), B2=2 * np.eye(2))
    with pytest.raises(ValueError, match="C⁽1⁾"):
        de.derf(np.zeros((2, 2)), np.eye(2), C1=-0.25 * np.eye(2))  # the printed GERF C term (ERRATA.md FAVOR-E3)
    with pytest.raises(ValueError, match="D = det"):
        de.derf(np.diag([-0.5, 0.0]), np.eye(2), D=1.0)
    with pytest.raises(ValueError, match="symmetric"):
        de.derf(np.array([[0.0, 0.1], [0.0, 0.0]]), np.eye(2))
    with pytest.raises(ValueError, match="A < 1/8"):
        de.gerf_params(0.2, 3)
    with pytest.raises(ValueError, match="NaN or inf"):
        de.fit("sderf", np.array([[np.nan, 1.0]]), np.ones((2, 2)))
    with pytest.raises(ValueError, match="method must be one of"):
        de.fit("derf", np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="ADERF needs nonzero X"):
        de.fit("aderf", np.zeros((3, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="8A ≺ I"):
        dm.log_relative_variance(
            de.DERF(*de.positive_params(2))._replace(A=0.2 * jnp.eye(2)), np.ones((1, 2)), np.ones((1, 2))
        )


def test_valid_derf_passes_its_own_check():
    params = random_valid_derf(4, 3)
    again = de.derf(params.A, params.B1, B2=params.B2, C1=params.C1, C2=params.C2, D=float(np.exp(params.log_D)))
    np.testing.assert_allclose(np.asarray(again.B2), np.asarray(params.B2))


# ---------------------------------------------------------------------------------------------------------------
# Errata: eq 7 (TrigRF sign) and eq 11 (GERF C term) as printed do not estimate exp(xᵀy)
# ---------------------------------------------------------------------------------------------------------------


def test_trigrf_eq7_sign_erratum():
    x, y = np.array([0.3, -0.2, 0.4]), np.array([0.1, 0.25, 0.2])
    assert dm.trig_phase_moments(x, y)[0] == pytest.approx(np.exp(x @ y), rel=1e-10)
    printed = dm.trig_phase_moments(x, y, printed=True)[0]
    assert printed == pytest.approx(np.exp(-x @ y), rel=1e-10)
    assert abs(printed / np.exp(x @ y) - 1) > 0.05


def test_trigrf_relative_variance_closed_form_by_quadrature():
    x, y = np.array([0.3, -0.2, 0.4]), np.array([0.1, 0.25, 0.2])
    _, second = dm.trig_phase_moments(x, y)
    K = np.exp(x @ y)
    expected = np.log(second / K**2 - 1)
    assert float(dm.trig_log_relative_variance(x[None], y[None])[0, 0]) == pytest.approx(expected, rel=1e-10)


def test_gerf_eq11_printed_c_term_is_biased():
    x, y = np.array([0.5, -0.3]), np.array([0.4, 0.6])
    a = float(de.a_star(1.0))
    good = de.gerf_params(a, 2)
    printed = good._replace(C1=-0.25 * jnp.eye(2), C2=-0.25 * jnp.eye(2))  # "C‖x‖²/2 with C = −½"
    assert dm.derf_moments(good, x, y)[0] == pytest.approx(np.exp(x @ y), rel=1e-10)
    biased = dm.derf_moments(printed, x, y)[0]
    expected_bias = np.exp(x @ y + 0.25 * (x @ x + y @ y))
    assert biased == pytest.approx(expected_bias, rel=1e-10)
    assert biased / np.exp(x @ y) - 1 > 0.1


# ---------------------------------------------------------------------------------------------------------------
# Special cases and inclusions
# ---------------------------------------------------------------------------------------------------------------


def test_gerf_with_a_zero_is_favor_plus_exactly():
    X, _ = anisotropic_sets(L=6, d=4)
    W = np.asarray(projections.gaussian(jax.random.key(1), 8, 4))
    for params in (de.gerf_params(0.0, 4), de.positive_params(4)):
        np.testing.assert_allclose(
            np.asarray(de.query_features(params, W, X).dense()), np.asarray(classic.positive(W, X)), rtol=1e-13
        )
        np.testing.assert_allclose(
            np.asarray(de.key_features(params, W, X).dense()), np.asarray(classic.positive(W, X)), rtol=1e-13
        )


def test_inclusions_saderf_is_an_aderf_and_gerf_is_an_sderf():
    X, Y = anisotropic_sets(L=9, d=4, seed=2)
    saderf = de.fit("saderf", X, Y, eps=0.0)
    de.derf(saderf.A, saderf.B1, B2=saderf.B2, C1=saderf.C1, C2=saderf.C2, D=float(np.exp(saderf.log_D)))
    gerf = de.fit("gerf", X, Y)
    a = float(gerf.A[0, 0])
    as_sderf = de.derf(a * np.eye(4), np.sqrt(1 - 4 * a) * np.eye(4), C1=-0.5 * np.eye(4), C2=-0.5 * np.eye(4))
    for name in ("A", "B1", "B2", "C1", "C2", "log_D"):
        np.testing.assert_allclose(np.asarray(getattr(as_sderf, name)), np.asarray(getattr(gerf, name)), atol=1e-14)


def test_isotropic_sets_make_sderf_and_aderf_reduce_to_gerf():
    """M⁽¹⁾ = M⁽²⁾ ∝ I and zero means: all A equal to GERF's A*, and equal objectives (Theorems 4.2, 4.3)."""
    d = 4
    X = np.concatenate([np.eye(d), -np.eye(d)]) * 0.7
    stats = de.set_statistics(X, X)
    values = {m: float(dm.shifted_log_variance(de.fit(m, X, X, eps=0.0), stats)) for m in de.METHODS}
    assert values["sderf"] == pytest.approx(values["gerf"], rel=1e-12)
    assert values["aderf"] == pytest.approx(values["gerf"], rel=1e-12)
    assert values["saderf"] == pytest.approx(values["gerf"], rel=1e-12)
    np.testing.assert_allclose(np.diag(np.asarray(de.fit("sderf", X, X).A)), float(de.fit("gerf", X, X).A[0, 0]))


# ---------------------------------------------------------------------------------------------------------------
# Objective (eq 14), per-pair closed forms and the closed-form optima
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", de.METHODS)
def test_objective_closed_form_and_per_pair_delta_match_the_moment_formula(method):
    X, Y = anisotropic_sets(L=8, d=4, seed=5)
    params = de.fit(method, X, Y, eps=0.0)
    stats = de.set_statistics(X, Y)
    assert float(dm.shifted_log_variance(params, stats)) == pytest.approx(
        dm.pair_average_objective(params, X, Y), rel=1e-12
    )
    delta = np.asarray(dm.log_relative_second_moment(params, X, Y))
    generic = np.asarray(dm.log_moment(params, X[:, None], Y[None], 2)) - 2 * X @ Y.T
    np.testing.assert_allclose(delta, generic, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(dm.log_moment(params, X[:, None], Y[None], 1)), X @ Y.T, atol=1e-12)


def test_per_pair_closed_forms_of_the_note_table():
    """GERF: dℓ(A) + ‖x + y‖²/(1 − 8A); SDERF: Σℓ(A_ll) + Σ(q_lᵀ(x + y))²/(1 − 8A_ll); PosRF: ‖x + y‖²."""
    X, Y = anisotropic_sets(L=6, d=3, seed=8)
    z_sq = np.sum((X[:, None] + Y[None]) ** 2, axis=-1)
    gerf = de.fit("gerf", X, Y)
    a = float(gerf.A[0, 0])
    np.testing.assert_allclose(
        np.asarray(dm.log_relative_second_moment(gerf, X, Y)), 3 * float(de.ell(a)) + z_sq / (1 - 8 * a), rtol=1e-12
    )
    np.testing.assert_allclose(np.asarray(dm.log_relative_second_moment(de.positive_params(3), X, Y)), z_sq, rtol=1e-12)
    lam, Q = np.linalg.eigh(np.asarray(de.set_statistics(X, Y).N))
    a_l = np.asarray(de.a_star(np.maximum(lam, 0)))
    proj = (X[:, None] + Y[None]) @ Q
    expected = np.sum(np.asarray(de.ell(a_l))) + np.sum(proj**2 / (1 - 8 * a_l), axis=-1)
    np.testing.assert_allclose(
        np.asarray(dm.log_relative_second_moment(de.fit("sderf", X, Y), X, Y)), expected, rtol=1e-12
    )


def test_gerf_homogeneity_heuristic_is_the_exact_minimiser():
    X, Y = anisotropic_sets(L=7, d=3, seed=1)
    stats = de.set_statistics(X, Y)
    S_direct = np.mean(np.sum((X[:, None] + Y[None]) ** 2, axis=-1))
    assert float(stats.S) == pytest.approx(S_direct, rel=1e-12)
    grid = np.linspace(-3, 0.12, 4001)
    for a in grid[::400]:
        assert float(dm.gerf_objective(a, stats)) == pytest.approx(
            dm.pair_average_objective(de.gerf_params(a, 3), X, Y), rel=1e-12
        )
    best = float(dm.gerf_objective(de.a_star(stats.S / 3), stats))
    assert best <= np.min(np.asarray(dm.gerf_objective(grid, stats))) + 1e-12


def test_theorem_4_2_aderf_optimum_eq38_and_the_eq16_erratum():
    X, Y = anisotropic_sets(L=7, d=3, seed=3)
    stats = de.set_statistics(X, Y)
    params = de.fit("aderf", X, Y, eps=0.0)
    A = float(params.A[0, 0])
    constraint = np.asarray(params.B1).T @ np.asarray(params.B2) / (1 - 4 * A)
    assert np.abs(constraint - np.eye(3)).max() < 1e-10
    direct = dm.pair_average_objective(params, X, Y)
    assert float(dm.aderf_optimal_value(stats)) == pytest.approx(direct, rel=1e-10)
    printed = float(dm.aderf_optimal_value(stats, printed=True))
    assert abs(printed - direct) > 0.05 * abs(direct)
    # Rotation invariance B⁽ᵏ⁾ → RB⁽ᵏ⁾ (the optimum is unique only up to R).
    R, _ = np.linalg.qr(RNG.normal(size=(3, 3)))
    rotated = de.derf(params.A, R @ np.asarray(params.B1))
    assert dm.pair_average_objective(rotated, X, Y) == pytest.approx(direct, rel=1e-12)


def _spd_power(M, power):
    lam, Q = np.linalg.eigh(M)
    return (Q * lam**power) @ Q.T


def test_aderf_fit_is_the_basis_free_optimum_even_on_sets_with_null_directions():
    """With null directions (constant or collinear columns, as in the segment and optdigits sets of notebook 05) the
    ridge-lifted second moments have repeated eigenvalues, inside which Theorem 4.2's eigenvectors and singular
    vectors are arbitrary. The fit is T₁ = (M₁^{1/2}M₂M₁^{1/2})^{1/4}M₁^{−1/2}, which does not depend on them: fitting
    with both sets' rows permuted (other summation orders, other bases from LAPACK for M₁ and M₂) moves the projected
    data B⁽ᵏ⁾x by round-off only, on rank-deficient and full-rank sets alike; B⁽ᵏ⁾ match that formula evaluated
    independently and differ from the theorem's literal T₁ by a rotation; on the full-rank set the fit without ridge
    attains eq 38's optimum."""
    rng = np.random.default_rng(5)
    basis = rng.normal(size=(3, 6))  # rank 3 in d = 6: three null directions
    X, Y = rng.normal(size=(40, 3)) @ basis, rng.normal(size=(60, 3)) @ basis + 0.1 * basis[0]
    order_x, order_y = rng.permutation(len(X)), rng.permutation(len(Y))
    full_rank = (X + 0.3 * rng.normal(size=X.shape), Y + 0.3 * rng.normal(size=Y.shape))
    for Xs, Ys in ((X, Y), full_rank):
        first, second = de.fit("aderf", Xs, Ys), de.fit("aderf", Xs[order_x], Ys[order_y])
        st = de.set_statistics(Xs, Ys)
        M1, M2 = (np.asarray(de._ridge(m, de.DEFAULT_EPS)) for m in (st.second_x, st.second_y))
        # (M₁^{1/2}M₂M₁^{1/2})^{1/4} = UΣ^{1/2}Uᵀ from the SVD of K = M₁^{1/2}M₂^{1/2}, since M₁^{1/2}M₂M₁^{1/2} = KKᵀ
        # (forming KKᵀ would square the condition number).
        U_K, s_K, _ = np.linalg.svd(_spd_power(M1, 0.5) @ _spd_power(M2, 0.5))
        T1 = (U_K * np.sqrt(s_K)) @ U_K.T @ _spd_power(M1, -0.5)
        scale = np.sqrt(1 - 4 * float(first.A[0, 0]))
        oracle = {"B1": scale * T1, "B2": scale * np.linalg.inv(T1).T}
        for Z, side in ((Xs, "B1"), (Ys, "B2")):
            B, B_again = np.asarray(getattr(first, side)), np.asarray(getattr(second, side))
            # The 1e-8 ridge conditions the null block, so round-off moves B there by ~1e-16 / 1e-8 (a basis chosen
            # by round-off moved it by ~1e-1); the projections of the data move by round-off.
            for other in (B_again, oracle[side]):
                assert np.abs(other - B).max() < 1e-6 * np.abs(B).max()
                assert np.abs(Z @ (other - B).T).max() < 1e-10 * np.abs(Z @ B.T).max()
        lam1, Q1 = np.linalg.eigh(M1)
        lam2, Q2 = np.linalg.eigh(M2)
        U, sv, _ = np.linalg.svd((np.sqrt(lam1)[:, None] * (Q1.T @ Q2)) * np.sqrt(lam2))
        literal = (np.sqrt(sv)[:, None] * U.T) / np.sqrt(lam1) @ Q1.T
        rotation = T1 @ np.linalg.inv(literal)
        np.testing.assert_allclose(rotation @ rotation.T, np.eye(6), atol=1e-6)
        assert dm.pair_average_objective(second, Xs, Ys) == pytest.approx(
            dm.pair_average_objective(first, Xs, Ys), rel=1e-12
        )
    direct = dm.pair_average_objective(de.fit("aderf", *full_rank, eps=0.0), *full_rank)
    assert float(dm.aderf_optimal_value(de.set_statistics(*full_rank))) == pytest.approx(direct, rel=1e-10)


def test_theorem_4_2_numerical_minimisation_does_not_beat_the_closed_form():
    d = 3
    X, Y = anisotropic_sets(L=7, d=d, seed=4)
    closed = float(dm.aderf_optimal_value(de.set_statistics(X, Y)))
    best = dm.numerical_minimum("aderf", X, Y, starts=4, rng=np.random.default_rng(0))
    assert best >= closed - 1e-8
    assert best <= closed + 1e-5


def test_theorem_4_3_sderf_optimum_eq17_and_numerical_minimisation():
    d = 3
    X, Y = anisotropic_sets(L=7, d=d, seed=6)
    stats = de.set_statistics(X, Y)
    params = de.fit("sderf", X, Y)
    B, A = np.asarray(params.B1), np.asarray(params.A)
    assert np.abs(B.T @ np.linalg.inv(np.eye(d) - 4 * A) @ B - np.eye(d)).max() < 1e-10
    closed = float(dm.sderf_optimal_value(stats))
    assert dm.pair_average_objective(params, X, Y) == pytest.approx(closed, rel=1e-10)
    best = dm.numerical_minimum("sderf", X, Y, starts=4, rng=np.random.default_rng(1))
    assert closed - 1e-8 <= best <= closed + 1e-5
    # Pairing A_ll with the wrong eigenvector increases the objective (no sorting is needed, but pairing is).
    swapped = de.derf(np.asarray(params.A), B[[1, 2, 0]])
    assert dm.pair_average_objective(swapped, X, Y) > closed + 1e-6


def test_unconstrained_parametrisations_stay_in_their_families():
    rng = np.random.default_rng(3)
    d = 3
    aderf = dm.aderf_from_vector(rng.normal(size=1 + d * d), d)
    A = np.asarray(aderf.A)
    assert np.allclose(A, A[0, 0] * np.eye(d)) and A[0, 0] < 1 / 8
    sderf = dm.sderf_from_vector(rng.normal(size=d + d * (d - 1) // 2), d)
    A, B = np.asarray(sderf.A), np.asarray(sderf.B1)
    assert np.allclose(A, np.diag(np.diag(A))) and np.all(np.diag(A) < 1 / 8)
    np.testing.assert_allclose(B.T @ np.linalg.inv(np.eye(d) - 4 * A) @ B, np.eye(d), atol=1e-12)
    with pytest.raises(ValueError, match="method must be one of"):
        dm.numerical_minimum("gerf", np.ones((2, d)), np.ones((2, d)), starts=1, rng=rng)


def test_eq20_saderf_psi_matches_numerical_minimisation():
    d = 3
    X, Y = anisotropic_sets(L=9, d=d, seed=9)
    stats = de.set_statistics(X, Y)
    closed = float(dm.shifted_log_variance(de.fit("saderf", X, Y, eps=0.0), stats))

    def objective(log_psi):
        psi = np.exp(log_psi)
        return float(
            dm.gerf_objective(de.a_star(de.set_statistics(X * psi, Y / psi).S / d), de.set_statistics(X * psi, Y / psi))
        )

    res = optimize.minimize(objective, np.zeros(d), method="BFGS")
    assert closed == pytest.approx(res.fun, abs=1e-8)
    assert closed <= res.fun + 1e-10


@pytest.mark.parametrize("seed", range(4))
def test_objective_orderings(seed):
    """L̄*_ADE ≤ L̄*_SADE ≤ L̄*_GE ≤ L̄_Pos and L̄*_SDE ≤ L̄*_GE, all ≥ the Jensen bound 2dμ⁽³⁾ (ERRATA.md FAVOR-E6)."""
    X, Y = anisotropic_sets(L=12, d=5, seed=seed, shift=(0.4 * seed - 0.3, 0.2))
    stats = de.set_statistics(X, Y)
    value = {m: float(dm.shifted_log_variance(de.fit(m, X, Y, eps=0.0), stats)) for m in de.METHODS}
    tol = 1e-10
    assert value["aderf"] <= value["saderf"] + tol <= value["gerf"] + 2 * tol <= value["positive"] + 3 * tol
    assert value["sderf"] <= value["gerf"] + tol
    assert min(value.values()) >= 2 * float(stats.cross) - tol


def test_singular_second_moments_are_regularised_and_converge():
    """L < d (as in short sequences): ADERF stays finite and its objective converges as ε → 0; zero columns too."""
    X, Y = anisotropic_sets(L=3, d=6, seed=7)
    X[:, 0] = 0.0
    stats = de.set_statistics(X, Y)
    values = [float(dm.shifted_log_variance(de.fit("aderf", X, Y, eps=e), stats)) for e in (1e-4, 1e-6, 1e-8)]
    assert np.all(np.isfinite(values))
    assert abs(values[2] - values[1]) < abs(values[1] - values[0]) + 1e-9
    for method in de.METHODS:
        params = de.fit(method, X, Y)
        assert all(np.all(np.isfinite(np.asarray(p))) for p in params)
        assert (
            float(dm.shifted_log_variance(params, stats))
            <= float(dm.shifted_log_variance(de.positive_params(6), stats)) + 1e-6
        )


# ---------------------------------------------------------------------------------------------------------------
# Estimators with orthogonal ω (Monte Carlo, seeded)
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["gerf", "aderf", "sderf"])
def test_orthogonal_features_are_unbiased_monte_carlo(key, method):
    """Sign-fixed orthogonal ω with χ norms are marginally N(0, I): the M = d estimator is unbiased for any DERF.

    Tolerance: 5 standard errors of the mean of 4000 independent estimates, with the iid variance Var₁/M as a
    conservative bound (orthogonal blocks only lower it for these positive maps on this data).
    """
    d, draws = 4, 4000
    X, Y = anisotropic_sets(L=3, d=d, seed=12)
    X, Y = X[:2], Y[:2]
    params = de.fit(method, X, Y)
    Ws = projections.orthogonal_batch(key, draws, d, d)
    estimates = np.asarray(
        jax.vmap(lambda W: de.query_features(params, W, X).dense() @ de.key_features(params, W, Y).dense().T)(Ws)
    )
    K = np.exp(X @ Y.T)
    sd_iid = np.exp(0.5 * np.asarray(dm.log_relative_variance(params, X, Y))) * K / np.sqrt(d)
    z = (estimates.mean(0) - K) / (sd_iid / np.sqrt(draws))
    assert np.abs(z).max() < 5


# ---------------------------------------------------------------------------------------------------------------
# FAVOR# attention
# ---------------------------------------------------------------------------------------------------------------


def attention_inputs(L=24, d=8, dv=5, seed=0, scale=0.5, lead=()):
    rng = np.random.default_rng(seed)
    Q = scale * rng.normal(size=lead + (L, d)) + 0.2
    K = scale * rng.normal(size=lead + (L, d)) * rng.uniform(0.3, 1.5, d) - 0.1
    V = rng.normal(size=lead + (L, dv))
    return Q, K, V


def dense_favor_sharp(Q, K, V, W, method, causal=False):
    """Reference: fit θ*, build the dense feature matrices, form the (L, L) estimate and normalise its rows."""
    params = de.fit(method, Q, K)
    scores = np.asarray(de.query_features(params, W, Q).dense() @ de.key_features(params, W, K).dense().T)
    if causal:
        scores = np.tril(scores)
    return scores @ V / scores.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("method", de.METHODS)
def test_favor_sharp_matches_the_dense_reference(key, method, causal):
    Q, K, V = attention_inputs()
    W = projections.orthogonal(key, 16, 8)
    out = attention.favor_sharp_attention(Q, K, V, W, method=method, causal=causal, chunk_size=5)
    np.testing.assert_allclose(np.asarray(out), dense_favor_sharp(Q, K, V, W, method, causal), rtol=1e-9, atol=1e-12)


def test_favor_plus_is_linear_attention_with_positive_features(key):
    Q, K, V = attention_inputs()
    W = projections.orthogonal(key, 16, 8)
    for causal in (False, True):
        ours = attention.favor_sharp_attention(Q, K, V, W, method="positive", causal=causal)
        reference = attention.linear_attention(Q, K, V, partial(classic.positive_features, W), causal=causal)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(reference), rtol=1e-11)


def test_favor_sharp_fits_each_sequence_separately(key):
    Q, K, V = attention_inputs(lead=(2, 3))
    W = projections.orthogonal(key, 16, 8)
    batched = np.asarray(attention.favor_sharp_attention(Q, K, V, W, method="sderf"))
    for b in range(2):
        for h in range(3):
            single = attention.favor_sharp_attention(Q[b, h], K[b, h], V[b, h], W, method="sderf")
            np.testing.assert_allclose(batched[b, h], np.asarray(single), rtol=1e-10, atol=1e-13)


def test_favor_sharp_rows_are_convex_combinations(key):
    Q, K, _ = attention_inputs(L=20)
    weights = np.asarray(attention.favor_sharp_attention(Q, K, np.eye(20), projections.orthogonal(key, 8, 8)))
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-12)


def test_favor_sharp_error_falls_with_the_number_of_features():
    Q, K, V = attention_inputs(L=64, d=8, scale=0.6)
    exact = np.asarray(attention.softmax_attention(Q, K, V))

    def mean_error(M):
        errors = []
        for seed in range(10):
            W = projections.orthogonal(jax.random.key(seed), M, 8)
            errors.append(np.abs(np.asarray(attention.favor_sharp_attention(Q, K, V, W)) - exact).mean())
        return np.mean(errors)

    assert mean_error(1024) < 0.6 * mean_error(64)


def test_favor_sharp_is_finite_in_float32_with_huge_logits(key):
    """Logit spread ~1e4 nats: the bidirectional path's per-feature stabiliser keeps every output finite."""
    Q, K, V = attention_inputs(L=32, d=16, scale=8.0)
    Q, K, V = (jnp.asarray(a, jnp.float32) for a in (Q, K, V))
    W = projections.orthogonal(key, 64, 16, dtype=jnp.float32)
    for method in de.METHODS:
        out = attention.favor_sharp_attention(Q, K, V, W, method=method)
        assert out.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(out)))
    causal = attention.favor_sharp_attention(Q / 4, K / 4, V, W, causal=True)  # causal: spread of hundreds of nats
    assert bool(jnp.all(jnp.isfinite(causal)))


def test_favor_sharp_stops_gradients_through_the_fit(key):
    Q, K, V = attention_inputs(L=12, d=4, dv=3)
    W = projections.orthogonal(key, 8, 4)
    frozen = de.fit("sderf", Q, K)

    def with_frozen_params(q):
        scores = de.query_features(frozen, W, q).dense() @ de.key_features(frozen, W, K).dense().T
        return jnp.sum(scores @ V / jnp.sum(scores, axis=1, keepdims=True))

    grad = jax.grad(lambda q: jnp.sum(attention.favor_sharp_attention(q, K, V, W)))(Q)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(jax.grad(with_frozen_params)(Q)), rtol=1e-9, atol=1e-12)


def test_favor_sharp_rejects_bad_input(key):
    Q, K, V = attention_inputs()
    W = projections.orthogonal(key, 16, 8)
    with pytest.raises(ValueError, match="method must be one of"):
        attention.favor_sharp_attention(Q, K, V, W, method="favor#")
    with pytest.raises(ValueError, match=r"shape \(m, 8\)"):
        attention.favor_sharp_attention(Q, K, V, W[:, :4])
    bad = np.array(Q)
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or inf"):
        attention.favor_sharp_attention(bad, K, V, W)


@pytest.mark.parametrize("seed", [0, 1])
def test_uniform_log_mse_entry_point_matches_quadrature_and_the_positive_closed_form(seed):
    """log MSE_m = log((E[(f⁽¹⁾f⁽²⁾)²] − K²)/m) by an independent 60³-node Gauss–Hermite rule; with the PosRF
    parameters it is Lemma 2.2's positive-feature closed form from another family's module."""
    params = random_valid_derf(3, seed)
    rng = np.random.default_rng(seed + 20)
    x, y = 0.5 * rng.normal(size=3), 0.5 * rng.normal(size=3)
    mean, second = dm.derf_moments(params, x, y)
    assert float(dm.log_mse(x, y, 4, params=params)) == pytest.approx(np.log((second - mean**2) / 4), rel=1e-9)
    X, Y = 0.5 * rng.normal(size=(2, 5, 3))
    np.testing.assert_allclose(
        dm.log_mse(X, Y, 4, params=de.positive_params(3)), moments.classic.log_mse(X, Y, 4, kind="positive"), rtol=1e-12
    )


# --- Lemmas A.2–A.4: the matrix steps of Theorems 4.2 and 4.3, each checked on its own ---------------------------


def _psd_sqrt(M):
    lam, Q = np.linalg.eigh(M)
    return (Q * np.sqrt(lam)) @ Q.T


@pytest.mark.parametrize("A", [-0.5, 0.0, 0.1])
def test_lemma_a2_the_closed_form_e_minimises_eq_29_for_fixed_a(A):
    """Lemma A.2: for fixed A, E* = (B⁽¹⁾*)ᵀB⁽¹⁾* = (1 − 4A)·T₁ᵀT₁ minimises β₁ tr(E M⁽¹⁾) + β₂ tr(E⁻¹ M⁽²⁾) over
    positive definite E (the E-dependent part of eq 29, β₁ = 1/((1 − 8A)(1 − 4A)), β₂ = (1 − 4A)/(1 − 8A)). Exact
    oracle: T₁ᵀT₁ is the matrix geometric mean M₁^{-1/2}(M₁^{1/2}M₂M₁^{1/2})^{1/2}M₁^{-1/2}, the stationary point
    β₁M₁ = β₂E⁻¹M₂E⁻¹ holds, the minimum is 2√(β₁β₂)·Σσ, and no random positive definite E does better."""
    X, Y = anisotropic_sets(L=9, d=4, seed=3)
    st = de.set_statistics(X, Y)
    M1, M2 = np.asarray(st.second_x), np.asarray(st.second_y)
    T1, _, sv = (np.asarray(v) for v in de.aderf_transforms(st, 0.0))
    root1 = _psd_sqrt(M1)
    inv_root1 = np.linalg.inv(root1)
    np.testing.assert_allclose(T1.T @ T1, inv_root1 @ _psd_sqrt(root1 @ M2 @ root1) @ inv_root1, rtol=1e-9)
    b1, b2 = 1 / ((1 - 8 * A) * (1 - 4 * A)), (1 - 4 * A) / (1 - 8 * A)

    def objective(E):
        return b1 * np.trace(E @ M1) + b2 * np.trace(np.linalg.solve(E, M2))

    E = (1 - 4 * A) * T1.T @ T1
    E_inv = np.linalg.inv(E)
    np.testing.assert_allclose(b1 * M1, b2 * E_inv @ M2 @ E_inv, rtol=1e-9, atol=1e-12)  # eq 35's gradient = 0
    best = objective(E)
    assert best == pytest.approx(2 * np.sqrt(b1 * b2) * sv.sum(), rel=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(300):
        G = rng.normal(size=(4, 6))
        assert objective(G @ G.T / 6 + 1e-3 * np.eye(4)) >= best * (1 - 1e-12)
    for step in (1e-3, 1e-2, 1e-1):  # along a random symmetric direction the objective rises quadratically
        S = rng.normal(size=(4, 4))
        S = step * (S + S.T) / 2
        assert objective(E + S) > best


def _haar(rng, d):
    Z = rng.normal(size=(d, d))
    Q, R = np.linalg.qr(Z)
    return Q * np.sign(np.diag(R))


def _trace_max_by_rearrangement(e, lam):
    """max over permutations σ of Σ e_σ(l) λ_l: both sorted the same way (Birkhoff + rearrangement inequality)."""
    return float(np.sum(np.sort(e)[::-1] * np.sort(lam)[::-1]))


@pytest.mark.parametrize(
    ("e", "spectrum"),
    [
        ((-0.3, -0.55, -0.9, -1.4), None),  # Lemma A.3: distinct entries (N from data)
        ((-0.5, -0.7, -0.7, -1.2), (3.0, 1.0, 1.0, 0.0)),  # Lemma A.4: ties in E and in N's eigenvalues
    ],
)
def test_lemmas_a3_a4_the_sorted_pairing_maximises_the_trace(e, spectrum):
    """Lemmas A.3 (distinct) and A.4 (ties): with Π sorting E's diagonal in a (any) non-ascending order and
    Q* = Πᵀ(Q⁽³⁾)ᵀ, tr(E Q* N Q*ᵀ) = Σ_l E_{π_l π_l} Λ⁽³⁾_ll (eq 45) = sup over orthogonal Q (eq 46). The supremum is
    checked against the exact rearrangement value and 3 000 Haar-random Q."""
    rng = np.random.default_rng(1)
    d = len(e)
    if spectrum is None:
        X, Y = anisotropic_sets(L=9, d=d, seed=5)
        N = np.asarray(de.set_statistics(X, Y).N)
    else:
        R = _haar(rng, d)
        N = (R * np.asarray(spectrum)) @ R.T
    lam, Q3 = np.linalg.eigh(N)
    lam, Q3 = lam[::-1], Q3[:, ::-1]  # Λ⁽³⁾ in descending order, as in Theorem 4.3
    e = np.asarray(e)
    E = np.diag(e)
    exact = _trace_max_by_rearrangement(e, lam)
    base = list(np.argsort(-e, kind="stable"))  # a non-ascending sort of E's diagonal
    orders = [base]
    for k in (k for k in range(d - 1) if e[base[k]] == e[base[k + 1]]):  # Lemma A.4: every other tie-break too
        orders.append(base[:k] + [base[k + 1], base[k]] + base[k + 2 :])
    assert len(orders) == (1 if spectrum is None else 2)
    for pi in orders:
        Q_star = np.eye(d)[pi].T @ Q3.T
        value = np.trace(E @ Q_star @ N @ Q_star.T)
        assert value == pytest.approx(np.sum(e[pi] * lam), rel=1e-12)  # eq 45
        assert value == pytest.approx(exact, rel=1e-12)
    assert max(np.trace(E @ Q @ N @ Q.T) for Q in (_haar(rng, d) for _ in range(3000))) <= exact * (1 - 1e-12) + 1e-12


def test_log_expm1_is_accurate_refuses_negative_input_and_meets_round_off_at_zero_with_minus_inf():
    t = np.array([1e-300, 1e-8, 0.5, 29.0, 31.0, 800.0])
    expected = np.array([np.log(1e-300), np.log(np.expm1(1e-8)), np.log(np.expm1(0.5)), 0, 0, 800.0])
    expected[3:5] = t[3:5] + np.log1p(-np.exp(-t[3:5]))
    np.testing.assert_allclose(dm.log_expm1(t), expected, rtol=1e-14)
    assert dm.log_expm1(0.0) == -np.inf  # an exact estimator: variance 0
    with pytest.raises(ValueError, match="t must be ≥ 0"):
        dm.log_expm1(np.array([0.1, -1e-3]))
    # inside, a Δ that round-off puts just below 0 is Δ = 0 (−inf), while one far below is no round-off: NaN
    inside = np.asarray(dm._log_expm1(jnp.array([-1e-17, 0.0, -1e-3])))
    assert np.all(inside[:2] == -np.inf) and np.isnan(inside[2])
