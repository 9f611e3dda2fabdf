# One job per (data set, method, batch of splits): for each split, preprocess (fit on the
# training part), fit, evaluate; one record file per job.


def _job(wildcards):
    return dmlconfig.job_of(CFG, wildcards.dataset, wildcards.method, int(wildcards.part))


def _resources(wildcards):
    """threads, mem_mb and runtime (minutes) from the data-set size (dmlbench.run.resources)."""
    return dmlresources.for_job(CFG, _job(wildcards))


def _job_inputs(wildcards):
    name = dmlconfig.dataset_name(CFG, wildcards.dataset)
    npz, meta = dmlconfig.dataset_paths(CFG, name)
    return {"npz": npz, "meta": meta, "split": dmlconfig.split_path(CFG, wildcards.dataset)}


def _job_spec(wildcards):
    job = _job(wildcards)
    return json.dumps(dmlconfig.job_spec(CFG, job.dataset, job.method, job.splits), sort_keys=True)


rule run_job:
    input:
        unpack(_job_inputs),
    output:
        f"results/{BENCH}/runs/{{dataset}}/{{method}}/part{{part}}.json",
    params:
        job=_job_spec,
    threads: lambda wildcards: _resources(wildcards)["threads"]
    resources:
        mem_mb=lambda wildcards: _resources(wildcards)["mem_mb"],
        runtime=lambda wildcards: _resources(wildcards)["runtime"],
    log:
        f"logs/{BENCH}/{{dataset}}/{{method}}/part{{part}}.log",
    conda:
        "../../envs/dmlbench.yaml"
    shell:
        "{DMLBENCH} run --job {params.job:q} --threads {threads} --out {output} 2> {log}"
