"""The separation sweeps (rflib.experiments.separation_sweeps, rflib.separation's sign-vector source and readout
count, separation_training's accuracy sweep): each equals the single calls it loops over, drawing from the given streams
in order, and matches the closed forms and, where there are some, independent values computed outside this code base."""

import math

import jax
import numpy as np
import pytest
from scipy import stats

from rflib import separation as sp
from rflib.experiments import separation_sweeps as ss
from rflib.experiments import separation_training as st

SELF_BASE = dict(n=200, d=22, a0=0.01, a1=1.2, b=0.2, c=0.8)
CROSS_BASE = dict(n=200, d=11, a0=0.01, a1=3.0)


def test_sign_vector_source_enumerates_small_d_and_samples_large_d_from_the_named_stream():
    asked = []

    def rng_for(d):
        asked.append(d)
        return np.random.default_rng(1000 + d)

    sigmas_for = sp.sign_vector_source(500, rng_for)
    np.testing.assert_array_equal(sigmas_for(4), sp.sign_vectors(4))
    sample = sigmas_for(20)
    np.testing.assert_array_equal(sample, sp.sign_vectors_or_sample(20, 500, np.random.default_rng(1020)))
    np.testing.assert_array_equal(sigmas_for(20), sample)  # the same fixed sample on every call
    assert asked == [4, 20, 20]  # the stream is derived for every d, enumerated or not
    with pytest.raises(ValueError, match="samples"):
        sp.sign_vector_source(0, rng_for)
    with pytest.raises(ValueError, match="rng_for"):
        sp.sign_vector_source(10, 3)


def test_readouts_for_is_floor_log_n_over_delta_with_the_papers_floor():
    assert sp.readouts_for(200) == 9  # log(20 000) = 9.90: Fig 7's m
    assert sp.readouts_for(200, floor=15) == 15  # §7.2's self-attention default
    assert sp.readouts_for(10**7, floor=15) == 20  # log(10⁹) = 20.7
    assert sp.readouts_for(200, delta=0.001) == 12  # log(200 000) = 12.2
    with pytest.raises(ValueError, match="delta"):
        sp.readouts_for(200, delta=0.0)
    with pytest.raises(ValueError, match="n must be"):
        sp.readouts_for(0)


def test_sweep_points_follow_the_papers_panel_rules():
    p, m = ss.sweep_point("self", dict(SELF_BASE, X="ones"), "n", 400)
    assert p == dict(SELF_BASE, X="ones", n=400, d=12) and m == 15  # the n-sweep runs at d = 12
    p, m = ss.sweep_point("self", SELF_BASE, "d", 34)
    assert (p["n"], p["d"], m) == (256, 34, 15)  # the d-sweep runs at n = 256
    p, m = ss.sweep_point("self", SELF_BASE, "m", 40)
    assert p == SELF_BASE and m == 40
    p, m = ss.sweep_point("self", SELF_BASE, "c", np.float64(0.65))
    assert p["c"] == 0.65 and type(p["c"]) is float and m == 15
    p, m = ss.sweep_point("cross", CROSS_BASE, "n", 1000)
    assert p["n"] == 1000 and m == int(math.log(1000 / 0.01)) == 11  # no floor for cross-attention
    with pytest.raises(ValueError, match="name"):
        ss.sweep_point("cross", CROSS_BASE, "c", 0.5)  # cross-attention has no constant column


def test_success_sweep_pairs_the_exact_formula_with_the_simulation_point_by_point():
    grid = {"d": (6, 5)}
    res = ss.success_sweep("cross", grid, CROSS_BASE, sp.sign_vectors, 50, np.random.default_rng(4))
    assert list(res) == [("d", 6), ("d", 5)]
    assert res["d", 6][0] == pytest.approx(0.6893, abs=6e-4)  # independent value (n = 200, m = 9)
    rng = np.random.default_rng(4)  # the same draws, in grid order
    for d in grid["d"]:
        params = dict(CROSS_BASE, d=d)
        assert res["d", d][0] == sp.success_probability("cross", 9, sp.sign_vectors(d), **params)
        assert res["d", d][1] == sp.simulate_success("cross", 9, 50, rng, **params)
    with pytest.raises(ValueError, match="grid name"):
        ss.success_sweep("self", {"tau": (0.5,)}, SELF_BASE, sp.sign_vectors, 10, np.random.default_rng(0))


def test_binomial_agreement_tests_each_point_exactly_and_the_pooled_bias():
    exact = ss.binomial_agreement([0.5, 0.25, 0.0, 1.0], [0.5, 0.25, 0.0, 1.0], 100)
    assert exact == {"points": 4, "bonferroni_p": 1.0, "pooled_z": 0.0}
    one_off = ss.binomial_agreement([0.5, 0.75], [0.5, 0.5], 100)  # 75 of 100 against p = 1/2
    assert one_off["bonferroni_p"] == pytest.approx(2 * 2 * stats.binom.sf(74, 100, 0.5), rel=1e-9)
    assert ss.binomial_agreement([0.01], [0.0], 100)["bonferroni_p"] == 0.0  # impossible under p = 0
    drift = ss.binomial_agreement([0.55] * 25, [0.5] * 25, 100)  # each point 1 s.e. high: none alone is rejected
    assert drift["bonferroni_p"] == 1.0 and drift["pooled_z"] == pytest.approx(5.0)
    with pytest.raises(ValueError, match="equal length"):
        ss.binomial_agreement([0.5], [0.5, 0.5], 100)


def test_fraction_in_band_uses_four_binomial_standard_errors_plus_half_a_percent():
    # band at p = 0.5, T = 100: 4·0.05 + 0.005 = 0.205
    assert ss.fraction_in_band([0.7, 0.71], [0.5, 0.5], 100) == 0.5
    # at p = 0 the variance floor 1e-12 leaves a band of 0.005
    assert ss.fraction_in_band([0.004, 0.006], [0.0, 0.0], 100) == 0.5
    res = {("n", 200): (0.5, 0.7), ("n", 400): (0.5, 0.71), ("m", 3): (0.0, 0.004)}
    assert ss.sweep_in_band(res, 100) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="equal length"):
        ss.fraction_in_band([0.5], [0.5, 0.5], 100)


def test_sweep_panel_returns_one_panel_in_grid_order():
    res = {("n", 200): (0.1, 0.2), ("m", 3): (0.3, 0.4), ("n", 400): (0.5, 0.6)}
    assert ss.sweep_panel(res, "n") == ([200, 400], [0.1, 0.5], [0.2, 0.6])
    with pytest.raises(ValueError, match="name"):
        ss.sweep_panel(res, "d")


def test_toy_success_rates_simulate_in_order_and_predict_one_minus_two_to_the_minus_m():
    points = [(100, 2), (200, 3)]
    simulated, predicted = ss.toy_success_rates(points, 40, np.random.default_rng(9))
    assert predicted == [0.75, 0.875]
    rng = np.random.default_rng(9)
    assert simulated == [sp.simulate_toy_success(n, m, 40, rng) for n, m in points]


def test_class_gaps_equal_the_closed_form_and_scale_like_one_over_n_for_linear_attention():
    ns = [64, 512, 2048]
    gaps, slopes = ss.class_gaps(ns, 10, 0.01, 1.2, 0.2, 0.8)
    for kind in sp.KINDS:
        closed = [sp.self_class_gap(n, 0.01, 1.2, kind) for n in ns]
        np.testing.assert_allclose(gaps[kind], closed, rtol=1e-6)
    assert abs(slopes["lin"] + 1) < 0.05 and abs(slopes["exp"]) < 0.05


def test_spike_row_outputs_match_the_lemma_closed_forms_and_the_notes_values():
    n, a = 200, 1.2
    spike, other, lin = ss.spike_row_outputs(n, 22, a, 0.2, 0.8)
    big = n ** (a + a * a)
    assert spike == pytest.approx(a * big / (big + n - 1), rel=1e-10)  # softmax weight of the spike row on itself
    assert other == pytest.approx(a * n**a / (n**a + n - 1), rel=1e-10)  # another row's weight on the spike
    assert lin == pytest.approx(a * (1 + a) / (n + a), rel=1e-12)
    assert (round(spike, 4), round(lin, 5)) == (1.1998, 0.01312)  # Lemmas D.3, D.11 at n = 200, a1 = 1.2


def test_worst_linear_margins_show_separation_with_the_spike_qk_but_not_with_the_papers_qk():
    n, d, m = 64, 34, 40
    readouts = [sp.rademacher(np.random.default_rng(seed), d, m) for seed in range(2)]
    spike = ss.worst_linear_margins(n, d, 0.01, 1.2, 0.2, 0.8, sp.spike_qk(n, d), readouts)
    assert len(spike) == 2 and all(pos > 0 and zero <= 0 for pos, zero in spike)
    ones = ss.worst_linear_margins(n, d, 0.01, 1.2, 0.2, 0.8, "ones", readouts)
    assert all(pos <= 0 for pos, _ in ones)  # Thm 6.2: F_lin(D1) = 0 with X = 1
    # the worst D1 margin is at most the margin at any single point
    s, tau = math.sqrt(math.log(n)), sp.self_threshold(n, 0.8)
    at_5 = sp.network(sp.self_outputs(n, d, 1.2, 0.2, 0.8, 5, sp.spike_qk(n, d))["lin"], readouts[0], tau).margin
    assert spike[0][0] <= at_5 / s


def test_tuned_readout_margin_is_half_the_linear_class_gap():
    """With X = 1 every linear-attention row is the same pooled vector, so c₀ does not depend on the spike row and
    the tuned readout's margin is half the closed-form linear class gap: ≈ 0.0065 s at n = 200."""
    tuned = ss.tuned_readout(200, 22, 0.01, 1.2, 0.2, 0.8)
    assert list(tuned) == ["D1 min c0", "D0 max c0", "margin / s"]
    assert tuned["D1 min c0"] > tuned["D0 max c0"]
    assert tuned["margin / s"] == pytest.approx(0.5 * sp.self_class_gap(200, 0.01, 1.2, "lin"), rel=1e-9)
    assert tuned["margin / s"] == pytest.approx(0.0065, abs=5e-5)


def test_phase_diagram_cells_are_the_exact_probabilities_and_transpose_with_the_axes():
    fixed = dict(n=256, a0=0.01, a1=1.2, b=0.2, c=0.8, X="ones")
    grid = ss.success_phase_diagram("self", ("d", (6, 10)), ("m", (5, 15)), sp.sign_vectors, **fixed)
    assert grid.shape == (2, 2)
    assert grid[1, 1] == pytest.approx(0.491, abs=6e-4)  # independent value (n = 256, d = 10, m = 15)
    assert grid[0, 0] == sp.success_probability("self", 5, sp.sign_vectors(6), d=6, **fixed)
    swapped = ss.success_phase_diagram("self", ("m", (5, 15)), ("d", (6, 10)), sp.sign_vectors, **fixed)
    np.testing.assert_array_equal(swapped, grid.T)
    with pytest.raises(ValueError, match=r"fixed needs \['m'\]"):
        ss.success_phase_diagram("self", ("d", (6,)), ("n", (256,)), sp.sign_vectors, a0=0.01, a1=1.2, b=0.2, c=0.8)
    with pytest.raises(ValueError, match="different parameters"):
        ss.success_phase_diagram("self", ("d", (6,)), ("d", (10,)), sp.sign_vectors, **fixed)


def test_rows_reaching_lists_the_rows_whose_maximum_reaches_the_level():
    grid = np.array([[0.2, 0.98], [0.99, 0.1], [0.5, 0.995]])
    assert ss.rows_reaching(grid, (4, 6, 10), 0.99) == [6, 10]
    with pytest.raises(ValueError, match="row_values"):
        ss.rows_reaching(grid, (4, 6), 0.99)


def test_accuracy_sweep_trains_each_kind_and_seed_on_one_train_test_split_per_n():
    streams = dict(data_rng=lambda n: np.random.default_rng(n), init_key=lambda sd: jax.random.key(100 + sd))
    acc = st.accuracy_sweep((16,), 18, 32, 0.05, 2, 3, **streams)
    assert list(acc) == [("exp", 16), ("lin", 16)] and all(len(v) == 2 for v in acc.values())
    rng = np.random.default_rng(16)
    A, y = st.noisy_self_data(rng, 16, 18, 32, 0.05)
    A_test, y_test = st.noisy_self_data(rng, 16, 18, 32, 0.05)  # the test set comes second from the same stream
    params, _ = st.train(jax.random.key(101), A, y, "lin", steps=3)
    assert acc["lin", 16][1] == st.accuracy(params, A_test, y_test, "lin")
    with pytest.raises(ValueError, match="init_key"):
        st.accuracy_sweep((16,), 18, 32, 0.05, 1, 3, data_rng=streams["data_rng"], init_key=None)


def test_accuracy_stats_are_numpys_mean_and_population_std():
    stats = st.accuracy_stats({("exp", 16): [0.5, 1.0], ("lin", 16): [0.75]})
    assert stats == {("exp", 16): (0.75, 0.25), ("lin", 16): (0.75, 0.0)}
    with pytest.raises(ValueError, match="empty"):
        st.accuracy_stats({("exp", 16): []})
