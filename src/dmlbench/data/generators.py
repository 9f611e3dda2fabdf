"""Exact generators for data sets that are a definition rather than a measurement.

- balance-scale (UCI): all 5^4 combinations of (left weight, left distance, right weight, right
  distance), each in 1..5, in UCI's lexicographic order; the class is the side with the larger
  torque weight x distance, B (balanced) when equal.
- monks-1/2/3 (UCI, Thrun 1991): the 432 combinations of a1..a6 in the order of the UCI
  `monks-N.test` files (a1 slowest), labelled by the three target concepts of `monks.names`.
"""

from __future__ import annotations

import itertools

import numpy as np

from .embedded import RawData

#: value ranges of the six MONK attributes (monks.names, section 7)
MONKS_VALUES = ((1, 2, 3), (1, 2, 3), (1, 2), (1, 2, 3), (1, 2, 3, 4), (1, 2))


def balance_scale() -> RawData:
    """The 625 balance-scale configurations with class L, B or R."""
    X = np.array(list(itertools.product(range(1, 6), repeat=4)), dtype=float)
    left, right = X[:, 0] * X[:, 1], X[:, 2] * X[:, 3]
    y = np.where(left > right, "L", np.where(left < right, "R", "B"))
    names = ["left_weight", "left_distance", "right_weight", "right_distance"]
    return RawData(X=X, y=y, feature_names=names)


def monks_concept(problem: int, A: np.ndarray) -> np.ndarray:
    """Target concept of MONK's problem 1, 2 or 3 for attribute rows `A` (columns a1..a6)."""
    a1, a2, a3, a4, a5, a6 = (A[:, j] for j in range(6))
    if problem == 1:
        return (a1 == a2) | (a5 == 1)
    if problem == 2:
        return (A == 1).sum(axis=1) == 2
    if problem == 3:
        return ((a5 == 3) & (a4 == 1)) | ((a5 != 4) & (a2 != 3))
    raise ValueError(f"MONK's problem must be 1, 2 or 3, got {problem!r}")


def monks(problem: int) -> RawData:
    """All 432 MONK attribute combinations labelled by concept `problem` (class 1 = in concept).

    The attributes are kept as their integer codes, as most k-NN studies of these data do.
    """
    A = np.array(list(itertools.product(*MONKS_VALUES)), dtype=float)
    y = monks_concept(problem, A).astype(int).astype(str)
    return RawData(X=A, y=y, feature_names=[f"a{j}" for j in range(1, 7)])
