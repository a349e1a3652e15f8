"""Presentation support for the notebooks: no mathematics here.

- ``results``: the recorder of claims (criterion, paper value, ours, verdict) behind ``REPRODUCTION.md``.
- ``plotting``: the figure style, label checks and atomic figure writes.
- ``scaffold``: named random keys, ``Keys(seed)(purpose, *indices)``, and markdown tables.
"""

from rflib.notebook import plotting, results, scaffold

__all__ = ["plotting", "results", "scaffold"]
