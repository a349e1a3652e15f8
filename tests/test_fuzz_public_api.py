"""Seeded fuzz of the public API: every bad argument gets a ValueError that names it, never a silent result.

Each entry point is called once with valid arguments (its documented output shape is taken from that call), then
once per (argument, mutation): complex, bool, string and object arrays, a NaN or an inf entry, an extra axis, an
integer array, and for scalar parameters out-of-range, non-integer, non-numeric and missing values. A mutation is
either *bad* (the call must raise ``ValueError`` naming the argument) or *benign* (integer arrays, and an extra axis
where the argument is documented as ``(..., d)``): then the call may also return finite values of the documented
shape. Anything else — a silent accept, a NaN/inf result, a ``TypeError`` from deep inside — fails the test.
The NaN/inf positions come from a fixed seed, so the same calls run every time.

Run this file as a script to print the counts by outcome (used for the before/after table in the issue).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import partial

import jax
import numpy as np

from rflib import attention, features, kama, kernels, moments, projections, quadrature, separation, sphere
from rflib.experiments import machine
from rflib.features import classic, dense_exp, hybrid, png
from rflib.moments import dense_exp as dense_exp_moments
from rflib.moments import png as png_moments

RNG_SEED = 20261123


@dataclass
class Arg:
    """How to fuzz one argument: ``array`` (fixed rank unless ``batched``), ``int`` / ``real`` scalars with their
    invalid values, or ``choice`` (a string from a set). ``optional``: None is valid (it picks a default);
    ``complex_ok``: complex values are valid (the quadrature of a complex estimator's values)."""

    kind: str
    invalid: tuple = ()
    batched: bool = False
    optional: bool = False
    complex_ok: bool = False


@dataclass
class Entry:
    name: str
    call: object
    valid: dict
    args: dict = field(default_factory=dict)


def _rng():
    return np.random.default_rng(RNG_SEED)


def _points(n, d, seed=0, scale=0.5):
    return scale * np.random.default_rng(seed).normal(size=(n, d))


KEY = jax.random.key(0)
W4 = np.asarray(projections.orthogonal(KEY, 6, 4))
X5, Y5 = _points(5, 4, 1), _points(5, 4, 2)
X3, Y3 = _points(3, 4, 3), _points(4, 4, 4)
PARAMS4 = dense_exp.fit("sderf", X5, Y5)
PRODUCT = kama.random_product(KEY, 8, 4)
LAYERS = kama.random_layers(KEY, 3, 4)
Q, K_, V = _points(6, 4, 5), _points(6, 4, 6), _points(6, 3, 7)
HRF = hybrid.angular_hybrid_estimator(W4, W4[:3], W4[:2])


def _hrf_estimate(W_pos, W_trig, T):
    return hybrid.angular_hybrid_estimator(W_pos, W_trig, T).estimate(X3, Y3)


ARRAY = Arg("array")
BATCHED = Arg("array", batched=True)
POS_INT = Arg("int", (0, -1))
OPTIONAL_POS_INT = Arg("int", (0, -1), optional=True)
NONNEG_INT = Arg("int", (-1,))

ENTRIES = [
    Entry("kernels.softmax_kernel", kernels.softmax_kernel, {"X": X3, "Y": Y3}, {"X": ARRAY, "Y": ARRAY}),
    Entry(
        "kernels.gaussian_kernel",
        kernels.gaussian_kernel,
        {"X": X3, "Y": Y3, "sigma": 1.0},
        {"X": ARRAY, "Y": ARRAY, "sigma": Arg("real", (0.0, -1.0))},
    ),
    Entry("kernels.angles", kernels.angles, {"X": X3, "Y": Y3}, {"X": ARRAY, "Y": ARRAY}),
    Entry(
        "projections.orthogonal", partial(projections.orthogonal, KEY), {"m": 6, "d": 4}, {"m": POS_INT, "d": POS_INT}
    ),
    Entry("projections.gaussian", partial(projections.gaussian, KEY), {"m": 6, "d": 4}, {"m": POS_INT, "d": POS_INT}),
    Entry("classic.positive_features", classic.positive_features, {"W": W4, "X": X3}, {"W": ARRAY, "X": ARRAY}),
    Entry("classic.trig", classic.trig, {"W": W4, "X": X3}, {"W": ARRAY, "X": ARRAY}),
    Entry("classic.hyperbolic", classic.hyperbolic, {"W": W4, "X": X3}, {"W": ARRAY, "X": ARRAY}),
    Entry(
        "Estimator.estimate",
        classic.positive_estimator(W4).estimate,
        {"X": X3, "Y": Y3},
        {"X": ARRAY, "Y": ARRAY},
    ),
    Entry("Estimator.paired", HRF.paired, {"X": X5, "Y": Y5}, {"X": ARRAY, "Y": ARRAY}),
    Entry(
        "hybrid.angular_hybrid_estimator",
        _hrf_estimate,
        {"W_pos": W4, "W_trig": W4[:3], "T": W4[:2]},
        {"W_pos": ARRAY, "W_trig": ARRAY, "T": ARRAY},
    ),
    Entry(
        "dense_exp.fit",
        dense_exp.fit,
        {"method": "sderf", "X": X5, "Y": Y5, "eps": 1e-8},
        {"method": Arg("choice"), "X": ARRAY, "Y": ARRAY, "eps": Arg("real", (-1e-3,))},
    ),
    Entry(
        "dense_exp.gerf_params",
        dense_exp.gerf_params,
        {"a": -0.1, "d": 4},
        {"a": Arg("real", (0.125, 0.3)), "d": POS_INT},
    ),
    Entry(
        "dense_exp.query_features",
        partial(dense_exp.query_features, PARAMS4),
        {"W": W4, "X": X3},
        {"W": ARRAY, "X": ARRAY},
    ),
    Entry(
        "dense_exp.key_features",
        partial(dense_exp.key_features, PARAMS4),
        {"W": W4, "Y": Y3},
        {"W": ARRAY, "Y": ARRAY},
    ),
    Entry("dense_exp.a_star", dense_exp.a_star, {"phi": np.array([0.0, 1.5])}, {"phi": Arg("array", batched=True)}),
    Entry("dense_exp.ell", dense_exp.ell, {"a": np.array([-0.5, 0.05])}, {"a": Arg("array", batched=True)}),
    Entry(
        "moments.classic.log_mse_trig",
        moments.classic.log_mse_trig,
        {"x": X3[0], "y": Y3[0], "m": 8},
        {"x": BATCHED, "y": BATCHED, "m": POS_INT},
    ),
    Entry(
        "moments.classic.log_relative_mse",
        moments.classic.log_relative_mse,
        {"log_mse": np.array([-1.0, 0.5, 2.0]), "x": X3, "y": Y3[:3]},
        {"log_mse": BATCHED, "x": BATCHED, "y": BATCHED},
    ),
    Entry("dense_exp_moments.log_expm1", dense_exp_moments.log_expm1, {"t": np.array([0.6, 3.0])}, {"t": BATCHED}),
    Entry(
        "quadrature.projection_rule",
        quadrature.projection_rule,
        {"directions": np.array([[1.2, -0.7, 2.1, 0.4], [0.3, 1.8, -1.1, 2.6]]), "n_points": 6, "rank_tol": 1e-12},
        {"directions": ARRAY, "n_points": POS_INT, "rank_tol": Arg("real", (-1.0, 1.0))},
    ),
    Entry(
        "quadrature.expectation",
        quadrature.expectation,
        {"values": X3, "weights": np.array([0.2, 0.3, 0.5])},
        {"values": Arg("array", complex_ok=True), "weights": ARRAY},
    ),
    Entry(
        "quadrature.estimator_moments",
        partial(quadrature.estimator_moments, features.positive),
        {"x": X3[0], "y": Y3[0], "n_points": 8},
        {"x": ARRAY, "y": ARRAY, "n_points": POS_INT},
    ),
    Entry("machine.matmul_gflops", machine.matmul_gflops, {"n": 8, "repeats": 1}, {"n": POS_INT, "repeats": POS_INT}),
    Entry(
        "moments.classic.log_mse_trig_orthogonal",
        moments.classic.log_mse_trig_orthogonal,
        {"x": X3[0], "y": Y3[0], "m": 8},
        {"x": BATCHED, "y": BATCHED, "m": POS_INT},
    ),
    Entry(
        "moments.hybrid.log_mse_angular_hybrid",
        moments.hybrid.log_mse_angular_hybrid,
        {"x": X3[0], "y": Y3[0], "m": 8, "n": 4},
        {"x": BATCHED, "y": BATCHED, "m": POS_INT, "n": POS_INT},
    ),
    Entry(
        "moments.hybrid.angular_lambda_moments",
        moments.hybrid.angular_lambda_moments,
        {"theta": np.array([0.3, 2.0]), "n": 4},
        {"theta": Arg("array", batched=True), "n": POS_INT},
    ),
    Entry(
        "sphere.log_mse_angular_hybrid",
        sphere.log_mse_angular_hybrid,
        {"theta": np.array([0.6, 2.0]), "r": 1.2, "m": 8, "n": 4},
        {"theta": BATCHED, "r": Arg("real", (0.0, -1.0)), "m": POS_INT, "n": POS_INT},
    ),
    Entry(
        "sphere.log_mse_trig",
        sphere.log_mse_trig,
        {"theta": np.array([0.6, 2.0]), "r": 1.2, "m": 8},
        {"theta": BATCHED, "r": Arg("real", (0.0, -1.0)), "m": POS_INT},
    ),
    Entry("kama.apply", partial(kama.apply, PRODUCT), {"X": X3}, {"X": ARRAY}),
    Entry("kama.apply_transpose", partial(kama.apply_transpose, PRODUCT), {"X": X3}, {"X": ARRAY}),
    Entry("kama.apply_layers", partial(kama.apply_layers, LAYERS), {"X": X3}, {"X": ARRAY}),
    Entry(
        "kama.random_product",
        partial(kama.random_product, KEY),
        {"k": 8, "d": 4},
        {"k": POS_INT, "d": Arg("int", (0, 1, -2))},
    ),
    Entry(
        "kama.givens_matrix",
        kama.givens_matrix,
        {"d": 4, "i": 0, "j": 2, "theta": 0.3},
        {"d": POS_INT, "i": Arg("int", (-1, 4)), "j": Arg("int", (0, 7)), "theta": Arg("real")},
    ),
    Entry(
        "kama.rotate_columns",
        kama.rotate_columns,
        {"M": np.eye(4), "i": 0, "j": 2, "theta": 0.3},
        {"M": ARRAY, "i": Arg("int", (-1, 4)), "j": Arg("int", (0, 7)), "theta": Arg("real")},
    ),
    Entry(
        "kama.theorem_3_bound",
        kama.theorem_3_bound,
        {"grad_norm_sq": 2.0, "d": 4, "curvature_bound": 1.0},
        {"grad_norm_sq": Arg("real", (-1.0,)), "d": Arg("int", (1, 0)), "curvature_bound": Arg("real", (0.0, -1.0))},
    ),
    Entry(
        "png.estimates",
        png.estimates,
        {"name": "relu", "W": W4, "x": X3[0], "y": Y3[0]},
        {"name": Arg("choice"), "W": BATCHED, "x": ARRAY, "y": ARRAY},
    ),
    Entry(
        "png.pair_estimates",
        png.pair_estimates,
        {"name": "sgn", "W": W4[None], "X": X3, "Y": Y3[:3]},
        {"name": Arg("choice"), "W": ARRAY, "X": ARRAY, "Y": ARRAY},
    ),
    Entry("png.gram_estimate", png.gram_estimate, {"name": "sgn", "W": W4, "X": X3}, {"W": ARRAY, "X": ARRAY}),
    Entry("png_moments.gram", png_moments.gram, {"name": "sgn", "X": X3}, {"X": ARRAY}),
    Entry(
        "png_moments.kernel",
        png_moments.kernel,
        {"name": "relu", "x": X3[0], "y": Y3[0]},
        {"name": Arg("choice"), "x": ARRAY, "y": ARRAY},
    ),
    Entry(
        "separation.network",
        separation.network,
        {"c": np.abs(X3), "Y": np.sign(Y3.T), "tau": 0.5},
        {"c": ARRAY, "Y": ARRAY, "tau": Arg("real", (-0.5,))},
    ),
    Entry(
        "separation.self_data",
        separation.self_data,
        {"n": 8, "d": 6, "a": 0.05, "b": 0.1, "c": 0.2, "j3": 3},
        {
            "n": POS_INT,
            "d": Arg("int", (2, 0)),
            "a": Arg("real"),
            "b": Arg("real", (-1.0,)),
            "c": Arg("real", (-1.0,)),
            "j3": Arg("int", (-1, 8)),
        },
    ),
    Entry(
        "separation.cross_data",
        separation.cross_data,
        {"n": 6, "d": 4, "a": 0.05, "j2": 1, "j3": 2},
        {"n": POS_INT, "d": Arg("int", (1, 0)), "a": Arg("real"), "j2": Arg("int", (-1, 6)), "j3": Arg("int", (-1, 6))},
    ),
    Entry(
        "separation.success_given_probabilities",
        separation.success_given_probabilities,
        {"p_b": 0.1, "p_bg": 0.3, "m": 5},
        {"p_b": Arg("real", (-0.1, 1.5)), "p_bg": Arg("real", (-0.1, 1.5)), "m": POS_INT},
    ),
    Entry(
        "separation.normalise",
        separation.normalise,
        {"scores": np.array([[1.0, 2.0, 0.5]]), "kind": "lin", "min_row_sum": 1e-12},
        {"scores": BATCHED, "kind": Arg("choice"), "min_row_sum": Arg("real", (-1.0,))},
    ),
    Entry(
        "separation.attention",
        partial(separation.attention, kind="exp"),
        {"A1": np.abs(X3), "A2": np.abs(Y3), "A3": np.abs(Y3), "X": np.eye(4), "V": np.eye(4)},
        {"A1": BATCHED, "A2": BATCHED, "A3": BATCHED, "X": ARRAY, "V": ARRAY},
    ),
    Entry(
        "separation.neuron_probabilities",
        separation.neuron_probabilities,
        {"good_rows": X3, "bad_rows": Y3, "tau": 0.1, "sigmas": np.sign(X5)},
        {"good_rows": ARRAY, "bad_rows": ARRAY, "tau": Arg("real"), "sigmas": ARRAY},
    ),
    Entry(
        "separation.network_batch",
        separation.network_batch,
        {"c": np.abs(X3)[None], "Y": np.sign(Y3.T)[None], "tau": 0.5, "multiplicity": np.array([[1.0, 2.0, 0.0]])},
        {"c": ARRAY, "Y": ARRAY, "tau": Arg("real"), "multiplicity": ARRAY},
    ),
    Entry(
        "separation.self_data_batch",
        separation.self_data_batch,
        {"n": 8, "d": 6, "a": 0.05, "b": 0.1, "c": 0.2, "j3": np.array([0, 3])},
        {"n": POS_INT, "d": Arg("int", (2, 0)), "a": Arg("real"), "b": Arg("real", (-1.0,)), "j3": ARRAY},
    ),
    Entry(
        "separation.cross_data_batch",
        separation.cross_data_batch,
        {"n": 6, "d": 4, "a": 0.05, "j2": np.array([1, 2]), "j3": np.array([2, 5])},
        {"n": POS_INT, "d": Arg("int", (1, 0)), "a": Arg("real"), "j2": ARRAY, "j3": ARRAY},
    ),
    Entry(
        "separation.simulate_toy_success",
        lambda n, m, trials, tau, mode: separation.simulate_toy_success(
            n, m, trials, np.random.default_rng(0), tau=tau, mode=mode
        ),
        {"n": 16, "m": 4, "trials": 8, "tau": 0.5, "mode": "uniform"},
        {"n": POS_INT, "m": POS_INT, "trials": POS_INT, "tau": Arg("real"), "mode": Arg("choice")},
    ),
    Entry(
        "separation.self_threshold",
        separation.self_threshold,
        {"n": 8, "c": 0.2},
        {"n": POS_INT, "c": Arg("real", (-1.0,))},
    ),
    Entry(
        "attention.softmax_attention",
        attention.softmax_attention,
        {"Q": Q, "K": K_, "V": V},
        {"Q": ARRAY, "K": ARRAY, "V": ARRAY},
    ),
    Entry(
        "attention.linear_attention",
        partial(attention.linear_attention, feature_map=partial(classic.positive_features, W4)),
        {"Q": Q, "K": K_, "V": V, "chunk_size": 4},
        {"Q": ARRAY, "K": ARRAY, "V": ARRAY, "chunk_size": OPTIONAL_POS_INT},
    ),
    Entry(
        "attention.favor_sharp_attention",
        attention.favor_sharp_attention,
        {"Q": Q, "K": K_, "V": V, "W": W4, "method": "sderf", "eps": 1e-8},
        {"Q": ARRAY, "K": ARRAY, "V": ARRAY, "W": ARRAY, "method": Arg("choice"), "eps": Arg("real", (-1e-3,))},
    ),
]


# --- mutations -------------------------------------------------------------------------------------------------------


def _with_entry(value, entry, rng):
    arr = np.array(value, dtype=np.float64, order="C")
    arr.reshape(-1)[rng.integers(arr.size)] = entry
    return arr


def array_mutations(value, arg: Arg, rng):
    """(label, mutated value, bad?) for an array argument."""
    arr = np.asarray(value, dtype=np.float64)
    return [
        ("complex", arr + 1j, not arg.complex_ok),
        ("bool", arr > 0, True),
        ("string", "abc", True),
        ("object", np.array(arr.tolist(), dtype=object), True),
        ("nan", _with_entry(arr, np.nan, rng), True),
        ("inf", _with_entry(arr, np.inf, rng), True),
        ("extra axis", arr[None], not arg.batched),
        ("int", np.round(arr).astype(np.int32), False),
    ]


def scalar_mutations(value, arg: Arg):
    common = [("string", "3", True), ("complex", 1 + 1j, True), ("None", None, not arg.optional), ("bool", True, True)]
    if arg.kind == "int":
        return [("non-integer", 2.5, True), *[(f"out of range {v}", v, True) for v in arg.invalid], *common]
    if arg.kind == "real":
        return [
            ("nan", float("nan"), True),
            ("inf", float("inf"), True),
            *[(f"out of range {v}", v, True) for v in arg.invalid],
            *common,
        ]
    return [("unknown", "no-such-choice", True), ("int", 3, True)]


def cases():
    rng = _rng()
    for entry in ENTRIES:
        for name, arg in entry.args.items():
            value = entry.valid[name]
            muts = array_mutations(value, arg, rng) if arg.kind == "array" else scalar_mutations(value, arg)
            for label, mutated, bad in muts:
                yield entry, name, label, mutated, bad


def _leaves(out):
    return (
        [np.asarray(leaf) for leaf in jax.tree.leaves(out)] if not isinstance(out, float | int) else [np.asarray(out)]
    )


def _names(message: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None


@functools.cache
def valid_output(entry_name: str) -> list[np.ndarray]:
    """The leaves of the entry point's valid call (computed once per test session)."""
    entry = next(e for e in ENTRIES if e.name == entry_name)
    return _leaves(entry.call(**entry.valid))


def reference_shapes(entry_name: str) -> list[tuple]:
    """The documented output: leaf shapes of the entry point's valid call."""
    return [leaf.shape for leaf in valid_output(entry_name)]


def outcome(entry: Entry, name: str, mutated, bad: bool) -> str:
    """'clear error', 'accepted' (legitimately), or a failure: 'silent accept', 'non-finite result', 'unclear error'."""
    reference = reference_shapes(entry.name)
    try:
        out = entry.call(**{**entry.valid, name: mutated})
    except ValueError as err:
        return "clear error" if _names(str(err), name) else "unclear error"
    except Exception:  # noqa: BLE001  (any other exception type is the failure being counted)
        return "unclear error"
    leaves = _leaves(out)
    finite = all(np.all(np.isfinite(leaf)) for leaf in leaves if np.issubdtype(leaf.dtype, np.number))
    if not finite:
        return "non-finite result"
    if bad:
        return "silent accept"
    arg = entry.args[name]
    same_shape = [leaf.shape for leaf in leaves] == reference
    return "accepted" if (same_shape or arg.batched or len(leaves) != len(reference)) else "silent accept"


CASES = list(cases())


def test_every_valid_call_returns_finite_values():
    for entry in ENTRIES:
        for leaf in valid_output(entry.name):
            assert np.all(np.isfinite(leaf)), entry.name


def test_every_bad_argument_gets_a_value_error_naming_it():
    failures = []
    for entry, name, label, mutated, bad in CASES:
        result = outcome(entry, name, mutated, bad)
        if result not in ("clear error", "accepted"):
            failures.append(f"{entry.name}({name} ← {label}): {result}")
    assert not failures, f"{len(failures)} of {len(CASES)} calls:\n" + "\n".join(failures)


if __name__ == "__main__":
    import sys

    jax.config.update("jax_enable_x64", True)
    counts = Counter()
    for entry, name, label, mutated, bad in CASES:
        result = outcome(entry, name, mutated, bad)
        counts[result] += 1
        if result not in ("clear error", "accepted") and "-v" in sys.argv:
            print(f"{entry.name}({name} ← {label}): {result}")
    print(f"{len(CASES)} calls over {len(ENTRIES)} entry points:", dict(counts))
