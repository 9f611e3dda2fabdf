"""Declared parameter constraints: what each keyword of a method may be, checked before any job
(`dmlbench check-config`, the Snakefile) and again when the method is fitted.

In the spirit of scikit-learn's `_parameter_constraints` (whose validation module is private and
not imported): a method maps every `__init__` parameter to a list of constraints, and a value is
valid when it satisfies one of them. A constraint is `None` (the value None), an `Interval` of
integers or finite numbers, `Options` (fixed values, e.g. names), `Boolean`, `Grid` (a non-empty
list of values each satisfying its item constraints) or `Array` (a 2-D array of numbers). A
violation raises `ParameterError`, a `ValueError` naming the parameter, e.g.
``eps must be a number > 0, got 0``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


class ParameterError(ValueError):
    """A parameter value a method refuses; `parameter` is its name (the config key's last part)."""

    def __init__(self, parameter: str, message: str):
        self.parameter = parameter
        super().__init__(message)


class Interval:
    """Integers (`kind=Integral`) or finite numbers (`kind=Real`) between `low` and `high`
    (None: unbounded); `closed` is "both", "left", "right" or "neither". Booleans are neither."""

    def __init__(self, kind: type, low=None, high=None, closed: str = "both"):
        if kind not in (Integral, Real) or closed not in ("both", "left", "right", "neither"):
            raise TypeError("Interval(kind=Integral | Real, closed=both | left | right | neither)")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def accepts(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.kind):
            return False
        if self.kind is Real and not math.isfinite(value):
            return False
        if self.low is not None and (value < self.low or (value == self.low and
                                                          self.closed in ("right", "neither"))):
            return False
        return not (self.high is not None and (value > self.high or (
            value == self.high and self.closed in ("left", "neither"))))

    def __str__(self) -> str:
        noun = "an integer" if self.kind is Integral else "a number"
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        if self.low is not None and self.high is not None:
            return f"{noun} in {left}{self.low:g}, {self.high:g}{right}"
        if self.low is not None:
            return f"{noun} {'>=' if left == '[' else '>'} {self.low:g}"
        if self.high is not None:
            return f"{noun} {'<=' if right == ']' else '<'} {self.high:g}"
        return noun


class Options:
    """One of a fixed set of values (compared with ==; booleans only match booleans)."""

    def __init__(self, values):
        self.values = tuple(values)

    def accepts(self, value) -> bool:
        return any(type(value) is type(v) and value == v for v in self.values)

    def __str__(self) -> str:
        words = ", ".join(repr(v) for v in self.values)
        return words if len(self.values) == 1 else "one of " + words


class Boolean:
    """true or false."""

    def accepts(self, value) -> bool:
        return isinstance(value, (bool, np.bool_))

    def __str__(self) -> str:
        return "true or false"


class Grid:
    """A non-empty list (or tuple, or 1-D array) of values, each satisfying one of `items`."""

    def __init__(self, *items):
        self.items = items

    def accepts(self, value) -> bool:
        if isinstance(value, np.ndarray):
            if value.ndim != 1:
                return False
            value = value.tolist()
        if not isinstance(value, (list, tuple)) or not value:
            return False
        return all(any(_satisfies(c, v) for c in self.items) for v in value)

    def __str__(self) -> str:
        return f"a non-empty list (each item {describe(self.items)})"


class Array:
    """A 2-D array of finite numbers (an array or a list of equally long lists)."""

    def accepts(self, value) -> bool:
        if not isinstance(value, (list, tuple, np.ndarray)):
            return False
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return False
        return array.ndim == 2 and array.size > 0 and bool(np.all(np.isfinite(array)))

    def __str__(self) -> str:
        return "a 2-D array of numbers"


def _satisfies(constraint, value) -> bool:
    return value is None if constraint is None else constraint.accepts(value)


def describe(constraints) -> str:
    """'an integer >= 2 or None': the constraints of one parameter in words."""
    words = ["None" if c is None else str(c) for c in constraints]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _shown(value) -> str:
    """The value as a message shows it: on one line, at most 80 characters."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _hint(constraints, value) -> str:
    """YAML 1.1 reads 1e-4 (no dot) as a string: say so when a number was meant."""
    if isinstance(value, str) and any(isinstance(c, Interval) for c in constraints):
        try:
            float(value)
        except ValueError:
            return ""
        return f" (a string: YAML reads {value} as text; write it with a dot, e.g. 1.0e-4)"
    return ""


def check_value(name: str, value, constraints) -> None:
    """`ParameterError` unless `value` satisfies one of `constraints`."""
    if not any(_satisfies(c, value) for c in constraints):
        raise ParameterError(name, f"{name} must be {describe(constraints)}, got "
                                   f"{_shown(value)}{_hint(constraints, value)}")


def check(constraints: dict, params: dict) -> None:
    """Every entry of `params` against its declared constraints (`ParameterError` at the first
    violation; `TypeError` for a parameter with no declaration, a mistake in the method)."""
    for name, value in params.items():
        if name not in constraints:
            raise TypeError(f"parameter '{name}' has no declared constraint")
        check_value(name, value, constraints[name])


def require(name: str, condition: bool, message: str) -> None:
    """`ParameterError` naming `name` with `message` unless `condition` (for relations between
    parameters and limits set by the data)."""
    if not condition:
        raise ParameterError(name, message)
