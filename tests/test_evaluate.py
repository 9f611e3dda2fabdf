"""k-NN accuracy against scikit-learn, voting ties, and the hubness measures against hand
computations and scipy."""

import time

import numpy as np
import pytest
import scipy.stats
from sklearn.neighbors import KNeighborsClassifier

from dmlbench import data
from dmlbench.measure import hubness
from dmlbench.measure.evaluation import accuracy_per_k, evaluate, knn_vote
from dmlbench.methods import make
from dmlbench.run import preprocessing, protocols


@pytest.mark.parametrize("name", ["wine", "iris", "wdbc"])
def test_euclidean_accuracy_equals_scikit_learn(name):
    ds = data.build(name)
    for split in protocols.make_splits(ds.y, {"kind": "holdout", "repeats": 3}, seed=5):
        Xtr, Xte, _ = preprocessing.fit_transform(["zscore"], ds.X[split.train], ds.X[split.test])
        ytr, yte = ds.y[split.train], ds.y[split.test]
        est = make("euclidean").fit(Xtr, ytr)
        metrics = evaluate(est, Xte, ytr, yte, [1, 3, 5], 10, timings={})
        for k in (1, 3, 5):
            ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(Xtr, ytr)
            assert metrics[f"accuracy_k{k}"] == pytest.approx(ref.score(Xte, yte), abs=1e-12)
            assert metrics[f"error_k{k}"] == pytest.approx(1 - metrics[f"accuracy_k{k}"])


def test_vote_ties_go_to_the_smallest_label():
    labels = np.array([[2, 1, 1, 2], [0, 2, 2, 0], [3, 3, 1, 2]])
    assert knn_vote(labels, 4).tolist() == [1, 0, 3]


def test_accuracy_per_k_by_hand():
    ind = np.array([[0, 1, 2], [2, 1, 0]])
    y_train = np.array([0, 1, 1])
    acc = accuracy_per_k(ind, y_train, np.array([0, 0]), [1, 3])
    assert acc == {1: 0.5, 3: 0.0}


def test_k_larger_than_the_training_part_is_an_error():
    est = make("euclidean").fit(np.eye(4), np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="exceeds the 4 training points"):
        evaluate(est, np.eye(4), np.array([0, 1, 0, 1]), np.array([0, 1, 0, 1]), [1], 5, {})


# 4 queries, 3 neighbours each, 5 labelled objects
IND = np.array([[0, 1, 2], [0, 1, 3], [0, 2, 1], [0, 1, 2]])


def test_k_occurrence_by_hand():
    assert hubness.k_occurrence(IND, 5).tolist() == [4, 4, 3, 1, 0]
    assert hubness.k_occurrence(IND, 5, k=1).tolist() == [4, 0, 0, 0, 0]


def test_skewness_by_hand_and_against_scipy():
    nk = np.array([4, 4, 3, 1, 0])  # mean 2.4, deviations 1.6 1.6 0.6 -1.4 -2.4
    m2 = (1.6**2 * 2 + 0.6**2 + 1.4**2 + 2.4**2) / 5
    m3 = (1.6**3 * 2 + 0.6**3 - 1.4**3 - 2.4**3) / 5
    assert hubness.skewness(nk) == pytest.approx(m3 / m2**1.5)
    rng = np.random.default_rng(0)
    occ = hubness.k_occurrence(rng.integers(0, 50, size=(200, 10)), 50)
    assert hubness.skewness(occ) == pytest.approx(scipy.stats.skew(occ, bias=True))
    assert hubness.skewness(np.full(7, 3)) == 0.0


def test_other_hubness_measures_by_hand():
    nk = np.array([4, 4, 3, 1, 0])  # sum 12, mean 2.4
    assert hubness.robin_hood(nk) == pytest.approx(0.5 * (1.6 + 1.6 + 0.6 + 1.4 + 2.4) / 12)
    assert hubness.antihub_share(nk) == pytest.approx(0.2)
    # hubs: N_k >= 2k = 4 with k = 2 -> the two 4s; 8 of 2 * 6 slots
    assert hubness.hub_occurrence(nk, k=2, n_queries=6) == pytest.approx(8 / 12)
    pairs = sum(abs(a - b) for a in nk for b in nk)
    assert hubness.gini(nk) == pytest.approx(pairs / (2 * 5 * 12))
    assert hubness.groupie_ratio(nk, k=3) == pytest.approx(4 / 15)


def test_hubness_summary_keys():
    s = hubness.summary(IND, 5, 3)
    assert s["max_n3"] == 4 and s["antihub_share_n3"] == pytest.approx(0.2)
    assert set(s) == {"skewness_n3", "robin_hood_n3", "antihub_share_n3", "hub_occurrence_n3",
                      "gini_n3", "max_n3"}


def test_dimension_sweep_equals_knn_on_the_leading_components():
    ds = data.build("wine")
    split = protocols.make_splits(ds.y, {"kind": "holdout", "repeats": 1}, seed=2)[0]
    Xtr, Xte, _ = preprocessing.fit_transform(["zscore"], ds.X[split.train], ds.X[split.test])
    ytr, yte = ds.y[split.train], ds.y[split.test]
    est = make("pca").fit(Xtr, ytr)
    metrics = evaluate(est, Xte, ytr, yte, [1, 3], 5, timings={}, sweep=True)
    Ztr, Zte = est.transform(Xtr), est.transform(Xte)
    for k in (1, 3):
        curve = metrics[f"sweep_accuracy_k{k}"]
        assert len(curve) == 13 == metrics["sweep_dims"]
        for r in range(13):
            ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(Ztr[:, :r + 1], ytr)
            assert curve[r] == pytest.approx(ref.score(Zte[:, :r + 1], yte), abs=1e-12)
        assert curve[-1] == pytest.approx(metrics[f"accuracy_k{k}"], abs=1e-12)
        assert metrics[f"sweep_best_accuracy_k{k}"] == max(curve)
        assert metrics[f"sweep_best_dim_k{k}"] == curve.index(max(curve)) + 1
    # chunking does not change the curve
    from dmlbench.measure.evaluation import dimension_sweep

    small = dimension_sweep(Zte, Ztr, ytr, yte, [1], max_bytes=8 * len(ytr) * 3)
    assert small[1] == metrics["sweep_accuracy_k1"]


def _brute_loo_neighbours(Q, X, k):
    """Each row of Q (= the training points, mapped or not) against the rows of X, itself out."""
    D = np.linalg.norm(Q[:, None] - X[None], axis=2)
    np.fill_diagonal(D, np.inf)
    return np.argsort(D, axis=1, kind="stable")[:, :k]


def _split(name="wine", seed=5):
    ds = data.build(name)
    split = protocols.make_splits(ds.y, {"kind": "holdout", "repeats": 1}, seed=seed)[0]
    Xtr, Xte, _ = preprocessing.fit_transform(["zscore"], ds.X[split.train], ds.X[split.test])
    return Xtr, Xte, ds.y[split.train], ds.y[split.test]


def test_options_off_leave_the_evaluation_as_before():
    Xtr, Xte, ytr, yte = _split()
    est = make("euclidean").fit(Xtr, ytr)
    metrics = evaluate(est, Xte, ytr, yte, [1, 3], 10, timings={})
    assert not any(k.startswith(("train_", "loo_", "selected_k", "accuracy_kcv")) for k in metrics)


def test_k_chosen_by_leave_one_out_on_the_training_part():
    Xtr, Xte, ytr, yte = _split()
    ks = [1, 3, 5, 7, 9]
    est = make("euclidean").fit(Xtr, ytr)
    metrics = evaluate(est, Xte, ytr, yte, ks, 10, timings={}, k_selection="loo")
    loo = _brute_loo_neighbours(Xtr, Xtr, 9)
    loo_acc = {k: np.mean(knn_vote(ytr[loo[:, :k]], 3) == ytr) for k in ks}
    best = min(k for k in ks if loo_acc[k] == max(loo_acc.values()))
    assert metrics["selected_k"] == best and metrics["selected_k_by_method"] == 0
    assert metrics["accuracy_kcv"] == metrics[f"accuracy_k{best}"]
    for k in ks:
        assert metrics[f"loo_accuracy_k{k}"] == pytest.approx(loo_acc[k])


def test_a_k_chosen_by_the_method_itself_is_used():
    Xtr, Xte, ytr, yte = _split()
    est = make("move_labeled", {"lam_grid": [1.0, 10.0], "k_grid": [11], "random_state": 0})
    est.fit(Xtr, ytr)
    assert est.selected_k_ == 11
    metrics = evaluate(est, Xte, ytr, yte, [1, 3], 10, timings={}, k_selection="loo")
    _, ind = est.kneighbors(Xte, 11)
    assert metrics["selected_k"] == 11 and metrics["selected_k_by_method"] == 1
    assert metrics["accuracy_kcv"] == pytest.approx(np.mean(knn_vote(ytr[ind], 3) == yte))


@pytest.mark.parametrize("name", ["euclidean", "move_labeled"])
def test_hubness_of_test_queries_and_within_the_training_set_by_brute_force(name):
    Xtr, Xte, ytr, yte = _split("ionosphere", seed=1)
    est = make(name).fit(Xtr, ytr)
    metrics = evaluate(est, Xte, ytr, yte, [1], 10, timings={}, train_hubness=True)
    labelled = Xtr if name == "euclidean" else Xtr @ est.W_.T  # Move-labeled: ||x - W z||
    D = np.linalg.norm(Xte[:, None] - labelled[None], axis=2)
    nk = np.bincount(np.argsort(D, axis=1, kind="stable")[:, :10].ravel(), minlength=len(Xtr))
    assert metrics["skewness_n10"] == pytest.approx(scipy.stats.skew(nk, bias=True))
    assert metrics["nk_hist_n10"] == np.bincount(nk).tolist()
    nk_train = np.bincount(_brute_loo_neighbours(Xtr, labelled, 10).ravel(), minlength=len(Xtr))
    assert metrics["train_skewness_n10"] == pytest.approx(scipy.stats.skew(nk_train, bias=True))
    assert metrics["train_antihub_share_n10"] == pytest.approx(np.mean(nk_train == 0))
    hist = metrics["train_nk_hist_n10"]
    assert sum(hist) == len(Xtr) and sum(m * h for m, h in enumerate(hist)) == 10 * len(Xtr)


def test_occurrence_histogram_by_hand():
    assert hubness.occurrence_histogram(np.array([4, 4, 3, 1, 0])).tolist() == [1, 1, 0, 1, 2]


def test_unknown_k_selection_is_an_error():
    est = make("euclidean").fit(np.eye(4), np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="k_selection must be one of"):
        evaluate(est, np.eye(4), np.array([0, 1, 0, 1]), np.array([0, 1, 0, 1]), [1], 2, {},
                 k_selection="cv")


@pytest.mark.parametrize("kernel_mark", [True, False], ids=["VmHWM", "sampled"])
def test_peak_memory_sees_a_short_lived_allocation(kernel_mark, monkeypatch):
    from dmlbench.measure import evaluation

    if not kernel_mark:
        monkeypatch.setattr(evaluation, "_reset_peak_rss", lambda: False)
    elif not evaluation._reset_peak_rss():
        pytest.skip("no /proc/self/clear_refs on this system")
    into = {}
    with evaluation.PeakMemory(into, interval=0.001):
        block = np.ones(200 * 2**20 // 8)  # 200 MiB, touched, then freed at once
        time.sleep(0.05 if not kernel_mark else 0)
        del block
    assert 190 <= into["peak_rss_delta_mb"] <= 260
    assert into["peak_rss_mb"] >= into["peak_rss_delta_mb"]
