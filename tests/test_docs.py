"""The documentation holds: every relative link and image of README.md and docs/**/*.md resolves
(to a file of the repository, and a `#anchor` to a heading of the target page, GitHub's slugs),
and every command shown in a ```bash / ```sh / ```console block parses:

- `dmlbench VERB ...`: parsed by the CLI's own argparse parser (`dmlbench.cli.parser`), without
  running it; with placeholders (`<name>`, `NAME`) only the verb is checked;
- `snakemake ...`: parsed by Snakemake's argument parser, every `--configfile` of the repository
  passes `dmlbench check-config`, and (slow) a dry run `snakemake -n` in a copy of the workflow,
  with a mirror of empty files standing in for the downloads (the pre-check only asks that the
  mirror has them);
- `make TARGET`: the target exists in the Makefile (never run: some targets install);
- `python FILE.py ...` / `python -m MODULE ...`: the file or module exists in the repository and
  declares every option the command uses; (slow) `--help` runs;
- anything else is skipped by its command word (SKIPPED) or fails, so a new kind of command is
  checked on purpose.

A placeholder config file written `<mirror.yaml>` stands for the user's mirror config
(docs/data.md, "Mirrors and offline use"). README.md must stay a short user guide: at most 300
lines and no commit hash; docs/ has none in its prose either (commands may name a revision).
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from conftest import REPO, copy_project, snakemake

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
#: command words not checked: shell built-ins and external tools whose commands are examples
SKIPPED = {".", "source", "cd", "export", "kill", "mlflow", "git"}
#: snakemake flags whose command is parsed but not dry-run: --use-conda needs conda, --report
#: needs a finished run, --unlock and --help do not build the DAG
NO_DRY_RUN = {"--use-conda", "--report", "--unlock", "--help", "-h"}
#: python modules of the repository (others, e.g. http.server, are skipped)
REPO_MODULES = {"benchmarks", "dmlbench"}
SEPARATORS = {"&&", "||", ";", "|", "&"}
HEX = re.compile(r"\b[0-9a-f]{7,40}\b")


@dataclass(frozen=True)
class Command:
    page: Path
    line: int
    text: str
    argv: tuple[str, ...]

    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}: {self.text}"


# --- reading the pages -------------------------------------------------------------------------

def _fenced(lines):
    """(line number, line, language or None outside a fence) for every line of a page."""
    language = None
    fence = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence, language = stripped[:3], stripped[3:].strip().split(" ")[0].lower()
            yield number, line, "fence"
            continue
        if fence is not None and stripped.startswith(fence):
            fence, language = None, None
            yield number, line, "fence"
            continue
        yield number, line, language


def prose_lines(page: Path):
    """(line number, text) outside fenced blocks, inline code spans removed."""
    for number, line, language in _fenced(page.read_text().splitlines()):
        if language is None:
            yield number, re.sub(r"`[^`]*`", "", line)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: link text kept, lower case, punctuation dropped, spaces
    to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line, language in _fenced(page.read_text().splitlines()):
        match = language is None and re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        found.update(re.findall(r"""<a\s+(?:name|id)=["']([^"']+)["']""", line))
    return frozenset(found)


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.M)
HTML_LINK = re.compile(r"""(?:href|src)=["']([^"']+)["']""")


def paragraphs(page: Path):
    """(first line number, text) of each run of non-blank prose lines, so that a link wrapped
    over two lines is found too."""
    block: list[tuple[int, str]] = []
    for number, line in [*prose_lines(page), (0, "")]:
        if line.strip() and not line.lstrip().startswith("#"):
            block.append((number, line))
            continue
        if block:
            yield block[0][0], "\n".join(text for _, text in block)
        block = [(number, line)] if line.strip() else []


def links():
    for page in PAGES:
        for first, text in paragraphs(page):
            for pattern in (LINK, REFERENCE, HTML_LINK):
                for match in pattern.finditer(text):
                    target = match.group(1)
                    number = first + text[:match.start()].count("\n")
                    if not re.match(r"[a-z][a-z0-9+.-]*:", target):   # http:, https:, mailto:
                        yield pytest.param(page, number, target,
                                           id=f"{page.relative_to(REPO)}:{number}:{target}")


def commands():
    """Every command of the pages' shell blocks: continued lines joined, comments stripped,
    split at `&&`, `;`, `|`, `&`."""
    found = []
    for page in PAGES:
        pending, start = "", 0
        for number, line, language in _fenced(page.read_text().splitlines()):
            if language not in SHELL_LANGUAGES:
                continue
            if language == "console":
                if not line.startswith("$ ") and not pending:
                    continue
                line = line[2:] if line.startswith("$ ") else line
            if not pending:
                start = number
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            text = (pending + line).strip()
            pending = ""
            try:
                tokens = shlex.split(text, comments=True)
            except ValueError as err:
                found.append(Command(page, start, text, ("<unparsable>", str(err))))
                continue
            part: list[str] = []
            for token in [*tokens, ";"]:
                if token in SEPARATORS:
                    while part and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", part[0]):
                        part.pop(0)                   # VAR=value before the command
                    if part:
                        shown = re.sub(r"\s+#.*$", "", text)
                        found.append(Command(page, start, shown, tuple(part)))
                    part = []
                else:
                    part.append(token)
    return found


COMMANDS = commands()


def _ids(items):
    return [f"{c.page.relative_to(REPO)}:{c.line}" for c in items]


def is_placeholder(token: str) -> bool:
    return ("<" in token and ">" in token) or "..." in token or bool(
        re.fullmatch(r"[A-Z][A-Z0-9_]*", token))


def word(command: Command) -> str:
    return Path(command.argv[0]).name or command.argv[0]    # ".venv/bin/dmlbench" -> dmlbench


# --- links and the README's shape --------------------------------------------------------------

@pytest.mark.parametrize("page, line, target", list(links()))
def test_every_relative_link_resolves(page, line, target):
    path, _, anchor = target.partition("#")
    where = f"{page.relative_to(REPO)}:{line}: link '{target}'"
    resolved = (page.parent / path).resolve() if path else page
    assert resolved.is_relative_to(REPO), f"{where} points outside the repository"
    assert resolved.exists(), f"{where}: {resolved.relative_to(REPO)} does not exist"
    if anchor and resolved.suffix == ".md":
        assert anchor in anchors(resolved), (
            f"{where}: no heading '#{anchor}' in {resolved.relative_to(REPO)} "
            f"(it has: {', '.join(sorted(anchors(resolved)))})")


def test_the_readme_is_a_short_user_guide():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move details to docs/"
    hashes = [(n, h) for n, line in enumerate(lines, 1) for h in HEX.findall(line)
              if re.search(r"\d", h) and re.search(r"[a-f]", h)]
    assert not hashes, "README.md names commits (provenance belongs in reports/): " + ", ".join(
        f"line {n}: {h}" for n, h in hashes)


def test_no_commit_hash_in_the_prose_of_docs():
    hashes = [f"{page.relative_to(REPO)}:{n}: {h}" for page in PAGES[1:]
              for n, line in prose_lines(page) for h in HEX.findall(line)
              if re.search(r"\d", h) and re.search(r"[a-f]", h)]
    assert not hashes, "commit hashes in the docs' prose (point to reports/ instead):\n" + \
        "\n".join(hashes)


def test_the_checker_finds_links_commands_and_anchors():
    """The parametrised tests above would pass vacuously on a parser that found nothing."""
    assert len(list(links())) > 50
    words = {word(c) for c in COMMANDS}
    assert {"make", "snakemake", "dmlbench", "python"} <= words
    assert slug("5. How to add ...") == "5-how-to-add-"
    assert slug("Shared tracking: exactly one run per key") == \
        "shared-tracking-exactly-one-run-per-key"
    assert slug("Results: Tables 2(a) and 3(a)") == "results-tables-2a-and-3a"
    assert slug("The `dmlbench` command") == "the-dmlbench-command"


# --- commands: fast checks ---------------------------------------------------------------------

def test_every_command_word_is_checked_or_skipped_on_purpose():
    known = {"dmlbench", "snakemake", "make", "python", "python3"} | SKIPPED
    unknown = [c.where() for c in COMMANDS if word(c) not in known]
    assert not unknown, ("commands nobody checks (add a check, or the word to SKIPPED):\n"
                         + "\n".join(unknown))


DMLBENCH = [c for c in COMMANDS if word(c) == "dmlbench"]


@pytest.mark.parametrize("command", DMLBENCH, ids=_ids(DMLBENCH))
def test_dmlbench_commands_parse(command):
    from dmlbench import cli

    args = list(command.argv[1:])
    if any(map(is_placeholder, args)):
        args = args[:1] + ["--help"]                  # the verb must exist
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        try:
            parsed = cli.parser().parse_args(args)
        except SystemExit as exit_:
            assert exit_.code == 0, f"{command.where()}\n{stderr.getvalue()}"
            return
    if parsed.command == "check-config" and (REPO / parsed.config).is_file():
        _check_config(REPO / parsed.config, command)


@cache
def _config_error(path: Path) -> str | None:
    from dmlbench import config

    try:
        config.load(path)
    except (ValueError, KeyError, FileNotFoundError) as err:
        return str(err)
    return None


def _check_config(path: Path, command: Command) -> None:
    error = _config_error(path)
    assert error is None, f"{command.where()}\n{path.relative_to(REPO)}: {error}"


SNAKEMAKE_COMMANDS = [c for c in COMMANDS if word(c) == "snakemake"]


def _snakemake_args(command: Command, mirror_config: str) -> list[str]:
    """The command's arguments, a placeholder config file (`<mirror.yaml>`) replaced by ours."""
    return [mirror_config if is_placeholder(a) and a.strip("<>").endswith((".yaml", ".yml"))
            else a for a in command.argv[1:]]


@pytest.mark.parametrize("command", SNAKEMAKE_COMMANDS, ids=_ids(SNAKEMAKE_COMMANDS))
def test_snakemake_commands_parse_and_their_configs_check(command):
    from snakemake.cli import get_argument_parser

    args = _snakemake_args(command, "mirror.yaml")
    placeholders = [a for a in args if is_placeholder(a)]
    assert not placeholders, f"{command.where()}: placeholders {placeholders} not handled"
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            parsed = get_argument_parser().parse_args(args)
        except SystemExit as exit_:
            raise AssertionError(f"{command.where()}\n{stderr.getvalue()}") from None
    for path in parsed.configfile or []:
        if str(path) == "mirror.yaml":
            continue
        assert (REPO / path).is_file(), f"{command.where()}: no config file {path}"
        _check_config(REPO / path, command)


@cache
def make_targets() -> frozenset[str]:
    text = (REPO / "Makefile").read_text()
    return frozenset(re.findall(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", text, flags=re.M))


MAKE = [c for c in COMMANDS if word(c) == "make"]


@pytest.mark.parametrize("command", MAKE, ids=_ids(MAKE))
def test_make_targets_exist(command):
    targets = [a for a in command.argv[1:] if not a.startswith("-") and "=" not in a]
    missing = [t for t in targets if t not in make_targets()]
    assert not missing, f"{command.where()}: no target {missing} in the Makefile"


PYTHON = [c for c in COMMANDS if word(c) in ("python", "python3")]


def _python_target(command: Command) -> tuple[Path | None, list[str]]:
    """(the script or package `__main__` the command runs, its arguments); None for a module
    outside the repository (skipped)."""
    args = list(command.argv[1:])
    if args[0] == "-m":
        module = args[1]
        if module.split(".")[0] not in REPO_MODULES:
            return None, []
        parts = module.split(".")
        base = REPO / "src" if parts[0] == "dmlbench" else REPO
        path = base.joinpath(*parts)
        return (path / "__main__.py" if path.is_dir() else path.with_suffix(".py")), args[2:]
    return REPO / args[0], args[1:]


@cache
def declared_options(script: Path) -> frozenset[str]:
    """The option strings a script's argparse parser declares (`add_argument("--x", ...)`)."""
    options = set()
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            options.update(a.value for a in node.args
                           if isinstance(a, ast.Constant) and str(a.value).startswith("-"))
    return frozenset(options | {"-h", "--help"})


@pytest.mark.parametrize("command", PYTHON, ids=_ids(PYTHON))
def test_python_commands_run_a_repository_script_with_its_options(command):
    script, args = _python_target(command)
    if script is None:
        pytest.skip(f"module outside the repository: {command.text}")
    assert script.is_file(), f"{command.where()}: no file {script.relative_to(REPO)}"
    unknown = [a.split("=")[0] for a in args
               if a.startswith("-") and a.split("=")[0] not in declared_options(script)]
    assert not unknown, (f"{command.where()}: {script.relative_to(REPO)} declares no option "
                         f"{unknown}")


# --- commands: slow checks ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    """A copy of the workflow, and a mirror config whose mirror holds an empty file for every
    downloaded file of the registry (a dry run only asks that the mirror has them)."""
    from dmlbench.data import REGISTRY

    work = copy_project(tmp_path_factory.mktemp("docs-dry-run"))
    mirror = work / "mirror"
    for spec in REGISTRY.values():
        for file in spec.files if spec.downloads else []:
            (mirror / spec.group).mkdir(parents=True, exist_ok=True)
            (mirror / spec.group / file.name).touch()
    (work / "mirror.yaml").write_text(f"data: {{mirror: {mirror}, offline: true}}\n")
    return work


def _dry_run_argv(command: Command) -> list[str]:
    args = _snakemake_args(command, "mirror.yaml")
    if "--configfile" not in args and "--configfiles" not in args:
        args += ["--configfile", "config/config.yaml"]
    if "mirror.yaml" not in args:
        position = args.index("--configfile") + 1
        while position < len(args) and not args[position].startswith("-"):
            position += 1
        args.insert(position, "mirror.yaml")         # the last config file wins
    return ["-n", *[a for a in args if a not in ("-n", "--dry-run", "--dryrun")]]


DRY_RUNS = {}
for _command in SNAKEMAKE_COMMANDS:
    if not NO_DRY_RUN & set(_command.argv):
        DRY_RUNS.setdefault(tuple(_dry_run_argv(_command)), _command)


@pytest.mark.slow
@pytest.mark.parametrize("argv", list(DRY_RUNS), ids=_ids(DRY_RUNS.values()))
def test_snakemake_commands_dry_run(argv, workflow_copy, tmp_path):
    command = DRY_RUNS[argv]
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlruns.db'}"}
    result = snakemake(workflow_copy, *argv, env=env, timeout=300)
    assert result.returncode == 0, (f"{command.where()}\nsnakemake {' '.join(argv)}\n"
                                    f"{(result.stdout + result.stderr)[-3000:]}")


HELP = {}
for _command in PYTHON:
    _script, _ = _python_target(_command)
    if _script is not None:
        HELP.setdefault(_script, _command)           # one --help per script


@pytest.mark.slow
@pytest.mark.parametrize("command", list(HELP.values()), ids=_ids(HELP.values()))
def test_python_commands_help(command):
    args = list(command.argv[1:3]) if command.argv[1] == "-m" else [command.argv[1]]
    result = subprocess.run([sys.executable, *args, "--help"], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, f"{command.where()}\n{result.stderr[-2000:]}"
