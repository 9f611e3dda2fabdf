"""Equal tuning (docs/tuning.md): each method tuned against its default setting, and how the
inner score answers each hyperparameter. Read from the split runs' `tuning` entries (the records',
or the `tuning.json` artifacts of their MLflow runs); shown only when the runs were tuned."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ... import vocabulary as voc
from .. import figures, ranking
from ..base import Context, Section, export_table, html_table

#: two accuracies closer than this are equal (means over the same number of splits)
EQUAL = 1e-12
#: inches the sensitivity figure's legend (one row of ks) takes above its panels
LEGEND_IN = 0.4


def tuned_and_default(splits: pd.DataFrame, entries: dict[str, dict], ks: list[int]) -> pd.DataFrame:
    """One row per tuned (data set, method, split, k) of a method with something to tune (a
    space of more than one point): `tuned`, the split's test accuracy (`accuracy_k<k>`, the
    rule's winner) and `default`, the test accuracy of the method's default setting (the
    space's first candidate, `default_test_accuracy`; NaN where it could not be fitted)."""
    rows = []
    for _, run in splits.iterrows():
        entry = entries.get(run["run_id"])
        if entry is None or entry["grid_size"] < 2 or "default_test_accuracy" not in entry:
            continue
        default = entry["default_test_accuracy"] or {}
        for k in ks:
            tuned = run.get(voc.accuracy(k))
            if str(k) not in entry["chosen"] or tuned is None or not np.isfinite(tuned):
                continue
            rows.append({"dataset": run["dataset"], "method": run["method"],
                         "split": run["split"], "k": k, "tuned": float(tuned),
                         "default": float(default.get(str(k), np.nan))})
    return pd.DataFrame(rows, columns=["dataset", "method", "split", "k", "tuned", "default"])


def against_defaults(frame: pd.DataFrame, k: int) -> pd.DataFrame:
    """Method x (tuned, default, difference, data sets helped / hurt / equal, data sets, splits)
    at k: the mean test accuracy (%) over all (data set, split) pairs where both are known, and
    per data set the sign of the mean of tuned - default over its splits. Sorted by the
    difference, largest first."""
    part = frame[frame["k"] == k].dropna(subset=["tuned", "default"])
    rows = {}
    for method, sub in part.groupby("method"):
        gain = (sub["tuned"] - sub["default"]).groupby(sub["dataset"]).mean()
        tuned, default = 100 * sub["tuned"].mean(), 100 * sub["default"].mean()
        rows[method] = {"tuned (%)": tuned, "default (%)": default,
                        "tuned - default (points)": tuned - default,
                        "data sets helped": int((gain > EQUAL).sum()),
                        "hurt": int((gain < -EQUAL).sum()),
                        "equal": int((gain.abs() <= EQUAL).sum()),
                        "data sets": int(gain.size), "splits": int(len(sub))}
    table = pd.DataFrame.from_dict(rows, orient="index")
    if table.empty:
        return table
    table.index.name = "method"
    return table.sort_values("tuned - default (points)", ascending=False, kind="stable")


def sensitivity(splits: pd.DataFrame, entries: dict[str, dict]) -> pd.DataFrame:
    """One row per (split run, k, candidate evaluated, hyperparameter of its space): the
    candidate's `value` of that `parameter` (as text; a range's by its place, `split_space`),
    its inner score (`score`: mean inner
    k-NN accuracy over the folds) and `relative`, the score less the best candidate's of the
    same split and k (0 for the winner, in accuracy points), and `position`, the value's place
    in the space's declared order."""
    rows = []
    for _, run in splits.iterrows():
        entry = entries.get(run["run_id"])
        if entry is None or not entry.get("inner_scores"):
            continue
        space, ranges = split_space(entry)
        for k, scores in entry["inner_scores"].items():
            known = [s for s in scores if s is not None]
            if not known:
                continue
            best = max(known)
            for candidate, score in zip(entry["candidates"], scores):
                if score is None:
                    continue
                for parameter, values in space.items():
                    position = values.index(candidate[parameter])
                    label = (f"#{position + 1}" if parameter in ranges
                             else value_label(candidate[parameter]))
                    rows.append({"method": run["method"], "dataset": run["dataset"],
                                 "k": int(k), "parameter": parameter, "value": label,
                                 "position": position, "score": score,
                                 "relative": 100 * (score - best)})
    return pd.DataFrame(rows, columns=["method", "dataset", "k", "parameter", "value",
                                       "position", "score", "relative"])


def split_space(entry: dict) -> tuple[dict[str, list], set[str]]:
    """({parameter: the values it took on the split}, the parameters given as a range relative
    to the training part, whose values differ between data sets and are shown by their place,
    #1 the range's start). Records before issue 46 keep the space as a mapping of values."""
    if isinstance(entry["space"], dict):
        return entry["space"], set()
    ranges = {name for name, declared in entry["space"]
              if isinstance(declared, dict) and "from" in declared}
    return dict(entry["resolved"]), ranges


def value_label(value) -> str:
    """A hyperparameter value as a tick label: None as 'None', numbers as written in YAML."""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def sensitivity_figure(points: pd.DataFrame, methods: list[str], ks: list[int]):
    """One panel per method: each value of each of its hyperparameters (grouped by parameter,
    in the space's order; only values some candidate tried) against the inner score relative to
    the split's best candidate (points), mean over the (data set, split) runs with a 95%
    bootstrap interval, one colour per k."""
    labels = {m: _ticks(points[points["method"] == m]) for m in methods}
    width, height, bottom = panel_size(points)
    fig, axes = figures.grid(len(methods), width, height, top=LEGEND_IN, bottom=bottom,
                             left=0.6, title=0.45)
    palette = dict(zip(ks, sns.color_palette("viridis", len(ks))))
    for ax, method in zip(axes, methods):
        part = points[points["method"] == method]
        ticks = labels[method]
        order = [f"{p}={v}" for p, v in ticks]
        sns.pointplot(data=part.assign(x=part["parameter"] + "=" + part["value"]), x="x",
                      y="relative", hue="k", order=order, hue_order=ks, palette=palette,
                      dodge=0.45 if len(ks) > 1 else False, linestyle="none", markersize=4,
                      err_kws={"linewidth": 1}, errorbar=("ci", 95), seed=0, ax=ax,
                      legend=False)
        start = 0
        for g, (parameter, values) in enumerate(_groups(ticks)):
            if g % 2:
                ax.axvspan(start - 0.5, start + len(values) - 0.5, color="0.93", zorder=0)
            ax.text(start + (len(values) - 1) / 2, 1.01, parameter, ha="center", va="bottom",
                    fontsize=7, color="0.3", transform=ax.get_xaxis_transform())
            start += len(values)
        ax.set_xticks(range(len(order)), [v for _, v in ticks], rotation=90, fontsize=7)
        ax.set_xlim(-0.5, len(order) - 0.5)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_xlabel("")
        ax.set_ylabel("inner score - best (points)", fontsize=7)
        ax.set_title(method, fontsize=9, pad=13)
    handles = [_k_marker(palette[k], f"k = {k}") for k in ks]
    fig.legend(handles=handles, loc="upper center", ncol=len(ks), frameon=False,
               fontsize="small", bbox_to_anchor=(0.5, 1.0))
    return fig


def panel_size(points: pd.DataFrame) -> tuple[float, float, float]:
    """(width, height, bottom margin) in inches of a panel of `sensitivity_figure`: wide
    enough for the method with the most values, tall enough for the longest tick label."""
    counts = points.drop_duplicates(["method", "parameter", "value"]).groupby("method").size()
    longest = max((len(v) for v in points["value"]), default=4)
    bottom = 0.45 + 0.055 * longest
    return max(3.0, min(6.2, 1.1 + 0.32 * int(counts.max()))), 2.6 + bottom, bottom


def _k_marker(colour, label: str):
    return plt.Line2D([], [], marker="o", linestyle="", markersize=6, color=colour, label=label)


def _ticks(part: pd.DataFrame) -> list[tuple[str, str]]:
    """(parameter, value) of a method's points, parameters in the space's order (as first
    seen) and values in their declared order."""
    parameters = list(dict.fromkeys(part["parameter"]))
    out = []
    for parameter in parameters:
        values = part[part["parameter"] == parameter].drop_duplicates("value")
        out += [(parameter, v) for v in values.sort_values("position")["value"]]
    return out


def _groups(ticks: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    groups: dict[str, list[str]] = {}
    for parameter, value in ticks:
        groups.setdefault(parameter, []).append(value)
    return list(groups.items())


def section(ctx: Context) -> Section | None:
    source = ctx.runs
    if source is None or not hasattr(source, "split_tuning"):
        return None
    entries = ctx.memo("split_tuning", lambda: source.split_tuning(ctx.splits["run_id"]))
    if not entries:
        return None
    sec = Section("tuning", "Equal tuning: tuned against defaults",
                  "Every method chose its hyperparameters by the same rule (docs/tuning.md): the "
                  "same inner stratified folds of each training part, the same budget of "
                  "candidates, the mean inner k-NN accuracy at each k. Beside the tuned "
                  "setting, each split also evaluated the method's default setting (the first "
                  "candidate of its space: the library or paper defaults) on the same test "
                  "part.")
    frame = tuned_and_default(ctx.splits, entries, ctx.ks)
    skipped = sorted(set(ctx.splits["method"]) - set(frame["method"]))
    for k in ctx.ks:
        table = against_defaults(frame, k)
        if table.empty:
            continue
        files = export_table(ctx, table, f"tuned_against_defaults_k{k}")
        text = table.copy()
        for column in ("tuned (%)", "default (%)"):
            text[column] = text[column].map(lambda v: f"{v:.2f}")
        text["tuned - default (points)"] = text["tuned - default (points)"].map(
            lambda v: f"{v:+.2f}")
        sec.table(html_table(text.astype(str)),
                  f"Tuned against defaults, {k}-NN: mean test accuracy over all (data set, "
                  "split) pairs; data sets where tuning helped, hurt or changed nothing (the "
                  "mean over the data set's splits of tuned - default)", files)
    if skipped:
        sec.note("Without a table row (nothing to tune: a space of one point, or no default "
                 "recorded): " + ", ".join(skipped) + ".")
    points = sensitivity(ctx.splits, entries)
    if not points.empty:
        order = [m for m in ranking.order(ctx) if m in set(points["method"])]
        width, height, _ = panel_size(points)
        for page, methods in enumerate(figures.pages(order, width, height, LEGEND_IN)):
            name = "tuning_sensitivity.png" if page == 0 else f"tuning_sensitivity_{page}.png"
            sec.figure(ctx.figure(name, sensitivity_figure, points, methods, ctx.ks),
                       "Sensitivity: each candidate's inner score (mean k-NN accuracy over the "
                       "inner folds) less the best candidate's on the same split, in accuracy "
                       "points, against each value of each hyperparameter (the other "
                       "parameters vary with the candidates drawn); mean over the (data set, "
                       "split) runs with a 95% bootstrap interval, one colour per k. Only the "
                       "values some candidate tried appear.")
    return sec
