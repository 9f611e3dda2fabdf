"""The papers' headline claims that this benchmark tests, each with a verdict and our evidence
(report/claims.py)."""

from __future__ import annotations

import pandas as pd

from .. import claims, papers
from ..base import Context, Section, export_table, html_table


def claim_table(ctx: Context) -> pd.DataFrame:
    """One row per claim of claims.yaml that names this benchmark."""
    rows = []
    for paper, items in papers.all_claims().items():
        for claim in items:
            if ctx.experiment not in claim.get("benchmarks", []):
                continue
            verdict = claims.check(claim, ctx.parents, ctx.splits, ctx.ks)
            rows.append({"paper": paper, "claim": claim["text"], "paper's evidence": claim["paper"],
                         "ours": verdict.evidence, "verdict": verdict.verdict})
    return pd.DataFrame(rows, columns=["paper", "claim", "paper's evidence", "ours", "verdict"])


def claims_section(ctx: Context) -> Section | None:
    table = claim_table(ctx)
    if table.empty:
        return None
    sec = Section("claims", "The papers' claims",
                  "Each headline claim this benchmark can test (report/paper_tables/claims.yaml), "
                  "checked on our runs: held, not held, or not testable here (methods or data "
                  "sets missing).")
    shown = table.set_index("claim")
    sec.table(html_table(shown), "Claims and verdicts", export_table(ctx, table, "claims"))
    held = (table["verdict"] == claims.HELD).sum()
    sec.note(f"{held} of {len(table)} claims held on these runs.")
    return sec
