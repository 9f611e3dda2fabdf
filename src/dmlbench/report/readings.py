"""Readings of a paper: several entries of one method, each a way of reading what the paper did
(a config label with its parameters, on data sets with their preprocessing), every one counted
against a reference method on the same data sets and splits, under several counting rules.

A reading is one (method label, preprocessing) pair among the runs: a parameter of the method
(e.g. RMVEM's `owner`) makes a label, a data set's preprocessing (e.g. z-scored copies of the
sets) makes its runs another reading of the same label. Its cases are (data set, k). Counting
rules (`RULES`), from the reference method's side (a win: the method is better):

- `z05`: the pooled z-test for two proportions at 0.05 on the misclassified test points summed
  over the splits (Abou-Moustafa 2017, sect. 5.3; `statistics.win_tie_loss`);
- `z0005`: the same at alpha = 0.0005, the paper's "0.05 %" read literally;
- `t05`: the paired t-test over the splits' accuracies at 0.05 (`statistics.paired_t_test`);
- `means`: the mean accuracy over the splits compared, no test (equal means: a tie).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import vocabulary as voc
from ..measure import statistics

#: counting rule -> its name in tables
RULES = {"z05": "z-test 0.05", "z0005": "z-test 0.0005 (\"0.05 %\")",
         "t05": "paired t-test 0.05", "means": "means"}
#: two mean accuracies closer than this are equal (the smallest non-zero difference of two
#: 10-fold means of test sets under 10^4 points is above 1e-6)
MEANS_EQUAL = 1e-9


@dataclass(frozen=True)
class Reading:
    """One (method label, preprocessing) and the data-set labels it ran on."""

    method: str
    preprocess: str
    datasets: tuple[str, ...]

    def name(self, published: Reading) -> str:
        """The method label, with the preprocessing where it is not the published reading's."""
        if self.preprocess == published.preprocess:
            return self.method
        steps = json.loads(self.preprocess)
        return f"{self.method} on {'+'.join(map(_shown, steps)) or 'raw'} features"

    def describe(self, parents: pd.DataFrame, published: Reading | None) -> str:
        """What differs from the `published` reading: parameters, preprocessing."""
        mine = parameters(parents, self.method)
        base = {} if published is None else parameters(parents, published.method)
        parts = [f"{k} = {_shown(mine[k])}" for k in sorted(mine) if base.get(k) != mine[k]]
        parts += [f"{k} = default" for k in sorted(base) if k not in mine]
        if published is None or self.preprocess != published.preprocess:
            steps = json.loads(self.preprocess)
            parts.append("preprocess: " + (", ".join(_shown(s) for s in steps) or "none"))
        return "; ".join(parts) if parts else "the published reading"


def _shown(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def parameters(parents: pd.DataFrame, label: str) -> dict:
    """The config parameters of the method label `label` (its first parent run)."""
    text = parents.loc[parents["method"] == label, "method_params"].iloc[0]
    return {k: json.loads(v) for k, v in json.loads(text).items()}


def labels(parents: pd.DataFrame, name: str) -> list[str]:
    """Config labels of the registered method `name`, in the order of the runs."""
    return list(dict.fromkeys(parents.loc[parents["method_name"] == name, "method"]))


def find(parents: pd.DataFrame, method: str, reference: str) -> tuple[list[Reading], str]:
    """(the readings of the registered method `method`, the label of `reference`, which must
    have one label): one per (label, preprocessing), on the data sets the reference also ran
    on, in the order of the runs."""
    refs = labels(parents, reference)
    if len(refs) != 1:
        raise ValueError(f"readings need one entry of the reference method {reference!r}, found "
                         f"{refs or 'none'}")
    ref_sets = set(parents.loc[parents["method"] == refs[0], "dataset"])
    mine = parents[parents["method"].isin(labels(parents, method))
                   & parents["dataset"].isin(ref_sets)]
    out = []
    for (label, preprocess), group in mine.groupby(["method", "preprocess"], sort=False):
        out.append(Reading(label, preprocess, tuple(group["dataset"])))
    return out, refs[0]


def published(found: list[Reading], label: str) -> Reading:
    """The published reading: the method label `label` under the preprocessing most readings
    share (readings vary one thing at a time from it)."""
    common = pd.Series([r.preprocess for r in found]).value_counts().index[0]
    for reading in found:
        if reading.method == label and reading.preprocess == common:
            return reading
    raise ValueError(f"no reading of {label!r} with the preprocessing most readings share "
                     f"({common}); readings: {[(r.method, r.preprocess) for r in found]}")


def cases(splits: pd.DataFrame, ks: list[int], reading: Reading, reference: str) -> pd.DataFrame:
    """One row per (data set, k) of `reading`: the pooled accuracies and test points of the
    method and the reference, the z-test p-value, the paired t-test p-value over the splits
    (matched by split index) and the difference of the mean accuracies."""
    rows = []
    for dataset in reading.datasets:
        part = splits[splits["dataset"] == dataset]
        a = part[part["method"] == reading.method].set_index("split")
        b = part[part["method"] == reference].set_index("split")
        common = a.index.intersection(b.index)
        if len(common) < len(a.index.union(b.index)):
            raise ValueError(f"{dataset}: {reading.method} and {reference} ran on different "
                             f"splits ({sorted(a.index)} and {sorted(b.index)}); a reading is "
                             "compared split by split")
        a, b = a.loc[common], b.loc[common]
        for k in ks:
            acc_a, acc_b = a[voc.accuracy(k)].to_numpy(float), b[voc.accuracy(k)].to_numpy(float)
            n = a[voc.N_TEST].to_numpy(float)
            correct_a, correct_b = np.rint(acc_a * n), np.rint(acc_b * n)
            pooled_a, pooled_b = correct_a.sum() / n.sum(), correct_b.sum() / n.sum()
            _, p_z = statistics.ztest_two_proportions(pooled_a, pooled_b, int(n.sum()))
            _, p_t = statistics.paired_t_test(acc_a[None], acc_b[None])
            rows.append({"dataset": dataset, "k": k, "accuracy": pooled_a,
                         "reference accuracy": pooled_b, "n_test": int(n.sum()),
                         "splits": len(common), "p_z": p_z, "p_t": float(p_t[0]),
                         "mean difference": float(acc_a.mean() - acc_b.mean())})
    return pd.DataFrame(rows)


def count(table: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Win / tie / loss of the method against the reference under each rule of `RULES`, from
    the cases of `cases`."""
    pooled = table["accuracy"] - table["reference accuracy"]
    means = table["mean difference"].where(table["mean difference"].abs() > MEANS_EQUAL, 0.0)
    return {"z05": statistics.outcomes(pooled, table["p_z"] < 0.05),
            "z0005": statistics.outcomes(pooled, table["p_z"] < 0.0005),
            "t05": statistics.outcomes(table["mean difference"], table["p_t"] < 0.05),
            "means": statistics.outcomes(means, np.ones(len(table), dtype=bool))}


def distance(counts: dict[str, int], wins: int, losses: int, cases_: int) -> float:
    """How far win / loss counts are from the paper's, as shares of each count's cases: |w / c
    - W / C| + |l / c - L / C| (0: the paper's proportions)."""
    total = sum(counts.values())
    return abs(counts["win"] / total - wins / cases_) + abs(counts["loss"] / total - losses / cases_)


def closest(parents: pd.DataFrame, splits: pd.DataFrame, ks: list[int], method: str,
            reference: str, wins: int, losses: int, cases_: int,
            published_label: str | None = None) -> pd.DataFrame:
    """One row per (reading, rule): its counts and `distance` from the paper's, closest first
    (the published reading: `published_label`, default the method's registered name)."""
    found, ref = find(parents, method, reference)
    base = published(found, published_label or method)
    rows = []
    for reading in found:
        counts = count(cases(splits, ks, reading, ref))
        description = reading.describe(parents, base)
        for rule, c in counts.items():
            rows.append({"reading": reading.name(base), "description": description,
                         "rule": rule,
                         **c, "cases": sum(c.values()),
                         "distance": distance(c, wins, losses, cases_)})
    return pd.DataFrame(rows).sort_values("distance", kind="stable").reset_index(drop=True)
