"""The download lock: sha256 of downloaded files whose source publishes no checksum.

How each downloaded file is pinned (`pin_of`, also shown by `dmlbench datasets --files`):
- ``published``: the checksum its source publishes (MNIST's md5, scikit-learn's sha256 of the
  20 Newsgroups archive), in the registry;
- ``arrays``: its data set's encoded arrays have a sha256 in the registry (the UCI sets, checked
  against the team's cross-checked copies); the file's bytes may differ (line endings), its
  content may not;
- ``lock``: the sha256 of the first download that passed every check of its data set (shape,
  class counts), recorded in this lock file (Deng Cai's document sets, colon, USPS);
- ``none``: not downloaded through a lock yet; the first verified download records it.

The lock is `downloads.lock.json` beside this module, committed with the project, so every
machine verifies against the same bytes; `DMLBENCH_DOWNLOAD_LOCK` names another file (tests).
A kept file, a mirror's copy or a new download that differs from its lock entry is refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import replace
from pathlib import Path

from .spec import RemoteFile

DEFAULT_LOCK = Path(__file__).with_name("downloads.lock.json")


def lock_path() -> Path:
    return Path(os.environ.get("DMLBENCH_DOWNLOAD_LOCK") or DEFAULT_LOCK)


def read() -> dict[str, str]:
    """{"<group>/<file>": "sha256:<hex>"}; empty when there is no lock file."""
    path = lock_path()
    return json.loads(path.read_text()) if path.exists() else {}


def pin_of(spec, file: RemoteFile) -> str:
    """'published', 'arrays', 'lock' or 'none' (module docstring)."""
    if file.checksum is not None:
        return "published"
    if spec.array_sha256 is not None:
        return "arrays"
    return "lock" if f"{spec.group}/{file.name}" in read() else "none"


def pinned(spec, file: RemoteFile) -> RemoteFile:
    """`file` with its lock entry as checksum when its source publishes none."""
    if file.checksum is not None:
        return file
    entry = read().get(f"{spec.group}/{file.name}")
    return file if entry is None else replace(file, checksum=entry)


def record(spec, file: RemoteFile, sha256: str) -> None:
    """Add the sha256 of a verified download of `file` to the lock (under an exclusive lock on
    the file, so parallel `dataset` jobs do not lose each other's entries)."""
    path = lock_path()
    key = f"{spec.group}/{file.name}"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".flock"), "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        entries = read()
        if key in entries:
            return
        entries[key] = f"sha256:{sha256}"
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(entries, indent=2, sort_keys=True) + "\n")
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
