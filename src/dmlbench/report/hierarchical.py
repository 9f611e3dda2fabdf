"""Bayesian hierarchical comparisons (`measure.hierarchical`; Corani et al. 2017, Benavoli et
al. 2017) of every method against the reference metric (Euclidean when the benchmark has it)
and against the best-ranked method, at each k, from the per-fold test accuracies: computed once
per report and k, in the renderer's pool, and shared by the hierarchical section and the
summary's headline.

A comparison of method M against R uses the data sets on which both have at least two folds in
common (the folds paired by their split index), at least `MIN_DATASETS`; rho of a data set is
the mean over its folds of n_test / (n_train + n_test) (1/K for K-fold cross-validation); the
rope is the config's `report.rope`. The comparisons of one k are sampled together
(`hierarchical_tests`, one batch per number of data sets, seeded by k), and their figure
(stacked bars of P(better), P(rope), P(worse) per method) is drawn in the same task.
"""

from __future__ import annotations

import zlib
from concurrent.futures import Future
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import vocabulary as voc
from ..measure.hierarchical import hierarchical_tests
from . import comparisons, ranking, settings
from .base import Context, save_figure
from .palette import BLUE, VERMILLION

MIN_DATASETS = 2
#: a comparison whose chains disagree by more than this split R-hat (Vehtari, Gelman, Simpson,
#: Carpenter & Buerkner 2021 advise 1.01) is sampled again with `RESAMPLE`; one still above it
#: keeps its verdict only if each chain alone reaches the same one, else it is "undecided"
RHAT_LIMIT = 1.01
#: the second sampling: 8 chains of 10 000 kept draws after 1 000 warm-up iterations each
RESAMPLE = {"chains": 8, "n_samples": 80_000, "warmup": 1_000}
#: the three outcomes in the figure's order, with their colours
OUTCOMES = (("P(better)", BLUE), ("P(rope)", "#BBBBBB"), ("P(worse)", VERMILLION))


def verdict(p_better: float, p_rope: float, p_worse: float) -> str:
    """"better", "worse", "equivalent" with a posterior of at least `comparisons.DECISION`,
    else "undecided"."""
    if p_better >= comparisons.DECISION:
        return "better"
    if p_worse >= comparisons.DECISION:
        return "worse"
    if p_rope >= comparisons.DECISION:
        return "equivalent"
    return "undecided"


def fold_table(splits: pd.DataFrame, k: int) -> pd.DataFrame:
    """One row per (data set, method, split index) with the split's k-NN accuracy and its
    share of test points n_test / (n_train + n_test); empty when the runs carry no fold-level
    accuracies of k."""
    column = voc.accuracy(k)
    needed = {column, voc.N_TRAIN, voc.N_TEST, "split"}
    if splits.empty or not needed <= set(splits.columns):
        return pd.DataFrame(columns=["dataset", "method", "split", "accuracy", "test_share"])
    frame = splits.dropna(subset=[column, "split"]).sort_values("start_time")
    frame = frame.drop_duplicates(["dataset", "method", "split"], keep="last")
    return pd.DataFrame({
        "dataset": frame["dataset"], "method": frame["method"],
        "split": frame["split"].astype(int), "accuracy": frame[column].astype(float),
        "test_share": (frame[voc.N_TEST] / (frame[voc.N_TRAIN] + frame[voc.N_TEST])).astype(float),
    }).reset_index(drop=True)


def paired_folds(folds: pd.DataFrame, method: str, against: str) -> dict | None:
    """{"datasets", "a", "b", "rho"} of `method` (a) against `against` (b): per data set with
    at least two common folds, the paired fold accuracies and rho; None with fewer than
    `MIN_DATASETS` such data sets."""
    mine = folds[folds["method"] == method].set_index(["dataset", "split"])
    theirs = folds[folds["method"] == against].set_index(["dataset", "split"])
    common = mine.index.intersection(theirs.index)
    out = {"datasets": [], "a": [], "b": [], "rho": []}
    for dataset in dict.fromkeys(common.get_level_values(0)):
        keys = common[common.get_level_values(0) == dataset].sort_values()
        if len(keys) < 2:
            continue
        out["datasets"].append(dataset)
        out["a"].append(mine.loc[keys, "accuracy"].to_numpy())
        out["b"].append(theirs.loc[keys, "accuracy"].to_numpy())
        out["rho"].append(float(mine.loc[keys, "test_share"].mean()))
    return out if len(out["datasets"]) >= MIN_DATASETS else None


def compare(pairs: dict[tuple[str, str], dict], rope: float, k: int) -> pd.DataFrame:
    """One row per (method, against) of `pairs` ({(method, against): `paired_folds`}): the
    posterior probabilities that the method is practically better, equivalent, worse, the
    verdict, the data sets and folds used, the mean difference and the chains' R-hat (a pair
    whose R-hat exceeds `RHAT_LIMIT` is sampled again, longer: `RESAMPLE`). A pair
    whose mirror (against, method) is also asked for (the reference against the best-ranked
    method, which is compared with the reference) is not sampled again: the model is symmetric
    in A and B (the differences change sign, the priors are symmetric), so its posterior is
    the mirror's with P(better) and P(worse) exchanged."""
    sampled = {}
    by_size: dict[int, list] = {}
    for key, pair in pairs.items():
        if key[::-1] not in by_size.get(len(pair["datasets"]), []):
            by_size.setdefault(len(pair["datasets"]), []).append(key)
    for size, keys in sorted(by_size.items()):
        results = hierarchical_tests(
            [(pairs[key]["a"], pairs[key]["b"]) for key in keys], rope,
            rho=[pairs[key]["rho"] for key in keys],
            random_state=zlib.crc32(f"hierarchical|{k}|{size}".encode()))
        for key, result in zip(keys, results):
            sampled[key] = (result.p_a, result.p_rope, result.p_b, result.rhat, True)
    for key in [key for key, result in sampled.items() if result[3] > RHAT_LIMIT]:
        pair = pairs[key]
        result = hierarchical_tests(
            [(pair["a"], pair["b"])], rope, rho=[pair["rho"]], **RESAMPLE,
            random_state=zlib.crc32(f"hierarchical|{k}|{key[0]}|{key[1]}".encode()))[0]
        sampled[key] = (result.p_a, result.p_rope, result.p_b, result.rhat,
                        result.rhat <= RHAT_LIMIT or _chains_agree(result, RESAMPLE["chains"]))
    rows = []
    for (method, against), pair in pairs.items():
        if (method, against) in sampled:
            p_better, p_rope, p_worse, rhat, decided = sampled[(method, against)]
        else:
            p_worse, p_rope, p_better, rhat, decided = sampled[(against, method)]
        difference = np.mean([np.mean(a - b) for a, b in zip(pair["a"], pair["b"])])
        rows.append({"method": method, "against": against, "P(better)": p_better,
                     "P(rope)": p_rope, "P(worse)": p_worse,
                     "verdict": (verdict(p_better, p_rope, p_worse) if decided
                                 else "undecided"),
                     "data sets": len(pair["datasets"]), "folds": sum(len(a) for a in pair["a"]),
                     "mean difference (points)": 100 * float(difference), "R-hat": rhat})
    return pd.DataFrame(rows)


def _chains_agree(result, chains: int) -> bool:
    """Whether each chain's own draws (`result.samples`, chain after chain) give the verdict
    of all of them together: the verdict does not hang on a chain that has not mixed."""
    pooled = verdict(result.p_a, result.p_rope, result.p_b)
    for draws in result.samples.reshape(chains, -1, 3):
        p_a, p_rope, p_b = np.bincount(np.argmax(draws, axis=1), minlength=3) / len(draws)
        if verdict(p_a, p_rope, p_b) != pooled:
            return False
    return True


def figure_name(k: int) -> str:
    return f"hierarchical_k{k}.png"


def bars_figure(table: pd.DataFrame, order: list[str], references: list[str], k: int):
    """Stacked horizontal bars of P(better), P(rope), P(worse) per method, one panel per
    compared-against method (methods in `order`, best rank on top)."""
    fig, axes = plt.subplots(1, len(references), squeeze=False, sharey=False,
                             figsize=(5.0 * len(references), 0.9 + 0.24 * len(order)))
    for ax, reference in zip(axes[0], references):
        rows = table[table["against"] == reference].set_index("method")
        methods = [m for m in order if m in rows.index][::-1]
        left = np.zeros(len(methods))
        for column, colour in OUTCOMES:
            values = rows.loc[methods, column].to_numpy(dtype=float)
            ax.barh(methods, values, left=left, color=colour, height=0.75,
                    label=column.replace("rope", "equivalent"))
            left += values
        ax.axvline(comparisons.DECISION, color="black", linewidth=0.6, linestyle=":")
        ax.axvline(1 - comparisons.DECISION, color="black", linewidth=0.6, linestyle=":")
        ax.set_xlim(0, 1)
        ax.set_title(f"against {reference}, {k}-NN", fontsize=10)
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(False)
    axes[0][0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.06 - 1.2 / (2 + len(order))),
                      ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def compare_and_draw(pairs: dict, rope: float, k: int, order: list[str],
                     references: list[str], figure_dir: Path) -> pd.DataFrame:
    """`compare` and its figure (`figure_name`); the renderer's task."""
    table = compare(pairs, rope, k)
    save_figure(bars_figure(table, order, references, k), figure_dir, figure_name(k))
    return table


def references(ctx: Context, k: int) -> tuple[str, str] | None:
    """(reference, best-ranked method) of k: the signed-rank comparisons' reference (Euclidean
    when the benchmark has it) and the method of the best mean rank at k; None with fewer than
    two ranked methods."""
    scores = ranking.scores(ctx, k)
    ranks = ranking.ranks(ctx)[f"k = {k}"].dropna()
    if scores.shape[1] < 2 or ranks.empty:
        return None
    return comparisons.reference_method(list(scores.columns)), str(ranks.idxmin())


def results(ctx: Context, k: int) -> Future | None:
    """The comparisons of k (a future of `compare_and_draw`'s table), submitted once per
    report; None when no method has `MIN_DATASETS` data sets of fold-level accuracies in
    common with the reference."""
    def submit():
        named = references(ctx, k)
        if named is None:
            return None
        reference, best = named
        folds = fold_table(ctx.splits, k)
        order = [m for m in ranking.order(ctx) if m in set(ranking.scores(ctx, k).columns)]
        pairs = {}
        for against in dict.fromkeys((reference, best)):
            for method in order:
                if method != against:
                    pair = paired_folds(folds, method, against)
                    if pair is not None:
                        pairs[(method, against)] = pair
        if not pairs:
            return None
        against = [r for r in dict.fromkeys((reference, best))
                   if any(key[1] == r for key in pairs)]
        ctx.figures_written.add(figure_name(k))
        return ctx.submit(compare_and_draw, pairs, settings.rope(ctx.config), k, order,
                          against, ctx.figure_dir)

    return ctx.memo(("hierarchical", k), submit)


def headline(table: pd.DataFrame, reference: str) -> dict[str, list[str]]:
    """{verdict: methods} against `reference` ("better", "equivalent", "worse", "undecided")."""
    rows = table[table["against"] == reference]
    return {word: list(rows.loc[rows["verdict"] == word, "method"])
            for word in ("better", "equivalent", "worse", "undecided")}
