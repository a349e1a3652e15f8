"""Harnesses that train or simulate; they may use every other part of rflib and nothing else uses them.

- ``datasets``: loaders of the offline datasets (origin and licence in ``data/README.md``) and data generators.
- ``simulation``: Monte Carlo of estimators over many draws of the random matrices, and its summaries.
- ``identities``: estimator identities checked by quadrature (HRF Lemmas 2.2–2.4).
- ``exact_sweeps``: the exact MSEs swept over grids (error profiles, Theorem 3.5's bounds, equal-cost curves).
- ``families``: every estimator family at one feature budget, side by side.
- ``hrf_studies``: HRF's pointwise study (Figs 2/5), UCI Table 1, HRF-C (Fig 6), Fig 4's FLOP counts.
- ``derf_variance``: FAVOR#'s variance studies (§4 orderings, Figs 1–2).
- ``kernel_classification``: FAVOR# kernel classification with fitted DERFs (FAVOR# §5.2).
- ``lm``: the Penn Treebank LSTM language model behind HRF §4.2, its checkpoint and the Fig 3 metrics.
- ``transformer``: the small ViT with softmax or FAVOR# attention (FAVOR# §5.3).
- ``kama_kernels``: KAMA-NNs kernel studies: Theorem 1 ratios, gain law, k sweep, Figs 1–2, Theorem 3.
- ``policies``, ``rl``: dense, Toeplitz and KAMA policies and their PPO and TRPO training (KAMA-NNs §6).
- ``separation_sweeps``: the separation constructions' §7 sweeps and the studies beyond the paper (Deng et al.).
- ``separation_training``: training studies of softmax vs linear attention (Deng et al. §5).
- ``timing``: wall-clock measurement used by the performance notebook and the benchmarks.
- ``machine``: this machine's matmul speed now, recorded beside wall times (numpy only, for the notebook runner).
- ``progress_bars``: the progress-bar convention (``progress: bool = False``, :func:`progress_bars.bar`).
- ``allocator``: glibc allocator settings for stable timings (standard library only).

Submodules are imported on first use, so that ``import rflib`` stays light (several need optax or gymnasium).
"""

import importlib

_MODULES = (
    "allocator",
    "datasets",
    "derf_variance",
    "exact_sweeps",
    "families",
    "hrf_studies",
    "identities",
    "kama_kernels",
    "kernel_classification",
    "lm",
    "machine",
    "policies",
    "progress_bars",
    "rl",
    "separation_sweeps",
    "separation_training",
    "simulation",
    "timing",
    "transformer",
)


def __getattr__(name: str):
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_MODULES)
