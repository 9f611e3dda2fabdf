"""The benchmark report: tables and figures from the runs (in MLflow, or read from the record
files themselves: `runs`), as one HTML page
`reports/<benchmark>/index.html` with its figures and CSV tables beside it.

The page opens on its answer (the summary section), then the details, section by section
(`sections.SECTIONS`); its tables sort by a click on a column's header and keep their header
and first column in view (the template's script and style, no outside resource: the page works
offline). Figures and the Monte-Carlo comparisons are computed in a process pool while the
sections read the runs, once they have taken a few seconds (`render.Renderer`).

A build writes under its `out_dir` only: the scoreboard of the published reports
(`reports/index.html`, `scoreboard.write`) is written by the explicit publishing step,
`dmlbench scoreboard`, never by a run's report.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape
from tqdm import tqdm

from .._version import __version__
from ..files import atomic_path, write_json
from ..records import tracking
from ..records.public import public_config
from . import runs, settings, tables
from .base import Context
from .render import Renderer
from .sections import SECTIONS


def build(source, out_dir: str | Path, parent_keys: list[str] | None = None,
          title: str | None = None, description: str = "",
          config_run_id: str | None = None, manifest: str | Path | None = None,
          record_links: dict[str, str] | None = None, mlflow_link: bool = True,
          workers: int | None = None, progress: bool = False,
          missing: list[str] | None = None) -> Path:
    """Write the report of the runs of `source` to `out_dir`; returns the path of index.html.

    `source`: where the runs are read, `runs.MlflowRuns` (an MLflow experiment) or
    `runs.RecordRuns` (record files and study documents, no store). `parent_keys` restricts it
    to those (data set, method) runs, e.g. the current config's. The report's settings
    (`report.settings`: title, description, rope, paper tables) come from the checked config
    logged with the runs: the run `config_run_id` (the track job's), else the newest; `title`
    and `description` override the config's. `manifest`: the
    published records' manifest (`dmlbench.publish`), whose sha256 the page prints; its folder's
    config.json is then the published one, left as it is. `record_links` ({parent key: path
    relative to `out_dir`}, `publish.record_links`) makes every (data set, method) cell link to
    its page of records (`record_views`) instead of its MLflow run; `mlflow_link` names the
    MLflow experiment at the top of the page (it needs the experiment's id among the runs).
    The page names the
    tracking store by its scheme and name only, and the config beside it is `public_config`
    (no local paths). `workers`: processes drawing the figures (default: the CPUs, at most 4);
    `progress`: progress bars on the console. `missing`: the (data set / method) pairs its
    config asks for that have no records yet (a run still in progress): the page says at its top
    that it is partial and names them.
    """
    out_dir = Path(out_dir)
    experiment = source.experiment
    started = time.perf_counter()
    with Renderer(workers, progress=progress) as renderer:
        (parents, splits), (curve_parents, curve_splits) = runs.by_train_size(
            *source.load(parent_keys))
        config = source.load_config(config_run_id)
        ctx = Context(parents, splits, out_dir, runs.hubness_k(parents), runs.ks(parents),
                      config, experiment=experiment, record_links=record_links,
                      renderer=renderer, runs=source, curve_parents=curve_parents,
                      curve_splits=curve_splits)
        built = []
        for section in tqdm(SECTIONS, desc="report: sections", unit="section", leave=False,
                            disable=not progress or None):
            result = section(ctx)
            if result is not None:
                built.append(result)
        built = [section.resolve() for section in built]
    for stale in (out_dir / "figures").glob("*.png"):  # an earlier build's, not this one's
        if stale.name not in ctx.figures_written:
            stale.unlink()
    experiment_id = parents["experiment_id"].iloc[0]
    mlflow_link = mlflow_link and experiment_id is not None
    env = Environment(loader=PackageLoader("dmlbench.report", "templates"),
                      autoescape=select_autoescape(["html"]))
    page = env.get_template("index.html").render(
        title=title or settings.title(config, experiment), experiment=experiment,
        description=description or settings.description(config), sections=built,
        store=tracking.store_label(),
        experiment_url=ctx.experiment_url(experiment_id) if mlflow_link else None,
        record_links=record_links is not None,
        manifest_sha256=None if manifest is None else _sha256(Path(manifest)),
        unpinned=unpinned_files(splits),
        code_versions=list(tables.code_versions(splits)),
        unversioned_commits=tables.unversioned_commits(splits),
        missing=missing or [],
        missing_sets=_missing_data_sets(missing or [], set(parents["dataset"])),
        n_datasets=parents["dataset"].nunique(), n_methods=parents["method"].nunique(),
        n_parents=len(parents), n_splits=len(splits), version=__version__,
        generated=time.strftime("%Y-%m-%d %H:%M %Z"))
    published_config = manifest is not None and Path(manifest).resolve().parents[1] == \
        out_dir.resolve()
    if config is not None and not published_config:  # the provenance section points to it
        write_json(out_dir / "config.json", public_config(config), keep_order=True)
    index = out_dir / "index.html"
    with atomic_path(index) as tmp:
        tmp.write_text(page)
    if progress:
        n_figures = len(list((out_dir / "figures").glob("*.png")))
        n_tables = len(list((out_dir / "tables").glob("*.csv")))
        tqdm.write(f"report: wrote {index} ({len(built)} sections, {n_figures} figures, "
                   f"{n_tables} tables) in {time.perf_counter() - started:.0f} s",
                   file=sys.stderr)
    return index


def unpinned_files(splits) -> dict[str, list[str]]:
    """{data-set label: ["<group>/<file> sha256:<hex>", ...]} of the runs whose data set was
    built from downloaded files without a pin (trusted by data.trust_unpinned)."""
    if "unpinned" not in splits:
        return {}
    rows = splits.dropna(subset=["unpinned"]).drop_duplicates("dataset")
    out = {}
    for dataset, text in zip(rows["dataset"], rows["unpinned"]):
        words = str(text).split()
        out[dataset] = [f"{a} {b}" for a, b in zip(words[::2], words[1::2])]
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _missing_data_sets(missing: list[str], present: set[str]) -> tuple[list[str], list[str]]:
    """The missing (data set / method) pairs of a partial run, told short: the data sets with
    no record at all, then the other pairs one by one."""
    whole = sorted({pair.split(" / ")[0] for pair in missing} - present)
    return whole, [pair for pair in missing if pair.split(" / ")[0] not in whole]

