"""Presentation support for the notebooks: no mathematics here.

- ``results``: the recorder of claims (criterion, paper value, ours, verdict) behind ``REPRODUCTION.md``.
- ``plotting``: the figure style, label checks and atomic figure writes.
- ``scaffold``: named random keys, ``Keys(seed)(purpose, *indices)``, and markdown tables.
- ``coverage``: the inventory of the papers' numbered items and the statuses a notebook may give one.

Submodules are imported on first use, as in ``rflib.experiments``: ``results`` needs only numpy, so the notebook
runner and the report tools start without JAX or matplotlib (≈ 3 s less per process on the 2-core CPU).
"""

import importlib

_MODULES = ("coverage", "plotting", "results", "scaffold")


def __getattr__(name: str):
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_MODULES)
