"""Readings of a paper (report/readings.py, the section "Readings", the claim check
`closest_reading`): the four counting rules against scipy.stats and a z written out by hand, on
hand-made runs."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from dmlbench.measure import statistics
from dmlbench.report import claims, readings
from dmlbench.report.base import Context
from dmlbench.report.sections import readings as readings_section

RAW, ZSCORE = "[]", '["zscore"]'


def test_paired_t_test_equals_scipy_ttest_rel():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.6, 0.9, size=(5, 10)), rng.uniform(0.6, 0.9, size=(5, 10))
    b[2] = a[2] + rng.normal(0, 0.01, 10)  # a row with small differences
    t, p = statistics.paired_t_test(a, b)
    for i in range(5):
        ref = sps.ttest_rel(a[i], b[i])
        assert t[i] == pytest.approx(ref.statistic, rel=1e-12)
        assert p[i] == pytest.approx(ref.pvalue, rel=1e-10)


def test_paired_t_test_on_constant_differences():
    a = np.array([[0.75, 0.5, 0.25], [0.75, 0.5, 0.25]])
    b = np.array([[0.75, 0.5, 0.25], [0.5, 0.25, 0.0]])  # no difference; +0.25 everywhere
    t, p = statistics.paired_t_test(a, b)
    assert (t[0], p[0]) == (0.0, 1.0) and np.isinf(t[1]) and t[1] > 0 and p[1] == 0.0
    with pytest.raises(ValueError, match="at least 2 pairs"):
        statistics.paired_t_test([[0.5]], [[0.4]])


def test_outcomes_count_wins_ties_and_losses():
    out = statistics.outcomes([0.1, -0.2, 0.3, 0.0, -0.1], [True, True, False, True, False])
    assert out == {"win": 1, "tie": 3, "loss": 1}


def splits_frame(accuracy: dict, n_test=(100, 100, 100)):
    """Split runs from {(data set, preprocess, method label, registered name, params as
    (name, value) pairs): per-split accuracies at k = 1}."""
    rows = []
    for (ds, pre, label, name, params), values in accuracy.items():
        for i, acc in enumerate(values):
            rows.append({"dataset": ds, "dataset_name": ds.split("@")[0], "method": label,
                         "method_name": name, "preprocess": pre,
                         "method_params": json.dumps({k: json.dumps(v) for k, v in dict(params).items()}),
                         "split": str(i), "accuracy_k1": acc, "n_test": n_test[i]})
    splits = pd.DataFrame(rows)
    return splits.drop_duplicates(["dataset", "method"]).reset_index(drop=True), splits


def hand_z(a, b, n):
    """Pooled two-proportion z written out: accuracies a, b of n test points each."""
    p = (a + b) / 2
    z = (a - b) / math.sqrt(p * (1 - p) * 2 / n)
    return z, math.erfc(abs(z) / math.sqrt(2))


def example():
    """Two data sets raw (x, y) and z-scored (x@z, y@z); rmvem, rmvem owner=training and the
    reference on the raw sets, rmvem and the reference on the z-scored ones."""
    acc = {
        ("x", RAW, "rmvem", "rmvem", ()): [0.90, 0.93, 0.94],
        ("x", RAW, "euc", "euclidean", ()): [0.70, 0.72, 0.74],
        ("y", RAW, "rmvem", "rmvem", ()): [0.60, 0.63, 0.58],
        ("y", RAW, "euc", "euclidean", ()): [0.62, 0.64, 0.60],
        ("x", RAW, "rmvem_t", "rmvem", (("owner", "training"),)): [0.70, 0.72, 0.74],
        ("y", RAW, "rmvem_t", "rmvem", (("owner", "training"),)): [0.40, 0.42, 0.40],
        ("x@z", ZSCORE, "rmvem", "rmvem", ()): [0.80, 0.86, 0.80],
        ("x@z", ZSCORE, "euc", "euclidean", ()): [0.82, 0.80, 0.78],
        ("y@z", ZSCORE, "rmvem", "rmvem", ()): [0.60, 0.60, 0.60],
        ("y@z", ZSCORE, "euc", "euclidean", ()): [0.60, 0.60, 0.60],
    }
    return splits_frame(acc)


def test_readings_are_label_and_preprocessing_pairs_described_against_the_published_one():
    parents, _ = example()
    found, ref = readings.find(parents, "rmvem", "euclidean")
    assert ref == "euc"
    assert [(r.method, r.preprocess, r.datasets) for r in found] == [
        ("rmvem", RAW, ("x", "y")), ("rmvem_t", RAW, ("x", "y")), ("rmvem", ZSCORE, ("x@z", "y@z"))]
    base = readings.published(found, "rmvem")
    assert base == found[0]
    assert [r.describe(parents, base) for r in found] == [
        "the published reading", "owner = training", "preprocess: zscore"]
    with pytest.raises(ValueError, match="one entry of the reference method 'lmnn'"):
        readings.find(parents, "rmvem", "lmnn")


def test_counting_rules_against_a_hand_computed_z_and_ttest_rel():
    parents, splits = example()
    found, ref = readings.find(parents, "rmvem", "euclidean")
    table = readings.cases(splits, [1], found[0], ref)
    for _, row in table.iterrows():
        part = splits[splits["dataset"] == row["dataset"]]
        a = part.loc[part["method"] == "rmvem", "accuracy_k1"].to_numpy()
        b = part.loc[part["method"] == "euc", "accuracy_k1"].to_numpy()
        _, p = hand_z(a.mean(), b.mean(), 300)  # equal folds: pooled = mean
        assert row["p_z"] == pytest.approx(p, rel=1e-9)
        assert row["p_t"] == pytest.approx(sps.ttest_rel(a, b).pvalue, rel=1e-9)
        assert row["mean difference"] == pytest.approx(a.mean() - b.mean())
    counts = readings.count(table)
    # x: +0.2 of 300 points each (z = 5.4); y: -0.017 (a z-test tie; the
    # folds' differences -0.02, -0.01, -0.02 give t = -5, p = 0.038: a t-test loss)
    assert counts["z05"] == {"win": 1, "tie": 1, "loss": 0}
    assert counts["z0005"] == {"win": 1, "tie": 1, "loss": 0}
    assert counts["t05"] == {"win": 1, "tie": 0, "loss": 1}
    assert counts["means"] == {"win": 1, "tie": 0, "loss": 1}
    # z-scored: x@z means 0.8200 against 0.8000 (not significant), y@z equal: a tie by means
    zscored = readings.count(readings.cases(splits, [1], found[2], ref))
    assert zscored["means"] == {"win": 1, "tie": 1, "loss": 0}
    assert zscored["z05"] == {"win": 0, "tie": 2, "loss": 0}


def test_the_pooled_z_weights_folds_by_their_test_points():
    acc = {("x", RAW, "rmvem", "rmvem", ()): [1.0, 0.5], ("x", RAW, "euc", "euclidean", ()): [0.5, 0.5]}
    parents, splits = splits_frame(acc, n_test=(10, 90))
    found, ref = readings.find(parents, "rmvem", "euclidean")
    row = readings.cases(splits, [1], found[0], ref).iloc[0]
    assert row["accuracy"] == pytest.approx(55 / 100) and row["reference accuracy"] == 0.5
    assert row["p_z"] == pytest.approx(hand_z(0.55, 0.5, 100)[1], rel=1e-9)


def test_splits_that_differ_between_a_reading_and_its_reference_are_an_error():
    parents, splits = example()
    found, ref = readings.find(parents, "rmvem", "euclidean")
    splits = splits.drop(splits.index[(splits["method"] == "euc") & (splits["split"] == "2")])
    with pytest.raises(ValueError, match="ran on different splits"):
        readings.cases(splits, [1], found[0], ref)


def test_closest_reading_names_the_reading_and_rule_nearest_the_paper():
    parents, splits = example()
    # the paper: 2 wins / 2 losses of 4, met exactly by the published reading's t-test
    v = claims.closest_reading(parents, splits, [1], "rmvem", "euclidean", 2, 2, 4)
    # "in most cases": the published reading wins 1 of 2 under the z-test, no reading more
    assert v.verdict == claims.NOT_HELD
    assert v.evidence == (
        "3 readings x 4 counting rules; closest to 2 / 2 of 4: rmvem (the published reading) "
        "under paired t-test 0.05: 1 / 0 / 1 of 2; the most wins over losses under the z-test "
        "at 0.05: rmvem (the published reading) under z-test 0.05: 1 / 1 / 0 of 2")
    near = readings.closest(parents, splits, [1], "rmvem", "euclidean", 3, 1, 4)
    assert near["distance"].iloc[0] == pytest.approx(abs(1 / 2 - 3 / 4) + abs(0 - 1 / 4))
    assert set(near.loc[near["reading"] == "rmvem_t", "loss"]) == {1}  # x equal, y lower
    assert "rmvem on zscore features" in set(near["reading"])
    v = claims.closest_reading(parents.assign(method_name="x"), splits, [1], "rmvem",
                               "euclidean", 3, 1, 4)
    assert v.verdict == claims.NOT_TESTABLE
    # rmvem above the reference on y too: 2 wins of 2, most cases
    better = splits.copy()
    on_y = (better["dataset"] == "y") & (better["method"] == "rmvem")
    better.loc[on_y, "accuracy_k1"] += 0.2
    assert claims.closest_reading(parents, better, [1], "rmvem", "euclidean", 2, 2,
                                  4).verdict == claims.HELD


def test_the_section_tabulates_every_reading_beside_the_paper(tmp_path):
    parents, splits = example()
    config = {"report": {"readings": {"method": "rmvem", "reference": "euclidean",
                                      "paper": "abou-moustafa-2017",
                                      "missing": {"german": "not in the mirror"}}}}
    ctx = Context(parents=parents, splits=splits, out_dir=tmp_path, hubness_k=5, ks=[1],
                  config=config)
    sec = readings_section.section(ctx)
    assert sec.title == "Readings: rmvem against euc"
    table = pd.read_csv(tmp_path / "tables" / "readings.csv", index_col=0)
    assert list(table.index) == ["paper (abou-moustafa-2017)", "rmvem", "rmvem_t",
                                 "rmvem on zscore features"]
    assert table.loc["paper (abou-moustafa-2017)", "z-test 0.05"] == "42 / 7 / 11"
    assert table.loc["rmvem", "paired t-test 0.05"] == "1 / 0 / 1"
    assert table.loc["rmvem_t", "z-test 0.05"] == "0 / 1 / 1"
    notes = " ".join(b["text"] for b in sec.blocks if b["kind"] == "note")
    assert "Cases are counted of 2 where the paper counts 60: not run german (not in the " \
           "mirror)." in notes
    assert "Closest to the paper's 42 wins / 11 losses of 60" in notes
    detail = pd.read_csv(tmp_path / "tables" / "readings_per_dataset.csv", index_col=0)
    assert detail.loc["x", "rmvem"] == "W" and detail.loc["y", "rmvem_t"] == "L"
    assert detail.loc["x", "rmvem on zscore features"] == "T"
    assert readings_section.section(Context(parents=parents, splits=splits, out_dir=tmp_path,
                                            hubness_k=5, ks=[1], config={})) is None
