# The report's folder carries what it was built from: every record file (with its arrays) and
# study document, and a manifest with their sha256 (`dmlbench report --records` rebuilds it).


rule publish:
    input:
        index=f"reports/{BENCH}/index.html",
        records=[dmlplan.record_path(CFG, job) for job in JOBS],
        documents=[dmlstudies.path(CFG, kind, label) for kind, label in STUDY_JOBS],
    output:
        f"reports/{BENCH}/records/manifest.json",
    params:
        config=json.dumps(CFG, sort_keys=True),
        results=lambda wildcards, input: str(Path(input.records[0]).parents[3]),
        out=lambda wildcards, input: str(Path(input.index).parent),
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
