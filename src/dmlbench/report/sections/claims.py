"""The papers' headline claims that this benchmark tests, each with a verdict and our evidence
(report/claims.py)."""

from __future__ import annotations

import pandas as pd

from .. import claims
from ..base import Context, Section, export_table, html_table


def claims_section(ctx: Context) -> Section | None:
    table = claims.claim_table(ctx)
    if table.empty:
        return None
    sec = Section("claims", "The papers' claims",
                  "Each headline claim this benchmark can test (report/paper_tables/claims.yaml), "
                  "checked on our runs: held, not held, or not testable here (methods or data "
                  "sets missing).")
    # numbered rows, the claim a column of its own: a row label does not wrap (page.css), and a
    # claim is a sentence
    shown = table.set_index(pd.RangeIndex(1, len(table) + 1, name="#"))
    sec.table(html_table(shown), "Claims and verdicts", export_table(ctx, table, "claims"))
    held = (table["verdict"] == claims.HELD).sum()
    sec.note(f"{held} of {len(table)} claims held on these runs.")
    return sec
