"""Published reports: a report folder that carries what it was built from.

`reports/<benchmark>/` holds the report (index.html, figures/, tables/) and, written by the
workflow's `publish` step, `records/` (every record file of the run and study document, as
compact gzip-compressed JSON `<name>.json.gz`, and the arrays files the records name),
`config.json` (the checked config) and `records/manifest.json` (each file with its sha256). `rebuild` makes the report again from those files alone, through a
temporary MLflow store, without refitting anything: a reader can check every number without
running the benchmark.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from . import records, report, studies
from .files import atomic_path, read_json, write_json, write_json_gz
from .records import tracking

MANIFEST = "manifest.json"
CONFIG = "config.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _copy(source: Path, target: Path) -> None:
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)


def publish(record_paths: list[str | Path], documents: list[str | Path], config: dict,
            out_dir: str | Path, results_dir: str | Path) -> Path:
    """Copy the record files (with their arrays files) and study documents under
    `out_dir/records/`, keeping their paths relative to `results_dir`, and write the config and
    the manifest; returns the manifest's path. Files of earlier runs that the current run does
    not name are removed, so the folder is exactly what the report was built from."""
    out_dir, results_dir = Path(out_dir), Path(results_dir)
    target_root = out_dir / "records"
    manifest = {"benchmark": config["benchmark"], "records": [], "documents": [], "files": {}}

    def put(source: Path, compress: bool) -> str:
        relative = source.relative_to(results_dir).as_posix() + (".gz" if compress else "")
        if compress:
            write_json_gz(target_root / relative, read_json(source))
        else:
            _copy(source, target_root / relative)
        manifest["files"][relative] = _sha256(target_root / relative)
        return relative

    for path in map(Path, record_paths):
        manifest["records"].append(put(path, compress=True))
        for record in records.read(path):
            if "arrays" in record:  # named relative to the record file: kept beside it
                put(path.parent / record["arrays"]["file"], compress=False)
    manifest["documents"] = [put(Path(p), compress=True) for p in documents]
    for stale in target_root.rglob("*"):
        if stale.is_file() and stale.name != MANIFEST \
                and stale.relative_to(target_root).as_posix() not in manifest["files"]:
            stale.unlink()
    write_json(out_dir / CONFIG, config)
    write_json(target_root / MANIFEST, manifest)
    return target_root / MANIFEST


def verified_files(records_dir: str | Path) -> tuple[list[Path], list[Path], dict]:
    """(record files, study documents, config) of a published report, each file checked
    against the manifest's sha256 (`ValueError` naming the first that differs or is missing)."""
    records_dir = Path(records_dir)
    manifest_path = records_dir / MANIFEST
    if not manifest_path.exists():
        raise FileNotFoundError(f"{manifest_path} does not exist: not a published records folder "
                                "(the workflow's publish step writes it)")
    manifest = read_json(manifest_path)
    for relative, digest in manifest["files"].items():
        path = records_dir / relative
        if not path.exists():
            raise ValueError(f"published file {path} named by {manifest_path} is missing")
        if _sha256(path) != digest:
            raise ValueError(f"published file {path} does not match {manifest_path} (sha256)")
    config_path = records_dir.parent / CONFIG
    config = read_json(config_path) if config_path.exists() else None
    return ([records_dir / p for p in manifest["records"]],
            [records_dir / p for p in manifest["documents"]], config)


@contextmanager
def temporary_tracking_store():
    """MLFLOW_TRACKING_URI pointing at a fresh SQLite store for the duration of the block."""
    previous = os.environ.get("MLFLOW_TRACKING_URI")
    with tempfile.TemporaryDirectory(prefix="dmlbench-rebuild-") as tmp:
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{Path(tmp) / 'mlruns.db'}"
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop("MLFLOW_TRACKING_URI", None)
            else:
                os.environ["MLFLOW_TRACKING_URI"] = previous


def rebuild(records_dir: str | Path, out_dir: str | Path) -> Path:
    """The report of a published records folder, built again into `out_dir` from the records
    alone (temporary MLflow store; nothing is refitted). Returns the new index.html."""
    record_paths, documents, config = verified_files(records_dir)
    tracked = [run for path in documents for run in studies.tracked_runs(read_json(path))]
    with temporary_tracking_store():
        summary = tracking.ingest(record_paths, config=config, tracked=tracked)
        return report.build(summary["experiment"], out_dir, parent_keys=list(summary["parents"]),
                            config_run_id=summary.get("config_run_id"))
