"""Seaborn figures of the report; each function saves one PNG and returns its file name."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .. import vocabulary as voc
from .base import save_figure


def error_per_dataset(splits: pd.DataFrame, k: int, methods: list[str], out_dir: Path) -> str:
    """Test error per data set and method: mean over splits with 1 sd error bars."""
    frame = splits.assign(error=splits[voc.error(k)] * 100)
    datasets = sorted(frame["dataset"].unique())
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.12 * len(datasets) * (len(methods) + 2))))
    sns.pointplot(data=frame, y="dataset", x="error", hue="method", order=datasets,
                  hue_order=methods, errorbar="sd", dodge=0.6 if len(methods) > 1 else False,
                  linestyle="none", orient="h",
                  marker="o", markersize=5, capsize=0.08, err_kws={"linewidth": 1}, ax=ax)
    ax.set_xlim(left=0)
    ax.set_xlabel(f"test error of {k}-NN (%), mean ± sd over splits")
    ax.set_ylabel("")
    ax.legend(title="method", bbox_to_anchor=(1.01, 1), loc="upper left")
    return save_figure(fig, out_dir, f"error_per_dataset_k{k}.png")


def average_error(avg: pd.DataFrame, out_dir: Path) -> str:
    """Error averaged over data sets, per method and k (Abou-Moustafa 2017, Fig. 7 layout)."""
    frame = avg.reset_index(names="method").melt(id_vars="method", var_name="k",
                                                 value_name="error")
    fig, ax = plt.subplots(figsize=(7, 3.6))
    sns.barplot(data=frame, x="method", y="error", hue="k", ax=ax)
    ax.set_ylabel("average test error over data sets (%)")
    ax.set_xlabel("")
    ax.tick_params(axis="x", rotation=30)
    return save_figure(fig, out_dir, "average_error.png")


def fit_time(parents: pd.DataFrame, methods: list[str], out_dir: Path) -> str:
    """Mean fit time per data set (points) and method, on a log axis."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    sns.stripplot(data=parents, x="method", y=voc.mean(voc.wall_seconds("fit")), hue="dataset", order=methods,
                  ax=ax, size=6, jitter=0.15)
    ax.set_yscale("log")
    ax.set_ylabel("fit time per split (s, log scale)")
    ax.set_xlabel("")
    ax.tick_params(axis="x", rotation=30)
    ax.legend(title="data set", bbox_to_anchor=(1.01, 1), loc="upper left", fontsize="small")
    return save_figure(fig, out_dir, "fit_time.png")


def skewness_vs_accuracy(parents: pd.DataFrame, hubness_k: int, k: int, out_dir: Path) -> str:
    """Accuracy against N_k skewness, one point per (data set, method)."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    sns.scatterplot(data=parents, x=voc.mean(voc.skewness(hubness_k)), y=voc.mean(voc.accuracy(k)),
                    hue="method", style="method", ax=ax, s=50)
    ax.set_xlabel(f"skewness of N_{hubness_k}")
    ax.set_ylabel(f"{k}-NN test accuracy")
    ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left", fontsize="small")
    return save_figure(fig, out_dir, f"skewness_vs_accuracy_k{k}.png")


def critical_difference(ranks: pd.Series, cd: float, k: int, out_dir: Path) -> str:
    """Demsar's critical-difference diagram: mean ranks on an axis, methods whose ranks differ by
    less than the Nemenyi CD joined by a bar."""
    ranks = ranks.sort_values()
    n = len(ranks)
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.28 * n))
    lo, hi = 1, max(n, 2)
    ax.set_xlim(lo - 0.2, hi + 0.2)
    ax.set_ylim(-0.3 * n - 0.6, 1.1)
    ax.hlines(0, lo, hi, color="black", linewidth=1)
    for tick in range(lo, hi + 1):
        ax.vlines(tick, -0.06, 0.06, color="black", linewidth=1)
        ax.text(tick, 0.15, str(tick), ha="center", va="bottom", fontsize=9)
    for i, (method, rank) in enumerate(ranks.items()):
        y = -0.3 * (i + 1)
        ax.plot([rank, rank], [0, y], color="0.3", linewidth=0.8)
        ax.text(rank + 0.05, y, f"{method} ({rank:.2f})", va="center", fontsize=9)
    # maximal groups of methods within the critical difference of each other
    groups, values = [], ranks.to_numpy()
    for i in range(n):
        j = i
        while j + 1 < n and values[j + 1] - values[i] <= cd:
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in groups):
            groups.append((i, j))
    for level, (i, j) in enumerate(groups):
        y = 0.45 + 0.12 * level
        ax.plot([values[i] - 0.03, values[j] + 0.03], [y, y], color="tab:red", linewidth=3)
    ax.plot([lo, lo + cd], [0.95, 0.95], color="black", linewidth=1.5)
    ax.text(lo + cd / 2, 1.0, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    ax.axis("off")
    return save_figure(fig, out_dir, f"critical_difference_k{k}.png")


def pareto(parents: pd.DataFrame, k: int, front: dict[str, list[str]], out_dir: Path) -> str:
    """Fit time (log) against test error per data set; the Pareto-front methods ringed."""
    datasets = sorted(parents["dataset"].unique())
    cols = min(4, len(datasets))
    rows = int(np.ceil(len(datasets) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    methods = sorted(parents["method"].unique())
    palette = dict(zip(methods, sns.color_palette("tab10", len(methods))))
    for ax, ds in zip(axes.ravel(), datasets):
        sub = parents[parents["dataset"] == ds]
        for _, row in sub.iterrows():
            on_front = row["method"] in front.get(ds, [])
            ax.scatter(row[voc.mean(voc.wall_seconds("fit"))], 100 * row[voc.mean(voc.error(k))],
                       color=palette[row["method"]], s=40 if on_front else 18,
                       edgecolor="black" if on_front else "none", zorder=3)
        ax.set_xscale("log")
        ax.set_title(ds, fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(datasets):]:
        ax.axis("off")
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=palette[m], label=m)
               for m in methods]
    fig.legend(handles=handles, loc="upper center", ncol=min(6, len(methods)), fontsize=8,
               bbox_to_anchor=(0.5, 1.02))
    fig.supxlabel("fit time per split (s, log scale)", fontsize=9)
    fig.supylabel(f"{k}-NN test error (%)", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, out_dir, f"pareto_k{k}.png")
