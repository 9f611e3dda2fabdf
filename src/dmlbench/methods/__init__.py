"""Metric-learning methods behind one contract (docs/architecture.md, section 3), registered by name.

    est = REGISTRY["lmnn"](n_neighbors=3)
    est.fit(X_train, y_train)
    dist, ind = est.kneighbors(X_query, n_neighbors=10)
"""

from . import baselines, boost, dml_eig, euclidean, klhp, lmnn, local, move, nca, nca_fast  # noqa: F401  (registration)
from .dml_eig import DMLEig
from .move import MoveLabeled, MoveQuery
from .registry import REGISTRY, get, make, register

__all__ = ["REGISTRY", "get", "make", "register", "MoveLabeled", "MoveQuery", "DMLEig"]
