"""Bayesian hierarchical comparisons (`measure.hierarchical`; Corani et al. 2017, Benavoli et
al. 2017) of every method against the reference metric (Euclidean when the benchmark has it)
and against the best-ranked method, at each k, from the per-fold test accuracies: computed once
per report and k, in the renderer's pool, and shared by the hierarchical section and the
summary's headline. This test decides the report's verdicts (`report.verdicts`).

A comparison of method M against R uses the data sets on which both have at least two folds in
common (the folds paired by their split index), at least `MIN_DATASETS`; rho of a data set is
the mean over its folds of n_test / (n_train + n_test) (1/K for K-fold cross-validation); the
rope is the config's `report.rope`. The comparisons of one k are sampled together
(`hierarchical_tests`, one batch per number of data sets, seeded by k) until each is clear of
`verdicts.DECISION` by `monte_carlo.MARGIN` Monte-Carlo standard errors or has
`hierarchical.MAX_CHAINS` chains (else its verdict is "borderline"); their figure (stacked
bars of P(better), P(rope), P(worse) per method) is drawn in the same task. The rope
sensitivity compares every method with the reference again at the other ropes of `ROPES`.
The same comparisons serve any view whose fold accuracies have the shape of `fold_table`
(the k-tuned view, `report.k_tuned`).
"""

from __future__ import annotations

import zlib
from concurrent.futures import Future
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import vocabulary as voc
from ..measure.hierarchical import N_SAMPLES, hierarchical_tests
from . import comparisons, ranking, settings, verdicts
from .base import Context, Section, export_table, html_table, save_figure
from .palette import BLUE, VERMILLION

MIN_DATASETS = 2
#: a comparison whose chains disagree by more than this split R-hat (Vehtari, Gelman, Simpson,
#: Carpenter & Buerkner 2021 advise 1.01) is sampled again with `RESAMPLE`; one still above it
#: keeps its verdict only if each chain alone reaches the same one, else it is "borderline"
RHAT_LIMIT = 1.01
#: the second sampling: 8 chains of 10 000 kept draws after 1 000 warm-up iterations each
#: (and more chains of that length while the verdict is not clear of the threshold)
RESAMPLE = {"chains": 8, "n_samples": 80_000, "warmup": 1_000}
#: the ropes of the sensitivity table (half-widths on the accuracy's scale: 0.01 = one point)
ROPES = (0.005, 0.01, 0.02)
#: the three outcomes in the figure's order, with their colours
OUTCOMES = (("P(better)", BLUE), ("P(rope)", "#BBBBBB"), ("P(worse)", VERMILLION))
#: the Monte-Carlo standard errors of the three probabilities, in the same order
ERRORS = ("s.e. P(better)", "s.e. P(rope)", "s.e. P(worse)")


def view_name(label) -> str:
    """How a view is named in captions: '3-NN' for k = 3, 'k tuned' for the k-tuned view."""
    return f"{label}-NN" if isinstance(label, (int, np.integer)) else f"k {label}"


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


def compare(pairs: dict[tuple[str, str], dict], rope: float, label) -> pd.DataFrame:
    """One row per (method, against) of `pairs` ({(method, against): `paired_folds`}): the
    posterior probabilities that the method is practically better, equivalent, worse, their
    Monte-Carlo standard errors and the draws they come from, the verdict
    (`verdicts.hierarchical`, or "borderline" when the draws cannot place the most probable
    outcome against `verdicts.DECISION`), the data sets and folds used, the mean difference and
    the chains' R-hat (a pair whose R-hat exceeds `RHAT_LIMIT` is sampled again, longer:
    `RESAMPLE`). `label` (the k, or a view's name) seeds the draws. A pair whose mirror
    (against, method) is also asked for (the reference against the best-ranked method, which
    is compared with the reference) is not sampled again: the model is symmetric in A and B
    (the differences change sign, the priors are symmetric), so its posterior is the mirror's
    with P(better) and P(worse) exchanged."""
    sampled = {}
    by_size: dict[int, list] = {}
    for key, pair in pairs.items():
        if key[::-1] not in by_size.get(len(pair["datasets"]), []):
            by_size.setdefault(len(pair["datasets"]), []).append(key)
    for size, keys in sorted(by_size.items()):
        results = hierarchical_tests(
            [(pairs[key]["a"], pairs[key]["b"]) for key in keys], rope,
            rho=[pairs[key]["rho"] for key in keys], settle_at=verdicts.DECISION,
            random_state=zlib.crc32(f"hierarchical|{label}|{size}".encode()))
        sampled.update(zip(keys, results))
    agree = dict.fromkeys(sampled, True)
    for key in [key for key, result in sampled.items() if result.rhat > RHAT_LIMIT]:
        pair = pairs[key]
        result = hierarchical_tests(
            [(pair["a"], pair["b"])], rope, rho=[pair["rho"]], **RESAMPLE,
            settle_at=verdicts.DECISION,
            random_state=zlib.crc32(f"hierarchical|{label}|{key[0]}|{key[1]}".encode()))[0]
        sampled[key] = result
        agree[key] = result.rhat <= RHAT_LIMIT or _chains_agree(result)
    rows = []
    for (method, against), pair in pairs.items():
        key = (method, against) if (method, against) in sampled else (against, method)
        result = sampled[key]
        probs, errors = [result.p_a, result.p_rope, result.p_b], list(result.se)
        if key != (method, against):
            probs, errors = probs[::-1], errors[::-1]
        settled = result.clear_of(verdicts.DECISION) and agree[key]
        difference = np.mean([np.mean(a - b) for a, b in zip(pair["a"], pair["b"])])
        rows.append({"method": method, "against": against,
                     **dict(zip([column for column, _ in OUTCOMES], probs)),
                     **dict(zip(ERRORS, errors)),
                     "verdict": (verdicts.hierarchical(*probs) if settled
                                 else verdicts.BORDERLINE),
                     "data sets": len(pair["datasets"]), "folds": sum(len(a) for a in pair["a"]),
                     "mean difference (points)": 100 * float(difference), "R-hat": result.rhat,
                     "draws": len(result.samples)})
    return pd.DataFrame(rows)


def _chains_agree(result) -> bool:
    """Whether each chain's own draws (`result.samples`, chain after chain) give the verdict
    of all of them together: the verdict does not hang on a chain that has not mixed."""
    pooled = verdicts.hierarchical(result.p_a, result.p_rope, result.p_b)
    for draws in result.samples.reshape(result.chains, -1, 3):
        p_a, p_rope, p_b = np.bincount(np.argmax(draws, axis=1), minlength=3) / len(draws)
        if verdicts.hierarchical(p_a, p_rope, p_b) != pooled:
            return False
    return True


def figure_name(label) -> str:
    return f"hierarchical_k{label}.png"


def bars_figure(table: pd.DataFrame, order: list[str], references: list[str], label):
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
        ax.axvline(verdicts.DECISION, color="black", linewidth=0.6, linestyle=":")
        ax.axvline(1 - verdicts.DECISION, color="black", linewidth=0.6, linestyle=":")
        ax.set_xlim(0, 1)
        ax.set_title(f"against {reference}, {view_name(label)}", fontsize=10)
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(False)
    axes[0][0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.06 - 1.2 / (2 + len(order))),
                      ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def compare_and_draw(pairs: dict, rope: float, label, order: list[str],
                     references: list[str], figure_dir: Path) -> pd.DataFrame:
    """`compare` and its figure (`figure_name`); the renderer's task."""
    table = compare(pairs, rope, label)
    save_figure(bars_figure(table, order, references, label), figure_dir, figure_name(label))
    return table


def compare_ropes(pairs: dict, ropes: list[float], label) -> pd.DataFrame:
    """`compare` of `pairs` at each rope of `ropes` (seeded by label and rope), one table with
    a column "rope"; the renderer's task of the rope sensitivity."""
    return pd.concat([compare(pairs, rope, f"{label}|rope {rope:g}").assign(rope=rope)
                      for rope in ropes], ignore_index=True)


def references(ctx: Context, k: int) -> tuple[str, str] | None:
    """(reference, best-ranked method) of k: the signed-rank comparisons' reference (Euclidean
    when the benchmark has it) and the method of the best mean rank at k; None with fewer than
    two ranked methods."""
    scores = ranking.scores(ctx, k)
    ranks = ranking.ranks(ctx)[f"k = {k}"].dropna()
    if scores.shape[1] < 2 or ranks.empty:
        return None
    return comparisons.reference_method(list(scores.columns)), str(ranks.idxmin())


def pairs_against(folds: pd.DataFrame, order: list[str], against: list[str]) -> dict:
    """{(method, reference): `paired_folds`} of every method of `order` against each of
    `against` with `MIN_DATASETS` data sets in common."""
    pairs = {}
    for reference in dict.fromkeys(against):
        for method in order:
            if method != reference:
                pair = paired_folds(folds, method, reference)
                if pair is not None:
                    pairs[(method, reference)] = pair
    return pairs


def submit(ctx: Context, label, folds: pd.DataFrame, order: list[str], reference: str,
           best: str) -> Future | None:
    """The comparisons of one view (`compare_and_draw` in the renderer's pool): every method
    of `order` against `reference` and `best`; None when no method has `MIN_DATASETS` data
    sets of fold-level accuracies in common with either."""
    pairs = pairs_against(folds, order, [reference, best])
    if not pairs:
        return None
    against = [r for r in dict.fromkeys((reference, best)) if any(key[1] == r for key in pairs)]
    ctx.figures_written.add(figure_name(label))
    return ctx.submit(compare_and_draw, pairs, settings.rope(ctx.config), label, order,
                      against, ctx.figure_dir)


def submit_ropes(ctx: Context, label, folds: pd.DataFrame, order: list[str],
                 reference: str) -> Future | None:
    """The rope sensitivity of one view (`compare_ropes` in the renderer's pool): every
    method against `reference` at the ropes of `ROPES` other than the config's, whose
    comparisons `submit` makes; None when there are none."""
    pairs = pairs_against(folds, order, [reference])
    others = [rope for rope in ROPES if not np.isclose(rope, settings.rope(ctx.config))]
    if not pairs or not others:
        return None
    return ctx.submit(compare_ropes, pairs, others, label)


def results(ctx: Context, k: int) -> Future | None:
    """The comparisons of k (a future of `compare_and_draw`'s table), submitted once per
    report; None when no method has `MIN_DATASETS` data sets of fold-level accuracies in
    common with the reference."""
    def start():
        named = references(ctx, k)
        if named is None:
            return None
        order = [m for m in ranking.order(ctx) if m in set(ranking.scores(ctx, k).columns)]
        return submit(ctx, k, fold_table(ctx.splits, k), order, *named)

    return ctx.memo(("hierarchical", k), start)


def rope_results(ctx: Context, k: int) -> Future | None:
    """The rope sensitivity of k (a future of `compare_ropes`' table), submitted once."""
    def start():
        named = references(ctx, k)
        if named is None:
            return None
        order = [m for m in ranking.order(ctx) if m in set(ranking.scores(ctx, k).columns)]
        return submit_ropes(ctx, k, fold_table(ctx.splits, k), order, named[0])

    return ctx.memo(("hierarchical ropes", k), start)


def rope_frame(table: pd.DataFrame, others: pd.DataFrame | None, reference: str,
               rope: float) -> pd.DataFrame:
    """The comparisons against `reference` at every rope, with a column "rope": those of the
    config's `rope` (`table`, `compare`'s) and of the other ropes (`others`, `compare_ropes`')."""
    frames = [table[table["against"] == reference].assign(rope=rope)]
    if others is not None:
        frames.append(others[others["against"] == reference])
    return pd.concat(frames, ignore_index=True)


def rope_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Method x rope (`rope_frame`): the verdict with the probability it turns on and its
    standard error (`verdict_text`), methods in the frame's order, ropes ascending."""
    cells: dict[float, dict[str, str]] = {}
    for _, row in frame.iterrows():
        cells.setdefault(row["rope"], {})[row["method"]] = verdict_text(row)
    ropes = sorted(cells)
    shown = pd.DataFrame({verdicts.rope_text(r): cells[r] for r in ropes})
    return shown.reindex(list(dict.fromkeys(frame["method"]))).fillna("–")


def verdict_text(row) -> str:
    """A row of `compare` in words: its verdict with the probability it turns on (the most
    probable outcome's) and that probability's Monte-Carlo standard error, e.g. 'better:
    0.962 ± 0.0015', 'undecided: better 0.948 ± 0.0006' (the error on a line of its own in a
    table, as a standard deviation is)."""
    probs = [row[column] for column, _ in OUTCOMES]
    j = int(np.argmax(probs))
    outcome = (verdicts.BETTER, verdicts.EQUIVALENT, verdicts.WORSE)[j]
    shown = verdicts.with_error(probs[j], row[ERRORS[j]])
    if row["verdict"] == outcome:
        return f"{outcome}: {shown}"
    return f"{row['verdict']}: {outcome} {shown}"


def verdict_table(table: pd.DataFrame, order: list[str], ranks: pd.Series,
                  reference: str, best: str) -> pd.DataFrame:
    """The shown table of one view: per method its mean rank and, against the reference and
    the best-ranked method, the three probabilities (`verdicts.probability`), the standard
    error of the one the verdict turns on, the verdict and the data sets used."""
    shown = pd.DataFrame(index=pd.Index(order, name="method"))
    shown["mean rank"] = [f"{ranks[m]:.2f}" if pd.notna(ranks.get(m)) else "–" for m in order]
    for against in dict.fromkeys((reference, best)):
        rows = table[table["against"] == against].set_index("method")
        if rows.empty:
            continue
        for (column, _), word in zip(OUTCOMES, ("better than", "equivalent to", "worse than")):
            shown[f"P({word} {against})"] = [
                verdicts.probability(rows.at[m, column]) if m in rows.index else "–"
                for m in order]
        shown[f"verdict vs {against}"] = [
            verdict_text(rows.loc[m]) if m in rows.index else "–" for m in order]
        shown[f"data sets vs {against}"] = [str(rows.at[m, "data sets"]) if m in rows.index
                                            else "–" for m in order]
    return shown


def sampling_note(table: pd.DataFrame) -> str:
    """How many draws the comparisons took, which are borderline, the largest R-hat."""
    extended = int((table["draws"] > N_SAMPLES).sum())
    borderline = table.loc[table["verdict"] == verdicts.BORDERLINE]
    worst = table["R-hat"].max()
    return (f"Monte-Carlo: {N_SAMPLES} draws per comparison"
            + (f", more for {extended} near {verdicts.DECISION} (up to "
               f"{int(table['draws'].max())})" if extended else "")
            + ("; borderline: " + ", ".join(f"{m} vs {a}" for m, a in
                                            zip(borderline["method"], borderline["against"]))
               if len(borderline) else "; none borderline")
            + f". Largest split R-hat of the posterior draws of the three probabilities: "
              f"{worst:.3f}" + (" (chains that disagree: see the verdicts)." if worst > 1.01
                               else "."))


def rope_sensitivity(ctx: Context, sec: Section, label, table: pd.DataFrame,
                     ropes: pd.DataFrame | None, reference: str, rope: float) -> None:
    """The folded table of the verdicts against `reference` at each rope, and its CSV."""
    frame = rope_frame(table, ropes, reference, rope)
    shown = rope_table(frame)
    sec.table(html_table(shown, swatches=ranking.colours(ctx)),
              f"Rope sensitivity, {view_name(label)}: the verdict against "
              f"{reference} at each rope (the probability it turns on ± its Monte-Carlo "
              "standard error)",
              export_table(ctx, frame.set_index(["method", "against", "rope"]),
                           f"hierarchical_rope_k{label}"), folded=True)


def headline(table: pd.DataFrame, reference: str) -> dict[str, list[str]]:
    """{verdict: methods} against `reference`, for each of `verdicts.HIERARCHICAL`."""
    rows = table[table["against"] == reference]
    return {word: list(rows.loc[rows["verdict"] == word, "method"])
            for word in verdicts.HIERARCHICAL}
