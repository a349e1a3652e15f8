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


def method_lines(ax, x, series: dict, *, dashed=(), errors: dict | None = None, **style) -> None:
    """Draw one line per entry of ``series`` (legend label → y values over ``x``) on ``ax``, in the dict's order,
    with small round markers; labels in ``dashed`` (baselines) are dashed, the others solid. With ``errors``
    (label → error-bar half-widths) the lines are capped error bars. Presentation only; ``style`` goes to matplotlib.
    """
    unknown = sorted(set(dashed) - set(series))
    if unknown:
        raise ValueError(f"dashed names labels that series does not have: {unknown}")
    if errors is not None and set(errors) != set(series):
        raise ValueError(f"errors must have exactly the labels of series, got {sorted(errors)} for {sorted(series)}")
    for label, y in series.items():
        ls = "--" if label in dashed else "-"
        if errors is None:
            ax.plot(x, y, marker="o", ms=3, label=label, ls=ls, **style)
        else:
            ax.errorbar(x, y, yerr=errors[label], marker="o", ms=3, capsize=2, label=label, ls=ls, **style)


def finish_figure(
    fig, name: str, title: str | None = None, *, legend=False, fontsize: int = 10, tight: bool = True
) -> list[Path]:
    """A figure's last steps: a legend on every panel that has labelled artists (if ``legend``: True, or a dict of
    ``ax.legend`` arguments), the suptitle ``title`` (if given, at ``fontsize``), ``tight_layout`` (if ``tight``),
    :func:`savefig` under ``name`` and ``plt.show()``. Returns the written paths. Presentation only."""
    if legend:
        for ax in fig.axes:
            if ax.get_legend_handles_labels()[0]:
                ax.legend(**(legend if isinstance(legend, dict) else {}))
    if title is not None:
        fig.suptitle(title, fontsize=fontsize)
    if tight:
        fig.tight_layout()
    paths = savefig(name, fig)
    plt.show()
    return paths


def palette_lines(ax, curves: dict, fmt: str = "o-", *, loglog: bool = False, **style) -> None:
    """One line per entry of ``curves`` (legend label → (xs, ys)), the i-th in ``PALETTE[i]`` (an empty entry keeps
    its colour slot), drawn with ``fmt`` on linear or log–log axes. Presentation only; ``style`` goes to matplotlib."""
    if len(curves) > len(PALETTE):
        raise ValueError(f"curves has {len(curves)} entries, more than the {len(PALETTE)} palette colours")
    draw = ax.loglog if loglog else ax.plot
    for i, (label, (xs, ys)) in enumerate(curves.items()):
        draw(xs, ys, fmt, color=PALETTE[i], label=label, **style)


def sweep_panels(
    series: dict,
    grid: dict,
    xlabels: dict,
    *,
    ylabel: str,
    ylim=None,
    line: str = "exact",
    points: str = "simulated",
    ncol: int = 3,
    panel_size: tuple[float, float] = (4.6, 3.4),
):
    """A grid of panels, one per swept parameter ``name`` of ``grid`` (name → x values), sharing y. Each entry of
    ``series`` (label → {(name, x): (line value, point value)}) draws, in ``PALETTE`` order, a line labelled
    "<label>: <line>" and markers labelled "<label>: <points>"; x axes are labelled by ``xlabels[name]``, unused
    panels hidden, the legend in the first panel. Returns the figure. Presentation only."""
    names = list(grid)
    missing = sorted(set(names) - set(xlabels))
    if missing:
        raise ValueError(f"xlabels has no label for the swept parameters {missing}")
    ncol = min(ncol, len(names))
    nrow = -(-len(names) // ncol)
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(panel_size[0] * ncol, panel_size[1] * nrow), squeeze=False, sharey=True
    )
    for ax, name in zip(axes.flat, names, strict=False):
        for i, (label, res) in enumerate(series.items()):
            xs = list(grid[name])
            ax.plot(xs, [res[name, x][0] for x in xs], "-", color=PALETTE[i], lw=1.2, label=f"{label}: {line}")
            ax.plot(xs, [res[name, x][1] for x in xs], "o", color=PALETTE[i], ms=3, label=f"{label}: {points}")
        ax.set(xlabel=xlabels[name], ylabel=ylabel, ylim=ylim)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    return fig


def heatmap(fig, ax, grid, xs, ys, *, xlabel: str, ylabel: str, label: str, vmin=0, vmax=1, cmap="viridis"):
    """``grid`` (len(ys), len(xs)) as an image with one tick per value of ``xs`` (columns) and ``ys`` (rows), origin
    lower left, and a colour bar labelled ``label``. Returns the image. Presentation only."""
    shape = getattr(grid, "shape", None)
    if shape != (len(ys), len(xs)):
        raise ValueError(f"grid must have shape (len(ys), len(xs)) = ({len(ys)}, {len(xs)}), got {shape}")
    im = ax.imshow(grid, origin="lower", aspect="auto", vmin=vmin, vmax=vmax, cmap=cmap)
    ax.set_xticks(range(len(xs)), [str(x) for x in xs], rotation=45, fontsize=7)
    ax.set_yticks(range(len(ys)), [str(y) for y in ys], fontsize=7)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.grid(False)
    fig.colorbar(im, ax=ax, label=label)
    return im


def grouped_bars(ax, ticks, groups: dict, *, width: float = 0.4) -> None:
    """Side-by-side bars: one group per entry of ``groups`` (legend label → one value per tick), the i-th in
    ``PALETTE[i]`` and offset by (i − (len(groups) − 1)/2)·``width`` from each tick, labelled ``ticks``."""
    x = list(range(len(ticks)))
    for i, (label, values) in enumerate(groups.items()):
        if len(values) != len(ticks):
            raise ValueError(f"groups[{label!r}] has {len(values)} values for {len(ticks)} ticks")
        offset = (i - (len(groups) - 1) / 2) * width
        ax.bar([t + offset for t in x], values, width, color=PALETTE[i], label=label)
    ax.set_xticks(x, ticks)


def errorbar_series(ax, x, series: dict, labels: dict | None = None, *, columns=(0, 1), shift: float = 0.0, **style):
    """One error-bar series per entry of ``series`` (name → rows, one per x, whose ``columns`` hold (value,
    standard error)), the i-th in ``PALETTE[i]`` with bars of ±2 standard errors and legend label ``labels[name]``
    (default the name); series i is drawn at x + ``shift``·(i − (len(series) − 1)/2) so that bars do not overlap.
    Presentation only; ``style`` goes to ``ax.errorbar``. Returns the containers."""
    if not series or len(series) > len(PALETTE):
        raise ValueError(f"series must have 1 to {len(PALETTE)} entries, got {len(series)}")
    labels = labels or {}
    containers = []
    for i, (name, rows) in enumerate(series.items()):
        rows = [[row[c] for c in columns] for row in rows]
        if len(rows) != len(x):
            raise ValueError(f"series[{name!r}] has {len(rows)} rows for {len(x)} x values")
        value, se = zip(*rows, strict=True) if rows else ((), ())
        at = x if shift == 0 else [xi + shift * (i - (len(series) - 1) / 2) for xi in x]
        yerr = [2 * s for s in se]
        label = labels.get(name, name)
        containers.append(ax.errorbar(at, list(value), yerr=yerr, color=PALETTE[i], label=label, **style))
    return containers


def integer_log_ticks(ax, ticks) -> None:
    """On a log x axis, one major tick per value of ``ticks`` labelled with the value, and no minor ticks."""
    ticks = list(ticks)
    if not ticks:
        raise ValueError("ticks must hold at least one value")
    ax.set_xticks(ticks, [str(t) for t in ticks], minor=False)
    ax.xaxis.set_minor_locator(plt.NullLocator())


def mean_std_band(ax, x, curves, *, color, label: str, band: bool = True) -> None:
    """The mean over runs of ``curves`` (runs, len(x)), NaN-aware, as a line, and (if ``band``) mean ± std as a
    shaded band of the same colour. Presentation only."""
    import numpy as np

    curves = np.asarray(curves, dtype=float)
    if curves.ndim != 2 or curves.shape[1] != len(x):
        raise ValueError(f"curves must have shape (runs, {len(x)}), got {curves.shape}")
    mean = np.nanmean(curves, 0)
    ax.plot(x, mean, color=color, label=label)
    if band:
        std = np.nanstd(curves, 0)
        ax.fill_between(x, mean - std, mean + std, color=color, alpha=0.2)


def errorbar_grid(
    panels: dict,
    x,
    labels: dict | None = None,
    *,
    xlabel: str,
    ylabel: str,
    ncol: int,
    panel_size: tuple[float, float],
    legend: str = "first",
    **style,
):
    """A grid of log–log panels, one per entry of ``panels`` (panel title → {name: rows over ``x`` of (value,
    standard error, …)}), each drawn by :func:`errorbar_series` with one labelled tick per x
    (:func:`integer_log_ticks`); unused panels are hidden; the legend goes in every panel (``legend="all"``) or the
    first (``"first"``). ``ncol`` panels per row of ``panel_size`` inches each. Returns the figure. Presentation only.
    """
    if not panels:
        raise ValueError("panels must hold at least one panel")
    if legend not in ("first", "all"):
        raise ValueError(f"legend must be 'first' or 'all', got {legend!r}")
    nrow = -(-len(panels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(panel_size[0] * ncol, panel_size[1] * nrow), squeeze=False)
    for ax, (title, series) in zip(axes.flat, panels.items(), strict=False):
        errorbar_series(ax, x, series, labels, **style)
        ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=ylabel, title=title)
        integer_log_ticks(ax, x)
        if legend == "all":
            ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    if legend == "first":
        axes.flat[0].legend(fontsize=8)
    return fig


def caption(fig, text: str, y: float = -0.05) -> None:
    """The figure's caption, ``text`` in small type at the bottom left (``y`` in figure coordinates, below the panels
    when negative): what was computed, with which settings, at which scale. Presentation only."""
    if not isinstance(text, str) or not text:
        raise ValueError("text must be a non-empty caption string")
    fig.text(0.01, y, text, fontsize=8)


def quantile_bands(ax, x, samples: dict, *, worst: bool = True) -> None:
    """Per entry of ``samples`` (legend label → (len(x), draws) array), the i-th in ``PALETTE[i]``: the median over
    draws as a line with round markers, the interquartile range as a shaded band and, if ``worst``, the maximum as ×
    markers. Presentation only."""
    import numpy as np

    if len(samples) > len(PALETTE):
        raise ValueError(f"samples has {len(samples)} entries, more than the {len(PALETTE)} palette colours")
    for (label, values), colour in zip(samples.items(), PALETTE, strict=False):
        values = np.asarray(values)
        if values.ndim != 2 or values.shape[0] != len(x):
            raise ValueError(f"samples[{label!r}] must have shape ({len(x)}, draws), got {values.shape}")
        q25, median, q75 = np.percentile(values, [25, 50, 75], axis=1)
        ax.plot(x, median, "o-", color=colour, label=label)
        ax.fill_between(x, q25, q75, color=colour, alpha=0.2)
        if worst:
            ax.plot(x, values.max(axis=1), "x", color=colour, ms=5)


def log10_errorbars(ax, x, values, errors, *, scale=1.0, floor: float = 1e-3, **style):
    """log₁₀(values / scale) as markers with asymmetric error bars from log₁₀(max(values − errors, floor·values) /
    scale) to log₁₀((values + errors) / scale), so that a bar reaching below zero stays drawable on a log axis.
    values, errors: (k,); scale: a number or (k,). Presentation only; ``style`` goes to ``ax.errorbar``."""
    import numpy as np

    values, errors = np.asarray(values), np.asarray(errors)
    if values.shape != errors.shape or values.shape != (len(x),):
        raise ValueError(f"values and errors must both have shape ({len(x)},), got {values.shape} and {errors.shape}")
    lower = np.log10(np.maximum(values - errors, values * floor) / scale)
    upper = np.log10((values + errors) / scale)
    centre = np.log10(values / scale)
    return ax.errorbar(x, centre, yerr=[centre - lower, upper - centre], **style)


def mean_std_panels(
    panels: dict,
    *,
    xlabel: str,
    ylabel: str,
    panel_size: tuple[float, float] = (5, 3.8),
    band: bool = True,
    extra: int = 0,
):
    """One panel per entry of ``panels`` (panel title → {legend label: (x, curves (runs, len(x)))}) in a row, each
    series drawn by :func:`mean_std_band` (with its ± std band if ``band``) in ``PALETTE`` order, with a legend per
    panel; ``extra`` empty panels follow for the caller. Returns (figure, the row of axes). Presentation only."""
    if not panels:
        raise ValueError("panels must hold at least one panel")
    extra = int(extra)
    if extra < 0:
        raise ValueError(f"extra must be ≥ 0, got {extra}")
    n = len(panels) + extra
    fig, axes = plt.subplots(1, n, figsize=(panel_size[0] * n, panel_size[1]), squeeze=False)
    for ax, (title, series) in zip(axes[0], panels.items(), strict=False):
        for i, (label, (x, curves)) in enumerate(series.items()):
            mean_std_band(ax, x, curves, color=PALETTE[i % len(PALETTE)], label=label, band=band)
        ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
        ax.legend(fontsize=8)
    return fig, axes[0]
