# Side studies (dmlbench.studies; config keys such as `mvce_validation`): one job per (study,
# data set), one JSON document each, imported into MLflow by `track`.


rule study:
    input:
        unpack(lambda wildcards: dataset_files(wildcards.dataset)),
    output:
        f"results/{BENCH}/{{study}}/{{dataset}}.json",
    params:
        job=study_spec,
    log:
        f"logs/{BENCH}/{{study}}/{{dataset}}.log",
    conda:
        "../envs/dmlbench.yaml"
    shell:
        "python -m dmlbench.cli study {wildcards.study} --job {params.job:q} --out {output:q} "
        "2> {log:q}"
