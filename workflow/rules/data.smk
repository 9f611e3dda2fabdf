# Data sets into the cache, then their saved splits. The `dataset` rule is the workflow's only
# network access: downloaded sets are fetched from data.mirror and/or their public homes
# (dmlbench.data.download) and checked before they enter the cache.
import shlex

from dmlbench.data import availability as _availability

MIRROR = CFG["data"].get("mirror")
OFFLINE = bool(CFG["data"].get("offline", False))
# Passed as text (not `params`), so moving the mirror does not rerun cached data sets.
FETCH_ARGS = " ".join(
    ([f"--mirror {shlex.quote(str(MIRROR))}"] if MIRROR else [])
    + (["--offline"] if OFFLINE else [])
)

# Before any job starts: every data set must be embedded, cached, in the mirror or reachable.
# Only in the main process: jobs that re-read this file on cluster nodes skip it.
if workflow.is_main_process:
    _problems = _availability.missing(
        [dmlconfig.dataset_name(CFG, label) for label in CFG["datasets"]], CACHE, MIRROR, OFFLINE
    )
    if _problems:
        raise WorkflowError(_availability.message(_problems, CACHE))


def _split_args(wildcards):
    """Protocol arguments of the split file requested (looked up among this config's data sets)."""
    for label in CFG["datasets"]:
        if (dmlconfig.dataset_name(CFG, label) == wildcards.name
                and dmlconfig.split_id(CFG, label) == wildcards.split_id):
            protocol = json.dumps(dmlconfig.dataset_protocol(CFG, label), sort_keys=True)
            drop = CFG["datasets"][label].get("drop_classes_below") or 0
            return f"--protocol '{protocol}' --seed {CFG['seed']} --drop-classes-below {drop}"
    raise WorkflowError(f"no data set of this config has split {wildcards.split_id}")


rule dataset:
    output:
        npz=f"{CACHE}/datasets/{{name}}.npz",
        meta=f"{CACHE}/datasets/{{name}}.json",
    resources:
        mem_mb=lambda wildcards: dmlresources.for_dataset(wildcards.name)["mem_mb"],
        runtime=lambda wildcards: dmlresources.for_dataset(wildcards.name)["runtime"],
    log:
        f"logs/datasets/{{name}}.log",
    conda:
        "../../envs/dmlbench.yaml"
    shell:
        "{DMLBENCH} dataset {wildcards.name} --cache {CACHE:q} {FETCH_ARGS} > {log} 2>&1"


rule split:
    input:
        npz=f"{CACHE}/datasets/{{name}}.npz",
        meta=f"{CACHE}/datasets/{{name}}.json",
    output:
        f"{CACHE}/splits/{{name}}/{{split_id}}.npz",
    params:
        args=_split_args,
    resources:
        mem_mb=1000,
        runtime=10,
    log:
        f"logs/splits/{{name}}/{{split_id}}.log",
    conda:
        "../../envs/dmlbench.yaml"
    shell:
        "{DMLBENCH} split {wildcards.name} {params.args} --cache {CACHE:q} --out {output} > {log} 2>&1"


# Downloads run where the workflow was started (cluster nodes often have no internet).
localrules:
    dataset,
