# The prepare steps (dmlbench.run.plan.prepare_steps): build data sets into the cache and write
# the split files the config's jobs read. Every data set that needs no download (embedded,
# generated, given by a file) is prepared by one step, `prepare_local`, in one process: a
# process costs about 1.7 s of CPU to start, more than the work of most data sets. Each
# downloaded set has a step of its own, `prepare_<name>`. The prepare steps are the workflow's
# only network access: downloaded sets are fetched from data.mirror and/or their public homes
# (dmlbench.data.download) and checked before they enter the cache; they are local rules, so
# downloads happen where snakemake was started (cluster nodes often have no internet).
#
# All outputs are `update` outputs, and `dmlbench prepare` keeps what is current: a cached
# data set is read back (its sha256 checked) and kept as it is, a split file made with the same
# protocol and seed from that data set is kept. Snakemake touches a step's outputs whenever it
# runs (e.g. for a split file another data set, or another config on this cache, adds), so the
# jobs read them as `ancient` inputs and count them by their content (`run.job.is_current`):
# only the jobs of a new or changed file run. Each file is written whole (by rename) or not at
# all; a data set that fails does not stop the others, and the step's log names each failure.
# The data sets' names and the split arguments are params functions of the outputs: no rerun
# trigger (Snakemake ignores params derived from outputs), since the outputs name the data sets,
# and the split file's name says its protocol, seed and class filter
# (`dmlbench.run.plan.split_id`); another config on the same cache prepares other data sets with
# the same files, which must not rerun this config's step.

for _step in dmlplan.prepare_steps(CFG):

    rule:
        name:
            _step.rule
        output:
            npz=[update(dmlplan.dataset_paths(CFG, name)[0]) for name in _step.names],
            meta=[update(dmlplan.dataset_paths(CFG, name)[1]) for name in _step.names],
            splits=[update(path) for name in _step.names for path in dmlplan.split_files(CFG, name)],
        params:
            names=lambda wildcards, output: [Path(path).name.removesuffix(".npz")
                                             for path in output.npz],
            cache=lambda wildcards, output: str(Path(output.npz[0]).parents[1]),
            splits=lambda wildcards, output: json.dumps(split_arguments(output.splits),
                                                        sort_keys=True),
        resources:
            mem_mb=dmlplan.prepare_resources(CFG, _step)["mem_mb"],
            runtime=dmlplan.prepare_resources(CFG, _step)["runtime"],
        log:
            f"logs/prepare/{_step.log}.log",
        localrule: True
        conda:
            "../envs/dmlbench.yaml"
        shell:
            # the mirror and offline options come from DMLBENCH_MIRROR / DMLBENCH_OFFLINE, the
            # data sets given by a file from DMLBENCH_DATASET_FILES (common.smk)
            "python -m dmlbench.cli prepare {params.names:q} --splits {params.splits:q} "
            "--cache {params.cache:q} > {log:q} 2>&1"
