"""Report section for the evaluation of Chang 2012: classification rate against the dimensionality
of the mapped vector (the layout of Figs. 2-3) with the best average rate and the "most effective
dimensionality" of every method, and the loss bound B(M_t) against rank(M_t) of the boosted
metrics (Figs. 4-5). It reads MLflow metric histories: the parents' mean sweep curves
(`curve.sweep_accuracy_k<k>`) and the split runs' `fit.bound` / `fit.rank_path`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ... import vocabulary as voc
from ...records import tracking
from .. import papers, tables
from ..base import Context, Section, export_table, html_table, save_figure

#: the paper's claims (section 4.2); its results are figures, so they are quoted, not tabulated

#: (boosted, counterpart) registered names compared in the paper
PAIRS = [("boostmdm_k", "i_mfa"), ("boostmdm_g", "gi_relief"), ("i_mfa", "mfa")]
MAX_PATHS = 10


def history(client, run_id: str, key: str) -> list[float]:
    """A metric history as a list by step (the latest value when a step was logged twice)."""
    latest = {}
    for m in sorted(client.get_metric_history(run_id, key), key=lambda m: (m.step, m.timestamp)):
        latest[m.step] = m.value
    return [latest[s] for s in sorted(latest)]


def sweep_frame(ctx: Context, k: int) -> pd.DataFrame:
    """Long table (dataset, method, dim, rate) of the parents' mean sweep curves for k."""
    column = voc.mean(voc.sweep_best_accuracy(k))
    if column not in ctx.parents:
        return pd.DataFrame()
    client = tracking.client()
    rows = []
    for _, p in ctx.parents[ctx.parents[column].notna()].iterrows():
        for dim, rate in enumerate(history(client, p["run_id"], voc.curve(voc.sweep_accuracy(k))), 1):
            rows.append({"dataset": p["dataset"], "method": p["method"], "dim": dim,
                         "rate": 100 * rate})
    return pd.DataFrame(rows)


def best_of_mean_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method): the best average rate and the smallest dimensionality reaching it,
    the two numbers the paper prints in parentheses."""
    best = curves.loc[curves.groupby(["dataset", "method"])["rate"].idxmax()]
    return best.set_index(["dataset", "method"])[["rate", "dim"]]


def sweep_figure(curves: pd.DataFrame, best: pd.DataFrame, methods: list[str], k: int,
                 out_dir) -> str:
    """One panel per data set, rate against dimensionality, legend 'method (best, dim)'."""
    datasets = sorted(curves["dataset"].unique())
    ncols = min(3, len(datasets))
    nrows = -(-len(datasets) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.8 * nrows), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    style = {m: (colors[i % 10], ("-", "--", ":")[i // 10 % 3]) for i, m in enumerate(methods)}
    for ax, ds in zip(axes.flat, datasets):
        for method in methods:
            part = curves[(curves["dataset"] == ds) & (curves["method"] == method)]
            if part.empty:
                continue
            rate, dim = best.loc[(ds, method)]
            ax.plot(part["dim"], part["rate"], marker="." if len(part) < 40 else None,
                    color=style[method][0], linestyle=style[method][1],
                    label=f"{method} ({rate:.1f}, {int(dim)})")
        ax.set_title(ds)
        ax.set_xlabel("dimensionality of the mapped vector")
        ax.set_ylabel(f"{k}-NN classification rate (%)")
        ax.legend(fontsize="x-small", loc="lower right")
    for ax in axes.flat[len(datasets):]:
        ax.axis("off")
    fig.tight_layout()
    return save_figure(fig, out_dir, f"sweep_k{k}.png")


def loss_paths(ctx: Context) -> pd.DataFrame:
    """Long table (dataset, method, method_name, run, rank, bound) of B(M_t) against rank(M_t)
    of the split runs that boosted (fit.n_boost_iter logged: the BoostMDM family), at most
    MAX_PATHS splits per (data set, method)."""
    runs = _boosted_runs(ctx)
    if runs.empty:
        return pd.DataFrame()
    client = tracking.client()
    rows = []
    for (ds, method), group in runs.groupby(["dataset", "method"]):
        for _, run in group.sort_values("run_id").head(MAX_PATHS).iterrows():
            bounds = history(client, run["run_id"], "fit.bound")
            ranks = history(client, run["run_id"], "fit.rank_path")
            rows += [{"dataset": ds, "method": method, "method_name": run["method_name"],
                      "run": run["run_id"], "rank": r, "bound": b} for r, b in zip(ranks, bounds)]
    return pd.DataFrame(rows)


def _boosted_runs(ctx: Context) -> pd.DataFrame:
    if "fit.n_boost_iter" not in ctx.splits:
        return pd.DataFrame()
    return ctx.splits[ctx.splits["fit.n_boost_iter"].notna()]


def loss_figure(paths: pd.DataFrame, method: str, out_dir) -> str:
    datasets = sorted(paths["dataset"].unique())
    ncols = min(4, len(datasets))
    nrows = -(-len(datasets) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 3.2 * nrows), squeeze=False)
    for ax, ds in zip(axes.flat, datasets):
        for _, path in paths[paths["dataset"] == ds].groupby("run"):
            ax.plot(path["rank"], path["bound"], marker="o", markersize=3, linewidth=1,
                    alpha=0.6, color="tab:blue")
        ax.set_title(ds)
        ax.set_xlabel("rank of M_t")
        ax.set_ylabel("B(M_t)")
    for ax in axes.flat[len(datasets):]:
        ax.axis("off")
    fig.suptitle(f"{method}: loss bound against the rank of M_t (one line per split)")
    fig.tight_layout()
    return save_figure(fig, out_dir, f"loss_vs_rank_{method}.png")


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
    out_dir = ctx.figure_dir
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
        sec.table(html_table(text, tables.best_per_row(rates)),
                  f"Best average {k}-NN rate (%) and its dimensionality",
                  export_table(ctx, best.reset_index(), f"sweep_best_k{k}"))
        sec.figure(sweep_figure(curves, best, swept, k, out_dir),
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
        sec.table(html_table(tables.fmt(summary.unstack("method"), 2)),
                  "Boosting iterations and final rank, mean over splits",
                  export_table(ctx, summary.reset_index(), "boosting_iterations"))
        for method in sorted(paths["method"].unique()):
            sec.figure(loss_figure(paths[paths["method"] == method], method, out_dir),
                       f"{method}: B(M_t) against rank(M_t), as Figs. 4 (BoostMDM-K) and 5 "
                       "(BoostMDM-G) of Chang 2012; the first point is M_0 = 0 (B = 1).")
    sec.note("What Chang 2012 reports (section 4.2; its results are figures, so there are no "
             "published numbers to put beside ours): " + " ".join(
                 f"({i}) {claim}" for i, claim in enumerate(papers.claims("chang-2012"), 1)))
    return sec
