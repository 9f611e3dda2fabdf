"""One benchmark job: cached data -> for each of its splits: preprocessing (fit on train) ->
fit -> evaluate -> result record. Records are the source of truth; MLflow only indexes them."""

from __future__ import annotations

import hashlib
import random
import shutil
import sys
import time
import traceback
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from .. import data, records
from .. import vocabulary as voc
from ..files import check_writable, read_json, write_npz
from ..measure import hubness
from ..measure.evaluation import (PeakMemory, evaluate, neighbour_depths, stopwatch,
                                  test_accuracies)
from ..methods import plugins
from ..methods import registry as method_registry
from ..methods.hubness_reduced import HubnessReduced
from . import loo, plan, preprocessing, protocols, resources, supervise, time_limit, tuning


def method_seed(seed: int, split: int) -> int:
    """The random_state given to randomised methods on split `split`."""
    return seed * 10_000 + split


def method_class(spec: dict) -> type:
    """The class of the job's method: a plug-in's (`method_class`, `methods.plugins`), else the
    registered (or entry-point) method of its name."""
    if spec.get("method_class"):
        return plugins.load(spec["method_class"])
    return method_registry.get(spec["method"]["name"])


def seed_global_generators(seed: int) -> None:
    """Seed NumPy's global generator (`np.random.seed`, modulo 2^32) and Python's `random`:
    a method drawing from them (a plug-in without `random_state`) repeats its numbers."""
    np.random.seed(seed % 2**32)
    random.seed(seed)


def build_estimator(spec: dict, split: int, overrides: dict | None = None):
    """The method of `spec` (its parameters overridden by `overrides`, e.g. a tuning
    candidate), with `random_state` set per split when the config leaves it out. Every
    estimator a job fits is built here right before its fit (the split's, a tuning
    candidate's on an inner fold, the default's), so the global generators are seeded here
    too, with the same `method_seed`."""
    m = spec["method"]
    params = {**m["params"], **(overrides or {})}
    cls = method_class(spec)
    if "random_state" in cls.parameter_names() and params.get("random_state") is None:
        params["random_state"] = method_seed(spec["seed"], split)
    seed_global_generators(method_seed(spec["seed"], split))
    return method_registry.make(m["name"], params, cls), params


def plugin_record(spec: dict) -> dict | None:
    """A plug-in method's provenance for its records: what identifies its code in the job's
    identity (class path; package and version, or the sha256 of its file and its local
    modules: `run.sources.plugin_code`), and how its randomness was seeded (`seeding`:
    'random_state' when it takes one, else 'global': only the global generators seeded by
    `build_estimator`); None for a registered method."""
    if "class" not in spec["method"]:
        return None
    out = {key: spec["method"][key] for key in ("class", "package", "version", "sha256",
                                                "modules") if key in spec["method"]}
    takes = "random_state" in method_class(spec).parameter_names()
    return {**out, "seeding": "random_state" if takes else "global"}


def run_split(spec: dict, dataset, index: int, threads: int, progress: bool,
              record_path: str | Path | None = None, pool: list | None = None,
              one_pass: loo.OnePass | None = None) -> dict:
    """Preprocess, fit and evaluate split `index`; return its record. The record's memory
    figures cover all of it (preprocessing streams over rows of the cached data set). With
    `record_path` (the record file the job will write), the method's `artifacts` go to
    `<record stem>.arrays/split<index>.npz` and the record names that file. With the spec's
    `hubness_reduction` the method is evaluated through it (`methods.hubness_reduced`). `pool`
    receives (test points, their `hubness_k` nearest training points), as data-set indices.
    With `one_pass` (a leave-one-out job's pass over all points, `run.loo`) the split's rows
    and method are its views of the pass: the same record, apart from timings."""
    split, info = protocols.load_split(spec["split_file"], index)
    if info["dataset_sha256"] != dataset.meta["sha256"]:
        raise ValueError(
            f"split file {spec['split_file']} was made for other data than the cached "
            f"'{dataset.name}' (sha256 differs); delete it and rerun"
        )
    y_train, y_test = dataset.y[split.train], dataset.y[split.test]
    reduction = spec["hubness_reduction"]

    def build(overrides=None):
        est, params = build_estimator(spec, index, overrides)
        if reduction is not None:
            est = HubnessReduced.from_settings(est, reduction)
        return est, params

    timings: dict = {}
    tuned = None
    try:
        with PeakMemory(timings), resources.limit_threads(threads):
            with stopwatch(timings, "preprocess"):
                X_train, X_test, pre_info = (
                    one_pass.rows(split) if one_pass is not None else
                    preprocessing.fit_transform_rows(spec["preprocess"], dataset.X, split.train,
                                                     split.test))
            pending = [(None, spec["k"])]  # (candidate index, its ks) still to fit
            if spec.get("tuning"):
                chosen, tried, tuned = tuning.tune(spec, lambda p: build(p)[0], X_train,
                                                   y_train, index, spec["k"],
                                                   method_class(spec))
                pending = tuning.groups(chosen)
            kept: dict = {}
            default = None  # the default candidate (index 0) when it won some k: (fitted, times)
            metrics = None
            while pending:
                candidate_index, ks = pending.pop(0)
                first = metrics is None
                step: dict = {}
                overrides = None if candidate_index is None else tried[candidate_index]
                candidate, candidate_params = build(overrides)
                fit_params: dict = {}
                if one_pass is not None and not overrides:  # the pass's view of the method
                    candidate, fit_params = one_pass.estimator(split, reduction)
                try:
                    with stopwatch(step, "fit"):
                        candidate.fit(X_train, y_train, **fit_params)
                    candidate.check_finite()
                except ValueError as err:
                    if tuned is None:
                        raise
                    # the winner fits the inner folds but not the whole training part: the
                    # next-ranked candidate takes its ks
                    tuning.replace_failed(tuned, chosen, candidate_index, ks, str(err))
                    todo = ks + [k for _, later in pending for k in later]
                    pending = tuning.groups({k: chosen[k] for k in todo})
                    continue
                if candidate_index == 0:
                    default = (candidate, {key: step[key] for key in (
                        voc.wall_seconds("fit"), voc.cpu_seconds("fit"))})
                found = evaluate(candidate, X_test, y_train, y_test, ks, spec["hubness_k"],
                                 step, progress=progress, k_selection=spec["k_selection"],
                                 train_hubness=spec["train_hubness"],
                                 sweep=spec["dimension_sweep"], neighbours=kept if first else None)
                if first:
                    est, params, metrics = candidate, candidate_params, found
                    timings.update(step)
                else:  # another winner for these ks: its accuracies; its times add up
                    metrics.update({key: value for key, value in found.items()
                                    if key in {voc.accuracy(k) for k in ks} |
                                    {voc.error(k) for k in ks}})
                    for key, value in step.items():
                        timings[key] = timings.get(key, 0.0) + value
            if tuned is not None:
                tuned.update(tuned_default(spec, chosen, metrics, default,
                                           lambda: build(tried[0])[0], X_train, y_train, X_test,
                                           y_test))
    except ValueError as err:
        name, label = spec["dataset"]["name"], spec["dataset"]["label"]
        where = label if name == label else f"{label} ({name})"
        raise ValueError(f"method '{spec['method']['label']}' on data set '{where}', split "
                         f"{index}: {err}") from err
    if one_pass is not None:
        one_pass.account(timings)
    key = records.job_key(spec["parent_key"], index)
    record = records.build(spec, key, dataset, split, pre_info, est, params, metrics, timings,
                           threads)
    if tuned is not None:
        record["tuning"] = tuned
    if reduction is not None:
        record["method"]["hubness_reduction"] = {**reduction, "label": est.label}
    plugin = plugin_record(spec)
    if plugin is not None:
        record["method"]["plugin"] = plugin
    if pool is not None and "hubness" in kept:
        pool.append((split.test, split.train[kept["hubness"]]))
    arrays = est.artifacts(X_test, y_test) if record_path is not None else {}
    if arrays:
        record["arrays"] = save_arrays(Path(record_path), index, arrays)
    return record


def tuned_default(spec: dict, chosen: dict[int, int], metrics: dict, default: tuple | None,
                  build_default, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray,
                  y_test: np.ndarray) -> dict:
    """The method's default setting on the outer test part, for "tuned against defaults": the
    first candidate of its space (every parameter at its first value: the library or paper
    defaults, `search_spaces`) fitted on the whole training part, and its k-NN test accuracy at
    each k of the job (`default_test_accuracy`, k -> accuracy; `measure.evaluation.
    test_accuracies`, the rule of the main metrics), with the wall and CPU seconds of its fit.
    At a k the rule chose it for, its accuracy is the main one. When it won some k (`default`:
    the fitted candidate and its fit times) it is not fitted again; else it is fitted once here
    (`default_refit`). A default that cannot be fitted on the training part (e.g. a
    neighbourhood larger than it) gets `default_failed`, its reason, and no accuracies: the job's
    own results stand."""
    ks = sorted(chosen)
    accuracy = {k: metrics[voc.accuracy(k)] for k in ks if chosen[k] == 0}
    rest = [k for k in ks if chosen[k] != 0]
    out: dict = {"default_refit": default is None}
    if default is None:
        est, times = build_default(), {}
        try:
            with stopwatch(times, "fit"):
                est.fit(X_train, y_train)
            est.check_finite()
        except ValueError as err:
            return {**out, "default_test_accuracy": None,
                    "default_failed": " ".join(str(err).split()),
                    "default_fit_wall_s": times[voc.wall_seconds("fit")],
                    "default_fit_cpu_s": times[voc.cpu_seconds("fit")]}
        default = (est, times)
    est, times = default
    if rest:
        depth = neighbour_depths(spec["k"], spec["hubness_k"])[0]
        accuracy.update(test_accuracies(est, X_test, y_train, y_test, rest, depth))
    return {**out, "default_test_accuracy": {str(k): accuracy[k] for k in ks},
            "default_fit_wall_s": times[voc.wall_seconds("fit")],
            "default_fit_cpu_s": times[voc.cpu_seconds("fit")]}


def save_arrays(record_path: Path, index: int, arrays: dict) -> dict:
    """Write a split's arrays next to the record file; the record's `arrays` entry."""
    relative = f"{record_path.stem}.arrays/split{index}.npz"
    path = record_path.parent / relative
    write_npz(path, **{name: np.asarray(value) for name, value in arrays.items()})
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return {"file": relative, "sha256": digest, "names": sorted(arrays)}


def run(spec: dict, threads: int = 1, progress: bool = True,
        record_path: str | Path | None = None) -> list[dict]:
    """Run every split of the job described by `spec` (`dmlbench.run.plan.job_spec`); arrays are
    kept only when the path of the record file to be written is given. A leave-one-out job
    whose splits the shortcut of `run.loo` serves runs them from one pass over all points."""
    dataset = data.load(spec["dataset"]["name"], spec["cache"])
    label = f"{spec['dataset']['label']} / {spec['method']['label']}"
    pool: list = []
    one_pass = loo.prepare(spec, dataset, build_estimator(spec, spec["splits"][0])[0], threads)
    out = [run_split(spec, dataset, index, threads, progress, record_path, pool, one_pass)
           for index in tqdm(spec["splits"], desc=label, unit="split", disable=not progress,
                             mininterval=1.0)]
    pooled = pooled_hubness(pool, dataset.y.size, spec["hubness_k"])
    for record in out:
        record["metrics"].update(pooled)
    return out


class BatchError(RuntimeError):
    """Jobs of a batch failed (each one's traceback went to stderr); the others' record files
    are written."""


def run_batch(batch: list[dict], threads: int = 1, progress: bool = True) -> list[dict]:
    """Run the jobs of a batch (`dmlbench.run.plan.batches`) one after the other, each entry
    {"job": job spec, "out": its record file}, writing each record file as soon as its job
    ends. A job whose record file is current (`is_current`) is skipped: the workflow reruns a
    batch when one of its jobs changed, or its record file is missing, and leaves the record
    files of the others in place (Snakemake's `update` outputs). Returns the entries run (the
    others were current).

    The jobs run in a child process this one watches (`run.supervise`), each within its time
    limit (`run_member`): a job that ends the process (a crash in compiled code, `os._exit`) or
    never returns from compiled code past its limit is named, and the jobs after it run in a
    new child. A job that fails does not stop the others: its traceback goes to stderr, and
    once every job has had its turn `BatchError` names the failed ones. Snakemake then removes
    the record files the failed step wrote, or puts back their previous versions, so each one
    is copied aside as soon as it is written (`kept_path`; also against a crash of the
    process) and the copies are removed when the batch ends well; the next run of the batch
    takes such a copy back when it is current, instead of computing the job again. A previous
    version put back while Snakemake records the new settings is found by the track step
    (`stale_records`)."""
    todo = []
    for entry in batch:
        spec, out = entry["job"], entry["out"]
        kept = kept_path(out)
        if is_current(spec, out):
            print(f"{_label(spec)}: {out} is current, kept", file=sys.stderr)
            kept.unlink(missing_ok=True)
            continue
        if kept.exists():
            if is_current(spec, kept):
                kept.replace(out)
                print(f"{_label(spec)}: {out} taken back from the run that failed",
                      file=sys.stderr)
                continue
            kept.unlink()
        check_writable(out)
        todo.append(entry)
    outcomes = supervise.run(
        len(todo), lambda i: run_member(todo[i], threads, progress),
        lambda i: todo[i]["job"].get("limits", {}).get("time_s"),
        lambda ended: ended_from_outside(todo[ended.index], ended, threads),
        lambda i: todo[i]["job"].get("limits", {}).get("mem_mb"))
    failed = [failure for failure in outcomes if failure is not None]
    for entry, failure in zip(todo, outcomes):
        if failure is None and not Path(entry["out"]).exists():
            failed.append(f"{_label(entry['job'])} (ended without writing {entry['out']})")
    if failed:
        raise BatchError(f"{len(failed)} of {len(batch)} jobs failed: {'; '.join(failed)}; "
                         f"the other {len(batch) - len(failed)} record files are written")
    for entry in todo:
        kept_path(entry["out"]).unlink(missing_ok=True)
    return todo


def what(spec: dict) -> str:
    """A job in words for messages: "method '<label>' on data set '<label>'"."""
    return f"method '{spec['method']['label']}' on data set '{spec['dataset']['label']}'"


def run_member(entry: dict, threads: int, progress: bool) -> str | None:
    """Run one job of a batch within its time limit (`limits.time_s` of its spec,
    `run.time_limit`) and write its record file (and a copy aside, `kept_path`); returns None,
    or why it failed (its traceback went to stderr). A job over its time limit, out of memory,
    or whose peak resident memory went above the memory it reserves (`limits.mem_mb`, MiB as
    SLURM counts it; the batch's watcher stops one that stays above it, `run.supervise`)
    fails naming the method, the data set and the limit, or under `over_budget: record`
    writes records that say so (`over_budget_records`)."""
    spec, out = entry["job"], entry["out"]
    limits = spec.get("limits") or {}
    seconds = limits.get("time_s")
    print(f"dmlbench run: running {what(spec)}"
          + (f" (time limit {seconds:g} s)" if seconds else ""), file=sys.stderr, flush=True)
    used: dict = {}
    started, cpu = time.monotonic(), time.process_time()
    try:
        with PeakMemory(used), time_limit.limit(seconds, what(spec)):
            split_records = run(spec, threads=threads, progress=progress, record_path=out)
    except (time_limit.TimeLimitExceeded, MemoryError) as err:
        over_time = isinstance(err, time_limit.TimeLimitExceeded)
        detail = ("stopped at the limit" if over_time else
                  " ".join(f"{type(err).__name__}: {err}".split()))
        spent = {"wall_s": time.monotonic() - started, "cpu_s": time.process_time() - cpu,
                 "peak_rss_mb": used.get(voc.PEAK_RSS_MB, 0.0)}
        return over_budget(entry, "time" if over_time else "memory", spent, detail, threads)
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # any failure of a method (SystemExit too): the others still run
        traceback.print_exc()
        return f"{_label(spec)} ({type(err).__name__}: {err})"
    peak, reserved = used.get(voc.PEAK_RSS_MB, 0.0), limits.get("mem_mb")
    if reserved is not None and peak > reserved:  # a spike the watcher did not see
        spent = {"wall_s": time.monotonic() - started, "cpu_s": time.process_time() - cpu,
                 "peak_rss_mb": peak}
        return over_budget(entry, "memory", spent, f"finished, its peak resident memory "
                           f"{peak:.0f} MB above the {reserved:g} MB it reserves", threads)
    records.write(out, split_records)
    shutil.copy2(out, kept_path(out))
    return None


def ended_from_outside(entry: dict, ended: supervise.Ended, threads: int) -> str | None:
    """The outcome of a job that ended its process (`supervise.Ended`): over its time or
    memory limit, as `over_budget` says; else a failure naming how."""
    spec = entry["job"]
    if ended.over_time or ended.over_memory:
        spent = {"wall_s": ended.wall_s, "cpu_s": ended.cpu_s, "peak_rss_mb": ended.peak_rss_mb}
        return over_budget(entry, "time" if ended.over_time else "memory", spent, ended.how(),
                           threads)
    message = f"{what(spec)} {ended.how()}; the jobs after it still run"
    print(f"dmlbench run: error: {message}", file=sys.stderr, flush=True)
    return message


def over_budget(entry: dict, reason: str, used: dict, detail: str, threads: int) -> str | None:
    """A job over its time limit (`reason` "time") or out of memory ("memory"), having `used`
    {wall_s, cpu_s, peak_rss_mb}: under `over_budget: record` its record file says so
    (`over_budget_records`, written and kept aside) and None is returned; else the failure, in
    one line naming the method, the data set and the limit (also printed)."""
    spec, out = entry["job"], entry["out"]
    limits = spec.get("limits") or {}
    usage = (f"used {used['wall_s']:.0f} s wall, {used['cpu_s']:.0f} s CPU, peak "
             f"{used['peak_rss_mb']:.0f} MB")
    limit = (f"its time limit of {limits.get('time_s', 0):g} s" if reason == "time" else
             f"memory (it reserves {limits.get('mem_mb', 0):g} MB)")
    if limits.get("over_budget") == "record":
        entry_of = {"reason": reason, "used": used, "detail": detail,
                    "limit": {"time_s": limits["time_s"], "mem_mb": limits["mem_mb"]}}
        records.write(out, over_budget_records(spec, entry_of, threads))
        shutil.copy2(out, kept_path(out))
        print(f"dmlbench run: {what(spec)}: over budget ({limit}; {usage}): recorded as such "
              f"in {out}", file=sys.stderr, flush=True)
        return None
    message = (f"{what(spec)} exceeded {limit}" if reason == "time" else
               f"{what(spec)} ran out of {limit}") + f" ({usage}; {detail})"
    print(f"dmlbench run: error: {message}", file=sys.stderr, flush=True)
    return message


def over_budget_records(spec: dict, entry: dict, threads: int) -> list[dict]:
    """One record per split of job `spec` that says it went over budget (`entry`: its
    `over_budget` entry, `records.build_over_budget`), built from the cached data set's
    metadata and the split file alone."""
    name = spec["dataset"]["name"]
    meta = read_json(data.cache.paths(name, spec["cache"])[1])
    out = []
    for index in spec["splits"]:
        split, _ = protocols.load_split(spec["split_file"], index)
        est, params = build_estimator(spec, index)
        record = records.build_over_budget(spec, records.job_key(spec["parent_key"], index),
                                           name, meta, split, est, params, entry, threads)
        if spec["hubness_reduction"] is not None:
            reduced = HubnessReduced.from_settings(est, spec["hubness_reduction"])
            record["method"]["hubness_reduction"] = {**spec["hubness_reduction"],
                                                     "label": reduced.label}
        plugin = plugin_record(spec)
        if plugin is not None:
            record["method"]["plugin"] = plugin
        out.append(record)
    return out


def kept_path(out: str | Path) -> Path:
    """Where `run_batch` keeps a copy of record file `out` when another job of its batch failed
    (`.<name>.kept` beside it, so that its arrays files resolve as from `out`)."""
    out = Path(out)
    return out.with_name(f".{out.name}.kept")


def _label(spec: dict) -> str:
    return f"{spec['dataset']['label']} / {spec['method']['label']}"


def stale_records(config: dict, paths: list[str | Path]) -> list[tuple[Path, str]]:
    """The record files among `paths` that hold other results than `config` asks of their jobs
    now, each with why (`why_not_current`), e.g. the previous version Snakemake puts back when
    the step rewriting it fails or is stopped (`update` outputs) while it records the step's
    new settings, so that its next run finds nothing to do. Unreadable files and damaged arrays
    are left to the reader (`records.tracking.ingest` sets them aside); paths that are no job's
    record file under `config` are not checked."""
    by_path = {Path(plan.record_path(config, j)): j for j in plan.jobs(config)}
    stale = []
    for path in map(Path, paths):
        j = by_path.get(path)
        if j is None:
            continue
        why = why_not_current(plan.job_spec(config, j.dataset, j.method, j.splits,
                                            j.train_size), path)
        if why in OTHER_RESULTS:
            stale.append((path, why))
    return stale


#: why a record file is not current (`why_not_current`) when it holds results of another job
#: (or a job over budget under other limits, or one that must not record it, or a finished
#: job above the memory it reserves now)
OTHER_RESULTS = ("other settings", "other splits", "other data", "other limits")


def is_current(spec: dict, path: str | Path) -> bool:
    """Whether record file `path` holds the results of job `spec` as a run now would give them
    (up to timings): it is readable and valid, its records have the spec's identity
    (`parent_key`) and exactly its splits, were computed on the cached data set as it is (its
    sha256), their arrays files are intact, and the split file the job reads holds the splits
    of the spec's protocol and seed of that data set (`protocols.is_split_file_of`). Neither
    the data set's files nor the split file count by their time: the workflow's prepare steps
    touch them (Snakemake touches a step's outputs) whenever they run, e.g. for a split file
    another data set or config adds; they are the workflow's `ancient` inputs."""
    return why_not_current(spec, path) is None


def why_not_current(spec: dict, path: str | Path) -> str | None:
    """Why record file `path` is not current for job `spec` (`is_current`), in a few words
    (one of `OTHER_RESULTS`, "unreadable", "no data set cache", "split file not of this
    protocol", "arrays damaged"); None when it is. Records of a job over budget are current
    only under the limits they name, while the job records going over them, and finished
    records only within the memory the job reserves ("other limits")."""
    path = Path(path)
    meta = data.cache.paths(spec["dataset"]["name"], spec["cache"])[1]
    try:
        sha256 = read_json(meta)["sha256"]
    except (OSError, ValueError):
        return "no data set cache"
    try:
        split_records = records.read(path)
    except (OSError, ValueError):
        return "unreadable"
    if not protocols.is_split_file_of(spec["split_file"], spec["protocol"], spec["seed"], sha256,
                                      spec.get("train_size")):
        return "split file not of this protocol"
    if sorted(r["split"]["index"] for r in split_records) != sorted(spec["splits"]):
        return "other splits"
    if any(r["parent_key"] != spec["parent_key"] for r in split_records):
        return "other settings"
    if any(r["dataset"]["sha256"] != sha256 for r in split_records):
        return "other data"
    if any("over_budget" in r and not _within(r["over_budget"]["limit"], spec)
           or "over_budget" not in r and _above_reservation(r, spec) for r in split_records):
        return "other limits"
    if not all("arrays" not in r or _arrays_intact(path, r["arrays"]) for r in split_records):
        return "arrays damaged"
    return None


def _within(limit: dict, spec: dict) -> bool:
    """Whether an over-budget record's `limit` is the one job `spec` runs under now, and the
    job records going over it (`over_budget: record`)."""
    limits = spec.get("limits") or {}
    return (limits.get("over_budget") == "record" and limit["time_s"] == limits.get("time_s")
            and limit["mem_mb"] == limits.get("mem_mb"))


def _above_reservation(record: dict, spec: dict) -> bool:
    """Whether finished `record` used more memory than job `spec` reserves now (a record of
    before `run_member` held jobs to it: that job now ends over budget)."""
    reserved = (spec.get("limits") or {}).get("mem_mb")
    return reserved is not None and record["timings"][voc.PEAK_RSS_MB] > reserved


def _arrays_intact(record_path: Path, entry: dict) -> bool:
    source = record_path.parent / entry["file"]
    return source.exists() and hashlib.sha256(source.read_bytes()).hexdigest() == entry["sha256"]


def pooled_hubness(pool: list, n: int, k: int) -> dict[str, float]:
    """Hubness on the lists pooled over the splits when they test every sample exactly once
    (leave-one-out, k-fold with one repeat, given folds): each sample's k nearest training
    points in its own split, one N_k over the whole data set (`pooled_<measure>_n<k>`). Under
    leave-one-out these are each sample's k nearest among all the others, the measure hubness
    studies of small data sets report (a one-point split has no N_k of its own). Empty
    otherwise: repeated or partial protocols, and a job whose splits are spread over parts
    (`splits_per_job`, `max_splits`)."""
    if not pool:
        return {}
    tested = np.concatenate([test for test, _ in pool])
    if tested.size != n or np.unique(tested).size != n:
        return {}
    lists = np.empty((n, k), dtype=np.int64)
    for test, found in pool:
        lists[test] = found
    values = hubness.summary(lists, n, k)
    return {voc.pooled_hubness(m, k): values[voc.hubness(m, k)] for m in voc.HUBNESS_MEASURES}
