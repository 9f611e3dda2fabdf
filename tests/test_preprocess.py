"""Preprocessing is fitted on the training part only."""

import numpy as np
import pytest

from dmlbench.run import preprocessing

rng = np.random.default_rng(0)
X_TRAIN = rng.normal(3.0, 2.0, size=(60, 5))
X_TEST = rng.normal(-1.0, 5.0, size=(30, 5))


def test_zscore_uses_training_statistics_only():
    Xtr, Xte, _ = preprocessing.fit_transform(["zscore"], X_TRAIN, X_TEST)
    np.testing.assert_allclose(Xtr.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(Xtr.std(0), 1, atol=1e-12)
    expected = (X_TEST - X_TRAIN.mean(0)) / X_TRAIN.std(0)
    np.testing.assert_allclose(Xte, expected)


def test_test_part_does_not_influence_the_fit():
    a, _, _ = preprocessing.fit_transform(["zscore", {"pca": 3}], X_TRAIN, X_TEST)
    b, _, _ = preprocessing.fit_transform(["zscore", {"pca": 3}], X_TRAIN, X_TEST * 100 + 7)
    np.testing.assert_array_equal(a, b)


def test_center_then_pca_components_and_variance_fraction():
    Xtr, Xte, info = preprocessing.fit_transform(["center", {"pca": 2}], X_TRAIN, X_TEST)
    assert Xtr.shape == (60, 2) and Xte.shape == (30, 2) and info["d_out"] == 2
    centred = X_TRAIN - X_TRAIN.mean(0)
    top = np.linalg.svd(centred, full_matrices=False)[2][:2]
    np.testing.assert_allclose(np.abs(Xte), np.abs((X_TEST - X_TRAIN.mean(0)) @ top.T), atol=1e-10)
    _, _, info = preprocessing.fit_transform([{"pca": 0.999}], X_TRAIN, X_TEST)
    assert info["pca_explained_variance"] >= 0.999


def test_no_steps_is_identity():
    Xtr, Xte, info = preprocessing.fit_transform([], X_TRAIN, X_TEST)
    assert Xtr is X_TRAIN and info == {"d_in": 5, "d_out": 5}


@pytest.mark.parametrize("steps, message", [
    (["whiten"], "is not a step"),
    ([{"pca": 6}], "only min\\(n, d\\) = 5"),
    ([{"pca": 1.5}], "must be in \\(0, 1\\)"),
])
def test_bad_steps_are_named(steps, message):
    with pytest.raises(ValueError, match=message):
        preprocessing.fit_transform(steps, X_TRAIN, X_TEST)


def test_presets_expand_to_the_papers_steps_and_match_the_schema():
    import yaml
    from conftest import REPO

    assert preprocessing.expand(["shigeto-2017-pca300"]) == [{"pca": 300}, "center"]
    assert preprocessing.expand(["zscore", "chang-2012-undersampled"]) == ["zscore", {"pca": "all"}]
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    enums = [alt["enum"] for alt in schema["$defs"]["preprocess"]["items"]["oneOf"]
             if "enum" in alt]
    assert set(enums[1]) == set(preprocessing.PRESETS)


def test_pca_all_keeps_every_component_of_nonzero_variance():
    X = rng.normal(size=(8, 20))  # undersampled: n - 1 = 7 < d
    Xtr, _, info = preprocessing.fit_transform(["chang-2012-undersampled"], X, X[:3])
    assert Xtr.shape == (8, 7) and info["d_out"] == 7
    assert abs(info["pca_explained_variance"] - 1) < 1e-12  # nothing dropped
    # distances between training points are unchanged (a rotation of the centred data)
    from scipy.spatial.distance import pdist
    np.testing.assert_allclose(pdist(Xtr), pdist(X), rtol=1e-10)
    Xtr, _, _ = preprocessing.fit_transform([{"pca": "all"}], X_TRAIN, X_TEST)
    assert Xtr.shape == (60, 5)  # d < n - 1: all d components


def test_image_crop_and_blur_against_direct_computation():
    images = rng.uniform(0, 255, size=(7, 28, 28))
    X = images.reshape(7, -1)
    cropped, _, info = preprocessing.fit_transform([{"image_crop": 2}], X, X[:2])
    np.testing.assert_array_equal(cropped.reshape(7, 24, 24), images[:, 2:26, 2:26])
    assert info["d_out"] == 576
    # Gaussian smoothing as an explicit separable convolution with a normalised, truncated
    # (4 sigma) kernel and zeros outside the image
    sigma = 0.75
    radius = int(4 * sigma + 0.5)
    t = np.arange(-radius, radius + 1)
    kernel = np.exp(-t**2 / (2 * sigma**2))
    kernel /= kernel.sum()
    expected = np.empty_like(images)
    for i, image in enumerate(images):
        rows = np.array([np.convolve(r, kernel, mode="same") for r in image])
        expected[i] = np.array([np.convolve(c, kernel, mode="same") for c in rows.T]).T
    blurred, _, _ = preprocessing.fit_transform([{"gaussian_blur": sigma}], X, X[:2])
    np.testing.assert_allclose(blurred.reshape(7, 28, 28), expected, atol=1e-9)


def test_mnist_preset_fits_pca_on_the_training_part_only():
    train = rng.uniform(0, 255, size=(150, 784))
    test = rng.uniform(0, 255, size=(20, 784))
    a, at, info = preprocessing.fit_transform(["abou-moustafa-2017-mnist"], train, test)
    assert a.shape == (150, 120) and at.shape == (20, 120) and info["d_in"] == 784
    assert info["expanded_steps"] == preprocessing.PRESETS["abou-moustafa-2017-mnist"]
    b, _, _ = preprocessing.fit_transform(["abou-moustafa-2017-mnist"], train, test * 2 + 1)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="not a square number"):
        preprocessing.fit_transform([{"image_crop": 2}], X_TRAIN, X_TEST)


def test_sparse_pca_equals_dense_pca_of_the_centred_data():
    import scipy.sparse as sp

    S = sp.random(80, 400, density=0.05, random_state=3, format="csr")
    T = sp.random(10, 400, density=0.05, random_state=4, format="csr")
    Xtr, Xte, _ = preprocessing.fit_transform([{"pca": 5}, "center"], S, T)
    dense = S.toarray()
    mean = dense.mean(0)
    _, sing, Vt = np.linalg.svd(dense - mean, full_matrices=False)
    np.testing.assert_allclose(np.abs(Xtr), np.abs((dense - mean) @ Vt[:5].T), atol=1e-8)
    np.testing.assert_allclose(np.abs(Xte), np.abs((T.toarray() - mean) @ Vt[:5].T), atol=1e-8)
    np.testing.assert_allclose(Xtr.mean(0), 0, atol=1e-10)
    with pytest.raises(ValueError, match="the data set is sparse"):
        preprocessing.fit_transform(["zscore"], S, T)
    with pytest.raises(ValueError, match="the data set is sparse"):
        preprocessing.fit_transform([], S, T)
    with pytest.raises(ValueError, match=r"min\(n, d\) - 1 = 79"):
        preprocessing.fit_transform([{"pca": 80}], S, T)


def test_normalize_gives_unit_rows_dense_and_sparse_and_may_precede_a_sparse_pca():
    import scipy.sparse as sp

    Xtr, Xte, info = preprocessing.fit_transform(["normalize"], X_TRAIN, X_TEST)
    np.testing.assert_allclose(np.linalg.norm(Xtr, axis=1), 1.0)
    np.testing.assert_allclose(Xte, X_TEST / np.linalg.norm(X_TEST, axis=1, keepdims=True))
    # on unit rows the squared Euclidean distance is 2 (1 - cosine similarity)
    from scipy.spatial.distance import cdist
    np.testing.assert_allclose(cdist(Xte, Xtr, "sqeuclidean") / 2, cdist(X_TEST, X_TRAIN, "cosine"),
                               atol=1e-12)
    S = sp.random(80, 400, density=0.05, random_state=3, format="csr")
    T = sp.random(10, 400, density=0.05, random_state=4, format="csr")
    Xtr, Xte, _ = preprocessing.fit_transform(["normalize", {"pca": 5}], S, T)
    unit = S.toarray() / np.linalg.norm(S.toarray(), axis=1, keepdims=True)
    unit_test = T.toarray() / np.linalg.norm(T.toarray(), axis=1, keepdims=True)
    mean = unit.mean(0)
    Vt = np.linalg.svd(unit - mean, full_matrices=False)[2]
    np.testing.assert_allclose(np.abs(Xte), np.abs((unit_test - mean) @ Vt[:5].T), atol=1e-8)
    with pytest.raises(ValueError, match="the data set is sparse"):
        preprocessing.fit_transform(["normalize"], S, T)
    with pytest.raises(ValueError, match="the data set is sparse"):
        preprocessing.fit_transform(["normalize", "center", {"pca": 5}], S, T)
def _sklearn(steps, X_train, X_test):
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, StandardScaler

    unit = FunctionTransformer(lambda X: X / np.linalg.norm(X, axis=1, keepdims=True))
    parts = [PCA(s["pca"], svd_solver="full") if isinstance(s, dict) else
             unit if s == "normalize" else
             MinMaxScaler() if s == "minmax" else
             StandardScaler(with_std=s == "zscore") for s in steps]
    pipe = make_pipeline(*parts)
    return pipe.fit_transform(X_train), pipe.transform(X_test), pipe


@pytest.mark.parametrize("steps", [["zscore"], ["center"], ["zscore", {"pca": 3}],
                                   [{"pca": 4}], ["center", {"pca": 0.9}, "zscore"],
                                   ["normalize"], ["normalize", "center", {"pca": 3}],
                                   ["zscore", "normalize"],
                                   ["center", {"pca": 3}, "normalize", "zscore"],
                                   ["minmax"], ["minmax", {"pca": 3}], ["zscore", "minmax"],
                                   ["minmax", "zscore"], [{"pca": 3}, "minmax"],
                                   ["normalize", "minmax"], ["minmax", "normalize", "zscore"]])
def test_streamed_steps_equal_scikit_learn(steps, monkeypatch):
    # chunks of 7 rows: the moments and the maps are accumulated over many chunks
    monkeypatch.setattr(preprocessing, "CHUNK_BYTES", 7 * 8 * X_TRAIN.shape[1])
    X = np.concatenate([X_TRAIN, X_TEST])
    train, test = np.arange(60, 90), np.arange(30)  # any rows of X, in any order
    ours_tr, ours_te, info = preprocessing.fit_transform_rows(steps, X, train, test)
    ref_tr, ref_te, pipe = _sklearn(steps, X[train], X[test])
    np.testing.assert_allclose(ours_tr, ref_tr, atol=1e-9)
    np.testing.assert_allclose(ours_te, ref_te, atol=1e-9)
    assert info["d_out"] == ref_tr.shape[1]
    if any(isinstance(s, dict) for s in steps):
        pca = pipe.named_steps["pca"]
        assert info["pca_explained_variance"] == pytest.approx(pca.explained_variance_ratio_.sum())


def test_zscore_only_centres_a_feature_constant_on_the_training_part():
    X_train = X_TRAIN.copy()
    X_train[:, 2] = 4.2
    ours, ours_test, _ = preprocessing.fit_transform(["zscore"], X_train, X_TEST)
    ref, ref_test, _ = _sklearn(["zscore"], X_train, X_TEST)
    np.testing.assert_allclose(ours, ref, atol=1e-12)
    np.testing.assert_allclose(ours_test[:, 2], X_TEST[:, 2] - 4.2)


def test_more_features_than_training_points_uses_the_svd():
    X_train, X_test = rng.normal(size=(8, 20)), rng.normal(size=(5, 20))
    ours, ours_test, info = preprocessing.fit_transform(["zscore", {"pca": 5}], X_train, X_test)
    ref, ref_test, _ = _sklearn(["zscore", {"pca": 5}], X_train, X_test)
    np.testing.assert_allclose(np.abs(ours_test), np.abs(ref_test), atol=1e-9)
    assert info["d_out"] == 5


def test_minmax_maps_the_training_range_to_the_unit_interval():
    from sklearn.preprocessing import MinMaxScaler

    Xtr, Xte, info = preprocessing.fit_transform(["minmax"], X_TRAIN, X_TEST)
    np.testing.assert_allclose(Xtr.min(0), 0, atol=1e-15)
    np.testing.assert_allclose(Xtr.max(0), 1, atol=1e-15)
    lo, hi = X_TRAIN.min(0), X_TRAIN.max(0)
    np.testing.assert_allclose(Xte, (X_TEST - lo) / (hi - lo), atol=1e-12)  # not clipped
    assert Xte.min() < 0 and Xte.max() > 1 and info["d_out"] == 5
    ref = MinMaxScaler().fit(X_TRAIN)
    np.testing.assert_allclose(Xte, ref.transform(X_TEST), atol=1e-15)


@pytest.mark.parametrize("streamed", [False, True])
def test_minmax_maps_a_feature_constant_on_the_training_part_to_zero(streamed):
    from sklearn.preprocessing import MinMaxScaler

    X_train = X_TRAIN.copy()
    X_train[:, 2] = 4.2
    if streamed:
        X = np.concatenate([X_train, X_TEST])
        ours, ours_test, _ = preprocessing.fit_transform_rows(["minmax"], X, np.arange(60),
                                                              np.arange(60, 90))
    else:
        ours, ours_test, _ = preprocessing.fit_transform(["minmax"], X_train, X_TEST)
    np.testing.assert_array_equal(ours[:, 2], 0.0)
    # scikit-learn's rule: the range of a constant feature is taken as 1, so x -> x - min
    np.testing.assert_allclose(ours_test[:, 2], X_TEST[:, 2] - 4.2, atol=1e-12)
    ref = MinMaxScaler().fit(X_train)
    np.testing.assert_allclose(ours, ref.transform(X_train), atol=1e-12)
    np.testing.assert_allclose(ours_test, ref.transform(X_TEST), atol=1e-12)


@pytest.mark.parametrize("steps, n, d", [
    ([], 40, 7), (["zscore", {"pca": 3}], 40, 7), ([{"pca": "all"}], 20, 50),
    (["chang-2012-undersampled"], 60, 30), ([{"image_crop": 2}, {"gaussian_blur": 0.5}], 30, 64),
    ([{"image_crop": 1}, {"pca": 5}], 30, 36), (["center", {"pca": 7}, "zscore"], 15, 9),
])
def test_output_dim_is_the_fitted_steps_output(steps, n, d):
    """What config checks use before any job equals the features the fitted steps give."""
    X = np.random.default_rng(n + d).normal(size=(n + 10, d))
    train, test = np.arange(n), np.arange(n, n + 10)
    Xtr, Xte, _ = preprocessing.fit_transform_rows(steps, X, train, test)
    assert preprocessing.output_dim(steps, n, d) == (Xtr.shape[1], True)
    assert Xte.shape[1] == Xtr.shape[1]


def test_output_dim_of_a_variance_fraction_is_an_upper_bound():
    X = np.random.default_rng(0).normal(size=(40, 12)) * np.arange(1, 13)
    for n, q in ((40, 0.5), (40, 0.99), (8, 0.99)):
        Xtr, _, _ = preprocessing.fit_transform_rows([{"pca": q}], X, np.arange(n),
                                                     np.arange(n, 40))
        bound, exact = preprocessing.output_dim([{"pca": q}], n, 12)
        assert not exact and Xtr.shape[1] <= bound == min(n, 12)


@pytest.mark.parametrize("steps, n, d, sparse, message", [
    ([{"pca": 9}], 30, 8, False, r"min\(n, d\) = 8"),
    ([{"pca": 30}], 30, 100, True, r"min\(n, d\) - 1 = 29"),
    ([{"image_crop": 1}], 30, 10, False, "not a square number"),
    ([{"image_crop": 2}], 30, 16, False, "leaves no pixel"),
    ([], 30, 100, True, "the data set is sparse"),
])
def test_output_dim_raises_what_fitting_raises(steps, n, d, sparse, message):
    with pytest.raises(ValueError, match=message):
        preprocessing.output_dim(steps, n, d, sparse)
    X = np.random.default_rng(0).normal(size=(n + 5, d))
    if sparse:
        import scipy.sparse as sp

        X = sp.csr_matrix(X)
    with pytest.raises(ValueError, match=message):
        preprocessing.fit_transform_rows(steps, X, np.arange(n), np.arange(n, n + 5))
