"""The download path end to end against a loopback HTTP server: success, checksum mismatch,
truncated body, timeout, 404 (each leaving no file in the cache and a clear message), retries,
mirror as a directory and as a URL, offline without a mirror, the availability check, .Z files,
20 Newsgroups from its verified archive (never a foreign pickle), the download lock, plain-http
mirrors, a killed download's leftovers, and the file-format readers."""

import bz2
import gzip
import hashlib
import io
import json
import shutil
import struct
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from loopback import serve, uci_dir

from dmlbench import data
from dmlbench.data import availability, download, downloaded, fetchers, formats, lock
from dmlbench.data.embedded import RawData
from dmlbench.data.spec import DatasetSpec, RemoteFile

HERE = Path(__file__).resolve().parent
UCI_DIR = uci_dir()
TOY_CSV = "".join(f"{i},{i % 7 * 0.5},{'ab'[i % 2]}\n" for i in range(30)).encode()
FAST = {"timeout": (2.0, 0.3), "retries": 1, "backoff": 0.01}


def _toy_parse(paths):
    table = formats.read_table(paths["toy.csv"])
    return RawData(X=formats.to_float(table[:, :2], "toy"), y=table[:, 2])


TOY_PIN = "sha256:" + hashlib.sha256(TOY_CSV).hexdigest()


def toy_spec(urls=(), checksum=TOY_PIN, n=30) -> DatasetSpec:
    return DatasetSpec("toy-dl", "download", n, 2, 2,
                       files=(RemoteFile("toy.csv", urls, checksum),), group="toy",
                       parse=_toy_parse, class_counts={"a": 15, "b": 15})


@pytest.fixture
def site(tmp_path):
    """A served directory holding toy/toy.csv (and the UCI copies, when on this machine)."""
    root = tmp_path / "site"
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "toy.csv").write_bytes(TOY_CSV)
    shutil.copy(HERE / "data" / "table.csv.Z", root / "toy" / "table.csv.Z")
    with serve(root, slow_seconds=1.5) as (base, requests):
        yield root, base, requests


@pytest.fixture
def toy(monkeypatch):
    def register(spec):
        monkeypatch.setitem(data.REGISTRY, spec.name, spec)
        return spec
    return register


def files_in(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file()) if directory.exists() else []


def test_download_from_mirror_url_builds_caches_and_keeps_the_file(site, toy, tmp_path):
    root, base, requests = site
    toy(toy_spec())
    cache_dir = tmp_path / "cache"
    ds = data.ensure("toy-dl", cache_dir, mirror=f"{base}/ok/", offline=True, **FAST)
    assert ds.X.shape == (30, 2) and ds.meta["class_counts"] == [15, 15]
    assert (cache_dir / "downloads/toy/toy.csv").read_bytes() == TOY_CSV
    assert sorted(p.name for p in files_in(cache_dir)) == ["toy-dl.json", "toy-dl.npz", "toy.csv"]
    assert requests == [("GET", "/ok/toy/toy.csv")]
    # rebuilt from the kept file, without the network
    (cache_dir / "datasets/toy-dl.npz").unlink()
    data.ensure("toy-dl", cache_dir, mirror=f"{base}/ok/", offline=True, **FAST)
    assert len(requests) == 1


def test_public_home_is_used_without_a_mirror(site, toy, tmp_path):
    _, base, _ = site
    toy(toy_spec(urls=(f"{base}/ok/missing.csv", f"{base}/ok/toy/toy.csv")))
    ds = data.ensure("toy-dl", tmp_path / "cache", **FAST)
    assert ds.X.shape == (30, 2)


def test_mirror_as_directory_and_as_file_url(site, toy, tmp_path):
    root, _, _ = site
    toy(toy_spec())
    assert data.ensure("toy-dl", tmp_path / "a", mirror=root, offline=True).X.shape == (30, 2)
    url = root.as_uri()
    assert data.ensure("toy-dl", tmp_path / "b", mirror=url, offline=True).X.shape == (30, 2)


@pytest.mark.parametrize("case, message", [
    ("checksum", "sha256 mismatch"),
    ("truncated", "truncated body"),
    ("timeout", "read timed out"),
    ("404", "HTTP 404"),
    ("missing-in-dir", "not in the mirror directory"),
    ("offline-no-mirror", r"no source to fetch it from \(offline and no mirror\)"),
])
def test_failed_downloads_leave_no_file_and_say_why(site, toy, tmp_path, case, message):
    root, base, requests = site
    checksum = "sha256:" + "0" * 64 if case == "checksum" else TOY_PIN
    toy(toy_spec(checksum=checksum))
    mirror = {"checksum": f"{base}/ok/", "truncated": f"{base}/truncate/",
              "timeout": f"{base}/slow/", "404": f"{base}/ok/nothing-here/",
              "missing-in-dir": root / "elsewhere", "offline-no-mirror": None}[case]
    cache_dir = tmp_path / "cache"
    with pytest.raises(data.DownloadError, match=message) as err:
        data.ensure("toy-dl", cache_dir, mirror=mirror, offline=True, **FAST)
    assert "toy/toy.csv" in str(err.value)
    assert files_in(cache_dir) == [], "a failed download left a file in the cache"
    assert not cache_dir.exists()
    attempts = [r for r in requests if r[0] == "GET"]
    if case in ("truncated", "timeout"):
        assert len(attempts) == FAST["retries"] + 1  # transient: retried
    if case in ("checksum", "404"):
        assert len(attempts) == 1  # permanent: not retried


def test_transient_http_errors_are_retried_with_backoff(site, toy, tmp_path):
    _, base, requests = site
    toy(toy_spec())
    ds = data.ensure("toy-dl", tmp_path / "cache", mirror=f"{base}/flaky/", offline=True, **FAST)
    assert ds.X.shape == (30, 2)
    assert [r[1] for r in requests] == ["/flaky/toy/toy.csv"] * 2


def test_shape_mismatch_after_download_deletes_the_file(site, toy, tmp_path):
    _, base, _ = site
    toy(toy_spec(n=31))
    with pytest.raises(ValueError, match=r"registry expects \(31, 2, 2\)"):
        data.ensure("toy-dl", tmp_path / "cache", mirror=f"{base}/ok/", offline=True, **FAST)
    assert files_in(tmp_path / "cache") == []


def test_unix_compress_files_are_decompressed_on_arrival(site, tmp_path):
    root, base, _ = site
    expected = "".join(f"{i},{(i * 7919) % 1000 / 10:.1f},{(i * 104729) % 613},{'abc'[i % 3]}\n"
                       for i in range(1500)).encode()  # the text tests/data/table.csv.Z holds
    file = RemoteFile("table.csv", (f"{base}/ok/toy/table.csv.Z",),
                      "sha256:" + hashlib.sha256(expected).hexdigest())
    out = download.fetch(file, "toy", tmp_path / "table.csv", **FAST)
    assert out.read_bytes() == expected
    # the mirror may hold the compressed original under the stored name + .Z
    again = download.fetch(file, "toy", tmp_path / "again.csv", mirror=root, offline=True)
    assert again.read_bytes() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.csv", "site", "table.csv"]


# ---- the availability check run before any job starts


def test_availability_statuses(site, toy, tmp_path):
    root, base, _ = site
    toy(toy_spec(urls=(f"{base}/ok/toy/toy.csv",)))
    cache_dir = tmp_path / "cache"
    status = availability.status
    assert status("iris", cache_dir).how == "embedded"
    assert status("ar", cache_dir).how == "unavailable"
    assert status("toy-dl", cache_dir, mirror=root, offline=True).how == "mirror"
    assert status("toy-dl", cache_dir, mirror=f"{base}/ok/", offline=True).how == "mirror"
    assert status("toy-dl", cache_dir).how == "network"  # the loopback "public home" answers
    data.ensure("toy-dl", cache_dir, offline=False, **FAST)
    assert status("toy-dl", cache_dir, offline=True).how == "cached"
    (cache_dir / "datasets/toy-dl.json").unlink()
    assert status("toy-dl", cache_dir, offline=True).how == "downloaded"


def test_offline_without_mirror_lists_what_is_missing_and_how_to_provide_it(toy, tmp_path):
    toy(toy_spec(urls=("http://127.0.0.1:9/toy.csv",)))  # port 9: nothing listens
    problems = availability.missing(["iris", "toy-dl", "gcm"], tmp_path, offline=True)
    assert [p.name for p in problems] == ["toy-dl", "gcm"]
    text = availability.message(problems, tmp_path)
    assert "toy-dl: needs toy/toy.csv" in text and "data.offline is set" in text
    assert "set data.mirror" in text and "dmlbench dataset NAME" in text
    assert "gcm: not available" in text
    # without `offline`, the probe finds no network
    (problem,) = availability.missing(["toy-dl"], tmp_path)
    assert "no network: cannot connect to 127.0.0.1:9" in problem.detail


def test_probe():
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert download.probe(f"http://127.0.0.1:{listener.getsockname()[1]}/x") is None
    assert "cannot connect" in download.probe("http://127.0.0.1:9/x", timeout=1)


# ---- UCI files through a URL mirror (the shared copies, when on this machine)


@pytest.mark.parametrize("name", ["glass", "yeast", "ecoli", "page-blocks"])
def test_uci_sets_through_a_url_mirror(name, tmp_path):
    if not UCI_DIR.is_dir():
        pytest.skip(f"UCI reference files not on this machine ({UCI_DIR}; set DMLBENCH_UCI_DIR)")
    with serve(UCI_DIR.parent) as (base, _):
        ds = data.ensure(name, tmp_path, mirror=f"{base}/ok/uci/", offline=True, **FAST)
    spec = data.get(name)
    assert ds.X.shape == (spec.n, spec.d)
    assert ds.meta["sha256"] == spec.array_sha256


# ---- 20 Newsgroups: scikit-learn's fetcher on a verified archive, never a foreign pickle

NEWS_DOCS = {"train": {"alt.atheism": ["god faith belief", "faith doubt"],
                       "sci.space": ["orbit rocket launch", "rocket fuel orbit"]},
             "test": {"alt.atheism": ["belief god"], "sci.space": ["launch orbit"]}}


def news_archive(path: Path) -> str:
    """A small archive in the layout of 20news-bydate.tar.gz; its sha256."""
    with tarfile.open(path, "w:gz") as tar:
        for part, groups in NEWS_DOCS.items():
            for group, docs in groups.items():
                for i, text in enumerate(docs):
                    body = f"From: a@b\nSubject: s\n\n{text}\n".encode()
                    info = tarfile.TarInfo(f"20news-bydate-{part}/{group}/{i + 1}")
                    info.size = len(body)
                    tar.addfile(info, io.BytesIO(body))
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Marker:
    """Unpickling this creates the file `path`: what a crafted pickle can do."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def plant_pickles(directory: Path, marker: Path) -> None:
    """Crafted pickles under the names scikit-learn's fetcher loads from its data_home."""
    import codecs
    import pickle

    import joblib

    directory.mkdir(parents=True, exist_ok=True)
    (directory / "20news-bydate_py3.pkz").write_bytes(
        codecs.encode(pickle.dumps(Marker(marker)), "zlib_codec"))
    joblib.dump(Marker(marker), directory / "20newsgroup_vectorized_py3.pkl")


@pytest.fixture
def news(tmp_path, toy, monkeypatch):
    """A toy news-sklearn: a mirror with the archive (scikit-learn told to expect its sha256,
    from a URL that cannot answer) and crafted pickles everywhere a fetcher might look."""
    from sklearn.datasets import _base, _twenty_newsgroups

    mirror = tmp_path / "mirror"
    (mirror / "scikit-learn").mkdir(parents=True)
    sha = news_archive(mirror / "scikit-learn" / "20news-bydate.tar.gz")
    monkeypatch.setattr(_twenty_newsgroups, "ARCHIVE", _base.RemoteFileMetadata(
        filename="20news-bydate.tar.gz", url="http://127.0.0.1:9/never", checksum=sha))
    marker = tmp_path / "pickle-was-loaded"
    cache_dir = tmp_path / "cache"
    for where in (mirror / "scikit-learn", cache_dir / "scikit-learn",
                  cache_dir / "downloads" / "scikit-learn"):
        plant_pickles(where, marker)
    archive = RemoteFile("20news-bydate.tar.gz", (), f"sha256:{sha}")
    spec = toy(DatasetSpec("toy-news", "download", 6, 10, 2, files=(archive,),
                           group="scikit-learn", parse=fetchers.twenty_newsgroups, sparse=True,
                           keep_constant_features=True, given_train=4))
    return spec, mirror, cache_dir, marker


def test_news_is_built_from_the_verified_archive_and_loads_no_foreign_pickle(news):
    spec, mirror, cache_dir, marker = news
    ds = data.ensure("toy-news", cache_dir, mirror=mirror, offline=True)
    assert not marker.exists()
    assert ds.meta["class_names"] == ["alt.atheism", "sci.space"]
    assert ds.given_split["train"].size == 4 and ds.given_split["test"].size == 2
    from sklearn.feature_extraction.text import CountVectorizer
    vocabulary = CountVectorizer().fit([t for docs in NEWS_DOCS["train"].values() for t in docs]
                                       + ["from b subject"]).vocabulary_
    assert ds.X.shape == (6, len(vocabulary)) == (6, 10)
    np.testing.assert_allclose(np.asarray(ds.X.multiply(ds.X).sum(axis=1)).ravel(), 1.0)
    kept = cache_dir / "downloads" / "scikit-learn" / "20news-bydate.tar.gz"
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == spec.files[0].checksum[7:]
    assert not list((cache_dir / "downloads").glob(".*"))  # no temporary directory left


def test_a_tampered_archive_is_refused_and_a_corrupt_kept_one_deleted(news, tmp_path):
    spec, mirror, cache_dir, marker = news
    good = (mirror / "scikit-learn" / "20news-bydate.tar.gz").read_bytes()
    (mirror / "scikit-learn" / "20news-bydate.tar.gz").write_bytes(good[:-10] + b"0" * 10)
    with pytest.raises(data.DownloadError, match="sha256 mismatch"):
        data.ensure("toy-news", cache_dir, mirror=mirror, offline=True)
    assert not (cache_dir / "downloads/scikit-learn/20news-bydate.tar.gz").exists()
    # a corrupt copy in the cache: not counted as downloaded, deleted, and named in the error
    kept = cache_dir / "downloads/scikit-learn/20news-bydate.tar.gz"
    kept.write_bytes(b"corrupt")
    assert availability.status("toy-news", cache_dir, offline=True).how == "missing"
    assert not kept.exists()
    kept.write_bytes(b"corrupt")
    with pytest.raises(data.DownloadError, match="kept copy .* failed its check \(.*sha256 "
                                                 "mismatch.*deleted"):
        data.ensure("toy-news", cache_dir, offline=True)
    (mirror / "scikit-learn" / "20news-bydate.tar.gz").write_bytes(good)
    kept.write_bytes(b"corrupt")
    assert data.ensure("toy-news", cache_dir, mirror=mirror, offline=True).X.shape == (6, 10)
    assert kept.read_bytes() == good and not marker.exists()


def test_the_registry_pins_the_archive_scikit_learn_expects_and_ignores_a_mirror_pickle(
        tmp_path):
    """The old fetcher copied <mirror>/scikit-learn/20news-bydate_py3.pkz into its data_home and
    unpickled it: a crafted file ran code."""
    from sklearn.datasets import _twenty_newsgroups

    spec = data.registry.get("news-sklearn")
    assert [f.checksum for f in spec.files] == [f"sha256:{_twenty_newsgroups.ARCHIVE.checksum}"]
    mirror, marker = tmp_path / "mirror", tmp_path / "pickle-was-loaded"
    plant_pickles(mirror / "scikit-learn", marker)
    with pytest.raises(data.DownloadError):
        data.ensure("news-sklearn", tmp_path / "cache", mirror=mirror, offline=True)
    assert not marker.exists()


# ---- the download lock and plain-http mirrors

def test_an_unpinned_file_is_refused_unless_trusted_and_never_locked(site, toy, tmp_path,
                                                                    download_lock):
    """No trust on first use: a file without a pin is refused, naming its sha256, however well
    it passes the data set's checks; trusted, it is used and marked, and nothing is locked."""
    root, base, _ = site
    spec = toy(toy_spec(checksum=None))
    assert lock.pin_of(spec, spec.files[0]) == "unpinned"
    sha = hashlib.sha256(TOY_CSV).hexdigest()
    with pytest.raises(lock.UnpinnedFile, match=f"toy/toy.csv \\(sha256 {sha}\\).*--trust-unpinned"):
        data.build("toy-dl", tmp_path / "a", mirror=f"{base}/ok/", offline=True, **FAST)
    assert files_in(tmp_path / "a") == []
    dataset = data.build("toy-dl", tmp_path / "a", mirror=root, offline=True,
                         trust_unpinned=True)
    assert dataset.meta["unpinned"] == {"toy/toy.csv": f"sha256:{sha}"}
    assert not download_lock.exists()
    # a kept copy is no more trusted than a fresh one
    with pytest.raises(lock.UnpinnedFile, match=sha):
        data.build("toy-dl", tmp_path / "a", offline=True)


def test_a_lock_pin_is_checked_on_every_copy(site, toy, tmp_path, download_lock):
    root, _, _ = site
    download_lock.write_text(json.dumps({"files": {"toy/toy.csv": {
        "sha256": hashlib.sha256(TOY_CSV).hexdigest(), "source": "the test's own bytes"}}}))
    spec = toy(toy_spec(checksum=None))
    assert lock.pin_of(spec, spec.files[0]) == "lock"
    data.build("toy-dl", tmp_path / "a", mirror=root, offline=True)
    # the same rows in another order: parses and passes every check, but is not the pinned file
    (root / "toy" / "toy.csv").write_bytes(b"".join(reversed(TOY_CSV.splitlines(True))))
    with pytest.raises(data.DownloadError, match="sha256 mismatch"):
        data.build("toy-dl", tmp_path / "b", mirror=root, offline=True)
    kept = tmp_path / "a" / "downloads/toy/toy.csv"
    kept.write_bytes(b"0,0,a\n" + TOY_CSV[6:])
    with pytest.raises(data.DownloadError, match="sha256 mismatch"):
        data.build("toy-dl", tmp_path / "a", mirror=root, offline=True)
    assert not kept.exists()


def test_a_plain_http_mirror_serves_only_pinned_files():
    file = RemoteFile("toy.csv", ("http://home.example/toy.csv",))
    assert "plain-http mirror" in download.untrusted("http://mirror.example/toy/toy.csv", file)
    assert download.untrusted("https://mirror.example/toy/toy.csv", file) is None
    assert download.untrusted("http://127.0.0.1:8000/toy/toy.csv", file) is None
    assert download.untrusted("http://home.example/toy.csv", file) is None  # its public home
    assert download.untrusted("http://mirror.example/toy/toy.csv", file,
                              content_pinned=True) is None
    pinned = RemoteFile("toy.csv", (), "sha256:" + "0" * 64)
    assert download.untrusted("http://mirror.example/toy/toy.csv", pinned) is None
    with pytest.raises(download.DownloadError, match="refused: a plain-http mirror"):
        download.fetch(file, "toy", Path("/nonexistent/toy.csv"), mirror="http://mirror.example/",
                       offline=True)


def test_a_killed_download_leaves_a_temporary_directory_that_the_next_build_removes(
        site, tmp_path):
    """SIGKILL during a download (the server holds the answer back), then the next build."""
    import os
    import signal
    import subprocess
    import sys
    import time

    _, base, requests = site
    cache_dir = tmp_path / "cache"
    script = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from test_download import toy_spec, FAST
from dmlbench import data
data.REGISTRY["toy-dl"] = toy_spec()
data.ensure("toy-dl", {str(cache_dir)!r}, mirror={base + "/slow/"!r}, offline=True,
            timeout=(2.0, 60.0), retries=0)
"""
    child = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 30
    while not any(path == "/slow/toy/toy.csv" for _, path in requests):
        assert time.time() < deadline and child.poll() is None
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    left = [p for p in (cache_dir / "downloads").iterdir() if p.name.startswith(".toy-dl.")]
    assert len(left) == 1 and left[0].is_dir()
    data.REGISTRY["toy-dl"] = toy_spec()
    try:
        data.ensure("toy-dl", cache_dir, mirror=f"{base}/ok/", offline=True, **FAST)
    finally:
        del data.REGISTRY["toy-dl"]
    assert not left[0].exists()
    assert sorted(p.name for p in (cache_dir / "downloads").iterdir()) == ["toy"]


# ---- file formats and the parsers of the downloaded sets, on synthetic files


def test_archives_and_compressed_files(tmp_path):
    text = b"1,2,a\n3,4,b\n"
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress(text))
    (tmp_path / "t.csv.bz2").write_bytes(bz2.compress(text))
    with zipfile.ZipFile(tmp_path / "t.zip", "w") as z:
        z.writestr("dir/t.csv", text)
        z.writestr("readme.txt", b"x")
    with tarfile.open(tmp_path / "t.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("t.csv")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    for name, member in [("t.csv.gz", None), ("t.csv.bz2", None), ("t.zip", "dir/t.csv"),
                         ("t.tar.gz", None)]:
        table = formats.read_table(tmp_path / name, member=member)
        assert table.tolist() == [["1", "2", "a"], ["3", "4", "b"]]
    with pytest.raises(ValueError, match="name the member"):
        formats.read_bytes(tmp_path / "t.zip")
    (tmp_path / "bad.csv").write_bytes(b"1,2,a\n3,b\n")
    with pytest.raises(ValueError, match="line 2: 2 fields, expected 3"):
        formats.read_table(tmp_path / "bad.csv")


def test_svmlight_and_mat_readers(tmp_path):
    from scipy.io import savemat
    from sklearn.datasets import dump_svmlight_file

    X = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    dump_svmlight_file(X, np.array([-1, 1]), str(tmp_path / "s.txt"))
    (tmp_path / "s.bz2").write_bytes(bz2.compress((tmp_path / "s.txt").read_bytes()))
    raw = downloaded.libsvm("s.bz2", 3)({"s.bz2": tmp_path / "s.bz2"})
    np.testing.assert_array_equal(raw.X, X)
    assert raw.y.tolist() == ["-1", "1"]
    savemat(tmp_path / "m.mat", {"fea": X, "gnd": np.array([[1], [2]])})
    fea, gnd = formats.read_mat(tmp_path / "m.mat", "fea", "gnd")
    np.testing.assert_array_equal(fea, X)
    assert gnd.tolist() == [1, 2]
    with pytest.raises(ValueError, match="no variable 'nope'"):
        formats.read_mat(tmp_path / "m.mat", "nope")


def test_cai_document_parser_keeps_sparse_and_drops_small_classes(tmp_path):
    import scipy.sparse as sp
    from scipy.io import savemat

    fea = sp.random(25, 40, density=0.1, random_state=0, format="csc")
    gnd = np.array([1] * 12 + [2] * 10 + [3] * 3).reshape(-1, 1)
    savemat(tmp_path / "c.mat", {"fea": fea, "gnd": gnd})
    raw = downloaded.cai_mat("c.mat", min_class_size=10)({"c.mat": tmp_path / "c.mat"})
    assert sp.issparse(raw.X) and raw.X.shape == (22, 40)
    np.testing.assert_allclose(raw.X.toarray(), fea.toarray()[:22])
    assert sorted(set(raw.y)) == ["1", "2"]


def _idx(array: np.ndarray, code: int) -> bytes:
    header = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}i", *array.shape)
    return gzip.compress(header + array.astype(">u1").tobytes())


def test_mnist_parsers_on_synthetic_idx_files(tmp_path):
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, size=(m, 28, 28)) for m in (30, 12)]
    labels = [np.arange(30) % 10, np.arange(12) % 10]
    paths = {}
    for name, array, code in zip(downloaded.MNIST_FILES,
                                 (images[0], labels[0], images[1], labels[1]),
                                 (0x08, 0x08, 0x08, 0x08)):
        paths[name] = tmp_path / name
        paths[name].write_bytes(_idx(array, code))
    raw = downloaded.mnist(paths)
    assert raw.X.shape == (42, 784)
    np.testing.assert_array_equal(raw.X[31].reshape(28, 28), images[1][1])
    assert raw.y[31] == "1" and len(raw.given_split["train"]) == 30
    sub = downloaded.mnist_am17(seed=0)(paths)
    assert len(sub.given_split["train"]) == 10  # floor(3 / 3) of each of the 10 digits
    assert sorted(sub.y[sub.given_split["train"]]) == [str(d) for d in range(10)]
    (tmp_path / "bad.gz").write_bytes(gzip.compress(bytes([0, 0, 8, 1, 0, 0, 0, 5, 1, 2])))
    with pytest.raises(ValueError, match="idx header says shape"):
        formats.read_idx(tmp_path / "bad.gz")


def test_usps_parsers_on_synthetic_files(tmp_path):
    from scipy.io import savemat

    rng = np.random.default_rng(1)
    rows = [np.concatenate([[d], rng.uniform(-1, 1, 256)]) for d in (3, 0, 9)]
    text = "\n".join(" ".join(f"{v:.4f}" for v in r) for r in rows).encode()
    (tmp_path / "zip.train.gz").write_bytes(gzip.compress(text))
    (tmp_path / "zip.test.gz").write_bytes(gzip.compress(text.split(b"\n")[0]))
    raw = downloaded.usps_esl({n: tmp_path / n for n in ("zip.train.gz", "zip.test.gz")})
    assert raw.X.shape == (4, 256) and raw.y.tolist() == ["3", "0", "9", "3"]
    data_ = rng.integers(0, 256, size=(256, 1100, 10), dtype=np.uint8)
    savemat(tmp_path / "usps_all.mat", {"data": data_})
    raw = downloaded.usps_roweis({"usps_all.mat": tmp_path / "usps_all.mat"})
    assert raw.X.shape == (11000, 256)
    np.testing.assert_array_equal(raw.X[1100 * 9 + 5], data_[:, 5, 9])  # page 10 = digit 0
    assert raw.y[1100 * 9 + 5] == "0" and raw.y[0] == "1"


def test_checksum_formats():
    with pytest.raises(ValueError, match="checksum must be"):
        download.verify_checksum(HERE / "data" / "table.csv.Z", "crc32:1", "x")
    md5 = hashlib.md5((HERE / "data" / "table.csv.Z").read_bytes()).hexdigest()
    download.verify_checksum(HERE / "data" / "table.csv.Z", f"md5:{md5}", "x")


# ---- the command line


def test_cli_lists_every_data_set_and_builds_from_a_mirror(site, toy, tmp_path, capsys):
    from dmlbench import cli

    root, _, _ = site
    toy(toy_spec())
    assert cli.main(["datasets", "--cache", str(tmp_path), "--full"]) == 0
    listing = capsys.readouterr().out
    for name, spec in data.REGISTRY.items():
        line = next(row for row in listing.splitlines() if row.startswith(name + " "))
        status = {"none": "unavailable", "download": "needs download",
                  "debian": "needs download"}.get(spec.source, "embedded")
        assert status in line, line
    assert "gauss-d<d>" in listing
    assert cli.main(["dataset", "toy-dl", "--cache", str(tmp_path), "--offline"]) == 2
    assert "offline and no mirror" in capsys.readouterr().err
    assert cli.main(["dataset", "toy-dl", "iris", "--cache", str(tmp_path), "--mirror",
                     str(root), "--offline"]) == 0
    assert "toy-dl: n = 30, d = 2" in capsys.readouterr().out
    assert cli.main(["datasets", "--cache", str(tmp_path)]) == 0
    assert "cached" in next(r for r in capsys.readouterr().out.splitlines()
                            if r.startswith("toy-dl "))
    assert cli.main(["datasets", "--files"]) == 0
    assert "glass/glass.data" in capsys.readouterr().out
