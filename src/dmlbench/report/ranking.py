"""How the methods rank over the data sets, computed once per report and shared by the
sections that show it (summary, leaderboard, statistics): mean ranks per k (`tables.mean_rank`),
the leaderboard's order, the Friedman test and the Nemenyi critical-difference diagram."""

from __future__ import annotations

import pandas as pd

from .. import vocabulary as voc
from ..measure.statistics import friedman, mean_ranks, nemenyi_cd
from . import figures, palette, tables
from .base import Context


def ranks(ctx: Context) -> pd.DataFrame:
    """Method x k table of the mean rank of the test accuracy (`tables.mean_rank`)."""
    return ctx.memo("mean_rank", lambda: tables.mean_rank(ctx.parents, ctx.ks))


def order(ctx: Context) -> list[str]:
    """Every method of the runs, best mean rank of the first k first (`tables.rank_order`)."""
    def compute():
        ranked = tables.rank_order(ranks(ctx))
        _, methods = tables.order(ctx.parents)
        return ranked + [m for m in methods if m not in ranked]

    return ctx.memo("rank_order", compute)


def scores(ctx: Context, k: int) -> pd.DataFrame:
    """Data sets x methods accuracy of k on the data sets where every method ran."""
    return tables.complete(tables.values(ctx.parents, voc.mean(voc.accuracy(k))))


def friedman_p(ctx: Context, k: int) -> float | None:
    """p of the Friedman test of k (None when it cannot be run: < 3 methods or 2 data sets)."""
    try:
        return friedman(scores(ctx, k))[1]
    except ValueError:
        return None


def colours(ctx: Context) -> dict[str, str]:
    """{method: colour} of the palette (a colour per family)."""
    return ctx.memo("colours", lambda: {m: s.colour for m, s in
                                        palette.styles(ctx.parents).items()})


def critical_difference(ctx: Context, k: int) -> tuple[str, float, pd.Series] | None:
    """(figure name, CD, mean ranks) of k, the diagram drawn once; None with fewer than two
    methods or data sets."""
    def compute():
        table = scores(ctx, k)
        if table.shape[0] < 2 or table.shape[1] < 2:
            return None
        mean = mean_ranks(table)
        cd = nemenyi_cd(table.shape[1], table.shape[0])
        name = ctx.figure(f"critical_difference_k{k}.png", figures.critical_difference, mean,
                          cd, colours(ctx))
        return name, cd, mean

    return ctx.memo(("critical_difference", k), compute)
