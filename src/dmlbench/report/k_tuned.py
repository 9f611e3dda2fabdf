"""The k-tuned view (issue 46, point 4): each method at the k its own inner folds choose among
the evaluated ks, and the cross-data-set verdicts on it.

A tuned split's record carries, per k, the mean inner accuracy of every candidate
(`tuning.inner_scores` = {k: [score of each candidate]}) and the rule's winner
(`tuning.chosen_index` = {k: index}). The k-tuned choice of a split is the k whose winner has
the best inner score (a tie goes to the smaller k: KLHP, which ignores k, is at the smallest);
its test accuracy is the split's accuracy at that k (`vocabulary.accuracy`). The test part is
never looked at. A split without inner scores (a method with nothing to tune, whose runs
record none) has no choice: its method is left out of the view and named (`missing`).

The rows have `hierarchical.fold_table`'s shape, so the view's comparisons are the fixed-k
ones (`report.hierarchical.submit`, labelled `LABEL`) on other accuracies.
"""

from __future__ import annotations

import math
from concurrent.futures import Future

import numpy as np
import pandas as pd

from .. import vocabulary as voc
from ..measure.statistics import mean_ranks
from . import comparisons, hierarchical, ranking, tables
from .base import Context

#: the view's label in seeds, file names and captions (`hierarchical.view_name`: "k tuned")
LABEL = "tuned"
COLUMNS = ["dataset", "method", "split", "k", "inner score", "accuracy", "test_share"]


def choice(entry: dict, ks: list[int]) -> tuple[int, float] | None:
    """(k, inner score) of a split's k-tuned choice among `ks` from its `tuning` entry: the k
    whose winner has the best inner score, the smaller k on a tie; None without inner scores
    (or no winner with a score)."""
    scores, chosen = entry.get("inner_scores"), entry.get("chosen_index") or {}
    if not scores:
        return None
    best = None
    for k in sorted(int(key) for key in scores):
        index = chosen.get(str(k))
        if k not in ks or index is None:
            continue
        score = scores[str(k)][index]
        if score is not None and math.isfinite(score) and (best is None or score > best[1]):
            best = (k, float(score))
    return best


def choices(splits: pd.DataFrame, entries: dict[str, dict], ks: list[int]) -> pd.DataFrame:
    """One row per tuned split run with inner scores: its data set, method and split index,
    the chosen k, the winner's inner score there, the test accuracy at that k and the share of
    test points n_test / (n_train + n_test) (`COLUMNS`; the newest run of a (data set, method,
    split) when there are several)."""
    rows = []
    if splits.empty or not {voc.N_TRAIN, voc.N_TEST, "split"} <= set(splits.columns):
        return pd.DataFrame(columns=COLUMNS)
    for _, run in splits.sort_values("start_time").iterrows():
        entry = entries.get(run["run_id"])
        picked = None if entry is None else choice(entry, ks)
        if picked is None or pd.isna(run.get("split")):
            continue
        accuracy = run.get(voc.accuracy(picked[0]))
        if accuracy is None or not np.isfinite(accuracy):
            continue
        rows.append({"dataset": run["dataset"], "method": run["method"],
                     "split": int(run["split"]), "k": picked[0], "inner score": picked[1],
                     "accuracy": float(accuracy),
                     "test_share": float(run[voc.N_TEST] / (run[voc.N_TRAIN] + run[voc.N_TEST]))})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.drop_duplicates(["dataset", "method", "split"], keep="last").reset_index(
        drop=True)


def missing(splits: pd.DataFrame, frame: pd.DataFrame) -> list[str]:
    """The methods of the runs without any k-tuned choice (no inner scores recorded)."""
    return sorted(set(splits["method"]) - set(frame["method"])) if len(splits) else []


def scores(frame: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """Data sets x methods mean k-tuned test accuracy over the splits, on the data sets where
    every method of the view has one; the methods in `methods`' order (the reference first)."""
    table = frame.pivot_table(index="dataset", columns="method", values="accuracy",
                              aggfunc="mean")
    return tables.complete(table.reindex(columns=[m for m in methods if m in table.columns]))


def view(ctx: Context) -> dict | None:
    """The view, computed once per report: {"choices": `choices`, "missing", "scores",
    "ranks" (mean ranks over the complete data sets), "order" (best rank first), "reference"
    (the fixed-k views' reference, None when it has no k-tuned choice), "best"}; None when
    no split run carries inner scores."""
    def compute():
        source = ctx.runs
        if source is None or not hasattr(source, "split_tuning") or ctx.splits.empty:
            return None
        entries = ctx.memo("split_tuning", lambda: source.split_tuning(ctx.splits["run_id"]))
        frame = choices(ctx.splits, entries, ctx.ks)
        if frame.empty:
            return None
        _, methods = tables.order(ctx.parents)
        table = scores(frame, methods)
        ranks = mean_ranks(table) if table.shape[0] >= 1 and table.shape[1] >= 2 else (
            pd.Series(dtype=float))
        order = list(ranks.index) + [m for m in methods
                                     if m in set(frame["method"]) and m not in ranks.index]
        fixed = ranking.scores(ctx, ctx.ks[0])
        reference = comparisons.reference_method(list(fixed.columns)) if fixed.shape[1] else None
        return {"choices": frame, "missing": missing(ctx.splits, frame), "scores": table,
                "ranks": ranks, "order": order,
                "reference": reference if reference in set(frame["method"]) else None,
                "wanted_reference": reference,
                "best": str(ranks.index[0]) if len(ranks) else None}

    return ctx.memo("k_tuned", compute)


def results(ctx: Context) -> Future | None:
    """The view's hierarchical comparisons (`hierarchical.submit`: every method against the
    reference and the best-ranked method), submitted once; None without a view, without the
    reference in it, or without pairs."""
    def start():
        tuned = view(ctx)
        if tuned is None or tuned["reference"] is None or tuned["best"] is None:
            return None
        folds = tuned["choices"][["dataset", "method", "split", "accuracy", "test_share"]]
        return hierarchical.submit(ctx, LABEL, folds, tuned["order"], tuned["reference"],
                                   tuned["best"])

    return ctx.memo(("hierarchical", LABEL), start)


def rope_results(ctx: Context) -> Future | None:
    """The view's rope sensitivity against the reference (`hierarchical.submit_ropes`)."""
    def start():
        tuned = view(ctx)
        if tuned is None or tuned["reference"] is None:
            return None
        folds = tuned["choices"][["dataset", "method", "split", "accuracy", "test_share"]]
        return hierarchical.submit_ropes(ctx, LABEL, folds, tuned["order"], tuned["reference"])

    return ctx.memo(("hierarchical ropes", LABEL), start)


def chosen_k_shares(frame: pd.DataFrame, ks: list[int]) -> pd.DataFrame:
    """Method x k: the share of the method's splits whose k-tuned choice is that k."""
    counts = pd.crosstab(frame["method"], frame["k"], normalize="index")
    return counts.reindex(columns=ks, fill_value=0.0)
