# dmlbench workflow: data -> splits -> one job per (data set, method, split) -> MLflow -> report.
# Rules stay thin: each calls the `dmlbench` command; the logic lives in src/dmlbench.
import json
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version, validate

from dmlbench import config as dmlconfig
from dmlbench import tracking

min_version("9.0")

# The default benchmark, unless `--configfile` names another (they are not merged).
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")
try:
    CFG = dmlconfig.check(config)
except dmlconfig.ConfigError as err:
    raise WorkflowError(str(err)) from None

BENCH = CFG["benchmark"]
CACHE = CFG["data"]["cache"]
JOBS = dmlconfig.jobs(CFG)
# the interpreter running Snakemake has dmlbench installed; let job shells find its command
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"


wildcard_constraints:
    name=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    method=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    part=r"\d+",


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/track.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        f"reports/{BENCH}/index.html",
