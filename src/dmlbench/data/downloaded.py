"""Parsers of the downloaded data sets: fetched files (by name) -> `RawData`.

Each function takes ``{file name: local path}`` for the files its registry entry lists and
documents the file layout it expects (the UCI ``.names`` files, the sources' READMEs). Encoding,
validation and the shape checks happen in `dmlbench.data.cache`, the same for every source.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import formats, keel
from .embedded import RawData

Paths = dict[str, Path]


def _columns(table: np.ndarray, label: str, features: slice | list, target: int,
             names: list[str] | None = None) -> RawData:
    X = formats.to_float(table[:, features], label)
    return RawData(X=X, y=table[:, target].astype(str), feature_names=names)


def _given(n_train: int, n_test: int) -> dict[str, np.ndarray]:
    return {"train": np.arange(n_train), "test": np.arange(n_train, n_train + n_test)}


def glass(paths: Paths) -> RawData:
    """glass.data: id, RI, Na, Mg, Al, Si, K, Ca, Ba, Fe, type (comma-separated). The id column
    is dropped (the rows are sorted by class, so it would give the class away)."""
    table = formats.read_table(paths["glass.data"])
    names = ["RI", "Na", "Mg", "Al", "Si", "K", "Ca", "Ba", "Fe"]
    return _columns(table, "glass.data", slice(1, 10), 10, names)


def yeast(paths: Paths) -> RawData:
    """yeast.data: sequence name, mcg, gvh, alm, mit, erl, pox, vac, nuc, class (whitespace)."""
    table = formats.read_table(paths["yeast.data"], sep=None)
    names = ["mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc"]
    return _columns(table, "yeast.data", slice(1, 9), 9, names)


def ecoli(paths: Paths) -> RawData:
    """ecoli.data: sequence name, mcg, gvh, lip, chg, aac, alm1, alm2, class (whitespace)."""
    table = formats.read_table(paths["ecoli.data"], sep=None)
    names = ["mcg", "gvh", "lip", "chg", "aac", "alm1", "alm2"]
    return _columns(table, "ecoli.data", slice(1, 8), 8, names)


def new_thyroid(paths: Paths) -> RawData:
    """new-thyroid.data: class (1 normal, 2 hyper, 3 hypo), then 5 lab tests (comma)."""
    table = formats.read_table(paths["new-thyroid.data"])
    names = ["T3_resin", "thyroxin", "triiodothyronine", "TSH", "TSH_diff"]
    return _columns(table, "new-thyroid.data", slice(1, 6), 0, names)


def lymphography(paths: Paths) -> RawData:
    """lymphography.data: class (1..4), then 18 integer-coded attributes (comma)."""
    table = formats.read_table(paths["lymphography.data"])
    return _columns(table, "lymphography.data", slice(1, 19), 0)


def page_blocks(paths: Paths) -> RawData:
    """page-blocks.data: 10 block features then class 1..5, fixed-width (whitespace)."""
    table = formats.read_table(paths["page-blocks.data"], sep=None)
    names = ["height", "length", "area", "eccen", "p_black", "p_and", "mean_tr", "blackpix",
             "blackand", "wb_trans"]
    return _columns(table, "page-blocks.data", slice(0, 10), 10, names)


def transfusion(paths: Paths) -> RawData:
    """transfusion.data: one header line, then recency, frequency, monetary, time, donated
    (comma; CRLF)."""
    table = formats.read_table(paths["transfusion.data"], skip_header=1)
    names = ["recency", "frequency", "monetary", "time"]
    return _columns(table, "transfusion.data", slice(0, 4), 4, names)


def spectf(paths: Paths) -> RawData:
    """SPECTF.train (80 rows) and SPECTF.test (187): class (0/1), then 44 counts (comma). The
    UCI partition is kept as the given split."""
    train = formats.read_table(paths["SPECTF.train"])
    test = formats.read_table(paths["SPECTF.test"])
    raw = _columns(np.vstack([train, test]), "SPECTF", slice(1, 45), 0)
    raw.given_split = _given(len(train), len(test))
    return raw


def parkinsons(paths: Paths) -> RawData:
    """parkinsons.data: header, then name, 16 voice measures, status (the class), 6 more."""
    table = formats.read_table(paths["parkinsons.data"], skip_header=1)
    header = formats.read_table(paths["parkinsons.data"])[0]
    status = list(header).index("status")
    features = [j for j in range(1, table.shape[1]) if j != status]
    return _columns(table, "parkinsons.data", features, status, [header[j] for j in features])


def monks_uci(problem: int):
    """monks-N.train then monks-N.test: class, a1..a6, id (whitespace); the UCI partition is
    kept as the given split (train rows first)."""

    def parse(paths: Paths) -> RawData:
        train = formats.read_table(paths[f"monks-{problem}.train"], sep=None)
        test = formats.read_table(paths[f"monks-{problem}.test"], sep=None)
        raw = _columns(np.vstack([train, test]), f"monks-{problem}", slice(1, 7), 0,
                       [f"a{j}" for j in range(1, 7)])
        raw.given_split = _given(len(train), len(test))
        return raw

    return parse


def waveform_uci(paths: Paths) -> RawData:
    """waveform.data: 21 features then class 0..2 (comma); 5000 rows."""
    table = formats.read_table(paths["waveform.data"])
    return _columns(table, "waveform.data", slice(0, 21), 21)


def spambase(paths: Paths) -> RawData:
    """spambase.data: 57 features then class (1 spam, 0 not), comma-separated."""
    table = formats.read_table(paths["spambase.data"])
    return _columns(table, "spambase.data", slice(0, 57), 57)


def german_numeric(paths: Paths) -> RawData:
    """german.data-numeric: 24 integer attributes then class (1 good, 2 bad), whitespace."""
    table = formats.read_table(paths["german.data-numeric"], sep=None)
    return _columns(table, "german.data-numeric", slice(0, 24), 24)


MNIST_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
               "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


def _mnist_arrays(paths: Paths):
    images = [formats.read_idx(paths[MNIST_FILES[i]]) for i in (0, 2)]
    labels = [formats.read_idx(paths[MNIST_FILES[i]]) for i in (1, 3)]
    for X, y, part in zip(images, labels, ("train", "test")):
        if X.shape[0] != y.shape[0] or X.shape[1:] != (28, 28):
            raise ValueError(f"MNIST {part}: images {X.shape} do not match labels {y.shape}")
    return images, labels


def mnist(paths: Paths) -> RawData:
    """The four MNIST idx files: 60000 + 10000 images of 28 x 28 (row-major pixels 0..255),
    the standard partition kept as the given split."""
    (Xtr, Xte), (ytr, yte) = _mnist_arrays(paths)
    X = np.vstack([Xtr.reshape(len(Xtr), -1), Xte.reshape(len(Xte), -1)]).astype(np.float64)
    raw = RawData(X=X, y=np.concatenate([ytr, yte]).astype(str))
    raw.given_split = _given(len(Xtr), len(Xte))
    return raw


def mnist_am17(seed: int = 0):
    """Abou-Moustafa 2017's MNIST training set: floor(n_c / 3) of the training images of each
    digit c, drawn by `seed` (19997 images), then the 10000 test images; given split."""

    def parse(paths: Paths) -> RawData:
        full = mnist(paths)
        n_train = len(full.given_split["train"])
        y_train = full.y[:n_train]
        rng = np.random.default_rng(seed)
        keep = np.sort(np.concatenate([
            rng.choice(np.flatnonzero(y_train == c), size=int(np.sum(y_train == c)) // 3,
                       replace=False)
            for c in np.unique(y_train)
        ]))
        rows = np.concatenate([keep, full.given_split["test"]])
        raw = RawData(X=full.X[rows], y=full.y[rows])
        raw.given_split = _given(len(keep), len(full.given_split["test"]))
        return raw

    return parse


FASHION_MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                       "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
#: Fashion-MNIST's label names (Xiao, Rasul & Vollgraf 2017, the README's table), by label
FASHION_MNIST_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal",
                         "Shirt", "Sneaker", "Bag", "Ankle boot")


def fashion_mnist(paths: Paths) -> RawData:
    """Fashion-MNIST's four idx files (decompressed): 60000 + 10000 images of 28 x 28, pixels
    0..255, labels 0..9 named as in its README; its partition kept as the given split. The
    images stay uint8 until the one float64 array is made (70000 x 784 x 8 B = 439 MB)."""
    images = [formats.read_idx(paths[FASHION_MNIST_FILES[i]]) for i in (0, 2)]
    labels = [formats.read_idx(paths[FASHION_MNIST_FILES[i]]) for i in (1, 3)]
    for X, y, part in zip(images, labels, ("train", "t10k")):
        if X.shape[0] != y.shape[0] or X.shape[1:] != (28, 28) or y.ndim != 1:
            raise ValueError(f"Fashion-MNIST {part}: images {X.shape} do not match labels "
                             f"{y.shape}")
        if y.size and y.max() >= len(FASHION_MNIST_CLASSES):
            raise ValueError(f"Fashion-MNIST {part}: label {int(y.max())} is not one of 0..9")
    n_train = len(images[0])
    X = np.empty((n_train + len(images[1]), 28 * 28), dtype=np.float64)
    X[:n_train] = images[0].reshape(n_train, -1)
    X[n_train:] = images[1].reshape(len(images[1]), -1)
    names = np.asarray(FASHION_MNIST_CLASSES, dtype=object)
    raw = RawData(X=X, y=names[np.concatenate(labels)].astype(str))
    raw.given_split = _given(n_train, len(images[1]))
    return raw


def r_frame(file_name: str, frame: str, target: str, given_train: int | None = None,
            class_codes: dict[str, str] | None = None):
    """An R data frame (`formats.read_rda`) as a data set: every column but `target` a feature
    (a factor feature, e.g. DNA's 0/1 indicators, by the number its level names), `target` the
    class (its level names, or `class_codes` {level: name}); with `given_train` the first that
    many rows are the training part of the given split (for frames whose row order is the
    published files', checked against them: docs/data.md)."""

    def parse(paths: Paths) -> RawData:
        names, columns = formats.read_rda(paths[file_name], frame)
        if target not in columns:
            raise ValueError(f"{file_name}: data frame {frame} has no column {target!r}")
        features = [c for c in names if c != target]
        X = np.column_stack([_factor_numbers(columns[c], f"{file_name}: {frame}${c}")
                             if columns[c].dtype == object else columns[c] for c in features])
        y = columns[target]
        if class_codes is not None:
            unknown = sorted(set(y.tolist()) - set(class_codes) - {None})
            if unknown:
                raise ValueError(f"{file_name}: classes {unknown} of {frame} have no code")
            y = np.array([None if v is None else class_codes[v] for v in y], dtype=object)
        raw = RawData(X=X, y=y, feature_names=features)
        if given_train is not None:
            raw.given_split = _given(given_train, len(y) - given_train)
        return raw

    return parse


def _factor_numbers(levels: np.ndarray, label: str) -> np.ndarray:
    """A factor whose level names are numbers, as those numbers (R's NA as NaN, which the
    cache's checks then name)."""
    text = np.where(np.equal(levels, None), "nan", levels)
    return formats.to_float(text.reshape(-1, 1), label).ravel()


def usps_esl(paths: Paths) -> RawData:
    """zip.train.gz (7291 rows) and zip.test.gz (2007) of The Elements of Statistical Learning:
    digit, then 256 grey values in [-1, 1] (16 x 16, row-major), whitespace-separated."""
    train = formats.read_table(paths["zip.train.gz"], sep=None)
    test = formats.read_table(paths["zip.test.gz"], sep=None)
    table = np.vstack([train, test])
    X = formats.to_float(table[:, 1:257], "zip")
    digits = formats.to_float(table[:, :1], "zip").ravel()
    raw = RawData(X=X, y=np.array([str(int(d)) for d in digits]))
    raw.given_split = _given(len(train), len(test))
    return raw


def usps_roweis(paths: Paths) -> RawData:
    """Roweis' usps_all.mat: `data` is 256 x 1100 x 10 uint8, page j holding digit j + 1 with
    page 10 the zeros (his data page). Every pixel is kept as given."""
    (data,) = formats.read_mat(paths["usps_all.mat"], "data")
    if data.shape != (256, 1100, 10):
        raise ValueError(f"usps_all.mat: 'data' has shape {data.shape}, expected (256, 1100, 10)")
    X = data.transpose(2, 1, 0).reshape(-1, 256).astype(np.float64)
    digits = np.repeat([(j + 1) % 10 for j in range(10)], 1100)
    return RawData(X=X, y=digits.astype(str))


def libsvm(file_name: str, n_features: int):
    """An svmlight/LIBSVM file (.bz2) with `n_features` features, as a dense array."""

    def parse(paths: Paths) -> RawData:
        X, y = formats.read_svmlight(paths[file_name], n_features=n_features)
        return RawData(X=X.toarray(), y=np.array([str(int(v)) for v in y]))

    return parse


def cai_mat(file_name: str, min_class_size: int = 0):
    """Deng Cai's document sets (.mat with sparse `fea`, documents x terms, and label vector
    `gnd`); classes with fewer than `min_class_size` documents are removed (Shigeto 2017 drops
    those under 10 from Reuters21578 and TDT2). Kept sparse."""

    def parse(paths: Paths) -> RawData:
        fea, gnd = formats.read_mat(paths[file_name], "fea", "gnd")
        X = sp.csr_matrix(fea, dtype=np.float64)
        y = np.asarray(gnd).ravel().astype(np.int64)
        if min_class_size:
            classes, counts = np.unique(y, return_counts=True)
            keep = np.isin(y, classes[counts >= min_class_size])
            X, y = X[keep], y[keep]
        return RawData(X=X, y=y.astype(str))

    return parse


def keel_folds(keel_name: str, folds: int = 10, scheme: str = "dobscv", missing: str = "error"):
    """KEEL's published folds ``<set>-<folds><scheme>-<i>tra.dat`` / ``tst.dat``, i = 1..folds,
    as one data set with its given folds (`dmlbench.data.keel.read_folds`: rows = fold 1's
    training part then its test part; nominal features coded by header position)."""
    def parse(paths: Paths) -> RawData:
        pairs = [(paths[f"{keel_name}-{folds}{scheme}-{i}tra.dat"],
                  paths[f"{keel_name}-{folds}{scheme}-{i}tst.dat"]) for i in range(1, folds + 1)]
        return keel.read_folds(pairs, missing=missing)

    return parse
