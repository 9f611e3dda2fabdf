"""The names results are known by: metric and curve names in records and MLflow, MLflow tag names,
and the one digest used for identity keys. Writers (evaluation, records, tracking) and readers
(the report) both take them from here, so a name is typed once.

Metric names carry their k: `accuracy_k3`, `skewness_n10` (N_k-based measures use `_n<k>`,
k-NN rules `_k<k>`); `parse_k` reads it back. Across splits a metric `m` becomes `m_mean` and
`m_std` in the parent run (`records.aggregation`).
"""

from __future__ import annotations

import hashlib
import json
import re

# --- metric names -------------------------------------------------------------------------------

#: accuracy and error of the k-NN rule with the k chosen on the training part
ACCURACY_KCV, ERROR_KCV = "accuracy_kcv", "error_kcv"
SELECTED_K, SELECTED_K_BY_METHOD = "selected_k", "selected_k_by_method"
#: number of mapped dimensions a dimension sweep covers
SWEEP_DIMS = "sweep_dims"
#: parent-run summaries (records.aggregation)
N_SPLITS, N_TEST_TOTAL = "n_splits", "n_test_total"
N_TRAIN, N_TEST = "n_train", "n_test"
#: peak resident memory of the process during a split (MiB) and its rise over the start
PEAK_RSS_MB, PEAK_RSS_DELTA_MB = "peak_rss_mb", "peak_rss_delta_mb"
#: hubness measures of `measure.hubness.summary`, each named `<measure>_n<k>`
HUBNESS_MEASURES = ("skewness", "robin_hood", "antihub_share", "hub_occurrence", "gini", "max")
#: prefix of the hubness measured within the training set (leave-one-out lists)
TRAIN_PREFIX = "train_"
#: prefix of the hubness measured on the test lists pooled over a protocol's splits
#: (`pooled_hubness`)
POOLED_PREFIX = "pooled_"
#: `fit_info` entries of a hubness-reduced method (`measure.hubness_reduction`): 1 when every
#: pair was used (0: each point's `candidates` nearest), that number, and the share of pairs whose
#: empiric mutual proximity was cut at it
REDUCTION_EXACT = "reduction_exact"
REDUCTION_CANDIDATES = "reduction_candidates"
REDUCTION_TRUNCATED_SHARE = "reduction_truncated_share"


def accuracy(k: int) -> str:
    """Test accuracy of the k-NN rule."""
    return f"accuracy_k{k}"


def error(k: int) -> str:
    return f"error_k{k}"


def loo_accuracy(k: int) -> str:
    """Leave-one-out k-NN accuracy of the training points (k selection)."""
    return f"loo_accuracy_k{k}"


def hubness(measure: str, k: int, train: bool = False) -> str:
    """A hubness measure of N_k, e.g. `hubness("skewness", 10)` = `skewness_n10`."""
    return f"{TRAIN_PREFIX if train else ''}{measure}_n{k}"


def skewness(k: int, train: bool = False) -> str:
    return hubness("skewness", k, train)


def pooled_hubness(measure: str, k: int) -> str:
    """A hubness measure on the pooled lists of a protocol that tests every sample once: under
    leave-one-out each sample's k nearest among all the others, one N_k over the whole data set
    (with k-fold or given folds, each sample's k nearest in the training part of its fold), e.g.
    `pooled_skewness_n5`; every split record of the job carries it (`run.job.pooled_hubness`)."""
    return f"{POOLED_PREFIX}{measure}_n{k}"


def nk_histogram(k: int, train: bool = False) -> str:
    """Curve: entry m = number of labelled points with N_k = m."""
    return hubness("nk_hist", k, train)


def is_histogram(name: str) -> bool:
    """Whether a curve (`nk_hist_n10`, `train_nk_hist_n10`, with or without `curve.`) is an N_k
    histogram: MLflow keeps those as one artifact per run (`HISTOGRAMS_ARTIFACT`), not as
    metric histories."""
    name = name[len(CURVE_PREFIX):] if name.startswith(CURVE_PREFIX) else name
    name = name[len(TRAIN_PREFIX):] if name.startswith(TRAIN_PREFIX) else name
    return re.fullmatch(r"nk_hist_n\d+", name) is not None


def sweep_accuracy(k: int) -> str:
    """Curve: k-NN accuracy on the first r mapped dimensions, r = 1, 2, ..."""
    return f"sweep_accuracy_k{k}"


def sweep_best_accuracy(k: int) -> str:
    return f"sweep_best_accuracy_k{k}"


def sweep_best_dim(k: int) -> str:
    return f"sweep_best_dim_k{k}"


def wall_seconds(phase: str) -> str:
    """Wall-clock seconds of a phase of a split: `fit_wall_s`, `predict_wall_s`, ...; a tuned
    split's `tuning_wall_s` (`records.aggregation.split_metrics`)."""
    return f"{phase}_wall_s"


def cpu_seconds(phase: str) -> str:
    return f"{phase}_cpu_s"


def mean(metric: str) -> str:
    """The parent run's mean over splits of `metric`."""
    return f"{metric}_mean"


def std(metric: str) -> str:
    return f"{metric}_std"


_K = re.compile(r"_(?:k|n)(\d+)(?:_mean|_std)?$")


def parse_k(name: str) -> int | None:
    """The k a metric name carries (`accuracy_k3_mean` -> 3, `skewness_n10` -> 10); None when it
    carries none (`accuracy_kcv`, `fit_wall_s`)."""
    match = _K.search(name)
    return int(match.group(1)) if match else None


# --- MLflow --------------------------------------------------------------------------------------

CURVE_PREFIX = "curve."  # metric histories of curves: `curve.sweep_accuracy_k1`
#: the MLflow artifact of a run's N_k histograms (`is_histogram`): {curve name: counts}
HISTOGRAMS_ARTIFACT = "histograms.json"
#: a tuned split's `tuning` entry (docs/tuning.md), one JSON artifact of its split run
TUNING_ARTIFACT = "tuning.json"
FIT_PREFIX = "fit."  # a method's fit_info entries: `fit.n_iter`, `fit.m_k1`


def curve(name: str) -> str:
    return CURVE_PREFIX + name


def fit(key: str) -> str:
    return FIT_PREFIX + key


#: run parameters every parent and split run carries (the report reads k and hubness_k here)
PARAM_K, PARAM_HUBNESS_K, PARAM_PROTOCOL = "k", "hubness_k", "protocol"
#: run parameter (JSON settings) of a method evaluated through a hubness reduction
PARAM_HUBNESS_REDUCTION = "hubness_reduction"
#: run parameter of a learning curve's runs: the size their training parts were subsampled to
#: (absent from the runs of full training parts)
PARAM_TRAIN_SIZE = "train_size"


class RunKind:
    """Values of the `dmlbench.kind` tag: what an MLflow run holds."""

    PARENT = "parent"  # one (data set, method, parameters): aggregation over its splits
    SPLIT = "split"  # one split's record
    BENCHMARK = "benchmark"  # a benchmark config
    MVCE_VALIDATION = "mvce_validation"  # a study (studies.mvce_validation)


class Tag:
    """MLflow tag names of dmlbench runs."""

    KEY = "dmlbench.key"  # identity of the run (a record's job key, a parent key, ...)
    KIND = "dmlbench.kind"  # parent | split | benchmark | <study kind>
    CONTENT_HASH = "dmlbench.content_hash"
    BENCHMARK = "dmlbench.benchmark"
    DATASET = "dmlbench.dataset"  # the data-set label of the config
    DATASET_SOURCE = "dmlbench.dataset_source"
    DATASET_PAPERS = "dmlbench.dataset_papers"
    METHOD = "dmlbench.method"  # the method label of the config
    METHOD_NAME = "dmlbench.method_name"  # its registry name
    FAMILY = "dmlbench.family"
    METHOD_PAPERS = "dmlbench.method_papers"
    HUBNESS_REDUCTION = "dmlbench.hubness_reduction"  # the reduction's label, e.g. 'MP empiric'
    PARENT_KEY = "dmlbench.parent_key"
    SPLIT = "dmlbench.split"
    GIT_COMMIT = "dmlbench.git_commit"
    CODE_VERSION = "dmlbench.code_version"  # records.code_version: the code that computed it
    HOST = "dmlbench.host"  # where a split ran
    MACHINE = "dmlbench.machine"  # its CPU, cores and memory
    FINISHED = "dmlbench.finished"  # when it finished (ISO 8601)
    UNPINNED = "dmlbench.unpinned"  # downloaded files without a pin its data set came from
    PLUGIN = "dmlbench.plugin"  # a plug-in method: class path, package version or file sha256
    DATASET_FILE = "dmlbench.dataset_file"  # a data set given by a file: its name and sha256
    OVER_BUDGET = "dmlbench.over_budget"  # a job over its time or memory: why, limit, use
    PARENT_RUN = "mlflow.parentRunId"


# --- identity ------------------------------------------------------------------------------------


def digest(obj, length: int | None = 16) -> str:
    """sha256 of the canonical JSON of `obj` (keys sorted), hex, cut to `length` characters
    (None: all 64). Identity keys use 16."""
    text = hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()
    return text if length is None else text[:length]
