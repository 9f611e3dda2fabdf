"""Our numbers beside the papers' published ones (`paper_tables:` in a reproduction config).

The published tables are package data (`report/paper_tables/*.csv`, transcribed as printed, with
columns paper, table, dataset, method, setting, metric, value, stderr). A config entry maps the
paper's data-set and method names to our labels and names our metric.

A cell "reproduces" when |ours - paper| is at most `Z_DIFFERENCE` (2) standard errors of the
difference, sqrt(se_paper^2 + se_ours^2) with se_ours = our sd / sqrt(splits): both means carry
sampling error, and a perfect reproduction judged against the paper's error alone would pass only
about half the time. The old criterion, |ours - paper| <= se_paper, is kept beside it ("within
published s.e."). Where the paper prints no error, the entry's `tolerance` decides (a number, or
z standard errors of our mean). An entry's `notes` put a cause beside named cells (column
"note", e.g. why a cell of the same computation differs from the paper's).
"""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd
import yaml

from .. import vocabulary as voc
from ..data.registry import PAPER_DATASET_NAMES, REGISTRY
from . import settings


#: the z-test counts of section 5.3 of Abou-Moustafa 2017 (their own layout: a row per pair)
WIN_LOSS_TABLE = "abou-moustafa-2017_win_loss"
#: the cases those counts are over, as the tidy form names its data set
WIN_LOSS_CASES = "20 UCI sets x k = 1, 3, 5"

#: how many standard errors of the difference (ours - paper) a reproduced cell may lie off
Z_DIFFERENCE = 2.0


def result_tables() -> list[str]:
    """Stems of the transcribed tables that hold results (cells with a value and a metric whose
    direction is known), e.g. "shigeto-2017_table3a" or "suarez-2021_basic-knn"; not the
    data-set lists or settings; and the published win/loss counts (`WIN_LOSS_TABLE`)."""
    folder = resources.files("dmlbench.report") / "paper_tables"
    out = [WIN_LOSS_TABLE]
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".csv"):
            with entry.open() as fh:
                header = fh.readline().strip().split(",")
            if {"value", "metric", "dataset", "method"} <= set(header):
                out.append(entry.name.removesuffix(".csv"))
    return sorted(out)


def published(table: str) -> pd.DataFrame:
    """A transcribed table, e.g. ``published("shigeto-2017_table3a")``."""
    path = resources.files("dmlbench.report") / "paper_tables" / f"{table}.csv"
    if not path.is_file():
        raise ValueError(f"no published table '{table}' (files: report/paper_tables/*.csv)")
    if table == WIN_LOSS_TABLE:
        return _win_loss_cells()
    with path.open() as fh:
        return pd.read_csv(fh, dtype={"setting": str}, keep_default_na=False,
                           na_values={"value": [""], "stderr": [""]})


def _win_loss_cells() -> pd.DataFrame:
    """The published win/loss counts as cells of the tidy layout: metric 'wins' or 'losses'
    (of the reference against the method), setting 'reference=<our name>', with the paper's
    method name, our registered one (`method_name`) and the cases counted."""
    counts = win_loss_counts("abou-moustafa-2017").reset_index()
    rows = [{"paper": "abou-moustafa-2017", "table": "sect5.3", "dataset": WIN_LOSS_CASES,
             "method": row["paper_method"], "method_name": row["method"],
             "setting": f"reference={row['reference']}", "metric": metric,
             "value": float(row[metric]), "stderr": np.nan, "cases": int(row["cases"])}
            for _, row in counts.iterrows() for metric in ("wins", "losses")]
    return pd.DataFrame(rows)


#: +1 when a larger value is better, -1 when smaller is better, 0 when neither (e.g. a chosen m,
#: a count of wins whose total differs from the paper's)
DIRECTION = {"accuracy_pct": 1, "train_score_pct": 1, "n10_skewness": -1, "train_time_s": -1,
             "visited_points_pct": -1, "mopt": 0, "wins": 0, "losses": 0}
def registry_name(paper: str, paper_name: str) -> str:
    """Our registry's name of a paper's data set (`data.registry.PAPER_DATASET_NAMES`; else the
    name in lower case)."""
    return PAPER_DATASET_NAMES.get(paper, {}).get(paper_name, str(paper_name).lower())


def availability(paper: str, paper_name: str) -> str:
    """'embedded' (in the package), 'download' (needs internet or a mirror) or 'not obtainable'
    (no public source of the paper's version, or not registered)."""
    spec = REGISTRY.get(registry_name(paper, paper_name))
    if spec is None or not spec.available:
        return "not obtainable"
    return "embedded" if spec.embedded else "download"


def _package_file(name: str):
    path = resources.files("dmlbench.report") / "paper_tables" / name
    if not path.is_file():
        raise ValueError(f"no paper data '{name}' (files: report/paper_tables/)")
    return path


def all_claims() -> dict[str, list[dict]]:
    """Every paper's headline claims (`paper_tables/claims.yaml`): per paper a list of {text,
    paper (its evidence), benchmarks, check or why_not}."""
    with _package_file("claims.yaml").open() as fh:
        return yaml.safe_load(fh)


def claims(paper: str) -> list[str]:
    """The paper's headline claims in plain words."""
    return [claim["text"] for claim in all_claims()[paper]]


def win_loss_counts(paper: str) -> pd.DataFrame:
    """Published z-test counts: per (reference, method) the cases the reference was
    significantly better (wins) and worse (losses) of `cases` (`<paper>_win_loss.csv`), indexed
    by our registered method names."""
    with _package_file(f"{paper}_win_loss.csv").open() as fh:
        return pd.read_csv(fh).set_index(["reference", "method"])


def data_table(name: str) -> pd.DataFrame:
    """Another transcribed table of paper_tables/ (e.g. the 2007 paper's m_opt)."""
    with _package_file(f"{name}.csv").open() as fh:
        return pd.read_csv(fh)


def side_by_side(spec: dict, parents: pd.DataFrame) -> pd.DataFrame:
    """One row per published cell of `spec` with our mean, std, the difference and the verdict."""
    paper = published(spec["table"])
    paper = paper[paper["metric"] == spec["metric"]]
    for column, value in (spec.get("where") or {}).items():
        paper = paper[paper[column].astype(str) == str(value)]
    paper = paper[paper["dataset"].isin(spec["datasets"]) & paper["method"].isin(spec["methods"])]
    notes = _notes(spec, paper)
    scale = float(spec.get("scale", 1.0))
    ours = parents.set_index(["dataset", "method"])
    rows = []
    for _, cell in paper.iterrows():
        key = (spec["datasets"][cell["dataset"]], spec["methods"][cell["method"]])
        mean_col, std_col = voc.mean(spec["ours"]), voc.std(spec["ours"])
        found = key in ours.index and mean_col in ours.columns
        mean = float(ours.at[key, mean_col]) * scale if found else np.nan
        std = float(ours.at[key, std_col]) * scale if found and std_col in ours.columns else np.nan
        stderr = float(cell["stderr"]) if pd.notna(cell["stderr"]) else np.nan
        splits = int(ours.at[key, "n_splits"]) if found else 0
        bound, criterion = _bound(stderr, spec.get("tolerance"), std, splits)
        diff = mean - float(cell["value"])
        judged = np.isfinite(diff)
        rows.append({
            "table": spec["table"], "variant": spec.get("variant", ""), "metric": spec["metric"],
            "data set": cell["dataset"], "method": cell["method"], "setting": cell["setting"],
            "paper": float(cell["value"]), "paper ±": stderr, "ours": mean, "ours ±": std,
            "splits": splits,
            "difference": diff,
            "s.e. of difference": _se_difference(stderr, std, splits),
            "criterion": criterion,
            "reproduced": bool(abs(diff) <= bound) if np.isfinite(bound) and judged else None,
            "within published s.e.": (bool(abs(diff) <= stderr) if np.isfinite(stderr) and judged
                                      else None),
            **({"note": notes.get((cell["dataset"], cell["method"]), "")} if notes else {}),
            "run_id": ours.at[key, "run_id"] if found else None,
            "experiment_id": ours.at[key, "experiment_id"] if found else None,
        })
    return pd.DataFrame(rows)


def _notes(spec: dict, paper: pd.DataFrame) -> dict[tuple[str, str], str]:
    """{(paper's data set, paper's method): note} of the entry's `notes`; a note naming a cell
    the entry does not compare is an error (a misspelt name would otherwise vanish)."""
    kept = set(zip(paper["dataset"], paper["method"]))
    out = {}
    for note in spec.get("notes") or []:
        key = (note["dataset"], note["method"])
        if key not in kept:
            raise ValueError(f"paper_tables entry '{spec.get('title') or spec['table']}': its note "
                             f"on {key[0]} / {key[1]} names no cell it compares (its data sets "
                             f"and methods are the paper's names: {sorted(spec['datasets'])}, "
                             f"{sorted(spec['methods'])})")
        if key in out:
            raise ValueError(f"paper_tables entry '{spec.get('title') or spec['table']}': two "
                             f"notes on {key[0]} / {key[1]}")
        out[key] = str(note["note"])
    return out


def _se_difference(stderr: float, std: float, splits: int) -> float:
    """sqrt(se_paper^2 + se_ours^2), se_ours = std / sqrt(splits); NaN without a published
    error or without our sd over at least two splits."""
    if not np.isfinite(stderr) or splits < 2 or not np.isfinite(std):
        return np.nan
    return float(np.hypot(stderr, std / np.sqrt(splits)))


def _bound(stderr: float, tolerance, std: float, splits: int) -> tuple[float, str]:
    """The allowed |ours - paper| and its name: `Z_DIFFERENCE` standard errors of the difference
    where the paper prints an error (the published one alone if we have a single split); else
    the entry's `tolerance`, a number or {ours_standard_errors: z} (z x our std / sqrt(splits))."""
    if np.isfinite(stderr):
        se_diff = _se_difference(stderr, std, splits)
        if np.isfinite(se_diff):
            return Z_DIFFERENCE * se_diff, f"{Z_DIFFERENCE:g} x s.e. of difference"
        return Z_DIFFERENCE * stderr, f"{Z_DIFFERENCE:g} x published s.e."
    if isinstance(tolerance, dict):
        z = float(tolerance["ours_standard_errors"])
        bound = z * std / np.sqrt(splits) if splits > 1 and np.isfinite(std) else np.nan
        return bound, f"{z:g} x our s.e."
    if tolerance is None:
        return np.nan, "none"
    return float(tolerance), "tolerance"


def compared(ctx) -> list[tuple[dict, str, pd.DataFrame]]:
    """(entry, title, `side_by_side` frame) of each `paper_tables` entry of the report's config,
    computed once per report."""
    def compute():
        return [(spec, spec.get("title") or f"{spec['table']} ({spec['metric']})",
                 side_by_side(spec, ctx.parents)) for spec in settings.paper_tables(ctx.config)]

    return ctx.memo("paper_tables", compute)


def counts(frame: pd.DataFrame) -> dict[str, int]:
    """Published cells of a `side_by_side` frame: in all, with a run here, with a verdict,
    within the published error or tolerance."""
    ran = frame[np.isfinite(frame["ours"].astype(float))] if len(frame) else frame
    judged = ran[ran["reproduced"].notna()] if len(ran) else ran
    within = int(judged["reproduced"].astype(bool).sum()) if len(judged) else 0
    return {"cells": len(frame), "ran": len(ran), "judged": len(judged), "within": within}


def summary(frame: pd.DataFrame, title: str) -> str:
    """A plain-language account of what reproduced and what did not."""
    if frame.empty:
        return f"{title}: none of the published cells maps to a run of this benchmark."
    ran = frame[np.isfinite(frame["ours"])]
    missing = len(frame) - len(ran)
    judged = ran[ran["reproduced"].notna()]
    ok = judged[judged["reproduced"].astype(bool)]
    parts = [f"{title}: {len(ran)} of {len(frame)} published cells have a run here"
             + (f" ({missing} without: data set or method not in this run)" if missing else "")
             + "."]
    if len(judged):
        parts.append(f"{len(ok)} of {len(judged)} lie within {Z_DIFFERENCE:g} standard errors of "
                     "the difference (paper's and ours) or the stated tolerance.")
        old = frame["within published s.e."].dropna() if "within published s.e." in frame else []
        if len(old):
            parts.append(f"Old criterion (within the published standard error alone): "
                         f"{int(old.astype(bool).sum())} of {len(old)}.")
        worst = judged.assign(gap=judged["difference"].abs()).sort_values("gap", ascending=False)
        far = [f"{r['method']} on {r['data set']} ({r['difference']:+.2f})"
               for _, r in worst.head(3).iterrows() if not r["reproduced"]]
        if far:
            parts.append("Largest departures: " + "; ".join(far) + ".")
        if "note" in judged:
            outside = judged[~judged["reproduced"].astype(bool)]
            noted = outside[outside["note"].astype(str) != ""]
            if len(outside):
                parts.append(f"{len(noted)} of the {len(outside)} cells outside carry a note on "
                             "their cause (column 'note').")
    if len(ran) and len(judged) < len(ran):
        parts.append(f"{len(ran) - len(judged)} cells have no printed error and no tolerance, so "
                     "they are shown without a verdict.")
    mean_diff = float(np.nanmean(ran["difference"])) if len(ran) else np.nan
    if np.isfinite(mean_diff):
        parts.append(f"Mean difference (ours - paper): {mean_diff:+.2f}.")
    return " ".join(parts)
