"""The committed PTB language-model checkpoint (HRF §4.2, notebook 03) is the one `make ptb-lm` trains.

The full training takes 40 minutes to 2 hours, so the test re-runs its first steps with the logged seed and recipe (in a
subprocess without x64, as `make ptb-lm` runs) and compares every step's loss with the committed training log; and it
checks that the checkpoint holds the parameters whose content hash the log records.
"""

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rflib.experiments import lm

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT_DIR = ROOT / "data" / "ptb_lstm"
LOG = json.loads((CHECKPOINT_DIR / "training_log.json").read_text())


def test_the_log_records_the_recipe_the_seed_and_keeps_the_best_epochs_parameters():
    assert LOG["recipe"] == lm.PTB_RECIPE and LOG["seed"] == 0 and LOG["max_steps"] is None
    epochs = LOG["epochs"]
    assert 2 <= len(epochs) <= lm.PTB_RECIPE["epochs"] and LOG["best_epoch"] in range(1, len(epochs) + 1)
    best = epochs[LOG["best_epoch"] - 1]["valid_perplexity"]
    assert best == min(e["valid_perplexity"] for e in epochs)
    assert LOG["valid_perplexity"] == pytest.approx(best, rel=1e-4)  # the kept parameters are the best epoch's


def test_the_checkpoint_was_trained_to_convergence_by_the_recipes_schedule():
    """The learning rate followed the recipe epoch by epoch (halved after each epoch that lowered the best validation
    loss by less than min_gain), training ended because the rate fell below min_learning_rate (not at the epoch
    cap), and the last epoch changed validation perplexity by less than 1 %."""
    recipe, epochs = lm.PTB_RECIPE, LOG["epochs"]
    best = np.inf
    for before, after in itertools.pairwise(epochs):
        gain, best = best - before["valid_loss"], min(best, before["valid_loss"])
        factor = 1.0 if gain >= recipe["min_gain"] else recipe["decay"]
        assert after["learning_rate"] == pytest.approx(before["learning_rate"] * factor)
    assert LOG["stopped"] == "min_learning_rate"
    assert epochs[-1]["learning_rate"] * recipe["decay"] < recipe["min_learning_rate"] <= epochs[-1]["learning_rate"]
    assert abs(epochs[-1]["valid_perplexity"] / epochs[-2]["valid_perplexity"] - 1.0) < 0.01


def test_the_checkpoint_holds_the_logged_parameters():
    params = lm.load_checkpoint(CHECKPOINT_DIR / "ptb_lstm_h200.npz", sha256=LOG["sha256"])
    assert params.embedding.shape == (10_000, 200) and len(params.layers) == 2
    with pytest.raises(ValueError, match="does not hold the expected parameters"):
        lm.load_checkpoint(CHECKPOINT_DIR / "ptb_lstm_h200.npz", sha256="0" * 64)


def test_make_ptb_lm_reproduces_the_logged_first_steps(tmp_path):
    steps = 20
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "XLA_FLAGS")}  # as make ptb-lm runs
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "train_ptb_lm.py"),
            "--max-steps",
            str(steps),
            "--out-dir",
            str(tmp_path),
        ],
        check=True,
        env=env,
        capture_output=True,
        timeout=240,
    )
    again = json.loads((tmp_path / "training_log.json").read_text())
    assert len(again["step_losses"]) == steps
    np.testing.assert_allclose(again["step_losses"], LOG["step_losses"][:steps], rtol=1e-5)
