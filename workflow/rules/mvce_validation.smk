# The MVCE solver check (config key `mvce_validation`): per data set, every MVCE solver against
# the CVXPY reference on sampled query neighbourhoods; one JSON file each, imported by `track`.

MVCE_VALIDATION = [dmlconfig.mvce_validation_path(CFG, label)
                   for label in dmlconfig.mvce_validation_datasets(CFG)]


def _mvce_validation_inputs(wildcards):
    npz, meta = dmlconfig.dataset_paths(CFG, dmlconfig.dataset_name(CFG, wildcards.dataset))
    return {"npz": npz, "meta": meta}


rule mvce_validation:
    input:
        unpack(_mvce_validation_inputs),
    output:
        f"results/{BENCH}/mvce_validation/{{dataset}}.json",
    params:
        job=lambda wildcards: json.dumps(
            dmlconfig.mvce_validation_spec(CFG, wildcards.dataset), sort_keys=True),
    log:
        f"logs/{BENCH}/mvce_validation/{{dataset}}.log",
    conda:
        "../../envs/dmlbench.yaml"
    shell:
        "{DMLBENCH} mvce-validate --job {params.job:q} --out {output} 2> {log}"
