"""Every visible device: independent work along a leading axis (batch, heads, Monte Carlo draws) spread over all of
them with JAX's own engine, ``jax.sharding`` and ``jax.shard_map``; nothing home-made.

On one device (this 2-core CPU, where XLA sees a single CPU device) every function here is the identity or a plain
call, so the single-device numbers are unchanged. On a machine with several devices (a GPU node; or CPU devices
simulated with ``XLA_FLAGS=--xla_force_host_platform_device_count=4``, which the tests use) the leading axis is
split into one block per device:

- :func:`map_leading` runs a function on each device's block (``shard_map`` over a 1-D mesh of every device),
  padding the axis to a multiple of the device count and trimming the result, so any length works;
- :func:`shard_leading` places an array with its leading axis split over the devices (a ``NamedSharding``), so a
  jitted vmap over that axis is partitioned by XLA.

Attention (:mod:`rflib.attention`) maps its flattened batch × heads axis this way, and the Monte Carlo simulator
(:func:`rflib.experiments.simulation.paired_estimates`) its draws; since every block is computed by the same code
from the same keys, the results equal the single-device ones (tests/test_sharding.py, on 4 simulated devices).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

AXIS = "devices"


def device_count() -> int:
    """How many devices JAX sees (the shards of the leading axis)."""
    return jax.device_count()


@functools.cache
def mesh() -> Mesh:
    """The 1-D mesh of every visible device, axis name :data:`AXIS`."""
    return jax.make_mesh((jax.device_count(),), (AXIS,), axis_types=(jax.sharding.AxisType.Auto,))


def _padded_length(n: int) -> int:
    devices = jax.device_count()
    return -(-n // devices) * devices


def _pad_leading(x, length: int):
    """``x`` with its leading axis extended to ``length`` by repeating its last entry (a valid input, discarded)."""
    extra = length - x.shape[0]
    if extra == 0:
        return x
    return jnp.concatenate([x, jnp.repeat(x[-1:], extra, axis=0)], axis=0)


def map_leading(fn: Callable, *args):
    """``fn(*args)`` for a function that treats the leading axis of every argument (and of its outputs, a pytree of
    arrays) as independent entries, computed with one block of that axis per device.

    Shapes: every arg (n, ...) with the same n → outputs (n, ...). Single device: exactly ``fn(*args)``. Several:
    the axis is padded to a multiple of the device count (repeating the last entry), split by ``jax.shard_map``
    over :func:`mesh`, and the padding trimmed. Traceable (use inside ``jit``).
    """
    if jax.device_count() == 1:
        return fn(*args)
    n = args[0].shape[0]
    if any(a.shape[0] != n for a in args):
        raise ValueError(f"every argument needs the same leading length, got {[a.shape[0] for a in args]}")
    length = _padded_length(n)
    spec = PartitionSpec(AXIS)
    # check_vma=False: the per-device function is ordinary single-device code (scans with unsharded initial carries)
    sharded = jax.shard_map(fn, mesh=mesh(), in_specs=(spec,) * len(args), out_specs=spec, check_vma=False)
    out = sharded(*(_pad_leading(a, length) for a in args))
    return jax.tree_util.tree_map(lambda o: o[:n], out)


def shard_leading(x):
    """``x`` placed with its leading axis split over every device (``NamedSharding``), padded to a multiple of the
    device count by repeating its last entry; returns (placed array, original length). One device: (x, length)."""
    n = x.shape[0]
    if jax.device_count() == 1:
        return x, n
    padded = _pad_leading(jnp.asarray(x), _padded_length(n))
    return jax.device_put(padded, NamedSharding(mesh(), PartitionSpec(AXIS))), n
