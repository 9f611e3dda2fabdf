"""Hubness reducers (`dmlbench.measure.hubness_reduction`, behind the method wrapper
`dmlbench.methods.hubness_reduced`) against direct dense implementations of their papers'
formulas, their invariances, and their use on linear, asymmetric and local methods."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from scipy.stats import norm

from dmlbench import config
from dmlbench.measure import hubness_reduction as hr
from dmlbench.methods import REGISTRY
from dmlbench.methods.base import KNeighborsMethod
from dmlbench.methods.hubness_reduced import HubnessReduced
from dmlbench.methods.parameters import ParameterError
from dmlbench.run import plan

K = 4


def settings(value):
    """A config's `hubness_reduction` entry with the schema's defaults filled in."""
    cfg = config.with_defaults({"benchmark": "t", "datasets": {"iris": None},
                                "methods": {"m": {"hubness_reduction": value}}})
    return cfg["methods"]["m"]["hubness_reduction"]


def reduced(est, value, X, y, **kw):
    """`est` behind the reduction of config entry `value`, fitted on (X, y)."""
    return HubnessReduced.from_settings(est, settings(value), **kw).fit(X, y)


def data(seed=0, n=40, n_test=12, d=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, size=(n, 1))  # uneven local densities
    return X, np.arange(n) % 2, rng.normal(size=(n_test, d))


# --- the papers' formulas, written directly on dense distance matrices --------------------------


def reference(kind, Dq, Dt, own=None, vectors=None, k=K, variant="empiric"):
    """Secondary distances of every (query, labelled) pair. Dq: query x labelled distances;
    Dt[y, j]: labelled y (as a query) to labelled j; `own[x]` = the query's labelled index (its
    own entries excluded) or -1. `vectors` = (query vectors, labelled vectors) for DisSim: y is
    its labelled vector, c(y) the mean of the k labelled vectors nearest to it."""
    n_q, n = Dq.shape
    own = np.full(n_q, -1) if own is None else own
    Dt = Dt.copy()
    np.fill_diagonal(Dt, np.nan)
    rows = [np.delete(Dt[y], y) for y in range(n)]  # y's distances to the others
    out = np.full((n_q, n), np.nan)
    for x in range(n_q):
        a = np.array([np.nan if j == own[x] else Dq[x, j] for j in range(n)])
        ax = a[~np.isnan(a)]
        for y in range(n):
            if y == own[x]:
                continue
            t = Dq[x, y]
            if kind == "mutual_proximity" and variant == "empiric":
                others = [j for j in range(n) if j not in (y, own[x])]
                far = sum(a[j] > t and Dt[y, j] > t for j in others)
                out[x, y] = 1.0 - far / len(others)
            elif kind == "mutual_proximity":
                p = (norm.sf(t, ax.mean(), ax.std()) * norm.sf(t, rows[y].mean(), rows[y].std()))
                out[x, y] = 1.0 - p
            elif kind == "local_scaling":
                sx, sy = np.sort(ax)[k - 1], np.sort(rows[y])[k - 1]
                out[x, y] = 1.0 - np.exp(-t**2 / (sx * sy))
            elif kind == "nicdm":
                mx, my = np.sort(ax)[:k].mean(), np.sort(rows[y])[:k].mean()
                out[x, y] = t / np.sqrt(mx * my)
            else:  # dissim_local (Hara et al. 2016)
                queries, labelled = vectors
                near_x = np.argsort(a)[:k]  # NaN (own) sorts last
                between = np.sum((labelled - labelled[y]) ** 2, axis=1)
                between[y] = np.inf
                near_y = np.argsort(between)[:k]
                cx, cy = labelled[near_x].mean(axis=0), labelled[near_y].mean(axis=0)
                out[x, y] = (np.sum((queries[x] - labelled[y]) ** 2)
                             - np.sum((queries[x] - cx) ** 2)
                             - np.sum((labelled[y] - cy) ** 2))
    return out


def reference_lists(secondary, Dq, depth, allowed=None):
    """The `depth` smallest secondary distances of each row, ties by the original distance then
    the index; `allowed` restricts each row to some columns (candidates)."""
    dist, ind = [], []
    for x in range(secondary.shape[0]):
        cols = np.flatnonzero(~np.isnan(secondary[x]))
        if allowed is not None:
            cols = np.intersect1d(cols, allowed[x])
        order = cols[np.lexsort((cols, Dq[x, cols], secondary[x, cols]))][:depth]
        dist.append(secondary[x, order])
        ind.append(order)
    return np.array(dist), np.array(ind)


CASES = [
    ({"kind": "mutual_proximity", "variant": "empiric"}, {}),
    ({"kind": "mutual_proximity", "variant": "gaussian"}, {"variant": "gaussian"}),
    ({"kind": "local_scaling", "k": K}, {}),
    ({"kind": "nicdm", "k": K}, {}),
    ({"kind": "dissim_local", "k": K}, {}),
]


@pytest.mark.parametrize("config, extra", CASES, ids=[c["kind"] + c.get("variant", "") for c, _ in CASES])
def test_each_reducer_equals_its_formula_on_all_pairs(config, extra):
    X, y, Xt = data()
    est = REGISTRY["euclidean"]().fit(X, y)
    wrapped = reduced(est, config, X, y)
    Dq, Dt = cdist(Xt, X), cdist(X, X)
    want = reference(config["kind"], Dq, Dt, vectors=(Xt, X), **extra)
    dist, ind = wrapped.kneighbors(Xt, 6)
    ref_dist, ref_ind = reference_lists(want, Dq, 6)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-9, atol=1e-12)
    # the training points' reduced leave-one-out lists (training hubness, k selection)
    own = np.arange(len(X))
    want = reference(config["kind"], Dt, Dt, own=own, vectors=(X, X), **extra)
    dist, ind = wrapped.train_kneighbors(6)
    ref_dist, ref_ind = reference_lists(want, Dt, 6)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-9, atol=1e-12)
    assert wrapped.fit_info()["reduction_exact"] == 1


@pytest.mark.parametrize("config, extra", CASES, ids=[c["kind"] + c.get("variant", "") for c, _ in CASES])
def test_an_asymmetric_method_is_reduced_on_its_own_distances(config, extra):
    """Move-labeled: d(x, z) = ||x - W z||; a labelled point's distances are its own leave-one-out
    list as a query (x_i against the other W z_j)."""
    X, y, Xt = data(1)
    est = REGISTRY["move_labeled"](lam=0.5).fit(X, y)
    WZ = est.search_vectors()[1]
    Dq, Dt = cdist(Xt, WZ), cdist(X, WZ)
    want = reference(config["kind"], Dq, Dt, vectors=(Xt, WZ), **extra)
    ind = reduced(est, config, X, y).kneighbors(Xt, 5)[1]
    np.testing.assert_array_equal(ind, reference_lists(want, Dq, 5)[1])


def test_cosine_distance_replaces_the_method_distance_by_one_minus_cosine():
    X, y, Xt = data(2)
    est = REGISTRY["euclidean"]().fit(X, y)
    config = {"kind": "mutual_proximity", "variant": "gaussian", "distance": "cosine"}
    Dq, Dt = cdist(Xt, X, "cosine"), cdist(X, X, "cosine")
    want = reference("mutual_proximity", Dq, Dt, variant="gaussian")
    dist, ind = reduced(est, config, X, y).kneighbors(Xt, 5)
    ref_dist, ref_ind = reference_lists(want, Dq, 5)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-8)


# --- invariances -----------------------------------------------------------------------------------


class Transformed(KNeighborsMethod):
    """A method whose distances are an increasing function of another method's."""

    def __init__(self, est, f):
        self.est, self.f = est, f

    @classmethod
    def check_parameters(cls, params):
        pass

    def fit(self, X, y):
        self.est.fit(X, y)
        return self

    def kneighbors_per_k(self, X, ks, n, progress=False):
        dist, ind = self.est.kneighbors(X, n)
        return dict.fromkeys(ks, (self.f(dist), ind))

    def train_kneighbors(self, n):
        dist, ind = self.est.train_kneighbors(n)
        return self.f(dist), ind

    def fit_info(self):
        return {}


def test_empiric_mutual_proximity_is_invariant_to_increasing_transforms_local_scaling_is_not():
    X, y, Xt = data(3)
    est = REGISTRY["euclidean"]().fit(X, y)
    bent = Transformed(est, lambda d: np.exp(3 * d) + d**3)
    for config, invariant in (({"kind": "mutual_proximity"}, True),
                              ({"kind": "local_scaling", "k": K}, False)):
        plain = reduced(est, config, X, y).kneighbors(Xt, 8)[1]
        other = reduced(bent, config, X, y).kneighbors(Xt, 8)[1]
        assert np.array_equal(plain, other) == invariant
        plain = reduced(est, config, X, y).train_kneighbors(8)[1]
        other = reduced(bent, config, X, y).train_kneighbors(8)[1]
        assert np.array_equal(plain, other) == invariant


@pytest.mark.parametrize("config", [c for c, _ in CASES], ids=[c["kind"] + c.get("variant", "") for c, _ in CASES])
def test_a_linear_method_reduces_as_the_euclidean_method_on_its_embedding(config):
    X, y, Xt = data(4)
    lfda = REGISTRY["lfda"](n_components=3).fit(X, y)
    Z, Zt = lfda.transform(X), lfda.transform(Xt)
    euclid = REGISTRY["euclidean"]().fit(Z, y)
    for a, b in ((reduced(lfda, config, X, y).kneighbors(Xt, 7),
                  reduced(euclid, config, Z, y).kneighbors(Zt, 7)),
                 (reduced(lfda, config, X, y).train_kneighbors(7),
                  reduced(euclid, config, Z, y).train_kneighbors(7))):
        np.testing.assert_array_equal(a[1], b[1])
        np.testing.assert_allclose(a[0], b[0], rtol=1e-9, atol=1e-12)


def test_a_local_metric_is_reduced_per_k_from_its_own_lists():
    X, y, Xt = data(5, n=30, d=3)
    est = REGISTRY["rmle"](m_grid=[4, 8], k_select=(1, 3)).fit(X, y)
    config = {"kind": "local_scaling", "k": 3}
    lists = reduced(est, config, X, y).kneighbors_per_k(Xt, [1, 3], 5)
    full_train = est.train_kneighbors(len(X) - 1)
    Dt = np.full((len(X), len(X)), np.inf)
    np.put_along_axis(Dt, full_train[1], full_train[0], axis=1)
    for k in (1, 3):
        dist, ind = est.kneighbors_per_k(Xt, [k], len(X))[k]
        Dq = np.empty((len(Xt), len(X)))
        np.put_along_axis(Dq, ind, dist, axis=1)
        want = reference("local_scaling", Dq, Dt, k=3)
        np.testing.assert_array_equal(lists[k][1], reference_lists(want, Dq, 5)[1])


# --- candidate mode --------------------------------------------------------------------------------


@pytest.mark.parametrize("config", [{"kind": "local_scaling", "k": K}, {"kind": "nicdm", "k": K},
                                    {"kind": "dissim_local", "k": K}])
def test_candidate_mode_is_exact_within_the_candidates(config):
    X, y, Xt = data(6, n=60)
    est = REGISTRY["euclidean"]().fit(X, y)
    wrapped = reduced(est, {**config, "candidates": 15, "exact_max": 10}, X, y)
    Dq, Dt = cdist(Xt, X), cdist(X, X)
    want = reference(config["kind"], Dq, Dt, vectors=(Xt, X))
    allowed = np.argsort(Dq, axis=1)[:, :15]
    np.testing.assert_array_equal(wrapped.kneighbors(Xt, 5)[1],
                                  reference_lists(want, Dq, 5, allowed)[1])
    info = wrapped.fit_info()
    assert info["reduction_exact"] == 0 and info["reduction_candidates"] == 15


def test_candidate_mode_empiric_mutual_proximity_is_exact_unless_cut_then_a_lower_bound():
    X, y, Xt = data(7, n=80)
    est = REGISTRY["euclidean"]().fit(X, y)
    config = {"kind": "mutual_proximity", "candidates": 20, "exact_max": 10}
    wrapped = reduced(est, config, X, y)
    train = wrapped.reducer.train
    q_dist, q_ind = est.kneighbors(Xt, 20)
    got = wrapped.reducer.keys(hr.Lists(q_dist, q_ind, np.full(len(Xt), -1), False))
    exact = reference("mutual_proximity", cdist(Xt, X), cdist(X, X))
    exact = np.take_along_axis(exact, q_ind, axis=1)
    cut = q_dist > train.dist[q_ind, -1]  # t beyond the labelled point's 20th distance
    assert cut.any() and (~cut).any()
    np.testing.assert_allclose(got[~cut], exact[~cut], atol=1e-12)
    assert np.all(got[cut] <= exact[cut] + 1e-12)
    assert wrapped.fit_info()["reduction_truncated_share"] == pytest.approx(cut.mean())


@pytest.mark.parametrize("config", [{"kind": "mutual_proximity"},
                                    {"kind": "mutual_proximity", "variant": "gaussian"},
                                    {"kind": "dissim_local", "k": K}])
def test_the_memory_block_does_not_change_the_lists(config):
    X, y, Xt = data(8, n=50, n_test=20)
    est = REGISTRY["euclidean"]().fit(X, y)
    whole, blocks = reduced(est, config, X, y), reduced(est, config, X, y, max_bytes=2000)
    for big, small in ((whole.kneighbors(Xt, 6), blocks.kneighbors(Xt, 6)),
                       (whole.train_kneighbors(6), blocks.train_kneighbors(6))):
        np.testing.assert_array_equal(big[1], small[1])
        np.testing.assert_array_equal(big[0], small[0])


# --- parameters ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value, key", [
    ({"kind": "mutual_proxmity"}, "kind"),
    ({"kind": "mutual_proximity", "variant": "normal"}, "variant"),
    ({"kind": "local_scaling", "k": 0}, "k"),
    ({"kind": "local_scaling", "k": 2.5}, "k"),
    ({"kind": "nicdm", "k": 20, "candidates": 10}, "k"),
    ({"kind": "nicdm", "candidates": 1}, "candidates"),
    ({"kind": "mutual_proximity", "k": 5}, "k"),
    ({"kind": "local_scaling", "variant": "empiric"}, "variant"),
    ({"kind": "local_scaling", "distance": "manhattan"}, "distance"),
    ({"kind": "dissim_local", "distance": "cosine"}, "distance"),
    ({"variant": "empiric"}, "kind"),
])
def test_bad_settings_name_the_key(value, key):
    cfg = {"benchmark": "t", "datasets": {"iris": None},
           "methods": {"euclidean": {"hubness_reduction": value}}}
    with pytest.raises(config.ConfigError) as err:
        config.validate_schema(cfg)
        plan.check(cfg)
    assert err.value.key.startswith("methods.euclidean.hubness_reduction")
    assert key in str(err.value)


def test_the_wrapper_checks_its_parameters_when_fitted():
    X, y, _ = data()
    wrapper = HubnessReduced(REGISTRY["euclidean"](), "nicdm", k=20, candidates=10,
                             exact_max=0, distance="euclidean")
    with pytest.raises(ParameterError, match="k = 20 exceeds candidates = 10") as err:
        wrapper.fit(X, y)
    assert err.value.parameter == "k"
    with pytest.raises(ValueError, match="a classifier"):
        HubnessReduced(REGISTRY["klhp"](), "mutual_proximity", "empiric", candidates=100,
                       exact_max=0, distance="euclidean").fit(X, y)


def test_settings_take_the_schema_defaults_and_labels_say_which_reduction():
    assert settings({"kind": "local_scaling"}) == {
        "kind": "local_scaling", "k": 10, "candidates": 100, "exact_max": 2000,
        "distance": "euclidean"}
    assert settings({"kind": "mutual_proximity"}) == {
        "kind": "mutual_proximity", "variant": "empiric", "candidates": 100, "exact_max": 2000,
        "distance": "euclidean"}
    est = REGISTRY["euclidean"]()
    assert HubnessReduced.from_settings(est, settings({"kind": "mutual_proximity"})).label == \
        "MP empiric"
    assert HubnessReduced.from_settings(
        est, settings({"kind": "nicdm", "k": 5, "distance": "cosine"})).label == "NICDM k=5 cosine"


def test_the_wrapper_delegates_the_contract_to_the_method():
    X, y, Xt = data()
    est = REGISTRY["lfda"](n_components=2)
    wrapped = reduced(est, {"kind": "local_scaling"}, X, y)
    assert (wrapped.family, wrapped.kind, wrapped.papers) == (est.family, est.kind, est.papers)
    assert wrapped.selected_k == est.selected_k
    assert set(wrapped.artifacts(Xt, y[:len(Xt)])) == {"test_embedding", "test_labels"}
    assert wrapped.extra_metrics(Xt, y[:len(Xt)]) == est.extra_metrics(Xt, y[:len(Xt)])
    assert wrapped.sweep_embeddings(Xt) is None and wrapped.search_vectors() is None
    assert not hasattr(HubnessReduced, "__getattr__")


def test_a_local_metric_has_no_vectors_for_dissim():
    X, y, Xt = data(9, n=30, d=3)
    est = REGISTRY["rmle"](m_grid=[4], k_select=(1,)).fit(X, y)
    with pytest.raises(ValueError, match=r"needs vectors .* 'rmle' \(local\) has none"):
        reduced(est, {"kind": "dissim_local", "k": 3}, X, y).kneighbors(Xt, 3)
