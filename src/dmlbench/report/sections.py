"""The sections of the benchmark report. Each builder takes a `Context` and returns a `Section`
(or None when it has nothing to show); `BUILDERS` is their order in the report. A method family's
own report section plugs in by adding its builder here."""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..files import atomic_path
from . import figures, tables


@dataclass
class Context:
    """What every section can use: the runs, where to write, how to link to MLflow."""

    parents: pd.DataFrame
    splits: pd.DataFrame
    out_dir: Path
    hubness_k: int
    figures: dict = field(default_factory=dict)
    mlflow_ui: str = field(default_factory=lambda: os.environ.get(
        "DMLBENCH_MLFLOW_UI", "http://127.0.0.1:5000"))

    def run_url(self, run_id: str, experiment_id: str) -> str:
        return f"{self.mlflow_ui}/#/experiments/{experiment_id}/runs/{run_id}"


@dataclass
class Section:
    id: str
    title: str
    intro: str = ""
    blocks: list = field(default_factory=list)

    def table(self, html_text: str, caption: str = "", csv: str | None = None):
        self.blocks.append({"kind": "table", "html": html_text, "caption": caption, "csv": csv})

    def figure(self, src: str, caption: str):
        self.blocks.append({"kind": "figure", "src": src, "caption": caption})

    def note(self, text: str):
        self.blocks.append({"kind": "note", "text": text})


def save_csv(ctx: Context, frame: pd.DataFrame, name: str) -> str:
    path = ctx.out_dir / "tables" / f"{name}.csv"
    with atomic_path(path) as tmp:
        frame.to_csv(tmp)
    return f"tables/{name}.csv"


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
            if links is not None and isinstance(links.at[idx, col], str):
                cell = f"<a class='run' href='{links.at[idx, col]}'>{cell}</a>"
            cls = " class='best'" if best is not None and bool(best.at[idx, col]) else ""
            rows.append(f"<td{cls}>{cell}</td>")
        rows.append("</tr>")
    rows.append("</tbody></table>")
    return "".join(rows)


def _run_links(ctx: Context) -> pd.DataFrame:
    frame = ctx.parents.assign(url=[ctx.run_url(r, e) for r, e in
                                    zip(ctx.parents["run_id"], ctx.parents["experiment_id"])])
    return tables.values(frame, "url")


def leaderboard(ctx: Context) -> Section:
    sec = Section("leaderboard", "Leaderboard",
                  "Mean rank of each method's test accuracy over the data sets on which every "
                  "method ran (1 = best), per k; and the number of splits per data set.")
    ranks = tables.mean_rank(ctx.parents)
    best = tables.best_per_row(ranks.T, higher_is_better=False).T
    sec.table(html_table(tables.fmt(ranks, 2), best=best), "Mean rank per k",
              save_csv(ctx, ranks, "mean_rank"))
    return sec


def accuracy(ctx: Context) -> Section:
    sec = Section("accuracy", "Test accuracy",
                  "k-NN test accuracy (%) as mean ± standard deviation over the splits; the best "
                  "mean per data set in bold. Each cell links to its MLflow run.")
    links = _run_links(ctx)
    n_splits = tables.values(ctx.parents, "n_splits").max(axis=1).astype(int)
    for k in tables.ks_of(ctx.parents):
        text = tables.mean_std(ctx.parents, f"accuracy_k{k}", scale=100)
        best = tables.best_per_row(tables.values(ctx.parents, f"accuracy_k{k}_mean"))
        text.insert(0, "splits", n_splits)
        best.insert(0, "splits", False)
        sec.table(html_table(text, best, links.reindex(columns=text.columns)),
                  f"{k}-NN accuracy (%)", save_csv(ctx, text, f"accuracy_k{k}"))
        sec.figure(ctx.figures[f"error_k{k}"], f"Test error of {k}-NN per data set.")
    return sec


def average_error(ctx: Context) -> Section:
    sec = Section("average-error", "Average error over data sets",
                  "Test error (%) averaged over the data sets on which every method ran, per "
                  "method and k (the layout of Fig. 7 of Abou-Moustafa 2017).")
    avg = tables.average_error(ctx.parents)
    best = tables.best_per_row(avg.T, higher_is_better=False).T
    sec.table(html_table(tables.fmt(avg, 2), best), "Average error (%)",
              save_csv(ctx, avg, "average_error"))
    sec.figure(ctx.figures["average_error"], "Average test error per method and k.")
    return sec


def hubness(ctx: Context) -> Section | None:
    k = ctx.hubness_k
    if f"skewness_n{k}_mean" not in ctx.parents:
        return None
    sec = Section("hubness", f"Hubness (N{k})",
                  f"Skewness of the N{k} distribution of the training points in the test "
                  f"queries' {k}-NN lists, as in Table 2 of Shigeto 2017 (population moments; "
                  "smaller is less hubness), mean ± sd over splits; then the share of antihubs "
                  f"(training points in no list) and the largest N{k}.")
    skew = tables.mean_std(ctx.parents, f"skewness_n{k}")
    best = tables.best_per_row(tables.values(ctx.parents, f"skewness_n{k}_mean"), False)
    sec.table(html_table(skew, best), f"N{k} skewness", save_csv(ctx, skew, f"skewness_n{k}"))
    anti = tables.mean_std(ctx.parents, f"antihub_share_n{k}", scale=100, digits=1)
    sec.table(html_table(anti), "Antihub share (%)", save_csv(ctx, anti, f"antihub_share_n{k}"))
    top = tables.values(ctx.parents, f"max_n{k}_mean")
    sec.table(html_table(tables.fmt(top, 1)), f"Largest N{k} (mean over splits)",
              save_csv(ctx, top, f"max_n{k}"))
    if "skewness_vs_accuracy" in ctx.figures:
        sec.figure(ctx.figures["skewness_vs_accuracy"], "Accuracy against N_k skewness.")
    return sec


def cost(ctx: Context) -> Section:
    sec = Section("cost", "Time and memory",
                  "Fit time (wall, s), predict time (wall, s: the test set's k-NN search) and "
                  "the job's peak resident memory (MiB), mean over splits.")
    for column, caption, digits in (("fit_wall_s_mean", "Fit time (s)", 3),
                                    ("predict_wall_s_mean", "Predict time (s)", 3),
                                    ("peak_rss_mb_mean", "Peak memory (MiB)", 0)):
        table = tables.values(ctx.parents, column)
        sec.table(html_table(tables.fmt(table, digits)), caption,
                  save_csv(ctx, table, column.removesuffix("_mean")))
    sec.figure(ctx.figures["fit_time"], "Fit time per data set and method (log scale).")
    return sec


BUILDERS = [leaderboard, accuracy, average_error, hubness, cost]


# method families' own sections (their modules import this one, hence at the end)
from . import nca as _nca  # noqa: E402

BUILDERS.append(_nca.section)
