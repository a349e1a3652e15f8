#!/usr/bin/env python
"""Train the Penn Treebank LSTM language model of HRF §4.2 / App I and write the checkpoint the notebooks load.

    python tools/train_ptb_lm.py                   # `make ptb-lm`: data/ptb_lstm/{ptb_lstm_h200.npz,training_log.json}
    python tools/train_ptb_lm.py --max-steps 30 --out-dir /tmp/x   # a reproducibility slice (used by the tests)

The recipe is ``rflib.experiments.lm.PTB_RECIPE`` (2-layer LSTM, hidden 200, tied embeddings, full-softmax
cross-entropy); the key is ``jax.random.key(seed)``. The log records the recipe, the seed, every step's training loss,
the per-epoch validation perplexity, the best epoch's validation and test perplexity, the parameters' content SHA-256
(``lm.params_sha256``), the package versions and the wall time. Both files are written atomically, the checkpoint
first: a run that stops early leaves the previous pair in place (a mismatched pair is refused on load by the hash).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from rflib.experiments.allocator import deterministic_xla_flags

# Before JAX starts: repeatable GPU kernels (the CPU backend ignores the flag), as the notebook runner's kernels have.
os.environ["XLA_FLAGS"] = deterministic_xla_flags(os.environ.get("XLA_FLAGS", ""))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from rflib._atomic import write_atomically  # noqa: E402
from rflib.experiments import datasets, lm  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "data" / "ptb_lstm"
CHECKPOINT, LOG = "ptb_lstm_h200.npz", "training_log.json"


# The random streams must not depend on the caller's environment (the tests and notebooks set
# JAX_THREEFRY_PARTITIONABLE=0 for speed): the checkpoint was trained with JAX's default, the partitionable lowering.
THREEFRY_PARTITIONABLE = True


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else ``platform.processor()``, else "unknown"."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def train(seed: int, max_steps: int | None = None, progress: bool = True) -> tuple[lm.LSTMParams, dict]:
    """Train with :data:`lm.PTB_RECIPE`; returns the (best) parameters and the training log (see module doc)."""
    jax.config.update("jax_threefry_partitionable", THREEFRY_PARTITIONABLE)
    if jax.config.jax_enable_x64:
        raise RuntimeError("train the PTB model without JAX_ENABLE_X64 (float32 throughout, as make ptb-lm does)")
    ptb = datasets.load_ptb()
    vocab = datasets.vocabulary(ptb["train"])
    ids = {split: np.asarray(datasets.encode(ptb[split], vocab)) for split in ("train", "valid", "test")}
    start = time.perf_counter()
    params, log = lm.train_lstm_epochs(
        jax.random.key(seed),
        ids["train"],
        ids["valid"],
        vocab_size=len(vocab),
        max_steps=max_steps,
        progress=progress,
        **lm.PTB_RECIPE,
    )
    log = {
        "recipe": lm.PTB_RECIPE,
        "seed": seed,
        "max_steps": max_steps,
        "train_seconds": time.perf_counter() - start,
        "versions": {"jax": jax.__version__, "numpy": np.__version__, "python": platform.python_version()},
        "machine": f"{platform.machine()}, {jax.devices()[0].platform}",
        "cpu": cpu_model(),  # float32 training is bitwise reproducible only on the same CPU type
        **log,
    }
    if max_steps is None:
        for split in ("valid", "test"):
            loss, _ = lm.evaluate(params, ids[split], batch=10, bptt=lm.PTB_RECIPE["bptt"])
            log[f"{split}_perplexity"] = float(np.exp(loss))
    return params, log


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (a slice)")
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    params, log = train(args.seed, args.max_steps)
    log["sha256"] = lm.save_checkpoint(args.out_dir / CHECKPOINT, params)
    text = json.dumps(log, indent=1, ensure_ascii=False) + "\n"
    write_atomically(args.out_dir / LOG, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    summary = {k: log.get(k) for k in ("best_epoch", "valid_perplexity", "test_perplexity", "sha256")}
    print(f"wrote {args.out_dir / CHECKPOINT} and {LOG}: {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
