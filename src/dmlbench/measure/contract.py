"""The method contract checked on what a method returns, before anything is measured with it.

Whatever a method answers (a registered one, or a plug-in through the adapter or subclassing
`methods.base.KNeighborsMethod` directly) enters the evaluation only through these checks
(`measure.evaluation`, the tuning rule's inner evaluations, a hubness reduction's input lists):

- neighbour lists `(dist, ind)` of `n_queries` x `n_neighbors`; distances finite numbers;
  indices integers in [0, n_train), distinct within each query's list (and, for leave-one-out
  lists of the training points, never the point itself);
- embeddings (vectors a search or a dimension sweep runs on): one finite row per point;
- a classifier's predictions: one per query, each one of the training labels.

A breach is a `ContractError` (a `ValueError`, so the job names its method, data set and split)
naming the method, the hook and the first query that breaks the rule. Each check costs time in
proportion to the output (a sort of each list for distinctness: O(n_queries k log k)).
"""

from __future__ import annotations

import numpy as np


class ContractError(ValueError):
    """A method's output breaks the method contract: one line naming the method and what."""


def method_name(est) -> str:
    """How messages name a method: its registered name (a plug-in's class path as records
    show it), else its class."""
    return getattr(est, "registry_name", None) or type(est).__name__


def _first(mask: np.ndarray) -> int:
    """The first row of a 2-D mask with a True in it."""
    return int(np.flatnonzero(mask.any(axis=1))[0])


def check_lists(est, found, n_queries: int, n_neighbors: int, n_train: int,
                hook: str = "kneighbors", exclude_self: bool = False):
    """`found` (what `est.<hook>` returned) as (float distances, int64 indices), or a
    `ContractError` saying which rule it breaks. `exclude_self`: leave-one-out lists of the
    training points (`train_kneighbors`), where row i may not hold i."""
    who = f"{method_name(est)}: {hook}"
    if not (isinstance(found, tuple) and len(found) == 2):
        raise ContractError(f"{who} must return (distances, indices), got "
                            f"{type(found).__name__}")
    dist, ind = np.asarray(found[0]), np.asarray(found[1])
    expected = (n_queries, n_neighbors)
    if dist.shape != expected or ind.shape != expected:
        raise ContractError(f"{who} returned distances of shape {dist.shape} and indices of "
                            f"shape {ind.shape}; {n_neighbors} neighbours of {n_queries} "
                            f"queries are {expected}")
    if not np.issubdtype(ind.dtype, np.integer):
        raise ContractError(f"{who} returned indices of dtype {ind.dtype}; they must be "
                            "integers (positions in the training set)")
    if dist.dtype.kind not in "fiu":
        raise ContractError(f"{who} returned distances of dtype {dist.dtype}; they must be "
                            "numbers")
    dist = dist.astype(float, copy=False)
    bad = ~np.isfinite(dist)
    if bad.any():
        q = _first(bad)
        raise ContractError(f"{who} returned NaN or infinite distances for "
                            f"{int(bad.any(axis=1).sum())} of {n_queries} queries (first: query "
                            f"{q}, {dist[q][bad[q]][0]}); nothing measured with them can be a "
                            "result")
    if ind.size == 0:
        return dist, ind.astype(np.int64)
    outside = (ind < 0) | (ind >= n_train)
    if outside.any():
        q = _first(outside)
        raise ContractError(f"{who} returned training index {ind[q][outside[q]][0]} for query "
                            f"{q}; indices must lie in [0, {n_train}), the {n_train} training "
                            "points")
    ordered = np.sort(ind, axis=1)
    repeated = ordered[:, 1:] == ordered[:, :-1]
    if repeated.any():
        q = _first(repeated)
        raise ContractError(f"{who} returned training index {ordered[q, 1:][repeated[q]][0]} "
                            f"more than once for query {q}; a query's neighbours are distinct "
                            "training points")
    if exclude_self:
        own = ind == np.arange(n_queries)[:, None]
        if own.any():
            q = _first(own)
            raise ContractError(f"{who} returned training point {q} as a leave-one-out "
                                "neighbour of itself; its own row must be left out")
    return dist, ind.astype(np.int64, copy=False)


def check_embedding(est, Z, n_rows: int, hook: str = "transform") -> np.ndarray:
    """`Z` (what `est.<hook>` returned for `n_rows` points) as floats, or a `ContractError`
    unless it is one finite row per point."""
    who = f"{method_name(est)}: {hook}"
    Z = np.asarray(Z)
    if Z.ndim != 2 or Z.shape[0] != n_rows:
        raise ContractError(f"{who} returned shape {Z.shape} for {n_rows} points; it must "
                            "return one row per point")
    if Z.dtype.kind not in "fiu":
        raise ContractError(f"{who} returned values of dtype {Z.dtype}; they must be numbers")
    Z = Z.astype(float, copy=False)
    bad = ~np.isfinite(Z)
    if bad.any():
        raise ContractError(f"{who} returned NaN or infinite values for "
                            f"{int(bad.any(axis=1).sum())} of {n_rows} points (first: row "
                            f"{_first(bad)}); distances in that space are not numbers")
    return Z


def check_predictions(est, predicted, n_queries: int, labels: np.ndarray) -> np.ndarray:
    """`predicted` (what `est.predict` returned) as an array, or a `ContractError` unless it
    is one label per query, each one of the training `labels`."""
    who = f"{method_name(est)}: predict"
    predicted = np.asarray(predicted)
    if predicted.shape != (n_queries,):
        raise ContractError(f"{who} returned shape {predicted.shape}; it must return one label "
                            f"for each of the {n_queries} queries")
    unknown = ~np.isin(predicted, labels)
    if unknown.any():
        q = int(np.flatnonzero(unknown)[0])
        value = getattr(predicted[q], "item", lambda: predicted[q])()
        raise ContractError(f"{who} returned {value!r} for query {q}, which is none of "
                            f"the {np.size(labels)} training labels")
    return predicted
