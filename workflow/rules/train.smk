# One job per (data set, method, batch of splits): for each split, preprocess (fit on the
# training part), fit, evaluate; one record file per job.


rule run_job:
    input:
        unpack(job_inputs),
    output:
        f"results/{BENCH}/runs/{{dataset}}/{{method}}/part{{part}}.json",
    params:
        job=job_spec,
    threads: lambda wildcards: job_resources(wildcards)["threads"]
    resources:
        mem_mb=lambda wildcards: job_resources(wildcards)["mem_mb"],
        runtime=lambda wildcards: job_resources(wildcards)["runtime"],
    log:
        f"logs/{BENCH}/{{dataset}}/{{method}}/part{{part}}.log",
    conda:
        "../envs/dmlbench.yaml"
    shell:
        "python -m dmlbench.cli run --job {params.job:q} --threads {threads} --out {output:q} "
        "2> {log:q}"
