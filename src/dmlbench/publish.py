"""Published reports: a report folder that carries what it was built from.

`reports/<benchmark>/` holds the report (index.html, figures/, tables/) and, written by the
workflow's `publish` step, `records/` (every record file of the run and study document, as
compact gzip-compressed JSON `<name>.json.gz`, and the arrays files the records name),
`config.json` (the checked config, `records.public.public_config`: no local paths) and `records/manifest.json`
(format 2: each file under `records/` and `config.json` with its sha256). `rebuild` makes the
report again from those files alone, read as they are (no MLflow store), without refitting
anything: a reader can check every number without running the benchmark.

`verified_files` refuses, naming the file, a folder that is not exactly what its manifest says:
a file under `records/` the manifest does not list, a listed file that is missing, a sha256
that differs, a config.json that is missing or differs, a file that cannot be read. The report
prints the manifest's own sha256, so a reader can tell which manifest a page was built from.

`update_settings` changes what only the report reads (`REPORT_KEYS`: its title, description,
rope, the papers' tables beside ours) in a published config.json and seals it again, refusing a
config that would have run anything differently: settings added after a run (e.g. a paper's
published numbers) reach its report without refitting.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import zlib
from pathlib import Path

from . import records, report, studies
from .config import with_defaults
from .files import atomic_path, read_json, write_json, write_json_gz
from .records.public import public_config
from .report import record_views

MANIFEST = "manifest.json"
CONFIG = "config.json"
FORMAT = 2


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
    manifest = {"format": FORMAT, "benchmark": config["benchmark"], "records": [],
                "documents": [], "files": {}}

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
    write_json(out_dir / CONFIG, public_config(config), keep_order=True)
    manifest["config"] = _sha256(out_dir / CONFIG)
    write_json(target_root / MANIFEST, manifest)
    return target_root / MANIFEST


def verified_files(records_dir: str | Path) -> tuple[list[Path], list[Path], dict]:
    """(record files, study documents, config) of a published report, checked against the
    manifest (module docstring); a `ValueError` names the first file that breaks it."""
    records_dir = Path(records_dir)
    manifest_path = records_dir / MANIFEST
    if not manifest_path.exists():
        raise FileNotFoundError(f"{manifest_path} does not exist: not a published records folder "
                                "(the workflow's publish step writes it)")
    manifest = _read(manifest_path, "the manifest")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{manifest_path}: not a manifest of format {FORMAT} (one that covers "
                         "config.json); publish the records again (the workflow's publish step)")
    listed = manifest.get("files", {})
    named = [*manifest.get("records", []), *manifest.get("documents", [])]
    for relative in named:
        if relative not in listed:
            raise ValueError(f"{manifest_path} names {relative} without its sha256")
    for path in sorted(records_dir.rglob("*")):
        relative = path.relative_to(records_dir).as_posix()
        if path.is_file() and relative != MANIFEST and relative not in listed:
            raise ValueError(f"{path} is not in {manifest_path}: a published records folder "
                             "holds exactly the files its manifest lists")
    for relative, digest in listed.items():
        _check(records_dir / relative, digest, manifest_path)
    config_path = records_dir.parent / CONFIG
    _check(config_path, manifest.get("config"), manifest_path)
    config = _read(config_path, "the config")
    documents = [records_dir / p for p in manifest.get("documents", [])]
    for path in documents:
        _read(path, "the study document")
    return [records_dir / p for p in manifest.get("records", [])], documents, config


#: the config keys only the report reads; `update_settings` may change them after a run
REPORT_KEYS = ("description", "report", "paper_tables")
#: and the keys that say where the data came from, not what it is (a mirror, the cache; the
#: records pin every file by its sha256)
_WHERE_KEYS = ("data",)


def update_settings(records_dir: str | Path, config: dict) -> list[str]:
    """Put `config`'s `REPORT_KEYS` into the published config.json beside `records_dir` and
    write the manifest's sha256 of it again; returns the keys that changed. `config` is a
    config of the same run (e.g. `dmlbench.config.load`'s): a `ValueError` names every other key
    (besides `data`) whose value differs from the published one, defaults filled in on both
    sides, since the records would not be what that config runs."""
    records_dir = Path(records_dir)
    verified_files(records_dir)  # the folder is what its manifest says before it is resealed
    config_path = records_dir.parent / CONFIG
    published = _read(config_path, "the config")
    new = public_config(config)
    full_published, full_new = with_defaults(published), with_defaults(new)  # either may omit
    differ = sorted(key for key in set(full_published) | set(full_new)     # a default
                    if key not in REPORT_KEYS + _WHERE_KEYS
                    and full_published.get(key) != full_new.get(key))
    if differ:
        raise ValueError(f"{config_path}: the config given differs in {', '.join(differ)}, not "
                         f"only in what the report reads ({', '.join(REPORT_KEYS)}): run the "
                         "workflow with it instead of updating the published settings")
    changed = [key for key in REPORT_KEYS if published.get(key) != new.get(key)]
    for key in changed:
        if key in new:
            published[key] = new[key]
        else:
            published.pop(key)
    if changed:
        write_json(config_path, published, keep_order=True)
        manifest_path = records_dir / MANIFEST
        manifest = _read(manifest_path, "the manifest")
        manifest["config"] = _sha256(config_path)
        write_json(manifest_path, manifest)
    return changed


def _check(path: Path, digest: str | None, manifest_path: Path) -> None:
    if not path.is_file():
        raise ValueError(f"published file {path} named by {manifest_path} is missing")
    if digest is None:
        raise ValueError(f"{manifest_path} has no sha256 of {path}")
    if _sha256(path) != digest:
        raise ValueError(f"published file {path} does not match {manifest_path} (sha256)")


def _read(path: Path, what: str):
    """A JSON (or .json.gz) file; a `ValueError` naming it when it cannot be read."""
    try:
        return read_json(path)
    except (OSError, EOFError, ValueError, zlib.error) as err:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{what} {path} cannot be read: {_reason(err)}") from None


def _reason(err: Exception) -> str:
    if isinstance(err, (EOFError, gzip.BadGzipFile, zlib.error)):
        return f"not a complete gzip file ({err or type(err).__name__})"
    if isinstance(err, json.JSONDecodeError):
        return f"not valid JSON ({err})"
    return str(err) or type(err).__name__


def record_links(records_dir: str | Path, out_dir: str | Path) -> dict[str, str]:
    """Where a report's (data set, method) cells link, {parent key: path relative to `out_dir`}:
    the part of its data set's page in `out_dir/record-views/`, written here from the published
    records folder (the manifest's records; `report.record_views`), which shows the records
    readably and links the record files themselves."""
    records_dir = Path(records_dir)
    manifest = _read(records_dir / MANIFEST, "the manifest")
    files: dict[str, dict[Path, list[dict]]] = {}
    for relative in sorted(manifest.get("records", [])):
        path = records_dir / relative
        for record in records.load(path)["records"]:  # the manifest's sha256 vouches for it
            files.setdefault(record["parent_key"], {}).setdefault(path, []).append(record)
    return record_views.write(files, out_dir, title=manifest.get("benchmark", ""))


def rebuild(records_dir: str | Path, out_dir: str | Path, progress: bool = False,
            workers: int | None = None, tracked_summary: dict | None = None,
            missing: list[str] | None = None) -> Path:
    """The report of a published records folder, built again into `out_dir` from the records
    alone (read as they are, `report.runs.RecordRuns`: no MLflow store; nothing is refitted),
    its cells linking to the record files. Returns the new index.html. `tracked_summary`: the
    track step's summary of the same records (`tracking.ingest`, its tracking.json), whose
    MLflow experiment the page then names and links. `missing`: the config's (data set,
    method) pairs without records, which the page names (`report.build`)."""
    record_paths, documents, config = verified_files(records_dir)
    tracked = [run for path in documents for run in studies.tracked_runs(read_json(path))]
    links = record_links(records_dir, out_dir)
    summary = tracked_summary or {}
    source = report.runs.RecordRuns(record_paths, tracked, config,
                                    experiment=summary.get("experiment"),
                                    experiment_id=summary.get("experiment_id"))
    return report.build(source, out_dir, manifest=Path(records_dir) / MANIFEST,
                        record_links=links, mlflow_link=tracked_summary is not None,
                        workers=workers, progress=progress, missing=missing)
