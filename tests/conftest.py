"""Test configuration: every identity is checked in float64.

The Makefile exports JAX_ENABLE_X64=1 for the test process; setting it here as well (before JAX is imported)
makes a bare ``pytest`` run behave the same. The flag is sticky per process, so it is never toggled per test.
"""

import logging
import os

os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# The partitionable threefry lowering costs ~2 s of XLA compile per new random shape on the 2-core CPU (0.3 s without);
# it only matters for sharded arrays. Notebooks make the same choice, so streams agree between tests and notebooks.
os.environ.setdefault("JAX_THREEFRY_PARTITIONABLE", "0")

import jax  # noqa: E402
import pytest  # noqa: E402

# make test's ordering and worker scheduling, registered as this conftest's hooks (JAX-free, so tests can load them;
# `tests` is importable through pyproject.toml's pytest pythonpath)
from tests.scheduling import pytest_collection_modifyitems, pytest_xdist_make_scheduler  # noqa: E402, F401

if not jax.config.jax_enable_x64:
    raise RuntimeError("tests need float64: run them with JAX_ENABLE_X64=1 (make test does)")


@pytest.fixture
def key():
    """A fixed key: every Monte Carlo test is deterministic."""
    return jax.random.key(20260122)


def _compiles(fn, *args) -> int:
    """How many XLA compilations ``fn(*args)`` triggers (counted from jax.log_compiles' log records)."""
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            if "Compiling" in record.getMessage():
                records.append(record)

    handler, logger = Collect(level=logging.WARNING), logging.getLogger("jax")
    logger.addHandler(handler)
    try:
        with jax.log_compiles():
            jax.block_until_ready(fn(*args))
    finally:
        logger.removeHandler(handler)
    return len(records)


@pytest.fixture
def count_compiles():
    """``count_compiles(fn, *args)``: how many XLA compilations the call triggers."""
    return _compiles
