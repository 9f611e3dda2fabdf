"""Read a benchmark's runs back from MLflow as tidy pandas tables (the report never refits)."""

from __future__ import annotations

import json
import tempfile

import mlflow
import numpy as np
import pandas as pd

from .. import vocabulary as voc
from ..records import tracking


def _search(experiment: str, kind: str) -> pd.DataFrame:
    tracking.client()
    frame = mlflow.search_runs(
        experiment_names=[experiment],
        filter_string=f"tags.`{voc.Tag.KIND}` = '{kind}'",
        output_format="pandas",
    )
    return tracking.canonical_runs(frame)


def load(experiment: str, parent_keys: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(parents, splits) of `experiment`: one row per parent run and per split run.

    With `parent_keys` only those parents (and their splits) are kept, e.g. the current config's;
    otherwise the newest parent per (data set, method label). Columns are the metric names plus
    `dataset` (the config label), `dataset_name` (the registered name), `method`,
    `method_name`, `family`, `run_id`, `parent_key`, `experiment_id`, and the run parameters
    `k` (the list of k evaluated), `hubness_k` and `preprocess`, the method's parameters as
    JSON (`method_params`), the label of its hubness reduction, if any (`hubness_reduction`),
    the unpinned downloaded files of its data set, if any (`unpinned`: "<group>/<file>
    sha256:<hex> ..."), the split's index (`split`, a split run's tag, as text), and the run's
    `artifact_uri`.
    """
    parents, splits = _search(experiment, voc.RunKind.PARENT), _search(experiment, voc.RunKind.SPLIT)
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


def split_arrays(artifact_uri: str) -> dict | None:
    """The arrays a split run's method kept (its MLflow artifact `arrays.npz`, written by the
    job next to the record), or None when it kept none. `artifact_uri`: the run's (a column of
    the runs `load` returns), so that no query of the run is needed."""
    # listed by the URI, paths come relative to its parent folder (`artifacts/arrays.npz`)
    names = {a.path.rsplit("/", 1)[-1]
             for a in mlflow.artifacts.list_artifacts(artifact_uri=artifact_uri)}
    if tracking.ARRAYS_ARTIFACT not in names:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = mlflow.artifacts.download_artifacts(
            artifact_uri=f"{artifact_uri.rstrip('/')}/{tracking.ARRAYS_ARTIFACT}", dst_path=tmp)
        with np.load(path) as npz:
            return {name: npz[name] for name in npz.files}


def _tag(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[f"tags.{name}"]


def _param(frame: pd.DataFrame, name: str):
    return frame.get(f"params.{name}")


def _method_params(frame: pd.DataFrame) -> pd.Series:
    """The method parameters of each run (params `method.<name>`) as one canonical JSON text, so
    runs of one method with the same parameters can be matched (e.g. with and without a hubness
    reduction)."""
    columns = [c for c in frame.columns if c.startswith("params.method.")]
    return pd.Series([json.dumps({c[len("params.method."):]: row[c] for c in columns
                                  if isinstance(row[c], str)}, sort_keys=True)
                      for _, row in frame.iterrows()], index=frame.index)


def _tidy(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return frame
    out = pd.DataFrame({
        "run_id": frame["run_id"],
        "experiment_id": frame["experiment_id"],
        "artifact_uri": frame["artifact_uri"],
        "start_time": frame["start_time"],
        "parent_key": _tag(frame, voc.Tag.PARENT_KEY),
        "dataset": _tag(frame, voc.Tag.DATASET),
        "dataset_name": _param(frame, "dataset"),
        "method": _tag(frame, voc.Tag.METHOD),
        "method_name": _tag(frame, voc.Tag.METHOD_NAME),
        "family": _tag(frame, voc.Tag.FAMILY),
        "dataset_source": _tag(frame, voc.Tag.DATASET_SOURCE),
        "protocol": _param(frame, voc.PARAM_PROTOCOL),
        "k": _param(frame, voc.PARAM_K),
        "hubness_k": _param(frame, voc.PARAM_HUBNESS_K),
        "preprocess": _param(frame, "preprocess"),
        "method_params": _method_params(frame),
        "hubness_reduction": frame.get(f"tags.{voc.Tag.HUBNESS_REDUCTION}"),
        **{name: frame.get(f"tags.{tag}") for name, tag in (
            ("git_commit", voc.Tag.GIT_COMMIT), ("host", voc.Tag.HOST),
            ("machine", voc.Tag.MACHINE), ("finished", voc.Tag.FINISHED),
            ("unpinned", voc.Tag.UNPINNED), ("split", voc.Tag.SPLIT))},
    })
    versions = frame[[c for c in frame.columns if c.startswith("tags.version.")]]
    versions.columns = [c[len("tags."):] for c in versions.columns]
    metrics = frame[[c for c in frame.columns if c.startswith("metrics.")]]
    metrics.columns = [c[len("metrics."):] for c in metrics.columns]
    return pd.concat([out, versions, metrics], axis=1)


def ks(parents: pd.DataFrame) -> list[int]:
    """The k values the runs evaluated (their parameter `k`), ascending."""
    values = {int(k) for text in parents["k"].dropna() for k in json.loads(text)}
    return sorted(values)


def hubness_k(parents: pd.DataFrame) -> int:
    """The k of the runs' hubness measures (their parameter `hubness_k`; the smallest if the
    runs differ)."""
    return min(int(k) for k in parents["hubness_k"].dropna())


def load_kind(experiment: str, kind: str) -> pd.DataFrame:
    """Runs of another kind than parent/split (e.g. `mvce_validation`): one row per run with
    `run_id`, `start_time`, `dataset`, its metrics and params (prefix `param.`); empty if none."""
    frame = _search(experiment, kind)
    if frame.empty:
        return frame
    out = pd.DataFrame({"run_id": frame["run_id"], "experiment_id": frame["experiment_id"],
                        "start_time": frame["start_time"],
                        "dataset": _tag(frame, voc.Tag.DATASET)})
    metrics = frame[[c for c in frame.columns if c.startswith("metrics.")]]
    metrics.columns = [c[len("metrics."):] for c in metrics.columns]
    params = frame[[c for c in frame.columns if c.startswith("params.")]]
    params.columns = ["param." + c[len("params."):] for c in params.columns]
    return pd.concat([out, metrics, params], axis=1)


def load_config(experiment: str, run_id: str | None = None) -> dict | None:
    """The benchmark config logged with the experiment's runs: that of run `run_id` (a run of
    kind 'benchmark', e.g. the track job's `config_run_id`), else the newest (None if there is
    none)."""
    if run_id is None:
        runs = _search(experiment, voc.RunKind.BENCHMARK)
        if runs.empty:
            return None
        run_id = runs.sort_values("start_time")["run_id"].iloc[-1]
    with tempfile.TemporaryDirectory() as tmp:  # MLflow's own download folder is never removed
        path = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="config.json",
                                                   dst_path=tmp)
        with open(path) as fh:
            return json.load(fh)


def curve(run_id: str, name: str) -> list[float]:
    """A curve of a run (an MLflow metric history, e.g. `curve.nk_hist_n10`) in step order;
    empty when the run has none."""
    return curves([run_id], name).get(run_id, [])


#: run ids per query of `curves` (SQL `IN` lists stay short)
_BULK = 500


def curves(run_ids, name: str) -> dict[str, list[float]]:
    """{run id: its curve `name` in step order (the latest value of a step logged twice)} of
    the runs that have it. A database store answers all runs in one query per `_BULK` runs
    (its `get_metric_history_bulk`, what the MLflow UI's charts use), other stores run by run:
    one query per run costs seconds for a few hundred runs."""
    client = tracking.client()
    run_ids = list(dict.fromkeys(run_ids))
    store = getattr(getattr(client, "_tracking_client", None), "store", None)
    bulk = getattr(store, "get_metric_history_bulk", None)
    points = []
    if callable(bulk):
        for start in range(0, len(run_ids), _BULK):
            chunk = run_ids[start:start + _BULK]
            points += [(m.run_id, m) for m in bulk(chunk, name, max_results=2**31 - 1)]
    else:
        points = [(run_id, m) for run_id in run_ids
                  for m in client.get_metric_history(run_id, name)]
    latest: dict[str, dict[int, tuple]] = {}
    for run_id, m in points:
        steps = latest.setdefault(run_id, {})
        if m.step not in steps or m.timestamp >= steps[m.step][0]:
            steps[m.step] = (m.timestamp, m.value)
    return {run_id: [steps[s][1] for s in sorted(steps)] for run_id, steps in latest.items()}
