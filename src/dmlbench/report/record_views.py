"""A readable view of a published report's records: one HTML page per data set,
`record-views/<data set>.html`, with a part per (data set, method) run (anchored by its parent
key) showing what its record files hold: the method's settings, the data set and protocol, per
split the test accuracy at each k, the hubness, the times and, for a tuned run, the settings the
tuning chose; the fit information and the machine; and links to the record files themselves
(`records/`, gzip-compressed JSON, which a browser downloads instead of showing).

The pages are plain HTML with the report's style and script and no outside resource, so they
read offline from a file:// address as well as from any web server (a report's cells link to
them, `write`). They live beside `records/`, not in it: a published records folder holds exactly
the files its manifest lists (`dmlbench.publish`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from .. import vocabulary as voc
from ..files import atomic_path
from ..records.aggregation import tuning_seconds
from .base import html_table

FOLDER = "record-views"


def page_name(dataset: str) -> str:
    """The view page of a data-set label, relative to the report's folder."""
    return f"{FOLDER}/{quote(dataset, safe='')}.html"


def write(record_files: dict[str, dict[Path, list[dict]]], out_dir: str | Path,
          title: str = "") -> dict[str, str]:
    """Write the view pages of `record_files` ({parent key: {record file: its split records of
    that parent}}) under `out_dir/record-views/`, one per data set, removing pages of data sets
    no longer there; returns {parent key: its part of its page, relative to `out_dir`}."""
    out_dir = Path(out_dir)
    runs: dict[str, list[tuple[str, list[dict], list[Path]]]] = {}
    for parent_key, files in record_files.items():
        split_records = sorted((r for found in files.values() for r in found),
                               key=lambda r: r["split"]["index"])
        dataset = split_records[0]["dataset"]["label"]
        runs.setdefault(dataset, []).append((parent_key, split_records, list(files)))
    env = Environment(loader=PackageLoader("dmlbench.report", "templates"),
                      autoescape=select_autoescape(["html"]))
    links, written = {}, set()
    for dataset, parents in sorted(runs.items()):
        parents.sort(key=lambda p: (p[1][0]["method"]["label"] not in ("euclidean", "euc"),
                                    p[1][0]["method"]["label"]))
        path = out_dir / page_name(dataset)
        parts = [_part(key, split_records, [_relative(p, path.parent) for p in paths])
                 for key, split_records, paths in parents]
        page = env.get_template("record_view.html").render(
            title=title, dataset=dataset, runs=parts, first=parents[0][1][0])
        with atomic_path(path) as tmp:
            tmp.write_text(page)
        written.add(path.name)
        links.update({key: f"{page_name(dataset)}#{key}" for key, _, _ in parents})
    for stale in (out_dir / FOLDER).glob("*.html"):
        if stale.name not in written:
            stale.unlink()
    return links


def _relative(path: Path, folder: Path) -> str:
    return Path(os.path.relpath(path, folder)).as_posix()


def _part(parent_key: str, split_records: list[dict], files: list[str]) -> dict:
    """What the page shows of one (data set, method) run."""
    first = split_records[0]
    method = first["method"]
    settings = {
        "method": f"{method['label']} ({method['name']}, {method['family']}, {method['kind']})",
        "parameters": _json(method["params"]) + ("" if not method.get("config_params") else
                                                 f" (config: {_json(method['config_params'])})"),
        "preprocessing": ", ".join(map(str, first["preprocess"]["steps"])) or "none",
        "protocol": _json(first["split"]["protocol"]) + f", seed {first['split']['seed']}",
        "k": ", ".join(map(str, first["k"])) + f"; hubness at k = {first['hubness_k']}",
        "parent key": parent_key,
    }
    if method.get("hubness_reduction"):
        settings["hubness reduction"] = _json(method["hubness_reduction"])
    if method.get("plugin"):
        settings["plug-in"] = _json(method["plugin"])
    return {"key": parent_key, "label": method["label"], "files": files,
            "settings": html_table(pd.DataFrame({"": settings})),
            "splits": html_table(_split_table(split_records)),
            "metrics": html_table(_metric_table(split_records)),
            "fit_info": _fit_info_table(split_records)}


def _json(value) -> str:
    return json.dumps(value, sort_keys=True)


def _split_table(split_records: list[dict]) -> pd.DataFrame:
    """One row per split: sizes, test accuracy per k (%), N_k skewness, times (wall, s), peak
    memory, and what a tuned split chose."""
    rows = {}
    for r in split_records:
        row = {"train": str(r["split"]["n_train"]), "test": str(r["split"]["n_test"])}
        row.update({f"{k}-NN (%)": _number(r["metrics"].get(voc.accuracy(k)), 100, 2)
                    for k in r["k"]})
        row[f"N{r['hubness_k']} skewness"] = _number(
            r["metrics"].get(voc.skewness(r["hubness_k"])), 1, 2)
        timings = r["timings"]
        row["fit (s)"] = _seconds(timings.get(voc.wall_seconds("fit")))
        if r.get("tuning"):
            row["tuning (s)"] = _seconds(tuning_seconds(r["tuning"], "wall"))
        row["predict (s)"] = _seconds(timings.get(voc.wall_seconds("predict")))
        row["peak memory (MiB)"] = _number(timings.get(voc.PEAK_RSS_MB), 1, 0)
        if r.get("tuning"):
            row["chosen by the tuning (per k)"] = "; ".join(
                f"k = {k}: {_json(chosen)}" for k, chosen in r["tuning"]["chosen"].items())
        rows[str(r["split"]["index"])] = row
    frame = pd.DataFrame.from_dict(rows, orient="index").fillna("–")
    frame.index.name = "split"
    return frame


def _metric_table(split_records: list[dict]) -> pd.DataFrame:
    """Every metric of the records: mean, sd (ddof 1), least and largest over the splits."""
    frame = pd.DataFrame([r["metrics"] for r in split_records]).apply(
        pd.to_numeric, errors="coerce")
    table = pd.DataFrame({"mean": frame.mean(), "sd": frame.std(ddof=1),
                          "least": frame.min(), "largest": frame.max()})
    table.index.name = f"metric ({len(split_records)} splits)"
    return table.map(lambda v: "–" if pd.isna(v) else f"{v:.4g}")


def _fit_info_table(split_records: list[dict]) -> str:
    """The fit information per split (a list shown by its length), or '' when there is none."""
    rows = {str(r["split"]["index"]): {key: _short(value) for key, value in r["fit_info"].items()}
            for r in split_records if r.get("fit_info")}
    if not rows:
        return ""
    frame = pd.DataFrame.from_dict(rows, orient="index").fillna("–")
    frame.index.name = "split"
    return html_table(frame)


def _short(value) -> str:
    if isinstance(value, list):
        return f"[{len(value)} values]"
    if isinstance(value, float):
        return f"{value:.4g}"
    return value if isinstance(value, str) else _json(value)


def _number(value, scale: float, digits: int) -> str:
    return "–" if value is None else f"{value * scale:.{digits}f}"


def _seconds(value) -> str:
    return "–" if value is None else f"{value:.3g}"
