"""Pieces of the hubness-study report section that do not need MLflow."""

import numpy as np
import pandas as pd
import pytest

from dmlbench.report.base import Context
from dmlbench.report.sections import SECTIONS, hubness_study


def test_speedup_over_the_fastest_metric_learner_by_hand():
    parents = pd.DataFrame({"method": ["lmnn", "itml_g2", "dml_eig", "move", "euclidean"],
                            "method_name": ["lmnn", "itml", "dml_eig", "move_labeled",
                                            "euclidean"]})
    times = pd.DataFrame({"lmnn": [4.0, 10.0], "itml_g2": [20.0, 2.0], "dml_eig": [8.0, 30.0],
                          "move": [0.02, 0.5], "euclidean": [0.001, 0.001]},
                         index=["a", "b"])
    ratio = hubness_study.speedup(times, parents)
    assert ratio.to_dict() == pytest.approx({"a": 4.0 / 0.02, "b": 2.0 / 0.5})
    assert hubness_study.speedup(times.drop(columns=["move"]), parents).empty


def test_refit_time_falls_back_to_the_fit_time(tmp_path):
    splits = pd.DataFrame({"dataset": ["a"] * 4, "method": ["m", "m", "e", "e"],
                           "fit_wall_s": [3.0, 5.0, 1.0, 2.0],
                           "fit.refit_s": [0.5, 1.5, np.nan, np.nan]})
    parents = pd.DataFrame({"dataset": ["a", "a"], "method": ["m", "e"]})
    ctx = Context(parents, splits, tmp_path, 10, [1])
    table = hubness_study.refit_time(ctx)
    assert table.loc["a", "m"] == 1.0 and table.loc["a", "e"] == 1.5
    assert hubness_study.refit_time(Context(parents, splits.drop(
        columns=["fit.refit_s"]), tmp_path, 10, [1])) is None


def test_the_section_is_registered():
    assert hubness_study.hubness_study in SECTIONS
