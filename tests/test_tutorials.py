"""The tutorials run as written: docs/your-data.md and docs/your-method.md.

Their fenced blocks are read as the pages show them:
- a block whose first line is ``# <path>`` is that file of the repository, byte for byte
  (config/tutorial/...: the plug-in and the config);
- the other ``python`` blocks run in order, in one namespace, in a copy of the project (the data
  page's block writes the CSV file, which must come out as the committed one);
- the other ``yaml`` blocks are config fragments that must pass the schema;
- the ``bash`` blocks are the commands the slow test runs (check-config, snakemake), after
  writing the files from the blocks; then the plug-in methods must be in MLflow and the report,
  and an edit of the plug-in file must rerun its jobs only;
- each row of your-method.md's tables of refusals is what `dmlbench check-config` prints (the
  second table's under a `tuning` block).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, copy_project, snakemake

from dmlbench import cli, config, records

DATA_PAGE, METHOD_PAGE = REPO / "docs" / "your-data.md", REPO / "docs" / "your-method.md"
PAGES = (DATA_PAGE, METHOD_PAGE)  # in this order: the data page writes the CSV file
TUTORIAL = "config/tutorial/your-benchmark.yaml"
TUNED = "config/tutorial/your-tuned-benchmark.yaml"


def blocks(page: Path) -> list[tuple[str, str]]:
    """(language, text) of every fenced block of the page, in order."""
    out, language, lines = [], None, []
    for line in page.read_text().splitlines():
        if language is None and line.startswith("```"):
            language, lines = line[3:].strip().split(" ")[0], []
        elif language is not None and line.startswith("```"):
            out.append((language, "\n".join(lines) + "\n"))
            language = None
        elif language is not None:
            lines.append(line)
    return out


def file_path(text: str) -> str | None:
    """The repository path a block stands for (its first line ``# <path>``), else None."""
    match = re.fullmatch(r"# (config/tutorial/\S+)", text.splitlines()[0])
    return match.group(1) if match else None


def file_blocks():
    return [(page, file_path(text), text) for page in PAGES for language, text in blocks(page)
            if file_path(text)]


def python_blocks(page: Path) -> list[str]:
    return [text for language, text in blocks(page) if language == "python"
            and not file_path(text)]


def commands(page: Path) -> list[list[str]]:
    return [shlex.split(line, comments=True) for language, text in blocks(page)
            if language == "bash" for line in text.splitlines() if line.strip()]


@contextlib.contextmanager
def working_directory(path: Path):
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def tutorial_copy(dest: Path) -> Path:
    """config/tutorial of the repository in `dest`, without the CSV file the data page writes."""
    shutil.copytree(REPO / "config" / "tutorial", dest / "config" / "tutorial")
    (dest / "config" / "tutorial" / "data" / "saheart.csv").unlink()
    return dest


def test_the_pages_have_what_the_tutorial_needs():
    paths = {path for _, path, _ in file_blocks()}
    assert {"config/tutorial/plugins/whiten.py", TUTORIAL, TUNED} <= paths
    assert ["dmlbench", "check-config", TUNED] in commands(METHOD_PAGE)
    assert python_blocks(DATA_PAGE) and len(python_blocks(METHOD_PAGE)) >= 2
    for page in PAGES:
        assert ["snakemake", "--cores", "2", "--configfile", TUTORIAL] in commands(page)
        assert ["dmlbench", "check-config", TUTORIAL] in commands(page)


@pytest.mark.parametrize("page, path, text", file_blocks(), ids=lambda v: str(v)[-40:])
def test_each_file_shown_is_the_repositorys(page, path, text):
    assert (REPO / path).read_text() == text, f"{page.name}: the block of {path} differs"


def test_the_python_blocks_run_and_write_the_committed_csv(tmp_path, monkeypatch):
    project = tutorial_copy(tmp_path)
    namespace: dict = {}
    monkeypatch.setattr(sys, "path", list(sys.path))  # the page puts the plug-ins' folder on it
    monkeypatch.delitem(sys.modules, "whiten", raising=False)
    with working_directory(project), contextlib.redirect_stdout(io.StringIO()):
        for page in PAGES:
            for text in python_blocks(page):
                exec(compile(text, str(page), "exec"), namespace)  # noqa: S102  (the docs' code)
    written = project / "config" / "tutorial" / "data" / "saheart.csv"
    assert written.read_bytes() == (REPO / "config/tutorial/data/saheart.csv").read_bytes()
    assert namespace["search"].best_score_ > 0.9  # the GridSearchCV example ran


def test_the_yaml_fragments_are_valid_config():
    fragments = [text for page in PAGES for language, text in blocks(page)
                 if language == "yaml" and not file_path(text)]
    assert fragments
    for text in fragments:
        config.validate_schema({"benchmark": "t", "methods": {"euclidean": None},
                                **yaml.safe_load(text)})


def refusal_rows() -> list[tuple[str, str, str, bool]]:
    """(method entry, key, message, tuned) of each row of your-method.md's tables of refusals;
    tuned: a row of the table under `tuning:` (its config has a `tuning` block)."""
    out, tuned = [], False
    for line in METHOD_PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("problem"):
            tuned = "`tuning:`" in cells[0]
        if len(cells) == 3 and cells[1].startswith("`{"):
            key, message = re.fullmatch(r"`([^`]+)`: (``? ?)(.*?)( ?``?)", cells[2]).group(1, 3)
            out.append((cells[1].strip("`"), key, message, tuned))
    return out


def test_both_tables_of_refusals_are_read():
    rows = refusal_rows()
    assert sum(tuned for *_, tuned in rows) >= 3 and sum(not t for *_, t in rows) >= 8


@pytest.mark.parametrize("entry, key, message, tuned", refusal_rows(),
                         ids=lambda v: str(v)[:40])
def test_each_refusal_shown_is_what_check_config_prints(tmp_path, entry, key, message, tuned):
    project = tutorial_copy(tmp_path)
    path = project / "config" / "tutorial" / "bad.yaml"
    path.write_text(f"benchmark: t\ndatasets: {{iris: }}\nmethods:\n  mine: {entry}\n"
                    + "tuning: {budget: 2}\n" * tuned)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cli.main(["check-config", str(path)]) == 2
    pattern = re.escape(f"config error at '{key}': {message}")
    pattern = pattern.replace(re.escape("<folder>"), ".+").replace(re.escape("..."), ".+")
    assert re.fullmatch(f"dmlbench check-config: error: {pattern}\n", err.getvalue()), \
        err.getvalue()


@pytest.mark.slow
def test_the_tutorial_runs_end_to_end(tmp_path):
    """A copy of the workflow whose tutorial files are written from the pages' blocks, then the
    pages' commands; the plug-in methods and the CSV data set end in MLflow and the report."""
    import mlflow

    project = copy_project(tmp_path)
    for folder in ("plugins", "data"):
        shutil.rmtree(project / "config" / "tutorial" / folder)
    (project / "config" / "tutorial" / "your-benchmark.yaml").unlink()
    for _, path, text in file_blocks():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text)
    with working_directory(project), contextlib.redirect_stdout(io.StringIO()):
        exec(compile(python_blocks(DATA_PAGE)[0], str(DATA_PAGE), "exec"), {})  # noqa: S102
    uri = f"sqlite:///{project / 'mlruns.db'}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    seen = set()
    for argv in [c for page in PAGES for c in commands(page)]:
        if tuple(argv) in seen:
            continue
        seen.add(tuple(argv))
        if argv[0] == "dmlbench":
            with working_directory(project), contextlib.redirect_stdout(io.StringIO()):
                assert cli.main(argv[1:]) == 0
        else:
            result = snakemake(project, *argv[1:], env=env)
            assert result.returncode == 0, result.stderr[-3000:]

    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(experiment_names=["your-benchmark"],
                              filter_string="tags.`dmlbench.kind` = 'parent'")
    found = {(r["tags.dmlbench.dataset"], r["tags.dmlbench.method"]) for _, r in runs.iterrows()}
    assert found == {(d, m) for d in ("saheart", "iris")
                     for m in ("euclidean", "lmnn", "whiten", "lsml")}
    plugin = dict(zip(runs["tags.dmlbench.method"], runs["tags.dmlbench.plugin"]))
    sha = hashlib.sha256((project / "config/tutorial/plugins/whiten.py").read_bytes()).hexdigest()
    assert plugin["whiten"] == f"whiten.py:Whiten sha256:{sha}"
    assert plugin["lsml"].startswith("metric_learn:LSML_Supervised metric-learn ")
    page = (project / "reports" / "your-benchmark" / "index.html").read_text()
    assert all(word in page for word in ("whiten", "lsml", "saheart", "lmnn", "euclidean"))

    # the tuned config: the plug-in tuned over the space it gives, by the same rule
    for name in ("saheart", "iris"):
        path = project / f"results/your-tuned-benchmark/runs/{name}/whiten/part0.json"
        tuned = records.read(path)
        assert [r["tuning"]["space"] for r in tuned] == [[["shrinkage", [0.1, 0.0, 0.5, 1.0]]]] * 4
        assert all(r["tuning"]["inner_scores"] for r in tuned)

    # an edited plug-in file reruns its own jobs, on both data sets, and no other
    with open(project / "config/tutorial/plugins/whiten.py", "a") as fh:
        fh.write("# edited\n")
    dry = snakemake(project, "-n", "--configfile", TUTORIAL, env=env)
    assert dry.returncode == 0, dry.stderr[-3000:]
    outputs = [line for line in (dry.stdout + dry.stderr).splitlines()
               if line.strip().startswith("output: results/")]  # a batch step's: several
    rerun = set(re.findall(r"results/your-benchmark/runs/(\w+)/(\w+)/part0\.json",
                           "\n".join(outputs)))
    assert rerun == {("saheart", "whiten"), ("iris", "whiten")}
