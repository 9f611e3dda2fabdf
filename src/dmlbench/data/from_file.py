"""Data sets given by a file of the user's, named in a config instead of registered::

    datasets:
      mine: {path: data/mine.csv, target: label, categorical: [site], drop: [id]}

Formats (`FORMATS`; `format` in the config, else from the file's suffix, `SUFFIXES`):

- ``csv`` / ``tsv``: a header row naming the columns (pandas); `target` names the label column;
- ``arff``: `scipy.io.arff`; `target` defaults to the last attribute; nominal attributes are
  categorical (one-hot) without being listed, ``?`` is a missing value;
- ``svmlight``: svmlight / LIBSVM (``<label> <index>:<value> ...``, scikit-learn's reader); no
  column names, so no `target`, `categorical` or `drop`; dense unless it would exceed
  `DENSE_MAX_VALUES` values (then sparse CSR, as the registry's document sets);
- ``npz``: NumPy arrays only (read with ``allow_pickle=False``): features ``X`` (n x d), labels
  the array `target` names (default ``y``).

`categorical` columns become one indicator feature per value (sorted; named ``<column>=<value>``),
`drop` columns are left out. Everything else goes through the checks every registered data set
meets (`cache.validate`: non-numeric features, NaN or infinite values, missing labels, constant
features dropped and listed) and, at config time, the class-count checks of the protocols
(`run.plan.training_shape`). The cached arrays are named by the content (`FileSource.name`: the
label and a digest of the file's sha256 and the reading options), so an edited file is a new
data set: its jobs rerun, and the former cache entry stays for configs that still use it.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.io import arff

from .. import files
from . import formats
from .cache import validate
from .embedded import RawData
from .spec import DatasetSpec

FORMATS = ("csv", "tsv", "arff", "svmlight", "npz")
SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".arff": "arff", ".svm": "svmlight",
            ".svmlight": "svmlight", ".libsvm": "svmlight", ".npz": "npz"}
#: an svmlight file is read dense up to this many values (n x d), sparse above
DENSE_MAX_VALUES = 50_000_000
#: what the workflow's job shells get (common.smk): {cache name: FileSource fields}
ENVIRONMENT = "DMLBENCH_DATASET_FILES"


class FileDataError(ValueError):
    """A problem with a data file or its reading options; `key` is the config key to blame
    (`path`, `format`, `target`, `categorical`, `drop`), the message one line."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(message)


def format_of(path: str | Path, given: str | None = None) -> str:
    """The file's format: `given`, else from its suffix (a .gz or .bz2 after it is skipped)."""
    if given:
        return given
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2"):
        suffixes = suffixes[:-1]
    found = SUFFIXES.get(suffixes[-1] if suffixes else "")
    if found is None:
        raise FileDataError("format", f"cannot tell the format of {Path(path).name} from its "
                            f"suffix; give `format` ({', '.join(FORMATS)})")
    return found


def sha256(path: str | Path) -> str:
    """sha256 of the file's bytes (`files.sha256`); `FileDataError` when it does not exist."""
    try:
        return files.sha256(path)
    except FileNotFoundError:
        raise FileDataError("path", f"data file {path} not found") from None


@dataclass(frozen=True)
class FileSource:
    """A data set given by a file: where it is, how to read it, and its content's sha256."""

    label: str
    path: str  # absolute
    format: str
    sha256: str
    target: str | None = None
    categorical: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()

    @classmethod
    def of(cls, label: str, path: str | Path, format: str | None = None,
           target: str | None = None, categorical=(), drop=()) -> FileSource:
        """The source of a config entry (its `path` absolute); the file's sha256 is read now."""
        fmt = format_of(path, format)
        if fmt in ("svmlight", "npz"):
            for key, value in (("categorical", categorical), ("drop", drop)):
                if value:
                    raise FileDataError(key, f"a {fmt} file has no column names: `{key}` "
                                             "applies to csv, tsv and arff files")
        if fmt == "svmlight" and target:
            raise FileDataError("target", "an svmlight file holds its labels (the first field "
                                          "of each line): leave `target` out")
        if fmt in ("csv", "tsv") and not target:
            raise FileDataError("target", f"give the label column of {Path(path).name} "
                                          "(`target: <column name>`)")
        return cls(label, str(path), fmt, sha256(path), target, tuple(categorical), tuple(drop))

    @property
    def name(self) -> str:
        """The cache name: the label and a digest of the content and the reading options."""
        options = {k: v for k, v in asdict(self).items() if k not in ("label", "path")}
        digest = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()
        return f"{self.label}-{digest[:12]}"

    def description(self) -> dict:
        """What the metadata and records say of the file: its name, not where it lies."""
        out = {"file": Path(self.path).name, "sha256": self.sha256, "format": self.format}
        out.update({k: v for k, v in (("target", self.target),
                                      ("categorical", list(self.categorical)),
                                      ("drop", list(self.drop))) if v})
        return out

    def to_json(self) -> dict:
        return {**asdict(self), "categorical": list(self.categorical), "drop": list(self.drop)}

    @classmethod
    def from_json(cls, value: dict) -> FileSource:
        return cls(**{**value, "categorical": tuple(value.get("categorical", ())),
                      "drop": tuple(value.get("drop", ()))})


# --- reading -------------------------------------------------------------------------------


def _table(source: FileSource) -> tuple[pd.DataFrame, set[str]]:
    """(the file as a table, its columns that are categorical by declaration in the file)."""
    if source.format in ("csv", "tsv"):
        try:
            return pd.read_csv(source.path, sep="," if source.format == "csv" else "\t"), set()
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise FileDataError("path", f"{Path(source.path).name}: not a readable "
                                f"{source.format} table ({' '.join(str(err).split())})") from None
    text = formats.read_bytes(source.path).decode("utf-8", errors="replace")
    try:
        data, meta = arff.loadarff(io.StringIO(text))
    except (arff.ArffError, NotImplementedError, ValueError) as err:
        raise FileDataError("path", f"{Path(source.path).name}: not a readable ARFF file "
                            f"({' '.join(str(err).split())})") from None
    table = pd.DataFrame(data)
    nominal = {name for name, kind in zip(meta.names(), meta.types()) if kind == "nominal"}
    for name in nominal:
        values = table[name].map(lambda v: v.decode() if isinstance(v, bytes) else v)
        table[name] = values.where(values != "?", None)
    return table, nominal


def _columns(table: pd.DataFrame, names, key: str, source: FileSource) -> list[str]:
    missing = [c for c in names if c not in table.columns]
    if missing:
        raise FileDataError(key, f"{Path(source.path).name} has no column {missing[0]!r}; its "
                                 f"columns are {list(map(str, table.columns))}")
    return list(names)


def _one_hot(table: pd.DataFrame, column: str, source: FileSource) -> pd.DataFrame:
    values = table[column]
    if values.isna().any():
        rows = np.flatnonzero(values.isna().to_numpy())[:10].tolist()
        raise FileDataError("categorical", f"{Path(source.path).name}: categorical column "
                            f"{column!r} has {int(values.isna().sum())} missing values (rows "
                            f"{rows}); fill or drop them")
    levels = sorted(values.astype(str).unique())
    return pd.DataFrame({f"{column}={level}": (values.astype(str) == level).astype(float)
                         for level in levels}, index=table.index)


def _tabular(source: FileSource) -> RawData:
    table, nominal = _table(source)
    target = source.target or (table.columns[-1] if source.format == "arff" else None)
    _columns(table, [target], "target", source)
    _columns(table, source.drop, "drop", source)
    _columns(table, source.categorical, "categorical", source)
    if target in source.drop or target in source.categorical:
        raise FileDataError("target", f"the label column {target!r} cannot be dropped or "
                                      "categorical")
    labels = table[target].to_numpy(dtype=object)
    features = table.drop(columns=[target, *source.drop])
    categorical = [c for c in features.columns if c in set(source.categorical) | nominal]
    parts = []
    for column in features.columns:
        if column in categorical:
            parts.append(_one_hot(features, column, source))
            continue
        values = pd.to_numeric(features[column], errors="coerce")
        text = features[column].notna() & values.isna()
        if text.any():
            examples = sorted(features[column][text].astype(str).unique())[:5]
            raise FileDataError("categorical", f"{Path(source.path).name}: column {column!r} "
                                f"is not numeric (values such as {examples}); list it under "
                                "`categorical` (one-hot) or `drop`")
        parts.append(values.astype(float).to_frame(column))
    if not parts:
        raise FileDataError("drop", f"{Path(source.path).name}: no feature column is left")
    X = pd.concat(parts, axis=1)
    return RawData(X=X.to_numpy(dtype=np.float64), y=labels,
                   feature_names=[str(c) for c in X.columns])


def _svmlight(source: FileSource) -> RawData:
    try:
        X, y = formats.read_svmlight(source.path)
    except ValueError as err:
        raise FileDataError("path", f"{Path(source.path).name}: not a readable svmlight file "
                            f"({' '.join(str(err).split())})") from None
    if X.shape[0] * X.shape[1] <= DENSE_MAX_VALUES:
        X = X.toarray()
    labels = np.array([int(v) if float(v).is_integer() else v for v in y], dtype=object)
    return RawData(X=X, y=labels)


def _npz(source: FileSource) -> RawData:
    target = source.target or "y"
    try:
        with np.load(source.path, allow_pickle=False) as npz:
            names = list(npz.files)
            if "X" not in names or target not in names:
                key = "path" if "X" not in names else "target"
                raise FileDataError(key, f"{Path(source.path).name} holds the arrays {names}; "
                                         f"it needs features 'X' and labels {target!r}")
            X, y = npz["X"], npz[target]
    except ValueError as err:
        if isinstance(err, FileDataError):
            raise
        raise FileDataError("path", f"{Path(source.path).name}: not an .npz of plain arrays "
                            f"({' '.join(str(err).split())}; pickled objects are never "
                            "loaded)") from None
    if y.ndim != 1:
        raise FileDataError("target", f"labels {target!r} must be a 1-D array, got shape "
                                      f"{y.shape}")
    return RawData(X=np.asarray(X), y=y.astype(object) if y.dtype.kind == "f" else y)


def read(source: FileSource) -> RawData:
    """The file's features and labels, as a loader of the registry returns them (the cache's
    `validate` checks them next). The file must still have the sha256 of `source`."""
    if sha256(source.path) != source.sha256:
        raise FileDataError("path", f"data file {source.path} changed since its config was "
                            f"checked (sha256 {sha256(source.path)}, expected "
                            f"{source.sha256}); run the workflow again")
    if source.format == "svmlight":
        return _svmlight(source)
    if source.format == "npz":
        return _npz(source)
    return _tabular(source)


def spec(source: FileSource) -> DatasetSpec:
    """The data set's spec, with n, d and class counts as the cache's checks produce them (the
    file is read and validated: `ValueError` naming the problem)."""
    return _spec(source)


@functools.cache
def _spec(source: FileSource) -> DatasetSpec:
    X, _, meta = validate(source.name, read(source))
    return DatasetSpec(
        name=source.name, source="file", n=meta["n"], d=meta["d"], n_classes=meta["n_classes"],
        loader=functools.partial(read, source),
        notes=f"the {source.format} file {Path(source.path).name} of the config's data set "
              f"'{source.label}'",
        origin=f"file {Path(source.path).name} (sha256 {source.sha256})",
        class_counts=dict(zip(meta["class_names"], meta["class_counts"])),
        extras={"file": source.description()}, sparse=sp.issparse(X))
