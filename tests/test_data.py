"""Embedded data sets: shapes, class counts, generators against their UCI definitions, and the
validation and cache rules."""

import itertools
import os
from pathlib import Path

import numpy as np
import pytest

from dmlbench import data
from dmlbench.data import cache, generators
from dmlbench.data.embedded import RawData

# class counts as documented by UCI / the source package (independent of our loaders)
EXPECTED = {
    "iris": (150, 4, [50, 50, 50]),
    "wine": (178, 13, [59, 71, 48]),
    "wdbc": (569, 30, [212, 357]),  # malignant, benign
    "digits": (1797, 61, None),
    "ionosphere": (351, 33, [126, 225]),  # bad, good
    "pima": (768, 8, [500, 268]),
    "bupa": (345, 6, [145, 200]),
    "housevotes": (232, 16, [124, 108]),  # democrat, republican (complete rows only)
    "segment": (2310, 18, [330] * 7),
    "satimage": (6435, 36, [1533, 703, 1358, 626, 707, 1508]),
    "magic": (19020, 10, [12332, 6688]),  # gamma, hadron
    "balance-scale": (625, 4, [49, 288, 288]),  # B, L, R
    "monks-1": (432, 6, [216, 216]),
    "monks-2": (432, 6, [290, 142]),
    "monks-3": (432, 6, [204, 228]),
}

def _uci_dir() -> Path:
    """The team's copies of UCI files (../shared/data/uci), used only as test references."""
    candidates = [os.environ.get("DMLBENCH_UCI_DIR"),
                  Path(__file__).resolve().parents[2] / "shared" / "data" / "uci",
                  "/work/shared/data/uci"]
    for candidate in filter(None, candidates):
        if Path(candidate).is_dir():
            return Path(candidate)
    return Path("/nonexistent")


UCI_DIR = _uci_dir()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_embedded_shape_and_class_counts(name):
    ds = data.build(name)
    n, d, counts = EXPECTED[name]
    assert ds.X.shape == (n, d)
    assert ds.X.dtype == np.float64 and np.isfinite(ds.X).all()
    if counts is not None:
        assert sorted(np.bincount(ds.y).tolist()) == sorted(counts)
    assert ds.meta["class_counts"] == np.bincount(ds.y).tolist()


def test_every_embedded_registry_entry_is_tested():
    embedded = {name for name, spec in data.REGISTRY.items() if spec.embedded}
    assert embedded <= set(EXPECTED)


def test_wdbc_and_housevotes_label_names():
    assert data.build("wdbc").classes == ["benign", "malignant"]
    assert data.build("housevotes").classes == ["democrat", "republican"]


def test_balance_scale_is_the_uci_definition():
    raw = generators.balance_scale()
    rows = {tuple(map(int, x)): c for x, c in zip(raw.X, raw.y)}
    assert len(rows) == 625 == 5**4
    # hand-checked rows of UCI balance-scale.data
    assert rows[(1, 1, 1, 1)] == "B"
    assert rows[(1, 1, 1, 2)] == "R"
    assert rows[(5, 5, 5, 3)] == "L"
    assert rows[(2, 3, 3, 2)] == "B"
    assert rows[(4, 2, 1, 5)] == "L"
    labels, counts = np.unique(raw.y, return_counts=True)
    assert dict(zip(labels, counts)) == {"B": 49, "L": 288, "R": 288}


def _read_monks(path):
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return np.array([[int(v) for v in r[1:7]] for r in rows]), np.array([int(r[0]) for r in rows])


def test_monks_concepts_by_hand():
    A = np.array([[1, 1, 1, 1, 2, 1],   # a1 = a2 -> M1; two ones? a1,a2,a3,a4,a6 = 1 -> 5 ones
                  [2, 3, 1, 2, 1, 2],   # a5 = 1 -> M1; ones: a3, a5 -> M2; a5 != 4, a2 = 3 -> not M3
                  [3, 2, 2, 1, 3, 2],   # M3 by a5 = 3 and a4 = 1
                  [3, 2, 2, 2, 4, 2]])  # none of the three
    assert generators.monks_concept(1, A).tolist() == [True, True, False, False]
    assert generators.monks_concept(2, A).tolist() == [False, True, False, False]
    assert generators.monks_concept(3, A).tolist() == [True, False, True, False]


@pytest.mark.parametrize("problem", [1, 2, 3])
def test_monks_generator_covers_the_432_combinations(problem):
    raw = generators.monks(problem)
    combos = {tuple(map(int, x)) for x in raw.X}
    assert combos == set(itertools.product(*generators.MONKS_VALUES))


@pytest.mark.parametrize("problem", [1, 2, 3])
def test_monks_generator_matches_uci_test_file(problem):
    path = UCI_DIR / "monks" / f"monks-{problem}.test"
    if not path.exists():
        pytest.skip(f"UCI reference file {path} not on this machine (set DMLBENCH_UCI_DIR)")
    A, labels = _read_monks(path)
    raw = generators.monks(problem)
    np.testing.assert_array_equal(raw.X, A)
    np.testing.assert_array_equal(raw.y.astype(int), labels)


def test_balance_generator_matches_uci_file():
    path = UCI_DIR / "balance-scale" / "balance-scale.data"
    if not path.exists():
        pytest.skip(f"UCI reference file {path} not on this machine (set DMLBENCH_UCI_DIR)")
    rows = [line.split(",") for line in path.read_text().split()]
    raw = generators.balance_scale()
    np.testing.assert_array_equal(raw.X, np.array([[float(v) for v in r[1:]] for r in rows]))
    np.testing.assert_array_equal(raw.y, np.array([r[0] for r in rows]))


def test_validation_rejects_nan():
    X = np.array([[1.0, np.nan], [2.0, 3.0]])
    with pytest.raises(ValueError, match=r"NaN or infinite values in columns \[1\]"):
        cache.validate("toy", RawData(X, np.array(["a", "b"])))


def test_validation_rejects_non_numeric_columns():
    X = np.array([[1.0, "red"], [2.0, "blue"]], dtype=object)
    with pytest.raises(ValueError, match="column 1 is not numeric"):
        cache.validate("toy", RawData(X, np.array(["a", "b"])))


def test_validation_drops_constant_features_and_says_so():
    X = np.array([[1.0, 5.0, 0.0], [2.0, 5.0, 1.0], [3.0, 5.0, 0.0]])
    Xv, y, meta = cache.validate("toy", RawData(X, np.array(["b", "a", "b"])))
    assert Xv.shape == (3, 2)
    assert meta["dropped_constant_features"] == [1]
    assert y.tolist() == [1, 0, 1] and meta["class_names"] == ["a", "b"]


def test_validation_rejects_label_count_mismatch():
    with pytest.raises(ValueError, match="3 feature rows but 2 labels"):
        cache.validate("toy", RawData(np.zeros((3, 2)), np.array(["a", "b"])))


def test_unknown_dataset_names_close_matches():
    with pytest.raises(KeyError, match="Did you mean ionosphere"):
        data.get("ionosphre")


def test_cache_roundtrip_and_sha_check(tmp_path):
    ds = data.ensure("iris", tmp_path)
    again = data.load("iris", tmp_path)
    np.testing.assert_array_equal(ds.X, again.X)
    npz, meta = cache.paths("iris", tmp_path)
    assert sorted(p.name for p in npz.parent.iterdir()) == ["iris.json", "iris.npz"]
    X = again.X.copy()
    X[0, 0] += 1
    np.savez(npz, X=X, y=again.y)
    with pytest.raises(ValueError, match="does not match its recorded sha256"):
        data.load("iris", tmp_path)


def test_failed_build_leaves_nothing_in_cache(tmp_path, monkeypatch):
    def broken():
        raise RuntimeError("interrupted")

    spec = data.REGISTRY["iris"]
    monkeypatch.setitem(data.REGISTRY, "iris", type(spec)(**{**spec.__dict__, "loader": broken}))
    with pytest.raises(RuntimeError):
        data.ensure("iris", tmp_path)
    assert not (tmp_path / "datasets").exists() or not any((tmp_path / "datasets").iterdir())


def test_registry_shape_mismatch_is_an_error(monkeypatch):
    spec = data.REGISTRY["iris"]
    monkeypatch.setitem(data.REGISTRY, "iris", type(spec)(**{**spec.__dict__, "n": 151}))
    with pytest.raises(ValueError, match=r"registry expects \(151, 4, 3\)"):
        data.build("iris")
