"""The benchmark report: tables and seaborn figures from the runs in MLflow, as one HTML page
`reports/<benchmark>/index.html` with its figures and CSV tables beside it."""

from __future__ import annotations

import time
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from .. import __version__, tracking
from ..files import atomic_path
from . import figures, runs, sections


def build(experiment: str, out_dir: str | Path, parent_keys: list[str] | None = None,
          title: str | None = None, description: str = "") -> Path:
    """Write the report of `experiment` to `out_dir`; returns the path of index.html.

    `parent_keys` restricts it to those (data set, method) runs, e.g. the current config's.
    """
    out_dir = Path(out_dir)
    parents, splits = runs.load(experiment, parent_keys)
    hubness_k = _hubness_k(parents)
    ctx = sections.Context(parents, splits, out_dir, hubness_k, experiment=experiment)
    ctx.figures = {role: f"figures/{name}" for role, name in
                   figures.all_figures(parents, splits, hubness_k, out_dir / "figures").items()}
    built = [s for s in (builder(ctx) for builder in sections.BUILDERS) if s is not None]
    env = Environment(loader=PackageLoader("dmlbench.report", "templates"),
                      autoescape=select_autoescape(["html"]))
    page = env.get_template("index.html").render(
        title=title or f"dmlbench report: {experiment}", experiment=experiment,
        description=description, sections=built, tracking_uri=tracking.tracking_uri(),
        n_datasets=parents["dataset"].nunique(), n_methods=parents["method"].nunique(),
        n_parents=len(parents), n_splits=len(splits), version=__version__,
        generated=time.strftime("%Y-%m-%d %H:%M %Z"))
    index = out_dir / "index.html"
    with atomic_path(index) as tmp:
        tmp.write_text(page)
    return index


def _hubness_k(parents) -> int:
    ks = [int(c[len("skewness_n"):-len("_mean")]) for c in parents.columns
          if c.startswith("skewness_n") and c.endswith("_mean")]
    return min(ks) if ks else 10
