"""Equal tuning: one rule that chooses every method's hyperparameters (config block `tuning`).

On each outer split, the training part only is cut into `folds` stratified inner folds
(scikit-learn's `StratifiedKFold`, shuffled with a seed drawn from the config's seed and the
split index, so every method of the config sees the same inner folds; they are saved next to
the outer splits and checked on reuse). The candidates are the method's search space
(`methods.search_spaces`): the full grid when it has at most `budget` points, else `budget`
points drawn with the tuning seed. Each candidate is fitted on every inner training part and
scored by the k-NN rule (`measure.knn_rule`, the benchmark's own: the method's
`kneighbors_per_k`, so local metrics too; `predict` for a classifier) on the inner validation
part, at each k the job evaluates. The criterion is the mean inner accuracy over the folds (as
scikit-learn's `GridSearchCV`); for each k the best candidate wins, a tie going to the simpler
(earlier, `search_spaces.candidates`). A candidate that cannot be fitted on an inner training part
(e.g. a neighbourhood larger than it) is skipped with its reason. A space of one point needs no
inner evaluation.
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
from ..methods import search_spaces


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


def tune(spec: dict, build, X_train: np.ndarray, y_train: np.ndarray, split: int,
         ks: list[int]) -> tuple[dict[int, int], list[dict], dict]:
    """Run the rule on one outer split's training part. `build(params)` makes an unfitted
    estimator with the job's parameters overridden by `params`. Returns the index of the chosen
    candidate per k, the candidates, and the record's `tuning` entry."""
    settings = spec["tuning"]
    wall, cpu = time.perf_counter(), time.process_time()
    space = settings["space"]
    tried = search_spaces.candidates(space, settings["budget"], settings["seed"])
    fold, folds_entry = inner_folds(spec, y_train, split)
    entry = {"space": space, "grid_size": search_spaces.grid_size(space),
             "budget": settings["budget"], "candidates": tried, "inner_folds": folds_entry}
    if len(tried) == 1:
        chosen = dict.fromkeys(ks, 0)
        entry.update(inner_scores=None, failed={})
    else:
        def score(params) -> np.ndarray:
            """inner accuracies, folds x ks (a ValueError when the candidate cannot be fitted)"""
            out = np.empty((settings["folds"], len(ks)))
            for f in range(settings["folds"]):
                fit, val = fold != f, fold == f
                acc = inner_accuracies(build(params), X_train[fit], y_train[fit],
                                       X_train[val], y_train[val], ks)
                out[f] = [acc[k] for k in ks]
            return out

        rows, failed = [], {}
        for i, params in enumerate(tried):
            try:
                rows.append(score(params))
            except ValueError as err:  # e.g. a size the inner training part cannot take
                rows.append(np.full((settings["folds"], len(ks)), np.nan))
                failed[str(i)] = " ".join(str(err).split())
        if len(failed) == len(tried):
            # none of the budget fits: the rest of the grid, in declared order, until one does
            first, budgeted = failed["0"], len(tried)
            rest = [p for p in search_spaces.candidates(space, entry["grid_size"], 0)
                    if p not in tried]
            for params in rest:
                tried.append(params)
                try:
                    rows.append(score(params))
                    break
                except ValueError as err:
                    rows.append(np.full((settings["folds"], len(ks)), np.nan))
                    failed[str(len(tried) - 1)] = " ".join(str(err).split())
            if len(failed) == len(tried):
                raise ValueError(f"tuning: no candidate of the search space could be fitted on "
                                 f"the inner folds (the whole grid of {len(tried)} tried); "
                                 f"candidate 0: {first} (give the method a `search_space` this "
                                 f"data can take, or leave the data set out for it)")
            entry["beyond_budget"] = len(tried) - budgeted
        scores = np.stack(rows)
        mean = scores.mean(axis=1)  # candidates x ks; NaN for a failed candidate
        chosen = {k: int(np.nanargmax(mean[:, j])) for j, k in enumerate(ks)}
        entry.update(inner_scores={str(k): [None if np.isnan(v) else float(v)
                                            for v in mean[:, j]] for j, k in enumerate(ks)},
                     failed=failed)
    entry["chosen"] = {str(k): tried[i] for k, i in chosen.items()}
    entry["chosen_index"] = {str(k): i for k, i in chosen.items()}
    entry["wall_s"] = time.perf_counter() - wall
    entry["cpu_s"] = time.process_time() - cpu
    return chosen, tried, entry


def ranked(entry: dict, k: int) -> list[int]:
    """The candidates at k from the best mean inner score down, a tie to the earlier (simpler)
    one as in `tune`; candidates that failed on the inner folds left out."""
    if entry["inner_scores"] is None:
        return [0]
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
