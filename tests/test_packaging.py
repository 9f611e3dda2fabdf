"""The project installs what it needs: conda env = pyproject pins; CI runs the README's command."""

import tomllib

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
