"""Equal tuning: one rule that chooses every method's hyperparameters (config block `tuning`).

On each outer split, the training part only is cut into `folds` stratified inner folds
(scikit-learn's `StratifiedKFold`, shuffled with a seed drawn from the config's seed and the
split index, so every method of the config sees the same inner folds; they are saved next to
the outer splits and checked on reuse). The method's search space (`methods.search_spaces`) is
resolved on the inner training parts (`methods.space_resolution`: values relative to their
size, values and points the method cannot take there dropped with their reasons); the
candidates are the feasible points: all of them when they are at most `budget`, else the first
(the declared default) and `budget - 1` drawn with a seed of the config's seed, the data set and
the split (`draw_seed`). Each candidate is fitted on every inner training part, within the
candidate time limit (`time_limit`, all its folds together), and scored by the k-NN rule
(`measure.knn_rule`, the benchmark's own: the method's `kneighbors_per_k`, so local metrics
too; `predict` for a classifier) on the inner validation part, at each k the job evaluates. The
criterion is the mean inner accuracy over the folds (as scikit-learn's `GridSearchCV`); for
each k the best candidate wins, a tie going to the simpler (earlier) one. A candidate that
raises on an inner fold, or runs over the time limit, is skipped with its reason.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

from ..files import write_npz
from ..measure.evaluation import neighbour_lists, predictions
from ..measure.knn_rule import knn_vote
from ..methods import search_spaces, space_resolution
from .time_limit import TimeLimitExceeded, limit


def inner_seed(seed: int, split: int) -> int:
    """The shuffling seed of the inner folds of outer split `split`."""
    return seed * 10_000 + split


def make_inner_folds(y_train: np.ndarray, folds: int, seed: int, split: int) -> np.ndarray:
    """Inner fold number (0 .. folds - 1) of each training point of outer split `split`."""
    out = np.empty(y_train.shape[0], dtype=np.int64)
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=inner_seed(seed, split))
    for fold, (_, validation) in enumerate(cv.split(np.zeros((y_train.size, 1)), y_train)):
        out[validation] = fold
    return out


def folds_path(split_file: str | Path, folds: int, seed: int, split: int) -> Path:
    """Where the inner folds of an outer split are saved: beside the split file."""
    split_file = Path(split_file)
    return split_file.parent / f"{split_file.stem}.inner{folds}-seed{seed}" / f"split{split}.npz"


def inner_folds(spec: dict, y_train: np.ndarray, split: int) -> tuple[np.ndarray, dict]:
    """The inner folds of outer split `split` (made, or read and checked when saved before) and
    their record entry (file and sha256 of the fold numbers)."""
    settings = spec["tuning"]
    made = make_inner_folds(y_train, settings["folds"], settings["seed"], split)
    path = folds_path(spec["split_file"], settings["folds"], settings["seed"], split)
    if path.exists():
        with np.load(path) as saved:
            if not np.array_equal(saved["fold"], made):
                raise ValueError(f"inner folds {path} differ from those the seed gives (made with "
                                 "another scikit-learn?); delete the directory and rerun")
    else:
        write_npz(path, fold=made)
    digest = hashlib.sha256(made.tobytes()).hexdigest()
    return made, {"folds": settings["folds"], "seed": settings["seed"], "file": str(path),
                  "sha256": digest}


def inner_accuracies(estimator, X_fit, y_fit, X_val, y_val, ks: list[int]) -> dict[int, float]:
    """k-NN accuracy on the inner validation part of `estimator` fitted on the inner training
    part, at each k (labels re-encoded 0 .. c-1 for the fit, as the jobs do); its lists and
    predictions checked against the method contract as the evaluation's are."""
    classes, codes = np.unique(y_fit, return_inverse=True)
    estimator.fit(X_fit, codes)
    if estimator.predicts_only:
        codes_val = {k: predictions(estimator, X_val, k, np.arange(classes.size)) for k in ks}
        return {k: float(np.mean(classes[codes_val[k].astype(np.int64)] == y_val)) for k in ks}
    lists = neighbour_lists(estimator, X_val, ks, max(ks), y_fit.size)
    return {k: float(np.mean(classes[knn_vote(codes[lists[k][1][:, :k]], classes.size)]
                             == y_val)) for k in ks}


def draw_seed(seed: int, dataset: str, split: int) -> int:
    """The seed of the candidates drawn on outer split `split` of data set `dataset` (its cache
    name): a digest of the tuning seed, the data set and the split, so that each (data set,
    split) gets its own draw, reproducibly."""
    text = hashlib.sha256(f"{seed}/{dataset}/{split}".encode()).digest()
    return int.from_bytes(text[:8], "big") >> 1


def inner_parts(X_train: np.ndarray, y_train: np.ndarray, fold: np.ndarray) -> list[tuple]:
    """The inner training parts (X, y), one per inner fold left out."""
    return [(X_train[fold != f], y_train[fold != f]) for f in range(int(fold.max()) + 1)]


def candidates(settings: dict, cls: type, params: dict, parts: list[tuple], dataset: str,
               split: int) -> tuple[list[dict], list[dict], dict]:
    """The rule's candidates on one outer split: (the feasible points of the space in declared
    order, the candidates among them, the record fields saying how they were found). The
    space (`settings["space"]`, [parameter, entry] pairs) is resolved on the inner training
    `parts` (`space_resolution`); the method `cls` with its other `params` judges each point.
    `ValueError` naming the first reason when no point is feasible."""
    space = search_spaces.from_pairs(settings["space"])
    facts = space_resolution.facts_of(parts)
    values, dropped_values = space_resolution.resolve(space, facts, parts)
    points, dropped_points = space_resolution.feasible_points(space, values, cls, params, facts)
    dropped = dropped_values + dropped_points
    if not points:
        raise ValueError(f"tuning: no point of the search space fits the inner training parts "
                         f"({facts.n} points, {facts.d} features, smallest class "
                         f"{facts.smallest_class}): {dropped[0]['reason']} (give the method a "
                         "`search_space` this data can take, or leave the data set out for it)")
    seed = draw_seed(settings["seed"], dataset, split)
    chosen = space_resolution.draw(len(points), settings["budget"], seed)
    fields = {"space": search_spaces.as_pairs(space), "facts": facts.as_dict(),
              "resolved": search_spaces.as_pairs(values), "dropped": dropped,
              "grid_size": len(points), "budget": settings["budget"], "draw_seed": seed,
              "time_limit_s": settings.get("time_limit")}
    return points, [points[i] for i in chosen], fields


def reason(err: BaseException) -> str:
    """A failure as one line: the exception's type and message."""
    return f"{type(err).__name__}: {' '.join(str(err).split())}"


def _time_out(err: BaseException, what: str) -> TimeLimitExceeded | None:
    """The `TimeLimitExceeded` behind `err` (itself, or what it was raised from: a method may
    wrap what interrupted it), or None."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, TimeLimitExceeded):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def tune(spec: dict, build, X_train: np.ndarray, y_train: np.ndarray, split: int,
         ks: list[int], cls: type) -> tuple[dict[int, int], list[dict], dict]:
    """Run the rule on one outer split's training part. `build(params)` makes an unfitted
    estimator with the job's parameters overridden by `params`; `cls` is the method's class
    (its parameter checks and data limits judge the points of the space). Returns the index of
    the chosen candidate per k, the candidates, and the record's `tuning` entry."""
    settings = spec["tuning"]
    wall, cpu = time.perf_counter(), time.process_time()
    fold, folds_entry = inner_folds(spec, y_train, split)
    points, tried, entry = candidates(settings, cls, spec["method"]["params"],
                                      inner_parts(X_train, y_train, fold),
                                      spec["dataset"]["name"], split)
    entry.update(candidates=tried, inner_folds=folds_entry)
    failed: dict[str, str] = {}
    rows, walls, cpus = [], [], []

    def score(index: int, params: dict) -> None:
        """The candidate's inner accuracies (folds x ks) into `rows`, NaN when it failed (its
        reason in `failed`); its time in `walls` and `cpus`. Any exception of the candidate
        fails it, but for MemoryError (and what is no Exception: KeyboardInterrupt,
        SystemExit); so does its time limit, not the job's."""
        what = f"tuning candidate {index}"
        out = np.full((settings["folds"], len(ks)), np.nan)
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            with limit(settings.get("time_limit"), what):
                for f in range(settings["folds"]):
                    fit, val = fold != f, fold == f
                    acc = inner_accuracies(build(params), X_train[fit], y_train[fit],
                                           X_train[val], y_train[val], ks)
                    out[f] = [acc[k] for k in ks]
        except MemoryError:
            raise
        except Exception as err:  # noqa: BLE001 - a candidate's failure is recorded, not fatal
            late = _time_out(err, what)
            if late is not None and late.what != what:
                raise late from (None if late is err else err)  # the job's own limit
            out[:] = np.nan
            failed[str(index)] = (f"time: {late}" if late is not None else reason(err))
        rows.append(out)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - started_cpu)

    for i, params in enumerate(tried):
        score(i, params)
    if len(failed) == len(tried):
        # none of the budget fits: the rest of the feasible grid, in declared order, until one
        # does (the budget bounds the work, not whether the method gets a result)
        first, budgeted = failed["0"], len(tried)
        for params in (p for p in points if p not in tried[:budgeted]):
            tried.append(params)
            score(len(tried) - 1, params)
            if len(failed) < len(tried):
                break
        if len(failed) == len(tried):
            raise ValueError(f"tuning: no candidate of the search space could be fitted on "
                             f"the inner folds (all {len(tried)} feasible points tried); "
                             f"candidate 0: {first} (give the method a `search_space` this "
                             f"data can take, or leave the data set out for it)")
        entry["beyond_budget"] = len(tried) - budgeted
    mean = np.stack(rows).mean(axis=1)  # candidates x ks; NaN for a failed candidate
    chosen = {k: int(np.nanargmax(mean[:, j])) for j, k in enumerate(ks)}
    entry.update(inner_scores={str(k): [None if np.isnan(v) else float(v)
                                        for v in mean[:, j]] for j, k in enumerate(ks)},
                 failed=failed, candidate_wall_s=walls, candidate_cpu_s=cpus)
    entry["chosen"] = {str(k): tried[i] for k, i in chosen.items()}
    entry["chosen_index"] = {str(k): i for k, i in chosen.items()}
    entry["wall_s"] = time.perf_counter() - wall
    entry["cpu_s"] = time.process_time() - cpu
    return chosen, tried, entry


def ranked(entry: dict, k: int) -> list[int]:
    """The candidates at k from the best mean inner score down, a tie to the earlier (simpler)
    one as in `tune`; candidates that failed on the inner folds left out."""
    scores = entry["inner_scores"][str(k)]
    return sorted((i for i, v in enumerate(scores) if v is not None), key=lambda i: (-scores[i], i))


def replace_failed(entry: dict, chosen: dict[int, int], index: int, ks: list[int],
                   reason: str) -> None:
    """The chosen candidate `index` could not be fitted on the whole training part (`reason`):
    at its `ks` the next candidate of `ranked` that has not failed takes its place (`chosen` and
    the entry's `chosen`, `chosen_index` updated; `refit_failed` records why). A `ValueError`
    when none is left."""
    failed = entry.setdefault("refit_failed", {})
    failed[str(index)] = " ".join(reason.split())
    for k in ks:
        left = [i for i in ranked(entry, k) if str(i) not in failed]
        if not left:
            raise ValueError(f"tuning: no candidate could be fitted on the training part at "
                             f"k = {k}; candidate {index}: {failed[str(index)]} (give the method a "
                             "search_space or params its data can take)")
        chosen[k] = left[0]
        entry["chosen"][str(k)] = entry["candidates"][left[0]]
        entry["chosen_index"][str(k)] = left[0]


def groups(chosen: dict[int, int]) -> list[tuple[int, list[int]]]:
    """(candidate index, the ks it won), the candidate of the smallest k first: each distinct
    winner is fitted once on the whole training part and evaluated at its ks."""
    out: dict[int, list[int]] = {}
    for k in sorted(chosen):
        out.setdefault(chosen[k], []).append(k)
    return list(out.items())
