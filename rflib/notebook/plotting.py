"""One house style for every figure, and ``savefig(name)`` that honours ``FIG_DIR``.

``FIG_DIR`` (environment variable) chooses where figures go; the Makefile points it at ``figures/`` for the
standard and paper scales and at ``build/quick/figures`` for quick runs, so a smoke test never overwrites the
published figures (``tools/run_notebooks.py`` stages them first and copies them there once the run completed). Each
file is written atomically: a temporary file next to it, then ``os.replace``.
"""

from __future__ import annotations

import os
import re
import sys
from functools import partial
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt

from rflib._atomic import write_atomically

# Okabe–Ito: distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "axes.prop_cycle": mpl.cycler(color=PALETTE),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "font.size": 10,
    # Reproducible files: no timestamps or software versions embedded.
    "pdf.compression": 6,
}


def use_style() -> None:
    """Apply the house style to matplotlib's global state."""
    mpl.rcParams.update(STYLE)


def fig_dir() -> Path:
    """The figure directory: ``$FIG_DIR`` if set, else ``figures/`` in the current directory."""
    return Path(os.environ.get("FIG_DIR", "figures"))


def unlabelled_axes(fig) -> list[str]:
    """Panels of ``fig`` that draw data but lack an x or y label (a label on an axis shared with another panel
    counts for both; colour bars and hidden panels are skipped). Returns one description per problem."""
    problems = []
    for i, ax in enumerate(fig.axes):
        if not ax.axison or hasattr(ax, "_colorbar") or not (ax.lines or ax.collections or ax.patches or ax.images):
            continue
        for axis, get, siblings in (
            ("x", lambda a: a.get_xlabel(), ax.get_shared_x_axes().get_siblings(ax)),
            ("y", lambda a: a.get_ylabel(), ax.get_shared_y_axes().get_siblings(ax)),
        ):
            if not any(get(a).strip() for a in siblings):
                problems.append(f"panel {i} ({ax.get_title() or 'untitled'}): no {axis} label")
    return problems


SCALE_IN_CAPTION = re.compile(r"\b(quick|standard|paper) scale\b")


def figure_texts(fig) -> list[str]:
    """Every title-like string of ``fig``: the suptitle, free figure text, and each panel's three titles."""
    texts = [t.get_text() for t in fig.texts]
    if getattr(fig, "_suptitle", None) is not None:
        texts.append(fig._suptitle.get_text())
    texts += [ax.get_title(loc) for ax in fig.axes for loc in ("left", "center", "right")]
    return [t for t in texts if t]


def figure_problems(fig) -> list[str]:
    """What a reader of ``fig`` alone would miss: panels without axis labels (``unlabelled_axes``) and a caption
    (suptitle, figure text or a panel title) that does not say at which scale — quick, standard or paper — the
    figure was made."""
    problems = unlabelled_axes(fig)
    if not any(SCALE_IN_CAPTION.search(text) for text in figure_texts(fig)):
        problems.append("no title says '<quick|standard|paper> scale'")
    return problems


def savefig(name: str, fig=None, formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
    """Save ``fig`` (default: the current figure) as ``<FIG_DIR>/<name>.<fmt>`` for each format; return the paths.

    Metadata that changes between runs (creation date, software version) is stripped so that regenerated files are
    byte-stable where the backend allows. Each file is replaced atomically, so a reader never sees half a figure.
    """
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"name must be a plain file stem such as 'primer_mse', got {name!r}")
    fig = plt.gcf() if fig is None else fig
    if os.environ.get("RFLIB_CHECK_FIGURES"):
        for problem in figure_problems(fig):
            print(f"[figure check] {name}: {problem}", file=sys.stderr)
    out_dir = fig_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    metadata = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None, "Creator": None}}
    paths = []
    for fmt in formats:
        path = out_dir / f"{name}.{fmt}"
        write_atomically(path, partial(fig.savefig, format=fmt, metadata=metadata.get(fmt)))
        paths.append(path)
    return paths
