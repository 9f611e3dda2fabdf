"""The report's shared figures, and the grid every faceted figure is laid out on.

Each function draws one matplotlib figure from the data it is given and returns it; the
context's renderer saves it (`Context.figure`). Methods are drawn in the palette of
`report.palette` (a colour per family, a marker per method). Faceted figures use `grid`: at
most `base.MAX_WIDTH_IN` wide, axes with their own tick labels on every facet, and split into
pages (`pages`) rather than grow beyond `base.MAX_HEIGHT_PX`.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .base import DPI, FIXED_LAYOUT, MAX_HEIGHT_PX, MAX_WIDTH_IN
from .palette import BLACK, REFERENCE, Style, family_colour, legend_handles

#: inches a figure's title and legend rows take above its facets
LEGEND_IN = 0.9


def grid(n: int, panel_width: float, panel_height: float, top: float = 0.0,
         left: float = 0.75, bottom: float = 0.55, title: float = 0.3, right: float = 0.2):
    """A figure of `n` facets, each a cell of `panel_width` x `panel_height` inches holding its
    axes with room for tick labels and axis labels (`left`, `bottom`), a title above
    (`title`) and a gap (`right`); as many cells per row as fit `MAX_WIDTH_IN`, and `top`
    inches above them for a legend. Returns (figure, the n axes). The margins are fixed, not
    measured: laying out a few hundred tick labels by their drawn size (matplotlib's
    tight_layout) costs as much as drawing the figure."""
    cols = max(1, min(n, int(MAX_WIDTH_IN // panel_width)))
    rows = math.ceil(n / cols)
    width, height = cols * panel_width, rows * panel_height + top
    fig = plt.figure(figsize=(width, height))
    fig.set_label(FIXED_LAYOUT)  # saved as laid out here (`base.save_figure`)
    axes = []
    for i in range(n):
        r, c = divmod(i, cols)
        x0 = c * panel_width + left
        y0 = height - top - (r + 1) * panel_height + bottom
        axes.append(fig.add_axes((x0 / width, y0 / height,
                                  (panel_width - left - right) / width,
                                  (panel_height - bottom - title) / height)))
    return fig, axes


def pages(items: list, panel_width: float, panel_height: float,
          top: float = LEGEND_IN) -> list[list]:
    """`items` (one facet each) cut into consecutive pages whose `grid` stays under
    `MAX_HEIGHT_PX`."""
    cols = max(1, int(MAX_WIDTH_IN // panel_width))
    rows = max(1, int((MAX_HEIGHT_PX / DPI - top) // panel_height))
    size = cols * rows
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def legend_height(entries: int, ncol: int) -> float:
    """Inches a legend of `entries` in `ncol` columns takes above a figure."""
    return 0.35 + 0.24 * math.ceil(entries / ncol)


def method_legend(fig, style: dict[str, Style], methods: list[str], ncol: int) -> None:
    """A legend of the methods' colours and markers above the figure."""
    fig.legend(handles=legend_handles(style, methods), loc="upper center", ncol=ncol,
               frameon=False, fontsize="small", bbox_to_anchor=(0.5, 1.0))


def family_legend(fig, families: dict[str, str], reference: bool = True, **kwargs) -> None:
    """A legend of the method families' colours (and the reference metric's black) above the
    figure."""
    handles = [plt.Line2D([], [], marker="s", linestyle="", markersize=8,
                          color=family_colour(f), label=f) for f in sorted(set(families.values()))]
    if reference:
        handles.insert(0, plt.Line2D([], [], marker="s", linestyle="", markersize=8,
                                     color=BLACK, label=REFERENCE))
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), frameon=False,
               title="family", fontsize="small", bbox_to_anchor=(0.5, 1.0), **kwargs)


def accuracy_per_dataset(stats: pd.DataFrame, methods: list[str], style: dict[str, Style],
                         families: dict[str, str], k: int, reference: str | None):
    """k-NN test accuracy (%) per data set (a facet each): each method's mean over the splits
    with 1 sd bars, methods in the order of `methods` (the leaderboard's); the dashed line is
    the reference metric's mean. `stats`: columns dataset, method, mean, sd (in %)."""
    datasets = list(dict.fromkeys(stats["dataset"]))
    height = panel_height(stats)
    longest = max((len(str(m)) for m in stats["method"]), default=4)
    fig, axes = grid(len(datasets), 4.1, height, top=LEGEND_IN, left=0.2 + 0.065 * longest)
    for ax, dataset in zip(axes, datasets):
        part = stats[stats["dataset"] == dataset].set_index("method")
        shown = [m for m in methods if m in part.index][::-1]
        for y, method in enumerate(shown):
            row = part.loc[method]
            ax.errorbar(row["mean"], y, xerr=row["sd"] if np.isfinite(row["sd"]) else None,
                        markersize=5, capsize=2, elinewidth=1, **style[method].points())
        if reference in part.index:
            ax.axvline(part.at[reference, "mean"], color=BLACK, linestyle="--", linewidth=0.8)
        ax.set_yticks(range(len(shown)), shown, fontsize=8)
        ax.set_ylim(-0.7, len(shown) - 0.3)
        ax.set_title(dataset, fontsize=10)
        ax.tick_params(axis="x", labelsize=8, labelbottom=True)
        ax.set_xlabel(f"{k}-NN accuracy (%)", fontsize=8)
    family_legend(fig, families)
    return fig


def panel_height(stats: pd.DataFrame) -> float:
    """Facet height (in) of a method-per-row facet: the most methods a data set has."""
    most = stats.groupby("dataset")["method"].nunique().max() if len(stats) else 1
    return 0.75 + 0.17 * most


def average_error(avg: pd.DataFrame, style: dict[str, Style]):
    """Error (%) averaged over the data sets per method, a marker per k, methods sorted by
    the first k (the quantity of Fig. 7 of Abou-Moustafa 2017: error, not accuracy)."""
    order = avg.sort_values(avg.columns[0], ascending=False).index
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.28 * len(order)))
    markers = ["o", "s", "^", "D", "v", "P"]
    colours = [style[m].colour for m in order]
    for i, column in enumerate(avg.columns):  # the first k filled, the others hollow
        ax.scatter(avg.loc[order, column], range(len(order)), s=36, marker=markers[i % 6],
                   facecolors=colours if i == 0 else "none", edgecolors=colours, label=column)
    ax.set_yticks(range(len(order)), order)
    ax.set_xlabel("test error averaged over the data sets (%)")
    ax.legend(title="k-NN", loc="lower right", fontsize="small")
    return fig


def fit_time(times: pd.DataFrame, style: dict[str, Style]):
    """Mean fit time per split of each (data set, method), a point per data set, methods
    sorted by their median; log scale. `times`: columns method, dataset, seconds."""
    order = times.groupby("method")["seconds"].median().sort_values(ascending=False).index
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.28 * len(order)))
    jitter = np.random.default_rng(0)
    for y, method in enumerate(order):
        seconds = times.loc[times["method"] == method, "seconds"].dropna()
        seconds = seconds[seconds > 0]
        ax.scatter(seconds, y + jitter.uniform(-0.18, 0.18, len(seconds)), s=14, alpha=0.7,
                   **style[method].points())
        if len(seconds):
            ax.plot([seconds.median()] * 2, [y - 0.3, y + 0.3], color=BLACK, linewidth=1.5)
    ax.set_xscale("log")
    ax.minorticks_off()  # a log axis's minor ticks cost more than the rest of the figure
    ax.set_yticks(range(len(order)), order)
    ax.set_xlabel("fit time per split (s, log scale); a point per data set, bar: median")
    return fig


def skewness_vs_accuracy(points: pd.DataFrame, style: dict[str, Style], hubness_k: int, k: int):
    """Accuracy (%) against N_k skewness, one point per (data set, method). `points`: columns
    method, skewness, accuracy."""
    fig, ax = plt.subplots(figsize=(9.5, 5))
    methods = sorted(points["method"].unique())
    for method in methods:
        part = points[points["method"] == method]
        ax.scatter(part["skewness"], part["accuracy"], s=36, alpha=0.85, **style[method].points())
    ax.set_xlabel(f"skewness of N{hubness_k}")
    ax.set_ylabel(f"{k}-NN test accuracy (%)")
    ax.legend(handles=legend_handles(style, methods), bbox_to_anchor=(1.01, 1),
              loc="upper left", fontsize="small", ncol=1 if len(methods) <= 18 else 2)
    return fig


def critical_difference(ranks: pd.Series, cd: float, colours: dict[str, str]):
    """Demsar's critical-difference diagram: mean ranks on an axis (1 = best, at the left),
    methods whose ranks differ by less than the Nemenyi CD joined by a bar; method names in
    their family's colour."""
    ranks = ranks.sort_values()
    n = len(ranks)
    fig, ax = plt.subplots(figsize=(6.2, 1.0 + 0.24 * n))
    lo, hi = 1, max(n, 2)
    ax.set_xlim(lo - 0.3, hi + 0.3)
    ax.set_ylim(-0.3 * n - 0.5, 1.2)
    ax.hlines(0, lo, hi, color=BLACK, linewidth=1)
    for tick in range(lo, hi + 1):
        ax.vlines(tick, -0.06, 0.06, color=BLACK, linewidth=1)
        ax.text(tick, 0.12, str(tick), ha="center", va="bottom", fontsize=8)
    half = (n + 1) // 2
    for i, (method, rank) in enumerate(ranks.items()):
        left = i < half  # the better half labelled on the left, the rest on the right
        y = -0.3 * ((i if left else n - 1 - i) + 1)
        end = lo - 0.2 if left else hi + 0.2
        ax.plot([rank, rank, end], [0, y, y], color="0.45", linewidth=0.8)
        ax.text(end + (-0.05 if left else 0.05), y, f"{method} ({rank:.2f})",
                ha="right" if left else "left", va="center", fontsize=9,
                color=colours.get(method, BLACK))
    groups, values = [], ranks.to_numpy()
    for i in range(n):  # maximal groups of methods within the critical difference of each other
        j = i
        while j + 1 < n and values[j + 1] - values[i] <= cd:
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in groups):
            groups.append((i, j))
    for level, (i, j) in enumerate(groups):
        y = -0.12 - 0.1 * level
        ax.plot([values[i] - 0.03, values[j] + 0.03], [y, y], color="0.2", linewidth=2.5)
    ax.plot([lo, lo + cd], [0.85, 0.85], color=BLACK, linewidth=1.5)
    ax.text(lo + cd / 2, 0.9, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    ax.axis("off")
    return fig


def pareto(points: pd.DataFrame, k: int, front: dict[str, list[str]], style: dict[str, Style]):
    """Fit time (log) against test accuracy per data set; the Pareto-front methods ringed.
    `points`: columns dataset, method, seconds, accuracy (%)."""
    datasets = sorted(points["dataset"].unique())
    methods = sorted(points["method"].unique())
    top = legend_height(len(methods), 6)
    fig, axes = grid(len(datasets), 3.1, 2.6, top=top)
    for ax, ds in zip(axes, datasets):
        part = points[points["dataset"] == ds]
        ringed = part["method"].isin(front.get(ds, []))
        for method, row in part.groupby("method"):  # one call per marker shape
            on = ringed[row.index]
            ax.scatter(row["seconds"], row["accuracy"], s=[46 if o else 20 for o in on],
                       edgecolors=[BLACK if o else "none" for o in on], zorder=3,
                       **style[method].points())
        ax.set_xscale("log")
        ax.minorticks_off()  # a log axis's minor ticks cost more than the rest of the figure
        ax.set_title(ds, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("fit time per split (s, log)", fontsize=7)
        ax.set_ylabel(f"{k}-NN accuracy (%)", fontsize=7)
    method_legend(fig, style, methods, 6)
    return fig
