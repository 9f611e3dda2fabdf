"""Hubness reduction beside metric learning (issue 18): N_k skewness, antihub share and k-NN
accuracy of every method before and after each reduction of its distances, per data set, and
whether a learned metric (Move-labeled, LMNN, NCA) still gains from a reducer.

A reduced entry (a method evaluated through `hubness_reduction`, tag `dmlbench.hubness_reduction`)
is paired with the entry of the same method, parameters and preprocessing without a reduction on
the same data set. Skewness and antihub share are the pooled ones (`pooled_<measure>_n<k>`: every
sample tested once: leave-one-out, one k-fold, given folds) where the runs have them, else the test
queries' per split.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ... import vocabulary as voc
from .. import figures, palette, tables
from ..base import Context, Section, export_table, html_table

NONE = "none"
#: registered names of the metrics that do not learn (the baseline a reducer is first judged on)
BASELINES = ("euclidean",)


def _measure(parents: pd.DataFrame, measure: str, k: int) -> tuple[pd.Series, pd.Series]:
    """(values, whether pooled) of a hubness measure per parent: pooled where present."""
    pooled = voc.mean(voc.pooled_hubness(measure, k))
    test = parents[voc.mean(voc.hubness(measure, k))]
    if pooled not in parents:
        return test, pd.Series(False, index=parents.index)
    return parents[pooled].fillna(test), parents[pooled].notna()


def pairs(parents: pd.DataFrame, k: int, ks: list[int]) -> pd.DataFrame:
    """One row per (data set, base method, reduction) with its numbers; `reduction` is 'none'
    for the base entry itself. Reduced entries without a base on their data set keep the
    reduced entry's own label as method."""
    p = parents.copy()
    p["reduction"] = p["hubness_reduction"].where(p["hubness_reduction"].notna(), NONE)
    p["skewness"], p["pooled"] = _measure(p, "skewness", k)
    p["antihub_share"] = _measure(p, "antihub_share", k)[0]
    for kk in ks:
        p[voc.accuracy(kk)] = p[voc.mean(voc.accuracy(kk))]
    match = ["dataset", "method_name", "method_params", "preprocess"]
    base = p[p["reduction"] == NONE].drop_duplicates(match)[match + ["method"]]
    p = p.merge(base.rename(columns={"method": "base"}), on=match, how="left")
    p["base"] = p["base"].fillna(p["method"])
    has_reduction = set(p.loc[p["reduction"] != NONE, "base"])
    keep = p[p["base"].isin(has_reduction)]
    return keep[["dataset", "base", "method_name", "reduction", "skewness", "pooled",
                 "antihub_share", *[voc.accuracy(kk) for kk in ks]]].reset_index(drop=True)


def _reductions(frame: pd.DataFrame) -> list[str]:
    rest = sorted(set(frame["reduction"]) - {NONE})
    return [NONE, *rest]


def layout(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """(data set, method) x reduction table of one column."""
    table = frame.pivot_table(index=["dataset", "base"], columns="reduction", values=column,
                              aggfunc="first")
    return table.reindex(columns=[r for r in _reductions(frame) if r in table.columns])


def gains(frame: pd.DataFrame, column: str, scale: float = 1.0) -> pd.DataFrame:
    """Method x reduction table: the change of `column` from the method without reduction,
    averaged over the data sets where both ran (times `scale`)."""
    table = layout(frame, column) * scale
    if NONE not in table:
        return pd.DataFrame()
    change = table.drop(columns=NONE).sub(table[NONE], axis=0)
    return change.groupby(level="base").mean()


def _wins(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    table = layout(frame, column)
    if NONE not in table:
        return pd.DataFrame()
    better = table.drop(columns=NONE).gt(table[NONE], axis=0)
    known = table.drop(columns=NONE).notna() & table[NONE].notna().to_numpy()[:, None]
    return (better & known).groupby(level="base").sum().astype(int).astype(str) + "/" + \
        known.groupby(level="base").sum().astype(int).astype(str)


def _finding(frame: pd.DataFrame, accuracy: str) -> str:
    """Each method's best reducer (among those run on every data set the method ran on) with
    its mean accuracy and skewness changes; then, on the data sets both ran on, the best
    reducer's gain for each learned metric against that for the Euclidean metric."""
    acc, skew = layout(frame, accuracy) * 100, layout(frame, "skewness")
    if NONE not in acc:
        return ""
    gain = acc.drop(columns=NONE).sub(acc[NONE], axis=0).dropna(how="all")
    skew_gain = skew.drop(columns=NONE).sub(skew[NONE], axis=0)
    names = frame.drop_duplicates("base").set_index("base")["method_name"]
    datasets = {base: sorted(set(part.index.get_level_values("dataset")))
                for base, part in gain.groupby(level="base")}

    def best(base: str, among: list[str]):
        part = gain.xs(base, level="base").reindex(among).dropna(axis=1, how="any")
        if part.empty:
            return None
        means = part.mean()
        top = means.idxmax()
        return top, means[top], skew_gain.xs(base, level="base").reindex(among)[top].mean()

    lines = []
    for base, among in datasets.items():
        found = best(base, among)
        if found:
            lines.append(f"{base} {found[1]:+.1f} points with {found[0]} (skewness "
                         f"{found[2]:+.2f}) over {len(among)} data set(s)")
    text = (f"Best reducer per method (one run on each of its data sets), change of "
            f"{voc.parse_k(accuracy)}-NN accuracy averaged over them: "
            + "; ".join(lines) + ".")
    pairs_text = []
    for base, among in datasets.items():
        if names.get(base) in BASELINES:
            continue
        for plain in (b for b in datasets if names.get(b) in BASELINES):
            common = sorted(set(among) & set(datasets[plain]))
            mine, theirs = best(base, common), best(plain, common)
            if mine and theirs:
                pairs_text.append(f"{base} {mine[1]:+.1f} ({mine[0]}) against {plain} "
                                  f"{theirs[1]:+.1f} ({theirs[0]}) on {', '.join(common)}")
    if pairs_text:
        text += (" On the same data sets, the best reducer's gain for each learned metric "
                 "against the Euclidean metric's: " + "; ".join(pairs_text) + ".")
    return text


def figure(frame: pd.DataFrame, accuracy: str, k: int, colours: dict[str, str]):
    """Per data set: accuracy against N_k skewness, an arrow from each method to each of its
    reductions; a colour per method (its family's), a marker per reduction."""
    datasets = sorted(frame.loc[frame["reduction"] != NONE, "dataset"].unique())
    bases = list(dict.fromkeys(frame["base"]))
    reductions = _reductions(frame)
    markers = dict(zip(reductions, "o^sDvP*Xph<>" * 3))
    top = figures.legend_height(len(bases) + len(reductions), 6)
    fig, axes = figures.grid(len(datasets), 4.1, 3.4, top=top)
    for ax, dataset in zip(axes, datasets):
        part = frame[frame["dataset"] == dataset]
        for base in bases:
            rows = part[part["base"] == base].set_index("reduction")
            if rows.empty:
                continue
            for reduction, row in rows.iterrows():
                ax.scatter(row["skewness"], 100 * row[accuracy], color=colours[base],
                           marker=markers[reduction], s=30)
                if reduction != NONE and NONE in rows.index:
                    start = rows.loc[NONE]
                    ax.annotate("", (row["skewness"], 100 * row[accuracy]),
                                (start["skewness"], 100 * start[accuracy]),
                                arrowprops={"arrowstyle": "->", "color": colours[base],
                                            "alpha": 0.5})
        ax.set_title(dataset)
        ax.set_xlabel(f"N{k} skewness")
        ax.set_ylabel(f"{accuracy.replace('_', ' ')} (%)")
    handles = [plt.Line2D([], [], color=colours[b], marker="o", linestyle="", label=b)
               for b in bases]
    handles += [plt.Line2D([], [], color="grey", marker=markers[r], linestyle="", label=r)
                for r in reductions]
    fig.legend(handles=handles, loc="upper center", ncol=6, frameon=False, fontsize="small",
               bbox_to_anchor=(0.5, 1.0))
    return fig


def section(ctx: Context) -> Section | None:
    p = ctx.parents
    if "hubness_reduction" not in p or p["hubness_reduction"].isna().all():
        return None
    k = ctx.hubness_k
    frame = pairs(p, k, ctx.ks)
    main = k if k in ctx.ks else max(ctx.ks)
    accuracy = voc.accuracy(main)
    sec = Section("hubness-reduction", "Hubness reduction",
                  "Each method as it is (none) and through each hubness reduction of its "
                  "distances: mutual proximity (MP, Schnitzer et al. 2012), local scaling (LS, "
                  "Zelnik-Manor & Perona 2004), NICDM (Jegou et al. 2007), DisSim local (Hara et "
                  f"al. 2016). N{k} skewness and antihub share are pooled over the splits (*) "
                  "where the protocol tests every sample once (leave-one-out, one k-fold, given folds), "
                  "else those of the test queries, mean over splits. Does a learned metric "
                  "(Move-labeled, LMNN, NCA) still gain from a reducer, or do both fix the same "
                  "thing? The last tables give each method's mean change over the data sets.")
    skew = layout(frame, "skewness")
    pooled = layout(frame.assign(pooled=frame["pooled"].astype(float)), "pooled") == 1.0
    text = tables.fmt(skew, 2).where(~pooled, tables.fmt(skew, 2) + " *")
    sec.table(html_table(_flat(text)), f"N{k} skewness (* pooled)",
              export_table(ctx, _flat(skew), f"hubness_reduction_skewness_n{k}"))
    anti = layout(frame, "antihub_share") * 100
    sec.table(html_table(_flat(tables.fmt(anti, 1))), f"Antihub share (%) of N{k}",
              export_table(ctx, _flat(anti), f"hubness_reduction_antihub_share_n{k}"))
    for kk in ctx.ks:
        acc = layout(frame, voc.accuracy(kk)) * 100
        best = tables.best_per_row(acc)
        sec.table(html_table(_flat(tables.fmt(acc, 1)), _flat(best)),
                  f"{kk}-NN test accuracy (%), mean over splits (best per row in bold)",
                  export_table(ctx, _flat(acc), f"hubness_reduction_{voc.accuracy(kk)}"))
    change = gains(frame, accuracy, 100)
    if not change.empty:
        wins = _wins(frame, accuracy).reindex_like(change)
        text = tables.fmt(change, 1) + " (" + wins + ")"
        sec.table(html_table(text), f"Change of {main}-NN accuracy (points) from each reducer, "
                  "mean over data sets (in brackets: data sets where it is higher / both ran)",
                  export_table(ctx, change, f"hubness_reduction_gain_k{main}"))
        skew_change = gains(frame, "skewness")
        sec.table(html_table(tables.fmt(skew_change, 2)),
                  f"Change of N{k} skewness from each reducer, mean over data sets",
                  export_table(ctx, skew_change, f"hubness_reduction_skewness_change_n{k}"))
        sec.note(_finding(frame, accuracy))
    style = palette.styles(ctx.parents)
    colours = {b: style[b].colour if b in style else palette.BLACK for b in frame["base"]}
    sec.figure(ctx.figure(f"hubness_reduction_n{k}.png", figure, frame, accuracy, k, colours),
               f"{main}-NN accuracy against N{k} skewness per data set: each method (colour) "
               "as it is (circle) and through each reducer (marker), arrows from the former.")
    return sec


def _flat(table: pd.DataFrame) -> pd.DataFrame:
    """Rows 'data set / method' instead of a two-level index (HTML and CSV)."""
    out = table.copy()
    out.index = [f"{d} / {m}" for d, m in table.index]
    return out
