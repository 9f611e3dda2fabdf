"""Atomic writes: nothing partial at the final path; a killed writer's temporary file is
removed by the next writer of the same file, a live writer's is not."""

import os
import subprocess
import sys

import pytest

from dmlbench import files


def test_a_failed_write_leaves_neither_the_file_nor_a_temporary(tmp_path):
    target = tmp_path / "x.json"
    with pytest.raises(TypeError):
        files.write_json(target, {"bad": object()})
    assert list(tmp_path.iterdir()) == []


def test_a_killed_writers_temporary_is_removed_by_the_next_writer(tmp_path):
    target = tmp_path / "x.json"
    # a writer killed between creating its temporary file and the rename
    code = ("import os, signal, sys; from dmlbench import files\n"
            "with files.atomic_path(sys.argv[1]) as tmp:\n"
            "    tmp.write_text('{\"partial')\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n")
    subprocess.run([sys.executable, "-c", code, str(target)])
    (stale,) = list(tmp_path.iterdir())
    assert stale.name.startswith(".x.json.") and stale.suffix == ".tmp" and not target.exists()
    live = tmp_path / f".x.json.{files._HOST}.{os.getpid()}.abc.tmp"  # this process: alive
    other = tmp_path / ".x.json.otherhost.1.abc.tmp"  # another host: cannot tell, kept
    live.write_text("{")
    other.write_text("{")
    files.write_json(target, {"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name, "x.json"])
    assert files.read_json(target) == {"a": 1}


def test_gzip_json_round_trip_is_byte_stable(tmp_path):
    """Published records are compact gzip JSON: read back equal, and the same object written
    twice gives the same bytes (no time in the gzip header), so the manifest's sha256 holds."""
    import gzip
    import json

    obj = {"b": [1.5, 2], "a": {"x": None}}
    files.write_json_gz(tmp_path / "a.json.gz", obj)
    first = (tmp_path / "a.json.gz").read_bytes()
    files.write_json_gz(tmp_path / "a.json.gz", obj)
    assert (tmp_path / "a.json.gz").read_bytes() == first
    assert files.read_json(tmp_path / "a.json.gz") == obj
    assert json.loads(gzip.decompress(first)) == obj
