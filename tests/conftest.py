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
