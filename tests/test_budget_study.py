"""The report's budget-study section (`report.sections.budget_study`) on hand-made split runs
and hierarchical results, and the budget-study config."""

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from dmlbench import config
from dmlbench.report import verdicts
from dmlbench.report.sections import budget_study as section
from dmlbench.report.sections import tuning as tuning_section
from dmlbench.run import plan

ROOT = Path(__file__).resolve().parents[1]


def fake():
    """Method m tuned at budgets 4, 16 and 40 (its grid: 20 points, so 40 covers it), method q
    at 4 and 16 (its grid: 9 points, so 16 covers it), and the reference on one data set,
    two splits each."""
    grid = {"m": 20, "q": 9, "euclidean": 1}
    labels = {"m-b4": ("m", 4), "m-b16": ("m", 16), "m-full": ("m", 40), "q-b4": ("q", 4),
              "q-b16": ("q", 16), "euclidean": ("euclidean", 16)}
    rows, entries = [], {}
    for label, (name, budget) in labels.items():
        for split in ("0", "1"):
            run = f"{label}/{split}"
            rows.append({"run_id": run, "dataset": "a", "method": label, "method_name": name,
                         "split": split})
            entries[run] = {"budget": budget, "grid_size": grid[name],
                            "candidates": [{}] * min(budget, grid[name])}
    return pd.DataFrame(rows), entries


def test_entries_are_grouped_by_method_with_the_full_grid_where_a_budget_covered_it():
    splits, entries = fake()
    table = section.budgets(splits, entries).set_index("label")
    assert table.loc["m-b16", ["name", "budget", "full"]].tolist() == ["m", 16, False]
    assert table.loc["q-b16", "full"] and table.loc["m-full", "full"]
    assert section.columns(table.reset_index()) == {
        "m": {"budget 4": "m-b4", "budget 16": "m-b16", section.FULL: "m-full"},
        "q": {"budget 4": "q-b4", "budget 16": "q-b16", section.FULL: "q-b16"}}
    # a single budget per method: no study
    one = table.reset_index()
    assert section.columns(one[one["label"].isin(["m-b4", "q-b4", "euclidean"])]) == {}


def test_the_study_table_takes_each_entrys_difference_and_verdict_against_the_reference():
    splits, entries = fake()
    cells = section.columns(section.budgets(splits, entries))
    results = pd.DataFrame([
        {"method": label, "against": against, "mean difference (points)": diff,
         "verdict": verdict, "data sets": 12}
        for label, against, diff, verdict in [
            ("m-b4", "euclidean", -1.5, "undecided"), ("m-b16", "euclidean", 0.5, "equivalent"),
            ("m-full", "euclidean", 2.5, "better"), ("q-b4", "euclidean", -3.0, "worse"),
            ("q-b16", "euclidean", 0.0, "borderline"), ("m-b4", "m-full", -4.0, "worse")]])
    table = section.study_table(results, "euclidean", cells).set_index(["method", "budget"])
    assert table.loc[("m", "budget 4"), "mean difference (points)"] == -1.5
    assert table.loc[("m", section.FULL), "verdict"] == "better"
    assert table.loc[("q", section.FULL), "entry"] == "q-b16"  # 16 covered q's grid
    assert table.loc[("q", section.FULL), "mean difference (points)"] == 0.0
    assert len(table) == 6  # against the reference only
    # every verdict of the hierarchical test has its marker ("borderline" stopped the report)
    fig = section.budget_figure({1: table.reset_index(), 3: table.reset_index()}, "euclidean")
    assert len(fig.axes) == 2
    markers = {line.get_marker() for line in fig.axes[0].lines}
    assert {"^", "o", "x", "v", "D"} <= markers
    assert set(section.MARKERS) == set(verdicts.HIERARCHICAL)
    plt.close(fig)


def test_sensitivity_shows_a_ranges_values_by_their_place():
    """A range relative to the training part (m over d + 1 .. 3d) differs per data set: its
    values are labelled by their place (#1 = d + 1), a literal parameter's by its value."""
    space = [["m", {"from": "d + 1", "to": "3 * d", "points": 3}], ["eps", [0.01, 0.1]]]
    splits = pd.DataFrame([{"run_id": r, "dataset": r, "method": "rmvem", "split": "0"}
                           for r in ("a", "b")])
    entries = {
        "a": {"space": space, "resolved": [["m", [3, 4, 6]], ["eps", [0.01, 0.1]]],
              "candidates": [{"m": 3, "eps": 0.01}, {"m": 6, "eps": 0.1}],
              "inner_scores": {"1": [0.5, 0.75]}},
        "b": {"space": space, "resolved": [["m", [11, 20, 30]], ["eps", [0.01, 0.1]]],
              "candidates": [{"m": 11, "eps": 0.01}, {"m": 20, "eps": 0.01}],
              "inner_scores": {"1": [0.6, 0.6]}}}
    points = tuning_section.sensitivity(splits, entries)
    m = points[points["parameter"] == "m"]
    assert list(zip(m["dataset"], m["value"], m["position"], m["relative"])) == [
        ("a", "#1", 0, -25.0), ("a", "#3", 2, 0.0), ("b", "#1", 0, 0.0), ("b", "#2", 1, 0.0)]
    eps = points[points["parameter"] == "eps"]
    assert list(eps["value"]) == ["0.01", "0.1", "0.01", "0.01"]


def test_the_budget_study_config_runs_each_method_at_three_budgets_on_12_sets():
    cfg = plan.check(config.load(ROOT / "config" / "reality-check-budget.yaml"))
    assert len(cfg["datasets"]) >= 12
    budgets: dict[str, set] = {}
    for label in cfg["methods"]:
        settings = plan.tuning_settings(cfg, label)
        budgets.setdefault(config.method_name(cfg, label), set()).add(settings["budget"])
    assert budgets.pop("euclidean") == {16}
    for name, found in budgets.items():
        assert {4, 16} <= found, name
    assert {n for n, found in budgets.items() if 40 in found} == {
        "lmnn", "rmvem", "rmle", "minivenn", "klhp"}  # the grids of more than 16 points
    main = config.load(ROOT / "config" / "reality-check.yaml")
    assert cfg["tuning"]["time_limit"] == main["tuning"]["time_limit"]
    assert main["tuning"]["budget"] == 16
