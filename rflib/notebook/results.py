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
INTERVAL_Z = 2.0
"""The project's statistical test: an estimate ± 2 standard errors (≈ 95 % for a normal sampling distribution)."""


def decide(
    estimate: float, se: float, *, below: float | None = None, above: float | None = None, z: float = INTERVAL_Z
) -> str:
    """The verdict on "the estimated quantity is below ``below``" (or above ``above``; give exactly one), decided by
    the interval estimate ± z·se: **holds** when the whole interval lies on the claimed side of the threshold,
    **fails** when it lies wholly on the other side (the threshold itself counts as the other side), and
    **inconclusive** when the interval contains the threshold — the data cannot decide at this scale.

    estimate, se: finite numbers, se ≥ 0 (a standard error over independent seeds or draws).
    """
    if (below is None) == (above is None):
        raise ValueError("give exactly one of below= and above= (the side the claim says the quantity is on)")
    for name, value in (("estimate", estimate), ("se", se), ("z", z)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
    if se < 0 or z <= 0:
        raise ValueError(f"se must be ≥ 0 and z > 0, got se = {se!r}, z = {z!r}")
    sign, threshold = (1.0, below) if below is not None else (-1.0, above)
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not math.isfinite(threshold):
        raise ValueError(f"{'below' if sign > 0 else 'above'} must be a finite real number, got {threshold!r}")
    near, far = sign * estimate + z * se, sign * estimate - z * se  # the interval's ends, claimed side first
    if near < sign * threshold:
        return "holds"
    if far >= sign * threshold:
        return "fails"
    return "inconclusive"


def criterion_text(*, below: float | None = None, above: float | None = None, z: float = INTERVAL_Z) -> str:
    """The test :func:`decide` applies, in words, for the report."""
    side, threshold = ("<", below) if below is not None else (">", above)
    return (
        f"holds if estimate {'+' if side == '<' else '−'} {z:g} s.e. {side} {threshold:g}, fails if the whole "
        f"± {z:g} s.e. interval is on the other side, else inconclusive"
    )


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
        self.complete = False
        if not fresh and self.path.exists():
            doc = json.loads(self.path.read_text())
            self.parameters = doc.get("parameters", {}) if parameters is None else self.parameters
            self.claims = doc.get("claims", [])
        self._write()

    def record(self, claim_id: str, text: str, *, ours, holds: bool | str, paper=None, note: str = "") -> None:
        """Record one claim and rewrite the file (returns nothing, so a notebook cell does not echo the entry;
        :meth:`table` shows the claims).

        Args:
          claim_id: short stable identifier, unique within the notebook (e.g. ``"lemma_2_2_trig_mse"``).
          text: the claim in one sentence, as a reader would state it.
          ours: our measured value(s).
          holds: True/False, or one of ``"holds"``, ``"fails"``, ``"inconclusive"`` (the data cannot decide: use
            :meth:`record_estimate`, which decides it), ``"scaled"`` (holds at a reduced scale), ``"info"`` (a
            measurement with no verdict).
          paper: the paper's value, if it states one.
          note: what was scaled down, or why we disagree.
        """
        verdict = ("holds" if holds else "fails") if isinstance(holds, bool | np.bool_) else holds
        if verdict not in VERDICTS:
            raise ValueError(f"holds must be a bool or one of {VERDICTS}, got {holds!r}")
        if any(c["id"] == claim_id for c in self.claims):
            raise ValueError(f"claim_id {claim_id!r} was already recorded in {self.notebook}")
        entry = {"id": claim_id, "claim": text, "paper": _plain(paper), "ours": _plain(ours), "verdict": verdict}
        if note:
            entry["note"] = note
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
        z: float = INTERVAL_Z,
        paper=None,
        extra: dict | None = None,
        note: str = "",
    ) -> None:
        """Record a statistical claim decided by :func:`decide`: "the quantity is below ``below``" (or above
        ``above``), from its ``estimate`` and standard error ``se``. The criterion is fixed by the call, not by the
        value, and is stored with the claim; ``ours`` records the estimate, its s.e. and any ``extra`` values."""
        verdict = decide(estimate, se, below=below, above=above, z=z)
        ours = {"estimate": float(estimate), "s.e.": float(se), **(extra or {})}
        self.record(claim_id, text, ours=ours, holds=verdict, paper=paper, note=note)
        self.claims[-1]["criterion"] = criterion_text(below=below, above=above, z=z)
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


def record(notebook: str, claim_id: str, text: str, *, ours, holds, paper=None, note: str = "") -> None:
    """Append one claim to ``<RESULTS_DIR>/<notebook>.json``, keeping the claims already there (:class:`Recorder`)."""
    Recorder(notebook, fresh=False).record(claim_id, text, ours=ours, holds=holds, paper=paper, note=note)
