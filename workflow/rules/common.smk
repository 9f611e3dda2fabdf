# Shared by the other .smk files: the checked config, the job lists, the environment of job
# shells, and the input and parameter functions (each a thin call into dmlbench.run.plan or dmlbench.studies). Parsing this file has
# no side effect beyond Snakemake's own settings: no environment variable of this process is
# changed and nothing is probed (cluster jobs re-parse it).
import json
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.settings.types import DeploymentMethod

from dmlbench import config as dmlconfig
from dmlbench import studies as dmlstudies
from dmlbench.data import availability
from dmlbench.records import tracking
from dmlbench.run import plan as dmlplan
from dmlbench.run import resources as dmlresources
from dmlbench.run import sources as dmlsources

# relative paths of the user's data files and plug-ins are relative to the config file giving them
try:
    CFG = dmlplan.check(config, config_files=workflow.configfiles)
except dmlconfig.ConfigError as err:
    raise WorkflowError(str(err)) from None

BENCH = dmlconfig.benchmark(CFG)
CACHE = dmlconfig.cache_dir(CFG)
JOBS = dmlplan.jobs(CFG)
BATCHES = dmlplan.batches(CFG)
STUDY_JOBS = dmlstudies.jobs(CFG)
MIRROR, OFFLINE = dmlconfig.data_source(CFG)


def job_shell_prefix():
    """What every job shell runs before its command: bash's strict mode (Snakemake's default
    prefix, which this one replaces); this workflow's src/ first on PYTHONPATH; the interpreter
    running Snakemake first on PATH (not with --use-conda, where the env's python comes first,
    workflow/envs/dmlbench.yaml); and the config's data.mirror, data.offline and
    data.trust_unpinned as DMLBENCH_MIRROR, DMLBENCH_OFFLINE and DMLBENCH_TRUST_UNPINNED, and
    the data sets given by a file (their absolute paths) as DMLBENCH_DATASET_FILES, which
    `dmlbench prepare` reads. These are no params of the prepare steps, on purpose: params are
    a rerun trigger, and moving the mirror (or the project with its data files) must not rerun
    every cached data set (and with them every job), while the shell prefix is no part of any
    step's code. Braces are doubled because Snakemake formats the prefix."""
    first = {"PYTHONPATH": str(Path(workflow.basedir) / "src")}  # before the variable's value
    if DeploymentMethod.CONDA not in workflow.deployment_settings.deployment_method:
        first["PATH"] = str(Path(sys.executable).parent)
    data = {"DMLBENCH_MIRROR": str(MIRROR or ""), "DMLBENCH_OFFLINE": "1" if OFFLINE else "",
            "DMLBENCH_TRUST_UNPINNED": "1" if dmlconfig.trust_unpinned(CFG) else "",
            "DMLBENCH_DATASET_FILES": json.dumps(dmlsources.file_datasets(CFG), sort_keys=True)}
    text = "set -euo pipefail; " if Path(shell.get_executable() or "").name == "bash" else ""
    text += "".join(f"export {name}={shlex.quote(value)}${{{name}:+:${name}}}; "
                    for name, value in first.items())
    text += "".join(f"export {name}={shlex.quote(value)}; " for name, value in data.items())
    return text.replace("{", "{{").replace("}", "}}")


shell.prefix(job_shell_prefix())


wildcard_constraints:
    name=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    study="|".join(sorted({kind for kind, _ in STUDY_JOBS})) or "no-study",


#: {split file: its data set, protocol, seed and class filter} of every split file of the config
SPLIT_FILES = {path: {**arguments, "dataset": name} for step in dmlplan.prepare_steps(CFG)
               for name in step.names
               for path, arguments in dmlplan.split_files(CFG, name).items()}


def split_arguments(paths):
    """`dmlbench prepare --splits` of these split files (a prepare step's outputs)."""
    return {path: SPLIT_FILES[path] for path in paths}


def dataset_files(label):
    """The cached arrays and metadata of a data-set label (inputs of its jobs)."""
    npz, meta = dmlplan.dataset_paths(CFG, dmlconfig.dataset_name(CFG, label))
    return {"npz": npz, "meta": meta}


def batch_inputs(batch):
    """The cached data sets and split files the jobs of a batch read, all `ancient`: their
    times do not rerun the batch, since a prepare step touches all its outputs whenever it
    runs (Snakemake touches a step's outputs), e.g. `prepare_local` when the config adds a data
    set, or another config on this cache a split file. A missing split file (a new data set or
    protocol, or a cache deleted) does rerun the batch; `dmlbench run --batch` then computes
    only the jobs whose records are not current, which it tells by content: the records'
    identity, the data set's sha256 and the split file's protocol, seed and data set
    (`run.job.is_current`)."""
    labels = dict.fromkeys(job.dataset for job in batch.jobs)
    splits = dict.fromkeys(dmlplan.split_path(CFG, job.dataset, job.train_size)
                           for job in batch.jobs)
    return [ancient(path) for path in
            [*(p for label in labels for p in dataset_files(label).values()), *splits]]


def batch_argument(batch):
    """`dmlbench run --batch`: each job's spec and record file, as JSON."""
    return json.dumps([{"job": dmlplan.job_spec(CFG, job.dataset, job.method, job.splits,
                                                job.train_size),
                        "out": dmlplan.record_path(CFG, job)} for job in batch.jobs],
                      sort_keys=True)


def study_spec(wildcards):
    return json.dumps(dmlstudies.spec(CFG, wildcards.study, wildcards.dataset), sort_keys=True)
