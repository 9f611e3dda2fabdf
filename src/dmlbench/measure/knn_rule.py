"""The k-NN classification rule on sorted neighbour lists: a majority vote whose ties between
classes go to the smallest class label (as scikit-learn's KNeighborsClassifier), and the
accuracy for several k from one list. The evaluation and the methods' own model selection
(leave-one-out or cross-validated k-NN error) use the same rule."""

from __future__ import annotations

import numpy as np


def knn_vote(neighbor_labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Majority class of each row of labels; ties go to the smallest label."""
    counts = np.zeros((neighbor_labels.shape[0], n_classes), dtype=np.int64)
    rows = np.repeat(np.arange(neighbor_labels.shape[0]), neighbor_labels.shape[1])
    np.add.at(counts, (rows, neighbor_labels.ravel()), 1)
    return counts.argmax(axis=1)


def accuracy_per_k(ind: np.ndarray, y_train: np.ndarray, y_test: np.ndarray,
                   ks: list[int]) -> dict[int, float]:
    """k-NN accuracy for every k in `ks` from one sorted neighbour list `ind` (len(y_test) x K)."""
    n_classes = int(max(y_train.max(), y_test.max())) + 1
    out = {}
    for k in ks:
        if k > ind.shape[1]:
            raise ValueError(f"k = {k} needs {k} neighbours, only {ind.shape[1]} computed")
        pred = knn_vote(y_train[ind[:, :k]], n_classes)
        out[k] = float(np.mean(pred == y_test))
    return out
