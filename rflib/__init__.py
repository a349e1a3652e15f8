"""rflib: random-feature kernel estimators and attention, the reference implementation behind the notebooks.

The package is layered; each layer imports only from the layers above it in this list, and no module uses another
module's private (underscored) names. A new estimator family is ``features/<family>.py`` + ``moments/<family>.py``
(its closed forms, if the paper gives them) + ``tests/test_<family>.py``.

Foundations: checks, exact ground truth and the randomness everything is built from
  _checks                     argument validation shared by every public function (ValueError naming the argument)
  _atomic                     atomic file writes (nothing half-written survives a failed run)
  fastmath                    fused sin/cos/exp kernels used by the feature maps
  kernels                     exact kernels: softmax, Gaussian, angular
  quadrature                  exact Gaussian expectations by Gauss–Hermite rules (the tests' oracle)
  kama                        products of Givens rotations, KAMA layers, Givens descent (KAMA-NNs §2–§5)
  projections                 one sampler vocabulary, sample(law, key, m, d): iid orthogonal sorf horn givens halton
  sharding                    every visible device: a leading axis (batch, heads, draws) split by jax.shard_map

Estimators, mirrored one-to-one: a family's feature maps and its exact moments
  features.base               Features (factored log form) and Estimator (query map, key map): the one interface
  features.classic            trigonometric, positive (FAVOR+), hyperbolic (HRF §2.1)     moments.classic
  features.complex_exp        complex exponential (HRF §2.3)                              moments.complex_exp
  features.hybrid             hybrid estimators (HRF §3, App F)                            moments.hybrid
  features.cluster            clustered HRF (HRF §3.3)
  features.dense_exp          GERF, ADERF, SDERF, SADERF and their fits (FAVOR#)          moments.dense_exp
  features.png                PNG features f(Wx)/√m (KAMA-NNs §4)                         moments.png

Mathematics that combines estimators
  attention                   softmax, linear (any Estimator) and FAVOR# attention, bidirectional and causal
  sphere                      HRF closed forms on the sphere in (θ, r) coordinates (Theorem 3.5)
  separation                  softmax vs linear attention distinguishing constructions (Deng et al.)

Experiments (train or simulate; nothing above uses them)
  experiments.datasets        offline dataset loaders and data generators
  experiments.simulation      Monte Carlo over draws of the random matrices, and its summaries
  experiments.identities      estimator identities by quadrature: HRF Lemma 2.2 MSEs, CE (Lemma 2.4), Lemma 2.3
  experiments.exact_sweeps    sweeps of exact MSEs: trig/hyperbolic crossing, Theorem 3.5 bounds, equal-cost curves
  experiments.families        every estimator family at one 64-feature budget, kernel and attention errors
  experiments.kernel_classification   FAVOR# kernel classification (§5.1)
  experiments.derf_variance   FAVOR# variance studies: §4 orderings, Figs 1–2 curves over regimes and σ, their gaps
  experiments.lm              Penn Treebank LSTM language model (HRF §4.2)
  experiments.hrf_studies     HRF studies: sphere pointwise (Figs 2/5), UCI Table 1, HRF-C (Fig 6), Fig 4 FLOPs
  experiments.transformer     small ViT with softmax or FAVOR# attention (FAVOR# §5.3)
  experiments.kama_kernels    KAMA-NNs kernel studies: cost crossover, Theorem 1 ratios, k sweep, Figs 1–2, Theorem 3
  experiments.policies        dense, Toeplitz and KAMA policies (KAMA-NNs §6)
  experiments.rl              PPO on gymnasium tasks (KAMA-NNs §6)
  experiments.separation_sweeps     success-rate sweeps and studies of the separation constructions (Deng et al. §7)
  experiments.separation_training   training studies of softmax vs linear attention (Deng et al. §5)
  experiments.timing          wall-clock measurement
  experiments.machine         this machine's matmul speed now, to judge a wall time against (numpy only)
  experiments.progress_bars   the progress-bar convention: progress=False by default, bar(iterable, desc, enabled)
  experiments.allocator       glibc allocator settings that make those timings stable

Notebook support (presentation only)
  notebook.results            claims, criteria and verdicts → results/*.json → REPRODUCTION.md
  notebook.coverage           every numbered item of the four papers and the coverage statuses
  notebook.plotting           figure style, label checks, atomic figure writes
  notebook.scaffold           named random keys (purpose, indices) and markdown tables

Every name above is reachable from ``import rflib`` (``rflib.kama``, ``rflib.experiments.rl``); subpackages and
modules are imported on first use.
"""

import importlib

__version__ = "0.1.0"

_MODULES = (
    "attention",
    "experiments",
    "fastmath",
    "features",
    "kama",
    "kernels",
    "moments",
    "notebook",
    "projections",
    "quadrature",
    "separation",
    "sharding",
    "sphere",
)


def __getattr__(name: str):
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_MODULES])


__all__ = list(_MODULES)
