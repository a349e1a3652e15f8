"""The distinguishing constructions of "Why softmax attention outperforms linear attention" (Deng, Song, Yuan, Zhou).

Datasets D0/D1 and the fixed-weight networks F_exp (softmax attention) and F_lin (linear attention: raw scores
normalised by their row sum) of the toy softmax-regression model (§3–5), self-attention with X = QKᵀ = 1_{d×d}
(App. D, Thm 6.2) or X = I_d (App. E), and cross-attention (App. F; Def F.1 prints "second to d − 1 columns", which
leaves the last column undefined: columns 2..d, 1-based, is the reading that reproduces Lemma F.2). Everything is
float64 numpy; softmax subtracts the row max.

Network (Defs 3.5/3.6, C.2/C.6): F = φ(Σ_{j0} Σ_l φ_τ(⟨c(j0), y_l⟩)) with Rademacher readouts y_l; F > 0 iff some
neuron's score exceeds τ (strictly). Conventions: natural logs, s = √(log n), 0-based indices.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np

from rflib import _checks

KINDS = ("exp", "lin")


# --- parameter checks -----------------------------------------------------------------------------------------------


def _check_self(n: int, d: int, b: float, c: float) -> tuple[int, int]:
    n, d = _checks.positive_int("n", n), _checks.positive_int("d", d)
    if d < 3:
        raise ValueError(
            f"self-attention data need d ≥ 3 (a spike column, d − 2 identity columns, a constant one), got {d}"
        )
    if n % (d - 2):
        raise ValueError(f"n must be a multiple of d − 2 (Def D.1 stacks I_(d−2) t times), got n={n}, d={d}")
    _checks.real_number("b", b, low=0.0)
    _checks.real_number("c", c, low=0.0)
    return n, d


def _check_cross(n: int, d: int) -> tuple[int, int]:
    n, d = _checks.positive_int("n", n), _checks.positive_int("d", d)
    if d < 2:
        raise ValueError(f"cross-attention data need d ≥ 2, got {d}")
    if n % (d - 1):
        raise ValueError(f"n must be a multiple of d − 1 (Def F.1 stacks I_(d−1) t times), got n={n}, d={d}")
    return n, d


def _check_index(name: str, j: int, n: int) -> int:
    return _checks.integer(name, j, low=0, high=n - 1)


def _check_indices(name: str, j, n: int) -> np.ndarray:
    """``j`` as a 1-d int array of row indices in [0, n): integer arrays, or floats that are whole numbers (never
    bools, never a float truncated: [2.9] is refused, not read as 2)."""
    arr = np.asarray(j)
    whole_floats = np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or whole_floats):
        raise ValueError(f"{name} must hold integer row indices, got dtype {arr.dtype}")
    arr = arr.astype(int)
    if arr.ndim != 1 or np.any((arr < 0) | (arr >= n)):
        raise ValueError(f"{name} must be a 1-d array of row indices in [0, {n})")
    return arr


# --- datasets -------------------------------------------------------------------------------------------------------


def self_data(n: int, d: int, a: float, b: float, c: float, j3: int) -> np.ndarray:
    """A ∈ D0 (a = a0) or D1 (a = a1) of Def D.1: (n, d).

    Column 0 = a·s·e_{j3}; columns 1..d−2 = t stacked copies of I_{d−2} times b·s (row j has its 1 at column
    1 + j mod (d − 2)); column d−1 = c·s·1_n.
    """
    n, d = _check_self(n, d, b, c)
    j3 = _check_index("j3", j3, n)
    a = _checks.real_number("a", a)
    s = math.sqrt(math.log(n))
    A = np.zeros((n, d))
    A[j3, 0] = a * s
    A[np.arange(n), 1 + np.arange(n) % (d - 2)] = b * s
    A[:, d - 1] = c * s
    return A


def cross_data(n: int, d: int, a: float, j2: int, j3: int) -> tuple[np.ndarray, np.ndarray]:
    """(A1, A2) of Def F.1 with the E8 correction: A1 (queries) has a·log n·e_{j2} in column 0 and log n in columns
    1..d−1; A2 = A3 (keys = values) has e_{j3} in column 0 and t stacked copies of I_{d−1} in columns 1..d−1."""
    n, d = _check_cross(n, d)
    j2, j3 = _check_index("j2", j2, n), _check_index("j3", j3, n)
    a = _checks.real_number("a", a)
    L = math.log(n)
    A1 = np.full((n, d), L)
    A1[:, 0] = 0.0
    A1[j2, 0] = a * L
    A2 = np.zeros((n, d))
    A2[j3, 0] = 1.0
    A2[np.arange(n), 1 + np.arange(n) % (d - 1)] = 1.0
    return A1, A2


def toy_logits(rng: np.random.Generator, n: int, cls: int, *, mode: str = "uniform") -> tuple[np.ndarray, int]:
    """u = Ax for the toy model (Def 3.8): D0 entries in [log n, 1.4 log n]; D1 adds one entry 4 log n.

    ``mode="uniform"``: iid Uniform[log n, 1.4 log n] (our assumption; the paper does not say how to sample);
    ``"adversarial"``: ⌈n^0.6⌉ entries at 1.4 log n, the rest at log n (maximises Σ f_exp²). Returns (u, j) with j
    the spike index (−1 for D0).
    """
    n = _checks.positive_int("n", n)
    if cls not in (0, 1):
        raise ValueError(f"cls must be 0 or 1, got {cls}")
    L = math.log(n)
    if mode == "uniform":
        u = rng.uniform(L, 1.4 * L, size=n)
    elif mode == "adversarial":
        u = np.full(n, L)
        u[rng.permutation(n)[: math.ceil(n**0.6)]] = 1.4 * L
    else:
        raise ValueError(f"mode must be 'uniform' or 'adversarial', got {mode!r}")
    j = -1
    if cls == 1:
        j = int(rng.integers(n))
        u[j] = 4 * L
    return u, j


def qk_matrix(kind, d: int) -> np.ndarray:
    """X = QKᵀ: ``"ones"`` = 1_{d×d} (App. D), ``"identity"`` = I_d (Apps. E, F), or an explicit (d, d) matrix
    (e.g. :func:`spike_qk`)."""
    if not isinstance(kind, str):
        X = np.asarray(kind, float)
        if X.shape != (d, d) or not np.all(np.isfinite(X)):
            raise ValueError(f"an explicit X must be a finite ({d}, {d}) matrix, got shape {X.shape}")
        return X
    if kind == "ones":
        return np.ones((d, d))
    if kind == "identity":
        return np.eye(d)
    raise ValueError(f"X must be 'ones' or 'identity', got {kind!r}")


def spike_qk(n: int, d: int) -> np.ndarray:
    """X′ = e₀e₀ᵀ + n⁻²·1_{d×d}: a query–key matrix with which *linear* attention separates the self-attention
    classes (notebook 10 §2). The spike column dominates the scores; the small constant keeps every row sum positive."""
    X = np.full((d, d), float(n) ** -2)
    X[0, 0] += 1.0
    return X


# --- attention and networks -----------------------------------------------------------------------------------------


def normalise(scores, kind: str, *, min_row_sum: float = 1e-12) -> np.ndarray:
    """Attention weights from scores (…, n): softmax with the row max subtracted, or linear (scores / row sum).

    Linear attention is defined only when every row sum is nonzero; a row sum below ``min_row_sum`` in magnitude
    raises instead of returning inf/NaN.
    """
    S = _checks.finite_numpy("scores", scores)
    min_row_sum = _checks.real_number("min_row_sum", min_row_sum, low=0.0)
    if kind == "exp":
        E = np.exp(S - S.max(axis=-1, keepdims=True))
        return E / E.sum(axis=-1, keepdims=True)
    if kind == "lin":
        total = S.sum(axis=-1, keepdims=True)
        if np.any(np.abs(total) < min_row_sum):
            raise ValueError("linear attention needs nonzero row sums of the scores (a row sums to ~0)")
        return S / total
    raise ValueError(f"kind must be 'exp' or 'lin', got {kind!r}")


def attention(A1, A2, A3, X, V, kind: str) -> np.ndarray:
    """c = D⁻¹ u(A1 X A2ᵀ) A3 V (Eq. 1 / App. C), one row per query.  A1: (…, n, d), A2, A3: (…, n', d), X, V: (d, d)
    → (…, n, d); leading axes (e.g. trials) broadcast."""
    A1, A2, A3 = (_checks.finite_numpy(name, A) for name, A in {"A1": A1, "A2": A2, "A3": A3}.items())
    X, V = _checks.finite_numpy("X", X, 2), _checks.finite_numpy("V", V, 2)
    return _attention(A1, A2, A3, X, V, kind)


def _attention(A1, A2, A3, X, V, kind: str) -> np.ndarray:
    """:func:`attention` on checked float64 arrays (the trial loop of :func:`success_indicators` checks once)."""
    scores = A1 @ X @ np.swapaxes(A2, -1, -2)
    return normalise(scores, kind) @ A3 @ V


def scores_by_tensor_trick(A1, A2, X) -> np.ndarray:
    """S = reshape((A1 ⊗ A2) vec(X), (n, n)) with row-major vec (Fact A.1, Claims C.3/C.5); equals A1 X A2ᵀ."""
    A1, A2 = np.asarray(A1, float), np.asarray(A2, float)
    return (np.kron(A1, A2) @ np.asarray(X, float).reshape(-1)).reshape(A1.shape[0], A2.shape[0])


class Output(NamedTuple):
    """F's value and its margin max_{j0, l} ⟨c(j0), y_l⟩ − τ (F > 0 iff margin > 0)."""

    value: float
    margin: float


def network(c, Y, tau: float) -> Output:
    """F = φ(Σ_{j0,l} φ_τ(⟨c(j0), y_l⟩)).  c: (n, d) attention rows (or (d,) for the toy); Y: (d, m) readouts."""
    c = np.atleast_2d(_checks.finite_numpy("c", c, (1, 2)))
    Y = _checks.finite_numpy("Y", Y, 2)
    if Y.shape[0] != c.shape[1]:
        raise ValueError(f"Y must have shape (d, m) with d = {c.shape[1]} (the width of c), got {Y.shape}")
    tau = _checks.real_number("tau", tau, low=0.0)
    scores = c @ Y
    return Output(float(np.maximum(scores - tau, 0.0).sum()), float(scores.max() - tau))


def threshold(case: str, params: dict) -> float:
    """τ for ``case``: ``params["tau"]`` if given, else (c + 0.1)√log n for "self" (Thm 6.2) and 0.9 for "cross"
    (App. F.6)."""
    _checks.one_of("case", case, ("self", "cross"))
    if "tau" in params:
        return _checks.real_number("tau", params["tau"], low=0.0)
    if case == "cross":
        return 0.9
    missing = {"n", "c"} - set(params)
    if missing:
        raise ValueError(f"params needs {sorted(missing)} (or 'tau') for the self-attention threshold")
    return self_threshold(params["n"], params["c"])


def rademacher(rng: np.random.Generator, d: int, m: int) -> np.ndarray:
    """Readout matrix Y ∈ {±1}^{d×m} with iid uniform signs."""
    return rng.choice(np.array([-1.0, 1.0]), size=(d, m))


def self_threshold(n: int, c: float) -> float:
    """τ = (c + 0.1)·√(log n) (Thm 6.2, App. E)."""
    n = _checks.positive_int("n", n)
    c = _checks.real_number("c", c, low=0.0)
    return (c + 0.1) * math.sqrt(math.log(n))


def self_outputs(n, d, a, b, c, j3, X: str) -> dict[str, np.ndarray]:
    """Attention rows of both kinds for one self-attention point (V = I).  Returns {"exp": (n, d), "lin": (n, d)}."""
    A = self_data(n, d, a, b, c, j3)
    Xm, V = qk_matrix(X, d), np.eye(d)
    return {kind: attention(A, A, A, Xm, V, kind) for kind in KINDS}


def cross_outputs(n, d, a, j2, j3) -> dict[str, np.ndarray]:
    """Attention rows of both kinds for one cross-attention point (X = V = I)."""
    A1, A2 = cross_data(n, d, a, j2, j3)
    return {kind: attention(A1, A2, A2, np.eye(d), np.eye(d), kind) for kind in KINDS}


# --- the success event and its exact probability (our derivation: success_given_probabilities) ----------------------


def distinct_rows(c, decimals: int = 12) -> np.ndarray:
    """The distinct rows of c (rounded to ``decimals`` for the comparison only): F's sign depends on these alone."""
    c = np.asarray(c, float)
    _, idx = np.unique(np.round(c, decimals), axis=0, return_index=True)
    return c[np.sort(idx)]


def sign_vectors(d: int) -> np.ndarray:
    """All 2^d vectors in {±1}^d: (2^d, d).  Refuses d > 22 (use sampled sign vectors instead)."""
    if d > 22:
        raise ValueError(f"enumerating 2^{d} sign vectors is too large; pass sampled sign vectors instead")
    return np.array(list(itertools.product((-1.0, 1.0), repeat=d)))


def sign_vectors_or_sample(
    d: int, samples: int, seed: int | np.random.Generator, *, exact_up_to: int = 14
) -> np.ndarray:
    """All 2^d sign vectors when d ≤ ``exact_up_to`` (exact probabilities), else ``samples`` iid uniform ones drawn
    with ``np.random.default_rng(seed)`` (Monte Carlo estimates; ``seed`` may be a numpy ``Generator``).
    Returns (N, d)."""
    if d <= exact_up_to:
        return sign_vectors(d)
    samples = _checks.positive_int("samples", samples)
    return np.random.default_rng(seed).choice(np.array([-1.0, 1.0]), size=(samples, d))


def sign_vector_source(samples: int, rng_for, *, exact_up_to: int = 14):
    """The sign vectors for the exact success formula (:func:`success_probability`) as a function of d: ``d ↦``
    :func:`sign_vectors_or_sample` ``(d, samples, rng_for(d))``, i.e. all 2^d vectors (d,) for d ≤ ``exact_up_to``
    and otherwise ``samples`` iid uniform ones from the generator ``rng_for(d)``.  Returns a callable d → (N, d).

    ``rng_for`` is called for every d (also where the vectors are enumerated), so a notebook's named stream
    ``lambda d: keys.rng("sign vectors", d)`` gives the same fixed sample of each d on every call.
    """
    samples = _checks.positive_int("samples", samples)
    exact_up_to = _checks.integer("exact_up_to", exact_up_to, low=0)
    _checks.callable_arg("rng_for", rng_for, "a numpy Generator for each d")

    def sigmas_for(d: int) -> np.ndarray:
        return sign_vectors_or_sample(d, samples, rng_for(d), exact_up_to=exact_up_to)

    return sigmas_for


def readouts_for(n: int, *, delta: float = 0.01, floor: int | None = None) -> int:
    """The readout count of §7.2: m = ⌊log(n/δ)⌋, or max{⌊log(n/δ)⌋, floor} when ``floor`` is given (the paper's
    self-attention default is floor = 15; it does not say how to round, we round down)."""
    n = _checks.positive_int("n", n)
    delta = _checks.real_number("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    m = int(math.log(n / delta))
    if floor is None:
        return m
    return max(m, _checks.integer("floor", floor, low=1))


def neuron_probabilities(good_rows, bad_rows, tau: float, sigmas) -> tuple[float, float, float]:
    """For one readout neuron σ (uniform over the rows of ``sigmas``): p_G = P[∃ good row with ⟨row, σ⟩ > τ],
    p_B likewise for the bad rows, p_BG = P[B ∪ G].  good/bad rows: (k, d); sigmas: (N, d)."""
    sigmas = _checks.finite_numpy("sigmas", sigmas, 2)
    good_rows = _checks.finite_numpy("good_rows", good_rows, 2)
    bad_rows = _checks.finite_numpy("bad_rows", bad_rows, 2)
    tau = _checks.real_number("tau", tau)
    if not sigmas.shape[1] == good_rows.shape[1] == bad_rows.shape[1]:
        raise ValueError(
            f"sigmas, good_rows and bad_rows need the same d, got {sigmas.shape}, {good_rows.shape}, {bad_rows.shape}"
        )
    G = (sigmas @ good_rows.T > tau).any(axis=1)
    B = (sigmas @ bad_rows.T > tau).any(axis=1)
    return float(G.mean()), float(B.mean()), float((G | B).mean())


def success_given_probabilities(p_b: float, p_bg: float, m: int) -> float:
    """P(E_success | data) = (1 − p_B)^m − (1 − p_BG)^m for m iid neurons: no bad neuron fires and some good one
    does (E_success = F_exp(D1) > 0 ∧ F_lin(D1) = 0 ∧ F_exp(D0) = 0 ∧ F_lin(D0) = 0, one shared readout)."""
    p_b = _checks.real_number("p_b", p_b, low=0.0, high=1.0)
    p_bg = _checks.real_number("p_bg", p_bg, low=p_b, high=1.0)
    m = _checks.positive_int("m", m)
    return (1 - p_b) ** m - (1 - p_bg) ** m


def success_probability(case: str, m: int, sigmas, **params) -> float:
    """Exact P(E_success) for ``case`` ∈ {"self", "cross"}, averaged over the placements of the special rows.

    self: params n, d, a0, a1, b, c, X ("ones"/"identity"), tau (default (c + 0.1)√log n); the outcome depends
    only on whether the D1 and D0 points share the group g(j3), which happens with probability 1/(d − 2).
    cross: params n, d, a0, a1, tau (default 0.9); only whether g(j3) agrees matters (probability 1/(d − 1)).
    ``sigmas``: all 2^d sign vectors (exact) or a sample of them (then the result is a Monte Carlo estimate).
    """
    m = _checks.positive_int("m", m)
    tau = threshold(case, params)
    if case == "self":
        n, d, b, c = params["n"], params["d"], params["b"], params["c"]
        groups = d - 2

        def rows(a, j3):
            return self_outputs(n, d, a, b, c, j3, params["X"])

        # D1's special row is j3 = 0 (group 0); D0's is j3 = 0 (same group) or j3 = 1 (another group).
        placements = ((0, 1 / groups), (1, 1 - 1 / groups)) if groups > 1 else ((0, 1.0),)
    elif case == "cross":
        n, d = params["n"], params["d"]
        groups = d - 1

        def rows(a, j3):
            return cross_outputs(n, d, a, 0, j3)

        placements = ((0, 1 / groups), (1, 1 - 1 / groups)) if groups > 1 else ((0, 1.0),)
    else:
        raise ValueError(f"case must be 'self' or 'cross', got {case!r}")
    d1 = rows(params["a1"], 0)
    total = 0.0
    for j3_d0, weight in placements:
        d0 = rows(params["a0"], j3_d0)
        good = distinct_rows(d1["exp"])
        bad = np.concatenate([distinct_rows(d0["exp"]), distinct_rows(d1["lin"]), distinct_rows(d0["lin"])])
        _, p_b, p_bg = neuron_probabilities(good, bad, tau, sigmas)
        total += weight * success_given_probabilities(p_b, p_bg, m)
    return total


def self_data_batch(n: int, d: int, a: float, b: float, c: float, j3) -> np.ndarray:
    """:func:`self_data` for a batch of spike rows j3: (T,) → (T, n, d), entry for entry equal to the single version."""
    base = self_data(n, d, 0.0, b, c, 0)
    j3 = _check_indices("j3", j3, n)
    a = _checks.real_number("a", a)
    A = np.repeat(base[None], len(j3), axis=0)
    A[np.arange(len(j3)), j3, 0] = a * math.sqrt(math.log(n))
    return A


def cross_data_batch(n: int, d: int, a: float, j2, j3) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cross_data` for batches of (j2, j3): (T,), (T,) → A1, A2 each (T, n, d)."""
    A1_base, A2_base = cross_data(n, d, 0.0, 0, 0)
    A2_base[0, 0] = 0.0
    j2, j3 = _check_indices("j2", j2, n), _check_indices("j3", j3, n)
    if j2.shape != j3.shape:
        raise ValueError(f"j2 and j3 need equal lengths, got {j2.shape} and {j3.shape}")
    a = _checks.real_number("a", a)
    T = np.arange(len(j2))
    A1, A2 = np.repeat(A1_base[None], len(j2), axis=0), np.repeat(A2_base[None], len(j2), axis=0)
    A1[T, j2, 0] = a * math.log(n)
    A2[T, j3, 0] = 1.0
    return A1, A2


def distinct_query_rows(Q) -> tuple[np.ndarray, np.ndarray]:
    """Per batch element, the distinct rows of Q (T, n, d) and their multiplicities: rows (T, k, d), counts (T, k).

    Softmax and linear attention act row by row, so identical query rows give identical output rows: attending
    with the k distinct queries and weighting by multiplicity gives F exactly (our speed-up). Batches with
    fewer than k distinct rows are padded with copies of their row 0 at multiplicity 0.
    """
    Q = np.asarray(Q, float)
    T, n, d = Q.shape
    keyed = np.concatenate([np.repeat(np.arange(T, dtype=float), n)[:, None], Q.reshape(T * n, d)], axis=1)
    keyed = keyed[np.lexsort(keyed.T[::-1])]  # by trial, then column by column (faster than np.unique(axis=0))
    starts = np.flatnonzero(np.r_[True, np.any(keyed[1:] != keyed[:-1], axis=1)])
    unique, counts = keyed[starts], np.diff(np.r_[starts, T * n])
    trial = unique[:, 0].astype(int)
    per_trial = np.bincount(trial, minlength=T)
    slot = np.arange(len(unique)) - np.repeat(np.cumsum(per_trial) - per_trial, per_trial)
    rows = np.repeat(Q[:, :1, :], per_trial.max(), axis=1)
    multiplicity = np.zeros(rows.shape[:2])
    rows[trial, slot] = unique[:, 1:]
    multiplicity[trial, slot] = counts
    return rows, multiplicity


def network_batch(c, Y, tau: float, multiplicity=None) -> Output:
    """:func:`network` over a batch: c (T, k, d) attention rows, Y (T, d, m) readouts, optional row multiplicities
    (T, k) (default 1; rows of multiplicity 0 are ignored).  Returns Output of (T,) arrays."""
    c, Y = _checks.finite_numpy("c", c, 3), _checks.finite_numpy("Y", Y, 3)
    tau = _checks.real_number("tau", tau)
    if c.shape[0] != Y.shape[0] or c.shape[2] != Y.shape[1]:
        raise ValueError(f"c (T, k, d) and Y (T, d, m) must agree in T and d, got {c.shape} and {Y.shape}")
    if multiplicity is not None:
        multiplicity = _checks.finite_numpy("multiplicity", multiplicity, 2)
        if multiplicity.shape != c.shape[:2] or np.any(multiplicity < 0):
            raise ValueError(f"multiplicity must be ≥ 0 with shape {c.shape[:2]} (T, k), got {multiplicity.shape}")
    return _network_batch(c, Y, tau, multiplicity)


def _network_batch(c, Y, tau: float, multiplicity) -> Output:
    """:func:`network_batch` on checked float64 arrays."""
    scores = c @ Y
    w = np.ones(scores.shape[:2]) if multiplicity is None else multiplicity
    value = np.einsum("tk,tkm->t", w, np.maximum(scores - tau, 0.0))
    margin = np.where(w > 0, scores.max(axis=-1), -np.inf).max(axis=-1) - tau
    return Output(value, margin)


def _batch_points(case: str, a: float, positions, params) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(queries, keys, query–key matrix) of a batch of D0/D1 points; positions (T,) for self, (T, 2) for cross."""
    n, d = params["n"], params["d"]
    if case == "self":
        A = self_data_batch(n, d, a, params["b"], params["c"], positions)
        return A, A, qk_matrix(params["X"], d)
    A1, A2 = cross_data_batch(n, d, a, positions[:, 0], positions[:, 1])
    return A1, A2, np.eye(d)


def success_indicators(case: str, Y, positions_d1, positions_d0, *, distinct: bool = True, **params) -> np.ndarray:
    """E_success per trial (F_exp(D1) > 0, F_lin(D1) = 0, F_exp(D0) = 0, F_lin(D0) = 0, one shared readout).

    Y: (T, d, m) readouts; positions: special-row indices of the D1 and D0 point, (T,) j3 for ``case="self"``
    (params n, d, a0, a1, b, c, X, optional tau) and (T, 2) (j2, j3) for ``"cross"`` (params n, d, a0, a1, optional
    tau).  ``distinct=True`` attends with the distinct query rows only (exact, :func:`distinct_query_rows`);
    ``False`` evaluates all n rows.  Vectorised over trials in chunks of bounded memory.  Returns (T,) bool.
    """
    tau = threshold(case, params)
    Y = _checks.finite_numpy("Y", Y)
    n, d = params["n"], params["d"]
    if Y.ndim != 3 or Y.shape[1] != d:
        raise ValueError(f"Y must have shape (trials, d={d}, m), got {Y.shape}")
    chunk = max(1, 2**22 // (n * (d if distinct else n)))
    ok = np.empty(len(Y), bool)
    for lo in range(0, len(Y), chunk):
        sl = slice(lo, lo + chunk)
        fired = {}
        for cls, a, positions in ((1, params["a1"], positions_d1), (0, params["a0"], positions_d0)):
            Q, K, X = _batch_points(case, a, np.asarray(positions)[sl], params)
            queries, multiplicity = distinct_query_rows(Q) if distinct else (Q, None)
            for kind in KINDS:
                c = _attention(queries, K, K, X, np.eye(d), kind)  # built here from checked parameters
                fired[kind, cls] = _network_batch(c, Y[sl], tau, multiplicity).margin > 0
        ok[sl] = fired["exp", 1] & ~fired["lin", 1] & ~fired["exp", 0] & ~fired["lin", 0]
    return ok


def simulate_success(case: str, m: int, trials: int, rng: np.random.Generator, **params) -> float:
    """Brute-force Monte Carlo of E_success: every trial draws a readout Y (d × m) and the special rows of one D1
    and one D0 point (uniform over all n, resp. n² for cross) and evaluates all four networks
    (:func:`success_indicators`, vectorised over trials)."""
    trials, m = _checks.positive_int("trials", trials), _checks.positive_int("m", m)
    n, d = params["n"], params["d"]
    Y = rng.choice(np.array([-1.0, 1.0]), size=(trials, d, m))
    shape = (trials,) if case == "self" else (trials, 2)
    d1, d0 = rng.integers(n, size=shape), rng.integers(n, size=shape)
    return float(success_indicators(case, Y, d1, d0, **params).mean())


def simulate_toy_success(
    n: int, m: int, trials: int, rng: np.random.Generator, *, tau: float = 0.5, mode: str = "uniform"
) -> float:
    """Monte Carlo of the toy model's E_success (§7.1): per trial one readout Y ∈ {±1}^{n×m}, one D0 and one D1
    logit vector; success iff F_exp(D1) > 0 and F_exp(D0) = F_lin(D0) = F_lin(D1) = 0.  Vectorised over trials."""
    n, m, trials = (_checks.positive_int(k, v) for k, v in (("n", n), ("m", m), ("trials", trials)))
    tau = _checks.real_number("tau", tau)  # mode is checked by toy_logits' first call, before any work
    hits = 0
    for start in range(0, trials, 256):
        batch = min(256, trials - start)
        u0 = np.stack([toy_logits(rng, n, 0, mode=mode)[0] for _ in range(batch)])
        u1 = np.stack([toy_logits(rng, n, 1, mode=mode)[0] for _ in range(batch)])
        Y = rng.choice(np.array([-1.0, 1.0]), size=(batch, n, m))

        def fires(f, Y=Y):
            return (np.einsum("tn,tnm->tm", f, Y) > tau).any(axis=1)

        ok = fires(normalise(u1, "exp")) & ~fires(normalise(u1, "lin"))
        ok &= ~fires(normalise(u0, "exp")) & ~fires(normalise(u0, "lin"))
        hits += int(ok.sum())
    return hits / trials


# --- the quantitative statement: class gaps (notebook 10 §1) --------------------------------------------------------


def self_class_gap(n: int, a0: float, a1: float, kind: str) -> float:
    """sup over rows and coordinates of |c^{D1} − c^{D0}| / s for X = 1_{d×d}, V = I and matching j3 (column 0 of
    row j3 dominates).  Linear: a1(1+a1)/(n+a1) − a0(1+a0)/(n+a0) = Θ(1/n); softmax → a1 − a0·(weight) ≈ a1."""
    n = _checks.positive_int("n", n)
    a0, a1 = _checks.real_number("a0", a0), _checks.real_number("a1", a1)  # a NaN gave a NaN gap
    if kind == "lin":
        return a1 * (1 + a1) / (n + a1) - a0 * (1 + a0) / (n + a0)
    if kind == "exp":

        def spike_weight(a):  # softmax weight of row j3 on itself: n^{a+a²} / (n^{a+a²} + n − 1), in log space
            return 1.0 / (1.0 + (n - 1) * math.exp(-(a + a * a) * math.log(n)))

        return a1 * spike_weight(a1) - a0 * spike_weight(a0)
    raise ValueError(f"kind must be 'exp' or 'lin', got {kind!r}")
