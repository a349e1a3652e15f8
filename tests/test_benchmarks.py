"""The benchmark harness's arithmetic (crossovers, slopes, tables) and its plumbing; the timings themselves are
not tested (they depend on the machine) — notebook 11 runs the suites it reports at quick scale in test_notebooks,
and the causal chunk suite (a GPU question) runs at quick scale here."""

import json
from functools import partial

import numpy as np
import pytest

from benchmarks import attention_gradients, attention_scaling, feature_maps, harness, kama_rotations
from benchmarks.suites import SIZES, SUITES, run_suite
from rflib.experiments import allocator


def test_crossover_interpolates_where_the_ratio_falls_below_one_for_good():
    xs = [256, 512, 1024, 2048]
    assert harness.crossover(xs, [4.0, 2.0, 1.0 / 2, 1.0 / 4]) == pytest.approx(724.08, rel=1e-3)  # √(512·1024)
    assert harness.crossover(xs, [0.5, 0.4, 0.3, 0.2]) == 256  # wins everywhere
    assert harness.crossover(xs, [2.0, 2.0, 1.5, 1.1]) is None  # never wins
    assert harness.crossover(xs, [0.5, 2.0, 0.5, 0.5]) == pytest.approx(724.08, rel=1e-3)  # last crossing counts


def test_loglog_slope_recovers_power_laws():
    L = np.array([1024, 2048, 4096, 8192])
    assert harness.loglog_slope(L, 3 * L**2) == pytest.approx(2.0)
    assert harness.loglog_slope(L, 5 * L) == pytest.approx(1.0)


def test_table_formats_rows_and_marks_missing_cells():
    text = harness.table([{"a": 1.23456, "b": "x"}, {"a": None, "b": "y"}], ["a", "b"], {"a": ".2f"})
    assert text.splitlines() == ["| a | b |", "|---|---|", "| 1.23 | x |", "| — | y |"]


def test_notebook_wall_times_reads_papermill_durations(tmp_path):
    (tmp_path / "01_x.ipynb").write_text(json.dumps({"metadata": {"papermill": {"duration": 12.5}}}))
    (tmp_path / "02_y.ipynb").write_text(json.dumps({"metadata": {}}))
    assert harness.notebook_wall_times(tmp_path) == {"01_x": 12.5}
    assert harness.notebook_wall_times(tmp_path / "missing") == {}


def test_working_bytes_sees_a_quadratic_intermediate():
    import jax
    import jax.numpy as jnp

    x = jnp.zeros((512, 8), jnp.float32)
    quadratic = harness.working_bytes(harness.compiled(lambda a: jax.nn.softmax(a @ a.T, axis=1) @ a, x))
    assert quadratic >= 512 * 512 * 4  # the softmax matrix must exist before the final product
    assert harness.working_bytes(harness.compiled(lambda a: 2 * a, x)) < 512 * 512 * 4


def test_every_suite_has_sizes_columns_and_a_named_error():
    for name, module in SUITES.items():
        assert name in SIZES["quick"] and name in SIZES["full"]
        assert callable(module.run) and module.COLUMNS
    with pytest.raises(ValueError, match="unknown suite"):
        run_suite("nope")
    with pytest.raises(ValueError, match="scale"):
        run_suite("feature_maps", "huge")


def test_allocator_settings_keep_large_blocks_in_the_heap():
    env = allocator.ALLOCATOR_ENV
    assert int(env["MALLOC_MMAP_THRESHOLD_"]) >= 16 * 2**20  # an 8 MB feature block stays below the threshold
    assert int(env["MALLOC_TRIM_THRESHOLD_"]) > int(env["MALLOC_MMAP_THRESHOLD_"])


def test_kama_storage_crossover_matches_the_counting_formula():
    d = kama_rotations.storage_crossover(range(2, 200))
    from rflib import kama

    assert kama.storage(kama.rotations_for(d), d) < d * d
    assert kama.storage(kama.rotations_for(d - 1), d - 1) >= (d - 1) ** 2


def test_suite_table_shows_booleans_as_words_with_the_suites_columns_and_formats():
    rows = [{"map": "positive", "features": 256, "ms": 1.23456, "ratio": 1.5, "finite": True}]
    text = harness.suite_table(rows, feature_maps)
    assert text.splitlines()[2] == "| positive | 256 | 1.235 | 1.50 | — | — | — | — | — | True |"


def test_wall_times_by_scale_read_each_scales_executed_notebooks(tmp_path):
    executed = tmp_path / harness.EXECUTED_NOTEBOOKS["standard"]
    executed.mkdir(parents=True)
    (executed / "09_x.ipynb").write_text(json.dumps({"metadata": {"papermill": {"duration": 60.0}}}))
    assert harness.wall_times_by_scale(tmp_path) == {"quick": {}, "standard": {"09_x": 60.0}, "paper": {}}


def test_the_time_budget_holds_when_every_notebook_ran_within_it_and_a_missing_run_leaves_it_open():
    budget = partial(harness.within_budget, names=["00_a", "01_b"], budget_s=900.0)
    assert budget({"00_a": 60.0, "01_b": 900.0}) == ("holds", {"00_a": "holds", "01_b": "holds"})
    assert budget({"00_a": 60.0, "01_b": 901.0}) == ("fails", {"00_a": "holds", "01_b": "fails"})
    assert budget({"00_a": 60.0}) == ("inconclusive", {"00_a": "holds", "01_b": "undecided"})  # 01_b never ran
    assert budget({"00_a": 1000.0}) == ("fails", {"00_a": "fails", "01_b": "undecided"})


def test_cpu_model_and_widest_vector_extension_are_read_from_cpuinfo():
    text = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx avx2 avx512f avx512bw\n"
    assert harness.cpu_model_and_simd(text) == ("AMD EPYC", "avx512f")
    assert harness.cpu_model_and_simd("model name: X\nflags: sse2 avx avx2\n") == ("X", "avx2")
    assert harness.cpu_model_and_simd("") == ("unknown", "unknown")
    model, simd = harness.cpu_model_and_simd()  # this machine's, whatever it is
    assert isinstance(model, str) and simd in ("avx512f", "avx2", "avx", "none", "unknown")


def test_feature_map_cost_split_adds_up_and_the_note_names_only_maps_over_the_target():
    baselines = [{"map": "X @ W.T (baseline)"}, {"map": "X @ [W; −W].T (2m-wide output)"}]
    slow = {"map": "trig", "ratio": 3.0, "ratio_without_elementwise": 1.2, "elementwise_ms": 0.9, "ms": 1.5}
    fast = {"map": "positive", "ratio": 1.5, "ratio_without_elementwise": 1.0, "elementwise_ms": 0.2, "ms": 0.75}
    maps = feature_maps.map_rows([*baselines, dict(slow, ratio_same_width=1.5), dict(fast, ratio_same_width=1.5)])
    assert [r["map"] for r in maps] == ["trig", "positive"]
    names, rest, elem = feature_maps.cost_split(maps)
    assert names == ["trig", "positive"] and np.allclose(np.add(rest, elem), [3.0, 1.5])
    assert feature_maps.target_note(maps) == (
        "over the target: trig 3.00× (60% of it exp or sin/cos, 1.50× a matmul writing as many columns)"
    )
    assert feature_maps.target_note(maps[1:]) == "all within the target"


ATTENTION_ROWS = [
    {"method": method, "causal": causal, "L": L, "ms": ms, "memory_bytes": memory}
    for causal in (False, True)
    for L in (1024, 2048, 4096, 16384)
    for method, ms, memory in (
        ("exact", L**2 / 2**20, 4 * L**2),
        ("FAVOR+", L / 1024, 1000 * L),
        ("FAVOR#", L / 1024, 1000 * L),
        ("HRF", 2 * L / 1024, 1000 * L),
    )
]


def test_attention_curves_keep_one_colour_slot_per_method_and_skip_untimed_runs():
    rows = [dict(r, ms=None) if r["method"] == "HRF" else r for r in ATTENTION_ROWS]
    curves = attention_scaling.time_curves(rows, causal=True)
    assert list(curves) == list(attention_scaling.METHODS) and curves["HRF"] == ([], [])
    assert curves["exact"] == ([1024, 2048, 4096, 16384], [1.0, 4.0, 16.0, 256.0])
    memory = attention_scaling.memory_curves(rows)
    assert memory["FAVOR+"][1] == [1000 * L / 2**20 for L in (1024, 2048, 4096, 16384)]


def test_attention_crossovers_speedups_and_memory_slopes_from_synthetic_timings():
    # exact: L²/2²⁰ ms, FAVOR+: L/1024 ms -> equal at L = 1024, then linear wins; HRF is twice as slow -> L = 2048
    crossovers, at_16k = attention_scaling.crossovers(ATTENTION_ROWS)
    assert crossovers["FAVOR+, causal"] == 1024 and crossovers["HRF, bidirectional"] == pytest.approx(2048)
    assert at_16k == {
        f"{m}, {c}": 16.0 if m != "HRF" else 8.0
        for m in ("FAVOR+", "FAVOR#", "HRF")
        for c in ("bidirectional", "causal")
    }
    slopes = attention_scaling.memory_slopes(ATTENTION_ROWS, min_length=2048)
    assert slopes == {"exact": 2.0, "FAVOR+": 1.0, "FAVOR#": 1.0, "HRF": 1.0}
    assert attention_scaling.memory_slopes(ATTENTION_ROWS, min_length=16384) == {}  # one row per method is no slope


def test_kama_curves_are_labelled_per_implementation_for_one_batch():
    rows = [
        {"d": d, "batch": b, "dense_ms": 1.0 * d, "kama_ms": 2.0 * d, "layers_ms": 3.0 * d}
        for d in (16, 32)
        for b in (1, 256)
    ]
    curves = kama_rotations.curves(rows, 256)
    assert list(curves) == list(kama_rotations.LABELS.values())
    assert curves["KAMA, paper's law"] == ([16, 32], [32.0, 64.0])


def test_useful_flops_count_the_four_matmuls_and_three_passes():
    from benchmarks import attention_gradients as ag

    assert ag.useful_flops(1, 10, 4, 8, 3, backward=False) == 4 * 10 * 4 * 8 + 4 * 10 * 8 * 4
    assert ag.useful_flops(6, 10, 4, 8, 3, backward=True) == 3 * 6 * ag.useful_flops(1, 10, 4, 8, 3, backward=False)


@pytest.mark.parametrize("causal", [False, True])
def test_the_performer_baseline_is_rflibs_favor_plus_up_to_its_epsilon(monkeypatch, causal):
    """The re-implemented public algorithm (ε = 10⁻⁴ added to every feature, no exact stabilisation, the causal
    prefix-sum VJP by subtraction) equals rflib's FAVOR+ drop-in, values and gradients, once ε is set to 0: the
    benchmark compares the same function."""
    import jax
    import jax.numpy as jnp

    from benchmarks import performer_baseline
    from rflib import attention, projections

    monkeypatch.setattr(performer_baseline, "EPS", 0.0)
    keys = jax.random.split(jax.random.key(0), 4)
    Q, K, V = (0.3 * jax.random.normal(k, (2, 40, 3, 8)) for k in keys[:3])
    W = projections.orthogonal(keys[3], 16, 8)
    ours = attention.make_attention_fn("favor+", 8, projection_key=keys[3], num_features=16, causal=causal)

    def theirs(q, k, v):
        return performer_baseline._favor_plus_impl(q, k, v, W, causal)

    np.testing.assert_allclose(theirs(Q, K, V), ours(Q, K, V), rtol=1e-10, atol=1e-12)
    grads = [
        jax.grad(lambda q, k, v, f=f: jnp.sum(jnp.sin(f(q, k, v))), argnums=(0, 1, 2))(Q, K, V) for f in (theirs, ours)
    ]
    for a, b in zip(*grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_gradient_flop_ratio_counts_both_operand_gradients_of_every_product_but_the_projections():
    """Bidirectional, L = 4096, d = d_v = 64, m = 256: projections 4·L·d·m and state + read-out 4·L·m·65 FLOPs
    forward; backward the projections once and the rest twice. Causal with one chunk of L rows and the quadratic
    products counted separately: the same rule."""
    projections, rest = 4 * 4096 * 64 * 256, 4 * 4096 * 256 * 65
    assert attention_gradients.gradient_flop_ratio(4096, 64, 256, 64, causal=False) == pytest.approx(
        (2 * projections + 3 * rest) / (projections + rest), rel=1e-15
    )
    L, m, v = 128, 16, 9
    quadratic, linear = 2 * L**2 * (m + v), 4 * L * m * v
    projections = 4 * L * 8 * m
    assert attention_gradients.gradient_flop_ratio(L, 8, m, v - 1, causal=True, chunk=L) == pytest.approx(
        (2 * projections + 3 * (quadratic + linear)) / (projections + quadratic + linear), rel=1e-15
    )


def test_paired_overhead_is_the_geometric_mean_ratio_with_a_delta_method_standard_error():
    fast = np.array([1.0, 2.0, 4.0, 3.0])
    overhead, se = harness.paired_overhead(1.1 * fast, fast)  # a constant 10 % in every round
    assert overhead == pytest.approx(0.1) and se == pytest.approx(0.0, abs=1e-12)
    logs = np.log([1.2, 1.0, 1.1, 1.3])
    overhead, se = harness.paired_overhead(np.exp(logs) * fast, fast)
    g = np.exp(logs.mean())
    assert overhead == pytest.approx(g - 1) and se == pytest.approx(g * logs.std(ddof=1) / 2)
    with pytest.raises(ValueError, match="two rounds"):
        harness.paired_overhead([1.0], [1.0])


def test_paired_ratio_is_the_geometric_mean_ratio_and_interleaved_samples_average_repeated_calls():
    fast = np.array([1.0, 2.0, 4.0, 3.0])
    assert harness.paired_ratio(2 * fast, fast) == (pytest.approx(2.0), pytest.approx(0.0, abs=1e-12))
    counts = {"a": 0, "b": 0}

    def counter(name):
        def call(x):
            counts[name] += 1
            return x

        return call

    samples = harness.interleaved_samples({n: counter(n) for n in counts}, (np.zeros(3),), rounds=4, calls=3)
    assert {n: len(v) for n, v in samples.items()} == {"a": 4, "b": 4}
    assert counts == {"a": 1 + 4 * 3, "b": 1 + 4 * 3}  # one warm-up call, then 3 calls in each of 4 rounds
    with pytest.raises(ValueError, match="calls"):
        harness.interleaved_samples({"a": counter("a")}, (np.zeros(3),), rounds=1, calls=0)


def test_interleaved_samples_repeat_short_calls_to_last_min_seconds():
    import time

    count = 0

    def one_millisecond(x):
        nonlocal count
        count += 1
        time.sleep(0.001)
        return x

    samples = harness.interleaved_samples({"a": one_millisecond}, (np.zeros(3),), rounds=3, min_seconds=0.01)
    repeats, leftover = divmod(count - 2, 3)  # a warm-up call, a timed warm-up call, then 3 rounds of repeats
    assert leftover == 0 and 2 <= repeats <= 10  # ⌈10 ms / (≥ 1 ms a call)⌉
    assert all(0.001 <= t < 0.01 for t in samples["a"])  # per call, not per round


def test_causal_chunk_suite_times_exact_and_both_maps_and_every_chunk_agrees_with_64_token_chunks():
    result = run_suite("causal_chunks", "quick")
    rows = result["rows"]
    assert {(r["method"], r["chunk"], r["mode"]) for r in rows} == {
        (method, chunk, mode)
        for method, chunk in (("exact", None), ("FAVOR+", 16), ("HRF", 16))
        for mode in ("forward", "forward + backward")
    }
    assert all(r["ms"] > 0 and r["memory_MiB"] > 0 for r in rows)
    agreement = {r["method"]: r for r in rows if r["method"] != "exact" and r["mode"] == "forward"}
    # float32 round-off; HRF's signed denominators can nearly cancel, so its largest difference is not a bound
    assert agreement["FAVOR+"]["max_rel_diff"] < 1e-5
    assert agreement["FAVOR+"]["median_rel_diff"] < 1e-5 and agreement["HRF"]["median_rel_diff"] < 1e-5
    assert "max_rel_diff" in harness.suite_table(rows, SUITES["causal_chunks"])


def test_kama_gradient_suite_checks_both_gradients_and_both_batchings_before_timing_them():
    """The suite asserts the sweep gradient against autodiff, and both batchings against vmapped autodiff, before it
    times them."""
    rows = run_suite("kama_gradients", "quick")["rows"]
    assert [(r["d"], r["k"], r["runs"]) for r in rows] == [(8, 12, 2)]
    row = rows[0]
    assert all(row[f"{name}_ms"] > 0 for name in ("sweep", "autodiff", "lax_map", "vmap", "vmap_autodiff"))
    assert row["autodiff_over_sweep"] == pytest.approx(row["autodiff_ms"] / row["sweep_ms"])
    assert "vmap_over_lax_map" in harness.suite_table(rows, SUITES["kama_gradients"])
