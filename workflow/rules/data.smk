# One prepare step per data set (its cache name): build it into the cache and write the split
# files the config's jobs read, in one process (each process costs seconds of start-up, more
# than the work of most data sets). The prepare steps are the workflow's only network access:
# downloaded sets are fetched from data.mirror and/or their public homes
# (dmlbench.data.download) and checked before they enter the cache; they are local rules, so
# downloads happen where snakemake was started (cluster nodes often have no internet).
#
# The cached arrays and metadata are `update` outputs: a config that adds a split file of a
# data set cached already (another protocol) reruns its prepare step, which keeps the cached
# files as they are (`dmlbench prepare` reads them back, checking their sha256), so the jobs of
# other benchmarks on the same cache see no newer input. The split arguments are a params
# function of the outputs: no rerun trigger (Snakemake ignores params derived from outputs),
# since the split file's name already says its protocol, seed and class filter
# (`dmlbench.run.plan.split_id`).

for _rule, _name in dmlplan.prepare_steps(CFG):

    rule:
        name:
            _rule
        output:
            npz=update(dmlplan.dataset_paths(CFG, _name)[0]),
            meta=update(dmlplan.dataset_paths(CFG, _name)[1]),
            splits=list(dmlplan.split_files(CFG, _name)),
        params:
            name=_name,
            cache=lambda wildcards, output: str(Path(output.npz).parents[1]),
            splits=lambda wildcards, output: json.dumps(split_arguments(output.splits),
                                                        sort_keys=True),
        resources:
            mem_mb=dmlplan.dataset_resources(CFG, _name)["mem_mb"],
            runtime=dmlplan.dataset_resources(CFG, _name)["runtime"],
        log:
            f"logs/prepare/{_name}.log",
        localrule: True
        conda:
            "../envs/dmlbench.yaml"
        shell:
            # the mirror and offline options come from DMLBENCH_MIRROR / DMLBENCH_OFFLINE, the
            # data sets given by a file from DMLBENCH_DATASET_FILES (common.smk)
            "python -m dmlbench.cli prepare {params.name:q} --splits {params.splits:q} "
            "--cache {params.cache:q} > {log:q} 2>&1"
