"""The import rules of docs/architecture.md ("Who may import whom"), read from the source with
`ast` (every import, those inside functions too) and checked in fresh interpreters."""

import ast
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from conftest import REPO

PACKAGE = REPO / "src" / "dmlbench"


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(path: Path, node) -> set[str]:
    """What one import statement of `path` imports: `dmlbench.<module>.<name>` for a dmlbench
    import (each name), the top-level package for any other."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif node.level:
        base = package.split(".")[:len(package.split(".")) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
        names = [f"{target}.{alias.name}" for alias in node.names]
    else:
        names = [f"{node.module}.{alias.name}" for alias in node.names]
    return {name if name.startswith("dmlbench") else name.split(".")[0] for name in names}


def _imports(path: Path, local_only: bool = False) -> set[str]:
    """What `path` imports, anywhere in the file (or only inside functions and classes: the
    imports of a module-level `with` block, such as `deferred.deferring(...)`, are the
    module's); `if TYPE_CHECKING:` blocks import nothing."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    top |= {id(n) for node in tree.body if isinstance(node, ast.With) for n in node.body}
    typing_only = {id(n) for node in tree.body if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    return set().union(*[_targets(path, node) for node in ast.walk(tree)
                         if isinstance(node, (ast.Import, ast.ImportFrom))
                         and id(node) not in typing_only
                         and not (local_only and id(node) in top)])


def _dmlbench_imports(path: Path) -> set[str]:
    return {name for name in _imports(path) if name.split(".")[0] == "dmlbench"}


def _room(name: str) -> str:
    """The room of a dmlbench module: its top-level package or module (`dmlbench.run.plan` ->
    `run`); '' for the package itself."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


ROOMS = {path.stem if path.suffix else path.name for path in PACKAGE.iterdir()
         if (path.suffix == ".py" and path.stem != "__init__")
         or (path.is_dir() and any(path.glob("*.py")))}


def _room_imports() -> dict[str, set[str]]:
    """room -> the other rooms it imports."""
    graph = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        room = _room(_module(path))
        graph[room] |= {_room(name) for name in _dmlbench_imports(path)} & ROOMS - {room}
    return graph


def test_the_room_graph_is_read():
    graph = _room_imports()
    assert {"cli", "config", "run", "methods", "solvers", "measure", "report"} <= ROOMS
    assert "config" in graph["run"] and "methods" in graph["run"]


@pytest.mark.parametrize("room, never", [
    ("config", {"run", "methods", "data", "studies", "report", "records", "measure", "solvers"}),
    ("report", {"config", "run", "methods", "solvers", "studies"}),
    ("methods", {"records", "data", "config", "run", "studies", "report"}),
    ("solvers", {"methods", "records", "data", "config", "run", "report"}),
    ("measure", {"methods", "solvers", "records", "data", "config", "run", "report"}),
    ("data", {"methods", "config", "run", "records", "report"}),
])
def test_a_room_never_imports_these(room, never):
    assert not _room_imports()[room] & never


def test_the_rooms_have_no_import_cycle():
    graph = _room_imports()
    done, path = set(), []

    def visit(room):
        assert room not in path, f"import cycle: {' -> '.join(path[path.index(room):] + [room])}"
        if room in done:
            return
        path.append(room)
        for other in sorted(graph[room]):
            visit(other)
        path.pop()
        done.add(room)

    for room in sorted(graph):
        visit(room)


def test_no_module_imports_the_package_root():
    """Every dmlbench import names a room (`dmlbench.<room>...`), never a name of the package
    root: its lazy exports (the methods' classes) would make the importer look as if it
    depended on the methods. The version lives in the leaf `_version`, which imports nothing."""
    for path in PACKAGE.rglob("*.py"):
        rooms = {_room(name) for name in _dmlbench_imports(path)}
        assert rooms <= ROOMS | {""}, (path, rooms - ROOMS)
    assert _dmlbench_imports(PACKAGE / "_version.py") == set()


def test_the_version_is_the_one_of_pyproject():
    import tomllib

    from dmlbench._version import __version__

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert __version__ == project["version"]


def test_metric_names_are_spelt_by_the_vocabulary_only():
    """`accuracy_k<k>` and `error_k<k>` are built by `vocabulary.accuracy` / `error` alone: no
    string of another module's code (docstrings aside) spells them."""
    spelt = re.compile(r"(?<![a-z_])(accuracy|error)_k(\d|$)")
    for path in PACKAGE.rglob("*.py"):
        if path.name == "vocabulary.py":
            continue
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in docstrings:
                assert not spelt.search(node.value), (path, node.lineno, node.value)


def test_the_config_leaf_stays_short():
    """config.py holds reading, the schema's defaults and typed accessors, nothing more (what a
    config implies lives in run.plan): under 250 lines."""
    assert len((PACKAGE / "config.py").read_text().splitlines()) < 250


def test_the_report_reads_only_the_registry_of_the_data_room():
    """Of `data`, the report reads the registry alone (report.papers: our name of a paper's data
    set and whether it can be had): it never loads, builds or downloads a data set."""
    for path in (PACKAGE / "report").rglob("*.py"):
        used = {name for name in _dmlbench_imports(path) if _room(name) == "data"}
        assert all(name.startswith("dmlbench.data.registry.") for name in used), (path, used)


def test_no_method_imports_the_evaluation():
    """The local-metric search and the model selection use the k-NN rule (`measure.knn_rule`),
    below the methods; the evaluation, above them, calls their hooks."""
    for path in (PACKAGE / "methods").rglob("*.py"):
        assert not any(name.startswith("dmlbench.measure.evaluation")
                       for name in _dmlbench_imports(path)), path


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout


def test_the_report_does_not_import_config_and_config_imports_no_other_room():
    loaded = _fresh("import sys, dmlbench.report; print(' '.join(sys.modules))").split()
    assert "dmlbench.config" not in loaded
    loaded = _fresh("import sys, dmlbench.config; print(' '.join(sys.modules))").split()
    # strict_yaml: the YAML reader (duplicate keys, one-line errors); suggestions: "did you
    # mean" (for schema errors); each itself importing no room
    assert {m for m in loaded if m.startswith("dmlbench")} == {
        "dmlbench", "dmlbench._version", "dmlbench.config", "dmlbench.strict_yaml",
        "dmlbench.suggestions"}
    loaded = _fresh("import sys, dmlbench.strict_yaml; print(' '.join(sys.modules))").split()
    assert {m for m in loaded if m.startswith("dmlbench")} == {
        "dmlbench", "dmlbench._version", "dmlbench.strict_yaml"}


def test_the_cli_imports_no_heavy_module_a_verb_may_not_need():
    """mlflow, matplotlib/seaborn, cvxpy, metric-learn, numba, statsmodels and snakemake are
    imported by the verbs (or the functions) that use them, not by `import dmlbench.cli`: every
    job of the workflow is one `dmlbench run` process. pandas and pyarrow, which scikit-learn
    imports at start-up, are deferred to their first use (`dmlbench.deferred`,
    tests/test_deferred.py)."""
    heavy = ("mlflow", "matplotlib", "seaborn", "cvxpy", "metric_learn", "numba", "statsmodels",
             "snakemake", "pandas", "pyarrow")
    loaded = _fresh("import sys, dmlbench.cli; print(' '.join(sys.modules))").split()
    assert not {m.split(".")[0] for m in loaded} & set(heavy)


def test_local_imports_are_the_explained_ones():
    """An import inside a function stays only where a heavy dependency forces it, with the
    reason beside it: the CLI's report, publish and scoreboard verbs (matplotlib, seaborn), mlflow (and its
    database layer, sqlalchemy) in the MLflow writer and in the report's MLflow reader (a report
    read from record files never imports it), metric-learn and ITML's compiled (numba)
    projections in the baselines, metric-learn's initialisation and the compiled (numba) count
    of active triples in LMNN, cvxpy and the compiled (numba) solver in mvce, the compiled
    (numba) search pass in neighbours (and, to precompile it, the search it serves, which imports
    it), the R data file reader rdata (pandas, xarray) in the data formats."""
    found = {_module(path): _imports(path, local_only=True) for path in PACKAGE.rglob("*.py")}
    assert {module: names for module, names in found.items() if names} == {
        "dmlbench.cli": {"dmlbench.publish", "dmlbench.report", "dmlbench.report.scoreboard"},
        "dmlbench.records.tracking": {"mlflow", "sqlalchemy"},
        "dmlbench.report.runs": {"mlflow"},
        "dmlbench.methods.baselines": {"metric_learn", "dmlbench.solvers.itml_compiled"},
        "dmlbench.methods.lmnn": {"metric_learn", "dmlbench.solvers.lmnn_compiled"},
        "dmlbench.solvers.mvce": {"cvxpy", "dmlbench.solvers.mvce_compiled"},
        "dmlbench.data.formats": {"rdata"},
        "dmlbench.measure.neighbours": {"dmlbench.measure.neighbours_compiled.finish_nearest",
                                        "dmlbench.measure.neighbours_compiled.update_nearest"},
        "dmlbench.measure.neighbours_compiled": {"dmlbench.measure.neighbours.euclidean_kneighbors"}}


def test_no_defaults_dict_besides_the_schema():
    """The config schema is the one source of the defaults of config keys: no module keeps a
    `DEFAULTS` mapping of its own."""
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                assert "DEFAULTS" not in names, f"{path}: a DEFAULTS mapping"


def test_the_schema_holds_the_former_defaults():
    """Every value of the former DEFAULTS dicts (config.py, measure/hubness_reduction.py,
    studies/mvce_validation.py), as the schema now gives them."""
    from dmlbench import config

    filled = config.with_defaults({
        "benchmark": "t", "datasets": {"iris": None},
        "methods": {"a": {"hubness_reduction": {"kind": "local_scaling"}},
                    "b": {"hubness_reduction": {"kind": "mutual_proximity"}}},
        "mvce_validation": None})
    assert {key: filled[key] for key in ("seed", "k", "hubness_k", "k_selection",
                                          "train_hubness", "protocol", "preprocess")} == {
        "seed": 0, "k": [1, 3, 5], "hubness_k": 10, "k_selection": "none", "train_hubness": True,
        "protocol": {"kind": "holdout", "repeats": 4, "train_fraction": 0.7}, "preprocess": []}
    assert filled["data"]["cache"] == "resources"
    assert filled["methods"]["a"]["hubness_reduction"] == {
        "kind": "local_scaling", "k": 10, "candidates": 100, "exact_max": 2000,
        "distance": "euclidean"}
    assert filled["methods"]["b"]["hubness_reduction"]["variant"] == "empiric"
    assert filled["mvce_validation"] == {"m": [5, 15, 30], "queries": 3, "eps": 1e-4,
                                         "tol": 1e-7, "max_iter": 100000, "seed": 0}
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    assert schema["properties"]["report"]["properties"]["rope"]["default"] == 0.01


def test_the_schema_and_the_hubness_wrapper_name_the_same_options():
    from dmlbench.measure import hubness_reduction as hr

    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    entry = schema["properties"]["methods"]["additionalProperties"]["properties"]
    options = entry["hubness_reduction"]["properties"]
    assert tuple(options["kind"]["enum"]) == hr.KINDS
    assert tuple(options["variant"]["enum"]) == hr.VARIANTS
    assert tuple(options["distance"]["enum"]) == hr.DISTANCES
