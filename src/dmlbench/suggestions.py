""""Did you mean": the close matches of a mistyped name among the names that would have been
right (a config key or value, a method's parameter, a name importable from `dmlbench`).

A leaf module (it imports nothing of dmlbench), so that every room can word its errors alike.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable


def close_matches(word: str, choices: Iterable, n: int = 1) -> list[str]:
    """Up to `n` of `choices` (as text) closest to `word`, best first, compared without regard
    to case (difflib's ratio >= 0.6); a choice differing from `word` in case only comes first."""
    by_lower: dict[str, str] = {}
    for choice in map(str, choices):
        by_lower.setdefault(choice.lower(), choice)
    found = difflib.get_close_matches(str(word).lower(), by_lower, n=n)
    return [by_lower[match] for match in found]


def did_you_mean(word: str, choices: Iterable) -> str:
    """`` (did you mean 'x'?)`` with the closest of `choices`, or "" when none is close."""
    close = close_matches(word, choices)
    return f" (did you mean '{close[0]}'?)" if close else ""


def schema_message(err) -> str:
    """One line for a JSON-schema error (`jsonschema.ValidationError`) of a config: a text
    outside an enumeration (the schema's `enum`, or the `enum`s among the alternatives of a
    `oneOf` / `anyOf`, e.g. `preprocess: [zscor]`) as the texts allowed there, with the closest;
    any other error as jsonschema words it."""
    value = err.instance
    if err.validator == "enum":
        alternatives = [err]
    elif err.validator in ("oneOf", "anyOf"):  # the alternatives' errors about this value
        alternatives = [sub for sub in err.context or () if not sub.relative_path]
    else:
        alternatives = []
    allowed = [v for sub in alternatives if sub.validator == "enum" for v in sub.validator_value]
    if not isinstance(value, str) or not allowed:
        return " ".join(err.message.split())
    return f"'{value}' is not one of {', '.join(map(str, allowed))}{did_you_mean(value, allowed)}"


def _non_finite(err):
    """The error (among `err` and the alternatives of a oneOf/anyOf) that refuses a NaN or an
    infinity, so the message names it rather than 'not valid under any of the schemas'."""
    value = err.instance
    if (err.validator == "type" and isinstance(value, (int, float))
            and not isinstance(value, bool) and not math.isfinite(value)):
        return err
    return next(filter(None, map(_non_finite, err.context or ())), None)


def schema_error(err) -> tuple[str, str]:
    """(the dotted config key, one line) for the first JSON-schema error of a config: a NaN or
    an infinity as such, an unknown key by its own name with the closest known one, a text
    outside an enumeration by `schema_message`."""
    non_finite = _non_finite(err)
    err = non_finite or err
    path = [str(p) for p in err.absolute_path]
    if non_finite is not None:
        return ".".join(path), f"must be a finite number, got {err.instance}"
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        known = sorted(err.schema.get("properties", {}))
        unknown = sorted(set(err.instance) - set(known))[0]
        return (".".join([*path, unknown]),
                f"unknown key{did_you_mean(unknown, known)}; the keys here are {', '.join(known)}")
    return ".".join(path) or "<top level>", schema_message(err)
