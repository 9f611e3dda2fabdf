"""The `dmlbench` command as a user meets it: help for every option of every verb, `--version`,
`dmlbench run CONFIG.yaml` saying how a config runs (through Snakemake), and `dmlbench methods`
naming each method's class as `from dmlbench import` takes it."""

import argparse
import contextlib
import io
import shlex
import tomllib

from conftest import REPO

from dmlbench import cli
from dmlbench.methods import REGISTRY


def _actions(parser: argparse.ArgumentParser, verb: str = ""):
    """(verb, action) of every argument of the parser and of each verb's parser."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, name)
        else:
            yield verb, action


def _run(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def test_every_option_of_every_verb_has_help():
    actions = list(_actions(cli.parser()))
    verbs = {verb for verb, _ in actions}
    assert {"", "datasets", "methods", "check-config", "dataset", "prepare", "split", "run",
            "study", "ingest", "publish", "report"} <= verbs
    missing = [f"{verb or 'dmlbench'} {'/'.join(a.option_strings) or a.dest}"
               for verb, a in actions if not (a.help or "").strip()]
    assert not missing, f"arguments without help: {missing}"


def test_version_is_the_packages():
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    code, out, _ = _run(["--version"])
    assert code == 0 and out == f"dmlbench {version}\n"


def test_run_with_a_config_prints_the_snakemake_command_and_fails(monkeypatch, tmp_path):
    """From the folder of the Snakefile: the command as it is; from elsewhere, with a `cd`
    to it. The printed command parses with Snakemake's parser and names the config file."""
    from snakemake.cli import get_argument_parser

    monkeypatch.chdir(REPO)
    code, out, err = _run(["run", "config/smoke.yaml"])
    assert code == 2 and out == ""
    assert err.startswith("dmlbench run: error: config/smoke.yaml is a benchmark config: "
                          "configs run through Snakemake")
    command = next(line.strip() for line in err.splitlines() if "snakemake --cores" in line)
    assert command == "snakemake --cores 2 --configfile config/smoke.yaml"
    parsed = get_argument_parser().parse_args(shlex.split(command)[1:])
    assert [str(p) for p in parsed.configfile] == ["config/smoke.yaml"]

    monkeypatch.chdir(tmp_path)
    code, _, err = _run(["run", str(REPO / "config" / "smoke.yaml")])
    assert code == 2
    assert f"cd {shlex.quote(str(REPO))} && snakemake --cores 2 --configfile " \
           "config/smoke.yaml" in err
    # not a config, a missing file, a config with a job: each one line naming the problem
    (tmp_path / "spec.json").write_text('{"a": 1}')
    for argv, message in [(["run", "spec.json"], "spec.json is not a benchmark config"),
                          (["run", "nope.yaml"], "config file nope.yaml does not exist"),
                          (["run", str(REPO / "config" / "smoke.yaml"), "--batch", "[]"],
                           "not both")]:
        code, _, err = _run(argv)
        assert code == 2 and message in err and err.count("\n") == 1, err


def test_the_methods_table_names_each_class_as_the_library_imports_it():
    import dmlbench

    code, out, _ = _run(["methods"])
    assert code == 0
    header, *lines = out.splitlines()
    start, end = header.index("from dmlbench import"), header.index("family")
    shown = {line.split()[0]: line[start:end].strip().split(", ") for line in lines
             if line[:1].strip() and line[start:end].strip()}  # wrapped lines start blank
    assert set(REGISTRY) <= set(shown)
    for name, cls in REGISTRY.items():
        assert shown[name] == list(dict.fromkeys([cls.__name__, name.upper()]))
        assert all(getattr(dmlbench, n) is cls for n in shown[name])
    assert shown["klhp"] == ["KLocalHyperplane", "KLHP"] and shown["itml"] == ["ITML"]
