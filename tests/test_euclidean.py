"""The Euclidean baseline's implicit identity: no d x d matrix, yet `components_` reads as one."""

import tracemalloc

import numpy as np
import pytest

from dmlbench import data
from dmlbench.methods import REGISTRY
from dmlbench.methods.euclidean import identity


@pytest.mark.parametrize("d", [1, 2, 5, 31])
def test_identity_view_is_the_identity_and_read_only(d):
    eye = identity(d)
    np.testing.assert_array_equal(eye, np.eye(d))
    assert not eye.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        eye[0, 0] = 2.0


def test_euclidean_reads_as_the_identity_map():
    rng = np.random.default_rng(0)
    X, Q = rng.normal(size=(30, 4)), rng.normal(size=(5, 4))
    est = REGISTRY["euclidean"]().fit(X, np.arange(30) % 2)
    np.testing.assert_array_equal(est.components_, np.eye(4))
    np.testing.assert_array_equal(est.transform(Q), Q)
    np.testing.assert_array_equal(est.embedding_, X)
    test, train = est.sweep_embeddings(Q)
    np.testing.assert_array_equal(test, Q)
    np.testing.assert_array_equal(train, X)
    with pytest.raises(ValueError, match=r"X has 3 features, but Euclidean is expecting 4"):
        est.transform(Q[:, :3])


def test_a_fit_on_dexter_allocates_under_10_mb():
    """DEXTER (300 x 7751): the identity would be 480 MB. The fit, the job's finiteness check
    and everything that reads the metric's shape (rank, sweeps, artifacts) stay under 10 MB."""
    ds = data.build("dexter")
    est = REGISTRY["euclidean"]()
    tracemalloc.start()
    try:
        est.fit(ds.X, ds.y)
        est.check_finite()
        assert est.components_.shape == (7751, 7751)
        est.sweep_embeddings(ds.X[:10])
        est.artifacts(ds.X[:10], ds.y[:10])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20
