"""Modules imported when first used (dmlbench.deferred): the job processes of the workflow
(`dmlbench run`, `dmlbench prepare`) load neither pandas nor pyarrow, nor mlflow, matplotlib
or cvxpy; code that does use a deferred module gets the real one. Each check runs in a fresh
interpreter (the test process has pandas loaded already)."""

import json
import subprocess
import sys

from test_job import _batch

HEAVY = ("pandas", "pyarrow", "mlflow", "matplotlib", "seaborn", "cvxpy", "sqlalchemy")


def _fresh(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _loaded_after(verb_args: list[str]) -> set[str]:
    """Top-level modules loaded (for real) once `dmlbench VERB ...` is done."""
    out = _fresh(f"""
import json, sys
from dmlbench import cli, deferred
assert cli.main({verb_args!r}) == 0
print(json.dumps(sorted({{name.split(".")[0] for name, module in list(sys.modules.items())
                          if not isinstance(module, deferred.Deferred)}})))
""")
    return set(json.loads(out.splitlines()[-1]))


def test_a_run_step_loads_no_dataframe_tracking_or_plotting_library(tmp_path):
    batch = _batch(tmp_path, method="nca")
    loaded = _loaded_after(["run", "--batch", json.dumps(batch)])
    assert "sklearn" in loaded and not loaded & set(HEAVY), loaded & set(HEAVY)
    assert all((tmp_path / "runs" / label / "part0.json").exists() for label in ("iris", "wine"))


def test_a_prepare_step_loads_no_dataframe_tracking_or_plotting_library(tmp_path):
    splits = {str(tmp_path / "splits.npz"): {"protocol": {"kind": "holdout", "repeats": 2}}}
    loaded = _loaded_after(["prepare", "wine", "--cache", str(tmp_path), "--offline",
                            "--splits", json.dumps(splits)])
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_scikit_learn_holds_a_stand_in_and_pandas_is_not_in_sys_modules():
    """scikit-learn asks `sys.modules` whether pandas is loaded before each DataFrame check:
    after the CLI's imports it is not there; scikit-learn's own reference is the stand-in."""
    out = _fresh("""
import sys
from dmlbench import cli, deferred
from sklearn.utils import fixes
print("pandas" in sys.modules, "pyarrow" in sys.modules, isinstance(fixes.pd, deferred.Deferred),
      fixes.PYARROW_VERSION_BELOW_17)
""")
    assert out.split() == ["False", "False", "True", "False"]


def test_a_stand_in_imports_the_module_when_used_and_then_forwards_to_it():
    out = _fresh("""
import sys
from dmlbench import deferred
with deferred.deferring("pandas", "os"):  # os is imported already: no stand-in
    import os
    import pandas as pd
print(type(pd).__name__, type(os).__name__, "pandas.core.frame" in sys.modules)
frame = pd.DataFrame({"a": [1, 2]})      # the first use imports pandas
import pandas
print(type(pandas).__name__, pandas is sys.modules["pandas"], isinstance(frame, pandas.DataFrame),
      pd.Series is pandas.Series, pd.__version__ == pandas.__version__)
from pandas.api.types import is_numeric_dtype
print(is_numeric_dtype(frame["a"]))
""")
    assert out.split() == ["Deferred", "module", "False", "module", "True", "True", "True",
                           "True", "True"]


def test_an_unused_stand_in_leaves_and_a_later_import_is_the_real_module():
    out = _fresh("""
import sys
from dmlbench import deferred
with deferred.deferring("pandas"):
    import pandas as early
print("pandas" in sys.modules)
import pandas
print(type(pandas).__name__, early.DataFrame is pandas.DataFrame)
""")
    assert out.split() == ["False", "module", "True"]
