# Data sets into the cache, then their saved splits. The `dataset` rule is the workflow's only
# network access: downloaded sets are fetched from data.mirror and/or their public homes
# (dmlbench.data.download) and checked before they enter the cache.


rule dataset:
    output:
        npz=f"{CACHE}/datasets/{{name}}.npz",
        meta=f"{CACHE}/datasets/{{name}}.json",
    params:
        cache=lambda wildcards, output: str(Path(output.npz).parents[1]),
    resources:
        mem_mb=lambda wildcards: dmlplan.dataset_resources(CFG, wildcards.name)["mem_mb"],
        runtime=lambda wildcards: dmlplan.dataset_resources(CFG, wildcards.name)["runtime"],
    log:
        f"logs/datasets/{{name}}.log",
    conda:
        "../envs/dmlbench.yaml"
    shell:
        # the mirror and offline options come from DMLBENCH_MIRROR / DMLBENCH_OFFLINE, the data
        # sets given by a file from DMLBENCH_DATASET_FILES (common.smk)
        "python -m dmlbench.cli dataset {wildcards.name} --cache {params.cache:q} > {log:q} 2>&1"


rule split:
    input:
        npz=f"{CACHE}/datasets/{{name}}.npz",
        meta=f"{CACHE}/datasets/{{name}}.json",
    output:
        f"{CACHE}/splits/{{name}}/{{split_id}}.npz",
    params:
        args=split_arguments,
        cache=lambda wildcards, input: str(Path(input.npz).parents[1]),
    resources:
        mem_mb=1000,
        runtime=10,
    log:
        f"logs/splits/{{name}}/{{split_id}}.log",
    conda:
        "../envs/dmlbench.yaml"
    shell:
        "python -m dmlbench.cli split {wildcards.name} {params.args} --cache {params.cache:q} "
        "--out {output:q} > {log:q} 2>&1"


# Downloads run where the workflow was started (cluster nodes often have no internet).
localrules:
    dataset,
