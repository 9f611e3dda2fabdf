# Side studies (dmlbench.studies; config keys such as `mvce_validation`): one job per (study,
# data set), one JSON document each, imported into MLflow by `track`. The data set's files are
# `ancient` inputs, as for the run steps (common.smk, `batch_inputs`): a prepare step touches
# them whenever it runs, e.g. `prepare_local` for a data set the config adds, and a data set
# built again under its name has the same content (the registry's and the download lock's pins;
# a data set given by a file is named by its content), so only a missing one reruns the study.


rule study:
    input:
        unpack(lambda wildcards: {key: ancient(path) for key, path in
                                  dataset_files(wildcards.dataset).items()}),
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
