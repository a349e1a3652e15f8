"""Progress bars for the long loops of the experiments and the benchmarks: one convention everywhere.

Every function with a long loop takes a keyword ``progress: bool = False`` and wraps that loop in
:func:`bar` with a description of what the loop runs (``bar(seeds, f"{env}, {architecture}", progress)``). Off by
default, so library calls and tests stay silent; the notebooks and ``python -m benchmarks`` pass ``progress=True``.
A bar only displays: the loop's items, their order and every number computed from them are the same either way.
"""

from __future__ import annotations

from collections.abc import Iterable


def bar(iterable: Iterable, desc: str, enabled: bool, **tqdm_kwargs) -> Iterable:
    """``iterable`` itself when not ``enabled``, else ``tqdm.auto.tqdm(iterable, desc=desc, **tqdm_kwargs)``
    (e.g. ``leave=False`` for an inner loop). tqdm is imported only when a bar is shown."""
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, **tqdm_kwargs)
