"""Beside the papers: our numbers next to the published tables a config names."""

from __future__ import annotations

import pandas as pd

from .. import papers, settings
from ..base import Context, Section, export_table, html_table


def paper_tables(ctx: Context) -> Section | None:
    specs = settings.paper_tables(ctx.config)
    if not specs:
        return None
    sec = Section("papers", "Beside the papers",
                  "Our numbers next to the published ones; the difference is ours - paper. A "
                  f"cell reproduces when the difference is at most {papers.Z_DIFFERENCE:g} "
                  "standard errors of the difference, sqrt(paper s.e.^2 + our s.e.^2) with our "
                  "s.e. = sd / sqrt(splits) (or the stated tolerance where the paper prints no "
                  "error); 'within published s.e.' is the old criterion, the paper's standard "
                  "error alone.")
    for i, (spec, title, frame) in enumerate(papers.compared(ctx)):
        sec.note(papers.summary(frame, title))
        if frame.empty:
            continue
        keys = dict(zip(ctx.parents["run_id"], ctx.parents["parent_key"]))
        links = pd.DataFrame({"ours": [ctx.parent_link(keys.get(r), r, e) if isinstance(r, str)
                                       else None
                                       for r, e in zip(frame["run_id"], frame["experiment_id"])]})
        shown = frame.drop(columns=["run_id", "experiment_id"])
        text = shown.copy()
        for column in ("paper", "paper ±", "ours", "ours ±", "difference", "s.e. of difference"):
            text[column] = shown[column].map(lambda v: "–" if pd.isna(v) else f"{v:.2f}")
        for column in ("reproduced", "within published s.e."):
            text[column] = shown[column].map({True: "yes", False: "no"}).fillna("–")
        best = pd.DataFrame({"reproduced": shown["reproduced"].fillna(False).astype(bool)})
        files = export_table(ctx, shown, f"paper_{i}_{spec['table']}")
        text, same = _compact(text)
        best.index = links.index = text.index
        sec.table(html_table(text, best=best, links=links),
                  title + "".join(f"; {c}: {v}" for c, v in same.items() if v), files)
    return sec


def _compact(text: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The page's view of a side-by-side table: columns with one value throughout left out
    (returned to name in the caption), each row named by its data set, method and setting."""
    same = {c: str(text[c].iloc[0]) for c in ("table", "variant", "metric", "setting", "criterion")
            if c in text and text[c].astype(str).nunique() <= 1}
    key = [c for c in ("data set", "method", "setting") if c in text and c not in same]
    out = text.drop(columns=list(same) + key)
    out.index = [" / ".join(str(v) for v in row) for row in text[key].itertuples(index=False)]
    out.index.name = " / ".join(key)
    return out, same
