"""Methods by name: `REGISTRY["lmnn"]` is the class, configured by keyword parameters."""

from __future__ import annotations

import difflib

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
    """The class registered as `name`; a `KeyError` naming close matches when unknown."""
    try:
        return REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, REGISTRY, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"unknown method '{name}'.{hint} Known: {', '.join(sorted(REGISTRY))}") from None


def make(name: str, params: dict | None = None):
    """An instance of method `name` with `params`; `ValueError` naming an unknown parameter."""
    cls = get(name)
    params = dict(params or {})
    valid = cls.parameter_names()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(
            f"method '{name}' has no parameter(s) {unknown}; its parameters are {sorted(valid)}"
        )
    return cls(**params)
