"""Test configuration: every identity is checked in float64.

The Makefile exports JAX_ENABLE_X64=1 for the test process; setting it here as well (before JAX is imported)
makes a bare ``pytest`` run behave the same. The flag is sticky per process, so it is never toggled per test.
"""

import os

os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# The partitionable threefry lowering costs ~2 s of XLA compile per new random shape on the 2-core CPU (0.3 s without);
# it only matters for sharded arrays. Notebooks make the same choice, so streams agree between tests and notebooks.
os.environ.setdefault("JAX_THREEFRY_PARTITIONABLE", "0")

import jax  # noqa: E402
import pytest  # noqa: E402

if not jax.config.jax_enable_x64:
    raise RuntimeError("tests need float64: run them with JAX_ENABLE_X64=1 (make test does)")


@pytest.fixture
def key():
    """A fixed key: every Monte Carlo test is deterministic."""
    return jax.random.key(20260122)


NOTEBOOK_GROUP = "notebooks"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Scheduling for ``make test``'s worker processes (pytest-xdist, ``--dist loadgroup``): a test file is one unit
    (its tests share compiled functions and module fixtures), except that the notebook runs and the book built from
    them form one unit that goes first: it is the longest, and the book test must follow the runs it publishes. A
    plain ``pytest`` run (no workers) keeps this order too."""
    for item in items:
        notebooks = item.get_closest_marker("notebook") is not None or item.path.name == "test_notebooks_book.py"
        item.add_marker(pytest.mark.xdist_group(NOTEBOOK_GROUP if notebooks else item.path.stem))
    items.sort(key=lambda item: next(item.iter_markers("xdist_group")).args[0] != NOTEBOOK_GROUP)
