"""YAML files read strictly: a key given twice in one mapping is an error (YAML keeps the last
one silently), a document that aliases (``*name``) expand beyond `MAX_VALUES` values is refused
before anything walks it (`check_size`: a "billion laughs" of nine levels is 9^9 values, which
a schema check would expand and print), and every error is one line naming the file, line and
column, or the key."""

from __future__ import annotations

from pathlib import Path

import yaml

#: the most values (mapping keys, values and list items) a document may hold with its aliases
#: expanded; the largest config of the project (config/repro/oneata-2011.yaml) holds 7 004
MAX_VALUES = 100_000


class YAMLFileError(ValueError):
    """A file that cannot be read as YAML: the message names the file, line and column."""


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (YAML keeps the last one
    silently); merge keys (``<<: *anchor``) may still be overridden."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key '{key}' (first given on line {seen[key] + 1})",
                    key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


class TooLarge(ValueError):
    """Content that aliases expand beyond `MAX_VALUES` values, or that contains itself: `key`
    is the dotted path of the innermost value that does."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(message)


def _children(value) -> list:
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        return list(enumerate(value))
    return []


def _size(value, memo: dict, path: list[str]) -> int:
    """Values in `value` (at key `path`) with every shared part (an alias) counted each time it
    appears, visiting each distinct mapping or list once (`memo`: size by identity). `TooLarge`
    for a value that contains itself (a recursive alias)."""
    if not isinstance(value, (dict, list)):
        return 1
    key = id(value)
    if key in memo:
        if memo[key] is None:
            raise TooLarge(".".join(path) or "<top level>",
                           "a YAML alias (*name) makes this value contain itself")
        return memo[key]
    memo[key] = None
    memo[key] = 1 + sum(_size(child, memo, [*path, str(name)]) + isinstance(value, dict)
                        for name, child in _children(value))
    return memo[key]


def check_size(content) -> None:
    """`TooLarge` naming the innermost key whose value holds more than `MAX_VALUES` values
    once YAML aliases are expanded (or one that contains itself), in time proportional to the
    distinct values (a loaded document shares each aliased value instead of copying it)."""
    memo: dict = {}
    if _size(content, memo, []) <= MAX_VALUES:
        return
    path, value = [], content
    while True:  # down to the innermost value that is too large
        inner = next(((name, child) for name, child in _children(value)
                      if memo.get(id(child), 1) > MAX_VALUES), None)
        if inner is None:
            break
        path.append(str(inner[0]))
        value = inner[1]
    raise TooLarge(".".join(path) or "<top level>",
                   f"YAML aliases (*name) expand this value to {memo[id(value)]} values, more "
                   f"than the {MAX_VALUES} a config may hold; write the repeated part out, or "
                   "repeat it fewer times")


def load(path: str | Path):
    """The YAML content of file `path` (None for an empty file); `YAMLFileError` when it cannot
    be parsed or aliases make it too large (`check_size`)."""
    path = Path(path)
    try:
        content = yaml.load(path.read_text(), Loader=UniqueKeyLoader)
        check_size(content)
        return content
    except TooLarge as err:
        raise YAMLFileError(f"{path}, key '{err.key}': {err}") from None
    except yaml.MarkedYAMLError as err:
        def at(mark):
            return f"line {mark.line + 1}, column {mark.column + 1}"
        mark = err.problem_mark or err.context_mark
        message = f"{path}, {at(mark)}: {err.problem or err.context}"
        if err.context and err.problem and err.context_mark:
            message += f" ({err.context} that starts on {at(err.context_mark)})"
        raise YAMLFileError(" ".join(message.split())) from None
    except yaml.YAMLError as err:
        raise YAMLFileError(f"{path}: {' '.join(str(err).split())}") from None
