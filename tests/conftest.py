import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def copy_project(dest: Path) -> Path:
    """The workflow's files (not results, caches or MLflow stores) copied to `dest`."""
    for item in ("Snakefile", "workflow", "config"):
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / item)
    # `profiles` links to workflow/profiles: Snakemake looks for profiles/default beside the
    # Snakefile, so the default profile applies to every run
    (dest / "profiles").symlink_to("workflow/profiles")
    return dest


def snakemake(workdir, *args, env=None, timeout=900):
    return subprocess.run([SNAKEMAKE, *args], cwd=workdir, capture_output=True, text=True,
                          env=env, timeout=timeout)


@pytest.fixture(autouse=True)
def download_lock(tmp_path, monkeypatch):
    """Each test reads its own download lock (absent unless the test writes one), not the
    committed one (the environment variable reaches the workflow's subprocesses too)."""
    path = tmp_path / "downloads.lock.json"
    monkeypatch.setenv("DMLBENCH_DOWNLOAD_LOCK", str(path))
    return path


@pytest.fixture
def mlflow_uri(tmp_path, monkeypatch):
    """A fresh SQLite MLflow store for one test."""
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """`snakemake --cores 2` on config/smoke.yaml in a temporary copy of the workflow, with its
    own MLflow store; shared by the workflow, browser, resume and shared-tracking tests, which
    must not change it (copy it first)."""
    work = copy_project(tmp_path_factory.mktemp("wf"))
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlruns.db'}"}
    result = snakemake(work, "--cores", "2", "--configfile", "config/smoke.yaml", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return work, env


#: the xdist group of the cluster tests, which start and stop the machine's SLURM and PostgreSQL
#: services, and of the tests of `smoke_run` (the PostgreSQL tracking tests are both)
SMOKE_AND_SERVICES = "smoke-and-services"


def xdist_group(item: pytest.Item) -> str | None:
    """The pytest-xdist group of a test: tests that share a costly fixture run in one worker,
    which builds it once (a session or module fixture is built once per worker that needs it:
    the smoke run takes a minute, a module's workflow run half of one)."""
    if item.get_closest_marker("cluster") or "smoke_run" in item.fixturenames:
        return SMOKE_AND_SERVICES
    module_scoped = [name for name, defs in item._fixtureinfo.name2fixturedefs.items()
                     if any(d.scope == "module" for d in defs)]
    return f"module:{item.path.name}" if module_scoped else None


def pytest_configure(config):
    """pytest-xdist hands out the work (a group, or a test outside any group) in collection
    order, not largest group first: `pytest_collection_modifyitems` orders it."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def _hand_out_order(item: pytest.Item) -> int:
    """The smoke group first (nine minutes of work in one worker: started last, it would end
    last), then the other groups, the slow tests outside a group, the rest (the short tests
    last fill the time until the other worker ends)."""
    group = xdist_group(item)
    if group == SMOKE_AND_SERVICES:
        return 0
    if group:
        return 1
    return 2 if item.get_closest_marker("slow") else 3


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (`make test`: `-n 2 --dist loadgroup`) each group of `xdist_group`
    runs in one worker, one test at a time: the cluster tests, which share the machine's
    services, and the tests of the smoke run; the tests sharing a module-scoped fixture. The
    work is handed out in the order of `_hand_out_order`."""
    if not hasattr(config, "workerinput"):
        return
    for item in items:
        group = xdist_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=_hand_out_order)
