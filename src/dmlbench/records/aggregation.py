"""From split records to what a parent run shows: each split's numbers flattened, and their mean
and sample standard deviation across splits (curves averaged position by position)."""

from __future__ import annotations

import json

import numpy as np

from .. import vocabulary as voc


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def fit_info_entries(fit_info: dict) -> tuple[dict, dict, dict]:
    """A method's `fit_info` as (numbers, number lists, others), keyed `fit.<key>`; others are
    JSON text (strings as they are)."""
    numbers, lists, others = {}, {}, {}
    for key, value in fit_info.items():
        name = voc.fit(key)
        if is_number(value):
            numbers[name] = value
        elif isinstance(value, list) and value and all(is_number(v) for v in value):
            lists[name] = value
        else:
            others[name] = json.dumps(value) if not isinstance(value, str) else value
    return numbers, lists, others


def split_metrics(record: dict) -> dict:
    """A split's metrics, timings, a tuned split's tuning time (`tuning_seconds`) and part sizes
    (`n_train`, `n_test`: counts for tests of proportions such as
    `dmlbench.measure.statistics.ztest_two_proportions`)."""
    out = dict(record["metrics"])
    out.update(record["timings"])
    if record.get("tuning"):
        out.update({voc.wall_seconds("tuning"): tuning_seconds(record["tuning"], "wall"),
                    voc.cpu_seconds("tuning"): tuning_seconds(record["tuning"], "cpu")})
    out.update({voc.N_TRAIN: record["split"]["n_train"], voc.N_TEST: record["split"]["n_test"]})
    return out


def tuning_seconds(tuning: dict, clock: str) -> float:
    """The wall (`clock="wall"`) or CPU seconds a split's tuning added to its job: the tuning's
    own (inner fits and scores, `tuning.<clock>_s`) and the default setting's fit on the training
    part when it was fitted apart (`default_refit`; otherwise that fit is the job's own, in the
    timings already)."""
    seconds = tuning.get(f"{clock}_s") or 0.0
    if tuning.get("default_refit"):
        seconds += tuning.get(f"default_fit_{clock}_s") or 0.0
    return float(seconds)


def summary(group: list[dict]) -> dict:
    """Mean and sample standard deviation (ddof 1; 0 for one split) of each metric and of each
    numeric `fit.<key>` (e.g. a hyper-parameter chosen per split) over the split records of one
    parent."""
    numbers = [{**split_metrics(r), **fit_info_entries(r["fit_info"])[0]} for r in group]
    keys = sorted({k for r in numbers for k in r})
    out = {voc.N_SPLITS: float(len(group)),
           voc.N_TEST_TOTAL: float(sum(r["split"]["n_test"] for r in group))}
    for key in keys:
        values = np.array([r[key] for r in numbers if key in r], dtype=float)
        out[voc.mean(key)] = float(values.mean())
        out[voc.std(key)] = float(values.std(ddof=1)) if values.size > 1 else 0.0
    return out


def mean_curves(group: list[dict]) -> dict[str, list[float]]:
    """Mean over the splits of each curve, position by position, as `curve.<name>`. A shorter
    curve is extended by its last value: a dimension sweep of a metric of lower rank on one
    split keeps its last rate at higher dimensionalities (extra components would be zero)."""
    names = sorted({name for r in group for name in r.get("curves", {})})
    out = {}
    for name in names:
        curves = [r["curves"][name] for r in group if r.get("curves", {}).get(name)]
        if not curves:
            continue
        length = max(len(c) for c in curves)
        padded = np.array([c + [c[-1]] * (length - len(c)) for c in curves], dtype=float)
        out[voc.curve(name)] = padded.mean(axis=0).tolist()
    return out
