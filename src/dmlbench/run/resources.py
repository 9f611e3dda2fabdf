"""Resources of the workflow's jobs (threads, memory, time limit) from the data-set size.

Snakemake passes them to its executor: locally they limit how many jobs run at once under
`--resources mem_mb=...`; on a cluster the SLURM executor plugin turns `mem_mb` into `--mem`,
`runtime` into `--time` and `threads` into `--cpus-per-task`. A method's config entry may override
each (`threads`, `mem_mb`, `runtime`).

The memory estimate follows what a job holds (measured by `benchmarks/memory.py`): the interpreter
with its libraries, the cached data set (n x d float64), the preprocessed training and test parts
and one transformed copy (n x d' each, d' the dimension after PCA), and the k-NN search's distance
blocks (`neighbors.MAX_BLOCK_BYTES`, a few at a time), times a safety factor for what a method keeps
on top. The time limit grows with n x d' per split; both are upper bounds, not predictions.
"""

from __future__ import annotations

import math

from ..data import registry as data_registry
from ..measure.neighbours import MAX_BLOCK_BYTES

#: resident memory of a job's interpreter after importing dmlbench and its libraries (MiB)
BASE_MB = 400
#: safety factor on the estimate, for the method's own arrays
SAFETY = 1.5
#: time limit: minutes per split per this many (n x d') values, and the fixed part
VALUES_PER_MINUTE = 25_000
BASE_MINUTES = 10

MiB = 2**20


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


def working_dimension(d: int, preprocess: list) -> int:
    """Dimension after the preprocessing steps (a PCA with a variance fraction keeps up to d)."""
    for step in preprocess or []:
        if isinstance(step, dict) and isinstance(step.get("pca"), int) and not isinstance(
                step["pca"], bool):
            d = min(d, step["pca"])
    return d


def job_mem_mb(n: int, d: int, preprocess: list) -> int:
    """Memory (MiB) for one job on a data set of n points and d features."""
    d_work = working_dimension(d, preprocess)
    data = 8 * n * d + 3 * 8 * n * d_work + 4 * MAX_BLOCK_BYTES
    return _round_up(SAFETY * (BASE_MB + data / MiB), 250)


def job_runtime(n: int, d: int, preprocess: list, n_splits: int) -> int:
    """Time limit (minutes) for one job running `n_splits` splits."""
    per_split = max(1.0, n * working_dimension(d, preprocess) / VALUES_PER_MINUTE)
    return _round_up(BASE_MINUTES + n_splits * per_split, 5)


def dataset_mem_mb(n: int, d: int) -> int:
    """Memory (MiB) to build and validate a data set (a few n x d copies while checking it)."""
    return _round_up(SAFETY * (BASE_MB + 6 * 8 * n * d / MiB), 250)


def for_job(n: int, d: int, preprocess: list, n_splits: int, overrides: dict) -> dict:
    """{threads, mem_mb, runtime} of a workflow job on a data set of n x d (registry size) with
    its preprocessing, for `n_splits` splits; `overrides` (a method's config entry) wins."""
    return {
        "threads": overrides.get("threads", 1),
        "mem_mb": overrides.get("mem_mb") or job_mem_mb(n, d, preprocess),
        "runtime": overrides.get("runtime") or job_runtime(n, d, preprocess, n_splits),
    }


def for_dataset(name: str, spec=None) -> dict:
    """{mem_mb, runtime} of the rule that builds data set `name` (its registry spec, or `spec`
    for a data set given by a file); downloads get 30 minutes."""
    spec = spec or data_registry.get(name)
    return {"mem_mb": dataset_mem_mb(spec.n, spec.d), "runtime": 30 if spec.downloads else 10}
