"""The nine faults of the third reliability audit (issue 27), each reproduced and refused:
hostile mirrors and unpinned downloads, edited published records, concurrent first use of a
new tracking store, file modes, unreadable records, non-finite config numbers, full disks and
read-only outputs, machine paths in published pages, stale temporary download folders."""

import copy
import errno
import gzip
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from test_tracking import CFG, run_jobs

from dmlbench import cli, config, data, files, publish, records
from dmlbench.data import REGISTRY, cache, lock
from dmlbench.records import tracking
from dmlbench.records.public import public_config
from dmlbench.run import plan

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


# ---- 1. downloads: every file pinned in the committed lock or refused unless trusted

@pytest.fixture
def committed_lock(monkeypatch):
    """The package's own download lock (the autouse fixture points tests at a scratch one)."""
    monkeypatch.delenv("DMLBENCH_DOWNLOAD_LOCK")
    before = lock.DEFAULT_LOCK.read_bytes()
    yield lock.DEFAULT_LOCK
    assert lock.DEFAULT_LOCK.read_bytes() == before, "a run wrote into the committed lock"


def test_every_downloaded_file_has_a_pin_or_a_reason_in_the_committed_lock(committed_lock):
    entries = lock.read()
    needed = set()
    for spec in REGISTRY.values():
        for file in spec.files if spec.downloads else ():
            if file.checksum is None and spec.array_sha256 is None:
                needed.add(lock.key(spec, file))
    assert needed == set(entries), needed ^ set(entries)
    for key, entry in entries.items():
        if entry["sha256"]:
            assert len(entry["sha256"]) == 64 and entry.get("source"), key
        else:
            assert len(entry["unpinned"]) > 40, key
    colon = REGISTRY["colon"]
    assert lock.pin_of(colon, colon.files[0]) == "unpinned"
    german = REGISTRY["german"]  # pinned since the team's cross-checked copy (issue 47)
    assert lock.pin_of(german, german.files[0]) == "lock"


def _crafted_german(mirror: Path) -> Path:
    """A german.data-numeric that passes every check of the registry (1000 rows, 24 columns,
    700/300 classes) and whose first column is the label: what a hostile mirror could serve."""
    rng = np.random.default_rng(0)
    y = np.array([1] * 700 + [2] * 300)
    X = rng.integers(0, 5, size=(1000, 24))
    X[:, 0] = y
    path = mirror / "german" / "german.data-numeric"
    path.parent.mkdir(parents=True)
    path.write_text("".join(" ".join(map(str, [*row, label])) + "\n" for row, label in zip(X, y)))
    return path


def _crafted_colon(mirror: Path) -> Path:
    """A colon-cancer.bz2 (LIBSVM format) that passes every check of the registry (62 rows,
    2000 non-constant columns, 2 classes) and whose first column is the label."""
    import bz2
    import io

    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    y = np.array([-1] * 40 + [1] * 22)
    X = rng.normal(size=(62, 2000)).round(3)
    X[:, 0] = y
    text = io.BytesIO()
    dump_svmlight_file(X, y, text, zero_based=False)
    path = mirror / "colon" / "colon-cancer.bz2"
    path.parent.mkdir(parents=True)
    path.write_bytes(bz2.compress(text.getvalue()))
    return path


def test_a_file_against_its_lock_pin_is_refused_even_when_unpinned_files_are_trusted(
        committed_lock, tmp_path):
    _crafted_german(tmp_path / "mirror")
    for trust in (False, True):
        with pytest.raises(data.DownloadError, match="german.data-numeric: sha256 mismatch"):
            data.ensure("german", tmp_path / "cache", mirror=tmp_path / "mirror", offline=True,
                        trust_unpinned=trust)
    assert not cache.paths("german", tmp_path / "cache")[1].exists()


def test_a_crafted_unpinned_file_from_a_mirror_is_refused_naming_its_sha256(
        committed_lock, tmp_path, capsys):
    crafted = _crafted_colon(tmp_path / "mirror")
    sha = hashlib.sha256(crafted.read_bytes()).hexdigest()
    cache_dir = tmp_path / "cache"
    args = ["dataset", "colon", "--mirror", str(tmp_path / "mirror"), "--offline",
            "--cache", str(cache_dir)]
    assert cli.main(args) == 2
    out = capsys.readouterr().err
    err = out.strip().splitlines()[-1]  # after the 'fetched ...' progress line
    assert "Traceback" not in out and err.startswith("dmlbench dataset: error: ")
    assert "colon/colon-cancer.bz2" in err and sha in err and "--trust-unpinned" in err
    assert not cache.paths("colon", cache_dir)[1].exists()
    # opted in: built, and the data set says which unpinned bytes it came from
    assert cli.main([*args, "--trust-unpinned"]) == 0
    meta = json.loads(cache.paths("colon", cache_dir)[1].read_text())
    assert meta["unpinned"] == {"colon/colon-cancer.bz2": f"sha256:{sha}"}
    # the cached set is refused again without the opt-in
    assert cli.main(args) == 2
    assert "built from files without a pin" in capsys.readouterr().err


def test_the_workflow_refuses_an_unpinned_data_set_before_any_job(committed_lock, tmp_path):
    from dmlbench.data import availability

    _crafted_colon(tmp_path / "mirror")
    args = (["colon", "iris"], tmp_path / "cache", tmp_path / "mirror", True)
    [problem] = availability.missing(*args)
    assert problem.how == "unpinned" and "colon/colon-cancer.bz2" in problem.detail
    assert "trust_unpinned: true" in availability.message([problem], tmp_path / "cache")
    assert availability.missing(*args, trust_unpinned=True) == []


def test_a_trusted_unpinned_data_set_marks_every_record_and_the_report(tmp_path):
    """A data set built from trusted unpinned files (its metadata lists them) gives records that
    say so, a run tag, and a red note on the report page."""
    import pandas as pd
    from jinja2 import Environment, PackageLoader

    from dmlbench import report
    from dmlbench.run import job, protocols

    unpinned = {"german/german.data-numeric": "sha256:" + "a" * 64}
    cfg = plan.check({**copy.deepcopy(CFG), "methods": {"euclidean": None},
                      "data": {"cache": str(tmp_path / "cache")}})
    cache.save(data.build("iris"), tmp_path / "cache")
    meta_path = cache.paths("iris", tmp_path / "cache")[1]
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "unpinned": unpinned}))
    ds = data.load("iris", tmp_path / "cache")
    protocol = config.dataset_protocol(cfg, "iris")
    protocols.save_splits(plan.split_path(cfg, "iris"), protocols.make_splits(
        ds.y, protocol, 0), protocol, 0, ds.meta["sha256"])
    [j] = plan.jobs(cfg)
    split_records = job.run(plan.job_spec(cfg, j.dataset, j.method, j.splits), progress=False)
    records.write(tmp_path / "record.json", split_records)  # checked against the schema
    assert len(split_records) == 2
    assert all(r["dataset"]["unpinned"] == unpinned for r in split_records)
    tag = tracking._tags(split_records[0], "split")[tracking.voc.Tag.UNPINNED]
    splits = pd.DataFrame({"dataset": ["iris", "wine"], "unpinned": [tag, None]})
    assert report.unpinned_files(splits) == {"iris": ["german/german.data-numeric sha256:"
                                                      + "a" * 64]}
    page = Environment(loader=PackageLoader("dmlbench.report", "templates")).get_template(
        "index.html").render(unpinned=report.unpinned_files(splits), sections=[])
    assert 'class="unpinned"' in page and "german/german.data-numeric" in page
    # without unpinned files the record has no such field (earlier records' hashes hold)
    assert "unpinned" not in records.read(run_jobs(copy.deepcopy(CFG), tmp_path / "b",
                                                   tmp_path)[0])[0]["dataset"]


# ---- 2. a published records folder is exactly what its manifest says

@pytest.fixture
def published(tmp_path):
    """A report folder holding two record files (iris: euclidean, rca) and its manifest."""
    results = tmp_path / "results" / "track-test"
    folder = results / "runs" / "iris"
    folder.mkdir(parents=True)
    cfg = copy.deepcopy(CFG)
    paths = run_jobs(cfg, tmp_path, folder)
    cfg["data"]["mirror"] = "https://user:secret@mirror.example/data/?token=x"
    out = tmp_path / "reports" / "track-test"
    publish.publish(paths, [], cfg, out, results)
    return out


def _manifest(out: Path) -> tuple[Path, dict]:
    path = out / "records" / "manifest.json"
    return path, json.loads(path.read_text())


def _edit_manifest(out: Path, change) -> None:
    path, manifest = _manifest(out)
    change(manifest)
    path.write_text(json.dumps(manifest))


def _drop_entry(out):
    _, manifest = _manifest(out)
    relative = manifest["records"][0]
    _edit_manifest(out, lambda m: (m["records"].remove(relative), m["files"].pop(relative)))
    return relative


def _drop_entry_and_truncate(out):
    relative = _drop_entry(out)
    path = out / "records" / relative
    path.write_bytes(path.read_bytes()[:40])
    return relative


def _delete_file(out):
    _, manifest = _manifest(out)
    (out / "records" / manifest["records"][0]).unlink()
    return manifest["records"][0]


def _change_record(out):
    _, manifest = _manifest(out)
    path = out / "records" / manifest["records"][0]
    document = records.load(path)
    document["records"][0]["metrics"]["accuracy_k1"] += 0.125
    files.write_json_gz(path, document)
    return manifest["records"][0]


def _change_config(out):
    config_path = out / "config.json"
    cfg = json.loads(config_path.read_text())
    cfg["report"] = {"rope": 0.5}
    config_path.write_text(json.dumps(cfg))
    return "config.json"


def _truncate_and_reseal(out):
    """A truncated record whose manifest entry was forged to match: the sha256 holds, the file
    cannot be read."""
    _, manifest = _manifest(out)
    relative = manifest["records"][0]
    path = out / "records" / relative
    path.write_bytes(path.read_bytes()[:40])
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    _edit_manifest(out, lambda m: m["files"].__setitem__(relative, digest))
    return relative


@pytest.mark.parametrize("tamper, message", [
    (_drop_entry, "is not in"),
    (_drop_entry_and_truncate, "is not in"),
    (_delete_file, "is missing"),
    (_change_record, "does not match"),
    (_change_config, "does not match"),
    (_truncate_and_reseal, "cannot be read"),
])
def test_an_edited_records_folder_is_refused_naming_the_file(published, tmp_path, capsys,
                                                            mlflow_uri, tamper, message):
    named = tamper(published)
    code = cli.main(["report", "--records", str(published / "records"),
                     "--out", str(tmp_path / "rebuilt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "Traceback" not in err[0]
    assert message in err[0] and Path(named).name in err[0]
    assert not (tmp_path / "rebuilt" / "index.html").exists()


def test_a_manifest_of_the_old_format_is_refused(published):
    _edit_manifest(published, lambda m: (m.pop("format"), m.pop("config")))
    with pytest.raises(ValueError, match="covers config.json"):
        publish.verified_files(published / "records")


def test_report_settings_reach_a_published_config_and_are_sealed_again(published, tmp_path,
                                                                      mlflow_uri):
    """A paper table added after the run: `report --records --settings` puts the config's
    report keys into config.json, reseals the manifest and rebuilds; the mirror the run used
    stays as published, and the rebuilt page shows the new setting."""
    cfg = copy.deepcopy(CFG)
    cfg["report"] = {"title": "Settings added after the run", "rope": 0.02}
    settings = tmp_path / "settings.yaml"
    settings.write_text(json.dumps(cfg))
    before = json.loads((published / "config.json").read_text())
    assert cli.main(["report", "--records", str(published / "records"), "--out",
                     str(tmp_path / "rebuilt"), "--settings", str(settings)]) == 0
    after = json.loads((published / "config.json").read_text())
    assert after["report"] == {"title": "Settings added after the run", "rope": 0.02}
    assert after["data"] == before["data"]  # where the data came from is the run's
    assert {k: v for k, v in after.items() if k != "report"} == \
        {k: v for k, v in before.items() if k != "report"}
    publish.verified_files(published / "records")  # sealed again
    assert "Settings added after the run" in (tmp_path / "rebuilt" / "index.html").read_text()
    assert publish.update_settings(published / "records", config.load(settings)) == []


def test_settings_that_change_the_run_are_refused(published, tmp_path):
    cfg = copy.deepcopy(CFG)
    cfg["seed"] = cfg.get("seed", 0) + 1
    cfg["report"] = {"rope": 0.02}
    before = (published / "config.json").read_bytes()
    with pytest.raises(ValueError, match="differs in seed, not only in what the report reads"):
        publish.update_settings(published / "records", cfg)
    assert (published / "config.json").read_bytes() == before


def test_the_published_config_names_no_credentials_or_local_paths(published):
    text = (published / "config.json").read_text()
    assert "secret" not in text and "token" not in text and str(published.parents[1]) not in text
    assert json.loads(text)["data"] == {"cache": "<local directory>/cache",
                                        "mirror": "https://mirror.example/data/"}
    publish.verified_files(published / "records")


# ---- 3. several workflows opening a new SQLite store at once

_INGEST_AT_ONCE = """
import sys, time
from pathlib import Path
import mlflow  # the imports before the barrier: the race is in the store's set-up
from dmlbench import cli
from dmlbench.records import tracking
ready, go = Path(sys.argv[1]), Path(sys.argv[2])
ready.touch()
while not go.exists():
    time.sleep(0.002)
sys.exit(cli.main(["ingest", *sys.argv[3:], "--experiment", "race"]))
"""


def concurrent_ingests(uri: str, paths: list, n: int, tmp_path: Path) -> list:
    """`n` `dmlbench ingest` processes (the workflow's track step) started at the same instant
    (after their imports) on the store `uri`; returns their CompletedProcess-like results."""
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri, "PYTHONPATH": str(HERE)}
    go = tmp_path / f"go-{n}"
    ready = [tmp_path / f"ready-{n}-{i}" for i in range(n)]
    procs = [subprocess.Popen([sys.executable, "-c", _INGEST_AT_ONCE, str(r), str(go),
                               *map(str, paths)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in ready]
    deadline = time.time() + 300
    while not all(r.exists() for r in ready):
        assert time.time() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.05)
    go.touch()
    return [(p.wait(timeout=600), *p.communicate()) for p in procs]


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4])
def test_concurrent_track_steps_on_a_new_sqlite_store(tmp_path, n):
    import mlflow

    paths = run_jobs(copy.deepcopy(CFG), tmp_path, tmp_path)
    uri = f"sqlite:///{tmp_path / 'new' / 'mlruns.db'}"
    for code, _, err in concurrent_ingests(uri, paths, n, tmp_path):
        assert code == 0, err[-3000:]
    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(experiment_names=["race"], filter_string="tags.`dmlbench.kind` != ''")
    assert runs["tags.dmlbench.key"].is_unique and set(runs["status"]) == {"FINISHED"}
    assert len(runs) == 2 + 2 * 2  # two parents (euclidean, rca), two splits each


# ---- 4. written files follow the umask

@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_atomically_written_files_follow_the_umask(tmp_path, mask, mode):
    previous = os.umask(mask)
    try:
        assert files.umask() == mask
        files.write_json(tmp_path / "a.json", {"x": 1})
        files.write_json_gz(tmp_path / "a.json.gz", {"x": 1})
        files.write_npz(tmp_path / "a.npz", x=np.zeros(2))
        cache.save(data.build("iris"), tmp_path / "cache")
    finally:
        os.umask(previous)
    written = [tmp_path / "a.json", tmp_path / "a.json.gz", tmp_path / "a.npz",
               *cache.paths("iris", tmp_path / "cache")]
    assert [oct(p.stat().st_mode & 0o777) for p in written] == [oct(mode)] * len(written)


# ---- 5. a record that cannot be read is named and set aside

def _truncated_json(path):
    path.write_bytes(path.read_bytes()[:2000])


def _bad_gzip(path):
    text = path.read_bytes()
    path.unlink()
    path = path.with_name(path.name + ".gz")
    path.write_bytes(gzip.compress(text)[:100])
    return path


def _not_utf8(path):
    path.write_bytes(b"\xff\xfe" + path.read_bytes())


@pytest.mark.parametrize("damage, reason", [(_truncated_json, "not valid JSON"),
                                            (_bad_gzip, "not a complete gzip file"),
                                            (_not_utf8, "not")])
def test_an_unreadable_record_is_named_in_one_line_and_set_aside(tmp_path, mlflow_uri, capsys,
                                                                 damage, reason):
    paths = run_jobs(copy.deepcopy(CFG), tmp_path, tmp_path)
    bad = damage(paths[0]) or paths[0]
    code = cli.main(["ingest", str(bad), str(paths[1])])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(bad) in err[0] and reason in err[0]
    assert not bad.exists() and bad.with_name(bad.name + ".unreadable").exists()
    assert "set aside" in err[0]
    # nothing was written to the store before the check (this test's store, named: mlflow's
    # global URI is still the one an earlier test's client set)
    import mlflow
    assert mlflow.MlflowClient(mlflow_uri).search_experiments(
        filter_string="name = 'track-test'") == []


def test_a_record_whose_arrays_file_is_missing_is_set_aside(tmp_path, mlflow_uri, capsys):
    cfg = copy.deepcopy(CFG)
    cfg["methods"] = {"nca": {"params": {"n_components": 2, "max_iter": 5}}}
    [path] = run_jobs(cfg, tmp_path, tmp_path, keep_arrays=True)
    arrays = records.read(path)[0]["arrays"]["file"]
    (path.parent / arrays).unlink()
    assert cli.main(["ingest", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and arrays in err and not path.exists()


@pytest.mark.slow
@pytest.mark.workflow
def test_the_next_workflow_run_reruns_the_job_of_an_unreadable_record(smoke_run, tmp_path):
    """The runs target the track step's output (which reads the records); the publish and
    report steps after it have no part in this."""
    from conftest import snakemake

    reference, env = smoke_run
    work = tmp_path / "work"
    shutil.copytree(reference, work, symlinks=True)
    env = {**env, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlruns.db'}"}
    record = work / "results/smoke/runs/iris/euclidean/part0.json"
    record.write_text(record.read_text()[:3000])  # a cut-short record, as a full disk leaves
    run = ["results/smoke/tracking.json", "--cores", "2", "--configfile", "config/smoke.yaml"]
    first = snakemake(work, *run, env=env)
    log = (work / "logs/smoke/track.log").read_text()
    assert first.returncode != 0 and str(record.relative_to(work)) in log
    assert "Traceback" not in log and "set aside" in log and not record.exists()
    second = snakemake(work, *run, env=env)
    assert second.returncode == 0, second.stderr[-3000:]
    # only the euclidean step ran again, and it computed only the set-aside record (iris): the
    # other data set's record file was current
    assert second.stderr.count("rule run_") == 1 and "rule run_euclidean:" in second.stderr
    assert "localrule track" in second.stderr
    assert records.read(record)
    log = (work / "logs/smoke/run/euclidean.log").read_text()
    assert "wine / euclidean: results/smoke/runs/wine/euclidean/part0.json is current" in log
    assert "iris / euclidean / split 0" in log and "wine / euclidean / split" not in log


# ---- 6. non-finite numbers are refused where a finite number is meant

def _smoke() -> dict:
    import yaml
    return yaml.safe_load((REPO / "config" / "smoke.yaml").read_text())


@pytest.mark.parametrize("where, value, key", [
    ("preprocess", [{"gaussian_blur": float("nan")}], "preprocess.0.gaussian_blur"),
    ("report", {"rope": float("nan")}, "report.rope"),
    ("report", {"rope": float("inf")}, "report.rope"),
    ("hubness_k", float("nan"), "hubness_k"),
])
def test_non_finite_numbers_are_refused_naming_the_key(where, value, key):
    cfg = _smoke()
    cfg[where] = value
    with pytest.raises(config.ConfigError, match=f"'{key}': must be a finite number"):
        config.validate_schema(cfg)


def test_check_config_refuses_a_nan_in_yaml(tmp_path, capsys):
    text = (REPO / "config" / "smoke.yaml").read_text().replace(
        "preprocess: [zscore]", "preprocess: [zscore, {gaussian_blur: .nan}]")
    (tmp_path / "c.yaml").write_text(text)
    assert cli.main(["check-config", str(tmp_path / "c.yaml")]) == 2
    assert "preprocess.1.gaussian_blur': must be a finite number, got nan" in \
        capsys.readouterr().err


# ---- 7. out of space, read-only output, full store: one line, no RUNNING run

def _job_args(tmp_path) -> list:
    cfg = copy.deepcopy(CFG)
    cfg["methods"] = {"euclidean": None}
    run_jobs(cfg, tmp_path, tmp_path)  # the cache and splits the job reads
    cfg = plan.check({**cfg, "data": {"cache": str(tmp_path / "cache")}})
    [j] = plan.jobs(cfg)
    return ["run", "--job", json.dumps(plan.job_spec(cfg, j.dataset, j.method, j.splits))]


def test_a_full_disk_while_writing_the_record_is_one_line(tmp_path, monkeypatch, capsys):
    args = _job_args(tmp_path)
    out = tmp_path / "out" / "part0.json"

    def no_space(self, *a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", no_space)
    assert cli.main([*args, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"dmlbench run: error: cannot write {out}: no space left: free some, or " \
                      "write elsewhere, and run again"
    assert list(out.parent.iterdir()) == []  # no partial file, no temporary


def _in_mount(tmp_path, options: str, command: list) -> subprocess.CompletedProcess:
    """`command` with a tmpfs mounted (`options`) on tmp_path/mnt, in a mount namespace of its
    own (root only; skipped where the sandbox forbids it)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare to mount a file system for the test")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = (f"mount -t tmpfs -o {options} tmpfs {mnt} || exit 99; "
              + " ".join(map(json.dumps, command)))
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                            timeout=600)
    if result.returncode == 99:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
    return result


@pytest.mark.parametrize("options, remedy", [("ro,size=1m", "read-only file system"),
                                             ("size=4k,nr_inodes=2", "no space left")])
def test_a_read_only_or_full_output_is_one_line_naming_the_path(tmp_path, options, remedy):
    args = _job_args(tmp_path)
    out = tmp_path / "mnt" / "runs" / "part0.json"
    result = _in_mount(tmp_path, options, [sys.executable, "-m", "dmlbench.cli", *args,
                                           "--out", str(out)])
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert lines[-1].startswith(f"dmlbench run: error: cannot write {out}") and remedy in lines[-1]


def test_a_full_store_is_one_line_and_leaves_no_running_run(tmp_path, mlflow_uri, monkeypatch,
                                                           capsys):
    """SQLite's page limit stands for a full disk: the store takes the first run, then no more."""
    import mlflow
    import sqlalchemy

    paths = run_jobs(copy.deepcopy(CFG), tmp_path, tmp_path)
    schema = subprocess.run([sys.executable, "-c", "from dmlbench.records import tracking; "
                             "tracking.client()"], capture_output=True, text=True)
    assert schema.returncode == 0, schema.stderr  # the tables, made before the limit
    db = Path(mlflow_uri[len("sqlite:///"):])
    pages = sqlite3.connect(db).execute("PRAGMA page_count").fetchone()[0]

    def limit(connection, _):  # rows still fit into the free space of the pages there are
        connection.execute(f"PRAGMA max_page_count = {pages}")

    sqlalchemy.event.listen(sqlalchemy.engine.Engine, "connect", limit)
    try:
        code = cli.main(["ingest", *map(str, paths)])
    finally:
        sqlalchemy.event.remove(sqlalchemy.engine.Engine, "connect", limit)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "Traceback" not in err[0]
    assert err[0].startswith("dmlbench ingest: error: cannot write the MLflow store sqlite: "
                             "mlruns.db: no space left")
    runs = mlflow.search_runs(search_all_experiments=True)
    assert len(runs) >= 1 and "RUNNING" not in set(runs["status"])
    # with room again, the next ingest completes every run
    again = subprocess.run([sys.executable, "-m", "dmlbench.cli", "ingest", *map(str, paths)],
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    runs = mlflow.search_runs(search_all_experiments=True, filter_string="tags.`dmlbench.kind` != ''")
    assert set(runs["status"]) == {"FINISHED"} and len(runs) == 6


# ---- 8. published pages name the store by scheme and name only

@pytest.mark.parametrize("uri, label", [
    ("sqlite:////work/runs/am17/mlruns.db", "sqlite: mlruns.db"),
    ("sqlite:///mlruns.db", "sqlite: mlruns.db"),
    ("postgresql://alice:s3cret@db.example:5432/mlflow", "postgresql://db.example/mlflow"),
    ("postgresql+psycopg2://alice:s3cret@db.example/mlflow?sslmode=require",
     "postgresql://db.example/mlflow"),
    ("https://bob:pw@mlflow.example:8443/team?token=abc", "https://mlflow.example:8443/team"),
    ("http://127.0.0.1:5000", "http://127.0.0.1:5000"),
    ("file:///root/mlruns", "file: mlruns"),
])
def test_the_store_label_names_no_credentials_or_local_paths(uri, label):
    assert tracking.store_label(uri) == label


@pytest.mark.parametrize("mirror, shown", [
    ("/work/shared/data/uci", "<local directory>/uci"),
    ("file:///root/mirror/", "<local directory>/mirror"),
    ("https://u:p@mirror.example:8443/data/?key=1", "https://mirror.example:8443/data/"),
])
def test_the_public_config_shows_no_local_path_or_credential(mirror, shown):
    cfg = {"benchmark": "b", "data": {"cache": "resources", "mirror": mirror}}
    assert public_config(cfg)["data"]["mirror"] == shown
    assert public_config(public_config(cfg)) == public_config(cfg)
    assert cfg["data"]["mirror"] == mirror


def test_no_committed_report_holds_a_store_uri_or_a_machine_path():
    found = []
    for path in (REPO / "reports").rglob("*"):
        if path.suffix in (".html", ".json", ".csv", ".md", ".tex"):
            text = path.read_text(errors="replace")
            found += [f"{path}: {w}" for w in ("sqlite:/", "postgresql:/", "/work/", "/root/",
                                               "/tmp/", "/home/") if w in text]
    assert not found, found[:5]
    for manifest in (REPO / "reports").glob("*/records/manifest.json"):
        publish.verified_files(manifest.parent)


def test_every_committed_record_is_of_the_settings_its_published_config_gives_its_job():
    """A published record file carries the parent key and exactly the splits its report's
    config gives its job (`plan.job_spec`): a record of earlier settings must not stand in a
    report (the reality check once kept LDA records from before LDA's space gained
    shrinkage); nor a record file of a job the config does not have. A learning curve's job
    is keyed with its training size. Jobs not yet run are not checked here."""
    found = []
    for config_file in sorted((REPO / "reports").glob("*/config.json")):
        cfg = json.loads(config_file.read_text())
        results = Path("results", cfg["benchmark"])
        jobs = {Path(plan.record_path(cfg, j)).relative_to(results).with_suffix(".json.gz")
                for j in plan.jobs(cfg)}
        found += [str(path.relative_to(REPO)) for path in
                  (config_file.parent / "records").glob("runs/**/*.json.gz")
                  if path.relative_to(config_file.parent / "records") not in jobs]
        for j in plan.jobs(cfg):
            relative = Path(plan.record_path(cfg, j)).relative_to(results)
            path = config_file.parent / "records" / relative.with_suffix(".json.gz")
            if not path.exists():
                continue
            key = plan.job_spec(cfg, j.dataset, j.method, j.splits, j.train_size)["parent_key"]
            split_records = json.loads(gzip.decompress(path.read_bytes()))["records"]
            if (any(r["parent_key"] != key for r in split_records)
                    or sorted(r["split"]["index"] for r in split_records) != list(j.splits)):
                found.append(str(path.relative_to(REPO)))
    assert not found, found


# ---- 9. a killed download's temporary folder goes with the next use of the cache

def test_stale_temporary_download_folders_are_removed_by_any_use_of_the_cache(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    downloads = cache.downloads_dir(tmp_path / "cache")
    stale = downloads / f".usps.{files._HOST}.{dead.pid}.x1y2.tmpdir"
    (stale / ".archives").mkdir(parents=True)
    (stale / "zip.train.gz").write_bytes(b"part")
    alive = downloads / f".colon.{files._HOST}.{os.getpid()}.a1b2.tmpdir"
    alive.mkdir()
    other_host = downloads / f".tdt.elsewhere.{dead.pid}.c3d4.tmpdir"
    other_host.mkdir()
    data.ensure("iris", tmp_path / "cache")  # another data set, embedded
    assert not stale.exists() and alive.exists() and other_host.exists()


def test_reading_the_config_back_leaves_no_temporary_folder(tmp_path, mlflow_uri, monkeypatch):
    """MLflow downloads an artifact into a temporary folder it never removes, one per report."""
    from dmlbench.report import runs

    paths = run_jobs(copy.deepcopy(CFG), tmp_path / "jobs", tmp_path)
    tracking.ingest(paths, config={"benchmark": "track-test", "report": {"rope": 0.01}})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr("tempfile.tempdir", None)
    assert runs.load_config("track-test") == {"benchmark": "track-test", "report": {"rope": 0.01}}
    assert list(scratch.iterdir()) == []


# ---- 10. round four (issue 45): records that are not their config's, code versions

def _reseal(out: Path) -> None:
    """A published folder's manifest made to match its files again: what someone (or a tool)
    publishing records of other settings produces; the manifest itself then passes."""
    path, manifest = _manifest(out)
    manifest["files"] = {relative: hashlib.sha256((out / "records" / relative).read_bytes())
                         .hexdigest() for relative in manifest["files"]}
    manifest["config"] = hashlib.sha256((out / "config.json").read_bytes()).hexdigest()
    path.write_text(json.dumps(manifest))


def _edit_config(out: Path, change) -> None:
    path = out / "config.json"
    cfg = json.loads(path.read_text())
    change(cfg)
    path.write_text(json.dumps(cfg))
    _reseal(out)


PLUGIN_SCALE = '''
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


class Scale(TransformerMixin, BaseEstimator):
    def __init__(self, factor=1.0):
        self.factor = factor

    def fit(self, X, y=None):
        self.scale_ = self.factor / np.std(X, axis=0).clip(1e-12)
        return self

    def transform(self, X):
        return np.asarray(X) * self.scale_
'''


@pytest.fixture
def published_plugin(tmp_path):
    """A report folder holding the records of a plug-in method (a file) on iris."""
    (tmp_path / "scale.py").write_text(PLUGIN_SCALE)
    results = tmp_path / "results" / "track-test"
    folder = results / "runs" / "iris"
    folder.mkdir(parents=True)
    cfg = {**copy.deepcopy(CFG), "methods": {
        "scale": {"class": str(tmp_path / "scale.py:Scale"), "params": {"factor": 2.0}}}}
    paths = run_jobs(cfg, tmp_path, folder)
    checked = plan.check({**cfg, "data": {"cache": str(tmp_path / "cache")}})
    out = tmp_path / "reports" / "track-test"
    publish.publish(paths, [], checked, out, results)
    return out


def _set_param(cfg):
    cfg["methods"]["rca"] = {"params": {"num_dims": 2}}


def _drop_method(cfg):
    del cfg["methods"]["rca"]


def _other_seed(cfg):
    cfg["seed"] = 1


@pytest.mark.parametrize("change, file, named", [
    (_set_param, "rca", "method 'rca' on data set 'iris': parameters {'num_dims': 2} in the "
                        "config, {} in the record"),
    (_drop_method, "rca", "method 'rca' is not in the config"),
    (_other_seed, "euclidean", "seed 1 in the config, 0 in the record"),
])
def test_report_refuses_records_that_are_not_of_the_jobs_their_config_gives(
        published, tmp_path, capsys, change, file, named):
    """Issue 45.3: a records folder whose config.json names other settings than its records
    were run with (what `run_in_pieces` published after a failed rerun) is refused, naming the
    first record that differs and how, even when its manifest was sealed again."""
    _edit_config(published, change)
    publish.verified_files(published / "records")  # the manifest itself is in order
    code = cli.main(["report", "--records", str(published / "records"),
                     "--out", str(tmp_path / "rebuilt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "Traceback" not in err[0], err
    assert f"{file}.json.gz: not a record of the job" in err[0] and named in err[0]
    assert not (tmp_path / "rebuilt" / "index.html").exists()


def test_report_refuses_records_of_another_plugin_class(published_plugin, tmp_path, capsys):
    _edit_config(published_plugin, lambda cfg: cfg["methods"]["scale"].__setitem__(
        "class", "<local directory>/scale2.py:Scale"))
    code = cli.main(["report", "--records", str(published_plugin / "records"),
                     "--out", str(tmp_path / "rebuilt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "method 'scale': the config's class is scale2.py:Scale, the record's scale.py:Scale" \
        in err[0]


def test_report_builds_a_plugins_records_whose_file_is_not_at_hand(published_plugin, tmp_path):
    """A published config names a plug-in file without its folder: its sha256, part of the
    job's identity, comes from the records; the records of the config's own settings pass."""
    assert cli.main(["report", "--records", str(published_plugin / "records"),
                     "--out", str(tmp_path / "rebuilt")]) == 0
    cfg = json.loads((published_plugin / "config.json").read_text())
    assert cfg["methods"]["scale"]["class"] == "<local directory>/scale.py:Scale"
    [path] = publish.verified_files(published_plugin / "records")[0]
    [record, *_] = records.load(path)["records"]
    assert plan.record_mismatch(cfg, record) is None
    forged = copy.deepcopy(record)
    forged["method"]["plugin"]["sha256"] = "0" * 64  # another file: another parent key
    assert "parent key" in plan.record_mismatch(cfg, forged)


def _set_code_version(out: Path, relative: str, version: str) -> None:
    path = out / "records" / relative
    document = records.load(path)
    for record in document["records"]:
        record["environment"]["code_version"] = version
    files.write_json_gz(path, document)


def test_records_of_two_code_versions_make_the_report_warn(published, tmp_path):
    """Issue 46.6: the provenance section lists every code version of the records with its
    git commits, and a page built from records of several versions says so at its top."""
    _, manifest = _manifest(published)
    first, second = manifest["records"]
    _set_code_version(published, first, "0123456789ab")
    _set_code_version(published, second, "ba9876543210+dirty.0badf00d")
    _reseal(published)
    assert cli.main(["report", "--records", str(published / "records"),
                     "--out", str(tmp_path / "rebuilt")]) == 0
    page = (tmp_path / "rebuilt" / "index.html").read_text()
    assert "Several code versions" in page and "<code>0123456789ab</code>" in page
    assert "these records come from 2 code versions" in page
    commit = records.git_commit()[:12]
    assert f"0123456789ab (git {commit}" in page and "ba9876543210+dirty.0badf00d (git" in page
    _set_code_version(published, second, "0123456789ab")
    _reseal(published)
    assert cli.main(["report", "--records", str(published / "records"),
                     "--out", str(tmp_path / "again")]) == 0
    page = (tmp_path / "again" / "index.html").read_text()
    assert "Several code versions" not in page and "0123456789ab (git" in page


def _predate_code_versions(out: Path, relative: str, commit: str) -> None:
    """Make a record file look written before code versions were recorded, by `commit`."""
    path = out / "records" / relative
    document = records.load(path)
    for record in document["records"]:
        record["environment"].pop("code_version", None)
        record["environment"]["git_commit"] = commit
    files.write_json_gz(path, document)


def test_records_of_several_commits_without_code_versions_make_the_report_warn(published,
                                                                               tmp_path):
    """Records written before code versions were recorded name only their git commit: a page
    built from records of several commits says so at its top and in its provenance (they may
    hold several versions of the code); one commit, no warning."""
    _, manifest = _manifest(published)
    first, second = manifest["records"]
    _predate_code_versions(published, first, "1111111111112222")
    _predate_code_versions(published, second, "3333333333334444+dirty")
    _reseal(published)
    assert cli.main(["report", "--records", str(published / "records"),
                     "--out", str(tmp_path / "rebuilt")]) == 0
    page = (tmp_path / "rebuilt" / "index.html").read_text()
    assert "Several commits:</b> 2 commits computed the records" in page
    assert "<code>111111111111</code>" in page and "<code>333333333333+dirty</code>" in page
    assert "Warning: 2 commits computed these records" in page
    assert "Several code versions" not in page
    _predate_code_versions(published, second, "1111111111112222")
    _reseal(published)
    assert cli.main(["report", "--records", str(published / "records"),
                     "--out", str(tmp_path / "again")]) == 0
    page = (tmp_path / "again" / "index.html").read_text()
    assert "Several commits" not in page and "commits computed these records" not in page


def test_the_code_version_ignores_records_and_docs_but_not_code(tmp_path):
    """The code version is that of Snakefile, src/dmlbench and workflow/: a commit adding a
    record or a doc keeps it, one changing the code does not (a checkout of its own)."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for item in ("Snakefile", "src", "workflow"):
        (shutil.copytree if (REPO / item).is_dir() else shutil.copy)(
            REPO / item, clone / item, **({"symlinks": True} if item != "Snakefile" else {}))
    subprocess.run(["git", "init", "-q"], cwd=clone, check=True)
    script = "from dmlbench import records; print(records.code_version())"

    def version() -> str:
        return subprocess.run([sys.executable, "-c", script], cwd=clone, check=True, text=True,
                              capture_output=True, env={**os.environ, "PYTHONPATH":
                                                        str(clone / "src")}).stdout.strip()

    def commit(path: str, text: str) -> None:
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_text(text)
        subprocess.run(["git", "add", "-A"], cwd=clone, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm",
                        path], cwd=clone, check=True)

    assert version() == "unknown"  # no commit yet
    commit(".gitignore", "__pycache__/\n")
    first = version()
    assert len(first) == 12 and "dirty" not in first
    commit("docs/new-page.md", "a page\n")
    commit("reports/x/records/runs/a/b/part0.json.gz", "a record\n")
    assert version() == first
    (clone / "workflow/rules/train.smk").write_text("# edited\n")
    dirty = version()
    assert dirty.startswith(first + "+dirty.")
    (clone / "workflow/rules/train.smk").write_text("# edited again\n")
    assert version() not in (first, dirty)
    commit("workflow/rules/train.smk", "# edited\n")
    assert version() not in (first, dirty) and "dirty" not in version()


TINY = {"benchmark": "tiny", "seed": 0, "k": [1], "hubness_k": 3,
        "protocol": {"kind": "holdout", "repeats": 2, "train_fraction": 0.7},
        "datasets": {"iris": None, "wine": None}, "methods": {"euclidean": None}}


@pytest.mark.slow
@pytest.mark.workflow
def test_a_deleted_record_of_a_finished_workflow_is_computed_again(tmp_path):
    """Issue 45.12: a record file deleted after the workflow finished is computed again by the
    next run (Snakemake runs a job whose output is missing only when it is a target or a job
    that needs it runs: the records are targets of `all`), and so are the steps that read it;
    the other record is kept."""
    import yaml
    from conftest import copy_project, snakemake

    work = copy_project(tmp_path)
    (work / "config" / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlruns.db'}"}
    run = ["--cores", "1", "--configfile", "config/tiny.yaml"]
    first = snakemake(work, *run, env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    iris, wine = (work / f"results/tiny/runs/{ds}/euclidean/part0.json" for ds in ("iris", "wine"))
    kept = wine.read_bytes()
    iris.unlink()
    dry = snakemake(work, "-n", *run, env=env)
    assert "Nothing to be done" not in dry.stdout + dry.stderr
    again = snakemake(work, *run, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert records.read(iris) and wine.read_bytes() == kept
    for step in ("rule run_euclidean", "localrule track", "localrule publish", "localrule report"):
        assert step in again.stderr, step
    log = (work / "logs/tiny/run/euclidean.log").read_text()
    assert "wine / euclidean: results/tiny/runs/wine/euclidean/part0.json is current" in log


# ---- 11. time limits, hard exits and over-budget records (issues 45.5, 45.8, 47.3)

#: plug-in methods that misbehave in `fit`: sleep (Python code: the job's own limit stops it),
#: spin in compiled code that never returns to the interpreter (only the watchdog stops it),
#: run out of memory, crash, exit
MISBEHAVING = '''
import ctypes
import itertools
import os
import time

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


HOARD_BYTES = 600 * 2**20


class Base(TransformerMixin, BaseEstimator):
    def __init__(self, scale=1.0):
        self.scale = scale

    def transform(self, X):
        return np.asarray(X) * self.scale


class Sleeps(Base):
    def fit(self, X, y=None):
        time.sleep(25)
        return self


class Spins(Base):
    def fit(self, X, y=None):
        sum(itertools.repeat(1, 10**15))  # one C loop: no signal is handled meanwhile
        return self


class Allocates(Base):
    def fit(self, X, y=None):
        raise MemoryError("Unable to allocate 7.45 PiB for an array with shape (10**15,)")


class Hoards(Base):
    def fit(self, X, y=None):
        held = np.ones(HOARD_BYTES // 8)  # written: resident
        time.sleep(3)
        return self


class Spikes(Base):
    def fit(self, X, y=None):
        np.ones(HOARD_BYTES // 8).sum()  # resident for an instant, then freed
        return self


class Crashes(Base):
    def fit(self, X, y=None):
        ctypes.string_at(0)  # reads address 0: a segmentation fault
        return self


class Exits(Base):
    def fit(self, X, y=None):
        os._exit(0)
'''


def _misbehaving_batch(tmp_path, classes: list[str], over_budget: str = "fail",
                       time_s: float = 2.0) -> list[dict]:
    """A batch: each plug-in class of `classes` on iris, with time limit `time_s`, then
    Euclidean on wine, with 10 minutes (two splits each; cache, splits and record files under
    tmp_path)."""
    (tmp_path / "misbehaving.py").write_text(MISBEHAVING)
    cfg = {**copy.deepcopy(CFG), "datasets": {"iris": None, "wine": None},
           "data": {"cache": str(tmp_path / "cache")},
           **({"over_budget": over_budget} if over_budget != "fail" else {}),
           "methods": {**{name.lower(): {"class": f"{tmp_path / 'misbehaving.py'}:{name}",
                                         "datasets": ["iris"]} for name in classes},
                       "euclidean": {"datasets": ["wine"]}}}
    cfg = plan.check(cfg)
    for label in ("iris", "wine"):
        ds = data.ensure(label, tmp_path / "cache")
        protocol = config.dataset_protocol(cfg, label)
        protocols_save(cfg, label, ds, protocol)
    batch = []
    for j in plan.jobs(cfg):
        spec = plan.job_spec(cfg, j.dataset, j.method, j.splits)
        spec.setdefault("limits", {})["time_s"] = time_s if j.dataset == "iris" else 600.0
        batch.append({"job": spec, "out": str(tmp_path / "runs" / j.dataset / j.method /
                                             "part0.json")})
    return batch


def protocols_save(cfg, label, ds, protocol):
    from dmlbench.run import protocols

    protocols.save_splits(plan.split_path(cfg, label), protocols.make_splits(
        ds.y, protocol, cfg["seed"]), protocol, cfg["seed"], ds.meta["sha256"])


@pytest.mark.parametrize("fork", [True, False])
def test_a_job_over_its_time_limit_fails_naming_method_and_limit_and_the_others_run(
        tmp_path, capfd, monkeypatch, fork):
    """Issue 45.5: a job's `runtime` is enforced without a cluster scheduler: a fit that runs
    past it fails naming the method, the data set and the limit; the next job of the batch
    still runs. Also where the jobs run in the batch's own process (no `os.fork`)."""
    from dmlbench.run import job

    if not fork:
        monkeypatch.delattr(os, "fork")
    batch = _misbehaving_batch(tmp_path, ["Sleeps"])
    with pytest.raises(job.BatchError, match=r"1 of 2 jobs failed: method 'sleeps' on data set "
                                             r"'iris' exceeded its time limit of 2 s \(used"):
        job.run_batch(batch, progress=False)
    sleeps, euclidean = batch
    assert not Path(sleeps["out"]).exists() and job.is_current(euclidean["job"],
                                                                euclidean["out"])
    err = capfd.readouterr().err
    assert "dmlbench run: running method 'sleeps' on data set 'iris' (time limit 2 s)" in err


@pytest.mark.parametrize("over_budget", ["fail", "record"])
def test_a_job_stuck_in_compiled_code_is_stopped_and_the_others_run(tmp_path, capfd,
                                                                    monkeypatch, over_budget):
    """Issue 45.5/45.8: a fit that never returns to the interpreter (one C loop) cannot be
    interrupted by the job's own limit; the process watching the batch dumps its traceback,
    ends it once the grace past the limit is over, names the method, the data set and the
    limit, and runs the next job in a new process. Under `over_budget: record` the job's
    records say so instead."""
    from dmlbench.run import job, supervise

    monkeypatch.setattr(supervise, "grace_seconds", lambda limit: 1.0)
    batch = _misbehaving_batch(tmp_path, ["Spins"], over_budget)
    spins, euclidean = batch
    if over_budget == "fail":
        with pytest.raises(job.BatchError, match=r"method 'spins' on data set 'iris' exceeded "
                                                 r"its time limit of 2 s \(used .*did not stop "
                                                 r"within 1 s past it"):
            job.run_batch(batch, progress=False)
        assert not Path(spins["out"]).exists()
    else:
        assert job.run_batch(batch, progress=False) == batch
        [entry] = {json.dumps(r["over_budget"]["limit"]) for r in records.read(spins["out"])}
        assert json.loads(entry) == {"time_s": 2.0, "mem_mb": spins["job"]["limits"]["mem_mb"]}
        assert job.is_current(spins["job"], spins["out"])
    assert job.is_current(euclidean["job"], euclidean["out"])
    err = capfd.readouterr().err
    assert "in fit" in err and "misbehaving.py" in err  # the stuck child's traceback


@pytest.mark.parametrize("name, how", [
    ("Crashes", "ended the process by signal SIGSEGV (segmentation fault)"),
    ("Exits", "ended the process with exit status 0 before its record was written"),
])
def test_a_job_that_ends_its_process_is_named_and_the_others_run(tmp_path, capfd, name, how):
    """Issue 45.8: a segmentation fault or an `os._exit` in a fit ends the job's process; the
    batch names the job and how it ended (the crash's traceback before it), and the next job
    runs."""
    from dmlbench.run import job

    batch = _misbehaving_batch(tmp_path, [name])
    with pytest.raises(job.BatchError, match=f"1 of 2 jobs failed: method '{name.lower()}' on "
                                             f"data set 'iris' {re.escape(how)}"):
        job.run_batch(batch, progress=False)
    assert job.is_current(batch[1]["job"], batch[1]["out"])
    err = capfd.readouterr().err
    assert f"dmlbench run: running method '{name.lower()}' on data set 'iris'" in err
    assert f"dmlbench run: error: method '{name.lower()}' on data set 'iris' {how}" in err
    if name == "Crashes":
        assert "Fatal Python error: Segmentation fault" in err and "in fit" in err


@pytest.mark.parametrize("name, reason", [("Sleeps", "time"), ("Allocates", "memory")])
def test_a_job_over_budget_ends_with_a_record_that_says_so(tmp_path, mlflow_uri, name, reason):
    """Issue 47.3: under `over_budget: record` a job over its time limit, or out of memory,
    ends with a record per split that says "over budget", its limits and what it used; the
    schema and MLflow take it, the report shows the cell as "over budget", and the record is
    computed again once its limits or the option change."""
    from dmlbench.report import runs as report_runs
    from dmlbench.report import tables
    from dmlbench.run import job

    batch = _misbehaving_batch(tmp_path, [name], "record")
    assert job.run_batch(batch, progress=False) == batch
    over, euclidean = batch
    split_records = records.read(over["out"])  # checked against the schema
    assert [r["split"]["index"] for r in split_records] == [0, 1]
    for record in split_records:
        entry = record["over_budget"]
        assert record["metrics"] == {} and entry["reason"] == reason
        assert entry["limit"] == {"time_s": 2.0, "mem_mb": over["job"]["limits"]["mem_mb"]}
        assert set(entry["used"]) == {"wall_s", "cpu_s", "peak_rss_mb"}
        if reason == "time":
            assert entry["used"]["wall_s"] >= 1.9 and entry["detail"] == "stopped at the limit"
        else:
            assert entry["detail"].startswith("MemoryError: Unable to allocate 7.45 PiB")
    with_metrics = copy.deepcopy(split_records[0])
    with_metrics["metrics"] = {"accuracy_k1": 0.5}  # an over-budget record has none
    with pytest.raises(ValueError, match="metrics"):
        records.validate({"schema_version": 1, "records": [with_metrics]})
    finished = records.read(euclidean["out"])[0]
    del finished["timings"]["fit_wall_s"]  # a finished one has all its timings
    with pytest.raises(ValueError, match="fit_wall_s"):
        records.validate({"schema_version": 1, "records": [finished]})
    measured_again = copy.deepcopy(split_records[0])
    measured_again["over_budget"]["used"]["wall_s"] += 1.0
    assert records.content_hash(measured_again) == records.content_hash(split_records[0])
    assert job.is_current(over["job"], over["out"])
    longer = copy.deepcopy(over["job"])
    longer["limits"]["time_s"] = 4.0
    failing = copy.deepcopy(over["job"])
    failing["limits"]["over_budget"] = "fail"
    assert job.why_not_current(longer, over["out"]) == "other limits"
    assert job.why_not_current(failing, over["out"]) == "other limits"
    # MLflow and the report
    summary = tracking.ingest([over["out"], euclidean["out"]])
    assert summary["counts"]["created"] == 4
    source = report_runs.RecordRuns([over["out"], euclidean["out"]])
    parents, _ = source.load()
    text = tables.mean_std(parents, "accuracy_k1", scale=100)
    assert text.loc["iris", f"{name.lower()}"] == "over budget"
    assert text.loc["wine", "euclidean"] not in ("over budget", "–")
    if reason == "time":  # every section of the page takes a parent without metrics
        from dmlbench import report

        page = report.build(source, tmp_path / "page").read_text()
        assert page.count(">over budget<") >= 2  # the 1-NN and 3-NN accuracy tables
    import mlflow

    tagged = mlflow.search_runs(experiment_names=["track-test"],
                                filter_string=f"tags.`{tracking.voc.Tag.OVER_BUDGET}` != ''")
    assert len(tagged) == 3  # the parent and its two splits
    assert all(t.startswith(f"{reason}: ") or t.startswith(f"2 of 2 splits; {reason}: ")
               for t in tagged[f"tags.{tracking.voc.Tag.OVER_BUDGET}"])


@pytest.mark.parametrize("name, fork, how", [
    ("Hoards", True, "its resident memory went above the"),
    ("Hoards", False, "finished, its peak resident memory"),
    ("Spikes", True, "finished, its peak resident memory"),
])
def test_a_job_above_its_memory_reservation_is_over_budget_without_a_cluster(
        tmp_path, monkeypatch, name, fork, how):
    """Issue 47.3: a job's `mem_mb` holds on a workstation as under a cluster's scheduler: a
    fit that stays above it is stopped by the batch's watcher, one that went above it for an
    instant (or runs where there is no `os.fork`) is found by its peak once it ends; either
    ends with records that say "over budget" for memory, or fails naming the reservation; the
    next job of the batch still runs."""
    import psutil

    from dmlbench.run import job, supervise

    if not fork:
        monkeypatch.delattr(os, "fork")
    if name == "Spikes":  # the watcher looks only when a job starts and ends: too late
        monkeypatch.setattr(supervise, "MEMORY_POLL_S", 3600.0)
    reserved = round(psutil.Process().memory_info().rss / 2**20) + 300  # < rss + 600 MiB
    for over in ("record", "fail"):
        (tmp_path / over).mkdir()
        batch = _misbehaving_batch(tmp_path / over, [name], over, time_s=60.0)
        for entry in batch:
            entry["job"]["limits"]["mem_mb"] = reserved
        hoards, euclidean = batch
        if over == "record":
            assert job.run_batch(batch, progress=False) == batch
            for record in records.read(hoards["out"]):
                entry = record["over_budget"]
                assert entry["reason"] == "memory" and entry["detail"].startswith(how)
                assert entry["used"]["peak_rss_mb"] > reserved
                assert entry["limit"] == {"time_s": 60.0, "mem_mb": reserved}
            smaller = copy.deepcopy(euclidean["job"])  # a finished job stands only within it
            smaller["limits"]["mem_mb"] = 1
            assert job.why_not_current(smaller, euclidean["out"]) == "other limits"
        else:
            with pytest.raises(job.BatchError, match=rf"1 of 2 jobs failed: method "
                                                     rf"'{name.lower()}' on data set 'iris' ran "
                                                     rf"out of memory \(it reserves {reserved} "
                                                     rf"MB\) \(used .*; {how}"):
                job.run_batch(batch, progress=False)
            assert not Path(hoards["out"]).exists()
        assert job.is_current(euclidean["job"], euclidean["out"])


@pytest.mark.slow
@pytest.mark.workflow
@pytest.mark.parametrize("name, how", [
    ("Exits", "ended the process with exit status 0 before its record was written"),
    ("Crashes", "ended the process by signal SIGSEGV (segmentation fault)")])
def test_a_workflow_step_whose_job_ends_its_process_names_it(tmp_path, name, how):
    """Issue 45.8 through Snakemake: a job of a shared step (job_group) that ends the process
    (`os._exit(0)`: Snakemake's "filesystem latency" message before; a segmentation fault: a
    log ending at a progress bar) is named in the step's log, the other jobs of the step run
    and their records are kept for the next run."""
    import yaml
    from conftest import copy_project, snakemake

    work = copy_project(tmp_path)
    (work / "config/plugins").mkdir()
    (work / "config/plugins/misbehaving.py").write_text(MISBEHAVING)
    settings = {**TINY, "datasets": {"iris": None},
                "methods": {"euclidean": {"job_group": "shared"},
                            "bad": {"class": f"plugins/misbehaving.py:{name}",
                                    "job_group": "shared"},
                            "rca": {"job_group": "shared"}}}
    (work / "config/tiny.yaml").write_text(yaml.safe_dump(settings))
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlruns.db'}"}
    result = snakemake(work, "--cores", "1", "--configfile", "config/tiny.yaml", env=env)
    assert result.returncode != 0
    assert "filesystem latency" not in result.stderr
    log = (work / "logs/tiny/run/shared.log").read_text()
    assert f"dmlbench run: error: method 'bad' on data set 'iris' {how}" in log
    assert log.rstrip().splitlines()[-1].startswith("dmlbench run: error: 1 of 3 jobs failed: "
                                                    f"method 'bad' on data set 'iris' {how}")
    runs = work / "results/tiny/runs/iris"
    assert sorted(p.parent.name for p in runs.rglob(".part0.json.kept")) == ["euclidean", "rca"]


# ---- 12. tracking stores that cannot be used: one line, in seconds (issue 45.9)

def _closed_port() -> int:
    """A loopback port nothing listens on (bound once, then released)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("scheme, shown", [
    ("postgresql://user:secret@127.0.0.1:{port}/mlflow", "postgresql://127.0.0.1/mlflow"),
    ("http://127.0.0.1:{port}", "http://127.0.0.1:{port}"),
])
def test_an_unreachable_tracking_store_is_one_line_naming_it(tmp_path, monkeypatch, capsys,
                                                            scheme, shown):
    """A PostgreSQL store or tracking server on a closed port: one line naming the store by
    scheme and name (no credentials) with the remedy, no traceback, and no minutes of MLflow's
    retries (the connection is refused at once; an unanswered one waits CONNECT_TIMEOUT_S)."""
    paths = run_jobs(copy.deepcopy(CFG), tmp_path, tmp_path)
    port = _closed_port()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", scheme.format(port=port))
    assert cli.main(["ingest", str(paths[0])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0] and "secret" not in err[0], err
    assert err[0].startswith(f"dmlbench ingest: error: cannot reach the MLflow store "
                             f"{shown.format(port=port)} (Connection refused): start it")
    assert "MLFLOW_TRACKING_URI" in err[0]
    assert tracking.CONNECT_TIMEOUT_S <= 10


def test_a_tracking_store_of_an_old_schema_names_mlflow_db_upgrade(tmp_path, monkeypatch,
                                                                  capsys):
    """A SQLite store made by an older MLflow (its alembic revision behind this MLflow's):
    one line naming the store and `mlflow db upgrade`."""
    paths = run_jobs(copy.deepcopy(CFG), tmp_path, tmp_path)
    uri = f"sqlite:///{tmp_path / 'old.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    assert cli.main(["ingest", str(paths[0])]) == 0
    tracking.create_schema_once.cache_clear()  # a new process opens it again
    with sqlite3.connect(tmp_path / "old.db") as db:  # an older MLflow's revision
        db.execute("UPDATE alembic_version SET version_num = '0a8213491aaa'")
    capsys.readouterr()
    assert cli.main(["ingest", str(paths[1])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert err[0].startswith("dmlbench ingest: error: the MLflow store sqlite: old.db has an "
                             "old schema (version 0a8213491aaa; this MLflow needs ")
    assert "mlflow db upgrade" in err[0]
