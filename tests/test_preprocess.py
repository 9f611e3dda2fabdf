"""Preprocessing is fitted on the training part only."""

import numpy as np
import pytest

from dmlbench import preprocess

rng = np.random.default_rng(0)
X_TRAIN = rng.normal(3.0, 2.0, size=(60, 5))
X_TEST = rng.normal(-1.0, 5.0, size=(30, 5))


def test_zscore_uses_training_statistics_only():
    Xtr, Xte, _ = preprocess.fit_transform(["zscore"], X_TRAIN, X_TEST)
    np.testing.assert_allclose(Xtr.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(Xtr.std(0), 1, atol=1e-12)
    expected = (X_TEST - X_TRAIN.mean(0)) / X_TRAIN.std(0)
    np.testing.assert_allclose(Xte, expected)


def test_test_part_does_not_influence_the_fit():
    a, _, _ = preprocess.fit_transform(["zscore", {"pca": 3}], X_TRAIN, X_TEST)
    b, _, _ = preprocess.fit_transform(["zscore", {"pca": 3}], X_TRAIN, X_TEST * 100 + 7)
    np.testing.assert_array_equal(a, b)


def test_center_then_pca_components_and_variance_fraction():
    Xtr, Xte, info = preprocess.fit_transform(["center", {"pca": 2}], X_TRAIN, X_TEST)
    assert Xtr.shape == (60, 2) and Xte.shape == (30, 2) and info["d_out"] == 2
    centred = X_TRAIN - X_TRAIN.mean(0)
    top = np.linalg.svd(centred, full_matrices=False)[2][:2]
    np.testing.assert_allclose(np.abs(Xte), np.abs((X_TEST - X_TRAIN.mean(0)) @ top.T), atol=1e-10)
    _, _, info = preprocess.fit_transform([{"pca": 0.999}], X_TRAIN, X_TEST)
    assert info["pca_explained_variance"] >= 0.999


def test_no_steps_is_identity():
    Xtr, Xte, info = preprocess.fit_transform([], X_TRAIN, X_TEST)
    assert Xtr is X_TRAIN and info == {"d_in": 5, "d_out": 5}


@pytest.mark.parametrize("steps, message", [
    (["whiten"], "is not a step"),
    ([{"pca": 6}], "only min\\(n, d\\) = 5"),
    ([{"pca": 1.5}], "must be in \\(0, 1\\)"),
])
def test_bad_steps_are_named(steps, message):
    with pytest.raises(ValueError, match=message):
        preprocess.fit_transform(steps, X_TRAIN, X_TEST)
