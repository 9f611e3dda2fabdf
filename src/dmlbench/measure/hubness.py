"""Hubness of a k-NN graph: how unevenly the labelled objects occur in the queries' k-NN lists.

N_k(i) counts how often labelled object i is among the k nearest labelled objects of the query
objects (Shigeto 2017, section 2.2; Radovanovic et al. 2010). The measures below follow Shigeto
2017 (skewness with population moments, as printed) and the definitions used by scikit-hubness.
"""

from __future__ import annotations

import numpy as np

from .. import vocabulary as voc


def k_occurrence(neighbor_indices: np.ndarray, n_labeled: int, k: int | None = None) -> np.ndarray:
    """N_k of every labelled object: counts of each index in the first `k` columns."""
    ind = np.asarray(neighbor_indices)
    if k is not None:
        if k > ind.shape[1]:
            raise ValueError(f"k = {k} exceeds the {ind.shape[1]} neighbours given")
        ind = ind[:, :k]
    if ind.size and (ind.min() < 0 or ind.max() >= n_labeled):
        raise ValueError(f"neighbour indices must lie in [0, {n_labeled}); got [{ind.min()}, {ind.max()}]")
    return np.bincount(ind.ravel(), minlength=n_labeled)


def skewness(occurrence: np.ndarray) -> float:
    """S_{N_k} = E[(N_k - mu)^3] / sigma^3 with population (1/n) moments (Shigeto 2017, eq. 1).

    0 when every object occurs equally often (sigma = 0).
    """
    nk = np.asarray(occurrence, dtype=float)
    centred = nk - nk.mean()
    sigma = np.sqrt(np.mean(centred**2))
    if sigma == 0:
        return 0.0
    return float(np.mean(centred**3) / sigma**3)


def robin_hood(occurrence: np.ndarray) -> float:
    """Robin-hood index: the share of occurrences to move to make N_k uniform,
    0.5 sum |N_k - mean| / sum N_k."""
    nk = np.asarray(occurrence, dtype=float)
    total = nk.sum()
    return float(0.5 * np.abs(nk - nk.mean()).sum() / total) if total else 0.0


def antihub_share(occurrence: np.ndarray) -> float:
    """Share of labelled objects that occur in no k-NN list (N_k = 0)."""
    nk = np.asarray(occurrence)
    return float(np.mean(nk == 0))


def hub_occurrence(occurrence: np.ndarray, k: int, n_queries: int, hub_size: float = 2.0) -> float:
    """Share of all k-NN slots taken by hubs (N_k >= hub_size * k): sum over hubs / (k n_q)."""
    nk = np.asarray(occurrence)
    return float(nk[nk >= hub_size * k].sum() / (k * n_queries))


def gini(occurrence: np.ndarray) -> float:
    """Gini index of N_k: sum_i sum_j |N_k(i) - N_k(j)| / (2 n sum N_k)."""
    nk = np.sort(np.asarray(occurrence, dtype=float))
    n, total = nk.size, nk.sum()
    if total == 0:
        return 0.0
    # sum_{i,j} |a_i - a_j| = 2 sum_i (2i - n + 1) a_(i) for sorted a, i = 0..n-1
    return float(np.sum((2 * np.arange(n) - n + 1) * nk) / (n * total))


def groupie_ratio(occurrence: np.ndarray, k: int) -> float:
    """Largest N_k relative to n k (the share of one object in all possible slots)."""
    nk = np.asarray(occurrence)
    return float(nk.max() / (nk.size * k))


def occurrence_histogram(occurrence: np.ndarray) -> np.ndarray:
    """How many labelled objects have N_k = 0, 1, ..., max N_k (the N_k distribution of
    Radovanovic et al. 2010, Fig. 1, unnormalised)."""
    return np.bincount(np.asarray(occurrence, dtype=np.int64))


def summary(neighbor_indices: np.ndarray, n_labeled: int, k: int) -> dict[str, float]:
    """All measures for the first `k` neighbours of each query, keyed for result records."""
    nk = k_occurrence(neighbor_indices, n_labeled, k)
    n_queries = np.asarray(neighbor_indices).shape[0]
    values = {"skewness": skewness(nk), "robin_hood": robin_hood(nk),
              "antihub_share": antihub_share(nk), "hub_occurrence": hub_occurrence(nk, k, n_queries),
              "gini": gini(nk), "max": float(nk.max())}
    return {voc.hubness(measure, k): values[measure] for measure in voc.HUBNESS_MEASURES}
