"""YAML files read strictly: a key given twice in one mapping is an error (YAML keeps the last
one silently), and every error is one line naming the file, line and column."""

from __future__ import annotations

from pathlib import Path

import yaml


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


def load(path: str | Path):
    """The YAML content of file `path` (None for an empty file); `YAMLFileError` when it cannot
    be parsed."""
    path = Path(path)
    try:
        return yaml.load(path.read_text(), Loader=UniqueKeyLoader)
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
