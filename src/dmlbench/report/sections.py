"""The sections of the benchmark report. Each builder takes a `Context` and returns a `Section`
(or None when it has nothing to show); `BUILDERS` is their order in the report. A method family's
own report section plugs in by adding its builder (in its own module) to `BUILDERS`."""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..files import atomic_path
from ..measure.statistics import (
    friedman,
    mean_ranks,
    nemenyi_cd,
    wilcoxon_holm,
    win_tie_loss,
)
from . import figures, papers, tables


@dataclass
class Context:
    """What every section can use: the runs, the benchmark config, where to write, MLflow links."""

    parents: pd.DataFrame
    splits: pd.DataFrame
    out_dir: Path
    hubness_k: int
    config: dict | None = None
    experiment: str = ""
    mlflow_ui: str = field(default_factory=lambda: os.environ.get(
        "DMLBENCH_MLFLOW_UI", "http://127.0.0.1:5000"))

    @property
    def figure_dir(self) -> Path:
        return self.out_dir / "figures"

    @property
    def ks(self) -> list[int]:
        return tables.ks_of(self.parents)

    def run_url(self, run_id: str, experiment_id: str) -> str:
        return f"{self.mlflow_ui}/#/experiments/{experiment_id}/runs/{run_id}"

    def run_links(self) -> pd.DataFrame:
        """Data set x method table of links to each parent run."""
        frame = self.parents.assign(url=[self.run_url(r, e) for r, e in
                                         zip(self.parents["run_id"], self.parents["experiment_id"])])
        return tables.values(frame, "url")


@dataclass
class Section:
    id: str
    title: str
    intro: str = ""
    blocks: list = field(default_factory=list)

    def table(self, html_text: str, caption: str = "", files: dict | None = None):
        self.blocks.append({"kind": "table", "html": html_text, "caption": caption,
                            "files": files or {}})

    def figure(self, src: str, caption: str):
        self.blocks.append({"kind": "figure", "src": f"figures/{src}", "caption": caption})

    def note(self, text: str):
        self.blocks.append({"kind": "note", "text": text})


def export_table(ctx: Context, frame: pd.DataFrame, name: str) -> dict[str, str]:
    """Write a table as CSV and as LaTeX (booktabs) under tables/; returns their relative paths."""
    out = {}
    for suffix, writer in (("csv", lambda f, p: f.to_csv(p)),
                           ("tex", lambda f, p: p.write_text(f.to_latex(na_rep="--")))):
        path = ctx.out_dir / "tables" / f"{name}.{suffix}"
        with atomic_path(path) as tmp:
            writer(frame, tmp)
        out[suffix.upper() if suffix == "csv" else "LaTeX"] = f"tables/{name}.{suffix}"
    return out


def html_table(text: pd.DataFrame, best: pd.DataFrame | None = None,
               links: pd.DataFrame | None = None) -> str:
    """An HTML table of strings; `best` marks cells in bold, `links` wraps cells in anchors."""
    rows = ["<table class='dataframe'><thead><tr><th></th>"]
    rows += [f"<th>{html.escape(str(c))}</th>" for c in text.columns]
    rows.append("</tr></thead><tbody>")
    for idx, row in text.iterrows():
        rows.append(f"<tr><th>{html.escape(str(idx))}</th>")
        for col, value in row.items():
            cell = html.escape(str(value))
            link = links.at[idx, col] if links is not None and col in links.columns \
                and idx in links.index else None
            if isinstance(link, str):
                cell = f"<a class='run' href='{html.escape(link)}'>{cell}</a>"
            cls = " class='best'" if best is not None and col in best.columns \
                and idx in best.index and bool(best.at[idx, col]) else ""
            rows.append(f"<td{cls}>{cell}</td>")
        rows.append("</tr>")
    rows.append("</tbody></table>")
    return "".join(rows)


def leaderboard(ctx: Context) -> Section:
    sec = Section("leaderboard", "Leaderboard",
                  "Mean rank of each method's test accuracy over the data sets on which every "
                  "method ran (1 = best), per k, with the number of data sets ranked and the "
                  "Friedman test of 'all methods perform equally' (statistics section below).")
    ranks = tables.mean_rank(ctx.parents)
    best = tables.best_per_row(ranks.T, higher_is_better=False).T
    text = tables.fmt(ranks, 2)
    complete = {k: tables.complete(tables.values(ctx.parents, f"accuracy_k{k}_mean")).shape[0]
                for k in ctx.ks}
    footer = pd.DataFrame({f"k = {k}": [str(complete[k])] for k in ctx.ks},
                          index=["data sets ranked"])
    pvalues = {}
    for k in ctx.ks:
        try:
            table = tables.complete(tables.values(ctx.parents, f"accuracy_k{k}_mean"))
            pvalues[f"k = {k}"] = f"{friedman(table)[1]:.3g}"
        except ValueError:
            pvalues[f"k = {k}"] = "–"
    footer.loc["Friedman p"] = pd.Series(pvalues)
    sec.table(html_table(pd.concat([text, footer]), best=best), "Mean rank per k",
              export_table(ctx, ranks, "mean_rank"))
    return sec


def accuracy(ctx: Context) -> Section:
    sec = Section("accuracy", "Test accuracy",
                  "k-NN test accuracy (%) as mean ± standard deviation over the splits; the best "
                  "mean per data set in bold. Every cell links to its MLflow run.")
    links = ctx.run_links()
    n_splits = tables.values(ctx.parents, "n_splits").max(axis=1).astype(int)
    _, methods = tables.order(ctx.parents)
    for k in ctx.ks:
        means = tables.values(ctx.parents, f"accuracy_k{k}_mean").dropna(axis=1, how="all")
        text = tables.mean_std(ctx.parents, f"accuracy_k{k}", scale=100)[means.columns]
        best = tables.best_per_row(means)
        text.insert(0, "splits", n_splits)
        sec.table(html_table(text, best, links), f"{k}-NN accuracy (%)",
                  export_table(ctx, text, f"accuracy_k{k}"))
        fig = figures.error_per_dataset(ctx.splits, k, methods, ctx.figure_dir)
        sec.figure(fig, f"Test error of {k}-NN per data set (mean ± sd over splits).")
    return sec


def average_error(ctx: Context) -> Section:
    sec = Section("average-error", "Average error over data sets",
                  "Test error (%) averaged over the data sets on which every method ran, per "
                  "method and k (the layout of Fig. 7 of Abou-Moustafa 2017).")
    avg = tables.average_error(ctx.parents)
    best = tables.best_per_row(avg.T, higher_is_better=False).T
    sec.table(html_table(tables.fmt(avg, 2), best), "Average error (%)",
              export_table(ctx, avg, "average_error"))
    sec.figure(figures.average_error(avg, ctx.figure_dir), "Average test error per method and k.")
    return sec


def statistics(ctx: Context) -> Section | None:
    if ctx.parents["method"].nunique() < 2 or ctx.parents["dataset"].nunique() < 2:
        return None
    sec = Section("statistics", "Statistics over data sets",
                  "Which test answers which question: the Friedman test asks whether the methods "
                  "differ at all over the data sets; the Nemenyi critical difference (CD) says "
                  "which mean ranks differ (diagram: methods joined by a red bar are not "
                  "significantly different at alpha = 0.05); the Wilcoxon signed-rank test with "
                  "Holm's correction asks, pair by pair, whether one method beats another over the "
                  "data sets; the z-test for two proportions (Abou-Moustafa 2017, section 5.3) asks, "
                  "on one data set, whether two accuracies differ — its win/tie/loss counts are "
                  "over data sets.")
    for k in ctx.ks:
        scores = tables.complete(tables.values(ctx.parents, f"accuracy_k{k}_mean"))
        n_methods, n_sets = scores.shape[1], scores.shape[0]
        if n_sets < 2 or n_methods < 2:
            continue
        ranks = mean_ranks(scores)
        cd = nemenyi_cd(n_methods, n_sets)
        if n_methods >= 3:
            chi2, p = friedman(scores)
            sec.note(f"{k}-NN over {n_sets} data sets: Friedman chi² = {chi2:.2f}, p = {p:.3g}; "
                     f"Nemenyi CD = {cd:.2f} (alpha = 0.05, {n_methods} methods).")
        sec.figure(figures.critical_difference(ranks, cd, k, ctx.figure_dir),
                   f"Critical-difference diagram, {k}-NN: mean rank over the data sets (1 = best); "
                   "red bars join methods whose ranks differ by less than the CD.")
        pairs = wilcoxon_holm(scores)
        if not pairs.empty:
            shown = pairs.assign(median_difference=lambda f: (100 * f["median_difference"]).round(2),
                                 p=lambda f: f["p"].map("{:.3g}".format),
                                 p_holm=lambda f: f["p_holm"].map("{:.3g}".format))
            shown = shown.rename(columns={"median_difference": "median a - b (points)",
                                          "p_holm": "p (Holm)"})
            shown.index = [f"{a} vs {b}" for a, b in zip(pairs["a"], pairs["b"])]
            sec.table(html_table(shown.drop(columns=["a", "b"])),
                      f"Pairwise Wilcoxon signed-rank tests, {k}-NN accuracy",
                      export_table(ctx, shown, f"wilcoxon_k{k}"))
        sec.table(html_table(_win_tie_loss_matrix(ctx, k)),
                  f"z-test win/tie/loss of the row method against the column method over data "
                  f"sets, {k}-NN (alpha = 0.05)")
    return sec


def _test_sizes(ctx: Context) -> pd.DataFrame:
    """Test points per data set and method for the z-test: all points once for k-fold CV
    (n_test summed over the folds of one repeat), the mean test-set size otherwise."""
    frame = ctx.parents.copy()
    per_repeat = frame["n_test_total"] / frame["n_splits"]
    kfold = frame["protocol"].fillna("").str.contains('"kfold"')
    folds = frame["protocol"].fillna("").str.extract(r'"folds": (\d+)')[0].astype(float)
    frame["n_z"] = np.where(kfold, per_repeat * folds, per_repeat)
    given_folds = frame["protocol"].fillna("").str.contains('"given_folds"')  # one k-fold CV
    frame["n_z"] = np.where(given_folds, frame["n_test_total"], frame["n_z"])
    return tables.values(frame, "n_z")


def _win_tie_loss_matrix(ctx: Context, k: int) -> pd.DataFrame:
    acc = tables.values(ctx.parents, f"accuracy_k{k}_mean")
    sizes = _test_sizes(ctx)
    methods = list(acc.columns)
    out = pd.DataFrame("", index=methods, columns=methods)
    for ref in methods:
        counts = win_tie_loss(acc, sizes, ref)
        for other, row in counts.iterrows():
            out.at[ref, other] = f"{row['win']}/{row['tie']}/{row['loss']}"
    return out


def hubness(ctx: Context) -> Section | None:
    k = ctx.hubness_k
    if f"skewness_n{k}_mean" not in ctx.parents:
        return None
    links = ctx.run_links()
    sec = Section("hubness", f"Hubness (N{k})",
                  f"Skewness of the N{k} distribution of the training points in the test "
                  f"queries' {k}-NN lists, as in Table 2 of Shigeto 2017 (population moments; "
                  "smaller is less hubness), mean ± sd over splits; then the share of antihubs "
                  f"(training points in no list) and the largest N{k}.")
    skew = tables.mean_std(ctx.parents, f"skewness_n{k}")
    best = tables.best_per_row(tables.values(ctx.parents, f"skewness_n{k}_mean"), False)
    sec.table(html_table(skew, best, links), f"N{k} skewness",
              export_table(ctx, skew, f"skewness_n{k}"))
    anti = tables.mean_std(ctx.parents, f"antihub_share_n{k}", scale=100, digits=1)
    sec.table(html_table(anti, links=links), "Antihub share (%)",
              export_table(ctx, anti, f"antihub_share_n{k}"))
    top = tables.values(ctx.parents, f"max_n{k}_mean")
    sec.table(html_table(tables.fmt(top, 1), links=links), f"Largest N{k} (mean over splits)",
              export_table(ctx, top, f"max_n{k}"))
    fig = figures.skewness_vs_accuracy(ctx.parents, k, ctx.ks[0], ctx.figure_dir)
    sec.figure(fig, f"{ctx.ks[0]}-NN accuracy against N{k} skewness, one point per (data set, "
                    "method).")
    return sec


def cost(ctx: Context) -> Section:
    links = ctx.run_links()
    sec = Section("cost", "Time and memory",
                  "Fit time (wall, s), predict time (wall, s: the test set's k-NN search) and "
                  "the job's peak resident memory (MiB), mean over splits.")
    for column, caption, digits in (("fit_wall_s_mean", "Fit time (s)", 3),
                                    ("predict_wall_s_mean", "Predict time (s)", 3),
                                    ("peak_rss_mb_mean", "Peak memory (MiB)", 0)):
        table = tables.values(ctx.parents, column)
        sec.table(html_table(tables.fmt(table, digits), links=links), caption,
                  export_table(ctx, table, column.removesuffix("_mean")))
    _, methods = tables.order(ctx.parents)
    sec.figure(figures.fit_time(ctx.parents, methods, ctx.figure_dir),
               "Fit time per data set and method (log scale).")
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
                  f"Per data set, mean fit time (log scale) against {k}-NN test error; ringed "
                  "points are on the Pareto front (no method is both at least as fast and at "
                  "least as accurate, and better in one).")
    front = {}
    for ds, sub in ctx.parents.groupby("dataset"):
        points = pd.DataFrame({"method": sub["method"], "time": sub["fit_wall_s_mean"],
                               "error": sub[f"error_k{k}_mean"]}).dropna()
        front[ds] = pareto_front(points)
    table = pd.DataFrame({"Pareto-front methods": {ds: ", ".join(m) for ds, m in front.items()}})
    counts = pd.Series([m for ms in front.values() for m in ms]).value_counts()
    sec.table(html_table(table), f"Pareto-front methods per data set ({k}-NN error vs fit time)",
              export_table(ctx, table, f"pareto_k{k}"))
    sec.note("Times on the front most often: " + ", ".join(f"{m} ({c})" for m, c in counts.items())
             + ".")
    sec.figure(figures.pareto(ctx.parents, k, front, ctx.figure_dir),
               f"Fit time against {k}-NN error per data set.")
    return sec


def paper_tables(ctx: Context) -> Section | None:
    specs = (ctx.config or {}).get("paper_tables") or []
    if not specs:
        return None
    sec = Section("papers", "Beside the papers",
                  "Our numbers next to the published ones. A cell reproduces when our mean lies "
                  "within the published standard error of the paper's value (or the stated "
                  "tolerance where the paper prints none); the difference is ours - paper.")
    for i, spec in enumerate(specs):
        title = spec.get("title") or f"{spec['table']} ({spec['metric']})"
        frame = papers.side_by_side(spec, ctx.parents)
        sec.note(papers.summary(frame, title))
        if frame.empty:
            continue
        links = pd.DataFrame({"ours": [ctx.run_url(r, e) if isinstance(r, str) else None
                                       for r, e in zip(frame["run_id"], frame["experiment_id"])]})
        shown = frame.drop(columns=["run_id", "experiment_id"])
        text = shown.copy()
        for column in ("paper", "paper ±", "ours", "ours ±", "difference"):
            text[column] = shown[column].map(lambda v: "–" if pd.isna(v) else f"{v:.2f}")
        text["reproduced"] = shown["reproduced"].map({True: "yes", False: "no"}).fillna("–")
        best = pd.DataFrame({"reproduced": shown["reproduced"].fillna(False).astype(bool)})
        sec.table(html_table(text, best=best, links=links), title,
                  export_table(ctx, shown, f"paper_{i}_{spec['table']}"))
    return sec


BUILDERS = [leaderboard, accuracy, average_error, statistics, hubness, cost, cost_accuracy,
            paper_tables]

# method families' and studies' own sections (each in its own module, imported here after the
# shared helpers: they import this module)
from .bayesian import bayesian_section  # noqa: E402
from .boost import boosting_section  # noqa: E402
from .hubness_study import hubness_study  # noqa: E402
from .local import local_metrics, mvce_check  # noqa: E402
from .nca import section as nca_section  # noqa: E402

BUILDERS.insert(BUILDERS.index(statistics) + 1, bayesian_section)
BUILDERS += [hubness_study, mvce_check, local_metrics, boosting_section, nca_section]
