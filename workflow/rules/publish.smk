# The report's folder carries what it was built from: every record file (with its arrays) and
# study document, the config, and a manifest with their sha256 (`dmlbench report --records`
# rebuilds the report from them). Written before the report, which prints the manifest's sha256.


rule publish:
    input:
        tracking=f"results/{BENCH}/tracking.json",
        records=[dmlplan.record_path(CFG, job) for job in JOBS],
        documents=[dmlstudies.path(CFG, kind, label) for kind, label in STUDY_JOBS],
    output:
        f"reports/{BENCH}/records/manifest.json",
    params:
        config=json.dumps(CFG),  # in its order: the job keys depend on it
        results=lambda wildcards, input: str(Path(input.records[0]).parents[3]),
        out=lambda wildcards, output: str(Path(output[0]).parents[1]),
    log:
        f"logs/{BENCH}/publish.log",
    conda:
        "../envs/dmlbench.yaml"
    shell:
        "python -m dmlbench.cli publish {input.records:q} --documents {input.documents:q} "
        "--config-json {params.config:q} --results {params.results:q} --out {params.out:q} "
        "2> {log:q}"


localrules:
    publish,
