"""What every report section builds on: the `Context` it reads (runs, config, where to write,
MLflow links), the `Section` it returns, and the writers of its pieces (HTML tables, CSV/LaTeX
exports, PNG figures). Figures use matplotlib's Agg backend, set here once."""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from ..files import atomic_path  # noqa: E402
from . import tables  # noqa: E402

sns.set_theme(style="whitegrid", context="notebook")


@dataclass
class Context:
    """What every section can use: the runs, the benchmark config, where to write, MLflow links."""

    parents: pd.DataFrame
    splits: pd.DataFrame
    out_dir: Path
    hubness_k: int
    ks: list[int]
    config: dict | None = None
    experiment: str = ""
    mlflow_ui: str = field(default_factory=lambda: os.environ.get(
        "DMLBENCH_MLFLOW_UI", "http://127.0.0.1:5000"))

    @property
    def figure_dir(self) -> Path:
        return self.out_dir / "figures"

    def run_url(self, run_id: str, experiment_id: str) -> str:
        return f"{self.mlflow_ui}/#/experiments/{experiment_id}/runs/{run_id}"

    def run_links(self) -> pd.DataFrame:
        """Data set x method table of links to each parent run."""
        frame = self.parents.assign(url=[self.run_url(r, e) for r, e in
                                         zip(self.parents["run_id"], self.parents["experiment_id"])])
        return tables.values(frame, "url")


@dataclass
class Section:
    """One section of the page: an id (anchor), a title, an intro and its blocks in order."""

    id: str
    title: str
    intro: str = ""
    blocks: list = field(default_factory=list)

    def table(self, html_text: str, caption: str = "", files: dict | None = None):
        self.blocks.append({"kind": "table", "html": html_text, "caption": caption,
                            "files": files or {}})

    def figure(self, src: str, caption: str):
        self.blocks.append({"kind": "figure", "src": f"figures/{src}", "caption": caption})

    def note(self, text: str):
        self.blocks.append({"kind": "note", "text": text})


def export_table(ctx: Context, frame: pd.DataFrame, name: str) -> dict[str, str]:
    """Write a table as CSV and as LaTeX (booktabs) under tables/; returns their relative paths."""
    out = {}
    for suffix, writer in (("csv", lambda f, p: f.to_csv(p)),
                           ("tex", lambda f, p: p.write_text(f.to_latex(na_rep="--")))):
        path = ctx.out_dir / "tables" / f"{name}.{suffix}"
        with atomic_path(path) as tmp:
            writer(frame, tmp)
        out[suffix.upper() if suffix == "csv" else "LaTeX"] = f"tables/{name}.{suffix}"
    return out


def html_table(text: pd.DataFrame, best: pd.DataFrame | None = None,
               links: pd.DataFrame | None = None) -> str:
    """An HTML table of strings; `best` marks cells in bold, `links` wraps cells in anchors."""
    rows = ["<table class='dataframe'><thead><tr><th></th>"]
    rows += [f"<th>{html.escape(str(c))}</th>" for c in text.columns]
    rows.append("</tr></thead><tbody>")
    for idx, row in text.iterrows():
        rows.append(f"<tr><th>{html.escape(str(idx))}</th>")
        for col, value in row.items():
            cell = html.escape(str(value))
            link = links.at[idx, col] if links is not None and col in links.columns \
                and idx in links.index else None
            if isinstance(link, str):
                cell = f"<a class='run' href='{html.escape(link)}'>{cell}</a>"
            cls = " class='best'" if best is not None and col in best.columns \
                and idx in best.index and bool(best.at[idx, col]) else ""
            rows.append(f"<td{cls}>{cell}</td>")
        rows.append("</tr>")
    rows.append("</tbody></table>")
    return "".join(rows)


def save_figure(fig, out_dir: Path, name: str) -> str:
    """Write the figure as `out_dir/name` (PNG, atomically) and close it; returns `name`."""
    with atomic_path(out_dir / name) as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    plt.close(fig)
    return name
