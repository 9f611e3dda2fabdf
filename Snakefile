# dmlbench workflow: data -> splits -> one job per (data set, method, split) -> MLflow -> report.
# Rules stay thin: each calls the `dmlbench` command; the logic lives in src/dmlbench.
import json
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version, validate

from dmlbench import config as dmlconfig
from dmlbench.run import resources as dmlresources
from dmlbench.records import tracking

min_version("9.0")

# The default benchmark, unless `--configfile` names another (they are not merged).
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


try:
    CFG = dmlconfig.check(config)
except dmlconfig.ConfigError as err:
    raise WorkflowError(str(err)) from None

BENCH = CFG["benchmark"]
CACHE = CFG["data"]["cache"]
JOBS = dmlconfig.jobs(CFG)
# Job shells run `python -m dmlbench.cli` with this workflow's src/ first on PYTHONPATH: the
# interpreter running Snakemake by default, the conda env's with --use-conda (envs/dmlbench.yaml).
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(Path(workflow.basedir) / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
)
DMLBENCH = "python -m dmlbench.cli"


wildcard_constraints:
    name=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    method=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    part=r"\d+",


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/mvce_validation.smk"
include: "workflow/rules/track.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        f"reports/{BENCH}/index.html",
