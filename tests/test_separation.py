"""Softmax vs linear attention (Deng, Song, Yuan, Zhou): the constructions' closed forms, the distinguishing-network
outcomes on every dataset point of the verified parameter sets, the exact success probability against brute force,
the Lemma D.4 Part 2 counterexample and the class-gap scaling.

Monte Carlo bands: |p̂ − p| ≤ 4·√(p(1 − p)/T) + 0.005 with fixed seeds."""

import math

import jax
import numpy as np
import pytest

from rflib import separation as sp
from rflib.experiments import separation_training as st


def band(p, trials):
    return 4 * math.sqrt(p * (1 - p) / trials) + 0.005


def test_tensor_trick_row_major_equals_the_direct_scores():
    rng = np.random.default_rng(0)
    A1, A2, X = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(3, 3))
    np.testing.assert_allclose(sp.scores_by_tensor_trick(A1, A2, X), A1 @ X @ A2.T, rtol=1e-12, atol=1e-13)
    column_major = (np.kron(A1, A2) @ X.reshape(-1, order="F")).reshape(5, 5)
    assert np.abs(column_major - A1 @ X @ A2.T).max() > 1e-3  # the convention matters (Fact A.1)


@pytest.mark.parametrize(("n", "d", "a"), [(200, 22, 1.2), (60, 12, 0.7), (256, 130, 0.01)])
def test_self_attention_ones_closed_forms(n, d, a):
    b, c, j3 = 0.2, 0.8, 5
    out = sp.self_outputs(n, d, a, b, c, j3, "ones")
    A = sp.self_data(n, d, a, b, c, j3)
    s = math.sqrt(math.log(n))
    w = sp.normalise(A @ np.ones((d, d)) @ A.T, "exp")
    big = math.exp((a + a * a) * math.log(n))
    assert w[j3, j3] == pytest.approx(big / (big + n - 1), rel=1e-10)
    other = 0 if j3 else 1
    assert w[other, j3] == pytest.approx(n**a / (n**a + n - 1), rel=1e-10)
    lin = sp.normalise(A @ np.ones((d, d)) @ A.T, "lin")
    np.testing.assert_allclose(lin, np.broadcast_to(lin[0], lin.shape), rtol=1e-12)  # every linear row is the same
    assert lin[0, j3] == pytest.approx((1 + a) / (n + a), rel=1e-12)
    for kind in sp.KINDS:
        np.testing.assert_allclose(out[kind][:, d - 1], c * s, rtol=1e-12)  # rows sum to 1
        np.testing.assert_allclose(out[kind][:, 1 : d - 1].sum(1), b * s, rtol=1e-12)
    assert out["lin"][0, 0] == pytest.approx(a * (1 + a) * s / (n + a), rel=1e-12)


def test_self_attention_identity_closed_forms_with_the_e14_corrections():
    n, d, a, b, c, j3 = 200, 22, 1.2, 0.15, math.sqrt(1 - 0.15**2), 3
    A = sp.self_data(n, d, a, b, c, j3)
    u = np.exp(A @ A.T)
    t = n // (d - 2)
    assert u[j3, j3] == pytest.approx(n ** (a * a + b * b + c * c), rel=1e-10)  # printed: n^{(1+a1)²}
    row = u[(j3 + 1) % n]
    assert np.sum(np.isclose(row, n ** (b * b + c * c))) == t  # printed: t − 1
    assert np.sum(np.isclose(row, n ** (c * c))) == n - t
    # Lemma E.1's attention weights: the spike row's own weight exactly, and the n^{b²−1} bound on every other weight
    f = sp.normalise(A @ A.T, "exp")
    spike = n ** (a * a + b * b + c * c)
    spike_row_sum = spike + (t - 1) * n ** (b * b + c * c) + (n - t) * n ** (c * c)
    assert f[j3, j3] == pytest.approx(spike / spike_row_sum, rel=1e-10) and f[j3, j3] >= 0.5
    assert np.delete(f[j3], j3).max() <= n ** (b * b - 1)
    assert np.delete(f, j3, axis=0).max() <= n ** (b * b - 1)  # tight here: 5.598e-3 against 5.633e-3


def test_cross_attention_closed_forms_need_the_e8_column_fix():
    n, d, a, j2, j3 = 200, 11, 3.0, 4, 17
    out = sp.cross_outputs(n, d, a, j2, j3)
    w = n**a / (n**a + n - 1)
    g = 1 + j3 % (d - 1)
    assert out["exp"][j2, 0] == pytest.approx(w, rel=1e-12)
    assert out["exp"][j2, g] == pytest.approx(w + (n // (d - 1) - 1) / (n**a + n - 1), rel=1e-12)
    others = np.delete(out["exp"], j2, axis=0)
    np.testing.assert_allclose(others, np.broadcast_to([1 / n] + [1 / (d - 1)] * (d - 1), others.shape), rtol=1e-12)
    assert out["lin"][j2, 0] == pytest.approx((1 + a) / (n + a), rel=1e-12)
    A1, _ = sp.cross_data(n, d, a, j2, j3)
    np.testing.assert_array_equal(A1[:, d - 1], math.log(n))  # Def F.1 as printed leaves this column undefined


def all_points_outcomes(outputs_d1, outputs_d0, Y, tau):
    """Worst margins over every dataset point: min over D1 of F_exp's margin, max over the three zero sides."""
    pos = min(sp.network(o["exp"], Y, tau).margin for o in outputs_d1)
    zero = max(
        max(sp.network(o["lin"], Y, tau).margin for o in outputs_d1),
        max(sp.network(o[k], Y, tau).margin for o in outputs_d0 for k in sp.KINDS),
    )
    return pos, zero


@pytest.fixture(scope="module")
def self_whp_outputs():
    n, d, a0, a1, b, c = 256, 130, 0.01, 1.2, 0.2, 0.8
    return {
        X: (
            [sp.self_outputs(n, d, a1, b, c, j3, X) for j3 in range(n)],
            [sp.self_outputs(n, d, a0, b, c, j3, X) for j3 in range(n)],
        )
        for X in ("ones", "identity")
    }


@pytest.mark.parametrize("X", ["ones", "identity"])
@pytest.mark.parametrize("seed", range(5))
def test_self_attention_separates_every_point_with_real_margin(self_whp_outputs, X, seed):
    """Thm 6.2 / D.5–D.17 (X = 1) and E.4 (X = I) at n = 256, d = 130, m = 48: F_exp > 0 on all 256 points of
    D1, and F_exp = 0 on D0, F_lin = 0 on both, with margins far from round-off (≥ 0.05·s)."""
    n, m, c = 256, 48, 0.8
    s = math.sqrt(math.log(n))
    Y = sp.rademacher(np.random.default_rng(seed), 130, m)
    pos, zero = all_points_outcomes(*self_whp_outputs[X], Y, sp.self_threshold(n, c))
    assert pos > 0.5 * s
    assert zero < -0.04 * s
    # F_exp(D1) > 0 exactly when some readout has + signs on the spike and constant columns (a1 = 1.2)
    assert (pos > 0) == bool(np.any((Y[0] > 0) & (Y[-1] > 0)))


@pytest.mark.parametrize("seed", range(3))
def test_cross_attention_separates_every_tested_point(seed):
    n, d, m, a0, a1 = 200, 41, 40, 0.01, 3.0
    Y = sp.rademacher(np.random.default_rng(seed), d, m)
    grid = [(j2, j3) for j2 in range(0, n, 25) for j3 in range(d - 1)]  # every key group g(j3) = j3 mod (d − 1)
    d1 = [sp.cross_outputs(n, d, a1, j2, j3) for j2, j3 in grid]
    d0 = [sp.cross_outputs(n, d, a0, j2, j3) for j2, j3 in grid]
    pos, zero = all_points_outcomes(d1, d0, Y, 0.9)
    assert pos > 0.5 and zero < -0.4


def test_toy_model_outcomes_at_n_1000():
    """Lemmas 5.1–5.4 with τ = 0.5 (the paper gives no τ): F_exp(D1) > 0 iff some y_l[j] = +1; all else 0."""
    rng = np.random.default_rng(0)
    n, m, tau = 1000, 20, 0.5
    for _ in range(200):
        Y = sp.rademacher(rng, n, m)
        u0, _ = sp.toy_logits(rng, n, 0)
        u1, j = sp.toy_logits(rng, n, 1)
        exp1 = sp.network(sp.normalise(u1, "exp"), Y, tau)
        assert (exp1.margin > 0) == bool(np.any(Y[j] > 0))
        for f in (sp.normalise(u0, "exp"), sp.normalise(u0, "lin"), sp.normalise(u1, "lin")):
            assert sp.network(f, Y, tau).margin < -0.25


@pytest.mark.parametrize(
    ("case", "m", "params", "expected"),
    [
        ("self", 15, dict(n=200, d=12, a0=0.01, a1=1.2, b=0.2, c=0.8, X="ones"), 0.6496),
        ("self", 15, dict(n=256, d=10, a0=0.01, a1=1.2, b=0.2, c=0.8, X="ones"), 0.491),
        ("cross", 9, dict(n=200, d=6, a0=0.01, a1=3.0), 0.6893),
    ],
)
def test_exact_success_probability_matches_brute_force(case, m, params, expected):
    exact = sp.success_probability(case, m, sp.sign_vectors(params["d"]), **params)
    assert exact == pytest.approx(expected, abs=6e-4)  # independent values, computed outside this code base
    trials = 1000
    simulated = sp.simulate_success(case, m, trials, np.random.default_rng(7), **params)
    assert abs(simulated - exact) < band(exact, trials)


def test_lemma_d4_part_2_is_false_at_practical_n():
    """Rows j0 ≠ j3 of D1 should stay below τ w.h.p.; at a1 = 1.2 they fire for a quarter of the sign vectors."""
    n, d, b, c = 200, 22, 0.2, 0.8
    out = sp.self_outputs(n, d, 1.2, b, c, 0, "ones")
    row = out["exp"][1]
    sigmas = np.random.default_rng(3).choice([-1.0, 1.0], size=(200_000, d))
    p = float(np.mean(sigmas @ row >= sp.self_threshold(n, c)))
    assert abs(p - 0.2498) < band(0.25, 200_000)
    assert row[0] / math.sqrt(math.log(n)) == pytest.approx(0.892, abs=5e-4)


def test_class_gap_scales_like_one_over_n_for_linear_and_stays_constant_for_softmax():
    a0, a1, b, c, d = 0.01, 1.2, 0.2, 0.8, 10
    ns = [64, 512, 2048]
    gaps = {kind: [] for kind in sp.KINDS}
    for n in ns:
        s = math.sqrt(math.log(n))
        o1 = sp.self_outputs(n, d, a1, b, c, 0, "ones")
        o0 = sp.self_outputs(n, d, a0, b, c, 0, "ones")
        for kind in sp.KINDS:
            measured = np.abs(o1[kind] - o0[kind]).max() / s
            assert measured == pytest.approx(sp.self_class_gap(n, a0, a1, kind), rel=1e-6)
            gaps[kind].append(measured)
    slope = {k: np.polyfit(np.log(ns), np.log(v), 1)[0] for k, v in gaps.items()}
    assert abs(slope["lin"] + 1) < 0.05 and abs(slope["exp"]) < 0.05


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="multiple of d − 2"):
        sp.self_data(100, 9, 0.5, 0.2, 0.8, 0)
    with pytest.raises(ValueError, match="multiple of d − 1"):
        sp.cross_data(200, 12, 0.5, 0, 0)
    with pytest.raises(ValueError, match=r"j3 must be an integer in \[0, 99\]"):
        sp.self_data(100, 12, 0.5, 0.2, 0.8, 100)
    with pytest.raises(ValueError, match="j3 must be an integer"):
        sp.self_data(100, 12, 0.5, 0.2, 0.8, 1.7)
    with pytest.raises(ValueError, match="tau must be ≥ 0"):
        sp.network(np.ones((2, 3)), np.ones((3, 4)), -0.5)
    with pytest.raises(ValueError, match="nonzero row sums"):
        sp.normalise(np.array([[1.0, -1.0]]), "lin")
    with pytest.raises(ValueError, match="scores contains NaN or inf"):
        sp.normalise(np.array([[np.nan, 1.0]]), "exp")
    with pytest.raises(ValueError, match="a0 must be finite"):  # a NaN gap before
        sp.self_class_gap(100, float("nan"), 1.2, "lin")
    with pytest.raises(ValueError, match="too large"):
        sp.sign_vectors(30)


def test_toy_success_rate_matches_one_minus_two_to_the_minus_m():
    """With τ = 0.5 and n = 1000 only F_exp(D1) can fail (no readout has y_l[j] = +1): P = 1 − 2^{−m}."""
    trials, m = 2000, 3
    rate = sp.simulate_toy_success(1000, m, trials, np.random.default_rng(5))
    assert abs(rate - (1 - 2.0**-m)) < band(1 - 2.0**-m, trials)


@pytest.mark.parametrize("seed", range(3))
def test_linear_attention_with_another_qk_separates_the_self_attention_classes(seed):
    """Notebook 10 §2: with X′ = e₀e₀ᵀ + n⁻²·1, V = I and the paper's own random readout and τ, F_lin > 0 on every
    D1 point and F_lin = 0 on every D0 point — the impossibility is about one parameter choice, not the class."""
    n, d, m, a0, a1, b, c = 128, 66, 40, 0.01, 1.2, 0.2, 0.8
    s, tau, X = math.sqrt(math.log(n)), sp.self_threshold(n, c), sp.spike_qk(n, d)
    Y = sp.rademacher(np.random.default_rng(seed), d, m)
    d1 = [sp.self_outputs(n, d, a1, b, c, j3, X)["lin"] for j3 in range(0, n, 4)]
    d0 = [sp.self_outputs(n, d, a0, b, c, j3, X)["lin"] for j3 in range(0, n, 4)]
    pos = min(sp.network(o, Y, tau).margin for o in d1)
    zero = max(sp.network(o, Y, tau).margin for o in d0)
    assert pos > 0.8 * s and zero < -0.02 * s


def test_trained_attention_is_deterministic_and_softmax_learns_a_small_case():
    rng = np.random.default_rng(0)
    A, y = st.noisy_self_data(rng, 16, 18, 128, 0.05)
    A_test, y_test = st.noisy_self_data(rng, 16, 18, 128, 0.05)
    params, losses = st.train(jax.random.key(0), A, y, "exp", steps=60)
    _, again = st.train(jax.random.key(0), A, y, "exp", steps=60)
    np.testing.assert_array_equal(losses, again)
    assert losses[-1] < 0.5 * losses[0]
    assert st.accuracy(params, A_test, y_test, "exp") > 0.9
    with pytest.raises(ValueError, match="kind"):
        st.logits(params, A, "relu")


def test_cross_outputs_depend_only_on_the_key_group_so_the_point_grid_covers_every_point():
    """F's sign depends on the set of attention rows. Moving j2 only moves the special row; moving j3 within its
    group g(j3) = j3 mod (d − 1) leaves every row unchanged. So the grid of the test above, which meets every group,
    decides every (j2, j3) pair (up to round-off in the scores)."""
    n, d, a = 200, 41, 3.0
    base = sp.cross_outputs(n, d, a, 0, 7)
    for j2, j3 in ((13, 7), (199, 7 + (d - 1)), (50, 7 + 3 * (d - 1))):
        out = sp.cross_outputs(n, d, a, j2, j3)
        for kind in sp.KINDS:
            np.testing.assert_allclose(out[kind][j2], base[kind][0], rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(
                np.delete(out[kind], j2, axis=0), np.delete(base[kind], 0, axis=0), rtol=1e-12, atol=1e-15
            )


def test_sign_vectors_are_enumerated_for_small_d_and_sampled_reproducibly_otherwise():
    assert sp.sign_vectors_or_sample(3, 10, 0).shape == (8, 3)
    sample = sp.sign_vectors_or_sample(20, 500, 7)
    np.testing.assert_array_equal(sample, sp.sign_vectors_or_sample(20, 500, 7))
    assert sample.shape == (500, 20) and set(np.unique(sample)) == {-1.0, 1.0}


VECTORISED_CASES = [
    ("self", dict(n=200, d=22, a0=0.01, a1=1.2, b=0.2, c=0.8, X="ones")),
    ("self", dict(n=200, d=12, a0=0.3, a1=0.8, b=0.2, c=0.8, X="identity")),
    ("cross", dict(n=200, d=11, a0=0.01, a1=0.9)),
]


@pytest.mark.parametrize(("case", "params"), VECTORISED_CASES)
def test_vectorised_distinct_row_networks_equal_the_per_trial_full_networks(case, params):
    """The batched data equal the single-point constructions; attending with the distinct query rows only
    (weighted by multiplicity) gives the same F value and margin as the full n-row network of each trial, so
    E_success agrees trial by trial."""
    rng = np.random.default_rng(11)
    n, d, m, trials = params["n"], params["d"], 15, 40
    Y = sp.rademacher(rng, d, m * trials).reshape(d, trials, m).transpose(1, 0, 2)
    shape = (trials,) if case == "self" else (trials, 2)
    d1, d0 = rng.integers(n, size=shape), rng.integers(n, size=shape)
    tau = sp.threshold(case, params)
    for a, positions in ((params["a1"], d1), (params["a0"], d0)):
        Q, K, X = sp._batch_points(case, a, positions, params)
        rows, multiplicity = sp.distinct_query_rows(Q)
        np.testing.assert_array_equal(multiplicity.sum(axis=1), n)
        for kind in sp.KINDS:
            fast = sp.network_batch(sp.attention(rows, K, K, X, np.eye(d), kind), Y, tau, multiplicity)
            for t in range(trials):
                if case == "self":
                    c = sp.self_outputs(n, d, a, params["b"], params["c"], positions[t], params["X"])[kind]
                else:
                    c = sp.cross_outputs(n, d, a, *positions[t])[kind]
                full = sp.network(c, Y[t], tau)
                assert fast.value[t] == pytest.approx(full.value, rel=1e-12, abs=1e-12)
                assert fast.margin[t] == pytest.approx(full.margin, rel=1e-12, abs=1e-12)
    np.testing.assert_array_equal(
        sp.success_indicators(case, Y, d1, d0, **params),
        sp.success_indicators(case, Y, d1, d0, distinct=False, **params),
    )


def test_vectorised_simulation_rejects_bad_shapes_and_cases():
    params = dict(n=200, d=11, a0=0.01, a1=3.0)
    with pytest.raises(ValueError, match="Y must have shape"):
        sp.success_indicators("cross", np.ones((4, 10, 3)), np.zeros((4, 2), int), np.zeros((4, 2), int), **params)
    with pytest.raises(ValueError, match="case"):
        sp.success_indicators("toy", np.ones((4, 11, 3)), np.zeros(4, int), np.zeros(4, int), **params)
    with pytest.raises(ValueError, match="row indices"):
        sp.self_data_batch(200, 12, 1.2, 0.2, 0.8, [0, 200])
