"""The fidelity scoreboard: `reports/index.html`, the entry page of the published reports.

Built from the files the reports export, not from MLflow: each report's `tables/paper_*.csv`
(our numbers beside a published table, `papers.side_by_side`) and `tables/claims.csv` (the
papers' claims with verdicts, `report/claims.py`). For every published table that any report
compared: its cells in all, those compared, within `papers.Z_DIFFERENCE` standard errors of the
difference (or the stated tolerance), within the published standard error alone (the old
criterion, shown beside; a cell judged by a stated tolerance counts the same under both), outside with ours better or worse, and those not compared because the data set
is not obtainable, needs a download, or was not run. A table run under several readings of a
choice the paper leaves open (`variant` of its paper_tables entries) has a row per variant (a
variant rerunning only some cells is completed by the published run's other cells); the totals
count, per table, the variant with the most cells within. For every claim: the verdict and
evidence of each report that tested it. Each paper gets a verdict (`verdict`): reproduced,
reproduced in part, or not reproduced under the N readings of `paper_tables/readings.yaml`.
"""

from __future__ import annotations

import html
import re
from importlib import resources
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
import yaml

from ..files import atomic_path
from . import papers
from .base import fitted, plain_widths

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
    no report compared. A reading (a `variant`) that runs only the cells it changes (as the
    RCA start below full rank) is completed by the published run's other cells of the table,
    so that each row counts the whole table under one reading."""
    key = ["metric", "data set", "method", "setting"]
    rows = {}
    for table in papers.result_tables():
        published = papers.published(table)
        published = published[published["value"].notna()]
        ours = cells[cells["table"] == table] if not cells.empty else pd.DataFrame(
            columns=["variant", *key])
        base = ours[ours["variant"] == ""]
        variants = sorted(set(ours["variant"])) or [""]
        for variant in variants:
            name = f"{table} [{variant}]" if variant else table
            own = ours[ours["variant"] == variant]
            if variant:
                covered = pd.MultiIndex.from_frame(own[key])
                own = pd.concat([own, base[~pd.MultiIndex.from_frame(base[key]).isin(covered)]])
            rows[name] = _counts(table, published, own)
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


def papers_of() -> list[str]:
    """Every paper with transcribed tables or claims (its key, e.g. "chang-2012")."""
    folder = resources.files("dmlbench.report") / "paper_tables"
    names = {e.name.split("_")[0] for e in folder.iterdir() if e.name.endswith(".csv")}
    names |= set(papers.all_claims())
    return sorted(names)


#: the verdict rule (`verdict`): a paper is "reproduced" when every claim tested held and at
#: least REPRODUCED_SHARE of its compared cells with a verdict lie within; "not reproduced" when
#: fewer than NOT_REPRODUCED_SHARE of its tested claims held and of its cells lie within; else
#: "reproduced in part". Within is 2 standard errors of the difference, so a perfect
#: reproduction has about 95 % of its cells within: 3/4 leaves room for the paper's own slips.
REPRODUCED_SHARE = 0.75
NOT_REPRODUCED_SHARE = 0.5
REPRODUCED, IN_PART, NOT_REPRODUCED, NOT_ASSESSED = (
    "reproduced", "reproduced in part", "not reproduced", "not assessed")


def verdict(held: int, not_held: int, within: int, outside: int) -> str:
    """The verdict on a paper from its claims tested (`held`, `not_held`) and its compared cells
    with a verdict (`within`, `outside`): see REPRODUCED_SHARE. A side with nothing tested does
    not count; "not assessed" when neither has anything."""
    shares = [part / (part + rest) for part, rest in ((held, not_held), (within, outside))
              if part + rest]
    if not shares:
        return NOT_ASSESSED
    claims_all = not_held == 0
    if claims_all and all(s >= REPRODUCED_SHARE for s in shares):
        return REPRODUCED
    if all(s < NOT_REPRODUCED_SHARE for s in shares):
        return NOT_REPRODUCED
    return IN_PART


def readings_of() -> dict[str, dict]:
    """Per paper, the readings it was run and published under and the page documenting them
    (`paper_tables/readings.yaml`: {page, readings})."""
    with (resources.files("dmlbench.report") / "paper_tables" / "readings.yaml").open() as fh:
        return yaml.safe_load(fh)


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:text.rfind(" ", 0, limit - 2)] + " \u2026"


def paper_verdicts(counts: pd.DataFrame, claims: pd.DataFrame, reports: list[str]) -> pd.DataFrame:
    """One row per paper: the `verdict` (reproduced / reproduced in part / not reproduced under
    N readings, N from `readings_of`), its one-line `reason` (the claims held and the cells
    within, and the first claim not held), and in `detail` its published results tables (the
    `totals` of its rows of `counts`) and its claims by verdict; the reports that ran it."""
    documented = readings_of()
    rows = {}
    for paper in papers_of():
        mine = counts[counts.index.str.startswith(paper + "_")] if not counts.empty else counts
        total = totals(mine) if len(mine) else pd.Series(0, index=COUNTS)
        if len(mine):
            tables = (f"{total['within']} of {total['compared']} compared cells within "
                      f"{papers.Z_DIFFERENCE:g} s.e. of the difference or the tolerance "
                      f"({total['outside, ours better']} outside with ours "
                      f"better, {total['outside, ours worse']} with ours worse"
                      + (f", {total['outside (no direction)']} with neither better"
                         if total["outside (no direction)"] else "")
                      + f")" + (f", {total['no verdict']} without a verdict (no published error)"
                                 if total["no verdict"] else "")
                      + f"; {total['cells'] - total['compared']} of {total['cells']} "
                      "published cells not compared")
        else:
            tables = "no published results table (its results are figures and prose)"
        own = claims[claims["paper"] == paper] if not claims.empty else claims
        verdicts = own["verdict"].value_counts() if len(own) else pd.Series(dtype=int)
        said = ("claims: " + ", ".join(f"{n} {v}" for v, n in verdicts.items())
                if len(verdicts) else "no claim tested")
        ran = sorted({r for r in reports if r == paper or r.startswith(paper + "-")}
                     | (set(own["report"]) if len(own) else set()))
        held, not_held = int(verdicts.get("held", 0)), int(verdicts.get("not held", 0))
        outside = int(total["outside, ours better"] + total["outside, ours worse"]
                      + total["outside (no direction)"])
        within = int(total["within"])
        outcome = verdict(held, not_held, within, outside)
        if outcome == NOT_REPRODUCED:
            n = len((documented.get(paper) or {}).get("readings") or [])
            if not n:
                raise ValueError(f"paper_tables/readings.yaml: no readings of {paper}, whose "
                                 "verdict is 'not reproduced under N readings'")
            outcome += f" under {n} reading{'s' * (n != 1)}"
        reason = []
        if held + not_held:
            reason.append(f"{held} of {held + not_held} claims held")
        if within + outside:
            reason.append(f"{within} of {within + outside} cells within")
        first_miss = own.loc[own["verdict"] == "not held", "claim"] if len(own) else []
        if len(first_miss):
            reason.append(f"not held: \u201c{_short(str(first_miss.iloc[0]))}\u201d")
        rows[paper] = {"verdict": outcome, "reason": "; ".join(reason) or "nothing compared",
                       "detail": f"{tables}; {said}.", "reports": ran}
    return pd.DataFrame.from_dict(rows, orient="index")


def _paper_title(key: str) -> str:
    """ "abou-moustafa-2017" -> "Abou-Moustafa 2017"."""
    name, year = key.rsplit("-", 1)
    return f"{'-'.join(part.capitalize() for part in name.split('-'))} {year}"


def _report_link(name: str) -> str:
    return f'<a href="{html.escape(quote(name))}/index.html">{html.escape(name)}</a>'


def _table_html(frame: pd.DataFrame, html_columns: tuple[str, ...] = ()) -> str:
    """A sortable table (the reports' style and script) with the index as its first column;
    `html_columns` hold HTML already. Too wide for a narrow window, it is cut into parts side
    by side as the reports' tables are (`base.fitted`)."""
    shown = frame.astype(str)  # what each cell shows, for its width
    for column in html_columns:
        shown[column] = shown[column].map(lambda cell: re.sub(r"<[^>]+>", "", cell))
    shown.index = shown.index.astype(str)
    first, widths = plain_widths(shown, first_max_px=ROW_LABEL_MAX_PX)
    return fitted(first, widths, lambda p: _part_html(frame.iloc[:, p], html_columns))


def _part_html(frame: pd.DataFrame, html_columns: tuple[str, ...]) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for idx, row in frame.iterrows():
        cells = "".join(
            ("<td>" if isinstance(value, (int, float, np.number)) else '<td class="text">')
            + (value if column in html_columns else html.escape(str(value))) + "</td>"
            for column, value in row.items())
        body.append(f"<tr><th>{html.escape(str(idx))}</th>{cells}</tr>")
    return (f'<div class="table-wrap"><table class="dataframe sortable"><thead><tr><th></th>'
            f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def _claim_cell(row) -> str:
    """The claim folded: its first words as the summary, the claim, the paper's evidence and
    ours in the body."""
    claim = str(row["claim"])
    short = claim if len(claim) <= 90 else claim[:claim.rfind(" ", 0, 88)] + " \u2026"
    evidence = html.escape(str(row["paper's evidence"]))
    return (f"<details><summary>{html.escape(short)}</summary><p>{html.escape(claim)}</p>"
            f"<p><b>Paper:</b> {evidence}</p>"
            f"<p><b>Ours:</b> {html.escape(str(row['ours']))}</p></details>")


#: the widest a row name is laid out (`STYLE`; it wraps beyond): 17rem
ROW_LABEL_MAX_PX = 17 * 16
#: the scoreboard's additions to the reports' style: text cells left-aligned, long row names
#: wrapped (column names wrap on every page) so that the tables fit the page
STYLE = ("table.dataframe td.text { text-align: left; }"
         "table.dataframe tbody th { white-space: normal; min-width: 9rem; max-width: 17rem; }")


def _template(name: str) -> str:
    return (resources.files("dmlbench.report") / "templates" / name).read_text()


def write(reports_dir: str | Path) -> Path:
    """Write `reports_dir/index.html`: one verdict per paper and the list of reports first, then
    the published tables' counts and the claims (folded)."""
    reports_dir = Path(reports_dir)
    cells = compared_cells(reports_dir)
    counts = table_counts(cells)
    claims = claim_rows(reports_dir)
    reports = [r.name for r in _reports(reports_dir)]
    verdicts = paper_verdicts(counts, claims, reports)
    verdicts.index = [_paper_title(k) for k in verdicts.index]
    verdicts["reports"] = [", ".join(_report_link(r) for r in names)
                           for names in verdicts["reports"]]
    parts = ["<h1>dmlbench: published reports</h1>",
             "<p class='meta'>Each report was built by the workflow from the records committed "
             "beside it (<code>records/</code>); <code>dmlbench report --records "
             "reports/&lt;name&gt;/records</code> rebuilds it without refitting anything.</p>",
             "<h2 id='verdicts'>Verdict per paper</h2>",
             f"<p>Reproduced: every claim tested held and at least {REPRODUCED_SHARE:.0%} of "
             "the compared cells with a verdict lie within; not reproduced: fewer than "
             f"{NOT_REPRODUCED_SHARE:.0%} of the claims tested held and of the cells lie "
             "within, under the readings of the paper run and published (each paper's page "
             "under docs/papers/ names them); otherwise reproduced in part. A claim counts once "
             "per report that tested it; claims not testable here do not count.</p>",
             _table_html(verdicts, html_columns=("reports",)),
             "<h2 id='reports'>Reports</h2>",
             "<ul class='reports'>" + "".join(f"<li>{_report_link(r)}</li>" for r in reports)
             + "</ul>"]
    if not counts.empty:
        total = totals(counts)
        parts += ["<h2 id='tables'>Published tables</h2>",
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
                  "open has a row per reading (in brackets; a reading that reruns only some "
                  "cells is completed by the published run's others); the totals count the "
                  "reading with the most cells within. Click a column's header to sort.</p>",
                  _table_html(counts)]
    if not claims.empty:
        verdict_counts = claims["verdict"].value_counts()
        folded = pd.DataFrame({
            "paper": [_paper_title(p) for p in claims["paper"]],
            "claim (click to unfold)": [_claim_cell(row) for _, row in claims.iterrows()],
            "verdict": claims["verdict"].to_list(),
            "report": [_report_link(r) for r in claims["report"]]},
            index=pd.RangeIndex(1, len(claims) + 1))
        parts += ["<h2 id='claims'>The papers' claims</h2>",
                  "<p>" + ", ".join(f"{n} {v}" for v, n in verdict_counts.items()) + ". Each "
                  "claim unfolds to the paper's evidence and ours.</p>",
                  _table_html(folded, html_columns=("claim (click to unfold)", "report"))]
    page = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>dmlbench reports</title><style>{_template('page.css')}{STYLE}</style></head><body>"
            + "".join(parts) + f"<script>{_template('sort.js')}</script></body></html>\n")
    path = reports_dir / "index.html"
    with atomic_path(path) as tmp:
        tmp.write_text(page)
    if not counts.empty:
        with atomic_path(reports_dir / "scoreboard.csv") as tmp:
            counts.to_csv(tmp)
    return path
