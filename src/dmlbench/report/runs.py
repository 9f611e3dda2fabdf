"""A benchmark's runs as tidy pandas tables (the report never refits), read from MLflow
(`MlflowRuns`) or straight from record files and study documents (`RecordRuns`): the same
tables either way, as the records reader builds each run through the ingest's own
`tracking.RunContent` and reads it as MLflow would show it."""

from __future__ import annotations

import json
import tempfile
import urllib.parse
from pathlib import Path

import numpy as np
import pandas as pd

from .. import records
from .. import vocabulary as voc
from ..records import tracking

# mlflow is imported inside the functions that query the store, not here: its import takes
# seconds, and a report read from the record files (the workflow's, `report --records`) never
# needs it.


class MlflowRuns:
    """The runs of MLflow experiment `experiment` (the store of `tracking.tracking_uri()`)."""

    def __init__(self, experiment: str):
        self.experiment = experiment
        self._artifact_uris: dict[str, str] = {}

    def load(self, parent_keys: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(parents, splits): see `select`; otherwise the newest parent per (data set, method
        label)."""
        parents = _search(self.experiment, voc.RunKind.PARENT)
        if parents.empty:
            raise ValueError(f"MLflow experiment '{self.experiment}' at "
                             f"{tracking.tracking_uri()} has no dmlbench runs; run the workflow "
                             "(or `dmlbench ingest`) first")
        parents, splits = select(parents, _search(self.experiment, voc.RunKind.SPLIT),
                                 parent_keys)
        for frame in (parents, splits):
            self._artifact_uris.update(zip(frame["run_id"], frame["artifact_uri"]))
        return parents, splits

    def load_config(self, run_id: str | None = None) -> dict | None:
        """The benchmark config logged with the runs: that of run `run_id` (a run of kind
        'benchmark', e.g. the track job's `config_run_id`), else the newest (None if none)."""
        return load_config(self.experiment, run_id)

    def load_kind(self, kind: str) -> pd.DataFrame:
        return load_kind(self.experiment, kind)

    def curves(self, run_ids, name: str) -> dict[str, list[float]]:
        """{run id: its curve `name`} of the runs (of a `load`) that have it: a metric history
        (`curves`), or an N_k histogram from the run's artifact `voc.HISTOGRAMS_ARTIFACT`."""
        if not voc.is_histogram(name):
            return curves(run_ids, name)
        out = {}
        for run_id in dict.fromkeys(run_ids):
            values = histograms(self._artifact_uris[run_id]).get(name)
            if values:
                out[run_id] = [v for v in values if np.isfinite(v)]
        return out

    def split_arrays(self, run_id: str) -> dict | None:
        """The arrays a split run of the last `load` kept (`split_arrays`)."""
        return split_arrays(self._artifact_uris[run_id])

    def split_tuning(self, run_ids) -> dict[str, dict]:
        """{run id: its `tuning` entry} of the split runs (of the last `load`) that were tuned
        (`split_tuning`)."""
        out = {}
        for run_id in dict.fromkeys(run_ids):
            entry = split_tuning(self._artifact_uris[run_id])
            if entry is not None:
                out[run_id] = entry
        return out


class RecordRuns:
    """The runs of record files and study documents, as an ingest would make them, without a
    store. `record_paths`: record files (their arrays files beside them, as the records name
    them); `tracked`: the study documents' runs (`studies.tracked_runs`); `config`: the
    benchmark config (what `load_config` returns); `experiment` (default: the records'
    benchmark) and `experiment_id`, which the page names. Run ids are the runs' keys (a
    split's job key, a parent key); start times follow the order in which an ingest creates
    the runs, so rows come in the order `mlflow.search_runs` gives them (a section that takes
    the first of several rows sees the same one)."""

    def __init__(self, record_paths, tracked=(), config: dict | None = None,
                 experiment: str | None = None, experiment_id: str | None = None):
        self.config = config
        by_key: dict[str, dict] = {}
        self._folders: dict[str, Path] = {}
        for path in map(Path, record_paths):
            for record in records.read(path):
                by_key.pop(record["job_key"], None)  # a record read again counts where read last
                by_key[record["job_key"]] = record
                self._folders[record["job_key"]] = path.parent
        if not by_key and not tracked:
            raise ValueError("no result records to report")
        self.experiment = experiment or (next(iter(by_key.values()))["benchmark"] if by_key
                                         else tracked[0].benchmark)
        self.experiment_id = experiment_id
        self._records = by_key
        groups: dict[str, list[dict]] = {}
        for record in by_key.values():
            groups.setdefault(record["parent_key"], []).append(record)
        for group in groups.values():
            group.sort(key=lambda r: r["split"]["index"])
        self._groups = groups
        self._contents: dict[str, tracking.RunContent] = {}
        # in the order an ingest creates the runs (parent keys sorted, each parent's splits in
        # split order), which `_frame` turns, as MLflow does, newest first
        parents = [(key, tracking.parent_content(group)) for key, group in sorted(groups.items())]
        splits = [(r["job_key"], tracking.split_content(r))
                  for _, group in sorted(groups.items()) for r in group]
        self._contents.update(parents)
        self._contents.update(splits)
        self._parents = self._frame(parents, voc.RunKind.PARENT)
        self._splits = self._frame(splits, voc.RunKind.SPLIT)
        self._tracked = list(tracked)

    def _frame(self, runs: list[tuple[str, tracking.RunContent]], kind: str) -> pd.DataFrame:
        """`mlflow.search_runs`' table of these runs (its columns, newest first)."""
        rows = []
        for i, (key, content) in enumerate(runs):
            row = {"run_id": key, "experiment_id": self.experiment_id, "status": "FINISHED",
                   "artifact_uri": None, "start_time": pd.Timestamp(i, unit="ms", tz="UTC"),
                   **{f"metrics.{k}": v for k, v in content.latest().items()},
                   **{f"params.{k}": v for k, v in content.params.items()},
                   **{f"tags.{k}": v for k, v in content.tags.items()},
                   f"tags.{tracking.KEY}": key, f"tags.{tracking.KIND}": kind}
            rows.append(row)
        return _search_frame(rows[::-1])

    def load(self, parent_keys: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(parents, splits): see `select`; all of them without `parent_keys` (the records
        are what is to be reported)."""
        if self._parents.empty:
            raise ValueError("the records hold no split records to report")
        return select(self._parents, self._splits,
                      list(self._groups) if parent_keys is None else parent_keys)

    def load_config(self, run_id: str | None = None) -> dict | None:
        return self.config

    def load_kind(self, kind: str) -> pd.DataFrame:
        runs = [(t.key, tracking.tracked_content(t)) for t in self._tracked if t.kind == kind]
        unique = dict(runs)  # a run tracked again counts as last tracked
        return tidy_kind(self._frame(list(unique.items()), kind))

    def curves(self, run_ids, name: str) -> dict[str, list[float]]:
        """{run id: its curve `name`} of the runs that have it (`MlflowRuns.curves`)."""
        out = {}
        for run_id in dict.fromkeys(run_ids):
            values = self._contents[run_id].curve(name)
            if values:
                out[run_id] = values
        return out

    def split_tuning(self, run_ids) -> dict[str, dict]:
        """{run id: its record's `tuning` entry} of the split runs that were tuned."""
        return {run_id: self._records[run_id]["tuning"] for run_id in dict.fromkeys(run_ids)
                if "tuning" in self._records[run_id]}

    def split_arrays(self, run_id: str) -> dict | None:
        entry = self._records[run_id].get("arrays")
        if entry is None:
            return None
        with np.load(self._folders[run_id] / entry["file"]) as npz:
            return {name: npz[name] for name in npz.files}


def _search_frame(rows: list[dict]) -> pd.DataFrame:
    """Rows of run fields as `mlflow.search_runs` lays them out: the run's fields, then
    metrics (NaN where a run lacks one), params and tags (None where a run lacks one)."""
    info = ["run_id", "experiment_id", "status", "artifact_uri", "start_time"]
    names = sorted({k for row in rows for k in row if k not in info})
    data = {c: [row.get(c) for row in rows] for c in info}
    for name in names:
        missing = np.nan if name.startswith("metrics.") else None
        data[name] = [row.get(name, missing) for row in rows]
    return pd.DataFrame(data)


def _search(experiment: str, kind: str) -> pd.DataFrame:
    import mlflow

    tracking.client()
    frame = mlflow.search_runs(
        experiment_names=[experiment],
        filter_string=f"tags.`{voc.Tag.KIND}` = '{kind}'",
        output_format="pandas",
    )
    return tracking.canonical_runs(frame)


def load(experiment: str, parent_keys: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(parents, splits) of MLflow experiment `experiment` (`MlflowRuns.load`)."""
    return MlflowRuns(experiment).load(parent_keys)


def select(parents: pd.DataFrame, splits: pd.DataFrame,
           parent_keys: list[str] | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(parents, splits) tidy, from `mlflow.search_runs` tables of parent and split runs: one
    row per parent run and per split run.

    With `parent_keys` only those parents (and their splits) are kept, e.g. the current config's;
    otherwise the newest parent per (data set, method label, learning-curve size). Columns are
    the metric names plus
    `dataset` (the config label), `dataset_name` (the registered name), `method`,
    `method_name`, `family`, `run_id`, `parent_key`, `experiment_id`, and the run parameters
    `k` (the list of k evaluated), `hubness_k` and `preprocess`, the method's parameters as
    JSON (`method_params`), the label of its hubness reduction, if any (`hubness_reduction`),
    the unpinned downloaded files of its data set, if any (`unpinned`: "<group>/<file>
    sha256:<hex> ..."), and the run's `artifact_uri`; a split run's index among its parent's
    splits (`split`, text; None for a parent); a learning curve's size (`train_size`, NaN for
    the full training parts: `by_train_size`).
    """
    parents, splits = _tidy(parents), _tidy(splits)
    if parent_keys is not None:
        parents = parents[parents["parent_key"].isin(parent_keys)]
    else:
        parents = (parents.sort_values("start_time")
                   .drop_duplicates(["dataset", "method", "train_size"], keep="last"))
    splits = splits[splits["parent_key"].isin(parents["parent_key"])]
    return parents.reset_index(drop=True), splits.reset_index(drop=True)


def histograms(artifact_uri: str) -> dict[str, list[float]]:
    """The N_k histograms of a run (its artifact `voc.HISTOGRAMS_ARTIFACT`: {curve name:
    counts}); {} when it has none."""
    import mlflow

    names = {a.path.rsplit("/", 1)[-1]
             for a in mlflow.artifacts.list_artifacts(artifact_uri=artifact_uri)}
    if voc.HISTOGRAMS_ARTIFACT not in names:
        return {}
    return mlflow.artifacts.load_dict(f"{artifact_uri.rstrip('/')}/{voc.HISTOGRAMS_ARTIFACT}")


def split_arrays(artifact_uri: str) -> dict | None:
    """The arrays a split run's method kept (its MLflow artifact `arrays.npz`, written by the
    job next to the record), or None when it kept none. `artifact_uri`: the run's (a column of
    the runs `load` returns), so that no query of the run is needed."""
    import mlflow

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


def split_tuning(artifact_uri: str) -> dict | None:
    """A tuned split run's `tuning` entry (its artifact `voc.TUNING_ARTIFACT`, the record's
    entry as the ingest logged it), or None for a run without it. A local store's artifact is
    read as a file (thousands of split runs: MLflow's artifact calls cost tens of ms each)."""
    location = f"{artifact_uri.rstrip('/')}/{voc.TUNING_ARTIFACT}"
    parsed = urllib.parse.urlparse(location)
    if parsed.scheme in ("", "file"):
        path = Path(urllib.parse.unquote(parsed.path))
        if not path.exists():
            return None
        return json.loads(path.read_text())
    import mlflow

    names = {a.path.rsplit("/", 1)[-1]
             for a in mlflow.artifacts.list_artifacts(artifact_uri=artifact_uri)}
    if voc.TUNING_ARTIFACT not in names:
        return None
    return mlflow.artifacts.load_dict(location)


def _tag(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[f"tags.{name}"]


def _param(frame: pd.DataFrame, name: str):
    return frame.get(f"params.{name}")


def _train_size(frame: pd.DataFrame) -> pd.Series:
    """A learning curve's size of each run (its parameter `train_size`), as a number; NaN for
    the runs of full training parts."""
    values = frame.get(f"params.{voc.PARAM_TRAIN_SIZE}")
    if values is None:
        return pd.Series(np.nan, index=frame.index)
    return pd.to_numeric(values, errors="coerce")


def by_train_size(parents: pd.DataFrame, splits: pd.DataFrame):
    """((parents, splits) of the full training parts, (parents, splits) of the learning curves'
    smaller sizes): the report's sections read the first; the learning-curve section both."""
    def part(frame, curve):
        if frame.empty or "train_size" not in frame:
            return frame if not curve else frame.iloc[0:0]
        keep = frame["train_size"].notna() if curve else frame["train_size"].isna()
        return frame[keep].reset_index(drop=True)

    return ((part(parents, False), part(splits, False)),
            (part(parents, True), part(splits, True)))


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
        "train_size": _train_size(frame),
        "method_params": _method_params(frame),
        "hubness_reduction": frame.get(f"tags.{voc.Tag.HUBNESS_REDUCTION}"),
        "split": frame.get(f"tags.{voc.Tag.SPLIT}"),
        **{name: frame.get(f"tags.{tag}") for name, tag in (
            ("git_commit", voc.Tag.GIT_COMMIT), ("code_version", voc.Tag.CODE_VERSION),
            ("host", voc.Tag.HOST),
            ("machine", voc.Tag.MACHINE), ("finished", voc.Tag.FINISHED),
            ("unpinned", voc.Tag.UNPINNED), ("over_budget", voc.Tag.OVER_BUDGET))},
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
    """Runs of another kind than parent/split (e.g. `mvce_validation`) of MLflow experiment
    `experiment`: see `tidy_kind`."""
    return tidy_kind(_search(experiment, kind))


def tidy_kind(frame: pd.DataFrame) -> pd.DataFrame:
    """A `mlflow.search_runs` table of runs of another kind than parent/split: one row per run
    with `run_id`, `start_time`, `dataset`, its metrics and params (prefix `param.`); empty if
    none."""
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
    import mlflow

    with tempfile.TemporaryDirectory() as tmp:  # MLflow's own download folder is never removed
        path = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="config.json",
                                                   dst_path=tmp)
        with open(path) as fh:
            return json.load(fh)


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
