"""Record each claim a notebook checks: the paper's value, ours, and whether it holds → ``results/<notebook>.json``.

``RESULTS_DIR`` (environment variable) chooses the directory (default ``results/``). ``tools/run_notebooks.py``
points it at a staging directory (``build/staging/<scale>/<notebook>/results``) and copies the file into
``results/`` (or ``build/quick/results``) only once the run completed. The file is rewritten, atomically (a
temporary file then ``os.replace``: a reader or a concurrent writer never sees a torn file), after every claim, so
a notebook that fails half-way still leaves what it checked in its staging directory, marked ``"complete": false``
(only the notebook's last cell, :meth:`Recorder.finish`, marks a run complete). Nothing time-dependent is stored:
the same run gives the same file.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from pathlib import Path

import numpy as np

from rflib._atomic import write_atomically

VERDICTS = ("holds", "fails", "inconclusive", "scaled", "info")
"""The outcomes a criterion can produce (``scaled`` is ``holds`` at a reduced scale; ``info`` has no criterion)."""
DECIDED = ("holds", "fails", "inconclusive")
ON_THE_LINE = ("holds or inconclusive", "fails or inconclusive")
"""Documented outcomes of a claim whose effect sits on its threshold, where runs of the same notebook decide it
differently: either outcome is accepted, never the opposite one (the report marks such claims "on its line")."""
EXPECTATIONS = DECIDED + ON_THE_LINE
SCALES = ("quick", "standard", "paper")
INTERVAL_Z = 2.0
"""The project's statistical test: an estimate ± 2 standard errors (≈ 95 % for a normal sampling distribution)."""


def interval_z(*, samples: int | None = None, parts: int = 1) -> float:
    """The half-width, in standard errors, of the interval a verdict is read from: the two-sided quantile at level
    0.05/``parts`` (Bonferroni, when a claim is decided part by part with :func:`combine` or :func:`majority`, so that
    a claim of many parts does not fail by chance) of Student's t with n − 1 degrees of freedom when the standard
    error comes from ``samples`` = n values, else of the normal law; never below the project's 2.
    E.g. 12.7 for 2 seeds, 2.78 for 5, 2.26 for 10; 4.85 for 5 seeds and 6 parts; 2.64 for 6 parts and no samples.
    (Until 2026-11-26 the two widenings were applied separately, max(t₀.₉₇₅, Φ⁻¹(1 − 0.025/parts)): too narrow when
    both apply — 2.78 instead of 4.85 for 5 seeds and 6 parts.)"""
    from scipy import stats

    if isinstance(parts, bool) or not isinstance(parts, numbers.Integral) or parts < 1:
        raise ValueError(f"parts must be a positive integer, got {parts!r}")
    level = 1 - 0.025 / parts
    if samples is None:
        return max(INTERVAL_Z, float(stats.norm.ppf(level)))
    if isinstance(samples, bool) or not isinstance(samples, numbers.Integral) or samples < 2:
        raise ValueError(f"samples must be an integer ≥ 2 (a standard error needs two), got {samples!r}")
    return max(INTERVAL_Z, float(stats.t.ppf(level, samples - 1)))


def _finite(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def decide(
    estimate: float,
    se: float,
    *,
    below: float | None = None,
    above: float | None = None,
    within: tuple[float, float] | None = None,
    z: float = INTERVAL_Z,
) -> str:
    """The verdict on "the estimated quantity is below ``below``" (or above ``above``, or inside the open range
    ``within = (low, high)``; give exactly one), decided by the interval estimate ± z·se: **holds** when the whole
    interval lies on the claimed side (inside the range), **fails** when it lies wholly on the other side (outside
    the range; a threshold itself counts as outside), and **inconclusive** when it straddles a threshold — the data
    cannot decide at this scale.

    estimate, se: finite numbers, se ≥ 0 (a standard error over independent seeds or draws); ``se = inf`` states
    that the uncertainty is unbounded (too few runs, an undefined ratio), which decides nothing: inconclusive.
    """
    if sum(t is not None for t in (below, above, within)) != 1:
        raise ValueError("give exactly one of below=, above= and within=(low, high): what the claim says")
    estimate, z = _finite("estimate", estimate), _finite("z", z)
    se = math.inf if isinstance(se, numbers.Real) and se == math.inf else _finite("se", se)
    if se < 0 or z <= 0:
        raise ValueError(f"se must be ≥ 0 and z > 0, got se = {se!r}, z = {z!r}")
    low, high = estimate - z * se, estimate + z * se
    if within is not None:
        if not isinstance(within, tuple | list) or len(within) != 2:
            raise ValueError(f"within must be a pair (low, high), got {within!r}")
        lo, hi = _finite("within[0]", within[0]), _finite("within[1]", within[1])
        if not lo < hi:
            raise ValueError(f"within must have low < high, got {within!r}")
        if lo < low and high < hi:
            return "holds"
        return "fails" if high <= lo or low >= hi else "inconclusive"
    if below is not None:
        threshold = _finite("below", below)
        return "holds" if high < threshold else ("fails" if low >= threshold else "inconclusive")
    threshold = _finite("above", above)
    return "holds" if low > threshold else ("fails" if high <= threshold else "inconclusive")


def decide_smaller(a: tuple[float, float], b: tuple[float, float], *, z: float = INTERVAL_Z) -> str:
    """The verdict on "quantity a is smaller than quantity b" from independent estimates ``a = (mean, se)`` and
    ``b = (mean, se)``: :func:`decide` on the difference a − b (standard error √(se_a² + se_b²)) against 0."""
    (a_mean, a_se), (b_mean, b_se) = a, b
    return decide(a_mean - b_mean, math.hypot(_finite("a's se", a_se), _finite("b's se", b_se)), below=0.0, z=z)


def decide_best_smaller(winners, losers, *, every_winner: bool = False, z: float = INTERVAL_Z) -> str:
    """The verdict on "the best of ``winners`` is smaller than the best of ``losers``" (lower is better; with
    ``every_winner``, the *worst* of the winners): :func:`decide_smaller` between the winner and the loser with the
    lowest means (highest, for the worst winner).  winners, losers: non-empty sequences of (mean, se)."""
    winners, losers = list(winners), list(losers)
    if not winners or not losers:
        raise ValueError("winners and losers must each hold at least one (mean, se)")
    winner = (max if every_winner else min)(winners, key=lambda v: v[0])
    return decide_smaller(winner, min(losers, key=lambda v: v[0]), z=z)


def decide_test(p_for: float, p_against: float, *, alpha: float = 0.025) -> str:
    """The verdict of a one-sided hypothesis test run both ways: **holds** when the test for the claimed direction
    rejects "no effect" at level ``alpha`` (p_for < alpha), **fails** when the test for the opposite direction does,
    else **inconclusive**. alpha = 0.025 matches the one-sided tail of the project's ±2 s.e. interval."""
    p_for, p_against, alpha = _finite("p_for", p_for), _finite("p_against", p_against), _finite("alpha", alpha)
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}")
    return "holds" if p_for < alpha else ("fails" if p_against < alpha else "inconclusive")


def majority(verdicts) -> str:
    """One verdict for "… on most of them": **holds** when more than half of the parts hold, **fails** when not even
    the parts that hold plus the undecided ones make a majority, else **inconclusive**."""
    verdicts = list(verdicts)
    if not verdicts or any(v not in DECIDED for v in verdicts):
        raise ValueError(f"verdicts must be a non-empty sequence of {DECIDED}, got {verdicts!r}")
    half = len(verdicts) / 2
    if verdicts.count("holds") > half:
        return "holds"
    return "fails" if len(verdicts) - verdicts.count("fails") <= half else "inconclusive"


def combine(verdicts) -> str:
    """One verdict for a claim made of several decided parts ("… at every m", "… on every data set"): **fails** if
    any part fails, **holds** if every part holds, else **inconclusive**."""
    verdicts = list(verdicts)
    if not verdicts or any(v not in DECIDED for v in verdicts):
        raise ValueError(f"verdicts must be a non-empty sequence of {DECIDED}, got {verdicts!r}")
    if "fails" in verdicts:
        return "fails"
    return "holds" if all(v == "holds" for v in verdicts) else "inconclusive"


def samples_to_decide(samples: int, estimate: float, se: float, z: float, against: float = 0.0) -> float:
    """How many samples (seeds, draws) would put ``against`` outside estimate ± z·se, were the estimate and the
    spread per sample to stay as measured on ``samples``: samples·(z·se / |estimate − against|)², ∞ at the
    threshold itself. A guide to what a decision would take, not a prediction: the estimate moves with more samples,
    and z is held at its value for ``samples`` (Student-t narrows as they grow), so the count errs high."""
    if isinstance(samples, bool) or not isinstance(samples, numbers.Integral) or samples < 1:
        raise ValueError(f"samples must be a positive integer, got {samples!r}")
    estimate, se, z, against = (
        _finite(n, v) for n, v in (("estimate", estimate), ("se", se), ("z", z), ("against", against))
    )
    if se < 0 or z <= 0:
        raise ValueError(f"need se ≥ 0 and z > 0, got {se!r} and {z!r}")
    gap = abs(estimate - against)
    return math.inf if gap == 0 else samples * (z * se / gap) ** 2


def sign_test(values, threshold: float) -> tuple[float, float]:
    """One-sided sign tests of "the median of ``values`` lies above ``threshold``" and of "… below": the exact
    binomial (n, ½) tail probabilities (P(X ≥ k), P(X ≤ k)) of k = the number of values above it, n = those not equal
    to it (ties are dropped). No normal approximation and no assumption on the values' law: the test for a split
    between runs that learned and runs that did not, where a t-interval on the mean cannot decide. values: (n,)."""
    from scipy import stats

    values = np.asarray(values, dtype=float).ravel()
    threshold = _finite("threshold", threshold)
    if values.size == 0 or not np.isfinite(values).all():
        raise ValueError(f"values must be a non-empty array of finite numbers, got {values.size} values")
    above, below = int(np.sum(values > threshold)), int(np.sum(values < threshold))
    n = above + below
    if n == 0:
        return 1.0, 1.0
    return float(stats.binom.sf(above - 1, n, 0.5)), float(stats.binom.cdf(above, n, 0.5))


def mean_and_se(samples) -> tuple[float, float]:
    """Mean of independent samples (seeds, draws, repetitions) and its standard error, std (ddof 1) / √n.
    samples: (n,) finite, n ≥ 2."""
    values = np.asarray(samples, dtype=float).ravel()
    if values.size < 2 or not np.isfinite(values).all():
        raise ValueError(f"samples must hold at least 2 finite values for a standard error, got {values.size}")
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


def mean_se_entry(estimate) -> dict[str, float]:
    """A (mean, s.e.) pair as the ``{"mean": …, "s.e.": …}`` entry results files record it in."""
    mean, se = estimate
    return {"mean": mean, "s.e.": se}


def criterion_text(
    *,
    below: float | None = None,
    above: float | None = None,
    within: tuple[float, float] | None = None,
    z: float = INTERVAL_Z,
    quantity: str = "estimate",
) -> str:
    """The test :func:`decide` applies, in words, for the report (``quantity`` names what is estimated)."""
    if within is not None:
        return (
            f"holds if {quantity} ± {z:g} s.e. lies inside ({within[0]:g}, {within[1]:g}), fails if it lies wholly "
            "outside, else inconclusive"
        )
    side, threshold = ("<", below) if below is not None else (">", above)
    return (
        f"holds if {quantity} {'+' if side == '<' else '−'} {z:g} s.e. {side} {threshold:g}, fails if the whole "
        f"± {z:g} s.e. interval is on the other side, else inconclusive"
    )


def meets_expectation(claim: dict) -> bool:
    """Whether a recorded claim came out as its notebook documented: an ``info`` claim always does; a ``scaled``
    verdict counts as ``holds`` (the same criterion, passed at a reduced scale); otherwise the verdict must equal
    the claim's ``expected`` outcome (``"holds"`` unless the notebook documented a known failure or an undecidable
    claim, with its reason in ``because``), or be one of its two (:data:`ON_THE_LINE`)."""
    verdict = claim["verdict"]
    if verdict == "info":
        return True
    return ("holds" if verdict == "scaled" else verdict) in claim.get("expected", "holds").split(" or ")


def decided_at(claim: dict, scale: str) -> bool:
    """Whether a run at ``scale`` must decide ``claim`` as documented: it has a criterion (``info`` measurements have
    none) meaningful at ``scale`` or a smaller one (its ``meaningful_at``)."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    return claim["verdict"] != "info" and SCALES.index(claim.get("meaningful_at", "quick")) <= SCALES.index(scale)


def asserted_at(doc: dict, scale: str) -> list[dict]:
    """The claims of a results document that a run at ``scale`` must decide as documented (:func:`decided_at`)."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    return [c for c in doc["claims"] if decided_at(c, scale)]


def cell(value) -> str:
    """A recorded value as one Markdown table cell: floats to 4 significant digits, lists and dicts inline."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return ", ".join(cell(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {cell(v)}" for k, v in value.items())
    return str(value).replace("|", "\\|").replace("\n", " ")


def results_dir() -> Path:
    """``$RESULTS_DIR`` if set, else ``results/`` in the current directory."""
    return Path(os.environ.get("RESULTS_DIR", "results"))


def _plain(value):
    """Convert numpy/JAX scalars and arrays to JSON-ready Python values (non-finite floats become strings)."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    arr = np.asarray(value)
    if arr.ndim > 0:
        return [_plain(v) for v in arr.tolist()]
    item = arr.item()
    if isinstance(item, bool | np.bool_):
        return bool(item)
    if isinstance(item, numbers.Integral):
        return int(item)
    if isinstance(item, numbers.Real):
        return float(item) if math.isfinite(item) else str(item)
    return str(item)


class Recorder:
    """Collects the claims of one notebook run and writes them to ``<RESULTS_DIR>/<notebook>.json``.

    Args:
      notebook: notebook stem, e.g. ``"00_random_features_primer"``.
      parameters: the run's parameters (scale, seed, sizes), stored alongside the claims.
      fresh: start a new file, dropping claims of an earlier run (the default, once per notebook run); with
        ``False`` the existing file's parameters and claims are kept and new claims are appended.
    """

    def __init__(self, notebook: str, parameters: dict | None = None, *, fresh: bool = True):
        if not notebook or "/" in notebook:
            raise ValueError(f"notebook must be a notebook stem such as '00_random_features_primer', got {notebook!r}")
        self.notebook = notebook
        self.path = results_dir() / f"{notebook}.json"
        self.parameters = _plain(parameters or {})
        self.claims: list[dict] = []
        self.coverage: list[dict] = []
        self.complete = False
        if not fresh and self.path.exists():
            doc = json.loads(self.path.read_text())
            self.parameters = doc.get("parameters", {}) if parameters is None else self.parameters
            self.claims = doc.get("claims", [])
            self.coverage = doc.get("coverage", [])
        self._write()

    def record(
        self,
        claim_id: str,
        text: str,
        *,
        ours,
        holds,
        criterion: str = "",
        paper=None,
        note: str = "",
        reduced: str = "",
        meaningful_at: str = "quick",
        expected: str = "holds",
        because: str = "",
    ) -> None:
        """Record one claim and rewrite the file (returns nothing, so a notebook cell does not echo the entry;
        :meth:`table` shows the claims).

        Args:
          claim_id: short stable identifier, unique within the notebook (e.g. ``"lemma_2_2_trig_mse"``).
          text: the claim in one sentence, as a reader would state it.
          ours: our measured value(s).
          holds: the verdict, computed from the measurement: a bool (the criterion's outcome), a verdict returned by
            :func:`decide` (``"holds"``, ``"fails"``, ``"inconclusive"``; :meth:`record_estimate` calls it for you),
            or ``None`` for a measurement with no verdict (``info``). Verdicts are never typed in: ``"scaled"`` comes
            from ``reduced``.
          criterion: the test that decides the claim, in words (required unless ``holds`` is ``None``), fixed before
            the value is seen — it is what ``holds`` computes.
          paper: the paper's value, if it states one.
          note: what was scaled down, or why we disagree.
          reduced: what is smaller than the paper's setting in this run, for this claim (empty at the paper's
            setting); a claim that holds with ``reduced`` set gets the verdict ``scaled``.
          meaningful_at: the smallest scale (``"quick"``, ``"standard"``, ``"paper"``) at which the criterion can
            decide the claim; the notebook tests assert every quick-meaningful claim, and a test checks the committed
            standard-scale results for the standard-meaningful ones.
          expected: the documented outcome those tests require: ``"holds"``, or ``"fails"`` / ``"inconclusive"``
            for a claim that is false as printed, or that our data cannot decide, with the reason in ``because``; or
            ``"holds or inconclusive"`` / ``"fails or inconclusive"`` (:data:`ON_THE_LINE`) for an effect on its
            threshold that runs decide differently, with the runs' values in ``because``.
        """
        if holds is None:
            verdict = "info"
        elif isinstance(holds, bool | np.bool_):
            verdict = "holds" if holds else "fails"
        elif holds in DECIDED:
            verdict = holds
        else:
            raise ValueError(
                f"holds must be a bool, a verdict from decide() {DECIDED}, or None for a measurement, got {holds!r}; "
                "'scaled' is decided by passing reduced='what was reduced'"
            )
        if verdict != "info" and not criterion:
            raise ValueError(f"claim {claim_id!r}: give criterion=, the test that decides it, in words")
        if meaningful_at not in SCALES:
            raise ValueError(f"meaningful_at must be one of {SCALES}, got {meaningful_at!r}")
        if expected not in EXPECTATIONS:
            raise ValueError(f"expected must be one of {EXPECTATIONS}, got {expected!r}")
        if expected != "holds" and not because:
            raise ValueError(f"claim {claim_id!r}: expected={expected!r} needs because=, the documented reason")
        if verdict == "holds" and reduced:
            verdict = "scaled"
        if any(c["id"] == claim_id for c in self.claims):
            raise ValueError(f"claim_id {claim_id!r} was already recorded in {self.notebook}")
        entry = {"id": claim_id, "claim": text, "paper": _plain(paper), "ours": _plain(ours), "verdict": verdict}
        if verdict != "info":
            entry |= {"criterion": criterion, "meaningful_at": meaningful_at, "expected": expected}
        for name, value in (("because", because), ("reduced", reduced), ("note", note)):
            if value:
                entry[name] = value
        self.claims.append(entry)
        self._write()

    def record_estimate(
        self,
        claim_id: str,
        text: str,
        *,
        estimate: float,
        se: float,
        below: float | None = None,
        above: float | None = None,
        within: tuple[float, float] | None = None,
        z: float = INTERVAL_Z,
        quantity: str = "estimate",
        paper=None,
        extra: dict | None = None,
        **options,
    ) -> None:
        """Record a statistical claim decided by :func:`decide`: "the quantity is below ``below``" (or above
        ``above``, or inside ``within``), from its ``estimate`` and standard error ``se``. The criterion is fixed by
        the call, not by the value, and is stored with the claim; ``ours`` records the estimate, its s.e. and any
        ``extra`` values.
        ``options``: ``note``, ``reduced``, ``meaningful_at``, ``expected``, ``because`` as in :meth:`record`."""
        verdict = decide(estimate, se, below=below, above=above, within=within, z=z)
        ours = {"estimate": float(estimate), "s.e.": float(se), **(extra or {})}
        criterion = criterion_text(below=below, above=above, within=within, z=z, quantity=quantity)
        self.record(claim_id, text, ours=ours, holds=verdict, criterion=criterion, paper=paper, **options)

    def cover(self, item: str, status: str, detail: str, *, claims=()) -> None:
        """Record how this notebook covers one numbered item of a paper (the coverage inventory of the report).

        Args:
          item: ``"<paper>:<item>"`` as listed in :data:`rflib.notebook.coverage.PAPER_ITEMS`, e.g.
            ``"hrf:Theorem 3.1"``.
          status: one of :data:`rflib.notebook.coverage.STATUSES`.
          detail: how it is covered: where it is checked, what was reduced or replaced, or why it is out of reach.
          claims: ids of this notebook's claims that decide it.
        """
        from rflib.notebook import coverage

        paper, name = coverage.split_item(item)
        if status not in coverage.STATUSES:
            raise ValueError(f"status must be one of {coverage.STATUSES}, got {status!r}")
        if not detail:
            raise ValueError(f"{item}: give detail=, how the item is covered (or why not)")
        if any(c["item"] == item for c in self.coverage):
            raise ValueError(f"{item} was already covered in {self.notebook}")
        entry = {"item": item, "status": status, "detail": detail}
        if claims:
            entry["claims"] = list(claims)
        self.coverage.append(entry)
        self._write()

    def finish(self) -> None:
        """Mark the run complete (the notebook's last cell calls it). Until then the file says ``"complete": false``,
        so the claims of a run that crashed or was interrupted are never mistaken for a whole notebook's."""
        self.complete = True
        self._write()

    def _write(self) -> None:
        doc = {
            "notebook": self.notebook,
            "parameters": self.parameters,
            "complete": self.complete,
            "claims": self.claims,
        }
        if self.coverage:
            doc["coverage"] = self.coverage
        text = json.dumps(doc, indent=2, sort_keys=False) + "\n"
        write_atomically(self.path, lambda temporary: temporary.write_text(text))

    def table(self) -> str:
        """The claims as a Markdown table (claim, paper, ours, verdict) for display in a notebook."""

        rows = ["| claim | paper | ours | verdict |", "|---|---|---|---|"]
        rows += [f"| {c['claim']} | {cell(c['paper'])} | {cell(c['ours'])} | {c['verdict']} |" for c in self.claims]
        return "\n".join(rows)

    def summary(self) -> str:
        """One line per claim: verdict, id, ours vs paper."""
        lines = []
        for c in self.claims:
            paper = "" if c["paper"] is None else f"  (paper: {c['paper']})"
            lines.append(f"[{c['verdict']:>6}] {c['id']}: {c['ours']}{paper}")
        return "\n".join(lines)


def record(notebook: str, claim_id: str, text: str, **fields) -> None:
    """Append one claim to ``<RESULTS_DIR>/<notebook>.json``, keeping the claims already there (:class:`Recorder`;
    ``fields`` as in :meth:`Recorder.record`)."""
    Recorder(notebook, fresh=False).record(claim_id, text, **fields)
