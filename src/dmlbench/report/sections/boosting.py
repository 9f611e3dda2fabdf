"""Report section for the evaluation of Chang 2012: classification rate against the dimensionality
of the mapped vector (the layout of Figs. 2-3) with the best average rate and the "most effective
dimensionality" of every method, and the loss bound B(M_t) against rank(M_t) of the boosted
metrics (Figs. 4-5). It reads the runs' metric histories: the parents' mean sweep curves
(`curve.sweep_accuracy_k<k>`) and the split runs' `fit.bound` / `fit.rank_path`."""

from __future__ import annotations

import pandas as pd

from ... import vocabulary as voc
from .. import figures, palette, papers, ranking, tables
from ..base import Context, Section, export_table, html_table, methods_as_rows, split_number

#: the paper's claims (section 4.2); its results are figures, so they are quoted, not tabulated

#: (boosted, counterpart) registered names compared in the paper
PAIRS = [("boostmdm_k", "i_mfa"), ("boostmdm_g", "gi_relief"), ("i_mfa", "mfa")]
MAX_PATHS = 10


def sweep_frame(ctx: Context, k: int) -> pd.DataFrame:
    """Long table (dataset, method, dim, rate) of the parents' mean sweep curves for k."""
    column = voc.mean(voc.sweep_best_accuracy(k))
    if column not in ctx.parents:
        return pd.DataFrame()
    swept = ctx.parents[ctx.parents[column].notna()]
    found = ctx.runs.curves(swept["run_id"], voc.curve(voc.sweep_accuracy(k)))
    rows = []
    for _, p in swept.iterrows():
        for dim, rate in enumerate(found.get(p["run_id"], []), 1):
            rows.append({"dataset": p["dataset"], "method": p["method"], "dim": dim,
                         "rate": 100 * rate})
    return pd.DataFrame(rows)


def best_of_mean_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method): the best average rate and the smallest dimensionality reaching it,
    the two numbers the paper prints in parentheses."""
    best = curves.loc[curves.groupby(["dataset", "method"])["rate"].idxmax()]
    return best.set_index(["dataset", "method"])[["rate", "dim"]]


def sweep_figure(curves: pd.DataFrame, best: pd.DataFrame, methods: list[str], style: dict,
                 k: int):
    """A facet per data set, rate against dimensionality, legend 'method (best, dim)'."""
    datasets = sorted(curves["dataset"].unique())
    fig, axes = figures.grid(len(datasets), 4.1, 3.4)
    for ax, ds in zip(axes, datasets):
        for method in methods:
            part = curves[(curves["dataset"] == ds) & (curves["method"] == method)]
            if part.empty:
                continue
            rate, dim = best.loc[(ds, method)]
            line = style[method].line()
            if len(part) >= 40:
                line["marker"] = None
            ax.plot(part["dim"], part["rate"], markersize=3, linewidth=1, **line,
                    label=f"{method} ({rate:.1f}, {int(dim)})")
        ax.set_title(ds, fontsize=10)
        ax.set_xlabel("dimensionality of the mapped vector", fontsize=8)
        ax.set_ylabel(f"{k}-NN classification rate (%)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize="xx-small", loc="lower right")
    return fig


def loss_paths(ctx: Context) -> pd.DataFrame:
    """Long table (dataset, method, method_name, run, rank, bound) of B(M_t) against rank(M_t)
    of the split runs that boosted (fit.n_boost_iter logged: the BoostMDM family), at most
    MAX_PATHS splits per (data set, method)."""
    boosted = _boosted_runs(ctx)
    if boosted.empty:
        return pd.DataFrame()
    shown = pd.concat([group.sort_values("split", key=split_number).head(MAX_PATHS)
                       for _, group in boosted.groupby(["dataset", "method"])])
    bounds = ctx.runs.curves(shown["run_id"], "fit.bound")
    ranks = ctx.runs.curves(shown["run_id"], "fit.rank_path")
    rows = []
    for _, run in shown.iterrows():
        rows += [{"dataset": run["dataset"], "method": run["method"],
                  "method_name": run["method_name"], "run": run["run_id"], "rank": r, "bound": b}
                 for r, b in zip(ranks.get(run["run_id"], []), bounds.get(run["run_id"], []))]
    return pd.DataFrame(rows)


def _boosted_runs(ctx: Context) -> pd.DataFrame:
    if "fit.n_boost_iter" not in ctx.splits:
        return pd.DataFrame()
    return ctx.splits[ctx.splits["fit.n_boost_iter"].notna()]


def loss_figure(paths: pd.DataFrame, method: str, colour: str):
    """B(M_t) against rank(M_t), a facet per data set, a line per split."""
    datasets = sorted(paths["dataset"].unique())
    fig, axes = figures.grid(len(datasets), 3.1, 2.7, top=0.4)
    for ax, ds in zip(axes, datasets):
        for _, path in paths[paths["dataset"] == ds].groupby("run"):
            ax.plot(path["rank"], path["bound"], marker="o", markersize=3, linewidth=1,
                    alpha=0.6, color=colour)
        ax.set_title(ds, fontsize=10)
        ax.set_xlabel("rank of M_t", fontsize=8)
        ax.set_ylabel("B(M_t)", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(f"{method}: loss bound against the rank of M_t (one line per split)")
    return fig


def boosting_section(ctx: Context) -> Section | None:
    ks = [k for k in ctx.ks if voc.mean(voc.sweep_best_accuracy(k)) in ctx.parents]
    paths = loss_paths(ctx)
    if not ks and paths.empty:
        return None
    sec = Section("boosting", "Dimension sweep and boosting (Chang 2012)",
                  "Classification rate (%) of each linear metric using its first r mapped "
                  "components, r = 1 to the method's limit, averaged over the splits (a split "
                  "whose metric has lower rank keeps its last rate); in parentheses, as in "
                  "Figs. 2-3 of Chang 2012, the best average rate and the smallest "
                  "dimensionality reaching it (the 'most effective dimensionality').")
    style = palette.styles(ctx.parents)
    _, methods = tables.order(ctx.parents)
    names = dict(zip(ctx.parents["method"], ctx.parents["method_name"]))
    for k in ks:
        curves = sweep_frame(ctx, k)
        if curves.empty:
            continue
        best = best_of_mean_curves(curves)
        swept = [m for m in methods if m in set(curves["method"])]
        cells = best.apply(lambda row: f"{row['rate']:.2f} ({int(row['dim'])})", axis=1)
        text = cells.unstack("method").reindex(columns=swept).fillna("–")
        rates = best["rate"].unstack("method").reindex(index=text.index, columns=swept)
        sec.table(html_table(text, tables.best_per_row(rates), swatches=ranking.colours(ctx),
                             transpose=methods_as_rows(text, ranking.colours(ctx))),
                  f"Best average {k}-NN rate (%) and its dimensionality",
                  export_table(ctx, best.reset_index(), f"sweep_best_k{k}"))
        sec.figure(ctx.figure(f"sweep_k{k}.png", sweep_figure, curves, best, swept, style, k),
                   f"{k}-NN classification rate against the dimensionality of the mapped vector "
                   "(layout of Figs. 2-3 of Chang 2012).")
        diffs = {}
        for boosted, plain in PAIRS:
            a = [m for m in swept if names.get(m) == boosted]
            b = [m for m in swept if names.get(m) == plain]
            if a and b:
                diffs[f"{a[0]} − {b[0]}"] = rates[a[0]] - rates[b[0]]
        if diffs:
            frame = pd.DataFrame(diffs)
            sec.table(html_table(tables.fmt(frame, 2)),
                      "Differences of best average rates (percentage points) for the paper's "
                      "pairs: boosted against one iteration, I-MFA against MFA",
                      export_table(ctx, frame, f"sweep_pairs_k{k}"))
    if not paths.empty:
        summary = _boosted_runs(ctx).groupby(["dataset", "method"])[["fit.n_boost_iter", "fit.rank"]].mean()
        summary.columns = ["boosting iterations T", "rank of M_T"]
        shown = tables.fmt(summary, 2)
        shown.index = [f"{d} / {m}" for d, m in summary.index]
        shown.index.name = "data set / method"
        sec.table(html_table(shown),
                  "Boosting iterations and final rank, mean over splits",
                  export_table(ctx, summary.reset_index(), "boosting_iterations"))
        for method in sorted(paths["method"].unique()):
            sec.figure(ctx.figure(f"loss_vs_rank_{method}.png", loss_figure,
                                  paths[paths["method"] == method], method,
                                  style[method].colour),
                       f"{method}: B(M_t) against rank(M_t), as Figs. 4 (BoostMDM-K) and 5 "
                       "(BoostMDM-G) of Chang 2012; the first point is M_0 = 0 (B = 1).")
    sec.note("What Chang 2012 reports (section 4.2; its results are figures, so there are no "
             "published numbers to put beside ours): " + " ".join(
                 f"({i}) {claim}" for i, claim in enumerate(papers.claims("chang-2012"), 1)))
    return sec
