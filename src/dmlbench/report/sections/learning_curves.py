"""Learning curves (a protocol's `train_sizes`): k-NN test accuracy against the number of
training points per method (log scale), its difference to the reference metric (Euclidean when
the benchmark has it) against that number, and at each size the tests over the data sets of
the other sections: Friedman (`measure.statistics.friedman`), each method against the reference
by the Wilcoxon signed-rank test with Holm's correction over the methods of that size
(`wilcoxon_p`, `holm`), by the Bayesian signed-rank test (`bayesian_signed_rank`, the rope of
`report.rope`) and, from the fold-level accuracies where a data set has at least two splits, by
the Bayesian hierarchical test (`report.hierarchical`). A size pools the data sets that ran it;
`full` is each data set's whole training part (its runs are those of the other sections,
restricted to the data sets with a curve). The tests run in the renderer's pool."""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd
from matplotlib.ticker import FixedFormatter, FixedLocator, NullFormatter

from ... import vocabulary as voc
from ...measure.statistics import bayesian_signed_rank, friedman, holm, wilcoxon_p
from .. import figures, hierarchical, palette, settings, tables, verdicts
from ..base import Context, Section, export_table, html_table

FULL = "full"
#: draws of each Bayesian signed-rank comparison (as `report.comparisons`)
N_SAMPLES = 20_000


def section(ctx: Context) -> Section | None:
    frame = curve_frame(ctx)
    if frame.empty:
        return None
    k = ctx.ks[0]
    methods = tables.order(frame)[1]
    reference = methods[0]
    named = "the Euclidean metric" if reference in ("euclidean", "euc") else reference
    sec = Section("learning-curves", "Learning curves",
                  "Each data set's training parts subsampled to the sizes of the protocol's "
                  "train_sizes (nested: a smaller subsample is part of every larger one; "
                  "stratified; the same test parts), and run whole (full). Accuracy is the "
                  "mean over the splits of each size; the x axis the mean number of training "
                  f"points (log scale). Differences are to {named}, at the same size.")
    style = palette.styles(frame)
    sec.figure(ctx.figure(f"learning_curves_k{k}.png", draw_curves, frame, methods, style, k,
                          None),
               f"{k}-NN test accuracy (%) against the number of training points, per data set.")
    if frame["method"].eq(reference).any() and len(methods) > 1:
        sec.figure(ctx.figure(f"learning_curves_difference_k{k}.png", draw_curves, frame,
                              methods, style, k, reference),
                   f"{k}-NN test accuracy minus that of {reference} (points) against the number "
                   "of training points, per data set; above zero: better than the reference.")
    long = accuracy_table(frame, ctx.ks)
    wide = long.pivot_table(index=["dataset", "method"], columns="size", values=f"k = {k}",
                            sort=False).reindex(columns=size_order(long["size"]))
    wide.index = [f"{dataset} · {method}" for dataset, method in wide.index]
    wide.columns = [f"n = {size}" for size in wide.columns]
    sec.table(html_table(tables.fmt(wide, 2)),
              f"Mean {k}-NN test accuracy (%) per data set and method at each size (all k and "
              "the mean training points in the CSV)",
              export_table(ctx, long, "learning_curves_accuracy"), folded=True)
    if len(methods) < 2 or frame["dataset"].nunique() < 2:
        sec.note("The tests over data sets need at least two data sets and two methods.")
        return sec
    rope = settings.rope(ctx.config)
    folds = pd.concat([_folds(ctx.splits, frame), ctx.curve_splits], ignore_index=True)
    for k in ctx.ks:
        future = ctx.submit(tests_per_size, frame, folds, reference, k, rope)

        def fill(part: Section, k=k, future=future):
            result = future.result()
            if result.empty:
                part.note(f"{k}-NN: no size has two data sets on which every method ran.")
                return
            shown = result.drop(columns=["size", "method"])
            shown.index = [f"n = {size} · {method}"
                           for size, method in zip(result["size"], result["method"])]
            part.table(html_table(shown.map(_cell)),
                       f"{k}-NN, against {reference} at each size: data sets, mean difference "
                       "(points), Wilcoxon signed-rank p (Holm over the methods of the size), "
                       "Bayesian signed-rank probabilities and outcome (supporting evidence), "
                       "the hierarchical test's probabilities and verdict (the one that "
                       f"decides; rope {settings.rope_words(ctx.config)}); Friedman p of all "
                       "methods at the size",
                       export_table(ctx, result, f"learning_curves_tests_k{k}"),
                       folded=k != ctx.ks[0])
            part.few_datasets(int(result["data sets"].max()), "the tests at each size")

        sec.later(fill)
    return sec


def curve_frame(ctx: Context) -> pd.DataFrame:
    """One row per (data set, method, size) of the data sets with a learning curve: the curve
    runs (`ctx.curve_parents`) and the full runs (`ctx.parents`) of those data sets, with the
    columns `size` (an int, or `FULL`) and `n_train` (the mean training points)."""
    curve = ctx.curve_parents
    if curve.empty:
        return pd.DataFrame()
    full = ctx.parents[ctx.parents["dataset"].isin(set(curve["dataset"]))]
    frame = pd.concat([curve.assign(size=curve["train_size"].astype(int).astype(object)),
                       full.assign(size=FULL)], ignore_index=True)
    frame["n_train"] = frame[voc.mean(voc.N_TRAIN)]
    return frame


def _folds(splits: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """The full runs' split rows of the data sets with a curve."""
    if splits.empty:
        return splits
    return splits[splits["dataset"].isin(set(frame["dataset"]))]


def size_order(sizes) -> list:
    """Sizes ascending, `FULL` last."""
    numbers = sorted({s for s in sizes if s != FULL})
    return numbers + ([FULL] if FULL in set(sizes) else [])


def accuracy_table(frame: pd.DataFrame, ks: list[int]) -> pd.DataFrame:
    """One row per (data set, method, size), sizes ascending: the mean training points and the
    mean accuracy (%) of each k."""
    columns = {"n_train": frame["n_train"]}
    columns.update({f"k = {k}": 100 * frame[voc.mean(voc.accuracy(k))] for k in ks
                    if voc.mean(voc.accuracy(k)) in frame})
    table = pd.DataFrame({"dataset": frame["dataset"], "method": frame["method"],
                          "size": frame["size"], **columns})
    rank = {s: i for i, s in enumerate(size_order(table["size"]))}
    table = table.assign(_r=table["size"].map(rank)).sort_values(["dataset", "method", "_r"])
    return table.drop(columns="_r").reset_index(drop=True)


def _cell(value) -> str:
    """A test table's cell: numbers to three digits, a missing one as an en dash."""
    if isinstance(value, str):
        return value
    return "–" if pd.isna(value) else f"{value:.3g}" if isinstance(value, float) else str(value)


def draw_curves(frame: pd.DataFrame, methods: list[str], style: dict, k: int,
                reference: str | None):
    """A facet per data set: each method's k-NN accuracy (%) against its mean number of
    training points (log x), or with `reference` its difference to the reference's accuracy
    at the same size (points)."""
    column = voc.mean(voc.accuracy(k))
    datasets = list(dict.fromkeys(frame.sort_values("dataset")["dataset"]))
    ncol = min(len(methods), 6)
    fig, axes = figures.grid(len(datasets), 4.1, 3.0,
                             top=figures.legend_height(len(methods), ncol))
    for ax, dataset in zip(axes, datasets):
        part = frame[frame["dataset"] == dataset]
        base = (part[part["method"] == reference].set_index("size")[column]
                if reference is not None else None)
        for method in methods:
            if method == reference:  # its difference to itself: the dashed zero line
                continue
            rows = part[part["method"] == method]
            rows = rows.set_index("size").reindex(size_order(rows["size"]))
            values = 100 * rows[column]
            if base is not None:
                values = values - 100 * base.reindex(rows.index)
            ax.plot(rows["n_train"], values, markersize=4, linewidth=1.2, label=method,
                    **style[method].line())
        if reference is not None:
            ax.axhline(0, color=palette.BLACK, linewidth=0.8, linestyle="--")
        ax.set_xscale("log")
        ticks = sorted({round(v) for v in part["n_train"].dropna()})
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FixedFormatter([str(t) for t in ticks]))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(dataset, fontsize=10)
        ax.set_xlabel("training points", fontsize=8)
        ax.set_ylabel(f"{k}-NN accuracy (%)" if reference is None
                      else f"difference to {reference} (points)", fontsize=8)
        ax.tick_params(labelsize=8)
    figures.method_legend(fig, style, methods, ncol)
    return fig


def tests_per_size(frame: pd.DataFrame, folds: pd.DataFrame, reference: str, k: int,
                   rope: float) -> pd.DataFrame:
    """At each size, every method against `reference` over the data sets on which every method
    ran at that size (at least two): mean difference (points), Wilcoxon signed-rank p and its
    Holm correction over the methods of the size, Bayesian signed-rank probabilities and
    verdict, the hierarchical test's (from `folds`, the split runs, where at least
    `hierarchical.MIN_DATASETS` data sets have two splits), and the Friedman p of all methods
    at the size. One row per (size, method)."""
    column = voc.mean(voc.accuracy(k))
    rows = []
    for size in size_order(frame["size"]):
        part = frame[frame["size"] == size]
        scores = tables.complete(tables.values(part, column))
        if scores.shape[0] < 2 or reference not in scores or scores.shape[1] < 2:
            continue
        others = [m for m in scores.columns if m != reference]
        p_friedman = friedman(scores)[1] if scores.shape[1] >= 3 else np.nan
        differences = {m: (scores[m] - scores[reference]).to_numpy() for m in others}
        p = np.array([1.0 if np.all(d == 0) else wilcoxon_p(d) for d in differences.values()])
        _, p_holm = holm(p)
        nested = _hierarchical(folds, size, list(scores.index), others, reference, rope, k)
        for i, method in enumerate(others):
            bayes = bayesian_signed_rank(
                scores[method], scores[reference], rope=rope, n_samples=N_SAMPLES,
                random_state=zlib.crc32(f"curve|{size}|{k}|{method}|{reference}".encode()))
            row = {"size": size, "method": method, "data sets": scores.shape[0],
                   "mean difference (points)": 100 * float(differences[method].mean()),
                   "Wilcoxon p": p[i], "p (Holm)": p_holm[i],
                   "P(better)": bayes.p_a, "P(rope)": bayes.p_rope, "P(worse)": bayes.p_b,
                   "signed-rank outcome": verdicts.signed_rank(bayes.p_a, bayes.p_rope,
                                                               bayes.p_b)}
            row.update(nested.get(method, {}))
            row["Friedman p"] = p_friedman
            rows.append(row)
    return pd.DataFrame(rows)


def _hierarchical(folds: pd.DataFrame, size, datasets: list[str], methods: list[str],
                  reference: str, rope: float, k: int) -> dict[str, dict]:
    """{method: the hierarchical test's probabilities and verdict against `reference`} at
    `size`, on `datasets`; {} where the split runs do not allow it."""
    if folds.empty or "train_size" not in folds:
        return {}
    wanted = folds["train_size"].isna() if size == FULL else folds["train_size"] == size
    table = hierarchical.fold_table(folds[wanted & folds["dataset"].isin(datasets)], k)
    pairs = {}
    for method in methods:
        pair = hierarchical.paired_folds(table, method, reference)
        if pair is not None:
            pairs[(method, reference)] = pair
    if not pairs:
        return {}
    result = hierarchical.compare(pairs, rope, k).set_index("method")
    return {m: {"hierarchical P(better)": row["P(better)"], "hierarchical P(rope)": row["P(rope)"],
                "hierarchical P(worse)": row["P(worse)"], "hierarchical verdict": row["verdict"]}
            for m, row in result.iterrows()}
