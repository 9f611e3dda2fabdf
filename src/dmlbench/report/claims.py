"""The papers' headline claims, checked on a benchmark's runs.

A claim (report/paper_tables/claims.yaml) is the paper's words, what the paper reports as its
evidence, and a `check`: one of the kinds below with its parameters. Methods are named by their
registered name (`method_name`), so every config label of that method is checked (e.g. the
literal and the inverse RMVEM). A check returns a `Verdict`: 'held', 'not held', or 'not
testable here' when the runs lack the methods or data sets it needs, with our evidence in
numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import vocabulary as voc
from ..measure.statistics import win_tie_loss
from . import papers, readings, tables

HELD, NOT_HELD, NOT_TESTABLE = "held", "not held", "not testable here"


@dataclass
class Verdict:
    verdict: str
    evidence: str


def _labels(parents: pd.DataFrame, name: str) -> list[str]:
    """Config labels of the registered method `name` among the runs."""
    return sorted(parents.loc[parents["method_name"] == name, "method"].unique())


def _pooled(splits: pd.DataFrame, ks: list[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(accuracy, test points) per (data set, k) x method, pooled over the splits."""
    rows = []
    for k in ks:
        part = splits.assign(k=k, correct=splits[voc.accuracy(k)] * splits[voc.N_TEST],
                             n=splits[voc.N_TEST])
        rows.append(part.groupby(["dataset", "k", "method"])[["correct", "n"]].sum())
    both = pd.concat(rows)
    return (both["correct"] / both["n"]).unstack("method"), both["n"].unstack("method")


def wins_over(parents, splits, ks, method: str, reference: str) -> Verdict:
    """`method` is significantly more accurate than `reference` in more (data set, k) cases
    than it is significantly less accurate (pooled z-test, 0.05; Abou-Moustafa 2017, 5.3)."""
    methods, refs = _labels(parents, method), _labels(parents, reference)
    if not methods or not refs:
        return Verdict(NOT_TESTABLE, f"needs runs of {method} and {reference}")
    acc, n = _pooled(splits, ks)
    parts, held = [], True
    for m in methods:
        counts = win_tie_loss(acc[[m, refs[0]]], n[[m, refs[0]]], m).loc[refs[0]]
        held &= counts["win"] > counts["loss"]
        parts.append(f"{m}: {counts['win']} wins / {counts['tie']} ties / {counts['loss']} "
                     f"losses of {counts.sum()} cases")
    return Verdict(HELD if held else NOT_HELD, "; ".join(parts))


def lowest_average_error(parents, splits, ks, method: str) -> Verdict:
    """`method` has the lowest error averaged over the data sets on which every method ran, for
    every k."""
    labels = _labels(parents, method)
    if not labels:
        return Verdict(NOT_TESTABLE, f"needs runs of {method}")
    avg = tables.average_error(parents, ks)
    parts, held = [], True
    for column in avg.columns:
        best = avg[column].idxmin()
        ok = avg.loc[labels, column].min() <= avg[column].min()
        held &= bool(ok)
        parts.append(f"{column}: lowest {best} {avg[column].min():.2f} %, "
                     + ", ".join(f"{m} {avg.at[m, column]:.2f} %" for m in labels))
    return Verdict(HELD if held else NOT_HELD, "; ".join(parts))


def _compare_per_dataset(parents, metric: str, method: str, reference: str, lower: bool,
                         except_at_most: int, strict: bool) -> Verdict:
    methods, refs = _labels(parents, method), _labels(parents, reference)
    if not methods or not refs or voc.mean(metric) not in parents:
        return Verdict(NOT_TESTABLE, f"needs {metric} of {method} and {reference}")
    values = tables.values(parents, voc.mean(metric))
    parts, held = [], True
    for m in methods:
        both = values[[m, refs[0]]].dropna()
        diff = (both[refs[0]] - both[m]) if lower else (both[m] - both[refs[0]])
        better = diff > 0 if strict else diff >= 0
        held &= int((~better).sum()) <= except_at_most
        worse = ", ".join(both.index[~better])
        word = (("lower than" if lower else "higher than") if strict else
                ("at most as high as" if lower else "at least as high as"))
        parts.append(f"{m}: {word} {refs[0]} on "
                     f"{int(better.sum())} of {len(both)} data sets"
                     + (f" (not on {worse})" if worse else ""))
    return Verdict(HELD if held else NOT_HELD, "; ".join(parts))


def lower_on_every_dataset(parents, splits, ks, method: str, reference: str, metric: str,
                           except_at_most: int = 0, strict: bool = True) -> Verdict:
    """`metric` (e.g. N10 skewness) of `method` is lower than `reference`'s (not higher when
    not `strict`) on every data set (on all but `except_at_most`)."""
    return _compare_per_dataset(parents, metric, method, reference, True, except_at_most,
                                strict)


def higher_on_every_dataset(parents, splits, ks, method: str, reference: str, metric: str,
                            except_at_most: int = 0, strict: bool = True) -> Verdict:
    return _compare_per_dataset(parents, metric, method, reference, False, except_at_most,
                                strict)


def rank_at_most(parents, splits, ks, method: str, rank: int, share: float,
                 metric: str | None = None) -> Verdict:
    """`method` ranks `rank` or better (1 = best, ties share the better rank) by `metric`
    (default: the first k's accuracy) on at least `share` of the data sets it ran on. The
    evidence also counts the data sets with ties broken against `method` (every method with an
    equal value ahead of it) and names the methods it ties with: a boosted metric that stops
    after one round is its one-iteration counterpart, and shares its rank."""
    labels = _labels(parents, method)
    metric = metric or voc.accuracy(ks[0])
    if not labels or voc.mean(metric) not in parents:
        return Verdict(NOT_TESTABLE, f"needs {metric} of {method}")
    values = tables.values(parents, voc.mean(metric))
    ranks = values.rank(axis=1, ascending=False, method="min")
    against = values.rank(axis=1, ascending=False, method="max")
    parts, held = [], True
    for m in labels:
        ran = ranks[m].dropna()
        good = int((ran <= rank).sum())
        held &= good >= share * len(ran)
        text = (f"{m}: rank <= {rank} on {good} of {len(ran)} data sets "
                f"({int(values.notna().any().sum())} methods with {metric})")
        ties = {ds: [o for o in values.columns if o != m and values.at[ds, o] == values.at[ds, m]]
                for ds in ran.index}
        ties = {ds: others for ds, others in ties.items() if others}
        if ties:
            broken = int((against[m].dropna() <= rank).sum())
            named = "; ".join(f"{ds} with {', '.join(others)}" for ds, others in ties.items())
            text += (f", on {broken} with ties broken against it (tied on {len(ties)}: "
                     f"{named})")
        parts.append(text)
    return Verdict(HELD if held else NOT_HELD, "; ".join(parts))


def reaches_reference_sooner(parents, splits, ks, methods: list[str], reference: str,
                             tolerance: float, metric: str | None = None) -> Verdict:
    """On every data set where the reference (the first entry of method `reference`) and some
    method of `methods` ran, one of them comes within `tolerance` (absolute, e.g. 0.01
    accuracy) of the reference by `metric` in less fit time."""
    refs = _labels(parents, reference)
    labels = [label for name in methods for label in _labels(parents, name)]
    metric = metric or voc.accuracy(ks[0])
    if not refs or not labels:
        return Verdict(NOT_TESTABLE, f"needs runs of {reference} and of {', '.join(methods)}")
    acc = tables.values(parents, voc.mean(metric))
    fit = tables.values(parents, voc.mean(voc.wall_seconds("fit")))
    ref = refs[0]
    close = acc[labels].ge(acc[ref] - tolerance, axis=0) & fit[labels].lt(fit[ref], axis=0)
    rows = acc[ref].dropna().index
    tried = acc.loc[rows, labels].notna()
    per_set = close.loc[rows].any(axis=1)[tried.any(axis=1)]
    if per_set.empty:
        return Verdict(NOT_TESTABLE, f"no data set where {ref} and one of {', '.join(labels)} "
                                     "both ran")
    parts = [f"reference {ref} (first {reference} entry)"]
    for m in labels:
        both = rows[tried[m].to_numpy()]
        if both.empty:
            parts.append(f"{m}: no data set in common with {ref}")
            continue
        ratio = np.nanmedian(fit.loc[both, ref] / fit.loc[both, m])
        parts.append(f"{m}: within {tolerance:g} and faster on {int(close.loc[both, m].sum())} "
                     f"of the {len(both)} data sets both ran (median time ratio {ratio:.1f}x)")
    held = bool(per_set.all())
    return Verdict(HELD if held else NOT_HELD,
                   "; ".join(parts) + f"; some variant on {int(per_set.sum())} of {len(per_set)}")


def closest_reading(parents, splits, ks, method: str, reference: str, wins: int, losses: int,
                    cases: int, published: str | None = None) -> Verdict:
    """The paper's count of `wins` and `losses` of `method` against `reference` in `cases`
    (data set, k) under every reading the runs hold (`report.readings`: one per label of
    `method` and preprocessing): held when some reading wins in most of its cases (more than
    half) under the paper's test, the pooled z-test at 0.05 or at 0.0005 (its "0.05 %" read
    literally), as the paper's 42 of 60 does. The
    evidence names the reading and counting rule closest to the paper's counts, and the reading
    with the most wins under the z-test at 0.05."""
    if voc.N_TEST not in splits or "split" not in splits:
        return Verdict(NOT_TESTABLE, "needs the splits' test sizes and indices")
    try:
        near = readings.closest(parents, splits, ks, method, reference, wins, losses, cases,
                                published)
    except ValueError as err:
        return Verdict(NOT_TESTABLE, str(err))
    if near.empty:
        return Verdict(NOT_TESTABLE, f"needs runs of {method} and {reference}")
    ztest = near[near["rule"].isin(["z05", "z0005"])]
    held = bool((2 * ztest["win"] > ztest["cases"]).any())

    def said(row) -> str:
        return (f"{row['reading']} ({row['description']}) under {readings.RULES[row['rule']]}: "
                f"{row['win']} / {row['tie']} / {row['loss']} of {row['cases']}")

    z05 = near[near["rule"] == "z05"]
    most = z05.loc[(z05["win"] - z05["loss"]).idxmax()]
    return Verdict(HELD if held else NOT_HELD,
                   f"{near['reading'].nunique()} readings x {near['rule'].nunique()} counting "
                   f"rules; closest to {wins} / {losses} of {cases}: {said(near.iloc[0])}; "
                   f"the most wins over losses under the z-test at 0.05: {said(most)}")


CHECKS = {f.__name__: f for f in (wins_over, lowest_average_error, lower_on_every_dataset,
                                   higher_on_every_dataset, rank_at_most,
                                   reaches_reference_sooner, closest_reading)}


def check(claim: dict, parents: pd.DataFrame, splits: pd.DataFrame, ks: list[int]) -> Verdict:
    """The verdict on one claim of claims.yaml (`not testable here` without a `check`)."""
    spec = dict(claim.get("check") or {})
    if not spec:
        return Verdict(NOT_TESTABLE, claim.get("why_not", "no check defined"))
    kind = spec.pop("kind")
    if kind not in CHECKS:
        raise ValueError(f"claims.yaml: unknown check kind {kind!r}; known: {sorted(CHECKS)}")
    return CHECKS[kind](parents, splits, ks, **spec)


def claim_table(ctx) -> pd.DataFrame:
    """One row per claim of claims.yaml that names the report's benchmark (`ctx.experiment`):
    paper, claim, the paper's evidence, ours and the verdict; checked once per report."""
    def compute():
        rows = []
        for paper, items in papers.all_claims().items():
            for claim in items:
                if ctx.experiment not in claim.get("benchmarks", []):
                    continue
                verdict = check(claim, ctx.parents, ctx.splits, ctx.ks)
                rows.append({"paper": paper, "claim": claim["text"],
                             "paper's evidence": claim["paper"], "ours": verdict.evidence,
                             "verdict": verdict.verdict})
        return pd.DataFrame(rows, columns=["paper", "claim", "paper's evidence", "ours",
                                           "verdict"])

    return ctx.memo("claims", compute)
