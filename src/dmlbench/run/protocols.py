"""Split protocols: stratified holdout R x p, (repeated) stratified k-fold, leave-one-out, and
the data set's given train/test split. Splits are index arrays, saved so that anyone can recompute any number.

A protocol is a dict from the config, e.g. ``{"kind": "holdout", "repeats": 4,
"train_fraction": 0.7}``, ``{"kind": "kfold", "folds": 10}``, ``{"kind": "loo"}`` (N splits, each
testing one sample on the N - 1 others; the gene-expression sets of Chang 2012) or
``{"kind": "given"}``, or ``{"kind": "given_folds"}``: the data set's published cross-validation
folds (e.g. KEEL's DOB-SCV files, `dmlbench.data.keel`), one split per fold, whose index arrays
keep the order of the published files (the other protocols sort them).

A learning curve (`train_sizes`) subsamples each split's training part (`subsample`): nested
(each size a prefix of one stratified order of the training part, drawn from the seed and the
split's index, so a smaller subsample is a subset of every larger one) and stratified, with the
split's test part unchanged; each size's splits are a split file of their own.
"""

from __future__ import annotations

import functools
import json
import math
import os
import zipfile
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedShuffleSplit

from ..files import write_npz

KINDS = ("holdout", "kfold", "loo", "given", "given_folds")


@dataclass
class Split:
    """One train/test partition: indices into the data set."""

    index: int
    train: np.ndarray
    test: np.ndarray


def protocol_id(protocol: dict, seed: int) -> str:
    """A readable, unique file name for a protocol and seed, e.g. ``holdout-p0.7-r4-seed0``."""
    kind = protocol["kind"]
    if kind in ("given", "given_folds"):
        return kind
    parts = [f"{_ABBREV.get(k, k)}{v}" for k, v in sorted(protocol.items()) if k != "kind"]
    return "-".join([kind, *parts, f"seed{seed}"])


_ABBREV = {"repeats": "r", "train_fraction": "p", "folds": "k", "train_size": "n", "test_size": "t"}


def n_splits(protocol: dict, n_samples: int | None = None, n_folds: int | None = None) -> int:
    """How many splits a protocol makes (leave-one-out: one per sample, so `n_samples`; given
    folds: the data set's number of folds, `n_folds`)."""
    kind = protocol["kind"]
    if kind == "given_folds":
        if not n_folds:
            raise ValueError("protocol given_folds needs a data set with published folds "
                             "(n_folds is unknown)")
        return int(n_folds)
    if kind == "loo":
        if n_samples is None:
            raise ValueError("protocol loo makes one split per sample: n_samples is needed")
        return int(n_samples)
    if kind == "holdout":
        return int(protocol.get("repeats", 1))
    if kind == "kfold":
        return int(protocol["folds"]) * int(protocol.get("repeats", 1))
    if kind == "given":
        return 1
    raise ValueError(f"protocol.kind must be one of {KINDS}, got {kind!r}")


def make_splits(y: np.ndarray, protocol: dict, seed: int, given: dict | None = None,
                dataset: str = "?", drop_classes_below: int = 0,
                given_folds: list | None = None) -> list[Split]:
    """The splits of labels `y` under `protocol`, deterministic in `seed`.

    Every class needs at least two members (one per side); a `ValueError` names the data set and
    the class otherwise. Classes with fewer than `drop_classes_below` members are left out of
    every split (a documented choice per data set in the config); indices stay those of `y`.
    At least two classes must remain: a `ValueError` names the data set and the class counts.
    `given_folds` (the data set's published folds) is what protocol ``given_folds`` returns,
    in the files' order.
    """
    y = np.asarray(y)
    if protocol.get("kind") == "given_folds":
        return _given_folds(y, given_folds, dataset, drop_classes_below)
    if drop_classes_below:
        classes, counts = np.unique(y, return_counts=True)
        kept_counts(dict(zip(classes.tolist(), counts.tolist())), drop_classes_below, dataset)
        kept = np.flatnonzero(np.isin(y, classes[counts >= drop_classes_below]))
        if protocol.get("kind") == "given" and given is not None:
            given = {part: np.intersect1d(idx, kept) for part, idx in given.items()}
            return make_splits(y, protocol, seed, given=given, dataset=dataset)
        splits = make_splits(y[kept], protocol, seed, dataset=dataset)
        return [Split(s.index, kept[s.train], kept[s.test]) for s in splits]
    kind = protocol.get("kind")
    if kind not in KINDS:
        raise ValueError(f"protocol.kind must be one of {KINDS}, got {kind!r}")
    if kind == "given":
        if not given:
            raise ValueError(
                f"protocol 'given' needs a data set with its own train/test split; '{dataset}' "
                "has none (use holdout or kfold)"
            )
        return [Split(0, np.sort(given["train"]), np.sort(given["test"]))]
    classes, counts = np.unique(y, return_counts=True)
    check_stratifiable(dict(zip(classes.tolist(), counts.tolist())), dataset)
    if kind == "loo":
        everyone = np.arange(len(y))
        return [Split(i, np.delete(everyone, i), everyone[i:i + 1]) for i in range(len(y))]
    X_dummy = np.zeros((len(y), 1))
    if kind == "holdout":
        size = _holdout_sizes(protocol, len(y), len(classes), dataset)
        splitter = StratifiedShuffleSplit(n_splits=n_splits(protocol), random_state=seed, **size)
    else:
        folds = _folds(protocol, len(y))
        splitter = RepeatedStratifiedKFold(n_splits=folds, n_repeats=int(protocol.get("repeats", 1)),
                                           random_state=seed)
    return [Split(i, np.sort(tr), np.sort(te))
            for i, (tr, te) in enumerate(splitter.split(X_dummy, y))]


def _given_folds(y: np.ndarray, folds: list | None, dataset: str, drop_classes_below: int):
    if not folds:
        raise ValueError(f"protocol 'given_folds' needs a data set with published folds; "
                         f"'{dataset}' has none (use kfold, or a keel-* data set)")
    keep = np.ones(len(y), dtype=bool)
    if drop_classes_below:
        classes, counts = np.unique(y, return_counts=True)
        keep = np.isin(y, classes[counts >= drop_classes_below])
    out = []
    for i, fold in enumerate(folds):
        train, test = (np.asarray(fold[part], dtype=np.int64) for part in ("train", "test"))
        if np.intersect1d(train, test).size or max(train.max(), test.max()) >= len(y):
            raise ValueError(f"data set '{dataset}': given fold {i} has overlapping or "
                             "out-of-range indices; rebuild the data set")
        out.append(Split(i, train[keep[train]], test[keep[test]]))
    return out


#: every subsample of a learning curve keeps this many points of each class (all of a smaller
#: one): a class with one training point leaves most methods nothing to learn within it
CURVE_MIN_PER_CLASS = 2


def nested_order(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An order of the positions 0..n-1 of `labels` whose every prefix is stratified: within
    class c (n_c points, in a random order), its j-th point gets the key (j + u) / n_c, u
    uniform in [0, 1), and the first `CURVE_MIN_PER_CLASS` of each class come before all
    others (key - 1); the order sorts the keys. A prefix of s points then holds, of each class,
    max(its floor, s n_c / n) points within about one on either side: the points of class c
    whose keys are below the prefix's last key t are those with j < t n_c, give or take the
    one whose interval [j, j + 1) / n_c holds t."""
    labels = np.asarray(labels)
    keys = np.empty(labels.size)
    for c in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == c))
        ranks = np.arange(members.size)
        key = (ranks + rng.random(members.size)) / members.size
        key[ranks < CURVE_MIN_PER_CLASS] -= 1.0
        keys[members] = key
    return np.argsort(keys, kind="stable")


def subsample(split: Split, y: np.ndarray, size: int, seed: int, dataset: str = "?") -> Split:
    """Split `split` with its training part cut to `size` points for a learning curve: the
    first `size` of `nested_order` of the training part (its random order drawn from
    [seed, split index], so every size of one split is a prefix of the same order: nested); the
    test part is kept. `ValueError` naming the data set when the training part is not larger,
    or too small a subsample to keep `CURVE_MIN_PER_CLASS` points of each class."""
    train = np.asarray(split.train)
    labels = np.asarray(y)[train]
    floor = sum(min(CURVE_MIN_PER_CLASS, n) for n in np.unique(labels, return_counts=True)[1])
    if not floor <= size < train.size:
        raise ValueError(
            f"data set '{dataset}', split {split.index}: a learning-curve size must be smaller "
            f"than the training part ({train.size} points) and hold {CURVE_MIN_PER_CLASS} "
            f"points of each class ({floor} points); got train_sizes entry {size}")
    order = nested_order(labels, np.random.default_rng([seed, split.index]))
    return Split(split.index, np.sort(train[order[:size]]), split.test)


def subsamples(splits: list[Split], y: np.ndarray, size: int, seed: int,
               dataset: str = "?") -> list[Split]:
    """`subsample` of every split."""
    return [subsample(s, y, size, seed, dataset) for s in splits]


def kept_counts(counts: dict, drop_classes_below: int, dataset: str = "?") -> dict:
    """{class: samples} of the classes every split keeps: those with at least
    `drop_classes_below` samples (all when 0). At least two must remain: a `ValueError` names
    the data set and the class counts otherwise."""
    kept = {c: n for c, n in counts.items() if n >= drop_classes_below}
    if len(kept) < 2:
        sizes = ", ".join(f"{c}: {n}" for c, n in counts.items())
        ordered = sorted(counts.values())
        hint = (f"drop_classes_below <= {ordered[-2]} keeps two" if len(ordered) >= 2
                else "this data set has a single class")
        raise ValueError(
            f"data set '{dataset}': drop_classes_below = {drop_classes_below} keeps "
            f"{len(kept)} of its {len(counts)} classes (samples per class: {sizes}); "
            f"k-NN classification needs at least two ({hint})")
    return kept


def check_stratifiable(counts: dict, dataset: str = "?") -> None:
    """A stratified split needs two classes and two samples of each (one per side)."""
    if len(counts) < 2:
        raise ValueError(f"data set '{dataset}' has a single class ({list(counts)}): k-NN "
                         "classification needs at least two")
    small = [c for c, n in counts.items() if n < 2]
    if small:
        raise ValueError(
            f"data set '{dataset}': classes {small} have fewer than 2 samples, so a stratified "
            "split cannot put them on both sides; set `drop_classes_below: 2` for this data set"
        )


def smallest_training_part(protocol: dict, n: int, n_classes: int,
                           given_train: int | None = None, dataset: str = "?") -> int:
    """The fewest training points a split of `protocol` has, for n samples in n_classes
    classes (after any class filter), with the errors `make_splits` raises for impossible
    sizes: holdout its `train_size` or round(train_fraction x n) (every split alike); k-fold
    n - ceil(n / folds) (scikit-learn's StratifiedKFold gives test fold i ceil((n - i) / folds)
    points, whatever the classes); leave-one-out n - 1; given: its training part
    (`given_train`, None when the data set has no split of its own); given folds: at most
    n - 1 (the published folds' sizes are not pinned, so this is an upper bound)."""
    kind = protocol["kind"]
    if kind == "given_folds":
        return n - 1
    if kind == "given":
        if given_train is None:
            raise ValueError(f"protocol 'given' needs a data set with its own train/test split; "
                             f"'{dataset}' has none (use holdout or kfold)")
        return int(given_train)
    if kind == "loo":
        return n - 1
    if kind == "holdout":
        return _holdout_sizes(protocol, n, n_classes, dataset)["train_size"]
    if kind == "kfold":
        return n - math.ceil(n / _folds(protocol, n))
    raise ValueError(f"protocol.kind must be one of {KINDS}, got {kind!r}")


def smallest_training_class(protocol: dict, counts: list[int]) -> int | None:
    """The fewest training points of one class a split of `protocol` has, for classes of
    `counts` samples (after any class filter): holdout floor(train_size x c / n) for the
    smallest class c (scikit-learn's StratifiedShuffleSplit gives each class at least that);
    k-fold c - ceil(c / folds) (StratifiedKFold puts floor or ceil of c / folds of a class in
    each test fold); leave-one-out c - 1. None for a given split or published folds, whose
    class counts are not pinned."""
    kind, c, n = protocol["kind"], min(counts), sum(counts)
    if kind == "loo":
        return c - 1
    if kind == "kfold":
        return c - math.ceil(c / _folds(protocol, n))
    if kind == "holdout":
        return _holdout_sizes(protocol, n, len(counts), "?")["train_size"] * c // n
    return None


def most_curve_points_of_class(protocol: dict, count: int, n: int, n_train: int,
                               size: int) -> int:
    """An upper bound of the training points of a class of `count` samples (of `n`) in a
    learning-curve subsample of `size` of a training part of at least `n_train` points: the
    training part holds at most ceil(n_train x count / n) + 1 of it for a holdout (scikit-learn's
    StratifiedShuffleSplit rounds each class's share), all `count` otherwise (a given split's
    class counts are not pinned), and `nested_order`'s prefix at most one more than its share
    of those, or `CURVE_MIN_PER_CLASS`; `count` for published folds, whose sizes are not
    pinned either."""
    if protocol["kind"] == "given_folds":
        return count
    in_part = count
    if protocol["kind"] == "holdout":
        in_part = min(count, math.ceil(n_train * count / n) + 1)
    share = math.ceil(size * in_part / n_train) + 1
    return min(in_part, max(CURVE_MIN_PER_CLASS, share))


def _folds(protocol: dict, n: int) -> int:
    folds = int(protocol["folds"])
    if folds < 2 or folds > n:
        raise ValueError(f"protocol.folds must be in [2, n = {n}], got {folds}")
    return folds


def _holdout_sizes(protocol: dict, n: int, n_classes: int, dataset: str) -> dict:
    if "train_size" in protocol:
        train = int(protocol["train_size"])
        test = int(protocol.get("test_size", n - train))
    else:
        fraction = float(protocol.get("train_fraction", 0.7))
        if not 0 < fraction < 1:
            raise ValueError(f"protocol.train_fraction must be in (0, 1), got {fraction}")
        train = int(round(fraction * n))
        test = n - train
    if train < n_classes or test < n_classes or train + test > n:
        raise ValueError(
            f"data set '{dataset}' (n = {n}, {n_classes} classes): holdout sizes train = {train}, "
            f"test = {test} are impossible (each side needs one sample per class, sum <= n)"
        )
    return {"train_size": train, "test_size": test}


def save_splits(path, splits: list[Split], protocol: dict, seed: int, dataset_sha256: str,
                train_size: int | None = None) -> None:
    """Save splits as `train_<i>`/`test_<i>` index arrays plus the protocol (and the
    learning-curve size of subsampled training parts, `subsamples`), atomically."""
    arrays = {}
    for s in splits:
        arrays[f"train_{s.index}"] = s.train
        arrays[f"test_{s.index}"] = s.test
    info = {"protocol": protocol, "seed": seed, "dataset_sha256": dataset_sha256,
            "n_splits": len(splits)}
    if train_size is not None:
        info["train_size"] = int(train_size)
    write_npz(path, info=np.array(json.dumps(info, sort_keys=True)), **arrays)


def load_split(path, index: int) -> tuple[Split, dict]:
    """Split `index` from a saved split file, with the file's protocol information."""
    npz, info = _open_split_file(*_file_identity(path))
    if f"train_{index}" not in npz.files:
        raise IndexError(f"{path} has {info['n_splits']} splits; split {index} does not exist")
    return Split(index, npz[f"train_{index}"], npz[f"test_{index}"]), dict(info)


def is_split_file_of(path, protocol: dict, seed: int, dataset_sha256: str,
                     train_size: int | None = None) -> bool:
    """Whether `path` is a readable split file made with this protocol and seed from the data
    set of this sha256: the splits `make_splits` gives them (its name says the class filter,
    `dmlbench.run.plan.split_id`), subsampled to `train_size` (a learning curve's size; None:
    the full training parts). Neither prepare nor the jobs go by its time: the workflow
    touches every split file of a config whenever its prepare step runs."""
    try:
        _, info = _open_split_file(*_file_identity(path))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return False
    return (info.get("protocol") == protocol and info.get("seed") == seed
            and info.get("dataset_sha256") == dataset_sha256
            and info.get("train_size") == train_size)


def _file_identity(path) -> tuple[str, int, int, int]:
    stat = os.stat(path)
    return str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns


@functools.lru_cache(maxsize=2)
def _open_split_file(path: str, inode: int, size: int, mtime_ns: int):
    """A split file, opened once per version of it (its identity is the key): opening reads
    the zip directory of all its splits, 7 ms for the 300 of a leave-one-out job, and a job
    reads its splits one by one. Split files are written by rename, never in place."""
    npz = np.load(path)
    return npz, json.loads(str(npz["info"]))
