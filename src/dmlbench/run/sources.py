"""Where a config's data sets and methods come from: the registry, or the user's own files and
classes (docs/your-data.md, docs/your-method.md).

A data-set entry with `path` is a file of the user's (`data.from_file`); a method entry with
`class` a plug-in (`methods.plugins`; a name that is not registered may also be an installed
package's entry point). `resolve_files` makes their paths absolute, relative to the config file
that gives each, so that jobs run from any directory; `dataset_spec` reads a data file (n, d and
class counts for the planner's limit checks, as the registry gives them for its sets) and
`method_class` imports a plug-in. A file's sha256 joins its jobs' identity (through the data
set's cache name, and the `sha256` of the job's `method`, `method_entry`), and so do the local
modules a plug-in imports and an installed plug-in's distribution and version
(`plugin_code`), so editing them reruns those jobs only.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import config as cfg
from .. import files
from ..data import from_file
from ..data import registry as data_registry
from ..methods import plugins
from ..methods import registry as method_registry


def resolve_files(config: dict, config_files=()) -> None:
    """Make the file paths of data sets given by `path` and of plug-in classes in files
    absolute, in place: relative to the folder of the last of `config_files` that gives the
    same value for the key (the one whose value Snakemake keeps), else to the working
    directory (a value given on the command line by `--config`)."""
    contents = [(Path(f).absolute().parent, cfg.read(f)) for f in config_files]

    def folder(section: str, label: str, key: str, value: str) -> Path:
        found = Path.cwd()
        for base, content in contents:
            entries = content.get(section) if isinstance(content, dict) else None
            entry = entries.get(label) if isinstance(entries, dict) else None
            if isinstance(entry, dict) and entry.get(key) == value:
                found = base
        return found

    for label, entry in config["datasets"].items():
        if "path" in entry:
            base = folder("datasets", label, "path", entry["path"])
            entry["path"] = os.path.normpath(base / Path(entry["path"]).expanduser())
    for label, entry in config["methods"].items():
        value = entry.get("class")
        if value and plugins.is_file(value):
            where, name = value.rsplit(":", 1)
            base = folder("methods", label, "class", value)
            entry["class"] = f"{os.path.normpath(base / Path(where).expanduser())}:{name}"


def file_source(config: dict, label: str) -> from_file.FileSource:
    """The file of data set `label`, given by `path` (absolute after `resolve_files`)."""
    entry = config["datasets"][label]
    return from_file.FileSource.of(label, entry["path"], entry.get("format"),
                                   entry.get("target"), entry.get("categorical", ()),
                                   entry.get("drop", ()))


def dataset_spec(config: dict, label: str):
    """The `DatasetSpec` of data set `label`: the registry's, or for one given by a file, as
    read from it (`data.from_file.spec`)."""
    if "path" in config["datasets"][label]:
        return from_file.spec(file_source(config, label))
    return data_registry.get(cfg.dataset_name(config, label))


def file_datasets(config: dict) -> dict[str, dict]:
    """{cache name: source} of the data sets given by a file (what `dmlbench dataset` needs to
    build them; the workflow passes it in `data.from_file.ENVIRONMENT`)."""
    out = {}
    for label, entry in config["datasets"].items():
        if "path" in entry:
            source = file_source(config, label)
            out[source.name] = source.to_json()
    return out


def method_class(config: dict, label: str) -> type:
    """The class of method `label`: its plug-in (`class`, `methods.plugins.load`), else the
    registered (or entry-point) method named by `method` or the label."""
    class_path = config["methods"][label].get("class")
    if class_path:
        return plugins.load(class_path)
    return method_registry.get(cfg.method_name(config, label))


def method_entry(config: dict, label: str) -> dict:
    """The job spec's `method`: label, name, parameters, and for a plug-in its class path as
    records show it (`class`, a file by its name) and what identifies its code (`plugin_code`;
    all of it joins the job's identity)."""
    out = {"label": label, "name": cfg.method_name(config, label),
           "params": cfg.method_params(config, label)}
    class_path = config["methods"][label].get("class")
    if class_path is None and out["name"] not in method_registry.REGISTRY:
        class_path = plugins.entry_point(out["name"])  # an installed package's method
    elif class_path is not None:
        out["name"] = plugins.shown(class_path)
    if class_path is not None:
        out["class"] = plugins.shown(class_path)
        out.update(plugin_code(class_path))
    return out


def plugin_code(class_path: str) -> dict:
    """What identifies the code of a plug-in (docs/your-method.md): the installed
    distribution's `package` and `version` for a module of one; else the `sha256` of its file
    (the named file, or the module's) and, when it imports any, `modules`: {path relative to
    the file's folder (a module's: its top-level package's), as / separated: sha256} of the
    local Python files it imports (`plugins.code_files`)."""
    found = plugins.distribution(class_path)
    if found is not None:
        return {"package": found[0], "version": found[1]}
    code = plugins.code_files(class_path)
    if code is None:
        return {}
    root, main, local = code
    out = {"sha256": files.sha256(main)}
    if local:
        out["modules"] = {path.relative_to(root).as_posix(): files.sha256(path) for path in local}
    return out
