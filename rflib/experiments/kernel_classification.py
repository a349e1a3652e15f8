"""Kernel classification with random features (FAVOR# §5.2, App. B.2; also CRT's protocol).

The predictor is an unnormalised kernel sum: class scores r*(u) = Σ_i K(σu, σu_i) r_i over the training objects
u_i with one-hot labels r_i, K the Gaussian kernel K(x, y) = exp(−‖x − y‖²/2), prediction argmax r*. With random
features φ⁽¹⁾, φ⁽²⁾ of the *softmax* kernel, K(x, y) = e^{−‖x‖²/2} exp(xᵀy) e^{−‖y‖²/2}; the query-side factor is a
positive per-row constant and cannot change the argmax, so only the training side carries it. The training sum
Sᵀ R (M × classes) is precomputed once, O(nMd), and each query then costs O(M(d + classes)). Positive features'
sums are formed in log space per feature (each feature's largest training term scaled to 1, each query's largest
weighted term to 1), so no query's scores can all underflow; terms more than ≈ 745 nats below their feature's
largest still do, far below the winning score.

Inputs here are already scaled by σ. All accuracies are computed for a stack of random draws (seeds), one draw at
a time.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from rflib import _checks, projections
from rflib.experiments import datasets
from rflib.experiments.progress_bars import bar
from rflib.features import dense_exp
from rflib.features.dense_exp import DERF


def split_indices(rng: np.random.Generator, n: int, fractions=(0.9, 0.05, 0.05)) -> tuple[np.ndarray, ...]:
    """Shuffle range(n) and cut it into train / validation / test index arrays (paper: 90 % / 5 % / 5 %).

    Every part gets at least one object; the test part takes what remains after the first two.
    """
    n = _checks.positive_int("n", n)
    if len(fractions) != 3 or not np.isclose(sum(fractions), 1.0) or min(fractions) <= 0:
        raise ValueError(f"fractions must be three positive numbers summing to 1, got {fractions}")
    if n < 3:
        raise ValueError(f"need at least 3 objects to split into train/validation/test, got {n}")
    order = rng.permutation(n)
    n_val = max(1, round(fractions[1] * n))
    n_test = max(1, round(fractions[2] * n))
    n_train = n - n_val - n_test
    return order[:n_train], order[n_train : n_train + n_val], order[n_train + n_val :]


def _check_problem(X_train, onehot, X_query, labels):
    X_train = _checks.points("X_train", X_train)
    X_query = _checks.points("X_query", X_query, X_train.shape[1])
    onehot = _checks.finite_array("onehot", onehot, 2)
    if onehot.shape[0] != X_train.shape[0]:
        raise ValueError(f"onehot needs one row per training object ({X_train.shape[0]}), got {onehot.shape}")
    labels = jnp.asarray(labels)
    if labels.shape != (X_query.shape[0],):
        raise ValueError(f"labels needs one entry per query ({X_query.shape[0]}), got shape {labels.shape}")
    return X_train, onehot, X_query, labels


def _query_sets(query_sets, form: str) -> tuple:
    """``query_sets`` as a non-empty tuple of tuples shaped like ``form`` (e.g. "(X_query, labels)"), or a
    ValueError naming it."""
    arity = form.count(",") + 1
    if not isinstance(query_sets, list | tuple) or not query_sets:
        raise ValueError(f"query_sets must be a non-empty tuple of {form} tuples, got {query_sets!r:.60}")
    for entry in query_sets:
        if not isinstance(entry, list | tuple) or len(entry) != arity:
            raise ValueError(f"each entry of query_sets must be a tuple {form}, got {entry!r:.60}")
    return tuple(tuple(entry) for entry in query_sets)


def exact_accuracy(X_train, onehot, X_query, labels) -> float:
    """Accuracy of argmax_c Σ_i exp(−‖x − u_i‖²/2) r_ic, computed per row in log space (no underflow).

    X_train: (n, d), onehot: (n, C), X_query: (q, d), labels: (q,) ints.
    """
    X_train, onehot, X_query, labels = _check_problem(X_train, onehot, X_query, labels)
    return float(_exact_accuracy(X_train, onehot, X_query, labels))


@jax.jit
def _exact_accuracy(X_train, onehot, X_query, labels):
    sq = jnp.sum(X_query**2, 1)[:, None] + jnp.sum(X_train**2, 1)[None, :] - 2.0 * X_query @ X_train.T
    log_k = -0.5 * jnp.maximum(sq, 0.0)
    scores = jnp.exp(log_k - jnp.max(log_k, axis=1, keepdims=True)) @ onehot
    return jnp.mean(jnp.argmax(scores, axis=1) == labels)


def derf_accuracies(params_query: DERF, params_train: DERF, Ws, X_train, onehot, X_query, labels) -> jax.Array:
    """Accuracies of the DERF kernel classifier for each projection matrix in ``Ws``: (S, M, d) → (S,).

    The query side uses f⁽¹⁾ of ``params_query``, the training side f⁽²⁾ of ``params_train``; pass the same
    parameters twice (fitted on queries 𝒳 = query objects and keys 𝒴 = training objects, as in the paper).
    Ties in the argmax go to the lowest class index.
    """
    return derf_accuracies_per_query_set(params_train, Ws, X_train, onehot, ((params_query, X_query, labels),))[0]


def derf_accuracies_per_query_set(params_train: DERF, Ws, X_train, onehot, query_sets, *, per_object: bool = False):
    """:func:`derf_accuracies` for several query sets ((params_query, X_query, labels), …) that share the training
    side: its features and class sums are computed once per draw. Returns (n_sets, S), or with ``per_object`` a
    tuple of one (S, q) array per set: 1.0 where the draw classifies the query correctly, else 0.0."""
    query_sets = _query_sets(query_sets, "(params_query, X_query, labels)")
    checked = [_check_problem(X_train, onehot, Xq, labels) for _, Xq, labels in query_sets]
    X_train, onehot = checked[0][:2]
    Ws = _checks.finite_array("Ws", Ws, 3)
    queries = tuple(
        (params, Xq, labels) for (params, _, _), (_, _, Xq, labels) in zip(query_sets, checked, strict=True)
    )
    return _per_set(_derf_correct(params_train, Ws, X_train, onehot, queries), per_object)


def _per_set(correct: tuple, per_object: bool):
    """(S, q) correctness per query set → itself (``per_object``) or the (n_sets, S) accuracies."""
    return correct if per_object else jnp.stack([jnp.mean(c, axis=1) for c in correct])


def _class_score_logs(train_log_features, onehot):
    """Per-feature stabilised class sums of the training features: (n, M) logs, (n, C) one-hot → (stabiliser (M,),
    sums (M, C)) with Σ_{i ∈ c} e^{log f_im} = e^{stabiliser_m} · sums_mc.

    Each feature's stabiliser is its largest training log-feature, so every column's largest term is exactly 1 and no
    column underflows as a whole, however far apart the features' magnitudes lie (FAVOR#'s fitted features span
    more than float64's range at large σ). This is the stabilisation of bidirectional linear attention
    (``rflib.attention``), with the one-hot labels as values; calling ``attention.linear_attention`` instead gives
    the same accuracies but took 10–15 % longer per query set (its denominator and normalisation) and 65 % longer
    where two query sets share this training side, which it would recompute (letter, M = 128, 50 draws)."""
    stabiliser = jnp.max(train_log_features, axis=0)
    return stabiliser, jnp.exp(train_log_features - stabiliser[None, :]).T @ onehot


def _log_space_predictions(query_log_features, stabiliser, class_sums):
    """argmax_c Σ_m e^{log f⁽¹⁾_qm + stabiliser_m} · sums_mc, stabilised per query: (q, M), (M,), (M, C) → (q,).

    The query's largest term has weight exactly 1 and a column sum ≥ 1 in some class, so some class's score is ≥ 1:
    the scores cannot all underflow (an all-zero row would send the argmax to the first class)."""
    log_terms = query_log_features + stabiliser[None, :]
    weights = jnp.exp(log_terms - jnp.max(log_terms, axis=1, keepdims=True))
    return jnp.argmax(weights @ class_sums, axis=1)


# _derf_correct and _trig_correct map the draws one at a time (``lax.map`` without ``batch_size``), keeping
# one draw's features at a time. Vmapped batches of 10 draws turned each draw's products into batched products,
# which XLA:CPU ran 2.5–2.6× slower (2026-11-29, one DERF call on letter, M = 128, 50 draws, both query sets:
# 1.56–1.66 s → 0.62–0.65 s; TrigRF 2.1–3.2×; 1.5–1.8× on smaller sets), with the same accuracies in every case
# compared.
@jax.jit
def _derf_correct(params_train, Ws, X_train, onehot, queries):
    def one(W):
        row_log_scale, logit = dense_exp.logits(params_train, W, X_train, 2)
        gaussian = row_log_scale - 0.5 * jnp.sum(X_train**2, axis=1)  # Gaussian kernel: e^{−‖u‖²/2}
        stabiliser, class_sums = _class_score_logs(gaussian[:, None] + logit, onehot)
        accuracies = []
        for params_query, X_query, labels in queries:
            _, query_logit = dense_exp.logits(params_query, W, X_query, 1)  # per-row factors cannot move the argmax
            predictions = _log_space_predictions(query_logit, stabiliser, class_sums)
            accuracies.append((predictions == labels).astype(X_train.dtype))
        return tuple(accuracies)

    return jax.lax.map(one, Ws)


def trig_accuracies(Ws, thetas, X_train, onehot, X_query, labels) -> jax.Array:
    """Accuracies with TrigRF Gaussian-kernel features √2 cos(ωᵀx + θ) (eqs 5–7, sign corrected; the e^{±‖x‖²/2}
    factors cancel against the Gaussian kernel's). Ws: (S, M, d), thetas: (S, M) → (S,)."""
    return trig_accuracies_per_query_set(Ws, thetas, X_train, onehot, ((X_query, labels),))[0]


def trig_accuracies_per_query_set(Ws, thetas, X_train, onehot, query_sets, *, per_object: bool = False):
    """:func:`trig_accuracies` for several query sets ((X_query, labels), …): the training side's features and class
    sums are computed once per draw. Returns (n_sets, S), or with ``per_object`` a tuple of one (S, q) array of
    per-query correctness (1.0 / 0.0) per set."""
    query_sets = _query_sets(query_sets, "(X_query, labels)")
    checked = [_check_problem(X_train, onehot, Xq, labels) for Xq, labels in query_sets]
    X_train, onehot = checked[0][:2]
    Ws = _checks.finite_array("Ws", Ws, 3)
    thetas = _checks.finite_array("thetas", thetas, 2)
    if thetas.shape != Ws.shape[:2]:
        raise ValueError(f"thetas must have shape {Ws.shape[:2]} (one phase per ω), got {thetas.shape}")
    queries = tuple((Xq, labels) for _, _, Xq, labels in checked)
    return _per_set(_trig_correct(Ws, thetas, X_train, onehot, queries), per_object)


@jax.jit
def _trig_correct(Ws, thetas, X_train, onehot, queries):
    def one(W, theta):
        class_sums = jnp.cos(X_train @ W.T + theta).T @ onehot
        return tuple(
            (jnp.argmax(jnp.cos(X_query @ W.T + theta) @ class_sums, axis=1) == labels).astype(X_train.dtype)
            for X_query, labels in queries
        )

    return jax.lax.map(lambda args: one(*args), (Ws, thetas))


def best_sigma_index(validation_accuracy) -> int:
    """Index of the σ with the highest mean validation accuracy; ties go to the middle of the tied σ (the lower
    median of their indices). With validation sets of a few objects many σ tie, and the smallest of them can be the
    degenerate one where every kernel value is ≈ 1 and the classifier predicts the majority class."""
    acc = np.asarray(validation_accuracy, dtype=np.float64)
    if acc.ndim != 1 or acc.size == 0 or not np.all(np.isfinite(acc)):
        raise ValueError(f"validation_accuracy must be a finite non-empty 1-D array, got shape {acc.shape}")
    tied = np.flatnonzero(acc >= acc.max() - 1e-12)
    return int(tied[(tied.size - 1) // 2])


def _equal_parameters(a: DERF, b: DERF) -> bool:
    """Whether two fitted DERFs are equal entry for entry."""
    return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


# --- the FAVOR# Fig 3 protocol: the σ sweep of one split, and its summaries ---------------------------


def split_accuracies(X, y, split_rng: np.random.Generator, draw_key, *, sigmas, Ms, seeds: int, methods) -> dict:
    """Mean validation and test accuracy over ``seeds`` random-feature draws, per (method, M, σ), plus the exact
    Gaussian-kernel classifier per σ, on one 90/5/5 split (FAVOR# §5.2, App. B.2).

    The split is :func:`split_indices` of ``split_rng``. For each σ (inputs scaled by σ) every DERF method is fitted
    on (validation, train) and on (test, train) (𝒳 = evaluated objects, 𝒴 = training objects); for each M,
    ``jax.random.split(draw_key(σ index, M))`` gives the key of ``seeds`` sign-fixed orthogonal (M, d) stacks
    (``projections.orthogonal_batch``), shared by every method, and the key of TrigRF's phases θ ~ Unif[0, 2π].

    Args:
      X: (n, d) features; y: (n,) integer labels.
      draw_key: (σ index, M) → JAX key.
      sigmas: (n_σ,) input scales; Ms: feature counts (n_M,); methods: ``"trig"`` and/or ``dense_exp.METHODS``.

    Returns:
      ``{"exact": (2, n_σ), method: (n_M, 2, n_σ), "test_draws": {method: (n_M, n_σ, seeds)},
      "test_objects": {method: (n_M, n_σ, n_test)}}``, axis "2" = (validation, test) mean accuracies;
      ``test_draws`` holds every draw's test accuracy, ``test_objects`` every test object's accuracy over the draws
      (the two margins of the draws × objects table, for :func:`paired_gap`'s standard errors).
    """
    X = _checks.finite_numpy("X", X, 2)
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y needs one label per row of X ({X.shape[0]}), got shape {y.shape}")
    seeds = _checks.positive_int("seeds", seeds)
    for m in methods:
        _checks.one_of("methods", m, ("trig", *dense_exp.METHODS))
    for M in Ms:
        _checks.positive_int("Ms", M)
    sigmas = _checks.finite_numpy("sigmas", sigmas, 1)
    train, val, test = split_indices(split_rng, len(X))
    classes = int(y.max()) + 1
    onehot = np.eye(classes)[y[train]]
    out = {"exact": np.zeros((2, len(sigmas))), "test_draws": {}, "test_objects": {}}
    for m in methods:
        out[m] = np.zeros((len(Ms), 2, len(sigmas)))
        out["test_draws"][m] = np.zeros((len(Ms), len(sigmas), seeds))
        out["test_objects"][m] = np.zeros((len(Ms), len(sigmas), len(test)))
    d = X.shape[1]
    for si, sigma in enumerate(sigmas):
        Xtr, Xva, Xte = sigma * X[train], sigma * X[val], sigma * X[test]
        out["exact"][:, si] = [exact_accuracy(Xtr, onehot, Xq, y[idx]) for Xq, idx in ((Xva, val), (Xte, test))]
        params = {m: (dense_exp.fit(m, Xva, Xtr), dense_exp.fit(m, Xte, Xtr)) for m in methods if m != "trig"}
        shared = {m: _equal_parameters(*fits) for m, fits in params.items()}  # PosRF's do not depend on the data
        for mi, M in enumerate(Ms):
            k_w, k_t = jax.random.split(draw_key(si, M))
            Ws = projections.orthogonal_batch(k_w, seeds, M, d)
            thetas = jax.random.uniform(k_t, (seeds, M), maxval=2 * np.pi)
            parts = ((Xva, y[val]), (Xte, y[test]))
            for m in methods:
                if m == "trig":
                    correct = trig_accuracies_per_query_set(Ws, thetas, Xtr, onehot, parts, per_object=True)
                elif shared[m]:  # one training side for both parts
                    p = params[m][0]
                    with_params = tuple((p, *part) for part in parts)
                    correct = derf_accuracies_per_query_set(p, Ws, Xtr, onehot, with_params, per_object=True)
                else:
                    correct = [
                        derf_accuracies_per_query_set(p, Ws, Xtr, onehot, ((p, *part),), per_object=True)[0]
                        for p, part in zip(params[m], parts, strict=True)
                    ]
                acc = np.stack([np.mean(np.asarray(c), axis=1) for c in correct])  # (2, seeds)
                out[m][mi, :, si] = np.mean(acc, axis=1)
                out["test_draws"][m][mi, si] = acc[1]
                out["test_objects"][m][mi, si] = np.mean(np.asarray(correct[1]), axis=0)
    return out


def accuracy_sweep(
    names, splits: int, split_rng, draw_key, *, sigmas, Ms, seeds: int, methods, progress: bool = False
) -> dict:
    """:func:`split_accuracies` for every dataset of ``names`` (loaded by
    :func:`rflib.experiments.datasets.load_classification`) and split index < ``splits``: split ``s`` of dataset
    ``name`` uses ``split_rng(name, s)`` and ``draw_key(name, s, σ index, M)``. ``progress``: a bar over each
    dataset's splits.

    Returns:
      (name, split) → that split's :func:`split_accuracies` dict.
    """
    splits = _checks.positive_int("splits", splits)
    results = {}
    for name in names:
        X, y = datasets.load_classification(name)
        for split in bar(range(splits), name, progress):
            results[name, split] = split_accuracies(
                X,
                y,
                split_rng(name, split),
                partial(draw_key, name, split),
                sigmas=sigmas,
                Ms=Ms,
                seeds=seeds,
                methods=methods,
            )
    return results


def accuracy_at_validated_sigma(curve, sigmas) -> tuple[float, float]:
    """curve: (2, n_σ) mean (validation, test) accuracy → (test accuracy at the validated σ, that σ); the σ is
    :func:`best_sigma_index` of the validation row (ties to the middle tied σ)."""
    curve = np.asarray(curve)
    if curve.ndim != 2 or curve.shape[0] != 2 or curve.shape[1] != len(sigmas):
        raise ValueError(f"curve must have shape (2, {len(sigmas)}) (validation, test per σ), got {curve.shape}")
    i = best_sigma_index(curve[0])
    return curve[1, i], sigmas[i]


def accuracy_table(results: dict, names, split_ids, methods, sigmas) -> dict:
    """Fig 3's numbers: {dataset: {method: (n_M,) mean test accuracy (%), "exact": float}}, the test accuracy at
    the validated σ (:func:`accuracy_at_validated_sigma`, per method, M and split) averaged over ``split_ids``.
    ``results`` from :func:`accuracy_sweep`."""
    split_ids = _split_ids(split_ids)
    table = {}
    for name in names:
        n_M = results[name, split_ids[0]][methods[0]].shape[0]
        row = {
            m: np.mean(
                [
                    [accuracy_at_validated_sigma(results[name, s][m][mi], sigmas)[0] for mi in range(n_M)]
                    for s in split_ids
                ],
                axis=0,
            )
            * 100
            for m in methods
        }
        row["exact"] = (
            np.mean([accuracy_at_validated_sigma(results[name, s]["exact"], sigmas)[0] for s in split_ids]) * 100
        )
        table[name] = row
    return table


def wins(table: dict, candidates, *, method: str = "sderf") -> tuple[int, int]:
    """How many (dataset, M) cells of an :func:`accuracy_table` ``method`` wins (ties within 1e-9 count as wins)
    among ``candidates``, and the number of cells."""
    count = total = 0
    for row in table.values():
        for mi in range(len(row[method])):
            total += 1
            count += row[method][mi] >= max(row[m][mi] for m in candidates) - 1e-9
    return count, total


def average_curve(table: dict, method: str) -> np.ndarray:
    """Fig 3's last panel: ``method``'s accuracy (%) averaged over the datasets of an :func:`accuracy_table`,
    (n_M,) (a float for ``"exact"``)."""
    return np.mean([row[method] for row in table.values()], axis=0)


def paired_gap(results: dict, names, split_ids, a: str, b: str, *, objects: bool = True) -> dict:
    """Test-accuracy gap (percentage points) of method ``a`` over ``b`` in each (dataset, M) cell, each method at
    its own validated σ, with its standard error: :func:`mean_paired_gap` of that one cell.

    Returns {(dataset, M index): (gap, se)} in points. ``results`` from :func:`accuracy_sweep`.
    """
    split_ids = _split_ids(split_ids)
    return {
        (name, mi): mean_paired_gap(results, [(name, mi)], split_ids, a, b, objects=objects)
        for name in names
        for mi in range(results[name, split_ids[0]][a].shape[0])
    }


def mean_paired_gap(results: dict, cells, split_ids, a: str, b: str, *, objects: bool = True) -> tuple[float, float]:
    """Test-accuracy gap (points) of method ``a`` over ``b`` averaged over ``cells`` ((dataset, M index) pairs), each
    method at its own validated σ, and its standard error.

    In a cell, the paired difference d(i, r) = correct_a(i, r) − correct_b(i, r) of test object i and draw r (the
    same projection stacks when the two validated σ coincide, independent ones otherwise) is a crossed table: draws
    and test objects are two independent samples. The gap is its mean; its variance is estimated from the table's
    two margins, var(draw means)/R + var(object means)/n (ddof 1 each), the usual conservative estimator for a
    crossed design (it counts the interaction term twice). ``objects=False`` keeps only the draw term: the
    uncertainty with the test objects held fixed. Across cells, draws are independent (each (σ, M) has its own
    keys); cells of one dataset share its test objects, so their object means are summed per object before the
    variance is taken. Splits are averaged and taken as independent.

    ``results`` from :func:`accuracy_sweep`. Returns (gap, se) in points.
    """
    split_ids = _split_ids(split_ids)
    cells = list(cells)
    if not cells:
        raise ValueError("cells must name at least one (dataset, M index) pair")
    for name, _ in cells:
        for s in split_ids:
            if (name, s) not in results:
                raise ValueError(f"cells names data set {name!r}, but results holds no split {s!r} of it")
            for arg, method in (("a", a), ("b", b)):
                if method not in results[name, s]["test_draws"]:
                    known = sorted(results[name, s]["test_draws"])
                    raise ValueError(f"{arg} must be one of the methods in results {known}, got {method!r}")
    means, variances = [], []
    for s in split_ids:
        gap = draw_var = 0.0
        per_object: dict = {}
        for name, mi in cells:
            r = results[name, s]
            ia, ib = best_sigma_index(r[a][mi, 0]), best_sigma_index(r[b][mi, 0])
            by_draw = 100 * (r["test_draws"][a][mi, ia] - r["test_draws"][b][mi, ib])
            gap += float(np.mean(by_draw))
            draw_var += _variance_of_mean(by_draw)
            if objects:
                by_object = 100 * (r["test_objects"][a][mi, ia] - r["test_objects"][b][mi, ib])
                per_object[name] = per_object.get(name, 0.0) + by_object
        object_var = sum(_variance_of_mean(v) for v in per_object.values())
        means.append(gap / len(cells))
        variances.append((draw_var + object_var) / len(cells) ** 2)
    return float(np.mean(means)), float(np.sqrt(np.sum(variances)) / len(split_ids))


def _split_ids(split_ids) -> list:
    split_ids = list(split_ids)
    if not split_ids:
        raise ValueError("split_ids must name at least one split")
    return split_ids


def _variance_of_mean(sample) -> float:
    """Estimated variance of the mean of ``sample`` (ddof 1); inf for a single value."""
    sample = np.asarray(sample)
    return float(np.var(sample, ddof=1) / sample.size) if sample.size > 1 else np.inf


def shortfall_decomposition(results: dict, names, split_ids, method: str, sigmas) -> dict:
    """Why a random-feature classifier falls short of the exact kernel, per (dataset, M): its test-accuracy
    shortfall from the exact classifier at the exact one's validated σ, split into a **bandwidth** part (the exact
    classifier's own test accuracy at the σ the method validated, minus at its best σ: what the σ the method could
    afford costs) and an **estimator** part (the exact classifier minus the method's mean, both at the method's
    σ: what the random-feature noise costs there). The two add up to the shortfall exactly.

    Returns {(dataset, M index): {"bandwidth": points, "estimator": points, "sigma": the method's validated σ,
    "exact sigma": the exact classifier's}}, each averaged over ``split_ids`` (σ: geometric mean). ``results`` from
    :func:`accuracy_sweep`.
    """
    split_ids = _split_ids(split_ids)
    sigmas = _checks.finite_numpy("sigmas", sigmas, 1)
    _checks.one_of("method", method, ("trig", *dense_exp.METHODS))
    out = {}
    for name in names:
        n_M = results[name, split_ids[0]][method].shape[0]
        for mi in range(n_M):
            parts = []
            for s in split_ids:
                r = results[name, s]
                i_exact = best_sigma_index(r["exact"][0])
                i_method = best_sigma_index(r[method][mi, 0])
                exact_test = r["exact"][1]
                parts.append(
                    (
                        100 * (exact_test[i_exact] - exact_test[i_method]),
                        100 * (exact_test[i_method] - r[method][mi, 1, i_method]),
                        np.log(sigmas[i_method]),
                        np.log(sigmas[i_exact]),
                    )
                )
            bandwidth, estimator, log_sigma, log_exact = np.mean(parts, axis=0)
            out[name, mi] = {
                "bandwidth": float(bandwidth),
                "estimator": float(estimator),
                "sigma": float(np.exp(log_sigma)),
                "exact sigma": float(np.exp(log_exact)),
            }
    return out
