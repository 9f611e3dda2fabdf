# Shared by the other .smk files: the checked config, the job list, the environment of job
# shells, and the input and parameter functions (each a thin call into dmlbench.config).
import json
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from dmlbench import config as dmlconfig
from dmlbench.data import availability
from dmlbench.records import tracking
from dmlbench.run import resources as dmlresources

try:
    CFG = dmlconfig.check(config)
except dmlconfig.ConfigError as err:
    raise WorkflowError(str(err)) from None

BENCH = dmlconfig.benchmark(CFG)
CACHE = dmlconfig.cache_dir(CFG)
JOBS = dmlconfig.jobs(CFG)
STUDY_JOBS = dmlconfig.study_jobs(CFG)
MIRROR, OFFLINE = dmlconfig.data_source(CFG)

# Job shells run `python -m dmlbench.cli` with this workflow's src/ first on PYTHONPATH: the
# interpreter running Snakemake by default, the conda env's with --use-conda (envs/dmlbench.yaml).
# `dmlbench dataset` takes the config's data.mirror / data.offline / data.trust_unpinned from
# DMLBENCH_MIRROR / DMLBENCH_OFFLINE / DMLBENCH_TRUST_UNPINNED: not as rule params, on purpose,
# because params are a rerun trigger and moving the mirror must not rerun every cached data set
# (and with them every job). The workflow sets
# these variables for its jobs; it requires none from the user (nothing to assert with envvars).
os.environ.update(
    PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    PYTHONPATH=os.pathsep.join(
        [str(Path(workflow.basedir) / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    ),
    DMLBENCH_MIRROR=str(MIRROR or ""),
    DMLBENCH_OFFLINE="1" if OFFLINE else "",
    DMLBENCH_TRUST_UNPINNED="1" if dmlconfig.trust_unpinned(CFG) else "",
)

# Before any job starts: every data set must be embedded, cached, in the mirror or reachable.
# Only in the main process: jobs that re-read this file on cluster nodes skip it.
if workflow.is_main_process:
    _problems = availability.missing(dmlconfig.dataset_names(CFG), CACHE, MIRROR, OFFLINE,
                                     dmlconfig.trust_unpinned(CFG))
    if _problems:
        raise WorkflowError(availability.message(_problems, CACHE))


wildcard_constraints:
    name=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    method=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    part=r"\d+",
    study="|".join(sorted({kind for kind, _ in STUDY_JOBS})) or "no-study",


def split_arguments(wildcards):
    """`dmlbench split` options of the split file requested (one of this config's data sets)."""
    args = dmlconfig.split_arguments(CFG, wildcards.name, wildcards.split_id)
    if args is None:
        raise WorkflowError(f"no data set of this config has split {wildcards.split_id}")
    protocol = json.dumps(args["protocol"], sort_keys=True)
    return (f"--protocol '{protocol}' --seed {args['seed']} "
            f"--drop-classes-below {args['drop_classes_below']}")


def dataset_files(label):
    """The cached arrays and metadata of a data-set label (inputs of its jobs)."""
    npz, meta = dmlconfig.dataset_paths(CFG, dmlconfig.dataset_name(CFG, label))
    return {"npz": npz, "meta": meta}


def job_of(wildcards):
    return dmlconfig.job_of(CFG, wildcards.dataset, wildcards.method, int(wildcards.part))


def job_resources(wildcards):
    """threads, mem_mb and runtime (minutes) from the data-set size (dmlbench.run.resources)."""
    return dmlconfig.job_resources(CFG, job_of(wildcards))


def job_inputs(wildcards):
    return {**dataset_files(wildcards.dataset),
            "split": dmlconfig.split_path(CFG, wildcards.dataset)}


def job_spec(wildcards):
    job = job_of(wildcards)
    return json.dumps(dmlconfig.job_spec(CFG, job.dataset, job.method, job.splits), sort_keys=True)


def study_spec(wildcards):
    return json.dumps(dmlconfig.study_spec(CFG, wildcards.study, wildcards.dataset), sort_keys=True)
