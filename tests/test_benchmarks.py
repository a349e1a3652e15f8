"""The benchmark harness's arithmetic (crossovers, slopes, tables) and its plumbing; the timings themselves are
not tested (they depend on the machine) — notebook 11 runs every suite at quick scale in test_notebooks."""

import json

import numpy as np
import pytest

from benchmarks import harness, kama_rotations
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
