"""Methods by name: `REGISTRY["lmnn"]` is the class, configured by keyword parameters. A name
that is not registered may be one an installed package declares in the entry-point group
`dmlbench.methods` (`methods.plugins`)."""

from __future__ import annotations

import difflib

from ..suggestions import did_you_mean
from . import plugins
from .parameters import ParameterError

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


def import_alias(name: str) -> str:
    """The second name method `name` is importable by from `dmlbench`, beside its class name:
    the registry name upper-cased (``from dmlbench import KLHP``, ``MOVE_LABELED``)."""
    return name.upper()


def importable() -> dict[str, type]:
    """Every registered method's class by each name ``from dmlbench import ...`` takes: its
    class name and its `import_alias` (the same for e.g. RMVEM)."""
    out = {cls.__name__: cls for cls in REGISTRY.values()}
    for name, cls in REGISTRY.items():
        if out.setdefault(import_alias(name), cls) is not cls:
            raise ValueError(f"the import alias {import_alias(name)} of method '{name}' is the "
                             f"class name of {out[import_alias(name)].__name__}")
    return out


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
    `params`; `ParameterError` (a `ValueError`) naming an unknown parameter and the closest."""
    cls = cls or get(name)
    params = dict(params or {})
    valid = cls.parameter_names()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ParameterError(unknown[0], f"method '{name}' has no parameter(s) {unknown}"
                             f"{did_you_mean(unknown[0], valid)}; its parameters are "
                             f"{sorted(valid)}")
    return cls(**params)
