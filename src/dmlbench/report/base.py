"""What every report section builds on: the `Context` it reads (runs, config, where to write,
links), the `Section` it returns, and the writers of its pieces (HTML tables, CSV/LaTeX
exports, PNG figures). Figures use matplotlib's Agg backend, set here once; they are drawn by
the context's renderer (`report.render`: a process pool), each from a function that returns a
matplotlib figure, and saved here."""

from __future__ import annotations

import functools
import html
import os
import re
import warnings
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.textpath import TextToPath  # noqa: E402
import seaborn as sns  # noqa: E402

from ..files import atomic_path  # noqa: E402
from ..records.tracking import RUNS_VIEW_KEY  # noqa: E402
from . import tables  # noqa: E402

sns.set_theme(style="whitegrid", context="notebook")
#: titles at the axes' top (plus the title pad), not placed by measuring every tick label
#: of the axes at each draw (matplotlib's automatic placement, which only moves a title
#: above tick labels on top or an offset text: no figure of the report has either); the
#: automatic placement cost a third of the report's drawing
plt.rcParams["axes.titley"] = 1.0

#: resolution of every figure; with `MAX_WIDTH_IN` a figure fits a 1400 px wide window
DPI = 110
#: the widest figure (inches): 1375 px at `DPI`
MAX_WIDTH_IN = 12.5
#: the tallest figure (pixels): about two screens; taller ones are split (`figures.pages`)
MAX_HEIGHT_PX = 2000
#: the label of a figure laid out to fit its page (`figures.grid`): saved without trimming
FIXED_LAYOUT = "fixed-layout"
#: the widest a table may be (pixels) in a 1400 px window: the page's column (page.css: body
#: max-width 1340 px) less its frame's vertical scroll bar (15 px) and 25 px to spare
TABLE_WIDTH_PX = 1300
#: the widest a table may be in a narrower window (page.css: below `NARROW_WINDOW_PX`, e.g.
#: 800 px: the column is 800 px less the page's scroll bar, 15 px, and its padding, 2 x 16 px:
#: 753 px; less the table frame's own scroll bar, 15 px, and 18 px to spare)
PART_WIDTH_PX = 720
#: windows narrower than this show a table wider than `PART_WIDTH_PX` in parts of at most that
#: width (page.css's media query; `html_table`)
NARROW_WINDOW_PX = 1390
#: the table font (page.css: .84rem of 16 px) and the smaller one of a cell's sd line (.74em)
FONT_PX = 0.84 * 16
SD_FONT_PX = 0.74 * FONT_PX
#: what a cell adds to its text: padding (.45rem a side) and right border; a swatch (.75em
#: wide, .35em margin)
CELL_EXTRA_PX = 2 * 0.45 * 16 + 1
SWATCH_PX = 1.1 * FONT_PX
#: a cell text up to this wide is counted on one line; a longer one wraps (page.css) and
#: counts this much, or its longest word if that is wider
NOWRAP_PX = 160
_TEXT_PATH = TextToPath()


#: the MLflow 3 UI's workflow switch set to "Model training" (its query parameter; checked in
#: MLflow 3.17's UI): an experiment's page shows its runs, not the GenAI overview of traces
MODEL_TRAINING = "workflowType=machine_learning"


@dataclass
class Context:
    """What every section can use: the runs, the benchmark config, where to write, the links of
    each (data set, method), the renderer of figures and a memo of shared results.

    `record_links` ({parent key: href relative to the page}) makes every (data set, method)
    cell link to the page of the records it comes from (a published report,
    `record_views`); without it, cells link to the MLflow run (`mlflow_ui`, the runs view of
    the experiment). `parents` and `splits` are the runs of the full training parts; a learning
    curve's smaller sizes are `curve_parents` and `curve_splits` (their column `train_size`;
    `runs.by_train_size`)."""

    parents: pd.DataFrame
    splits: pd.DataFrame
    out_dir: Path
    hubness_k: int
    ks: list[int]
    config: dict | None = None
    experiment: str = ""
    record_links: dict[str, str] | None = None
    renderer: object | None = None
    #: where the runs' curves, arrays and other kinds of runs are read (`runs.MlflowRuns`,
    #: `runs.RecordRuns`)
    runs: object | None = None
    curve_parents: pd.DataFrame = field(default_factory=pd.DataFrame)
    curve_splits: pd.DataFrame = field(default_factory=pd.DataFrame)
    mlflow_ui: str = field(default_factory=lambda: os.environ.get(
        "DMLBENCH_MLFLOW_UI", "http://127.0.0.1:5000"))
    figures_written: set = field(default_factory=set, repr=False)
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def figure_dir(self) -> Path:
        return self.out_dir / "figures"

    def memo(self, key, compute: Callable):
        """`compute()` once per report: results two sections share (ranks, comparisons)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def submit(self, fn: Callable, *args) -> Future:
        """`fn(*args)` in the renderer's pool (a module-level function, picklable arguments);
        run here at once without a renderer."""
        if self.renderer is not None:
            return self.renderer.submit(fn, *args)
        future = Future()
        future.set_result(fn(*args))
        return future

    def figure(self, name: str, draw: Callable, *args) -> str:
        """Draw `draw(*args)` (a matplotlib figure) into figures/`name`; returns `name`."""
        self.figures_written.add(name)
        if self.renderer is not None:
            return self.renderer.figure(self.figure_dir, name, draw, *args)
        return render_figure(self.figure_dir, name, draw, *args)

    @property
    def links_to(self) -> str:
        """What the cells link to, in words, for the page's text."""
        if self.record_links is not None:
            return ("a readable page of its records (record-views/: per split the accuracy, "
                    "times and settings, and the record files themselves)")
        return "its MLflow run"

    def run_url(self, run_id: str, experiment_id: str) -> str:
        return f"{self.mlflow_ui}/#/experiments/{experiment_id}/runs/{run_id}?{MODEL_TRAINING}"

    def experiment_url(self, experiment_id: str) -> str:
        """The runs view of the experiment in the MLflow UI, with the columns the ingest chose
        (`records.tracking.RUNS_VIEW_KEY`: accuracy at the smallest k, fit time)."""
        return (f"{self.mlflow_ui}/#/experiments/{experiment_id}/runs?{MODEL_TRAINING}"
                f"&viewStateShareKey={RUNS_VIEW_KEY}")

    def parent_link(self, parent_key: str, run_id: str, experiment_id: str) -> str | None:
        """Where a (data set, method) cell links: its page of records, else its MLflow run."""
        if self.record_links is not None:
            return self.record_links.get(parent_key)
        return self.run_url(run_id, experiment_id)

    def run_links(self) -> pd.DataFrame:
        """Data set x method table of the links of each parent run (`parent_link`)."""
        frame = self.parents.assign(url=[self.parent_link(k, r, e) for k, r, e in zip(
            self.parents["parent_key"], self.parents["run_id"], self.parents["experiment_id"])])
        return tables.values(frame, "url")


#: a test over data sets (Friedman / Nemenyi, Wilcoxon, the Bayesian signed-rank and
#: hierarchical tests) on fewer data sets than this is shown with a warning: its verdict is
#: about data sets in general, which so few cannot represent (the Bayesian posteriors lean on
#: their priors; Demšar 2006 counts on at least 10 for the rank tests' approximations)
FEW_DATASETS = 10


def few_datasets_text(n_sets: int, tests: str) -> str:
    return (f"Only {n_sets} data set{'s' if n_sets != 1 else ''}: {tests} over fewer than "
            f"{FEW_DATASETS} data sets cannot carry a conclusion about data sets in general; "
            "read it as an indication, not a verdict.")


@dataclass
class Section:
    """One section of the page: an id (anchor), a title, an intro and its blocks in order.
    Below the first (the summary) every section is folded to its title until the reader opens
    it (a link to it opens it too), unless `unfolded`: the page a reader first scrolls is the
    answer and the list of what else there is.

    A block added with `later(fill)` is filled in by `fill(section)` once every section has
    run (`resolve`), e.g. from results the renderer's pool computes meanwhile."""

    id: str
    title: str
    intro: str = ""
    blocks: list = field(default_factory=list)
    unfolded: bool = False

    def table(self, html_text: str, caption: str = "", files: dict | None = None,
              folded: bool = False):
        """A table under its caption; `folded`: shown when the reader opens it (a long table
        of details)."""
        self.blocks.append({"kind": "table", "html": html_text, "caption": caption,
                            "files": files or {}, "folded": folded})

    def figure(self, src: str, caption: str):
        self.blocks.append({"kind": "figure", "src": f"figures/{src}", "caption": caption})

    def table_and_figure(self, html_text: str, caption: str, files: dict, src: str,
                         figure_caption: str):
        """A table with a figure beside it (side by side where the page is wide enough)."""
        self.blocks.append({"kind": "pair", "html": html_text, "caption": caption,
                            "files": files, "src": f"figures/{src}",
                            "figure_caption": figure_caption})

    def note(self, text: str):
        self.blocks.append({"kind": "note", "text": text})

    def warning(self, text: str):
        """A note the reader must not miss (shown in the warning style)."""
        self.blocks.append({"kind": "warning", "text": text})

    def few_datasets(self, n_sets: int, tests: str) -> None:
        """A warning under a test over data sets (`tests`, e.g. "the Friedman test") run on
        fewer than `FEW_DATASETS` of them."""
        if n_sets < FEW_DATASETS:
            self.warning(few_datasets_text(n_sets, tests))

    def html(self, html_text: str):
        """Ready-made HTML (escaped by whoever made it)."""
        self.blocks.append({"kind": "html", "html": html_text})

    def later(self, fill: Callable[[Section], None]):
        self.blocks.append({"kind": "later", "fill": fill})

    def resolve(self) -> Section:
        """The section with every `later` block filled in, in place."""
        blocks = []
        for block in self.blocks:
            if block["kind"] == "later":
                part = Section(self.id, self.title)
                block["fill"](part)
                blocks += part.resolve().blocks
            else:
                blocks.append(block)
        self.blocks = blocks
        return self


def split_number(split: pd.Series) -> pd.Series:
    """The split index of split runs as numbers (their tag is text): a sort key, so figures
    that show the first few splits show the same ones on every rebuild (run ids are random)."""
    return pd.to_numeric(split, errors="coerce")


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


def methods_as_rows(text: pd.DataFrame, swatches: dict[str, str] | None = None) -> bool:
    """Whether a data sets x methods table of strings is shown turned, the methods as rows: when
    they outnumber the data sets, or when side by side they would not fit a narrow window
    (`PART_WIDTH_PX`). A table too wide for the window is cut by its columns (`html_table`),
    and the methods must stay together: every row (one data set) compares them all, so the
    data sets are cut, never the methods."""
    if text.shape[1] > text.shape[0]:
        return True
    first, widths = _column_widths(text.astype(str), lambda row, column: True, None, swatches)
    return first + sum(widths) > PART_WIDTH_PX


_PLUS_MINUS = re.compile(r"^(.*?) ± (.*)$")


#: cells longer than this are folded: their beginning shown, the rest on a click
FOLD_CHARS = 160


def _cell_html(value) -> str:
    """A cell's text, escaped; 'mean ± sd' with the sd on a second, smaller line; a long text
    folded (`FOLD_CHARS`)."""
    text = str(value)
    if len(text) > FOLD_CHARS:
        cut = text.rfind(" ", 0, FOLD_CHARS - 40)
        cut = cut if cut > 0 else FOLD_CHARS - 40
        return (f"<details><summary>{html.escape(text[:cut])} …</summary>"
                f"{html.escape(text[cut:])}</details>")
    match = _PLUS_MINUS.match(text)
    if match:
        return (f"{html.escape(match.group(1))}<span class='sd'> ± "
                f"{html.escape(match.group(2))}</span>")
    return html.escape(text)


def _label_html(label, swatches: dict | None, header: bool = False) -> str:
    """A row or column label, escaped, with its swatch; a column's header (which wraps to fit,
    page.css) may also break after an underscore."""
    def escaped(part: str) -> str:
        text = html.escape(part)
        return text.replace("_", "_<wbr>") if header else text

    colour = (swatches or {}).get(label)
    if not colour:
        return escaped(str(label))
    # the swatch and the label's first unbreakable piece on one line (`_HEADER_BREAKS`): a
    # narrow header must not put the swatch on a line of its own
    first, rest = _first_piece(str(label))
    return (f"<span class='nobr'><span class='swatch' style='background:{colour}'></span>"
            f"{html.escape(first)}</span>{'<wbr>' if rest[:1].strip() else ''}{escaped(rest)}")


def _first_piece(label: str) -> tuple[str, str]:
    """`label` cut where a header may first break (`_HEADER_BREAKS`, after an underscore
    included): (first piece, the rest)."""
    for match in _HEADER_BREAKS.finditer(label):
        if match.end() > 0:
            cut = match.start() if match.group() else match.end()
            if cut > 0:
                return label[:cut], label[cut:]
    return label, ""


#: DejaVu Sans (matplotlib ships it): the font headless Chromium on Debian shows for the page's
#: system-ui, and among the widest sans-serif ones, so that a table estimated to fit in it fits
#: in the narrower fonts of other systems too
_FONTS = {bold: font_manager.FontProperties(family="DejaVu Sans", size=FONT_PX,
                                            weight="bold" if bold else "normal")
          for bold in (False, True)}


@functools.cache
def text_width(text: str, size_px: float = FONT_PX, bold: bool = False) -> float:
    """The width (px) of `text` on one line in DejaVu Sans of `size_px` pixels, as a browser
    lays it out (unhinted advances; within 0.1 px of headless Chromium's)."""
    if not text:
        return 0.0
    font = _FONTS[bold].copy()
    font.set_size(size_px)  # the width comes in the font size's unit: pixels
    return _TEXT_PATH.get_text_width_height_descent(text, font, ismath=False)[0]


#: where a column's header may break: at spaces, after a hyphen before a letter, after an
#: underscore (a <wbr>, `_label_html`)
_HEADER_BREAKS = re.compile(r"\s+|(?<=-)(?=[A-Za-z])|(?<=_)")


def _header_width(label, swatch: bool) -> float:
    """The least width of a column's header: its widest unbreakable piece (bold)."""
    pieces = [p for p in _HEADER_BREAKS.split(str(label)) if p]
    widths = [text_width(p, bold=True) for p in pieces] or [0.0]
    widths[0] += SWATCH_PX if swatch else 0.0
    return max(widths)


def _cell_width(value, bold: bool) -> float:
    """The width a cell takes in its column: a short text on one line, a longer one wrapped to
    `NOWRAP_PX` or its longest word; an sd (`_cell_html`) on a line of its own."""
    text = str(value)
    if len(text) > FOLD_CHARS:
        text = text[:FOLD_CHARS]
    match = _PLUS_MINUS.match(text)
    main, sd = (match.group(1), f"± {match.group(2)}") if match else (text, "")
    width = text_width(main, bold=bold)
    if width > NOWRAP_PX:
        width = max([NOWRAP_PX] + [text_width(w, bold=bold) for w in main.split()])
    return max(width, text_width(sd, SD_FONT_PX, bold=bold))


def _column_widths(text: pd.DataFrame, is_best: Callable, footer: pd.DataFrame | None,
                   swatches: dict | None) -> tuple[float, list[float]]:
    """(width of the first column, widths of the others) of the table `html_table` writes, in
    pixels: a header at its widest unbreakable piece, a row label on one line (page.css), a
    cell as `_cell_width` (bold where `is_best(row, column)`)."""
    swatches = swatches or {}
    rows = list(text.index) + ([] if footer is None else list(footer.index))
    first = max([_header_width(text.index.name or "", False)]
                + [text_width(str(r), bold=True) + (SWATCH_PX if r in swatches else 0.0)
                   for r in rows])
    widths = []
    for j, col in enumerate(text.columns):
        cells = [_cell_width(v, is_best(idx, col)) for idx, v in zip(text.index, text.iloc[:, j])]
        if footer is not None and len(footer.columns) > j:
            cells += [_cell_width(v, False) for v in footer.iloc[:, j]]
        widths.append(max([_header_width(col, col in swatches)] + cells))
    return first + CELL_EXTRA_PX, [w + CELL_EXTRA_PX for w in widths]


def column_parts(first: float, widths: list[float],
                 limit: float = TABLE_WIDTH_PX) -> list[list[int]]:
    """The columns (positions) of each part of a table too wide for `limit` pixels: the fewest
    runs of neighbouring columns, of about equal count, that each fit beside the first column
    (a column too wide for that alone makes a part of its own); one part if the table fits."""
    n = len(widths)
    for parts in range(1, n + 1):
        split = [list(p) for p in np.array_split(np.arange(n), parts)]
        if all(len(p) == 1 or first + sum(widths[i] for i in p) <= limit for p in split):
            return split
    return [[]]  # no columns but the first


def fitted(first: float, widths: list[float], part: Callable[[list[int]], str]) -> str:
    """A table of these column widths (pixels: the first column, then the others) as HTML that
    no window of 800 px or wider scrolls sideways: `part(columns)` writes the table of the
    first column and the columns at those positions. A table narrower than `PART_WIDTH_PX` is
    written whole; a wider one twice, for wide windows in parts of at most `TABLE_WIDTH_PX`
    (whole where it fits) and for windows narrower than `NARROW_WINDOW_PX` in parts of at most
    `PART_WIDTH_PX` (page.css shows one of the two). Parts are laid side by side where they
    fit, else one under the other (a click on a header sorts them alike: the page's script)."""
    def parts(limit: float) -> str:
        written = [part(columns) for columns in column_parts(first, widths, limit)]
        return written[0] if len(written) == 1 else \
            f"<div class='table-parts'>{''.join(written)}</div>"

    if first + sum(widths) <= PART_WIDTH_PX:
        return parts(PART_WIDTH_PX)
    return (f"<div class='wide-window'>{parts(TABLE_WIDTH_PX)}</div>"
            f"<div class='narrow-window'>{parts(PART_WIDTH_PX)}</div>")


def plain_widths(text: pd.DataFrame, first_max_px: float | None = None
                 ) -> tuple[float, list[float]]:
    """`_column_widths` of a table of strings without bold cells or swatches, for pages that
    write their tables themselves (the scoreboard); `first_max_px`: the row labels wrap at this
    width (their style says so)."""
    first, widths = _column_widths(text, lambda row, column: False, None, None)
    if first_max_px is not None:
        first = min(first, first_max_px + CELL_EXTRA_PX)
    return first, widths


def html_table(text: pd.DataFrame, best: pd.DataFrame | None = None,
               links: pd.DataFrame | None = None, footer: pd.DataFrame | None = None,
               swatches: dict[str, str] | None = None, transpose: bool = False) -> str:
    """An HTML table of strings, sortable by a click on a column's header (the page's script),
    with a sticky header and first column (the page's style). A table too wide for the window
    is written as several tables (`fitted`), each with every row, the first column and a run
    of the other columns: none scrolls sideways in a window of 800 px or wider. A table whose
    columns are methods is cut only when turned, the methods as rows (`methods_as_rows`).

    `best` marks cells in bold, `links` wraps cells in anchors (both indexed like `text`),
    `footer` rows (same columns) stay below the sorted rows, `swatches` ({row or column label:
    colour}) put the method family's colour beside a label, and `transpose` turns `text`,
    `best` and `links` (not `footer`, given as it is shown)."""
    if transpose:
        text = text.T
        best = None if best is None else best.T
        links = None if links is None else links.T

    def is_best(idx, col) -> bool:
        return best is not None and col in best.columns and idx in best.index \
            and bool(best.at[idx, col])

    def row_html(idx, row, marks: bool) -> str:
        cells = [f"<tr><th>{_label_html(idx, swatches)}</th>"]
        for col, value in row.items():
            cell = _cell_html(value)
            link = links.at[idx, col] if marks and links is not None and col in links.columns \
                and idx in links.index else None
            if isinstance(link, str):
                cell = f"<a class='run' href='{html.escape(link)}'>{cell}</a>"
            cls = " class='best'" if marks and is_best(idx, col) else ""
            cells.append(f"<td{cls}>{cell}</td>")
        return "".join(cells) + "</tr>"

    def part_html(part: pd.DataFrame, part_footer: pd.DataFrame | None) -> str:
        rows = [f"<div class='table-wrap'><table class='dataframe sortable'><thead><tr>"
                f"<th>{html.escape(str(part.index.name or ''))}</th>"]
        rows += [f"<th>{_label_html(c, swatches, header=True)}</th>" for c in part.columns]
        rows.append("</tr></thead><tbody>")
        rows += [row_html(idx, row, True) for idx, row in part.iterrows()]
        rows.append("</tbody>")
        if part_footer is not None and len(part_footer):
            rows.append("<tfoot>")
            rows += [row_html(idx, row, False) for idx, row in part_footer.iterrows()]
            rows.append("</tfoot>")
        rows.append("</table></div>")
        return "".join(rows)

    first, widths = _column_widths(text, is_best, footer, swatches)
    return fitted(first, widths, lambda p: part_html(
        text.iloc[:, p], None if footer is None else footer.iloc[:, p]))


def save_figure(fig, out_dir: Path, name: str) -> str:
    """Write the figure as `out_dir/name` (PNG, atomically) and close it; returns `name`. It is
    trimmed to what it draws, but for a figure laid out to fit (`FIXED_LAYOUT`). A figure wider than `MAX_WIDTH_IN` or taller than `MAX_HEIGHT_PX` is drawn all the same,
    with a warning naming it (the figure functions keep within both)."""
    width, height = fig.get_size_inches()
    if width > MAX_WIDTH_IN + 0.01 or height * DPI > MAX_HEIGHT_PX:
        warnings.warn(f"figure {name} is {width:.1f} x {height:.1f} in: wider than "
                      f"{MAX_WIDTH_IN} in or taller than {MAX_HEIGHT_PX} px", stacklevel=2)
    tight = None if fig.get_label() == FIXED_LAYOUT else "tight"  # trimming draws it twice
    with atomic_path(out_dir / name) as tmp:
        fig.savefig(tmp, dpi=DPI, bbox_inches=tight, format="png")
    plt.close(fig)
    return name


def render_figure(out_dir: Path, name: str, draw: Callable, *args) -> str:
    """`draw(*args)` saved as `out_dir/name` (the renderer's task); returns `name`."""
    return save_figure(draw(*args), out_dir, name)
