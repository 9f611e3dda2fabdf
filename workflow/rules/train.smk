# One step per batch of jobs (dmlbench.run.plan.batches: one method, or the methods sharing a
# `job_group`, on `datasets_per_job` of their data sets, default all, for one batch of splits),
# in one process: for each job and each of its splits, preprocess (fit on the training part),
# fit, evaluate; one record file per job. The record files are `update` outputs: Snakemake
# keeps them when it reruns the step (a job of it changed, or a record file is missing), and
# `dmlbench run --batch` skips every job whose record file is current, so only the changed jobs
# are computed again. A job that fails does not stop the others; the step fails once all had
# their turn, and the next run takes back the records the failed step wrote (`run.job.run_batch`).

for _batch in BATCHES:

    rule:
        name:
            f"run_{_batch.name}"
        input:
            batch_inputs(_batch),
        output:
            [update(dmlplan.record_path(CFG, job)) for job in _batch.jobs],
        params:
            batch=batch_argument(_batch),
        threads: dmlplan.batch_resources(CFG, _batch)["threads"]
        resources:
            mem_mb=dmlplan.batch_resources(CFG, _batch)["mem_mb"],
            runtime=dmlplan.batch_resources(CFG, _batch)["runtime"],
        log:
            f"logs/{BENCH}/run/{_batch.name}.log",
        conda:
            "../envs/dmlbench.yaml"
        # the batch on standard input (a here-document), not as an argument: the specs of a large
        # batch outgrow the kernel's 128 KiB limit on one argument ("Argument list too long")
        shell:
            "python -m dmlbench.cli run --batch - --threads {threads} 2> {log:q}"
            " <<'DMLBENCH_BATCH'\n{params.batch}\nDMLBENCH_BATCH"
