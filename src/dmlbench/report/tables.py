"""Report tables from the parent runs: accuracy per k, average error, N_k skewness, cost; the
splits' compute time (wall and CPU)."""

from __future__ import annotations

import pandas as pd

from .. import vocabulary as voc


def order(parents: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Data sets and methods in a stable display order (as first seen, methods EUC first)."""
    datasets = list(dict.fromkeys(parents.sort_values("dataset")["dataset"]))
    methods = list(dict.fromkeys(parents["method"]))
    methods.sort(key=lambda m: (m not in ("euclidean", "euc"), m))
    return datasets, methods


def mean_std(parents: pd.DataFrame, metric: str, scale: float = 1.0, digits: int = 2) -> pd.DataFrame:
    """Data set x method table of 'mean +/- std' strings of `metric` (parent means and stds)."""
    datasets, methods = order(parents)
    mean = parents.pivot(index="dataset", columns="method", values=voc.mean(metric)) * scale
    std = parents.pivot(index="dataset", columns="method", values=voc.std(metric)) * scale
    text = mean.map(lambda v: f"{v:.{digits}f}") + " ± " + std.map(lambda v: f"{v:.{digits}f}")
    text = text.where(mean.notna(), "–").reindex(index=datasets, columns=methods)
    return text.mask(over_budget(parents), "over budget")


def over_budget(parents: pd.DataFrame) -> pd.DataFrame:
    """Data set x method mask of the parent runs whose job went over its time or memory
    (`over_budget` records, config `over_budget: record`): shown as "over budget", never as a
    number of the splits that finished."""
    datasets, methods = order(parents)
    if "over_budget" not in parents:
        return pd.DataFrame(False, index=datasets, columns=methods)
    over = parents.assign(over=parents["over_budget"].notna())
    return over.pivot(index="dataset", columns="method", values="over").reindex(
        index=datasets, columns=methods).eq(True)


def values(parents: pd.DataFrame, column: str) -> pd.DataFrame:
    """Data set x method table of one numeric parent column."""
    datasets, methods = order(parents)
    return parents.pivot(index="dataset", columns="method", values=column).reindex(
        index=datasets, columns=methods)


def complete(table: pd.DataFrame) -> pd.DataFrame:
    """The data sets x methods table restricted to the methods evaluated at all (a method
    evaluated at other k only, e.g. LMNN with n_neighbors matched to k, has no column here) and
    then to the data sets on which every remaining method has a value."""
    return table.dropna(axis=1, how="all").dropna(axis=0, how="any")


def average_error(parents: pd.DataFrame, ks: list[int]) -> pd.DataFrame:
    """Method x k table of the error averaged over data sets (in %), as Fig. 7 of
    Abou-Moustafa 2017; only data sets on which every method ran are averaged."""
    _, methods = order(parents)
    rows = {}
    for k in ks:
        table = complete(values(parents, voc.mean(voc.error(k))))
        rows[f"k = {k}"] = table.mean(axis=0) * 100
    return pd.DataFrame(rows).reindex(methods)


def mean_rank(parents: pd.DataFrame, ks: list[int]) -> pd.DataFrame:
    """Method x k table of the mean rank of the test accuracy over data sets (1 = best)."""
    _, methods = order(parents)
    rows = {}
    for k in ks:
        table = complete(values(parents, voc.mean(voc.accuracy(k))))
        rows[f"k = {k}"] = table.rank(axis=1, ascending=False).mean(axis=0)
    return pd.DataFrame(rows).reindex(methods)


def rank_order(ranks: pd.DataFrame) -> list[str]:
    """Methods by their mean rank of the first k (best first; ties in display order), then
    those ranked at other k only (`mean_rank`'s table)."""
    first = ranks.columns[0]
    ranked = ranks[first].dropna().sort_values(kind="stable")
    rest = ranks.drop(index=ranked.index)
    rest = rest.assign(_best=rest.min(axis=1)).sort_values("_best", kind="stable")
    return list(ranked.index) + list(rest.index)


def best_per_row(table: pd.DataFrame, higher_is_better: bool = True) -> pd.DataFrame:
    """Boolean mask of the best entry (ties included) in each row of a numeric table."""
    best = table.max(axis=1) if higher_is_better else table.min(axis=1)
    return table.eq(best, axis=0)


def fmt(table: pd.DataFrame, digits: int) -> pd.DataFrame:
    """Numbers as fixed-point strings, missing entries as an en dash."""
    return table.map(lambda v: "–" if pd.isna(v) else f"{v:.{digits}f}")


def _phases(splits: pd.DataFrame) -> list[str]:
    return [c for c in splits.columns if c.endswith("_wall_s")
            and c != voc.wall_seconds("extra_metrics")] + (
        [voc.wall_seconds("extra_metrics")] if voc.wall_seconds("extra_metrics") in splits else [])


def cpu_seconds(splits: pd.DataFrame) -> float:
    """The CPU seconds of the splits' jobs: fit, tuning (a tuned split's inner fits and scores,
    and the default setting's fit when fitted apart: `tuning_cpu_s`) and evaluation
    (preprocessing, search, scoring), summed over the splits: every `<phase>_cpu_s` metric of
    the split runs (`benchmarks/job_times.py --cpu` sums the same from the records)."""
    phases = [c for c in splits.columns if c.endswith("_cpu_s") and "." not in c]
    return float(splits[phases].fillna(0.0).to_numpy().sum())


def compute_time(splits: pd.DataFrame) -> tuple[float, float | None]:
    """(sum of the splits' measured wall seconds, span in seconds from the first split's start
    to the last split's finish); a split's start is its finish minus its measured seconds, so
    the span leaves out job start-up and waiting (None without finish times)."""
    seconds = splits[_phases(splits)].fillna(0.0).sum(axis=1)
    if "finished" not in splits or splits["finished"].isna().all():
        return float(seconds.sum()), None
    finished = pd.to_datetime(splits["finished"], utc=True, format="ISO8601")
    start = finished - pd.to_timedelta(seconds, unit="s")
    return float(seconds.sum()), float((finished.max() - start.min()).total_seconds())


def duration(seconds: float) -> str:
    minutes = seconds / 60
    return f"{seconds:.0f} s" if minutes < 2 else (
        f"{minutes:.1f} min" if minutes < 120 else f"{minutes / 60:.2f} h")


def code_versions(splits: pd.DataFrame) -> dict[str, tuple[int, list[str]]]:
    """{code version: (its split runs, the git commits they name)} of the split runs, most
    splits first (`records.code_version`; 'unknown' for records written before it was
    recorded, when other runs have one); {} when no run names one."""
    if "code_version" not in splits or splits["code_version"].isna().all():
        return {}
    commits = splits["git_commit"] if "git_commit" in splits else None
    known = pd.DataFrame({"code_version": splits["code_version"].fillna("unknown"),
                          "git_commit": "unknown" if commits is None else commits.fillna("unknown")})
    out = {}
    for version, rows in sorted(known.groupby("code_version"), key=lambda g: -len(g[1])):
        commits = [_short_commit(c) for c in rows["git_commit"].value_counts().index]
        out[str(version)] = (len(rows), commits)
    return out


def unversioned_commits(splits: pd.DataFrame) -> list[str]:
    """The git commits (12 digits, '+dirty' kept) that split runs without a recorded code
    version name, most splits first: records written before `records.code_version` was
    recorded; [] when every run names its version (`code_versions` covers those)."""
    if "git_commit" not in splits:
        return []
    unversioned = (splits["code_version"].isna() if "code_version" in splits
                   else pd.Series(True, index=splits.index))
    counts = splits.loc[unversioned, "git_commit"].fillna("unknown").value_counts()
    return [_short_commit(c) for c in counts.index]


def _short_commit(commit) -> str:
    """A git commit's first 12 digits, '+dirty' kept (a run from uncommitted changes)."""
    return str(commit)[:12] + ("+dirty" if str(commit).endswith("+dirty") else "")
