"""Atomic file writes: readers, and a crash or interrupt half-way, only ever leave the complete old or new file."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path


def temporary_sibling(path: Path) -> Path:
    """A unique hidden name next to ``path`` (same directory, so ``os.replace`` onto ``path`` is atomic)."""
    return path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")


def write_atomically(path: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(temporary)`` to produce the file's content, then move it onto ``path`` with ``os.replace``.

    Concurrent writers each use their own temporary file; the temporary is removed if ``write`` fails.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_sibling(path)
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path
