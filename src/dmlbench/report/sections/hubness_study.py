"""The hubness study of Shigeto 2017 (section 5), for any benchmark: N_k skewness per method and
data set in the layout of Table 2 (methods as rows), for the test queries and within the training
set; the N_k distributions on log-log axes for the data sets with the strongest hubness; accuracy
against skewness; and training time in the layout of Table 4 with the speed-up of Move-labeled
over the fastest of LMNN, ITML and DML-eig on each data set.

Everything comes from MLflow: parent-run means, split-run metrics (`fit.refit_s`) and the
split runs' metric histories `curve.nk_hist_n<k>` (the N_k histogram written by `evaluate`).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from ... import vocabulary as voc
from .. import runs, tables
from ..base import Context, Section, export_table, html_table, save_figure

#: registered names of the Mahalanobis learners Move-labeled is timed against (Table 4)
METRIC_LEARNERS = ("lmnn", "itml", "dml_eig")
PROPOSED = "move_labeled"
#: how many data sets get an N_k distribution panel (those with the largest skewness)
N_DISTRIBUTION_PANELS = 4


def _by_method(parents: pd.DataFrame, column: str) -> pd.DataFrame:
    """Method x data set table (the paper's layout) of a parent column."""
    return tables.values(parents, column).T


def _colours(methods: list[str]) -> dict[str, tuple]:
    """One colour per method, the same in every figure of the section."""
    cmap = plt.get_cmap("tab10" if len(methods) <= 10 else "tab20")
    return {m: cmap(i % cmap.N) for i, m in enumerate(methods)}


def _best_per_column(table: pd.DataFrame, higher_is_better: bool) -> pd.DataFrame:
    return tables.best_per_row(table.T, higher_is_better).T


def skewness_tables(ctx: Context, sec: Section) -> None:
    k = ctx.hubness_k
    for prefix, what in (("", "test queries against the training points"),
                         ("train_", "training points against the other training points "
                                    "(leave-one-out)")):
        column = voc.mean(prefix + voc.skewness(k))
        if column not in ctx.parents:
            continue
        table = _by_method(ctx.parents, column)
        sec.table(html_table(tables.fmt(table, 2), _best_per_column(table, False)),
                  f"N{k} skewness, {what} (Table 2 layout; smallest per data set in bold)",
                  export_table(ctx, table, f"hubness_study_{prefix}skewness_n{k}"))


def histograms(ctx: Context, name: str) -> pd.DataFrame:
    """Pooled N_k histogram per (data set, method): the split runs' curves summed."""
    rows = []
    for _, split in ctx.splits.iterrows():
        counts = runs.curve(split["run_id"], name)
        rows += [{"dataset": split["dataset"], "method": split["method"], "nk": m, "count": c}
                 for m, c in enumerate(counts)]
    if not rows:
        return pd.DataFrame(columns=["dataset", "method", "nk", "count"])
    return pd.DataFrame(rows).groupby(["dataset", "method", "nk"], as_index=False)["count"].sum()


def distribution_figure(ctx: Context, hist: pd.DataFrame, datasets: list[str], k: int,
                        out_dir: Path) -> str:
    """p(N_k = m) against m on log-log axes, one panel per data set, one line per method
    (m = 0, the antihubs, cannot be drawn on a log axis; their share is in the main table)."""
    _, methods = tables.order(ctx.parents)
    colours = _colours(methods)
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets), 3.6), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        for method in methods:
            part = hist[(hist["dataset"] == dataset) & (hist["method"] == method)]
            if part.empty:
                continue
            freq = part["count"] / part["count"].sum()
            keep = (part["nk"] > 0) & (freq > 0)
            ax.plot(part["nk"][keep], freq[keep], marker="o", markersize=3, linewidth=1,
                    label=method, color=colours[method])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(dataset)
        ax.set_xlabel(f"N{k}")
    axes[0][0].set_ylabel(f"p(N{k})")
    axes[0][-1].legend(bbox_to_anchor=(1.01, 1), loc="upper left", fontsize="small")
    return save_figure(fig, out_dir, f"nk_distribution_n{k}.png")


def accuracy_figure(ctx: Context, accuracy: str, k: int, out_dir: Path) -> str:
    """Left: accuracy against N_k skewness per (data set, method). Right: both as differences
    from the Euclidean metric on the same data set."""
    p = ctx.parents
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    _, methods = tables.order(p)
    markers = {m: "os^DvP*Xph<>"[i % 12] for i, m in enumerate(methods)}
    colours = _colours(methods)
    base = p[p["method_name"] == "euclidean"].set_index("dataset")
    for method in methods:
        part = p[p["method"] == method]
        left.scatter(part[voc.mean(voc.skewness(k))], 100 * part[voc.mean(accuracy)],
                     marker=markers[method], color=colours[method], label=method, s=30)
        if not base.empty and method not in base["method"].values:
            joined = part.join(base, on="dataset", rsuffix="_euc", how="inner")
            right.scatter(joined[voc.mean(voc.skewness(k))] - joined[voc.mean(voc.skewness(k)) + "_euc"],
                          100 * (joined[voc.mean(accuracy)] - joined[voc.mean(accuracy) + "_euc"]),
                          marker=markers[method], color=colours[method], label=method, s=30)
    left.set_xlabel(f"N{k} skewness")
    left.set_ylabel(f"test accuracy (%), {accuracy}")
    right.axhline(0, color="grey", linewidth=0.8)
    right.axvline(0, color="grey", linewidth=0.8)
    right.set_xlabel(f"N{k} skewness minus Euclidean's")
    right.set_ylabel("accuracy minus Euclidean's (points)")
    left.legend(fontsize="small")
    return save_figure(fig, out_dir, f"hubness_study_accuracy_vs_skewness_n{k}.png")


def refit_time(ctx: Context) -> pd.DataFrame | None:
    """Data set x method mean time of the final fit with the chosen hyper-parameters: the
    `fit.refit_s` a method records when it selects them by cross-validation, else the fit time."""
    if "fit.refit_s" not in ctx.splits:
        return None
    per_split = ctx.splits["fit.refit_s"].fillna(ctx.splits["fit_wall_s"])
    frame = ctx.splits.assign(refit=per_split).groupby(["dataset", "method"], as_index=False)
    means = frame["refit"].mean()
    datasets, methods = tables.order(ctx.parents)
    return means.pivot(index="dataset", columns="method", values="refit").reindex(
        index=datasets, columns=methods)


def speedup(times: pd.DataFrame, parents: pd.DataFrame) -> pd.Series:
    """Per data set: time of the fastest of LMNN, ITML, DML-eig / time of Move-labeled."""
    names = parents.drop_duplicates("method").set_index("method")["method_name"]
    learners = [m for m in times.columns if names.get(m) in METRIC_LEARNERS]
    proposed = [m for m in times.columns if names.get(m) == PROPOSED]
    if not learners or not proposed:
        return pd.Series(dtype=float)
    return times[learners].min(axis=1) / times[proposed].min(axis=1)


def time_tables(ctx: Context, sec: Section) -> None:
    candidates = [("fit_wall_s", tables.values(ctx.parents, voc.mean(voc.wall_seconds("fit"))),
                   "training time including hyper-parameter selection (s)")]
    refit = refit_time(ctx)
    if refit is not None:
        candidates.insert(0, ("refit_s", refit,
                              "training time with the chosen hyper-parameters (s)"))
    for name, times, caption in candidates:
        table = times.T
        ratio = speedup(times, ctx.parents)
        if not ratio.empty:
            table.loc["speed-up of Move-labeled"] = ratio
        text = tables.fmt(table, 3)
        if not ratio.empty:
            text.loc["speed-up of Move-labeled"] = ratio.map(
                lambda v: "–" if pd.isna(v) else f"{v:.0f}x")
        sec.table(html_table(text), f"{caption}, mean over splits (Table 4 layout); last row: "
                  "fastest of LMNN, ITML, DML-eig divided by Move-labeled",
                  export_table(ctx, table, f"hubness_study_time_{name}"))


def hubness_study(ctx: Context) -> Section | None:
    k = ctx.hubness_k
    if voc.mean(voc.skewness(k)) not in ctx.parents:
        return None
    sec = Section("hubness-study", "Hubness study (Shigeto 2017)",
                  f"How each method shapes the N{k} distribution (N{k}(i): how often training "
                  f"point i is among the {k} nearest training points of a query), as in "
                  "section 5 of Shigeto 2017: skewness (population moments, smaller = fewer "
                  "hubs) for the test queries and within the training set, the N_k "
                  "distributions of the data sets with the most hubness, accuracy against "
                  "skewness, and training time.")
    skewness_tables(ctx, sec)
    out_dir = ctx.figure_dir
    hist = histograms(ctx, voc.curve(voc.nk_histogram(k)))
    if not hist.empty:
        worst = (ctx.parents.groupby("dataset")[voc.mean(voc.skewness(k))].max()
                 .sort_values(ascending=False).index[:N_DISTRIBUTION_PANELS])
        sec.figure(distribution_figure(ctx, hist, list(worst), k, out_dir),
                   f"Distribution of N{k} (test queries, pooled over splits) on log-log axes "
                   f"for the {len(worst)} data sets with the largest skewness; hubs make a long "
                   "right tail.")
    accuracy = (voc.ACCURACY_KCV if voc.mean(voc.ACCURACY_KCV) in ctx.parents
                else voc.accuracy(ctx.ks[0]))
    sec.figure(accuracy_figure(ctx, accuracy, k, out_dir),
               f"Test accuracy ({accuracy}) against N{k} skewness, one point per (data set, "
               "method); right: both relative to the Euclidean metric on the same data set.")
    time_tables(ctx, sec)
    return sec
