"""The hubness study of Shigeto 2017 (section 5), for any benchmark: N_k skewness per method and
data set in the layout of Table 2 (methods as rows), for the test queries and within the training
set; the N_k distributions on log-log axes for the data sets with the strongest hubness; accuracy
against skewness; and training time in the layout of Table 4 with the speed-up of Move-labeled
over the fastest of LMNN, ITML and DML-eig on each data set.

Everything comes from the runs (`Context.runs`): parent-run means, split-run metrics (`fit.refit_s`) and the
split runs' N_k histograms `curve.nk_hist_n<k>` (written by `evaluate`; in MLflow the runs' artifact
`histograms.json`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ... import vocabulary as voc
from .. import figures, palette, ranking, tables
from ..base import Context, Section, export_table, html_table

#: registered names of the Mahalanobis learners Move-labeled is timed against (Table 4)
METRIC_LEARNERS = ("lmnn", "itml", "dml_eig")
PROPOSED = "move_labeled"
#: how many data sets get an N_k distribution panel (those with the largest skewness)
N_DISTRIBUTION_PANELS = 4


def _by_method(parents: pd.DataFrame, column: str) -> pd.DataFrame:
    """Method x data set table (the paper's layout) of a parent column."""
    return tables.values(parents, column).T


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
        sec.table(html_table(tables.fmt(table, 2), _best_per_column(table, False),
                             swatches=ranking.colours(ctx)),
                  f"N{k} skewness, {what} (Table 2 layout; smallest per data set in bold)",
                  export_table(ctx, table, f"hubness_study_{prefix}skewness_n{k}"))


def histograms(ctx: Context, name: str, datasets: list[str]) -> pd.DataFrame:
    """Pooled N_k histogram per (data set, method) of `datasets`: the split runs' curves
    summed."""
    rows = []
    splits = ctx.splits[ctx.splits["dataset"].isin(datasets)]
    found = ctx.runs.curves(splits["run_id"], name)
    for _, split in splits.iterrows():
        rows += [{"dataset": split["dataset"], "method": split["method"], "nk": m, "count": c}
                 for m, c in enumerate(found.get(split["run_id"], []))]
    if not rows:
        return pd.DataFrame(columns=["dataset", "method", "nk", "count"])
    return pd.DataFrame(rows).groupby(["dataset", "method", "nk"], as_index=False)["count"].sum()


def distribution_figure(hist: pd.DataFrame, datasets: list[str], methods: list[str],
                        style: dict, k: int):
    """p(N_k = m) against m on log-log axes, one facet per data set, one line per method
    (m = 0, the antihubs, cannot be drawn on a log axis; their share is in the main table)."""
    top = figures.legend_height(len(methods), 6)
    fig, axes = figures.grid(len(datasets), 3.1, 2.9, top=top)
    for ax, dataset in zip(axes, datasets):
        for method in methods:
            part = hist[(hist["dataset"] == dataset) & (hist["method"] == method)]
            if part.empty:
                continue
            freq = part["count"] / part["count"].sum()
            keep = (part["nk"] > 0) & (freq > 0)
            ax.plot(part["nk"][keep], freq[keep], markersize=3, linewidth=1,
                    **style[method].line())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.minorticks_off()  # a log axis's minor ticks cost more than the rest of the figure
        ax.set_title(dataset, fontsize=10)
        ax.set_xlabel(f"N{k}", fontsize=9)
        ax.set_ylabel(f"p(N{k})", fontsize=9)
        ax.tick_params(labelsize=8)
    figures.method_legend(fig, style, methods, 6)
    return fig


def accuracy_figure(points: pd.DataFrame, style: dict, accuracy: str, k: int):
    """Left: accuracy against N_k skewness per (data set, method). Right: both as differences
    from the Euclidean metric on the same data set. `points`: columns dataset, method,
    method_name, skewness, accuracy (%)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.8, 4.4))
    methods = sorted(points["method"].unique())
    base = points[points["method_name"] == palette.REFERENCE].set_index("dataset")
    for method in methods:
        part = points[points["method"] == method]
        left.scatter(part["skewness"], part["accuracy"], s=30, **style[method].points())
        if not base.empty and method not in base["method"].values:
            joined = part.join(base, on="dataset", rsuffix="_euc", how="inner")
            right.scatter(joined["skewness"] - joined["skewness_euc"],
                          joined["accuracy"] - joined["accuracy_euc"], s=30,
                          **style[method].points())
    left.set_xlabel(f"N{k} skewness")
    left.set_ylabel(f"test accuracy (%), {accuracy}")
    right.axhline(0, color="grey", linewidth=0.8)
    right.axvline(0, color="grey", linewidth=0.8)
    right.set_xlabel(f"N{k} skewness minus Euclidean's")
    right.set_ylabel("accuracy minus Euclidean's (points)")
    fig.legend(handles=palette.legend_handles(style, methods), loc="center left",
               bbox_to_anchor=(1.0, 0.5), fontsize="small", ncol=1 + len(methods) // 24)
    fig.tight_layout()
    return fig


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
        sec.table(html_table(text, swatches=ranking.colours(ctx)),
                  f"{caption}, mean over splits (Table 4 layout); last row: "
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
    worst = list(ctx.parents.groupby("dataset")[voc.mean(voc.skewness(k))].max()
                 .sort_values(ascending=False).index[:N_DISTRIBUTION_PANELS])
    hist = histograms(ctx, voc.curve(voc.nk_histogram(k)), worst)
    style = palette.styles(ctx.parents)
    _, methods = tables.order(ctx.parents)
    if not hist.empty:
        worst = [d for d in worst if d in set(hist["dataset"])]
        sec.figure(ctx.figure(f"nk_distribution_n{k}.png", distribution_figure, hist, worst,
                              methods, style, k),
                   f"Distribution of N{k} (test queries, pooled over splits) on log-log axes "
                   f"for the {len(worst)} data sets with the largest skewness; hubs make a long "
                   "right tail.")
    accuracy = (voc.ACCURACY_KCV if voc.mean(voc.ACCURACY_KCV) in ctx.parents
                else voc.accuracy(ctx.ks[0]))
    p = ctx.parents
    points = pd.DataFrame({"dataset": p["dataset"], "method": p["method"],
                           "method_name": p["method_name"],
                           "skewness": p[voc.mean(voc.skewness(k))],
                           "accuracy": 100 * p[voc.mean(accuracy)]})
    sec.figure(ctx.figure(f"hubness_study_accuracy_vs_skewness_n{k}.png", accuracy_figure,
                          points, style, accuracy, k),
               f"Test accuracy ({accuracy}) against N{k} skewness, one point per (data set, "
               "method); right: both relative to the Euclidean metric on the same data set.")
    time_tables(ctx, sec)
    return sec
