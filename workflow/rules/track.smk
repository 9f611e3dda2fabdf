# The single writer to MLflow: imports every record file of the benchmark, idempotently.


rule track:
    input:
        [dmlconfig.record_path(CFG, job) for job in JOBS],
    output:
        f"results/{BENCH}/tracking.json",
    params:
        uri=tracking.tracking_uri(),
        config=json.dumps(CFG, sort_keys=True),
    log:
        f"logs/{BENCH}/track.log",
    conda:
        "../../envs/dmlbench.yaml"
    shell:
        "{DMLBENCH} ingest {input:q} --experiment {BENCH} --config-json {params.config:q} "
        "--out {output} 2> {log}"
