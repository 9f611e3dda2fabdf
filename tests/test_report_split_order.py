"""Figures that show a few splits show the first splits by index (not by random run id), so a
rebuild from the same records draws the same ones."""
from types import SimpleNamespace

import numpy as np
import pandas as pd

from dmlbench.report.sections import boosting, nca_variants


def _splits(n: int) -> pd.DataFrame:
    # run ids sort in the opposite order of the split indices; indices are tag text ("10" < "2")
    return pd.DataFrame({"run_id": [f"r{n - i:03d}" for i in range(n)],
                         "split": [str(i) for i in range(n)],
                         "dataset": "iris", "method": "boostmdm", "method_name": "BoostMDM",
                         "fit.n_boost_iter": 3.0})


class _Runs:
    def __init__(self, splits):
        self.by_run = dict(zip(splits["run_id"], splits["split"]))

    def curves(self, run_ids, name):
        return {r: [float(self.by_run[r])] for r in run_ids}

    def split_arrays(self, run_id):
        if self.by_run[run_id] in ("0", "1"):  # the first two splits have no embedding
            return {}
        return {"test_embedding": np.full((2, 2), float(self.by_run[run_id])),
                "test_labels": np.array([0, 1])}


def test_loss_paths_show_the_first_splits_by_index():
    splits = _splits(12)
    ctx = SimpleNamespace(splits=splits, runs=_Runs(splits))
    shown = boosting.loss_paths(ctx)
    expected = {float(i) for i in range(min(boosting.MAX_PATHS, 12))}
    assert set(shown["rank"]) == expected


def test_projection_uses_the_first_split_with_an_embedding():
    splits = _splits(12)
    ctx = SimpleNamespace(runs=_Runs(splits))
    (method, arrays), = nca_variants.projection_arrays(ctx, splits, "iris")
    assert method == "boostmdm"
    assert arrays["test_embedding"][0, 0] == 2.0  # split 2, not split 10 nor the last run id
