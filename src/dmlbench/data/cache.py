"""Build, validate and cache data sets as `<cache>/datasets/<name>.npz` plus `<name>.json`.

Handling, the same for every source:
- labels are encoded as 0..c-1 in sorted order of their string form; the names are kept;
- a non-numeric feature column without an encoding in the registry is an error;
- NaN or infinite values are an error naming the columns;
- features constant over the whole data set are dropped and listed in the metadata
  (`dropped_constant_features`); they change no distance and break z-scoring;
- the result must match the registry's n, d and number of classes.
Files are written atomically, so an interrupted build leaves nothing in the cache.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import __version__
from ..files import read_json, write_json, write_npz
from . import registry
from .embedded import RawData


@dataclass
class Dataset:
    """A validated data set: features `X` (float64), labels `y` (0..c-1) and metadata."""

    name: str
    X: np.ndarray
    y: np.ndarray
    meta: dict

    @property
    def classes(self) -> list[str]:
        return self.meta["class_names"]

    @property
    def given_split(self) -> dict[str, np.ndarray] | None:
        return self.meta.get("_given_split")


def array_sha256(X: np.ndarray, y: np.ndarray) -> str:
    """sha256 of the float64 features and int64 labels, C order."""
    h = hashlib.sha256()
    # the arrays' buffers, not .tobytes() copies (a data set's size less in peak memory)
    h.update(np.ascontiguousarray(X, dtype=np.float64))
    h.update(np.ascontiguousarray(y, dtype=np.int64))
    return h.hexdigest()


def validate(name: str, raw: RawData) -> tuple[np.ndarray, np.ndarray, dict]:
    """Encode and check `raw`; return (X, y, metadata). Raises `ValueError` naming the problem."""
    X, labels = raw.X, np.asarray(raw.y)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"data set '{name}': features must be a non-empty 2-D array, got {X.shape}")
    if labels.shape[0] != X.shape[0]:
        raise ValueError(
            f"data set '{name}': {X.shape[0]} feature rows but {labels.shape[0]} labels"
        )
    if X.dtype.kind not in "fiub":
        for j in range(X.shape[1]):
            try:
                X[:, j].astype(float)
            except (TypeError, ValueError):
                examples = sorted({str(v) for v in X[:, j]})[:5]
                raise ValueError(
                    f"data set '{name}': column {j} is not numeric (values such as {examples}); "
                    "register an explicit encoding for it in dmlbench.data.registry"
                ) from None
    X = np.asarray(X, dtype=np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        columns = sorted(set(np.nonzero(bad)[1].tolist()))
        raise ValueError(
            f"data set '{name}': {int(bad.sum())} NaN or infinite values in columns {columns}; "
            "drop or impute them in the loader"
        )
    constant = np.nonzero(np.ptp(X, axis=0) == 0)[0]
    X = np.delete(X, constant, axis=1)
    names = np.unique(labels.astype(str))
    y = np.searchsorted(names, labels.astype(str)).astype(np.int64)
    counts = np.bincount(y, minlength=len(names))
    meta = {
        "name": name,
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "n_classes": int(len(names)),
        "class_names": names.tolist(),
        "class_counts": counts.tolist(),
        "dropped_constant_features": constant.tolist(),
        "feature_names": (
            [f for j, f in enumerate(raw.feature_names) if j not in set(constant.tolist())]
            if raw.feature_names else None
        ),
        "sha256": array_sha256(X, y),
    }
    return X, y, meta


def build(name: str) -> Dataset:
    """Load data set `name` from its source, validate it and check it against the registry."""
    spec = registry.get(name)
    if spec.loader is None:
        raise ValueError(f"data set '{name}' has no loader: {spec.reason or 'not available'}")
    raw = spec.loader()
    X, y, meta = validate(name, raw)
    expected = (spec.n, spec.d, spec.n_classes)
    got = (meta["n"], meta["d"], meta["n_classes"])
    if got != expected:
        raise ValueError(
            f"data set '{name}': loaded (n, d, classes) = {got}, the registry expects {expected}"
        )
    meta.update(source=spec.source, papers=list(spec.papers), notes=spec.notes,
                dmlbench_version=__version__)
    if raw.given_split is not None:
        meta["_given_split"] = {k: np.asarray(v, dtype=np.int64) for k, v in raw.given_split.items()}
    return Dataset(name, X, y, meta)


def paths(name: str, cache_dir: str | Path) -> tuple[Path, Path]:
    base = Path(cache_dir) / "datasets"
    return base / f"{name}.npz", base / f"{name}.json"


def save(dataset: Dataset, cache_dir: str | Path) -> tuple[Path, Path]:
    """Write the arrays, then the metadata (the metadata's presence marks a complete entry)."""
    npz_path, json_path = paths(dataset.name, cache_dir)
    arrays = {"X": dataset.X, "y": dataset.y}
    given = dataset.meta.get("_given_split")
    if given is not None:
        arrays.update({f"split_{k}": v for k, v in given.items()})
    write_npz(npz_path, **arrays)
    write_json(json_path, {k: v for k, v in dataset.meta.items() if not k.startswith("_")})
    return npz_path, json_path


def load(name: str, cache_dir: str | Path) -> Dataset:
    """Read a cached data set and check its arrays against the recorded sha256."""
    npz_path, json_path = paths(name, cache_dir)
    if not (npz_path.exists() and json_path.exists()):
        raise FileNotFoundError(
            f"data set '{name}' is not in the cache {Path(cache_dir) / 'datasets'}; "
            f"run `dmlbench dataset {name}` (the workflow's dataset rule does this)"
        )
    meta = read_json(json_path)
    with np.load(npz_path) as npz:
        X, y = npz["X"], npz["y"]
        given = {k[len("split_"):]: npz[k] for k in npz.files if k.startswith("split_")}
    if array_sha256(X, y) != meta["sha256"]:
        raise ValueError(
            f"cached data set '{name}' ({npz_path}) does not match its recorded sha256; "
            "delete both cache files and rerun"
        )
    if given:
        meta["_given_split"] = given
    return Dataset(name, X, y, meta)


def ensure(name: str, cache_dir: str | Path) -> Dataset:
    """The cached data set, built and cached first if it is not there."""
    try:
        return load(name, cache_dir)
    except FileNotFoundError:
        dataset = build(name)
        save(dataset, cache_dir)
        return load(name, cache_dir)
