"""Notebook scaffolding: every notebook's start, named random keys and markdown tables (no mathematics here).

**Start.** ``run = start(notebook, scale, seed, SETTINGS)`` is a notebook's whole preamble: it checks ``scale``
against the notebook's settings table, sets JAX's configuration (float64 if the notebook asks for it), opens the
notebook's :class:`~rflib.notebook.results.Recorder` with the run's parameters, applies the figure style and prints
one line saying where it runs. ``run.settings`` is the scale's row, ``run.keys`` the named keys, ``run.recorder``
the recorder.

**Named keys.** A notebook derives every key from its ``seed`` by *purpose and indices*, ``keys("table1", dataset,
rep)``, instead of numeric offsets such as ``fold_in(key, 50_000 + 1000 * di + rep)``, which collide as soon as an
index outgrows its decimal slot. The name and the indices are serialised unambiguously (JSON of the tuple) and
hashed with SHA-256; the first 64 bits are folded into the root key as two 32-bit words. Two different (purpose,
indices) tuples therefore share a key only if SHA-256 collides on 64 bits, whatever the index ranges. The same
names give numpy generators (``keys.rng``) and, for APIs that take only integers, integer seeds (``keys.integer``).
"""

from __future__ import annotations

import hashlib
import json
import numbers
from dataclasses import dataclass

import jax
import numpy as np

from rflib import _checks
from rflib.notebook import plotting
from rflib.notebook.results import Recorder


class Keys:
    """Random streams derived from one seed by name: ``keys(purpose, *indices)`` → a ``jax.random`` key;
    ``keys.rng(purpose, *indices)`` → a numpy ``Generator``; ``keys.integer(purpose, *indices)`` → an integer seed
    for APIs that take only integers (gymnasium's ``reset(seed=...)``, a JAX key made inside a library function).

    Same seed, purpose and indices ⇒ the same stream in every run and every notebook; anything else ⇒ an unrelated
    one. JAX keys and numpy generators are told apart by 64 and 256 bits of SHA-256; integer seeds carry 32 bits
    (all a ``jax.random.key`` keeps when float64 is off), so n of them collide with probability about n²/2³³.
    """

    def __init__(self, seed: int):
        self.seed = _checks.integer("seed", seed, low=0, high=2**32 - 1)
        self._root = jax.random.key(self.seed)

    @staticmethod
    def _digest(purpose: str, indices: tuple, salt: tuple = ()) -> bytes:
        if not isinstance(purpose, str) or not purpose:
            raise ValueError(f"purpose must be a non-empty string naming what the key is for, got {purpose!r:.60}")
        for i, index in enumerate(indices):
            if isinstance(index, bool) or not isinstance(index, numbers.Integral | str):
                raise ValueError(f"indices[{i}] must be an integer or a string, got {type(index).__name__}")
        plain = [int(i) if isinstance(i, numbers.Integral) else i for i in indices]
        return hashlib.sha256(json.dumps([*salt, purpose, *plain]).encode()).digest()

    def __call__(self, purpose: str, *indices) -> jax.Array:
        """The JAX key for ``purpose`` (a non-empty string) and integer or string ``indices``."""
        digest = self._digest(purpose, indices)
        key = self._root
        for word in (int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:8], "little")):
            key = jax.random.fold_in(key, word)
        return key

    def rng(self, purpose: str, *indices) -> np.random.Generator:
        """A numpy generator for ``purpose`` and ``indices``, seeded with the root seed and 256 bits of the name."""
        digest = self._digest(purpose, indices, salt=("numpy",))
        return np.random.default_rng(
            [self.seed, *(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 32, 4))]
        )

    def integer(self, purpose: str, *indices) -> int:
        """An integer seed in [0, 2³²) for ``purpose`` and ``indices`` (see the class docstring on collisions)."""
        digest = self._digest(purpose, indices, salt=("integer", self.seed))
        return int.from_bytes(digest[:4], "little")


def markdown_table(header, rows) -> str:
    """A GitHub-markdown table: ``header`` (column titles), ``rows`` (sequences of cells, already formatted)."""
    header = [str(h) for h in header]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, row in enumerate(rows):
        cells = [str(c) for c in row]
        if len(cells) != len(header):
            raise ValueError(f"rows[{i}] has {len(cells)} cells for {len(header)} columns")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


@dataclass(frozen=True)
class Run:
    """What a notebook works with after :func:`start`: its scale's settings, named keys and recorder."""

    notebook: str
    scale: str
    seed: int
    settings: dict
    keys: Keys
    recorder: Recorder
    paper_settings: dict | None = None

    def reduced(self, description: str, *names: str) -> str:
        """``description`` (what is smaller than in the paper, e.g. ``"2 of 5 seeds"``) when any of the settings
        ``names`` differs from the notebook's ``"paper"`` row, else ``""``: the ``reduced=`` argument of
        :meth:`Recorder.record`, so that a claim is ``scaled`` exactly when its settings are below the paper's."""
        if not description or not names:
            raise ValueError("give a description of the reduction and the names of the settings it concerns")
        if self.paper_settings is None:
            raise ValueError("the notebook's settings have no 'paper' row to compare with")
        missing = [n for n in names if n not in self.settings or n not in self.paper_settings]
        if missing:
            raise ValueError(f"settings {missing} are not in both this scale's row and the 'paper' row")
        return description if any(self.settings[n] != self.paper_settings[n] for n in names) else ""

    def coverage_status(self, status: str, *names: str) -> str:
        """The coverage status of an experiment at this run's scale: ``status`` is the notebook's status at standard
        scale; a ``"paper scale"`` or ``"reduced"`` experiment is ``"reduced"`` when any of its settings ``names``
        differs from the ``"paper"`` row (without names: at quick scale), else ``"paper scale"``. Other statuses
        (exact checks, stand-ins, …) do not depend on the scale and are returned unchanged."""
        if status not in ("paper scale", "reduced"):
            return status
        if names:
            return "reduced" if self.reduced("reduced", *names) else "paper scale"
        return "reduced" if self.scale == "quick" else status


def start(notebook: str, scale: str, seed: int, settings: dict, *, x64: bool = False) -> Run:
    """A notebook's preamble in one call (see the module docstring).

    Args:
      notebook: the notebook's stem, e.g. ``"00_random_features_primer"`` (names its results file).
      scale: ``"quick"``, ``"standard"`` or ``"paper"``; must be a key of ``settings``.
      seed: the papermill ``seed`` parameter, an integer in [0, 2**32).
      settings: ``{scale: {name: value}}``, every experiment setting of the notebook per scale.
      x64: compute in float64 by default (identities and error curves spanning many decades); call ``start`` before
        any JAX array is created, since the switch does not convert arrays that already exist.
    Returns:
      :class:`Run` with ``settings = settings[scale]`` (a copy), ``keys = Keys(seed)`` and a fresh recorder whose
      parameters are ``{"scale", "seed", **settings[scale]}``.
    """
    if not isinstance(settings, dict) or not settings:
        raise ValueError("settings must be a non-empty dict {scale: {name: value}}")
    if scale not in settings:
        raise ValueError(f"scale must be one of {sorted(settings)}, got {scale!r}")
    _checks.integer("seed", seed, low=0, high=2**32 - 1)
    # Non-partitionable threefry compiles ~7x faster on CPU; only sharded random draws would need the other mode.
    jax.config.update("jax_threefry_partitionable", False)
    if x64:
        jax.config.update("jax_enable_x64", True)
    keys = Keys(seed)
    chosen = dict(settings[scale])
    recorder = Recorder(notebook, {"scale": scale, "seed": keys.seed, **chosen})
    plotting.use_style()
    print(f"scale={scale}, seed={keys.seed}, float64={jax.config.jax_enable_x64}, devices={jax.devices()}")
    paper_row = dict(settings["paper"]) if "paper" in settings else None
    return Run(notebook, scale, keys.seed, chosen, keys, recorder, paper_row)
