"""Read a benchmark's runs back from MLflow as tidy pandas tables (the report never refits)."""

from __future__ import annotations

import pandas as pd

from .. import tracking


def _search(experiment: str, kind: str) -> pd.DataFrame:
    import mlflow

    tracking.client()
    frame = mlflow.search_runs(
        experiment_names=[experiment],
        filter_string=f"tags.`{tracking.KIND}` = '{kind}'",
        output_format="pandas",
    )
    return tracking.canonical_runs(frame)


def load(experiment: str, parent_keys: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(parents, splits) of `experiment`: one row per parent run and per split run.

    With `parent_keys` only those parents (and their splits) are kept, e.g. the current config's;
    otherwise the newest parent per (data set, method label). Columns are the metric names plus
    `dataset`, `method`, `method_name`, `family`, `run_id`, `parent_key`, `experiment_id`.
    """
    parents, splits = _search(experiment, "parent"), _search(experiment, "split")
    if parents.empty:
        raise ValueError(f"MLflow experiment '{experiment}' at {tracking.tracking_uri()} has no "
                         "dmlbench runs; run the workflow (or `dmlbench ingest`) first")
    parents, splits = _tidy(parents), _tidy(splits)
    if parent_keys is not None:
        parents = parents[parents["parent_key"].isin(parent_keys)]
    else:
        parents = (parents.sort_values("start_time")
                   .drop_duplicates(["dataset", "method"], keep="last"))
    splits = splits[splits["parent_key"].isin(parents["parent_key"])]
    return parents.reset_index(drop=True), splits.reset_index(drop=True)


def _tidy(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return frame
    out = pd.DataFrame({
        "run_id": frame["run_id"],
        "experiment_id": frame["experiment_id"],
        "start_time": frame["start_time"],
        "parent_key": frame[f"tags.dmlbench.parent_key"],
        "dataset": frame["tags.dmlbench.dataset"],
        "method": frame["tags.dmlbench.method"],
        "method_name": frame["tags.dmlbench.method_name"],
        "family": frame["tags.dmlbench.family"],
        "dataset_source": frame["tags.dmlbench.dataset_source"],
        "protocol": frame.get("params.protocol"),
    })
    metrics = frame[[c for c in frame.columns if c.startswith("metrics.")]]
    metrics.columns = [c[len("metrics."):] for c in metrics.columns]
    return pd.concat([out, metrics], axis=1)


def load_config(experiment: str) -> dict | None:
    """The newest benchmark config logged with the experiment's runs (None if there is none)."""
    import json

    import mlflow

    runs = _search(experiment, "benchmark")
    if runs.empty:
        return None
    run_id = runs.sort_values("start_time")["run_id"].iloc[-1]
    path = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="config.json")
    with open(path) as fh:
        return json.load(fh)
