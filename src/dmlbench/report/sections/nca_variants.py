"""Report section of the NCA family (Oneata 2011): the variants' accuracy, cost and visited
fraction, time-accuracy plots on a log time axis (Fig. 5.2 layout) and two-dimensional test-set
projections (Fig. 5.3/5.4 layout) read from the split runs' `arrays.npz` artifacts."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .. import runs
from ..base import Context, Section, export_table, html_table, save_figure

FAMILY = "nca"


def _summary(ctx: Context) -> pd.DataFrame:
    """One row per (data set, method) of the family: means (± sd) over splits."""
    splits = ctx.splits[ctx.splits["family"] == FAMILY]
    rows = []
    for (dataset, method), group in splits.groupby(["dataset", "method"], sort=True):
        def pct(col):
            if col not in group or group[col].isna().all():
                return "–"
            v = group[col].dropna() * 100
            return f"{v.mean():.2f} ± {v.std(ddof=1) if v.size > 1 else 0.0:.2f}"

        def mean(col, digits, scale=1.0):
            if col not in group or group[col].isna().all():
                return "–"
            return f"{group[col].mean() * scale:.{digits}f}"

        rows.append({"data set": dataset, "method": method, "splits": len(group),
                     "train f(A)/N (%)": pct("nca_train_score"), "1-NN (%)": pct("accuracy_k1"),
                     "NCA rule (%)": pct("accuracy_nca_rule"), "fit (s)": mean("fit_wall_s", 2),
                     "to convergence (s)": mean("fit.time_to_convergence_s", 2),
                     "iterations": mean("fit.n_iter", 0),
                     "visited (%)": mean("fit.visited_fraction", 1, 100.0)})
    return pd.DataFrame(rows).set_index(["data set", "method"])


def _ellipse(ax, u: np.ndarray, v: np.ndarray, color) -> None:
    """1-sd equidensity contour of a Gaussian fitted to (log10 time, accuracy), drawn on the
    log time axis (hence its deformed look, as in Fig. 5.2)."""
    if u.size < 3:
        return
    cov = np.cov(np.vstack([u, v]))
    evals, evecs = np.linalg.eigh(cov)
    t = np.linspace(0, 2 * np.pi, 100)
    circle = evecs @ (np.sqrt(np.maximum(evals, 0))[:, None] * np.vstack([np.cos(t), np.sin(t)]))
    ax.plot(10 ** (u.mean() + circle[0]), v.mean() + circle[1], color=color, lw=1, alpha=0.7)


def time_accuracy(splits: pd.DataFrame, out_dir) -> str | None:
    """Test accuracy against fit time per split (log time axis), a column per data set, the NCA
    rule on the top row and 1-NN below (Fig. 5.2 layout, with both rules)."""
    datasets = sorted(splits["dataset"].unique())
    methods = sorted(splits["method"].unique())
    palette = dict(zip(methods, sns.color_palette("tab10", len(methods))))
    rules = [c for c in ("accuracy_nca_rule", "accuracy_k1") if c in splits]
    fig, axes = plt.subplots(len(rules), len(datasets), squeeze=False,
                             figsize=(3.6 * len(datasets) + 1.5, 3.2 * len(rules)))
    for r, rule in enumerate(rules):
        for c, dataset in enumerate(datasets):
            ax = axes[r, c]
            for method in methods:
                part = splits[(splits["dataset"] == dataset) & (splits["method"] == method)]
                part = part[part["fit_wall_s"] > 0]
                if part.empty:
                    continue
                t, acc = part["fit_wall_s"].to_numpy(), part[rule].to_numpy() * 100
                ax.scatter(t, acc, s=14, color=palette[method], label=method)
                _ellipse(ax, np.log10(t), acc, palette[method])
            ax.set_xscale("log")
            ax.set_title(dataset if r == 0 else "")
            ax.set_xlabel("fit time (s, log scale)")
            ax.set_ylabel(("NCA rule" if rule == "accuracy_nca_rule" else "1-NN")
                          + " test accuracy (%)")
    seen = {}
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    fig.legend(list(seen.values()), list(seen.keys()), loc="center left",
               bbox_to_anchor=(1.0, 0.5), fontsize="small")
    fig.tight_layout()
    return save_figure(fig, out_dir, "nca_time_accuracy.png")


def projections(splits: pd.DataFrame, dataset: str, out_dir) -> str | None:
    """The 2-D test-set embeddings of each method on `dataset` (first split with arrays)."""
    panels = []
    for method, group in sorted(splits[splits["dataset"] == dataset].groupby("method")):
        for run_id in group.sort_values("run_id")["run_id"]:
            arrays = runs.split_arrays(run_id)
            if arrays and "test_embedding" in arrays:
                panels.append((method, arrays))
                break
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), squeeze=False, figsize=(3.4 * len(panels), 3.3))
    for ax, (method, arrays) in zip(axes[0], panels):
        Z, labels = arrays["test_embedding"], arrays["test_labels"]
        classes = np.unique(labels)
        colors = sns.color_palette("tab10", max(len(classes), 3))
        for i, c in enumerate(classes):
            ax.scatter(Z[labels == c, 0], Z[labels == c, 1], s=6, color=colors[i % 10],
                       label=str(c))
        ax.set_title(method)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0, -1].legend(title="class", fontsize="x-small", bbox_to_anchor=(1.01, 1),
                       loc="upper left")
    fig.tight_layout()
    name = "".join(ch if ch.isalnum() else "_" for ch in dataset)
    return save_figure(fig, out_dir, f"nca_projection_{name}.png")


def section(ctx: Context) -> Section | None:
    if "family" not in ctx.splits or not (ctx.splits["family"] == FAMILY).any():
        return None
    splits = ctx.splits[ctx.splits["family"] == FAMILY]
    sec = Section("nca", "NCA and its fast variants (Oneata 2011)",
                  "Per data set and method, mean ± sd over splits: the training objective f(A)/N "
                  "(the thesis' train score), test accuracy of 1-NN and of the NCA rule "
                  "(eq. 3.25), fit time, time until the returned iterate, iterations and the "
                  "share of point pairs visited per evaluation (1 for dense computations).")
    summary = _summary(ctx)
    sec.table(html_table(summary), "NCA family: accuracy and cost", export_table(ctx, summary, "nca"))
    figures_dir = ctx.figure_dir
    if "fit_wall_s" in splits:
        src = time_accuracy(splits, figures_dir)
        sec.figure(src, "Time against accuracy, one point per split, with the 1-sd "
                   "contour of a Gaussian in (log time, accuracy) per method (Fig. 5.2 layout).")
    for dataset in sorted(splits["dataset"].unique()):
        src = projections(splits, dataset, figures_dir)
        if src:
            sec.figure(src, f"Two-dimensional projections of a {dataset} test set "
                       "(d = 2 runs; Fig. 5.3/5.4 layout), learnt on its training part.")
    return sec
