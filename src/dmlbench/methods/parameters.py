"""Checks of method parameters shared by several methods; each error names the parameter."""

from __future__ import annotations


def check_choice(name: str, value, allowed) -> None:
    """`value` must be one of `allowed`."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, got {value!r}")
