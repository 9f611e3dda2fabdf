"""A search space resolved on one training part: the values it takes there, the points of its
grid the method can run on, and the candidates drawn from them (`dmlbench.run.tuning`).

`resolve` evaluates each parameter's entry (`search_spaces`: literal values or a range, `max`,
`needs`) on the `Facts` of the inner training parts; `feasible_points` walks the grid of the
resolved values in declared order and drops each point a value requirement, the method's
parameter checks or its data limits (`check_data_limits`) refuse, saying why; `draw` picks the
candidates among the feasible points: all of them when they are at most the budget, else the
first (the declared default) and budget - 1 drawn without replacement, in declared order.
Dropped values and points are not tried: they are recorded as `dropped`, not as failures.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

import numpy as np

from .baselines import check_within_class_scatter, data_span
from .parameters import ParameterError
from .search_spaces import REQUIREMENTS, evaluate, literal_values


@dataclass(frozen=True)
class Facts:
    """What every inner training part offers (the expressions' variables): `n` points (the
    smallest part), `d` features, `classes` (the fewest), `smallest_class` (the smallest class
    of any part) and `largest_class` (the largest)."""

    n: int
    d: int
    classes: int
    smallest_class: int
    largest_class: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def facts_of(parts: list[tuple[np.ndarray, np.ndarray]]) -> Facts:
    """The `Facts` of inner training parts (X, y), bounds over all of them."""
    counts = [np.unique(y, return_counts=True)[1] for _, y in parts]
    return Facts(n=min(y.size for _, y in parts), d=int(parts[0][0].shape[1]),
                 classes=min(c.size for c in counts),
                 smallest_class=int(min(c.min() for c in counts)),
                 largest_class=int(max(c.max() for c in counts)))


def _regular_within_class_scatter(parts) -> str | None:
    """Why an inner training part has no regular within-class scatter (what the RCA and LDA
    starts of NCA, and LDA without shrinkage, invert), or None. The same test as the methods'
    (`baselines.check_within_class_scatter` on the data's span, `baselines.data_span`)."""
    for i, (X, y) in enumerate(parts):
        if data_span(X) is not None:
            return (f"inner training part {i}: its points do not span all {X.shape[1]} "
                    "features (constant or collinear features)")
        try:
            check_within_class_scatter(X, y, f"inner training part {i}", "")
        except ValueError as err:
            return str(err).split("; ")[0]
    return None


#: requirement -> (whether it tests the data (once per resolution) or a point, the test: the
#: reason it is not met, or None)
TESTS = {
    "regular_within_class_scatter": (True, _regular_within_class_scatter),
    "all_components": (False, lambda point: None if point.get("n_components") is None else
                       f"n_components = {point.get('n_components')} is not all"),
}
assert set(TESTS) == set(REQUIREMENTS)


def entry_values(entry, facts: Facts) -> list:
    """An entry's values on a training part of `facts`, before `max` and `needs`."""
    if not isinstance(entry, dict) or "values" in entry:
        return literal_values(entry)
    low, high = (evaluate(entry[key], facts.as_dict()) for key in ("from", "to"))
    if high < low:
        return []
    grid = np.round(np.linspace(low, high, min(entry["points"], high - low + 1)))
    return [int(v) for v in dict.fromkeys(grid.astype(np.int64))]


def resolve(space: dict, facts: Facts, parts=None) -> tuple[dict[str, list], list[dict]]:
    """({parameter: the values it takes here, in declared order}, the values dropped: dicts of
    `parameter`, `value` and `reason`). A value is dropped when it exceeds the entry's `max`,
    or needs a data requirement (`needs`) the inner training `parts` do not meet (tested only
    when some value needs it; without `parts` none is tested). When every value of a parameter
    exceeds its `max` and the max is positive, the parameter takes the max itself (e.g. K = 1
    nearest points per class when the smallest class has 2)."""
    values, dropped, data_reasons = {}, [], {}
    for name, entry in space.items():
        kept = []
        cap = (evaluate(entry["max"], facts.as_dict())
               if isinstance(entry, dict) and "max" in entry else None)
        needs = entry.get("needs") or {} if isinstance(entry, dict) else {}
        for value in entry_values(entry, facts):
            reason = None
            if cap is not None and value is not None and value > cap:
                reason = f"{name} = {value} exceeds {entry['max']} = {cap}"
            for requirement, needing in needs.items():
                on_data, test = TESTS[requirement]
                if reason is None and on_data and parts is not None and value in needing:
                    if requirement not in data_reasons:
                        data_reasons[requirement] = test(parts)
                    if data_reasons[requirement] is not None:
                        reason = (f"{name} = {value} needs {requirement}: "
                                  f"{data_reasons[requirement]}")
            if reason is None:
                kept.append(value)
            else:
                dropped.append({"parameter": name, "value": value, "reason": reason})
        if not kept and cap is not None and cap >= 1 and all(
                d["reason"].startswith(f"{name} = {d['value']} exceeds") for d in dropped
                if d["parameter"] == name):
            kept = [cap]  # every value above the cap: the cap itself (a neighbourhood of all)
        if not kept and isinstance(entry, dict) and "from" in entry and not dropped:
            dropped.append({"parameter": name, "value": None, "reason":
                            f"the range {entry['from']} .. {entry['to']} is empty here"})
        values[name] = kept
    return values, dropped


def feasible_points(space: dict, values: dict[str, list], cls: type, params: dict,
                    facts: Facts) -> tuple[list[dict], list[dict]]:
    """(the grid points of `values` the method can run on, in declared order; the points
    dropped: dicts of `point` and `reason`). A point is dropped when one of its values needs
    a point requirement it does not meet (e.g. NCA's identity start, full rank only), or when
    the method, with its other `params`, refuses it (`check_parameters`) or refuses it on
    training parts of this size (`check_data_limits`, with the smallest part's n)."""
    names = list(values)
    points, dropped = [], []
    for combination in itertools.product(*(values[name] for name in names)):
        point = dict(zip(names, combination))
        reason = None
        for name in names:
            entry = space[name]
            for requirement, needing in (entry.get("needs") or {} if isinstance(entry, dict)
                                         else {}).items():
                on_data, test = TESTS[requirement]
                if reason is None and not on_data and point[name] in needing:
                    why = test(point)
                    if why is not None:
                        reason = f"{name} = {point[name]} needs {requirement}: {why}"
        if reason is None:
            reason = _refused(cls, {**params, **point}, facts)
        if reason is None:
            points.append(point)
        else:
            dropped.append({"point": point, "reason": reason})
    return points, dropped


def _refused(cls: type, params: dict, facts: Facts) -> str | None:
    """Why `cls` refuses `params` on training parts of `facts`, or None."""
    try:
        cls.check_parameters(params)
        limits = getattr(cls, "check_data_limits", None)
        if limits is not None:
            limits(cls.with_defaults(params), facts.n, facts.d, facts.classes)
    except ParameterError as err:
        return " ".join(str(err).split())
    return None


def draw(count: int, budget: int, seed: int) -> list[int]:
    """Indices of the candidates among `count` feasible points in declared order: all when
    `count <= budget`, else 0 (the declared default) and `budget - 1` of the others drawn
    without replacement with `seed`, sorted. The draws of one seed are nested: a smaller
    budget's candidates are among a larger one's."""
    if count <= budget:
        return list(range(count))
    order = np.random.default_rng(seed).permutation(np.arange(1, count))
    return [0, *sorted(int(i) for i in order[:budget - 1])]
