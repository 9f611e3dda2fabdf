"""Embedded data sets: shapes, class counts, generators against their definitions, the validation
and cache rules, and the registry's coverage of the five papers' data-set tables."""

import itertools
from pathlib import Path

import numpy as np
import pytest
from loopback import uci_dir

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
    "monks-1-432": (432, 6, [216, 216]),  # monks.names: the test sets' class balance
    "monks-2-432": (432, 6, [290, 142]),
    "monks-3-432": (432, 6, [204, 228]),
    "monks-1": (556, 6, None),  # 124 + 432 (training labels drawn by seed: tested below)
    "monks-2": (601, 6, None),  # 169 + 432
    "monks-3": (554, 6, None),  # 122 + 432
    "tic-tac-toe": (958, 9, [332, 626]),  # UCI: negative 332, positive 626
    "spambase-keel": (4597, 57, None),
    "german-keel": (1000, 20, [700, 300]),  # UCI: good 700, bad 300
    "crings": (500, 3, [100] * 5),
    "waveform": (800, 21, None),
    "dexter": (300, 7751, [150, 150]),  # PROVENANCE.md: two classes; 12249 all-zero columns
}

UCI_DIR = uci_dir()


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
    # mnist-like takes minutes to build: test_mnist_like_has_mnists_shape_... tests its generator
    assert embedded - {"mnist-like"} <= set(EXPECTED)


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
def test_monks_partition_has_uci_sizes_concepts_and_noise(problem):
    raw = generators.monks_partition(problem, seed=0)
    train, test = raw.given_split["train"], raw.given_split["test"]
    assert (len(train), len(test)) == ({1: 124, 2: 169, 3: 122}[problem], 432)
    combos = {tuple(map(int, x)) for x in raw.X[test]}
    assert combos == set(itertools.product(*generators.MONKS_VALUES))  # all 432, once each
    assert len({tuple(x) for x in raw.X[train]}) == len(train)  # drawn without replacement
    truth = generators.monks_concept(problem, raw.X).astype(int).astype(str)
    np.testing.assert_array_equal(raw.y[test], truth[test])  # test labels noise free
    wrong = int(np.sum(raw.y[train] != truth[train]))
    assert wrong == (6 if problem == 3 else 0)  # UCI monks-3.train has 6 wrong labels
    again = generators.monks_partition(problem, seed=0)
    other = generators.monks_partition(problem, seed=1)
    np.testing.assert_array_equal(raw.X, again.X)
    assert not np.array_equal(raw.X[train], other.X[train])


def test_monks_given_split_reaches_the_cache_and_protocol(tmp_path):
    from dmlbench.run import protocols

    ds = data.ensure("monks-1", tmp_path)
    (split,) = protocols.make_splits(ds.y, {"kind": "given"}, 0, given=ds.given_split)
    assert (len(split.train), len(split.test)) == (124, 432)


@pytest.mark.parametrize("problem", [1, 2, 3])
def test_monks_generator_matches_uci_test_file(problem):
    path = UCI_DIR / "monks" / f"monks-{problem}.test"
    if not path.exists():
        pytest.skip(f"UCI reference file {path} not on this machine (set DMLBENCH_UCI_DIR)")
    A, labels = _read_monks(path)
    raw = generators.monks(problem)
    np.testing.assert_array_equal(raw.X, A)
    np.testing.assert_array_equal(raw.y.astype(int), labels)
    train = UCI_DIR / "monks" / f"monks-{problem}.train"
    A_train, y_train = _read_monks(train)
    truth = generators.monks_concept(problem, A_train).astype(int)
    assert int(np.sum(truth != y_train)) == (6 if problem == 3 else 0)  # the 5% noise


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


def test_crings_matches_chang_2012():
    raw = generators.crings(n_per_class=400, seed=3)
    X, labels = raw.X, raw.y
    radius = np.hypot(X[:, 0], X[:, 1])
    for k in range(1, 6):
        r = radius[labels == f"ring{k}"]
        assert r.size == 400
        assert r.min() >= 2 * k - 1.5 and r.max() <= 2 * k - 0.5  # one ring per class
    angle = np.arctan2(X[:, 1], X[:, 0])
    assert np.histogram(angle, bins=4, range=(-np.pi, np.pi))[0].min() > 400  # all around
    assert abs(X[:, 2].mean()) < 0.5 and abs(X[:, 2].std() - 5.0) < 0.3
    # "the main principal components of the samples cover the third dimension"
    top = np.linalg.eigh(np.cov(X.T))[1][:, -1]
    assert abs(top[2]) > 0.99


def test_waveform_class_means_and_variances_match_the_definition():
    n = 30000
    raw = generators.waveform(n, seed=1)
    i = np.arange(1, 22)
    h1 = np.maximum(6 - np.abs(i - 11), 0)  # ESL 12.7, written out independently
    h2, h3 = np.maximum(6 - np.abs(i - 15), 0), np.maximum(6 - np.abs(i - 7), 0)
    pairs = {"1": (h1, h2), "2": (h1, h3), "3": (h2, h3)}
    counts = {c: int(np.sum(raw.y == c)) for c in pairs}
    assert all(abs(m - n / 3) < 4 * np.sqrt(n * 2 / 9) for m in counts.values())
    for c, (ha, hb) in pairs.items():
        Xc = raw.X[raw.y == c]
        mean = (ha + hb) / 2  # E[u] = 1/2
        var = (ha - hb) ** 2 / 12 + 1  # Var(u) = 1/12, plus the N(0, 1) noise
        se = np.sqrt(var / len(Xc))
        assert np.all(np.abs(Xc.mean(0) - mean) < 5 * se)
        assert np.all(np.abs(Xc.var(0) / var - 1) < 0.1)


def test_waveform_definition_matches_uci_waveform_file():
    path = UCI_DIR / "waveform" / "waveform.data"
    if not path.exists():
        pytest.skip(f"UCI reference file {path} not on this machine (set DMLBENCH_UCI_DIR)")
    table = np.loadtxt(path, delimiter=",")
    h = generators.waveform_bases()
    for uci_class, ours in ((0, "3"), (1, "2"), (2, "1")):  # UCI class = 3 - ours
        a, b = generators.WAVEFORM_PAIRS[ours]
        Xc = table[table[:, 21] == uci_class, :21]
        assert np.abs(Xc.mean(0) - (h[a] + h[b]) / 2).max() < 0.15  # 5 standard errors


def test_gaussian_generator_definition():
    raw = generators.gaussian(50, n=3000, n_classes=3, separation=3.0, seed=2)
    assert raw.X.shape == (3000, 50)
    for c in range(3):
        Xc = raw.X[raw.y == f"c{c}"]
        expected = np.zeros(50)
        expected[c] = 3.0
        assert len(Xc) == 1000
        assert np.abs(Xc.mean(0) - expected).max() < 5 / np.sqrt(1000)
        assert np.abs(Xc.var(0) - 1).max() < 0.2


def test_gauss_data_show_hubness_growing_with_dimension():
    """Radovanovic et al. 2010: the N_k distribution of i.i.d. Gaussian data becomes skewed as d
    grows (measured here: N10 skewness about -0.2 at d = 3, 3 to 8 at d = 100)."""
    from dmlbench.measure import hubness, neighbours

    skew = {}
    for d in (3, 100):
        ds = data.build(f"gauss-d{d}")
        _, ind = neighbours.euclidean_kneighbors(ds.X, ds.X, 10, exclude_self=True)
        skew[d] = hubness.skewness(hubness.k_occurrence(ind, len(ds.X)))
    assert skew[3] < 0.5 < 2 < skew[100]


def test_mnist_like_has_mnists_shape_integer_pixels_and_balanced_classes():
    from dmlbench.data import generators

    spec = data.get("mnist-like")
    assert (spec.n, spec.d, spec.n_classes) == (70000, 784, 10)
    raw = generators.mnist_like(700, seed=3)
    assert raw.X.shape == (700, 784)
    assert raw.X.min() >= 0 and raw.X.max() <= 255
    np.testing.assert_array_equal(raw.X, np.rint(raw.X))
    labels, counts = np.unique(raw.y, return_counts=True)
    assert list(labels) == [str(c) for c in range(10)] and set(counts) == {70}
    np.testing.assert_array_equal(raw.X, generators.mnist_like(700, seed=3).X)
    assert not np.array_equal(raw.X, generators.mnist_like(700, seed=4).X)
    # the classes are separable by distance: 1-NN (scikit-learn) far above chance (0.1)
    from sklearn.neighbors import KNeighborsClassifier

    clf = KNeighborsClassifier(1).fit(raw.X[:600], raw.y[:600])
    assert clf.score(raw.X[600:], raw.y[600:]) > 0.5


def test_gauss_names_resolve_to_any_dimension():
    spec = data.get("gauss-d300")
    assert (spec.n, spec.d, spec.n_classes) == (1000, 300, 2)
    spec = data.get("gauss-d20-n90-c3-s4")
    assert (spec.n, spec.d, spec.n_classes) == (90, 20, 3)
    ds = data.build("gauss-d20-n90-c3-s4")
    assert ds.X.shape == (90, 20) and ds.meta["class_counts"] == [30, 30, 30]
    with pytest.raises(KeyError, match="classes <= d"):
        data.get("gauss-d2-c3")


def test_seeded_names_are_other_draws_of_the_random_generators():
    a, b = data.build("crings"), data.build("crings-s3")
    assert a.X.shape == b.X.shape and not np.allclose(a.X, b.X)
    np.testing.assert_array_equal(b.X, data.build("crings-s3").X)
    assert data.build("monks-2-s5").X.shape == (601, 6)
    with pytest.raises(KeyError, match="unknown data set 'iris-s1'"):
        data.get("iris-s1")


def test_registry_covers_every_data_set_of_the_five_papers():
    import csv

    from dmlbench.data.registry import PAPER_DATASET_NAMES

    tables = Path(__file__).resolve().parents[1] / "src/dmlbench/report/paper_tables"
    short = {"abou-moustafa-2017": "am17", "abou-moustafa-2007": "am07", "shigeto-2017": "sh17",
             "oneata-2011": "on11", "chang-2012": "ch12"}
    for stem, paper in short.items():
        with open(tables / f"{stem}_datasets.csv") as fh:
            rows = list(csv.DictReader(fh))
        assert {r["dataset"] for r in rows} == set(PAPER_DATASET_NAMES[stem]), stem
        for row in rows:
            spec = data.get(PAPER_DATASET_NAMES[stem][row["dataset"]])
            assert paper in spec.papers, (stem, row["dataset"])
            assert spec.available or spec.reason, spec.name
            assert int(row["n_classes"]) == spec.n_classes or spec.notes, (stem, row["dataset"])


def test_every_registered_set_is_embedded_downloadable_or_explains_why_not():
    for spec in data.REGISTRY.values():
        if spec.source == "download":
            assert spec.files and spec.group and spec.parse and all(f.urls for f in spec.files)
        elif spec.source == "debian":  # every file out of a Debian package of pinned sha256
            assert spec.files and spec.group and spec.parse
            assert all(f.debian and len(f.debian.package.sha256) == 64 and f.checksum
                       for f in spec.files)
        elif spec.source == "fetcher":
            assert spec.files and spec.fetch
        elif spec.source == "none":
            assert not spec.available and len(spec.reason) > 40
        else:
            assert spec.loader is not None


# Shapes and class counts of the UCI files in ../shared/data/uci, from its PROVENANCE.md (counted
# there independently of this code): built through the download path with the directory as mirror
MIRRORED = {
    "glass": (214, 9, {"1": 70, "2": 76, "3": 17, "5": 13, "6": 9, "7": 29}),
    "yeast": (1484, 8, {"CYT": 463, "ERL": 5, "EXC": 35, "ME1": 44, "ME2": 51, "ME3": 163,
                        "MIT": 244, "NUC": 429, "POX": 20, "VAC": 30}),
    "ecoli": (336, 7, {"cp": 143, "im": 77, "om": 20, "pp": 52, "imL": 2, "imS": 2, "imU": 35,
                       "omL": 5}),
    "new-thyroid": (215, 5, {"1": 150, "2": 35, "3": 30}),
    "lymphography": (148, 18, {"1": 2, "2": 81, "3": 61, "4": 4}),
    "page-blocks": (5473, 10, {"1": 4913, "2": 329, "3": 28, "4": 88, "5": 115}),
    "transfusion": (748, 4, {"0": 570, "1": 178}),
    "spectf": (80 + 187, 44, {"0": 40 + 15, "1": 40 + 172}),
    "parkinsons": (195, 22, {"0": 48, "1": 147}),
    "monks-1-uci": (124 + 432, 6, {"0": 62 + 216, "1": 62 + 216}),
    "monks-2-uci": (169 + 432, 6, {"0": 105 + 290, "1": 64 + 142}),
    "monks-3-uci": (122 + 432, 6, {"0": 62 + 204, "1": 60 + 228}),
    "waveform-uci": (5000, 21, {"0": 1657, "1": 1647, "2": 1696}),
}


@pytest.fixture(scope="module")
def mirrored_cache(tmp_path_factory):
    if not UCI_DIR.is_dir():
        pytest.skip(f"UCI reference files not on this machine ({UCI_DIR}; set DMLBENCH_UCI_DIR)")
    return tmp_path_factory.mktemp("mirrored")


@pytest.mark.parametrize("name", sorted(MIRRORED))
def test_downloaded_sets_from_the_uci_mirror_have_the_documented_shape(name, mirrored_cache):
    ds = data.ensure(name, mirrored_cache, mirror=UCI_DIR, offline=True)
    n, d, counts = MIRRORED[name]
    assert ds.X.shape == (n, d)
    assert dict(zip(ds.classes, ds.meta["class_counts"])) == counts
    spec = data.get(name)
    for file in spec.files:  # kept in the mirror layout, byte for byte
        kept = mirrored_cache / "downloads" / spec.group / file.name
        assert kept.read_bytes() == (UCI_DIR / spec.group / file.name).read_bytes()
    if name in ("spectf", "monks-1-uci"):
        assert len(ds.given_split["train"]) == {"spectf": 80, "monks-1-uci": 124}[name]


def test_glass_drops_the_id_column_and_keeps_the_values():
    if not UCI_DIR.is_dir():
        pytest.skip(f"UCI reference files not on this machine ({UCI_DIR})")
    raw = data.get("glass").parse({"glass.data": UCI_DIR / "glass" / "glass.data"})
    first = "1,1.52101,13.64,4.49,1.10,71.78,0.06,8.75,0.00,0.00,1".split(",")
    np.testing.assert_array_equal(raw.X[0], [float(v) for v in first[1:10]])
    assert raw.y[0] == "1"


def test_sparse_data_sets_round_trip_through_the_cache(tmp_path, monkeypatch):
    import scipy.sparse as sp

    X = sp.random(40, 300, density=0.05, random_state=1, format="csr")
    y = np.array(["a", "b"] * 20)
    spec = data.DatasetSpec("toy-sparse", "generator", 40, 300, 2, lambda: RawData(X, y),
                            sparse=True, keep_constant_features=True)
    monkeypatch.setitem(data.REGISTRY, "toy-sparse", spec)
    ds = data.ensure("toy-sparse", tmp_path)
    assert sp.issparse(ds.X) and ds.X.shape == (40, 300)
    np.testing.assert_array_equal(ds.X.toarray(), X.toarray())
    assert ds.meta["sha256"] == cache.array_sha256(sp.csr_matrix(X.toarray()), ds.y)
    dense = cache.array_sha256(X.toarray(), ds.y)
    assert dense != ds.meta["sha256"]  # sparse and dense hashes are not confused


def test_pinned_class_counts_and_array_sha256_are_checked(monkeypatch):
    spec = data.REGISTRY["crings"]
    bad = type(spec)(**{**spec.__dict__, "class_counts": {"ring1": 99}})
    monkeypatch.setitem(data.REGISTRY, "crings", bad)
    with pytest.raises(ValueError, match="class counts"):
        data.build("crings")
    bad = type(spec)(**{**spec.__dict__, "array_sha256": "0" * 64})
    monkeypatch.setitem(data.REGISTRY, "crings", bad)
    with pytest.raises(ValueError, match="the source's content differs"):
        data.build("crings")


def test_unavailable_sets_say_why():
    with pytest.raises(ValueError, match="not available: AR face database"):
        data.build("ar")


def test_a_job_runs_on_a_sparse_data_set_through_sparse_pca(tmp_path, monkeypatch):
    import scipy.sparse as sp

    from dmlbench import config
    from dmlbench.run import job, plan, protocols

    rng = np.random.default_rng(0)
    y = np.repeat(["a", "b"], 30)
    dense = rng.random((60, 200)) * (rng.random((60, 200)) < 0.05)
    dense[y == "b", :3] += 1.0  # the classes differ in three terms
    spec = data.DatasetSpec("toy-sparse", "generator", 60, 200, 2,
                            lambda: RawData(sp.csr_matrix(dense), y), sparse=True,
                            keep_constant_features=True)
    monkeypatch.setitem(data.REGISTRY, "toy-sparse", spec)
    cfg = plan.check({"benchmark": "t", "data": {"cache": str(tmp_path)},
                        "protocol": {"kind": "holdout", "repeats": 1, "train_fraction": 0.7},
                        "datasets": {"toy-sparse": {"preprocess": [{"pca": 5}, "center"]}},
                        "methods": {"euclidean": None}})
    ds = data.ensure("toy-sparse", tmp_path)
    protocol = config.dataset_protocol(cfg, "toy-sparse")
    splits = protocols.make_splits(ds.y, protocol, 0)
    protocols.save_splits(plan.split_path(cfg, "toy-sparse"), splits, protocol, 0,
                          ds.meta["sha256"])
    (record,) = job.run(plan.job_spec(cfg, "toy-sparse", "euclidean", [0]), progress=False)
    assert record["preprocess"]["d_in"] == 200 and record["preprocess"]["d_out"] == 5
    assert record["metrics"]["accuracy_k1"] > 0.8


def _dexter_sums(folder: Path) -> dict[str, str]:
    lines = (folder / "SHA256SUMS").read_text().splitlines()
    return {name: digest for digest, name in (line.split() for line in lines if line.strip())}


def test_dexter_ships_inside_the_package_with_licence_provenance_and_checksums():
    import hashlib
    import io
    import tomllib

    from conftest import REPO
    from sklearn.datasets import load_svmlight_file

    from dmlbench.data import embedded

    folder = embedded.DEXTER_DIR
    assert folder.parent == Path(data.__file__).parent  # inside the installed package
    assert {"LICENSE", "PROVENANCE.md", "ABOUT"} <= {p.name for p in folder.iterdir()}
    assert "BSD 3-Clause" in (folder / "LICENSE").read_text()
    sums = _dexter_sums(folder)
    assert sums == embedded.DEXTER_SHA256
    for name, digest in sums.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["dmlbench"]
    assert "data/dexter/*" in package_data
    # an independent parser: scikit-learn's svmlight reader, each line's label put in front
    lines = (folder / "dexter_train.data").read_text().splitlines()
    labels = (folder / "dexter_train.labels").read_text().split()
    text = "\n".join(f"{label} {line}" for label, line in zip(labels, lines))
    X, y = load_svmlight_file(io.BytesIO(text.encode()), n_features=20000, zero_based=False)
    raw = embedded.load_dexter()
    np.testing.assert_array_equal(raw.X, X.toarray())
    np.testing.assert_array_equal(raw.y.astype(float), y)


def test_a_damaged_dexter_copy_is_refused(tmp_path, monkeypatch):
    import shutil

    from dmlbench.data import embedded

    for path in embedded.DEXTER_DIR.iterdir():
        shutil.copy(path, tmp_path / path.name)
    damaged = tmp_path / "dexter_train.data"
    damaged.write_bytes(damaged.read_bytes().replace(b"10:105", b"10:106", 1))
    monkeypatch.setattr(embedded, "DEXTER_DIR", tmp_path)
    with pytest.raises(ValueError, match="damaged"):
        embedded.load_dexter()


def test_dexter_with_cosine_distances_shows_the_published_hubness():
    """Issue 18's reference figures for DEXTER, cosine distances, k = 5, every document against
    the 299 others: skewness of N_5 = 4.22, 26.7 % antihubs, 5-NN accuracy 80.33 %, computed
    with scikit-learn's cosine search and scipy's skewness (not dmlbench's)."""
    from scipy.stats import skew
    from sklearn.neighbors import NearestNeighbors

    ds = data.build("dexter")
    search = NearestNeighbors(n_neighbors=5, metric="cosine", algorithm="brute").fit(ds.X)
    ind = search.kneighbors()[1]  # no query given: each point's neighbours but itself
    nk = np.bincount(ind.ravel(), minlength=300)
    assert skew(nk) == pytest.approx(4.22, abs=0.005)
    assert np.mean(nk == 0) == pytest.approx(0.267, abs=0.0005)
    votes = ds.y[ind].sum(axis=1)  # labels 0/1, k = 5: no ties
    assert np.mean((votes >= 3) == ds.y) == pytest.approx(0.8033, abs=0.00005)


def test_given_split_sizes_are_pinned_and_checked(monkeypatch):
    """`given_train` (what config checks read before any job) is the training part's size."""
    for name in ("monks-1", "monks-2", "monks-3"):
        assert len(data.build(name).given_split["train"]) == data.REGISTRY[name].given_train
    spec = data.REGISTRY["monks-1"]
    monkeypatch.setitem(data.REGISTRY, "monks-1", type(spec)(**{**spec.__dict__,
                                                                "given_train": 125}))
    with pytest.raises(ValueError, match="training part of 124 rows, the registry expects 125"):
        data.build("monks-1")
    spec = data.REGISTRY["iris"]
    monkeypatch.setitem(data.REGISTRY, "iris", type(spec)(**{**spec.__dict__, "given_train": 100}))
    with pytest.raises(ValueError, match="training part of None rows, the registry expects 100"):
        data.build("iris")
