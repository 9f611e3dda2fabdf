"""tools/run_in_pieces.py: the order of the pieces and the restore of published records."""
import gzip
import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import copy_project

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("run_in_pieces", REPO / "tools" / "run_in_pieces.py")
pieces = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pieces)


def test_the_reality_check_runs_every_data_set_once_smallest_first(capsys):
    config = pieces.load(str(REPO / "config" / "reality-check.yaml"), [])
    labels = pieces.order(config)
    assert sorted(labels) == sorted(config["datasets"])
    sizes = [pieces.sources.dataset_spec(config, label) for label in labels]
    assert [s.n * s.d for s in sizes] == sorted(s.n * s.d for s in sizes)
    assert pieces.main([str(REPO / "config" / "reality-check.yaml"), "--dry-run",
                        "--skip-methods", "lmnn"]) == 0
    lines = capsys.readouterr().out.split()
    assert lines[0::2] == labels and set(lines[1::2]) == {"16"}  # 17 methods less LMNN


def test_published_records_are_restored_once_and_decompressed(tmp_path):
    published, results = tmp_path / "reports" / "b" / "records", tmp_path / "results" / "b"
    record = published / "runs" / "iris" / "pca" / "part0.json.gz"
    arrays = published / "runs" / "iris" / "pca" / "part0.arrays" / "split0.npz"
    arrays.parent.mkdir(parents=True)
    record.write_bytes(gzip.compress(json.dumps({"records": []}).encode()))
    arrays.write_bytes(b"npz")
    assert pieces.restore(results, published) == 2
    assert json.loads((results / "runs" / "iris" / "pca" / "part0.json").read_text()) == {
        "records": []}
    assert (results / "runs" / "iris" / "pca" / "part0.arrays" / "split0.npz").read_bytes() == b"npz"
    assert pieces.restore(results, published) == 0
    assert pieces.published_path(results, published, str(results / "runs/iris/pca/part0.json")) == record


def test_a_restored_record_is_made_newer_than_a_split_file_written_after_it(tmp_path):
    """A fresh clone restores the published records before the prepare step writes the split
    files; restoring a data set again after its prepare step must make its records newer than
    its split file, or `dmlbench run` recomputes every one of them (not current)."""
    import os
    published, results = tmp_path / "reports" / "b" / "records", tmp_path / "results" / "b"
    for label in ("iris", "wine"):
        record = published / "runs" / label / "pca" / "part0.json.gz"
        record.parent.mkdir(parents=True)
        record.write_bytes(gzip.compress(json.dumps({"records": [label]}).encode()))
    assert pieces.restore(results, published) == 2
    restored = {label: results / "runs" / label / "pca" / "part0.json" for label in ("iris", "wine")}
    for path in restored.values():
        os.utime(path, (1_000, 1_000))  # restored long before the split file was written
    changed = results / "runs" / "wine" / "pca" / "part0.json"
    changed.write_text('{"records": ["computed here"]}')
    os.utime(changed, (1_000, 1_000))
    assert pieces.restore(results, published, "iris") == 0
    assert restored["iris"].stat().st_mtime > 1_000  # touched: newer than the split file
    assert restored["wine"].stat().st_mtime == 1_000  # another data set: left alone
    assert pieces.restore(results, published, "wine") == 0
    assert changed.stat().st_mtime == 1_000  # not the published content: left alone
    assert json.loads(changed.read_text()) == {"records": ["computed here"]}


def _record(key: str, splits: list[int]) -> bytes:
    return gzip.compress(json.dumps({"records": [
        {"parent_key": key, "split": {"index": i}} for i in splits]}).encode())


def test_a_record_of_earlier_settings_is_neither_restored_nor_counted_as_published(tmp_path):
    """A method's settings changed after its record was published (in the reality check: LDA's
    search space gained shrinkage after the first four sets ran): its job must run again, so
    the published record is not restored and the data set is not done."""
    published, results = tmp_path / "reports" / "b" / "records", tmp_path / "results" / "b"
    relative = {m: Path("runs", "iris", m, "part0.json") for m in ("pca", "lda")}
    for method, key in (("pca", "current"), ("lda", "earlier")):
        path = published / relative[method].with_suffix(".json.gz")
        path.parent.mkdir(parents=True)
        path.write_bytes(_record(key, [0, 1]))
    want = {relative["pca"]: ("current", [0, 1]), relative["lda"]: ("current", [0, 1])}
    assert pieces.restore(results, published, want=want) == 1
    assert (results / relative["pca"]).exists() and not (results / relative["lda"]).exists()
    assert pieces.is_published(results, published, str(results / relative["pca"]), want)
    assert not pieces.is_published(results, published, str(results / relative["lda"]), want)
    fewer = {relative["pca"]: ("current", [0])}  # the config now runs other splits
    assert not pieces.is_published(results, published, str(results / relative["pca"]), fewer)


def test_the_finished_run_rebuilds_its_report_then_writes_the_scoreboard(monkeypatch):
    """`--commit` publishes the finished run: the report from the published records, then the
    scoreboard (`dmlbench scoreboard`, the one step that writes reports/index.html), committed
    together."""
    calls = []
    monkeypatch.setattr(pieces.subprocess, "run", lambda args, **kw: calls.append(args))
    pieces.publish_report("b", Path("reports"), commit=True)
    commands = [[Path(a).name if i == 0 else a for i, a in enumerate(c)] for c in calls]
    assert commands[0] == ["dmlbench", "report", "--records", "reports/b/records",
                           "--out", "reports/b"]
    assert commands[1] == ["dmlbench", "scoreboard", "reports"]
    assert commands[2][:3] == ["git", "add", "-A"]
    assert {"reports/b", "reports/index.html", "reports/scoreboard.csv"} <= set(commands[2])
    assert commands[3][:2] == ["git", "commit"]


def test_the_reality_check_asks_for_its_records_by_parent_key_and_splits():
    config = pieces.load(str(REPO / "config" / "reality-check.yaml"), [])
    want = pieces.wanted(config, pieces.plan.jobs(config))
    assert len(want) == 578
    key, splits = want[Path("runs", "keel-iris", "lda", "part0.json")]
    spec = pieces.plan.job_spec(config, "keel-iris", "lda", list(range(10)))
    assert (key, splits) == (spec["parent_key"], list(range(10)))


PIECES_CONFIG = {"benchmark": "pieces", "seed": 0, "k": [1], "hubness_k": 3,
                 "protocol": {"kind": "holdout", "repeats": 2, "train_fraction": 0.7},
                 "datasets_per_job": 1, "datasets": {"iris": None, "wine": None},
                 "methods": {"euclidean": None, "lda": None}}


@pytest.mark.workflow
@pytest.mark.slow
def test_pieces_publish_resume_in_a_fresh_clone_and_rerun_only_changed_settings(
        tmp_path, monkeypatch):
    """End to end: the pieces publish every record; a fresh clone (no results/) computes
    nothing; after a method's settings change only its jobs run again, and the published
    records of the other method are left as they were."""
    work = copy_project(tmp_path)
    monkeypatch.chdir(work)
    config = work / "config" / "pieces.yaml"
    config.write_text(yaml.safe_dump(PIECES_CONFIG))
    published = work / "reports" / "pieces" / "records" / "runs"
    records = {(ds, m): published / ds / m / "part0.json.gz"
               for ds in ("iris", "wine") for m in ("euclidean", "lda")}

    def run() -> dict:  # two steps at once, each its own Snakemake in this folder
        assert pieces.main([str(config), "--cores", "2"]) == 0
        return {job: path.read_bytes() for job, path in records.items()}

    first = run()
    shutil.rmtree(work / "results")
    assert run() == first  # restored, none computed again (timings would differ)
    config.write_text(yaml.safe_dump({**PIECES_CONFIG, "methods": {
        "euclidean": None, "lda": {"params": {"shrinkage": "auto"}}}}))
    shutil.rmtree(work / "results")  # a fresh clone of the changed config
    third = run()
    for (ds, method), content in third.items():
        [record] = json.loads(gzip.decompress(content))["records"][:1]
        if method == "euclidean":
            assert content == first[(ds, method)]
        else:
            assert content != first[(ds, method)]
            assert record["method"]["config_params"] == {"shrinkage": "auto"}


def _fake_published(published: Path, config: dict, version: str) -> None:
    """Published record files of every job of `config` with the parent keys and splits it
    gives them, made by code version `version` (only what `restore` and the code-version check
    read)."""
    results = Path("results", config["benchmark"])
    for relative, (key, splits) in pieces.wanted(config, pieces.plan.jobs(config)).items():
        path = published / "runs" / relative.relative_to("runs").with_suffix(".json.gz")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(json.dumps({"records": [
            {"parent_key": key, "split": {"index": i},
             "environment": {"code_version": version}} for i in splits]}).encode()))
    assert results  # the results folder the records are restored into


def test_records_of_another_code_version_stop_the_pieces_naming_both(tmp_path, monkeypatch,
                                                                    capsys):
    """Issue 46.6: one published run is one code version. Published records of another code
    version than this checkout's stop the run before any job, naming both versions and a
    record file; `--allow-mixed-code` runs (and publishes) all the same."""
    monkeypatch.chdir(tmp_path)
    config_file = tmp_path / "pieces.yaml"
    config_file.write_text(yaml.safe_dump({**PIECES_CONFIG, "data": {"cache": "cache"}}))
    config = pieces.load(str(config_file), [])
    _fake_published(tmp_path / "reports" / "pieces" / "records", config, "0123456789ab")
    current = pieces.records.code_version()  # (cached) before the fake below stands in for git
    calls = []
    monkeypatch.setattr(pieces.subprocess, "run", lambda command, **kw: calls.append(command)
                        or subprocess.CompletedProcess(command, 0))
    assert pieces.main([str(config_file)]) == 2
    err = capsys.readouterr().err
    assert f"records of another code version than this checkout's ({current})" in err
    assert "code version 0123456789ab (4 record files, e.g. results/pieces/runs/" in err
    assert "--allow-mixed-code" in err and calls == []
    assert pieces.main([str(config_file), "--allow-mixed-code"]) == 0
    _fake_published(tmp_path / "reports" / "pieces" / "records", config, current)
    shutil.rmtree(tmp_path / "results")
    assert pieces.main([str(config_file)]) == 0  # one code version: nothing stops it


class FakeSnakemake:
    """A stand-in for `subprocess.Popen` of the step's `snakemake`: writes the step's record
    files (of the settings `want` gives them) once it has been polled `durations["<data
    set>/<method>"]` times (default once), and logs its start and end in `log`."""

    log: list = []
    durations: dict = {}
    want: dict = {}
    results = Path("results", "pieces")

    def __init__(self, command, **kw):
        self.targets = command[command.index("--") + 1:]
        self.name = sorted(Path(t).parent.relative_to(self.results / "runs").as_posix()
                           for t in self.targets)
        self.polls_left = max(self.durations.get(n, 1) for n in self.name)
        self.returncode = None
        self.log.append(("start", self.name))

    def poll(self):
        self.polls_left -= 1
        if self.polls_left == 0:
            current = pieces.records.code_version()
            for target in self.targets:
                key, splits = self.want[Path(target).relative_to(self.results)]
                Path(target).parent.mkdir(parents=True, exist_ok=True)
                Path(target).write_text(json.dumps({"records": [
                    {"parent_key": key, "split": {"index": i},
                     "environment": {"code_version": current}} for i in splits]}))
            self.returncode = 0
            self.log.append(("end", self.name))
        return self.returncode


def _fake_pieces(tmp_path, monkeypatch, durations: dict) -> tuple[Path, list]:
    """A git folder with the pieces config, the step processes `FakeSnakemake`, the other
    commands logged in the list returned (publish: the number of record files; commit: the
    message), finished record files counted as publishable."""
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    config_file = tmp_path / "pieces.yaml"
    config_file.write_text(yaml.safe_dump({**PIECES_CONFIG, "data": {"cache": "cache"}}))
    config = pieces.load(str(config_file), [])
    pieces.records.code_version()   # cached now: its git commands are not faked below
    calls = []
    monkeypatch.setattr(FakeSnakemake, "log", calls)
    monkeypatch.setattr(FakeSnakemake, "durations", durations)
    monkeypatch.setattr(FakeSnakemake, "want", pieces.wanted(config, pieces.plan.jobs(config)))

    def fake_run(command, **kw):
        if Path(command[0]).name == "dmlbench":
            calls.append(("publish", len([a for a in command if a.endswith(".json")])))
        elif command[:2] == ["git", "commit"]:
            calls.append(("commit", command[-1]))
        return subprocess.CompletedProcess(command, 1 if "check-ignore" in command else 0)

    monkeypatch.setattr(pieces.subprocess, "run", fake_run)
    monkeypatch.setattr(pieces.subprocess, "Popen", FakeSnakemake)
    monkeypatch.setattr(pieces, "POLL_S", 0)
    monkeypatch.setattr(pieces, "publishable", lambda config, results: (
        sorted(results.glob("runs/*/*/*.json")), []))
    return config_file, calls


def test_each_step_is_published_and_committed_before_the_next_runs(tmp_path, monkeypatch):
    """A session killed mid-run loses at most the step it was running: every (data set,
    method, training size) step runs alone and its finished records are published and
    committed before the next step starts."""
    config_file, calls = _fake_pieces(tmp_path, monkeypatch, {})
    assert pieces.main([str(config_file), "--commit"]) == 0
    expected = []
    for n, (dataset, method) in enumerate([("iris", "euclidean"), ("iris", "lda"),
                                           ("wine", "euclidean"), ("wine", "lda")], start=1):
        expected += [("start", [f"{dataset}/{method}"]), ("end", [f"{dataset}/{method}"]),
                     ("publish", n),
                     ("commit", f"pieces records: {method}_{dataset} ({n} record files in all)")]
    assert calls == expected
    curve = pieces.load(str(REPO / "config" / "at-scale.yaml"), [])
    named = pieces.steps(curve, "magic", ["lda", "lmnn"])
    assert [name for name, _ in named] == ["lda_magic", "lda_part1_magic", "lda_part2_magic",
                                           "lmnn_magic", "lmnn_part1_magic", "lmnn_part2_magic"]
    assert {(j.method, j.splits, j.train_size) for j in named[3][1]} == {
        ("lmnn", (0,), n) for n in (1000, 4000, None)}


def test_a_step_starts_as_soon_as_one_of_the_running_steps_ends(tmp_path, monkeypatch):
    """With two cores, two steps run at once and a third starts when the first of them ends,
    not when both have: a long step (euclidean on iris, 6 polls) runs beside three short ones
    in turn; each ended step is published and committed at once, the run's last step once the
    long one ends."""
    config_file, calls = _fake_pieces(tmp_path, monkeypatch, {"iris/euclidean": 6})
    assert pieces.main([str(config_file), "--commit", "--cores", "2"]) == 0
    starts_and_ends = [c for c in calls if c[0] in ("start", "end")]
    assert starts_and_ends[:2] == [("start", ["iris/euclidean"]), ("start", ["iris/lda"])]
    assert ("end", ["iris/euclidean"]) == starts_and_ends[-1]  # ... though started first
    assert starts_and_ends.index(("start", ["wine/lda"])) < starts_and_ends.index(
        ("end", ["iris/euclidean"]))
    running = 0
    for kind, _ in starts_and_ends:
        running += 1 if kind == "start" else -1
        assert running <= 2
    commits = [c[1] for c in calls if c[0] == "commit"]
    assert commits[-1] == "pieces records: euclidean_iris (4 record files in all)"
    assert len(commits) == 4


def test_publish_only_publishes_what_finished_and_starts_nothing(tmp_path, monkeypatch):
    """Before a session ends: the record files finished so far (here one of a step still
    running elsewhere) are published and committed, and no step starts."""
    config_file, calls = _fake_pieces(tmp_path, monkeypatch, {})
    record = Path("results", "pieces", "runs", "iris", "euclidean", "part0.json")
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"records": [{"environment": {
        "code_version": pieces.records.code_version()}}]}))
    assert pieces.main([str(config_file), "--commit", "--publish-only"]) == 0
    assert calls == [("publish", 1), ("commit", "pieces records: finished so far (1 record "
                                                "files in all)")]


#: a plug-in method that fails while ./FAIL exists
FAILING = '''
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


class Failing(TransformerMixin, BaseEstimator):
    def __init__(self, scale=1.0):
        self.scale = scale

    def fit(self, X, y=None):
        if Path("FAIL").exists():
            raise np.linalg.LinAlgError("fails while FAIL exists")
        self.scale_ = self.scale / np.std(X, axis=0).clip(1e-12)
        return self

    def transform(self, X):
        return np.asarray(X) * self.scale_
'''


@pytest.mark.workflow
@pytest.mark.slow
def test_a_changed_job_that_fails_is_not_published_with_its_old_records(tmp_path, monkeypatch,
                                                                       capsys):
    """Issue 45.3: a job whose settings changed and that then fails gets its previous record
    file put back by Snakemake; the pieces must neither publish it (its config.json names the
    new settings) nor exit 0. The next invocation, once the job works, publishes its new
    records."""
    from dmlbench import publish
    from dmlbench.run import plan

    work = copy_project(tmp_path)
    monkeypatch.chdir(work)
    (work / "config/plugins").mkdir()
    (work / "config/plugins/failing.py").write_text(FAILING)
    settings = {**PIECES_CONFIG, "datasets": {"iris": None},
                "methods": {"euclidean": None, "failing": {"class": "plugins/failing.py:Failing"}}}
    config = work / "config" / "pieces.yaml"
    config.write_text(yaml.safe_dump(settings))
    published = work / "reports" / "pieces" / "records"
    records = {m: published / "runs" / "iris" / m / "part0.json.gz" for m in settings["methods"]}
    assert pieces.main([str(config), "--cores", "1"]) == 0
    first = {m: path.read_bytes() for m, path in records.items()}
    settings["methods"]["failing"]["params"] = {"scale": 2.0}
    config.write_text(yaml.safe_dump(settings))
    (work / "FAIL").touch()
    capsys.readouterr()
    assert pieces.main([str(config), "--cores", "1"]) == 1
    out, err = capsys.readouterr()
    assert "results/pieces/runs/iris/failing/part0.json: other settings, set aside" in out
    assert "jobs failed in 1 step(s): failing (their logs under logs/pieces/" in err
    assert not records["failing"].exists() and records["euclidean"].read_bytes() == \
        first["euclidean"]
    paths, _, published_config = publish.verified_files(published)
    assert [plan.record_mismatch(published_config, r) for p in paths
            for r in json.loads(gzip.decompress(p.read_bytes()))["records"]] == [None, None]
    (work / "FAIL").unlink()
    assert pieces.main([str(config), "--cores", "1"]) == 0
    [record, *_] = json.loads(gzip.decompress(records["failing"].read_bytes()))["records"]
    assert record["method"]["config_params"] == {"scale": 2.0}


def test_the_schedule_replay_gives_the_hand_counted_wall_times():
    """benchmarks/pieces_schedule.py: steps of 5, 1, 1, 1 s on two cores take 5 + 1 s in fixed
    pairs and 5 s in a pool (the three short ones run one after the other beside the long one);
    one core runs them in 8 s either way."""
    spec = importlib.util.spec_from_file_location(
        "pieces_schedule", REPO / "benchmarks" / "pieces_schedule.py")
    schedule = importlib.util.module_from_spec(spec)
    import sys
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        spec.loader.exec_module(schedule)
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    assert schedule.in_groups([5, 1, 1, 1], 2) == 6 and schedule.in_pool([5, 1, 1, 1], 2) == 5
    assert schedule.in_groups([1, 1, 5, 1], 2) == 6 and schedule.in_pool([1, 1, 5, 1], 2) == 6
    assert schedule.in_groups([5, 1, 1, 1], 1) == schedule.in_pool([5, 1, 1, 1], 1) == 8
