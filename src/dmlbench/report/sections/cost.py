"""Time and memory, and cost against accuracy (Pareto fronts of fit time and error)."""

from __future__ import annotations

import pandas as pd

from ... import vocabulary as voc
from .. import figures, palette, ranking, tables
from ..base import Context, Section, export_table, html_table, methods_as_rows


def cost(ctx: Context) -> Section:
    links = ctx.run_links()
    swatches = ranking.colours(ctx)
    order = ranking.order(ctx)
    sec = Section("cost", "Time and memory",
                  "Fit time (wall, s), predict time (wall, s: the test set's k-NN search) and "
                  "the job's peak resident memory (MiB), mean over splits; methods in the "
                  f"leaderboard's order. Every cell links to {ctx.links_to}.")
    for metric, caption, digits in ((voc.wall_seconds("fit"), "Fit time (s)", 3),
                                    (voc.wall_seconds("predict"), "Predict time (s)", 3),
                                    (voc.PEAK_RSS_MB, "Peak memory (MiB)", 0)):
        table = tables.values(ctx.parents, voc.mean(metric))
        files = export_table(ctx, table, metric)
        text = tables.fmt(table[[m for m in order if m in table.columns]], digits)
        sec.table(html_table(text, links=links, swatches=swatches,
                             transpose=methods_as_rows(text, swatches)), caption, files)
    times = pd.DataFrame({"method": ctx.parents["method"], "dataset": ctx.parents["dataset"],
                          "seconds": ctx.parents[voc.mean(voc.wall_seconds("fit"))]})
    sec.figure(ctx.figure("fit_time.png", figures.fit_time, times, palette.styles(ctx.parents)),
               "Fit time per split of each method on each data set (log scale), methods "
               "sorted by their median.")
    return sec


def pareto_front(points: pd.DataFrame) -> list[str]:
    """Methods not dominated in (fit time, error): no other is at least as fast and as accurate
    and strictly better in one."""
    front = []
    for _, p in points.iterrows():
        dominated = ((points["time"] <= p["time"]) & (points["error"] <= p["error"])
                     & ((points["time"] < p["time"]) | (points["error"] < p["error"]))).any()
        if not dominated:
            front.append(p["method"])
    return sorted(front)


def cost_accuracy(ctx: Context) -> Section | None:
    k = ctx.ks[0]
    sec = Section("pareto", "Cost against accuracy",
                  f"Per data set, mean fit time (log scale) against {k}-NN test accuracy; "
                  "ringed points are on the Pareto front (no method is both at least as fast and at "
                  "least as accurate, and better in one).")
    front = {}
    for ds, sub in ctx.parents.groupby("dataset"):
        points = pd.DataFrame({"method": sub["method"], "time": sub[voc.mean(voc.wall_seconds("fit"))],
                               "error": sub[voc.mean(voc.error(k))]}).dropna()
        front[ds] = pareto_front(points)
    table = pd.DataFrame({"Pareto-front methods": {ds: ", ".join(m) for ds, m in front.items()}})
    counts = pd.Series([m for ms in front.values() for m in ms]).value_counts()
    sec.table(html_table(table), f"Pareto-front methods per data set ({k}-NN error vs fit time)",
              export_table(ctx, table, f"pareto_k{k}"))
    sec.note("Times on the front most often: " + ", ".join(f"{m} ({c})" for m, c in counts.items())
             + ".")
    points = pd.DataFrame({"dataset": ctx.parents["dataset"], "method": ctx.parents["method"],
                           "seconds": ctx.parents[voc.mean(voc.wall_seconds("fit"))],
                           "accuracy": 100 * ctx.parents[voc.mean(voc.accuracy(k))]})
    sec.figure(ctx.figure(f"pareto_k{k}.png", figures.pareto, points, k, front,
                          palette.styles(ctx.parents)),
               f"Fit time against {k}-NN accuracy per data set; ringed: on the Pareto front.")
    return sec
