"""Build, validate and cache data sets as `<cache>/datasets/<name>.npz` plus `<name>.json`.

Handling, the same for every source:
- labels are encoded as 0..c-1 in sorted order of their string form; the names are kept;
- a non-numeric feature column without an encoding in the registry is an error;
- NaN or infinite values are an error naming the columns; so is a missing label (None, NaN or an
  empty string), which would otherwise become a class of its own;
- features constant over the whole data set are dropped and listed in the metadata
  (`dropped_constant_features`); they change no distance and break z-scoring. Image and
  document sets keep them (`keep_constant_features`: pixels must stay in place for image
  preprocessing; PCA ignores them); a data set whose features are all constant is an error
  (nothing would be left to tell its points apart);
- values so large that squared distances over the data set overflow are an error naming the
  column (`check_magnitude`);
- the result must match the registry's n, d and number of classes, and its class counts and
  array sha256 where the registry pins them.
Sparse sources (documents) stay scipy CSR matrices (`DatasetSpec.sparse`); their arrays are
saved as `X_data`, `X_indices`, `X_indptr`, `X_shape`.

Downloaded sources: the files are fetched (`dmlbench.data.download`) into a temporary directory
inside the cache, parsed and checked; only a data set that passes every check is saved, and its
files are then kept under `<cache>/downloads/<group>/` (the mirror layout, so a cache's
`downloads/` can serve as another machine's mirror). Any failure removes the temporary files,
and a temporary directory left by a killed build is removed by the next build on that host.
Every file is verified against its pin (`dmlbench.data.lock`: a published checksum or the lock
entry) when fetched and each time a kept copy is used; a kept copy that fails is deleted and
fetched again. A file without a pin is refused before it is parsed (`lock.UnpinnedFile`, naming
its sha256) unless `trust_unpinned`; a data set built from trusted unpinned files lists them
with their sha256 in its metadata (``unpinned``), which every record of it carries. Nothing is
written into the download lock. Files are written atomically, so an interrupted build leaves
nothing in the cache; temporary files and directories of killed builds are removed by the
next use of the cache on that host (`files.remove_stale_temporaries`).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._version import __version__
from ..files import read_json, remove_stale_temporaries, temporary_dir, write_json, write_npz
from . import download, lock, registry
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

    @property
    def given_folds(self) -> list[dict[str, np.ndarray]] | None:
        """Published cross-validation folds (`protocol: {kind: given_folds}`), in file order."""
        return self.meta.get("_given_folds")


def array_sha256(X, y: np.ndarray) -> str:
    """sha256 of the float64 features and int64 labels, C order; for a sparse X, of its
    canonical CSR arrays (data, indices, indptr) and shape."""
    h = hashlib.sha256()
    if sp.issparse(X):
        X = _canonical_csr(X)
        h.update(np.asarray(X.shape, dtype=np.int64).tobytes())
        for part, dtype in ((X.data, np.float64), (X.indices, np.int64), (X.indptr, np.int64)):
            h.update(np.ascontiguousarray(part, dtype=dtype))
    else:
        # the array's buffer, not a .tobytes() copy (a data set's size less in peak memory)
        h.update(np.ascontiguousarray(X, dtype=np.float64))
    h.update(np.ascontiguousarray(y, dtype=np.int64))
    return h.hexdigest()


def _canonical_csr(X) -> sp.csr_matrix:
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    X.eliminate_zeros()
    return X


def _validate_sparse(name: str, X, keep_constant: bool):
    X = _canonical_csr(X)
    bad = ~np.isfinite(X.data)
    if bad.any():
        columns = sorted(set(X.indices[bad].tolist()))
        raise ValueError(f"data set '{name}': {int(bad.sum())} NaN or infinite values in columns "
                         f"{columns[:20]}; drop or impute them in the loader")
    constant = np.array([], dtype=np.int64)
    if not keep_constant:
        span = X.max(axis=0).toarray().ravel() - X.min(axis=0).toarray().ravel()
        constant = np.flatnonzero(span == 0)
        if constant.size:
            X = X[:, np.setdiff1d(np.arange(X.shape[1]), constant)]
    return X, constant


def missing_labels(labels: np.ndarray) -> np.ndarray:
    """Which labels are missing: None, NaN or an empty string."""
    if labels.dtype.kind == "f":
        return np.isnan(labels)
    if labels.dtype.kind not in "OUS":
        return np.zeros(labels.shape, dtype=bool)
    return np.array([v is None or (isinstance(v, float) and v != v)
                     or (isinstance(v, (str, bytes)) and not v.strip()) for v in labels],
                    dtype=bool)


def validate(name: str, raw: RawData, keep_constant: bool = False):
    """Encode and check `raw`; return (X, y, metadata). Raises `ValueError` naming the problem.
    `keep_constant` keeps features that are constant over the data set."""
    X, labels = raw.X, np.asarray(raw.y)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"data set '{name}': features must be a non-empty 2-D array, got {X.shape}")
    if labels.shape[0] != X.shape[0]:
        raise ValueError(
            f"data set '{name}': {X.shape[0]} feature rows but {labels.shape[0]} labels"
        )
    missing = np.flatnonzero(missing_labels(labels))
    if missing.size:
        raise ValueError(f"data set '{name}': {missing.size} labels are missing (None, NaN or "
                         f"empty) at rows {missing[:10].tolist()}; give them a class or leave "
                         "those rows out")
    if sp.issparse(X):
        X, constant = _validate_sparse(name, X, keep_constant)
        return _encode(name, X, labels, constant, raw)
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
        named = (f" ({', '.join(raw.feature_names[j] for j in columns[:10])})"
                 if raw.feature_names else "")
        raise ValueError(
            f"data set '{name}': {int(bad.sum())} NaN or infinite values in columns {columns}"
            f"{named}; drop or impute them before loading"
        )
    constant = (np.array([], dtype=np.int64) if keep_constant
                else np.nonzero(np.ptp(X, axis=0) == 0)[0])
    if constant.size:  # np.delete copies even when nothing goes (439 MB for Fashion-MNIST)
        X = np.delete(X, constant, axis=1)
    return _encode(name, X, labels, constant, raw)


def check_magnitude(name: str, X, feature_names=None) -> None:
    """`ValueError` naming the column when a value's magnitude M reaches a bound where squared
    distances overflow float64: a distance's square over the d features is at most d (2M)^2,
    and sums of them over the n points (scatter matrices, variances, the search's norms) at
    most n d (2M)^2, which must stay below the largest float, so M <= sqrt(max / (4 n d))
    (about 7e148 for a million points with ten thousand features)."""
    n, d = X.shape
    values = X.data if sp.issparse(X) else X
    if values.size == 0:
        return
    top = max(float(values.max()), -float(values.min()))  # no |X| copy of a large data set
    bound = math.sqrt(np.finfo(np.float64).max / (4 * n * d))
    if top > bound:
        column = (int(X.indices[np.flatnonzero(np.abs(X.data) > bound)[0]]) if sp.issparse(X)
                  else int(np.nonzero((X > bound) | (X < -bound))[1].min()))
        named = f" ({feature_names[column]})" if feature_names else ""
        raise ValueError(f"data set '{name}': column {column}{named} holds values up to "
                         f"{top:.3g} in magnitude, beyond the {bound:.3g} at which squared "
                         f"distances over its {n} points and {d} features overflow float64 "
                         "(sqrt(max float / (4 n d))); rescale that column (e.g. divide it by "
                         "a power of ten, or give it in other units) in the data")


def _encode(name: str, X, labels: np.ndarray, constant: np.ndarray, raw: RawData):
    if X.shape[1] == 0:
        raise ValueError(f"data set '{name}': all {constant.size} features are constant (one "
                         "value in every row), and constant features are dropped: none is left "
                         "to tell its points apart; give it features that vary")
    dropped = set(constant.tolist())
    feature_names = ([f for j, f in enumerate(raw.feature_names) if j not in dropped]
                     if raw.feature_names else None)
    check_magnitude(name, X, feature_names)
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
        "feature_names": feature_names,
        "sha256": array_sha256(X, y),
    }
    return X, y, meta


def build(name: str, cache_dir: str | Path | None = None, mirror=None, offline: bool = False,
          trust_unpinned: bool = False, spec: registry.DatasetSpec | None = None,
          **fetch_options) -> Dataset:
    """Load data set `name` from its source, validate it and check it against the registry
    (or against `spec`, e.g. a data set given by a file: `dmlbench.data.from_file`).

    Embedded sources need no arguments. Downloaded sources need `cache_dir` (their files are
    kept there); `mirror` (a directory or base URL) is tried before the public homes, which
    `offline` skips; `trust_unpinned` accepts files the download lock cannot pin (module
    docstring). `fetch_options` (timeout, retries, backoff) go to
    `dmlbench.data.download.fetch`.
    """
    spec = spec or registry.get(name)
    if not spec.available:
        raise ValueError(f"data set '{name}' is not available: {spec.reason}")
    if spec.downloads and cache_dir is None:
        raise ValueError(f"data set '{name}' is downloaded: give the cache directory")
    if spec.downloads:
        unpinned: dict[str, str] = {}
        with _fetched_files(spec, Path(cache_dir), mirror, offline, fetch_options,
                            trust_unpinned, unpinned) as paths:
            dataset = _checked(spec, spec.parse(paths))
            _keep_files(spec, paths, Path(cache_dir))
        if unpinned:
            dataset.meta["unpinned"] = unpinned
        return dataset
    return _checked(spec, spec.loader())


def _checked(spec, raw: RawData) -> Dataset:
    name = spec.name
    X, y, meta = validate(name, raw, keep_constant=spec.keep_constant_features)
    expected = (spec.n, spec.d, spec.n_classes)
    got = (meta["n"], meta["d"], meta["n_classes"])
    if got != expected:
        raise ValueError(
            f"data set '{name}': loaded (n, d, classes) = {got}, the registry expects {expected}"
        )
    counts = dict(zip(meta["class_names"], meta["class_counts"]))
    if spec.class_counts is not None and counts != spec.class_counts:
        raise ValueError(
            f"data set '{name}': class counts {counts}, the registry expects {spec.class_counts}"
        )
    if spec.array_sha256 is not None and meta["sha256"] != spec.array_sha256:
        raise ValueError(
            f"data set '{name}': the loaded arrays have sha256 {meta['sha256']}, the registry "
            f"pins {spec.array_sha256}: the source's content differs from the checked version"
        )
    meta.update(source=spec.source, origin=spec.origin, papers=list(spec.papers),
                notes=spec.notes, dmlbench_version=__version__)
    if "file" in spec.extras:  # a data set given by a file: its name and sha256, the options
        meta["file"] = spec.extras["file"]
    if spec.image_shape is not None:
        meta["image_shape"] = list(spec.image_shape)
    given_train = None if raw.given_split is None else len(raw.given_split["train"])
    if given_train != spec.given_train:
        raise ValueError(f"data set '{name}': its own split has a training part of "
                         f"{given_train} rows, the registry expects {spec.given_train}")
    if raw.given_split is not None:
        meta["_given_split"] = {k: np.asarray(v, dtype=np.int64) for k, v in raw.given_split.items()}
    if raw.given_folds is not None:
        meta["_given_folds"] = [{k: np.asarray(v, dtype=np.int64) for k, v in fold.items()}
                                for fold in raw.given_folds]
        meta["given_folds"] = len(raw.given_folds)
    return Dataset(name, X, y, meta)


def downloads_dir(cache_dir: str | Path) -> Path:
    return Path(cache_dir) / "downloads"


@contextlib.contextmanager
def _fetched_files(spec, cache_dir: Path, mirror, offline: bool, fetch_options: dict,
                   trust_unpinned: bool = False, unpinned: dict | None = None):
    """The data set's files, from `<cache>/downloads/<group>/` when a copy there matches its pin,
    else fetched into a temporary directory that is removed on exit, whatever happens. A file
    without a pin is refused unless `trust_unpinned`; then its sha256 goes into `unpinned`."""
    base = downloads_dir(cache_dir)
    created = [d for d in (cache_dir, base) if not d.exists()]
    try:
        with temporary_dir(base, spec.name) as tmp:
            paths = {}
            for file in spec.files:
                file = lock.pinned(spec, file)
                kept = base / spec.group / file.name
                problem = kept.exists() and _check_kept(kept, file)
                if kept.exists():
                    paths[file.name] = kept
                else:
                    try:
                        paths[file.name] = download.fetch(
                            file, spec.group, tmp / file.name, mirror=mirror, offline=offline,
                            content_pinned=spec.array_sha256 is not None,
                            archive_dir=tmp / ".archives", **fetch_options)
                    except download.DownloadError as err:
                        if problem:
                            raise download.DownloadError(
                                f"{err}\n(the kept copy {kept} failed its check ({problem}) "
                                "and was deleted)") from None
                        raise
                if lock.pin_of(spec, file) == "unpinned":
                    sha256 = download.checksum_of(paths[file.name], "sha256")
                    if not trust_unpinned:
                        raise lock.refusal(spec, file, sha256)
                    if unpinned is not None:
                        unpinned[lock.key(spec, file)] = f"sha256:{sha256}"
            yield paths
    finally:
        for d in reversed(created):  # leave no empty directory behind either
            with contextlib.suppress(OSError):
                d.rmdir()


def verified(path: Path, file) -> bool:
    """Whether `path` matches the pin of `file` (no pin: True); a file that does not is
    deleted."""
    return not _check_kept(path, file)


def _check_kept(path: Path, file) -> str:
    """'' when `path` matches the pin of `file`; else delete it and say why."""
    try:
        download.verify_checksum(path, file.checksum, file.name)
        return ""
    except ValueError as err:
        path.unlink(missing_ok=True)
        return str(err)


def _keep_files(spec, paths: dict[str, Path], cache_dir: Path) -> None:
    """Move freshly fetched files into `<cache>/downloads/<group>/` (atomic renames)."""
    target = downloads_dir(cache_dir) / spec.group
    for file in spec.files:
        path = paths[file.name]
        if path.parent != target:
            target.mkdir(parents=True, exist_ok=True)
            os.replace(path, target / file.name)


def paths(name: str, cache_dir: str | Path) -> tuple[Path, Path]:
    base = Path(cache_dir) / "datasets"
    return base / f"{name}.npz", base / f"{name}.json"


def save(dataset: Dataset, cache_dir: str | Path) -> tuple[Path, Path]:
    """Write the arrays, then the metadata (the metadata's presence marks a complete entry)."""
    npz_path, json_path = paths(dataset.name, cache_dir)
    if sp.issparse(dataset.X):
        X = _canonical_csr(dataset.X)
        arrays = {"X_data": X.data, "X_indices": X.indices, "X_indptr": X.indptr,
                  "X_shape": np.asarray(X.shape, dtype=np.int64), "y": dataset.y}
    else:
        arrays = {"X": dataset.X, "y": dataset.y}
    given = dataset.meta.get("_given_split")
    if given is not None:
        arrays.update({f"split_{k}": v for k, v in given.items()})
    for i, fold in enumerate(dataset.meta.get("_given_folds") or []):
        arrays.update({f"fold{i}_{k}": v for k, v in fold.items()})
    write_npz(npz_path, **arrays)
    write_json(json_path, {k: v for k, v in dataset.meta.items() if not k.startswith("_")})
    return npz_path, json_path


def load(name: str, cache_dir: str | Path) -> Dataset:
    """Read a cached data set and check its arrays against the recorded sha256."""
    npz_path, json_path = paths(name, cache_dir)
    for directory in (npz_path.parent, downloads_dir(cache_dir)):
        remove_stale_temporaries(directory)
    if not (npz_path.exists() and json_path.exists()):
        raise FileNotFoundError(
            f"data set '{name}' is not in the cache {Path(cache_dir) / 'datasets'}; "
            f"run `dmlbench dataset {name}` (the workflow's prepare step does this)"
        )
    meta = read_json(json_path)
    with np.load(npz_path) as npz:
        y = npz["y"]
        if "X" in npz.files:
            X = npz["X"]
        else:
            X = sp.csr_matrix((npz["X_data"], npz["X_indices"], npz["X_indptr"]),
                              shape=tuple(npz["X_shape"]))
        given = {k[len("split_"):]: npz[k] for k in npz.files if k.startswith("split_")}
        folds = [{part: npz[f"fold{i}_{part}"] for part in ("train", "test")}
                 for i in range(int(meta.get("given_folds", 0)))]
    if array_sha256(X, y) != meta["sha256"]:
        raise ValueError(
            f"cached data set '{name}' ({npz_path}) does not match its recorded sha256; "
            "delete both cache files and rerun"
        )
    if given:
        meta["_given_split"] = given
    if folds:
        meta["_given_folds"] = folds
    return Dataset(name, X, y, meta)


def ensure(name: str, cache_dir: str | Path, mirror=None, offline: bool = False,
           trust_unpinned: bool = False, spec: registry.DatasetSpec | None = None,
           **fetch_options) -> Dataset:
    """The cached data set, built and cached first if it is not there (see `build`; `spec`
    for a data set that is not registered). A cached set built from unpinned files is refused
    unless `trust_unpinned` (`lock.UnpinnedFile`)."""
    try:
        dataset = load(name, cache_dir)
    except FileNotFoundError:
        # built, saved and let go before it is read back: one copy of the arrays at a time
        save(build(name, cache_dir, mirror=mirror, offline=offline,
                   trust_unpinned=trust_unpinned, spec=spec, **fetch_options), cache_dir)
        return load(name, cache_dir)
    if dataset.meta.get("unpinned") and not trust_unpinned:
        files = ", ".join(f"{k} ({v})" for k, v in dataset.meta["unpinned"].items())
        raise lock.UnpinnedFile(
            f"cached data set '{name}' was built from files without a pin: {files}; it is "
            f"refused unless you pass {lock.TRUST_OPTION} (its records are marked unpinned), "
            f"or delete {paths(name, cache_dir)[1]} and its .npz to rebuild it from pinned files")
    return dataset
