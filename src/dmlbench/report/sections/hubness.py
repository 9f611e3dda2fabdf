"""Hubness of every method: N_k skewness, antihub share, largest N_k."""

from __future__ import annotations

from ... import vocabulary as voc
from .. import figures, tables
from ..base import Context, Section, export_table, html_table


def pooled_where_present(parents, k: int):
    """The parents with each hubness measure replaced by its pooled value (`pooled_<measure>`,
    the same on every split: sd 0) where the runs have one (leave-one-out, one k-fold, given folds)."""
    out = parents.copy()
    for measure in voc.HUBNESS_MEASURES:
        pooled = voc.mean(voc.pooled_hubness(measure, k))
        if pooled in out:
            have = out[pooled].notna()
            for stat in (voc.mean, voc.std):
                out.loc[have, stat(voc.hubness(measure, k))] = out.loc[
                    have, stat(voc.pooled_hubness(measure, k))]
    return out


def hubness(ctx: Context) -> Section | None:
    k = ctx.hubness_k
    if voc.mean(voc.skewness(k)) not in ctx.parents:
        return None
    links = ctx.run_links()
    parents = pooled_where_present(ctx.parents, k)
    sec = Section("hubness", f"Hubness (N{k})",
                  f"Skewness of the N{k} distribution of the training points in the test "
                  f"queries' {k}-NN lists, as in Table 2 of Shigeto 2017 (population moments; "
                  "smaller is less hubness), mean ± sd over splits; then the share of antihubs "
                  f"(training points in no list) and the largest N{k}. Where a protocol tests "
                  "every sample once (leave-one-out, one k-fold, given folds) and one job ran all its "
                  "splits, the values are those of the lists pooled over the splits (sd 0).")
    skew = tables.mean_std(parents, voc.skewness(k))
    best = tables.best_per_row(tables.values(parents, voc.mean(voc.skewness(k))), False)
    sec.table(html_table(skew, best, links), f"N{k} skewness",
              export_table(ctx, skew, voc.skewness(k)))
    anti = tables.mean_std(parents, voc.hubness("antihub_share", k), scale=100, digits=1)
    sec.table(html_table(anti, links=links), "Antihub share (%)",
              export_table(ctx, anti, voc.hubness("antihub_share", k)))
    top = tables.values(parents, voc.mean(voc.hubness("max", k)))
    sec.table(html_table(tables.fmt(top, 1), links=links), f"Largest N{k} (mean over splits)",
              export_table(ctx, top, f"max_n{k}"))
    fig = figures.skewness_vs_accuracy(parents, k, ctx.ks[0], ctx.figure_dir)
    sec.figure(fig, f"{ctx.ks[0]}-NN accuracy against N{k} skewness, one point per (data set, "
                    "method).")
    return sec
