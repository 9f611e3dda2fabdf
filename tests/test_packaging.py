"""The project installs what it needs: conda env = pyproject pins; CI runs the README's command."""

import subprocess
import sys
import tomllib

import pytest
import yaml
from conftest import REPO


def test_conda_env_has_the_pyproject_pins():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    env = yaml.safe_load((REPO / "workflow/envs/dmlbench.yaml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip == deps


def test_scikit_learn_stays_below_1_8_while_metric_learn_0_7_is_used():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "metric-learn==0.7.0" in deps
    assert any(d.startswith("scikit-learn") and "<1.8" in d for d in deps)


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci/run").read_text()
    assert "make test" in ci and "make test" in readme and "make run" in readme


def test_the_slurm_profile_uses_the_pinned_executor_plugin():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(d.startswith("snakemake-executor-plugin-slurm>=") for d in deps)
    profile = yaml.safe_load((REPO / "workflow/profiles/slurm/config.yaml").read_text())
    assert profile["executor"] == "slurm" and profile["rerun-incomplete"]
    assert (REPO / "profiles").resolve() == (REPO / "workflow/profiles").resolve()


def test_ci_installs_the_cluster_tests_packages_before_the_tests():
    ci = (REPO / ".ci/run").read_text().splitlines()
    steps = [line.split()[1] for line in ci if line.startswith("make ")]
    assert steps == ["system-packages", "test"]


def test_pytest_xdist_runs_a_group_in_one_worker(tmp_path):
    """`make test` (`-n 2 --dist loadgroup`) relies on `xdist_group` (tests/conftest.py: the
    cluster tests one at a time, the smoke run built once). pytest-xdist 3.8 marks a group in
    the node ID, which pytest 9.2 no longer lets it change: every test then runs wherever, and
    nothing says so (pytest-xdist issue 1386; pyproject.toml keeps pytest below 9.2)."""
    (tmp_path / "test_grouped.py").write_text(
        "import os\nimport pytest\n\n"
        "@pytest.mark.xdist_group('one')\n"
        "@pytest.mark.parametrize('i', range(6))\n"
        "def test_pid(i):\n"
        "    with open('pids.txt', 'a') as fh:\n"
        "        fh.write(f'{os.getpid()}\\n')\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-n", "2", "--dist", "loadgroup", "test_grouped.py"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:]
    pids = (tmp_path / "pids.txt").read_text().split()
    assert len(pids) == 6 and len(set(pids)) == 1, \
        f"the group ran in {len(set(pids))} workers (pytest {pytest.__version__})"
