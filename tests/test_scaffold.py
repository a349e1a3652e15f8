"""Notebook scaffolding: named keys are reproducible and never collide where numeric offsets did; tables render."""

import itertools

import jax
import numpy as np
import pytest

from rflib.notebook.scaffold import Keys, markdown_table, start


def _data(key):
    return tuple(np.asarray(jax.random.key_data(key)).ravel().tolist())


def test_named_keys_are_reproducible_and_depend_on_the_seed():
    assert _data(Keys(3)("fig1", 2, 5)) == _data(Keys(3)("fig1", 2, 5))
    assert _data(Keys(3)("fig1", 2, 5)) != _data(Keys(4)("fig1", 2, 5))


def test_named_keys_do_not_collide_where_decimal_offsets_do():
    # fold_in(key, 1000 * di + 10 * rep + mi) gives (0, 100, 0) and (1, 0, 0) the same key; names never do.
    keys = Keys(0)
    tuples = [("table1", di, rep, mi) for di, rep, mi in itertools.product(range(12), range(120), range(3))]
    tuples += [("table", di) for di in range(200)] + [("table1", di) for di in range(200)]
    data = {_data(keys(*t)) for t in tuples}
    assert len(data) == len(tuples)
    assert _data(keys("a", 1)) != _data(keys("a", "1"))
    assert _data(keys("a", 1, 2)) != _data(keys("a", 12))


def test_named_keys_refuse_bad_names_and_indices():
    with pytest.raises(ValueError, match="purpose must be a non-empty string"):
        Keys(0)("")
    with pytest.raises(ValueError, match=r"indices\[1\] must be an integer or a string"):
        Keys(0)("fig", 1, 2.5)
    with pytest.raises(ValueError, match="seed must be an integer"):
        Keys(-1)


def test_markdown_table_renders_and_checks_widths():
    assert markdown_table(["a", "b"], [[1, "x"]]) == "| a | b |\n|---|---|\n| 1 | x |"
    with pytest.raises(ValueError, match=r"rows\[0\] has 1 cells for 2 columns"):
        markdown_table(["a", "b"], [[1]])


def test_numpy_generators_and_integer_seeds_are_named_too():
    keys = Keys(5)
    assert keys.rng("split", 1, 2).integers(2**62) == Keys(5).rng("split", 1, 2).integers(2**62)
    draws = {keys.rng("split", di, rep).integers(2**62) for di in range(12) for rep in range(120)}
    assert len(draws) == 12 * 120
    assert keys.rng("split", 0).integers(2**62) != Keys(6).rng("split", 0).integers(2**62)
    seeds = [keys.integer("ppo", env, s) for env in ("Swimmer", "Hopper") for s in range(50)]
    assert len(set(seeds)) == len(seeds) and all(0 <= s < 2**32 for s in seeds)
    assert keys.integer("ppo", 0) == Keys(5).integer("ppo", 0) != Keys(6).integer("ppo", 0)
    with pytest.raises(ValueError, match="purpose must be a non-empty string"):
        keys.rng("")


def test_start_checks_the_scale_and_opens_a_recorder_with_the_run_parameters(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    settings = {"quick": dict(n=2), "standard": dict(n=20)}
    run = start("99_demo", "standard", 7, settings)
    assert run.settings == {"n": 20} and run.settings is not settings["standard"]
    assert run.keys.seed == 7 and run.recorder.parameters == {"scale": "standard", "seed": 7, "n": 20}
    assert (tmp_path / "99_demo.json").exists()
    assert "scale=standard, seed=7" in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"scale must be one of \['quick', 'standard'\], got 'paper'"):
        start("99_demo", "paper", 7, settings)
    with pytest.raises(ValueError, match="seed must be an integer"):
        start("99_demo", "quick", -1, settings)
