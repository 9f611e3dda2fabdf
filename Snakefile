# dmlbench workflow: data -> splits -> one job per (data set, method, batch of splits) and per
# (study, data set) -> MLflow (one writer) -> report. Rules stay thin: each calls the `dmlbench`
# command (src/dmlbench/cli.py); the logic, and every read of a config key, lives in src/dmlbench.
from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

from dmlbench import config as dmlconfig

min_version("9.0")

# The default benchmark, unless `--configfile` names another (they are not merged).
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# The schema (workflow/schemas/config.schema.yaml) with a one-line error naming the key, and its
# defaults filled in as snakemake.utils.validate did; common.smk then runs dmlbench's checks
# (dmlbench.run.plan.check).
try:
    dmlconfig.validate_schema(config, fill_defaults=True)
except dmlconfig.ConfigError as err:
    raise WorkflowError(str(err)) from None


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/studies.smk"
include: "workflow/rules/track.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/publish.smk"


# Before the first job (not in dry runs, nor in the jobs cluster nodes run): every data set must
# be embedded, cached, in the mirror or reachable (a 3 s probe of its public home), else one
# message lists what is missing and how to provide it, and no job starts.
onstart:
    _missing = availability.missing(dmlconfig.dataset_names(CFG), CACHE, MIRROR, OFFLINE,
                                    dmlconfig.trust_unpinned(CFG))
    if _missing:
        raise WorkflowError(availability.message(_missing, CACHE))


# tracking.json is never committed: a fresh clone holding the published report of this benchmark
# (reports/<benchmark>/) still runs the jobs, and the report and records are written anew.
# The record files and study documents are targets too: Snakemake runs a job whose output is
# missing only when a job that needs it runs, or when the output is a target, so without them
# a deleted record of a finished workflow would leave "Nothing to be done" (tracking.json and
# the report being newer than the records that remain).
rule all:
    default_target: True
    input:
        f"results/{BENCH}/tracking.json",
        f"reports/{BENCH}/index.html",
        f"reports/{BENCH}/records/manifest.json",
        [dmlplan.record_path(CFG, job) for job in JOBS],
        [dmlstudies.path(CFG, kind, label) for kind, label in STUDY_JOBS],
