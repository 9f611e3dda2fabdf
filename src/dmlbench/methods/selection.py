"""Hyper-parameter selection by k-fold cross-validation of k-NN accuracy on the training part.

Shigeto 2017 (section 5.1) calibrates "the parameter k of k-NN classification to be used at the
test time and all other parameters (gamma in ITML, mu in DML-eig, lambda in Move-labeled and
Move-query) by cross validation on the training set". `cross_validate_knn` does that for any
method behind the contract: for every fold and every candidate parameter set it fits on the
fold's training part and scores the k-NN accuracy of the held-out part for every k of a grid,
from one neighbour list.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from sklearn.model_selection import StratifiedKFold

from ..measure.knn_rule import accuracy_per_k


@dataclass
class Selection:
    """Outcome of a grid search: the chosen candidate and k, and the mean accuracies."""

    index: int  # position of the chosen candidate
    k: int
    accuracy: np.ndarray  # (n_candidates, n_ks) mean held-out accuracy over the folds

    def accuracy_of_chosen_k(self, ks: list[int]) -> list[float]:
        """Mean held-out accuracy of every candidate at the chosen k (for the record)."""
        return [float(a) for a in self.accuracy[:, list(ks).index(self.k)]]


def check_grid(name: str, values, positive: bool = False) -> list[float]:
    """A non-empty list of finite numbers >= 0 (> 0 with `positive`); `ValueError` naming it."""
    grid = [float(v) for v in np.atleast_1d(np.asarray(values, dtype=float))]
    bound_ok = (lambda v: v > 0) if positive else (lambda v: v >= 0)
    if not grid or not all(np.isfinite(v) and bound_ok(v) for v in grid):
        need = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be a non-empty list of finite numbers {need}, got {values}")
    return grid


def check_k_grid(k_grid) -> list[int]:
    ks = sorted({int(k) for k in k_grid})
    if not ks or ks[0] < 1:
        raise ValueError(f"k_grid must be a non-empty list of integers >= 1, got {k_grid}")
    return ks


def cross_validate_knn(factory: Callable[[dict], object], X: np.ndarray, y: np.ndarray,
                       candidates: list[dict], ks: list[int], folds: int = 5,
                       random_state=None) -> Selection:
    """Choose among `candidates` (parameter dicts for `factory`) and `ks` by stratified k-fold CV.

    The score is the k-NN accuracy on each held-out fold, averaged over the folds. Ties go to
    the smallest k, then to the earliest candidate: callers list candidates in order of
    preference (e.g. strongest regularisation first).
    """
    ks = check_k_grid(ks)
    if folds < 2:
        raise ValueError(f"cv must be >= 2 folds, got {folds}")
    smallest = int(np.bincount(np.unique(y, return_inverse=True)[1]).min())
    if smallest < folds:
        raise ValueError(f"cv = {folds} folds needs at least {folds} training points in every "
                         f"class; the smallest class here has {smallest}")
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=random_state)
    total = np.zeros((len(candidates), len(ks)))
    for train, val in splitter.split(X, y):
        depth = max(ks)
        if depth > train.size:
            raise ValueError(f"k = {depth} of k_grid exceeds the {train.size} points of a CV fold")
        for c, params in enumerate(candidates):
            est = factory(params).fit(X[train], y[train])
            _, ind = est.kneighbors(X[val], depth)
            acc = accuracy_per_k(ind, y[train], y[val], ks)
            total[c] += [acc[k] for k in ks]
    mean = total / folds
    # preference order: smaller k first, then earlier candidate
    order = [(c, j) for j in range(len(ks)) for c in range(len(candidates))]
    best = max(order, key=lambda cj: (mean[cj], -cj[1], -cj[0]))
    return Selection(index=best[0], k=ks[best[1]], accuracy=mean)


def search_parameter(est, name: str, X: np.ndarray, y: np.ndarray,
                     positive: bool = False) -> tuple[float, int | None, dict]:
    """Choose `est`'s scalar parameter `name` from `<name>_grid` (and the test-time k from
    `k_grid`, if set) by `est.cv`-fold `cross_validate_knn` on (X, y); ties go to the larger
    value (the strongest regularisation is tried first). Returns (value, chosen k or None, the
    search's `fit_info` entries: grid, CV accuracy per value, chosen k, seconds `cv_s`)."""
    start = time.perf_counter()
    grid_name = f"{name}_grid"
    grid = sorted(check_grid(grid_name, getattr(est, grid_name), positive=positive), reverse=True)
    k_grid = getattr(est, "k_grid", None)
    ks = check_k_grid(k_grid) if k_grid is not None else [1]
    params = {k: v for k, v in est.get_params().items() if k not in (name, grid_name, "k_grid")}
    chosen = cross_validate_knn(lambda p: type(est)(**params, **p), X, y,
                                [{name: v} for v in grid], ks, folds=est.cv,
                                random_state=est.random_state)
    info = {grid_name: grid, "cv_accuracy": chosen.accuracy_of_chosen_k(ks), "cv_k": chosen.k,
            "cv_s": time.perf_counter() - start}
    return grid[chosen.index], (chosen.k if k_grid is not None else None), info
