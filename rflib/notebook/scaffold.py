"""Notebook scaffolding: named random keys and markdown tables (presentation support, no mathematics).

**Named keys.** A notebook derives every key from its ``seed`` by *purpose and indices*, ``keys("table1", dataset,
rep)``, instead of numeric offsets such as ``fold_in(key, 50_000 + 1000 * di + rep)``, which collide as soon as an
index outgrows its decimal slot. The name and the indices are serialised unambiguously (JSON of the tuple) and
hashed with SHA-256; the first 64 bits are folded into the root key as two 32-bit words. Two different (purpose,
indices) tuples therefore share a key only if SHA-256 collides on 64 bits, whatever the index ranges.
"""

from __future__ import annotations

import hashlib
import json
import numbers

import jax

from rflib import _checks


class Keys:
    """Keys derived from one seed by name: ``keys(purpose, *indices)`` → a ``jax.random`` key.

    Same seed, purpose and indices ⇒ the same key in every run and every notebook; anything else ⇒ an unrelated key.
    """

    def __init__(self, seed: int):
        self.seed = _checks.integer("seed", seed, low=0, high=2**32 - 1)
        self._root = jax.random.key(self.seed)

    def __call__(self, purpose: str, *indices) -> jax.Array:
        """The key for ``purpose`` (a non-empty string) and integer or string ``indices``."""
        if not isinstance(purpose, str) or not purpose:
            raise ValueError(f"purpose must be a non-empty string naming what the key is for, got {purpose!r:.60}")
        for i, index in enumerate(indices):
            if isinstance(index, bool) or not isinstance(index, numbers.Integral | str):
                raise ValueError(f"indices[{i}] must be an integer or a string, got {type(index).__name__}")
        encoded = json.dumps([purpose, *(int(i) if isinstance(i, numbers.Integral) else i for i in indices)])
        digest = hashlib.sha256(encoded.encode()).digest()
        key = self._root
        for word in (int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:8], "little")):
            key = jax.random.fold_in(key, word)
        return key


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
