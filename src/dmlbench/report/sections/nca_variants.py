"""Report section of the NCA family (Oneata 2011): the variants' accuracy, cost and visited
fraction, time-accuracy plots on a log time axis (Fig. 5.2 layout) and two-dimensional test-set
projections (Fig. 5.3/5.4 layout) read from the split runs' `arrays.npz` artifacts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import vocabulary as voc
from .. import figures, palette
from ..base import Context, Section, export_table, html_table, split_number

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
                     "train f(A)/N (%)": pct("nca_train_score"), "1-NN (%)": pct(voc.accuracy(1)),
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


RULES = {"accuracy_nca_rule": ("NCA rule", "nca_time_accuracy.png"),
         voc.accuracy(1): ("1-NN", "nca_time_accuracy_1nn.png")}


def time_accuracy(points: pd.DataFrame, rule: str, style: dict):
    """Test accuracy (%) of `rule` against fit time per split (log time axis), a facet per data
    set (Fig. 5.2 layout). `points`: columns dataset, method, fit_wall_s, `rule`."""
    datasets = sorted(points["dataset"].unique())
    methods = sorted(points["method"].unique())
    top = figures.legend_height(len(methods), 6)
    fig, axes = figures.grid(len(datasets), 3.1, 2.8, top=top)
    for ax, dataset in zip(axes, datasets):
        for method in methods:
            part = points[(points["dataset"] == dataset) & (points["method"] == method)]
            part = part[part["fit_wall_s"] > 0].dropna(subset=[rule])
            if part.empty:
                continue
            t, acc = part["fit_wall_s"].to_numpy(), part[rule].to_numpy() * 100
            ax.scatter(t, acc, s=14, **style[method].points())
            _ellipse(ax, np.log10(t), acc, style[method].colour)
        ax.set_xscale("log")
        ax.minorticks_off()  # a log axis's minor ticks cost more than the rest of the figure
        ax.set_title(dataset, fontsize=10)
        ax.set_xlabel("fit time (s, log scale)", fontsize=8)
        ax.set_ylabel(f"{RULES[rule][0]} test accuracy (%)", fontsize=8)
        ax.tick_params(labelsize=7)
    figures.method_legend(fig, style, methods, 6)
    return fig


def projection_arrays(ctx: Context, splits: pd.DataFrame, dataset: str) -> list[tuple[str, dict]]:
    """(method, arrays) of the first split with a 2-D test embedding of each method on
    `dataset` (the split runs' arrays: their MLflow artifact or file `arrays.npz`)."""
    panels = []
    for method, group in sorted(splits[splits["dataset"] == dataset].groupby("method")):
        for run_id in group.sort_values("split", key=split_number)["run_id"]:
            arrays = ctx.runs.split_arrays(run_id)
            if arrays and "test_embedding" in arrays:
                panels.append((method, {k: arrays[k] for k in ("test_embedding",
                                                                "test_labels")}))
                break
    return panels


def projections(panels: list[tuple[str, dict]]):
    """The 2-D test-set embeddings of each method on one data set, a facet each."""
    fig, axes = figures.grid(len(panels), 3.1, 3.0)
    for ax, (method, arrays) in zip(axes, panels):
        Z, labels = arrays["test_embedding"], arrays["test_labels"]
        for i, c in enumerate(np.unique(labels)):
            ax.scatter(Z[labels == c, 0], Z[labels == c, 1], s=6,
                       color=palette.OKABE_ITO[i % len(palette.OKABE_ITO)], label=str(c))
        ax.set_title(method, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[-1].legend(title="class", fontsize="x-small", loc="best")
    return fig


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
    files = export_table(ctx, summary, "nca")
    shown = summary.copy()
    shown.index = [f"{d} / {m}" for d, m in summary.index]
    shown.index.name = "data set / method"
    sec.table(html_table(shown), "NCA family: accuracy and cost", files)
    if "fit_wall_s" in splits:
        style = palette.styles(splits, by="method_name")
        for rule, (words, name) in RULES.items():
            if rule not in splits or splits[rule].isna().all():
                continue
            points = splits[["dataset", "method", "fit_wall_s", rule]]
            sec.figure(ctx.figure(name, time_accuracy, points, rule, style),
                       f"Time against {words} accuracy, one point per split, with the 1-sd "
                       "contour of a Gaussian in (log time, accuracy) per method (Fig. 5.2 "
                       "layout); a colour per variant, a marker per setting.")
    for dataset in sorted(splits["dataset"].unique()):
        panels = projection_arrays(ctx, splits, dataset)
        if panels:
            name = "".join(ch if ch.isalnum() else "_" for ch in dataset)
            sec.figure(ctx.figure(f"nca_projection_{name}.png", projections, panels),
                       f"Two-dimensional projections of a {dataset} test set "
                       "(d = 2 runs; Fig. 5.3/5.4 layout), learnt on its training part.")
    return sec
