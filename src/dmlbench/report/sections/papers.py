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
    for i, spec in enumerate(specs):
        title = spec.get("title") or f"{spec['table']} ({spec['metric']})"
        frame = papers.side_by_side(spec, ctx.parents)
        sec.note(papers.summary(frame, title))
        if frame.empty:
            continue
        links = pd.DataFrame({"ours": [ctx.run_url(r, e) if isinstance(r, str) else None
                                       for r, e in zip(frame["run_id"], frame["experiment_id"])]})
        shown = frame.drop(columns=["run_id", "experiment_id"])
        text = shown.copy()
        for column in ("paper", "paper ±", "ours", "ours ±", "difference", "s.e. of difference"):
            text[column] = shown[column].map(lambda v: "–" if pd.isna(v) else f"{v:.2f}")
        for column in ("reproduced", "within published s.e."):
            text[column] = shown[column].map({True: "yes", False: "no"}).fillna("–")
        best = pd.DataFrame({"reproduced": shown["reproduced"].fillna(False).astype(bool)})
        sec.table(html_table(text, best=best, links=links), title,
                  export_table(ctx, shown, f"paper_{i}_{spec['table']}"))
    return sec
