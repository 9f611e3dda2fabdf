"""Read one file out of a Debian binary package (``.deb``), in pure Python.

A ``.deb`` is an ``ar`` archive (deb(5)): the global header ``!<arch>\\n``, then members, each a
60-byte header (name 16 bytes, modification time 12, owner 6, group 6, mode 8, size 10, the
magic ``\\x60\\n``) followed by its data, padded to an even offset. Its members are
``debian-binary``, ``control.tar.*`` and ``data.tar.*``, the files the package installs, as a
tar archive compressed by xz, gzip or bzip2 (all read by `tarfile`), or not at all. Debian's own
packages use xz; zstd (``data.tar.zst``, Ubuntu's packages since 21.10) has no module in
Python 3.11's standard library and is refused with that reason. Nothing is extracted to disk by
the archive's names: the member asked for is read into memory (and written where the caller
says), so a package cannot place files anywhere.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

AR_MAGIC = b"!<arch>\n"
_HEADER = 60
_TAR_MODES = {"data.tar": "r|", "data.tar.xz": "r|xz", "data.tar.gz": "r|gz",
              "data.tar.bz2": "r|bz2"}


class DebianPackageError(ValueError):
    """A file is not a readable Debian package, or does not hold the member asked for."""


class _Span(io.RawIOBase):
    """The `size` bytes of `fh` from its current position, as a read-only stream."""

    def __init__(self, fh, size: int):
        self._fh, self._left = fh, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self._left)
        data = self._fh.read(n)
        buffer[:len(data)] = data
        self._left -= len(data)
        return len(data)


def ar_members(path: str | Path) -> list[tuple[str, int, int]]:
    """(name, offset of its data, size) of every member of the ``ar`` archive `path`."""
    out = []
    with open(path, "rb") as fh:
        if fh.read(len(AR_MAGIC)) != AR_MAGIC:
            raise DebianPackageError(f"{Path(path).name}: not a Debian package (no ar header)")
        while header := fh.read(_HEADER):
            if len(header) != _HEADER or header[58:60] != b"`\n":
                raise DebianPackageError(f"{Path(path).name}: damaged ar member header at "
                                         f"byte {fh.tell() - len(header)}")
            name = header[:16].decode("ascii", "replace").strip().rstrip("/")
            try:
                size = int(header[48:58].decode("ascii").strip())
            except ValueError:
                raise DebianPackageError(f"{Path(path).name}: ar member {name!r} has no "
                                         "size") from None
            out.append((name, fh.tell(), size))
            fh.seek(size + (size & 1), io.SEEK_CUR)
    return out


def read_member(package: str | Path, member: str) -> bytes:
    """The bytes of file `member` (a path such as ``usr/share/...``, with or without a leading
    ``./``) of the Debian package `package`; `DebianPackageError` naming what is wrong (no
    ``ar`` archive, no or an unsupported data archive, no such member, damaged data)."""
    name = Path(package).name
    wanted = member.removeprefix("./")
    data = [m for m in ar_members(package) if m[0].startswith("data.tar")]
    if len(data) != 1:
        raise DebianPackageError(f"{name}: expected one data.tar.* member, found "
                                 f"{[m[0] for m in data]}")
    archive, offset, size = data[0]
    if archive not in _TAR_MODES:
        raise DebianPackageError(
            f"{name}: its files are in {archive}, which Python's standard library cannot read"
            + (" (zstd compression, as Ubuntu uses; Debian's packages use xz)"
               if archive.endswith(".zst") else ""))
    with open(package, "rb") as fh:
        fh.seek(offset)
        try:
            with tarfile.open(fileobj=io.BufferedReader(_Span(fh, size)),
                              mode=_TAR_MODES[archive]) as tar:
                for info in tar:
                    if info.name.removeprefix("./") == wanted:
                        if not info.isfile():
                            raise DebianPackageError(f"{name}: {member} is not a regular file")
                        return tar.extractfile(info).read()
        except (tarfile.TarError, EOFError, OSError) as err:
            raise DebianPackageError(f"{name}: {archive} cannot be read ({err})") from None
    raise DebianPackageError(f"{name}: the package holds no file {member}")
