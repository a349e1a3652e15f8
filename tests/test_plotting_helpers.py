"""The presentation helpers of rflib.notebook.plotting that the notebooks use to draw their figures: what each draws,
where, and the arguments it refuses. They draw exactly the data they are given."""

import matplotlib

matplotlib.use("agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from rflib.notebook import plotting  # noqa: E402


def test_finish_figure_titles_saves_and_adds_legends_only_to_labelled_panels(tmp_path, monkeypatch):
    monkeypatch.setenv("FIG_DIR", str(tmp_path))
    monkeypatch.setattr(plt, "show", lambda: None)
    fig, (labelled, bare) = plt.subplots(1, 2)
    labelled.plot([0, 1], [0, 1], label="a line")
    bare.plot([0, 1], [1, 0])
    paths = plotting.finish_figure(fig, "demo", "Demo (quick scale)", legend=dict(fontsize=7))
    assert [p.name for p in paths] == ["demo.png", "demo.pdf"] and all(p.stat().st_size > 0 for p in paths)
    assert fig._suptitle.get_text() == "Demo (quick scale)"
    assert labelled.get_legend() is not None and labelled.get_legend().get_texts()[0].get_fontsize() == 7
    assert bare.get_legend() is None
    plt.close(fig)


def test_palette_lines_colour_the_ith_curve_with_the_ith_palette_colour_even_when_a_curve_is_empty():
    fig, ax = plt.subplots()
    plotting.palette_lines(ax, {"a": ([1, 10], [1, 100]), "b": ([], []), "c": ([1, 10], [2, 20])}, loglog=True, ms=4)
    colours = [mcolors.to_hex(line.get_color()) for line in ax.lines]
    assert colours == [c.lower() for c in plotting.PALETTE[:3]]
    assert [line.get_label() for line in ax.lines] == ["a", "b", "c"]
    assert ax.get_xscale() == ax.get_yscale() == "log" and ax.lines[0].get_markersize() == 4
    with pytest.raises(ValueError, match="palette"):
        plotting.palette_lines(ax, {str(i): ([0], [0]) for i in range(len(plotting.PALETTE) + 1)})
    plt.close(fig)


def test_sweep_panels_draw_a_line_and_markers_per_series_and_hide_unused_panels():
    grid = {"n": (200, 400), "m": (1, 5, 15), "d": (6,), "c": (0.5, 0.8)}
    res = {(name, x): (0.1 * i, 0.2 * i) for name, xs in grid.items() for i, x in enumerate(xs)}
    labels = {"n": "n (tokens)", "m": "m (count)", "d": "d", "c": "c (units of s)"}
    fig = plotting.sweep_panels({"one": res, "two": res}, grid, labels, ylabel="P (probability)", ylim=(0, 1))
    axes = fig.axes
    assert len(axes) == 6 and [ax.axison for ax in axes] == [True] * 4 + [False] * 2  # 2 × 3 grid, 4 panels
    m_panel = axes[1]
    assert m_panel.get_xlabel() == "m (count)" and m_panel.get_ylim() == (0, 1)
    assert [line.get_label() for line in m_panel.lines] == [
        "one: exact",
        "one: simulated",
        "two: exact",
        "two: simulated",
    ]
    np.testing.assert_allclose(m_panel.lines[1].get_ydata(), [0.0, 0.2, 0.4])  # the simulated values of panel m
    assert axes[0].get_legend() is not None and axes[1].get_legend() is None
    with pytest.raises(ValueError, match=r"xlabels has no label for the swept parameters \['d'\]"):
        plotting.sweep_panels({"one": res}, grid, {"n": "n", "m": "m", "c": "c"}, ylabel="P")
    plt.close("all")


def test_heatmap_ticks_every_value_and_refuses_a_transposed_grid():
    fig, ax = plt.subplots()
    grid = np.arange(6.0).reshape(2, 3) / 6
    im = plotting.heatmap(fig, ax, grid, (1, 5, 15), (6, 10), xlabel="m", ylabel="d", label="P")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "5", "15"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["6", "10"]
    np.testing.assert_array_equal(im.get_array(), grid)
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "P"  # the colour bar
    with pytest.raises(ValueError, match="grid must have shape"):
        plotting.heatmap(fig, ax, grid.T, (1, 5, 15), (6, 10), xlabel="m", ylabel="d", label="P")
    plt.close(fig)


def test_grouped_bars_sit_side_by_side_around_each_tick():
    fig, ax = plt.subplots()
    plotting.grouped_bars(ax, ["00", "01"], {"quick": [1.0, 2.0], "standard": [3.0, 4.0]}, width=0.4)
    centres = [patch.get_x() + patch.get_width() / 2 for patch in ax.patches]
    np.testing.assert_allclose(centres, [-0.2, 0.8, 0.2, 1.2])
    assert [patch.get_height() for patch in ax.patches] == [1.0, 2.0, 3.0, 4.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["00", "01"]
    with pytest.raises(ValueError, match="values for 2 ticks"):
        plotting.grouped_bars(ax, ["00", "01"], {"quick": [1.0]})
    plt.close(fig)


def test_caption_writes_small_text_at_the_bottom_left():
    fig = plt.figure()
    plotting.caption(fig, "standard scale: 10 draws", -0.04)
    (text,) = fig.texts
    assert text.get_text() == "standard scale: 10 draws" and text.get_position() == (0.01, -0.04)
    assert text.get_fontsize() == 8
    with pytest.raises(ValueError, match="text"):
        plotting.caption(fig, "")
    plt.close(fig)


def test_quantile_bands_draw_the_median_the_interquartile_band_and_the_worst_draw():
    fig, ax = plt.subplots()
    samples = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 2.0, 2.0, 2.0, 10.0]])
    plotting.quantile_bands(ax, [1, 2], {"a": samples})
    median_line, worst = ax.lines
    np.testing.assert_array_equal(median_line.get_ydata(), [3.0, 2.0])
    np.testing.assert_array_equal(worst.get_ydata(), [5.0, 10.0])
    assert median_line.get_label() == "a" and len(ax.collections) == 1
    with pytest.raises(ValueError, match="shape"):
        plotting.quantile_bands(ax, [1, 2, 3], {"a": samples})
    plt.close(fig)


def test_log10_errorbars_clip_the_lower_bar_at_a_fraction_of_the_value():
    fig, ax = plt.subplots()
    container = plotting.log10_errorbars(ax, [0, 1], np.array([10.0, 1.0]), np.array([5.0, 2.0]), scale=10.0, fmt="o")
    np.testing.assert_allclose(container.lines[0].get_ydata(), [0.0, -1.0])
    (bars,) = container.lines[2]
    segments = bars.get_segments()
    np.testing.assert_allclose([s[0][1] for s in segments], [np.log10(0.5), np.log10(1e-4)])  # 1 − 2 < 0: clipped
    np.testing.assert_allclose([s[1][1] for s in segments], [np.log10(1.5), np.log10(0.3)])
    plt.close(fig)


def test_errorbar_series_draws_value_and_two_standard_errors_in_palette_order():
    fig, ax = plt.subplots()
    x = np.array([1.0, 2.0, 3.0])
    series = {"a": [(1.0, 0.1, "x"), (2.0, 0.2, "x"), (3.0, 0.3, "x")], "b": [(5.0, 0.5), (6.0, 0.5), (7.0, 0.5)]}
    containers = plotting.errorbar_series(ax, x, series, {"a": "label a"}, shift=0.2, fmt="o")
    assert len(containers) == 2
    line_a, line_b = (c.lines[0] for c in containers)
    np.testing.assert_allclose(np.asarray(line_a.get_xdata(), float), x - 0.1)  # series i at x + shift·(i − 1/2)
    np.testing.assert_allclose(np.asarray(line_b.get_xdata(), float), x + 0.1)
    np.testing.assert_allclose(np.asarray(line_a.get_ydata(), float), [1.0, 2.0, 3.0])
    bars = containers[0].lines[2][0].get_segments()
    np.testing.assert_allclose([s[1, 1] - s[0, 1] for s in bars], [0.4, 0.8, 1.2])  # ±2 s.e.
    assert (
        to_hex(line_a.get_color()) == plotting.PALETTE[0].lower()
        and to_hex(line_b.get_color()) == plotting.PALETTE[1].lower()
    )
    assert [c.get_label() for c in containers] == ["label a", "b"]
    bias = plotting.errorbar_series(ax, x, {"c": [(0, 0, 9.0, 1.0)] * 3}, columns=(2, 3))
    np.testing.assert_allclose(np.asarray(bias[0].lines[0].get_ydata(), float), [9.0, 9.0, 9.0])
    with pytest.raises(ValueError, match="has 2 rows for 3 x values"):
        plotting.errorbar_series(ax, x, {"d": [(1, 0), (2, 0)]})
    plt.close(fig)


def test_errorbar_grid_hides_unused_panels_and_ticks_each_x():
    x = (1, 2, 4)
    panel = {"urn": [(1.0, 0.1)] * 3, "orn": [(0.5, 0.1)] * 3}
    fig = plotting.errorbar_grid(
        {"p1": panel, "p2": panel, "p3": panel}, x, xlabel="b", ylabel="mse", ncol=2, panel_size=(3, 2), fmt="o-"
    )
    axes = fig.axes
    assert len(axes) == 4 and not axes[3].axison
    assert [ax.get_title() for ax in axes[:3]] == ["p1", "p2", "p3"]
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in axes[:3])
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["1", "2", "4"]
    assert axes[0].get_legend() is not None and axes[1].get_legend() is None  # legend="first"
    assert tuple(fig.get_size_inches()) == (6, 4)
    plt.close(fig)
    with pytest.raises(ValueError, match="legend must be"):
        plotting.errorbar_grid({"p": panel}, x, xlabel="b", ylabel="m", ncol=1, panel_size=(3, 2), legend="none")


def test_mean_std_band_and_panels_draw_the_nan_aware_mean_and_std():
    fig, ax = plt.subplots()
    curves = np.array([[1.0, np.nan, 3.0], [3.0, 2.0, 5.0]])
    plotting.mean_std_band(ax, [0, 1, 2], curves, color="k", label="m")
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [2.0, 2.0, 4.0])
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(1.0) and band.max() == pytest.approx(5.0)  # mean ± std = [1, 3], [2, 2], [3, 5]
    plotting.mean_std_band(ax, [0, 1, 2], curves, color="k", label="no band", band=False)
    assert len(ax.collections) == 1
    plt.close(fig)
    fig, axes = plotting.mean_std_panels(
        {"task": {"a": ([0, 1, 2], curves), "b": ([0, 1, 2], curves + 1)}}, xlabel="steps", ylabel="return", extra=1
    )
    assert len(axes) == 2 and len(axes[0].lines) == 2 and not axes[1].lines
    assert axes[0].get_title() == "task" and axes[0].get_legend() is not None
    assert tuple(fig.get_size_inches()) == (10, 3.8)
    plt.close(fig)
    with pytest.raises(ValueError, match="curves must have shape"):
        plotting.mean_std_band(plt.gca(), [0, 1], curves, color="k", label="bad")
    plt.close("all")


def test_method_lines_dash_the_baselines_and_draw_error_bars_only_when_given():
    fig, (plain, bars) = plt.subplots(1, 2)
    x = np.array([16, 32, 64])
    series = {"exact": [0.9, 0.9, 0.9], "GERF": [0.5, 0.7, 0.8]}
    plotting.method_lines(plain, x, series, dashed=("exact",))
    exact, gerf = plain.get_lines()
    assert exact.get_label() == "exact" and exact.get_linestyle() == "--" and gerf.get_linestyle() == "-"
    np.testing.assert_allclose(np.asarray(gerf.get_ydata(), float), series["GERF"])
    plotting.method_lines(bars, x, series, errors={"exact": [0, 0, 0], "GERF": [0.1, 0.2, 0.3]})
    segments = bars.containers[1].lines[2][0].get_segments()
    np.testing.assert_allclose([s[1, 1] - s[0, 1] for s in segments], [0.2, 0.4, 0.6])  # ± the half-widths
    with pytest.raises(ValueError, match="dashed"):
        plotting.method_lines(plain, x, series, dashed=("FAVOR+",))
    with pytest.raises(ValueError, match="errors"):
        plotting.method_lines(plain, x, series, errors={"GERF": [0.1, 0.1, 0.1]})
    plt.close(fig)
