"""Methods by name: `REGISTRY["lmnn"]` is the class, configured by keyword parameters. A name
that is not registered may be one an installed package declares in the entry-point group
`dmlbench.methods` (`methods.plugins`)."""

from __future__ import annotations

import difflib

from . import plugins

REGISTRY: dict[str, type] = {}


def register(name: str):
    """Class decorator: make a method available under `name` in configs and the CLI."""

    def decorate(cls):
        if name in REGISTRY:
            raise ValueError(f"method name '{name}' is registered twice")
        cls.registry_name = name
        REGISTRY[name] = cls
        return cls

    return decorate


def get(name: str) -> type:
    """The class registered as `name`, else the plug-in an installed package registers under
    that entry-point name (`plugins.load`); a `KeyError` naming close matches when unknown (a
    `plugins.PluginError` when the entry point's class cannot be used)."""
    if name in REGISTRY:
        return REGISTRY[name]
    class_path = plugins.entry_point(name)
    if class_path is not None:
        return plugins.load(class_path)
    known = [*REGISTRY, *plugins.entry_point_names()]
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise KeyError(f"unknown method '{name}'.{hint} Known: {', '.join(sorted(known))}; "
                   "a class of your own: `class: <file>.py:<Class>` or `<module>:<Class>`")


def make(name: str, params: dict | None = None, cls: type | None = None):
    """An instance of method `name` (or of `cls`, e.g. a plug-in's method class) with
    `params`; `ValueError` naming an unknown parameter."""
    cls = cls or get(name)
    params = dict(params or {})
    valid = cls.parameter_names()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(
            f"method '{name}' has no parameter(s) {unknown}; its parameters are {sorted(valid)}"
        )
    return cls(**params)
