"""rflib.sharding: attention's batch × heads axis and the Monte Carlo simulator's draws split over every visible
device (jax.shard_map / NamedSharding) give the single-device results. Run on 4 simulated CPU devices
(``--xla_force_host_platform_device_count=4``) in a subprocess, against 1 device in another."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

PROBE = textwrap.dedent(
    """
    import json, sys
    from functools import partial
    import jax, numpy as np
    from rflib import attention, projections, sharding
    from rflib.experiments import simulation
    from rflib.features import classic, hybrid

    keys = jax.random.split(jax.random.key(0), 5)
    Q, K, V = (0.3 * jax.random.normal(k, (3, 2, 33, 8)) for k in keys[:3])  # 6 sequences: padded to 8 on 4 devices
    W = projections.orthogonal(keys[3], 16, 8)
    hrf = hybrid.angular_hybrid_estimator(W[:4], W[4:8], W[8:11])
    results, devices = {}, {}
    for causal in (False, True):
        calls = {
            "favor+": lambda: attention.linear_attention(Q, K, V, partial(classic.positive_features, W), causal=causal),
            "favor#": lambda: attention.favor_sharp_attention(Q, K, V, W, causal=causal),
            "hrf": lambda: attention.linear_attention(Q, K, V, hrf, causal=causal),
        }
        for name, call in calls.items():
            out = call()
            results[f"{name} causal={causal}"] = np.asarray(out).tolist()
            devices[f"{name} causal={causal}"] = len(out.sharding.device_set)
    X = 0.5 * jax.random.normal(keys[4], (5, 8))
    shapes = {"W_pos": (4, 8), "W_trig": (4, 8), "T": (3, 8)}
    sim = simulation.paired_estimates(jax.random.key(9), X, X[::-1], hybrid.angular_hybrid_estimator, shapes, 1001,
                                      chunk=250)
    results["draws"] = sim.tolist()
    orth = simulation.paired_estimates(jax.random.key(9), X, X[::-1], classic.positive_estimator, {"W": (16, 8)}, 103,
                                       law="orthogonal")
    results["orthogonal draws"] = orth.tolist()
    placed, n = sharding.shard_leading(jax.random.split(jax.random.key(1), 10))
    devices["draw keys"] = len(placed.sharding.device_set)
    json.dump({"count": jax.device_count(), "devices": devices, "results": results, "padded": [placed.shape[0], n]},
              sys.stdout)
    """
)


def _run(device_count: int) -> dict:
    env = dict(os.environ, JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    # the caller's flags kept (make test's compile-time flags, see the Makefile: this test is compile-bound)
    env["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={device_count}"
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_attention_and_monte_carlo_draws_split_over_four_devices_equal_the_single_device_run():
    one, four = _run(1), _run(4)
    assert one["count"] == 1 and four["count"] == 4
    assert set(four["devices"].values()) == {4}, four["devices"]  # every output and the draw keys span 4 devices
    assert set(one["devices"].values()) == {1}
    assert four["padded"] == [12, 10] and one["padded"] == [10, 10]  # 10 keys padded to 12 on 4 devices
    for name, value in one["results"].items():
        np.testing.assert_allclose(four["results"][name], value, rtol=1e-12, atol=1e-13, err_msg=name)
