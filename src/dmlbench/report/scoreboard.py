"""The fidelity scoreboard: `reports/index.html`, the entry page of the published reports.

Built from the files the reports export, not from MLflow: each report's `tables/paper_*.csv`
(our numbers beside a published table, `papers.side_by_side`) and `tables/claims.csv` (the
papers' claims with verdicts, `report/claims.py`). For every published table that any report
compared: its cells in all, those compared, within `papers.Z_DIFFERENCE` standard errors of the
difference (or the stated tolerance), within the published standard error alone (the old
criterion, shown beside; a cell judged by a stated tolerance counts the same under both), outside with ours better or worse, and those not compared because the data set
is not obtainable, needs a download, or was not run. A table run under several readings of a
choice the paper leaves open (`variant` of its paper_tables entries) has a row per variant; the
totals count, per table, the variant with the most cells within. For every claim: the verdict and
evidence of each report that tested it.
"""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from ..files import atomic_path
from . import papers

OLD_WITHIN = "within published s.e. (old criterion)"
COUNTS = ["cells", "compared", "within", OLD_WITHIN, "outside, ours better", "outside, ours worse",
          "outside (no direction)", "no verdict", "not run here", "needs a download",
          "not obtainable"]


def _reports(reports_dir: Path) -> list[Path]:
    return sorted(p.parent for p in reports_dir.glob("*/index.html"))


def compared_cells(reports_dir: Path) -> pd.DataFrame:
    """Every published cell some report compared (one row per cell: the report with the most
    splits wins when several compared it), with the report's name."""
    frames = []
    for report in _reports(reports_dir):
        for path in sorted((report / "tables").glob("paper_*.csv")):
            frame = pd.read_csv(path, index_col=0)
            if {"table", "metric"} <= set(frame.columns):
                frames.append(frame.assign(report=report.name))
    if not frames:
        return pd.DataFrame()
    cells = pd.concat(frames, ignore_index=True)
    cells = cells[np.isfinite(cells["ours"].astype(float))]
    cells["setting"] = cells["setting"].fillna("").astype(str)
    cells["variant"] = cells.get("variant", pd.Series("", index=cells.index)).fillna("").astype(str)
    key = ["table", "variant", "metric", "data set", "method", "setting"]
    return cells.sort_values("splits", ascending=False, kind="stable").drop_duplicates(key)


def _outcome(row) -> str:
    if pd.isna(row["reproduced"]):
        return "no verdict"
    if str(row["reproduced"]) in ("True", "1.0"):  # a bool, or 1.0 once concatenated with NaN
        return "within"
    direction = papers.DIRECTION.get(row["metric"], 0)
    if direction == 0:
        return "outside (no direction)"
    better = np.sign(row["difference"]) == direction
    return "outside, ours better" if better else "outside, ours worse"


def table_counts(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per published results table of the papers (`papers.result_tables`): the counts
    of `COUNTS`, all cells "not run here", "needs a download" or "not obtainable" for a table
    no report compared."""
    rows = {}
    for table in papers.result_tables():
        published = papers.published(table)
        published = published[published["value"].notna()]
        ours = cells[cells["table"] == table] if not cells.empty else pd.DataFrame(
            columns=["variant", "metric", "data set", "method", "setting"])
        variants = sorted(set(ours["variant"])) or [""]
        for variant in variants:
            name = f"{table} [{variant}]" if variant else table
            rows[name] = _counts(table, published, ours[ours["variant"] == variant])
    return pd.DataFrame.from_dict(rows, orient="index", columns=COUNTS)


def _counts(table: str, published: pd.DataFrame, ours: pd.DataFrame) -> dict:
    done = set(zip(ours["metric"], ours["data set"], ours["method"], ours["setting"]))
    counts = dict.fromkeys(COUNTS, 0)
    counts["cells"], counts["compared"] = len(published), len(ours)
    for outcome in (ours.apply(_outcome, axis=1) if len(ours) else []):
        counts[outcome] += 1
    # the old criterion: the published s.e. alone where the paper prints one; a cell judged by
    # a stated tolerance has the same verdict under both
    old = ours["within published s.e."] if "within published s.e." in ours else pd.Series(
        np.nan, index=ours.index)
    old = old.where(old.notna(), ours["reproduced"]) if len(ours) else old
    counts[OLD_WITHIN] = int(old.astype(str).isin(["True", "1.0"]).sum())
    for _, cell in published.iterrows():
        setting = "" if pd.isna(cell["setting"]) else str(cell["setting"])
        if (cell["metric"], cell["dataset"], cell["method"], setting) in done:
            continue
        where = papers.availability(table.split("_")[0], cell["dataset"])
        counts[{"embedded": "not run here", "download": "needs a download",
                "not obtainable": "not obtainable"}[where]] += 1
    return counts


def totals(counts: pd.DataFrame) -> pd.Series:
    """The counts summed over tables, each table once: of its variants, the one with the most
    cells within."""
    table = counts.index.str.replace(r" \[.*\]$", "", regex=True)
    best = counts.assign(table=table).sort_values("within", ascending=False, kind="stable")
    return best.drop_duplicates("table").drop(columns="table").sum()


def claim_rows(reports_dir: Path) -> pd.DataFrame:
    """The claims every report tested, with its verdict and evidence, by report."""
    frames = [pd.read_csv(report / "tables" / "claims.csv", index_col=0).assign(report=report.name)
              for report in _reports(reports_dir) if (report / "tables" / "claims.csv").exists()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _table_html(frame: pd.DataFrame, link_column: str | None = None) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for idx, row in frame.iterrows():
        cells = []
        for column, value in row.items():
            text = html.escape(str(value))
            if column == link_column:
                text = f'<a href="{html.escape(quote(str(value)))}/index.html">{text}</a>'
            cells.append(f"<td>{text}</td>")
        body.append(f"<tr><th>{html.escape(str(idx))}</th>{''.join(cells)}</tr>")
    return (f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(body)}"
            "</tbody></table>")


def write(reports_dir: str | Path) -> Path:
    """Write `reports_dir/index.html`: the scoreboard and a link to every report."""
    reports_dir = Path(reports_dir)
    cells = compared_cells(reports_dir)
    counts = table_counts(cells)
    claims = claim_rows(reports_dir)
    parts = ["<h1>dmlbench: published reports</h1>",
             "<p>Each report below was built by the workflow from the records committed beside "
             "it (<code>records/</code>); <code>dmlbench report --records "
             "reports/&lt;name&gt;/records</code> rebuilds it without refitting anything.</p>"]
    if not counts.empty:
        total = totals(counts)
        parts += ["<h2>Published tables</h2>",
                  f"<p>{total['compared']} of {total['cells']} published cells compared: "
                  f"{total['within']} within {papers.Z_DIFFERENCE:g} standard errors of the "
                  "difference (paper's and ours) or the stated tolerance "
                  f"({total[OLD_WITHIN]} within the published standard error alone, the old "
                  f"criterion), {total['outside, ours better']} outside with ours better, "
                  f"{total['outside, ours worse']} outside with ours worse, "
                  f"{total['outside (no direction)']} outside where neither side is better "
                  f"(e.g. a chosen hyper-parameter), {total['no verdict']} without a verdict; "
                  f"{total['not obtainable']} cells need data that cannot be had, "
                  f"{total['needs a download']} need a download, {total['not run here']} were "
                  "not run. A table run under several readings of a choice the paper leaves "
                  "open has a row per reading (in brackets); the totals count the reading with "
                  "the most cells within.</p>", _table_html(counts)]
    if not claims.empty:
        verdicts = claims["verdict"].value_counts()
        parts += ["<h2>The papers' claims</h2>",
                  "<p>" + ", ".join(f"{n} {v}" for v, n in verdicts.items()) + ".</p>",
                  _table_html(claims.set_index("claim")[
                      ["paper", "paper's evidence", "ours", "verdict", "report"]],
                              link_column="report")]
    links = "".join(f'<li><a href="{html.escape(quote(r.name))}/index.html">'
                    f"{html.escape(r.name)}</a></li>" for r in _reports(reports_dir))
    parts += ["<h2>Reports</h2>", f"<ul>{links}</ul>"]
    page = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>dmlbench reports"
            "</title><style>body{font-family:sans-serif;margin:2rem;max-width:1200px}"
            "table{border-collapse:collapse;font-size:.85rem}td,th{border:1px solid #ddd;"
            "padding:.2rem .45rem;vertical-align:top}th{background:#f4f4f4;text-align:left}"
            "</style></head><body>" + "".join(parts) + "</body></html>\n")
    path = reports_dir / "index.html"
    with atomic_path(path) as tmp:
        tmp.write_text(page)
    if not counts.empty:
        with atomic_path(reports_dir / "scoreboard.csv") as tmp:
            counts.to_csv(tmp)
    return path
