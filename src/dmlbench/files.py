"""Atomic file writes: a reader (or a rerun after a kill) never sees a partial file.

Each writer writes a temporary file in the target's directory and renames it into place with
`os.replace`, which is atomic on POSIX file systems. The temporary file is named
`.<name>.<host>.<pid>.<random>.tmp`; a writer killed before the rename (SIGKILL) leaves it behind,
and the next writer of the same target on that host removes it once its process is gone.
Temporary directories (`temporary_dir`, e.g. a download's files before they are checked) follow
the same rule: `.<name>.<host>.<pid>.<random>.tmpdir`, removed on exit, by the next writer of
the same name on that host when their process is gone, and by `remove_stale_temporaries` (any
name; the data cache calls it on every use).

A written file gets the mode an ordinary `open` would give it (0666 less the umask: 0644 under
umask 022), not `mkstemp`'s 0600, so the other users of a shared machine can read records,
caches and reports. A write that fails with an `OSError` that names no file (ENOSPC while
writing) is re-raised naming the target, so the error message can say where.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import gzip
import hashlib
import json
import os
import shutil
import socket
import tempfile
from pathlib import Path

import numpy as np


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path next to `path`; rename it to `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_HOST}.{os.getpid()}.", suffix=".tmp",
                               dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~umask())
    finally:
        os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except OSError as err:
        if err.filename is None:  # e.g. ENOSPC from a write: say which file it was
            err.filename = str(path)
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def check_writable(path: str | os.PathLike) -> None:
    """Raise the `OSError` (naming `path`) that writing `path` would meet now (a read-only file
    system, no permission), before a long computation whose result would be lost."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_HOST}.{os.getpid()}.", suffix=".tmp",
                                   dir=path.parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as err:
        err.filename = str(path)
        raise


@contextlib.contextmanager
def temporary_dir(parent: str | os.PathLike, name: str):
    """Yield a new empty directory in `parent`, removed with its content on exit, whatever
    happens; first remove those of the same `name` left by dead processes on this host."""
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(parent / name, suffix=".tmpdir")
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.{_HOST}.{os.getpid()}.", suffix=".tmpdir",
                                dir=parent))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_HOST = socket.gethostname().replace(".", "_")


def umask() -> int:
    """The process's umask (read from /proc where it is shown, else set and restored)."""
    with contextlib.suppress(OSError, StopIteration, ValueError):
        with open("/proc/self/status") as fh:
            return int(next(line for line in fh if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove_stale_temporaries(path: Path, suffix: str = ".tmp") -> None:
    """Delete temporary files (or directories) of `path` left by dead writers on this host."""
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.{glob.escape(_HOST)}.*{suffix}"):
        pid = tmp.name[len(path.name) + len(_HOST) + 3:].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            _remove(tmp)


def remove_stale_temporaries(directory: str | os.PathLike) -> None:
    """Delete every temporary file or directory in `directory` (whatever its target's name)
    left by a dead writer on this host."""
    marker = f".{_HOST}."
    for tmp in Path(directory).glob(".*.tmp*"):
        if not tmp.name.endswith((".tmp", ".tmpdir")) or marker not in tmp.name:
            continue
        pid = tmp.name.rsplit(marker, 1)[1].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            _remove(tmp)


def _remove(tmp: Path) -> None:
    if tmp.is_dir():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_json(path: str | os.PathLike, obj, *, keep_order: bool = False) -> None:
    """Write `obj` as indented, key-sorted JSON, atomically; `keep_order` keeps the keys in
    their order instead (a config: the order of its `search_space` parameters is part of the
    job keys, docs/tuning.md)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=not keep_order,
                                  default=_json_default) + "\n")


def write_npz(path: str | os.PathLike, **arrays: np.ndarray) -> None:
    """Save arrays to an uncompressed `.npz`, atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)


def read_json(path: str | os.PathLike):
    """A JSON file, gzip-compressed when its name ends in .gz (published records)."""
    path = Path(path)
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)
    return json.loads(path.read_text())


def write_json_gz(path: str | os.PathLike, obj) -> None:
    """Write `obj` as compact, key-sorted, gzip-compressed JSON, atomically; the bytes do not
    depend on the time of writing (no timestamp in the gzip header), so an unchanged object
    gives an unchanged file."""
    text = json.dumps(obj, separators=(",", ":"), sort_keys=True, default=_json_default)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                  filename="") as fh:
            fh.write(text.encode("utf-8"))


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


@functools.cache
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256(path: str | os.PathLike) -> str:
    """sha256 of a file's bytes, read once per process while its size and mtime are unchanged
    (a user's data or plug-in file, hashed by every check of a config)."""
    stat = os.stat(path)
    return _sha256(str(path), stat.st_size, stat.st_mtime_ns)
