# dmlbench workflow: data -> splits -> one job per (data set, method, batch of splits) and per
# (study, data set) -> MLflow (one writer) -> report. Rules stay thin: each calls the `dmlbench`
# command (src/dmlbench/cli.py); the logic, and every read of a config key, lives in src/dmlbench.
from snakemake.utils import min_version, validate

min_version("9.0")

# The default benchmark, unless `--configfile` names another (they are not merged).
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/studies.smk"
include: "workflow/rules/track.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/publish.smk"


rule all:
    default_target: True
    input:
        f"reports/{BENCH}/index.html",
        f"reports/{BENCH}/records/manifest.json",
