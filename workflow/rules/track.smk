# The single writer to MLflow: imports every record file and study document of the benchmark,
# idempotently.


rule track:
    input:
        records=[dmlplan.record_path(CFG, job) for job in JOBS],
        documents=[dmlstudies.path(CFG, kind, label) for kind, label in STUDY_JOBS],
    output:
        f"results/{BENCH}/tracking.json",
    params:
        uri=tracking.tracking_uri(),
        config=json.dumps(CFG),  # in its order: the job keys depend on it
        bench=BENCH,
    log:
        f"logs/{BENCH}/track.log",
    conda:
        "../envs/dmlbench.yaml"
    shell:
        "python -m dmlbench.cli ingest {input.records:q} --documents {input.documents:q} "
        "--experiment {params.bench:q} --config-json {params.config:q} --out {output:q} 2> {log:q}"
