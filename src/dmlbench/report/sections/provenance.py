"""Provenance: what produced the numbers of the report (code, packages, machine, compute time,
config), read from the split runs' tags and timings."""

from __future__ import annotations

import pandas as pd

from ... import vocabulary as voc
from ..base import Context, Section, html_table


def _phases(splits: pd.DataFrame) -> list[str]:
    return [c for c in splits.columns if c.endswith("_wall_s")
            and c != voc.wall_seconds("extra_metrics")] + (
        [voc.wall_seconds("extra_metrics")] if voc.wall_seconds("extra_metrics") in splits else [])


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


def _duration(seconds: float) -> str:
    minutes = seconds / 60
    return f"{seconds:.0f} s" if minutes < 2 else (
        f"{minutes:.1f} min" if minutes < 120 else f"{minutes / 60:.2f} h")


def provenance(ctx: Context) -> Section | None:
    splits = ctx.splits
    if splits.empty:
        return None
    sec = Section("provenance", "Provenance",
                  "What produced these numbers, from the records behind the runs: the code "
                  "(git commit; '+dirty' marks uncommitted changes), the machine, the compute "
                  "time, and the config.")
    rows = {}
    for column, label in (("git_commit", "git commit"), ("machine", "machine"), ("host", "host")):
        if column in splits:
            counts = splits[column].fillna("unknown").value_counts()
            rows[label] = "; ".join(f"{value} ({n} splits)" for value, n in counts.items())
    total, span = compute_time(splits)
    rows["compute time"] = (f"{_duration(total)} summed over {len(splits)} splits (preprocess, "
                            "fit, search, evaluation)")
    if span is not None:
        rows["wall time"] = (f"{_duration(span)} from the first split's start to the last one's "
                             "finish (estimated from the records: job start-up not included)")
        finished = pd.to_datetime(splits["finished"], utc=True, format="ISO8601")
        rows["finished"] = f"{finished.min():%Y-%m-%d %H:%M} to {finished.max():%Y-%m-%d %H:%M} UTC"
    if ctx.config is not None:
        rows["config"] = "config.json (beside this page): the checked config of the run"
    versions = {c.removeprefix("version."): splits[c].dropna().unique()
                for c in splits.columns if c.startswith("version.")}
    if versions:
        rows["packages"] = ", ".join(f"{name} {'/'.join(map(str, v))}"
                                     for name, v in sorted(versions.items()) if len(v))
    sec.table(html_table(pd.DataFrame({"": rows})), "Provenance")
    return sec
