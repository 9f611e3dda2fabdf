"""The download lock: the pins of downloaded files whose source publishes no checksum.

How each downloaded file is pinned (`pin_of`, also shown by `dmlbench datasets --files`):
- ``published``: the checksum its source publishes (MNIST's md5, scikit-learn's sha256 of the
  20 Newsgroups archive, KEEL's DOB-SCV files as checked against the team's mirror), in the
  registry;
- ``debian``: a file a Debian package holds (`RemoteFile.debian`): the registry pins its content,
  read out of the package whose ``.deb`` has the sha256 Debian's signed index lists (checked
  whenever the file comes out of the package; from another source, such as Fashion-MNIST's own
  site, the content pin alone decides);
- ``arrays``: its data set's encoded arrays have a sha256 in the registry (the UCI sets, checked
  against the team's cross-checked copies); the file's bytes may differ (line endings), its
  content may not;
- ``lock``: the sha256 of a genuine copy, in the lock file with the copy's `source`;
- ``unpinned``: no genuine copy could be obtained to pin it; the lock says why. Such a file is
  refused (`UnpinnedFile`, naming its sha256) unless the user trusts it: ``--trust-unpinned``
  (CLI) or ``data: {trust_unpinned: true}`` (config); a data set built from it carries the
  file's sha256 in its metadata (``unpinned``), and every record of it says so.

The lock is `downloads.lock.json` beside this module, package data committed with the project:
every machine verifies against the same pins, and nothing ever writes into it (a pin taken from
whatever a first download served would make a hostile mirror's file the reference).
`DMLBENCH_DOWNLOAD_LOCK` names another file (tests). Its format::

    {"files": {"<group>/<file>": {"sha256": "<hex>", "source": "<where the genuine copy came
     from>"} or {"sha256": null, "unpinned": "<why no genuine copy could be pinned>"}}}
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import replace
from pathlib import Path

from .spec import RemoteFile

DEFAULT_LOCK = Path(__file__).with_name("downloads.lock.json")
TRUST_OPTION = "--trust-unpinned (CLI) or data: {trust_unpinned: true} (config)"


class UnpinnedFile(ValueError):
    """A downloaded file without a pin, used without the user's opt-in."""


def lock_path() -> Path:
    return Path(os.environ.get("DMLBENCH_DOWNLOAD_LOCK") or DEFAULT_LOCK)


def read() -> dict[str, dict]:
    """{"<group>/<file>": entry} of the lock (module docstring); empty without a lock file."""
    return _read(lock_path())


@functools.lru_cache(maxsize=4)
def _read_cached(path: str, mtime_ns: int) -> dict[str, dict]:
    document = json.loads(Path(path).read_text())
    files = document.get("files", {}) if isinstance(document, dict) else {}
    for key, entry in files.items():
        if not isinstance(entry, dict) or not (entry.get("sha256") or entry.get("unpinned")):
            raise ValueError(f"download lock {path}: entry {key} needs a sha256 (with its "
                             "source) or the reason it is unpinned")
    return files


def _read(path: Path) -> dict[str, dict]:
    try:
        return _read_cached(str(path), path.stat().st_mtime_ns)
    except FileNotFoundError:
        return {}


def key(spec, file: RemoteFile) -> str:
    return f"{spec.group}/{file.name}"


def pin_of(spec, file: RemoteFile) -> str:
    """'published', 'debian', 'arrays', 'lock' or 'unpinned' (module docstring)."""
    if file.checksum is not None:
        return "debian" if file.debian is not None else "published"
    if spec.array_sha256 is not None:
        return "arrays"
    entry = read().get(key(spec, file))
    return "lock" if entry and entry.get("sha256") else "unpinned"


def pinned(spec, file: RemoteFile) -> RemoteFile:
    """`file` with its lock entry's sha256 as checksum when its source publishes none."""
    if file.checksum is not None:
        return file
    entry = read().get(key(spec, file)) or {}
    return replace(file, checksum=f"sha256:{entry['sha256']}") if entry.get("sha256") else file


def why_unpinned(spec, file: RemoteFile) -> str:
    """The lock's reason why `file` has no pin (or that the lock does not list it)."""
    entry = read().get(key(spec, file))
    return entry["unpinned"] if entry else f"the download lock {lock_path()} does not list it"


def refusal(spec, file: RemoteFile, sha256: str) -> UnpinnedFile:
    """The error for an unpinned file used without the opt-in."""
    return UnpinnedFile(
        f"{key(spec, file)} (sha256 {sha256}) has no pin: {why_unpinned(spec, file)}. It is "
        f"refused, since nothing says it is the genuine file; to use it anyway pass "
        f"{TRUST_OPTION}: the data set and every record of it are then marked unpinned")
