"""Provenance: what produced the numbers of the report (code, packages, machine, compute time,
config), read from the split runs' tags and timings."""

from __future__ import annotations

import pandas as pd

from .. import tables
from ..base import Context, Section, html_table


def provenance(ctx: Context) -> Section | None:
    splits = ctx.splits
    if splits.empty:
        return None
    sec = Section("provenance", "Provenance",
                  "What produced these numbers, from the records behind the runs: the code "
                  "(git commit; '+dirty' marks uncommitted changes), the machine, the compute "
                  "time, and the config.")
    rows = {}
    versions = tables.code_versions(splits)
    if versions:
        rows["code version"] = "; ".join(
            f"{version} (git {', '.join(commits)}; {n} splits)"
            for version, (n, commits) in versions.items())
    if len(versions) > 1:
        sec.note(f"Warning: these records come from {len(versions)} code versions "
                 f"({', '.join(versions)}): a change of the code between them may have "
                 "changed some numbers. Run the benchmark again from one commit to be sure.")
    commits = tables.unversioned_commits(splits)
    if len(commits) > 1:
        shown = ", ".join(commits[:5]) + (f" and {len(commits) - 5} more" if len(commits) > 5
                                          else "")
        sec.note(f"Warning: {len(commits)} commits computed these records ({shown}), most "
                 "splits first, which predate the recording of code versions: a "
                 "change of the code between them may have changed some numbers. Run the "
                 "benchmark again from one commit to be sure.")
    for column, label in (("git_commit", "git commit"), ("machine", "machine"), ("host", "host")):
        if column in splits:
            counts = splits[column].fillna("unknown").value_counts()
            rows[label] = "; ".join(f"{value} ({n} splits)" for value, n in counts.items())
    total, span = tables.compute_time(splits)
    rows["compute time"] = (f"{tables.duration(total)} summed over {len(splits)} splits (preprocess, "
                            "tuning, fit, search, evaluation; wall clock)")
    rows["CPU time"] = (f"{tables.duration(tables.cpu_seconds(splits))} summed over the same "
                        "(the figure of the summary)")
    if span is not None:
        rows["wall time"] = (f"{tables.duration(span)} from the first split's start to the last one's "
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

