"""The benchmark report: tables and seaborn figures from the runs in MLflow, as one HTML page
`reports/<benchmark>/index.html` with its figures and CSV tables beside it."""

from __future__ import annotations

import time
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from .. import __version__
from ..files import atomic_path
from ..records import tracking
from . import runs, sections


def build(experiment: str, out_dir: str | Path, parent_keys: list[str] | None = None,
          title: str | None = None, description: str = "") -> Path:
    """Write the report of `experiment` to `out_dir`; returns the path of index.html.

    `parent_keys` restricts it to those (data set, method) runs, e.g. the current config's.
    """
    out_dir = Path(out_dir)
    parents, splits = runs.load(experiment, parent_keys)
    config = runs.load_config(experiment)
    ctx = sections.Context(parents, splits, out_dir, _hubness_k(parents), config,
                           experiment=experiment)
    built = [s for s in (builder(ctx) for builder in sections.BUILDERS) if s is not None]
    env = Environment(loader=PackageLoader("dmlbench.report", "templates"),
                      autoescape=select_autoescape(["html"]))
    page = env.get_template("index.html").render(
        title=title or (config or {}).get("report", {}).get("title")
        or f"dmlbench report: {experiment}", experiment=experiment,
        description=description or (config or {}).get("description", ""), sections=built, tracking_uri=tracking.tracking_uri(),
        n_datasets=parents["dataset"].nunique(), n_methods=parents["method"].nunique(),
        n_parents=len(parents), n_splits=len(splits), version=__version__,
        generated=time.strftime("%Y-%m-%d %H:%M %Z"))
    index = out_dir / "index.html"
    with atomic_path(index) as tmp:
        tmp.write_text(page)
    if out_dir.parent.name == "reports":
        write_overview(out_dir.parent)
    return index


def write_overview(reports_dir: Path) -> Path:
    """reports/index.html: a link to every benchmark report under `reports_dir`."""
    entries = sorted(p.parent.name for p in reports_dir.glob("*/index.html"))
    items = "".join(f'<li><a href="{name}/index.html">{name}</a></li>' for name in entries)
    page = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>dmlbench reports"
            "</title></head><body style='font-family: sans-serif; margin: 2rem'>"
            f"<h1>dmlbench reports</h1><ul>{items}</ul></body></html>\n")
    path = reports_dir / "index.html"
    with atomic_path(path) as tmp:
        tmp.write_text(page)
    return path


def _hubness_k(parents) -> int:
    ks = [int(c[len("skewness_n"):-len("_mean")]) for c in parents.columns
          if c.startswith("skewness_n") and c.endswith("_mean")]
    return min(ks) if ks else 10
