"""Report section: the budget study (docs/tuning.md, "The budget study"). A config may tune a
method more than once, each entry with its own budget (`tuning: {budget: N}` under the method,
config/reality-check-budget.yaml); this section groups the entries by method and shows, at each
k, the mean accuracy difference to the reference (Euclidean) and the hierarchical test's verdict
against it (`report.hierarchical`, computed for every entry) against the budget. The budgets are
read from the split runs' `tuning` entries; an entry whose candidates were the whole feasible
grid on every split also stands for the full grid. Shown only when some method has entries of
two budgets."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from .. import hierarchical, verdicts
from ..base import Context, Section, export_table, html_table

#: the name of the column of the whole feasible grid
FULL = "full grid"
#: a marker per hierarchical verdict in the figure, and its symbol in the caption
MARKERS = {verdicts.BETTER: ("^", "▲"), verdicts.EQUIVALENT: ("o", "●"),
           verdicts.WORSE: ("v", "▼"), verdicts.UNDECIDED: ("x", "×"),
           verdicts.BORDERLINE: ("D", "◆")}


def budgets(splits: pd.DataFrame, entries: dict[str, dict]) -> pd.DataFrame:
    """One row per tuned method entry (label): its method `name`, `budget`, and `full` (its
    candidates were the whole feasible grid on every split)."""
    rows: dict[str, dict] = {}
    for _, run in splits.iterrows():
        entry = entries.get(run["run_id"])
        if entry is None:
            continue
        row = rows.setdefault(run["method"], {"label": run["method"], "name": run["method_name"],
                                              "budget": int(entry["budget"]), "full": True})
        row["full"] = row["full"] and len(entry["candidates"]) >= entry["grid_size"]
    return pd.DataFrame(list(rows.values()), columns=["label", "name", "budget", "full"])


def columns(table: pd.DataFrame) -> dict[str, dict[str, str]]:
    """{method name: {column: entry label}} of the methods with entries of two budgets or more:
    a column "budget N" per budget below the study's largest, and `FULL` from the entry of the
    largest budget that covered the whole grid (or, when none did, "budget N" of the largest)."""
    out = {}
    largest = table["budget"].max() if not table.empty else 0
    for name, rows in table.groupby("name", sort=False):
        if rows["budget"].nunique() < 2:
            continue
        cells: dict[str, str] = {}
        for _, row in rows.sort_values("budget").iterrows():
            if row["budget"] < largest:
                cells[f"budget {row['budget']}"] = row["label"]
            if row["full"]:
                cells[FULL] = row["label"]
            elif row["budget"] == largest:
                cells[f"budget {row['budget']}"] = row["label"]
        out[name] = cells
    return out


def study_table(results: pd.DataFrame, reference: str, cells: dict[str, dict[str, str]]
                ) -> pd.DataFrame:
    """Rows (method name, column) with the entry's mean difference to `reference` (points) and
    verdict from the hierarchical comparisons `results`."""
    against = results[results["against"] == reference].set_index("method")
    rows = []
    for name, by_column in cells.items():
        for column, label in by_column.items():
            if label in against.index:
                rows.append({"method": name, "budget": column, "entry": label,
                             "mean difference (points)":
                                 float(against.at[label, "mean difference (points)"]),
                             "verdict": str(against.at[label, "verdict"]),
                             "data sets": int(against.at[label, "data sets"])})
    return pd.DataFrame(rows, columns=["method", "budget", "entry", "mean difference (points)",
                                       "verdict", "data sets"])


def _order(column: str) -> tuple:
    return (1, 0) if column == FULL else (0, int(column.split()[-1]))


def budget_figure(frames: dict[int, pd.DataFrame], reference: str):
    """One panel per k: each method's mean difference to `reference` against the budget, its
    verdict as the marker."""
    fig, axes = plt.subplots(1, len(frames), figsize=(3.4 * len(frames), 3.6), squeeze=False)
    for ax, (k, frame) in zip(axes[0], frames.items()):
        order = sorted(set(frame["budget"]), key=_order)
        for method, part in frame.groupby("method", sort=False):
            part = part.assign(x=[order.index(c) for c in part["budget"]]).sort_values("x")
            line, = ax.plot(part["x"], part["mean difference (points)"], lw=1, label=method)
            for _, row in part.iterrows():
                ax.plot(row["x"], row["mean difference (points)"], MARKERS[row["verdict"]][0],
                        color=line.get_color(), ms=6)
        ax.axhline(0, color="0.4", lw=0.8, ls=":")
        ax.set_xticks(range(len(order)), order, fontsize=8)
        ax.set_title(f"{k}-NN", fontsize=9)
        ax.set_ylabel(f"accuracy - {reference} (points)", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    handles += [plt.Line2D([], [], marker=m, ls="", color="0.3") for m, _ in MARKERS.values()]
    labels += list(MARKERS)
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7,
               frameon=False)
    fig.tight_layout()
    return fig


def section(ctx: Context) -> Section | None:
    source = ctx.runs
    if source is None or not hasattr(source, "split_tuning") or "method_name" not in ctx.splits:
        return None
    entries = ctx.memo("split_tuning", lambda: source.split_tuning(ctx.splits["run_id"]))
    cells = columns(budgets(ctx.splits, entries))
    if not cells:
        return None
    sec = Section("budget-study", "Budget study: verdicts against the tuning budget",
                  "The same methods tuned by the same rule with different budgets of "
                  "candidates per split (the draws nested: a smaller budget's candidates are "
                  "among a larger one's); for each, the mean test-accuracy difference to the "
                  "reference and the verdict of the Bayesian hierarchical test against it "
                  "(section \"Bayesian hierarchical comparisons\"). A method whose budget covered "
                  f"its whole feasible grid on every split stands in the column \"{FULL}\".")
    futures = {k: hierarchical.results(ctx, k) for k in ctx.ks}
    futures = {k: f for k, f in futures.items() if f is not None}
    if not futures:
        return None

    def fill(part: Section) -> None:
        frames = {}
        for k, future in futures.items():
            results = future.result()
            reference = hierarchical.references(ctx, k)[0]
            frame = study_table(results, reference, cells)
            if frame.empty:
                continue
            frames[k] = frame
            wide = frame.pivot(index="method", columns="budget")
            shown = pd.DataFrame(index=wide.index)
            for column in sorted(set(frame["budget"]), key=_order):
                shown[column] = [
                    f"{wide.at[m, ('mean difference (points)', column)]:+.2f} "
                    f"({wide.at[m, ('verdict', column)]})"
                    if pd.notna(wide.at[m, ("verdict", column)]) else "–" for m in wide.index]
            part.table(html_table(shown), f"Budget study, {k}-NN: mean accuracy difference to "
                       f"{reference} (points) and the hierarchical verdict, per budget",
                       export_table(ctx, frame.set_index(["method", "budget"]),
                                    f"budget_study_k{k}"))
        if frames:
            reference = hierarchical.references(ctx, next(iter(frames)))[0]
            part.figure(ctx.figure("budget_study.png", budget_figure, frames, reference),
                        "Mean accuracy difference to the reference against the budget, per "
                        "method and k; the marker is the hierarchical verdict ("
                        + ", ".join(f"{symbol} {verdict}"
                                    for verdict, (_, symbol) in MARKERS.items()) + ").")

    sec.later(fill)
    return sec
