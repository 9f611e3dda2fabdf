"""k-NN accuracy against scikit-learn, voting ties, and the hubness measures against hand
computations and scipy."""

import collections
import math
import time

import numpy as np
import pytest
import scipy.stats
from sklearn.neighbors import KNeighborsClassifier

from dmlbench import data
from dmlbench.measure import hubness
from dmlbench.measure.evaluation import evaluate
from dmlbench.measure.knn_rule import accuracy_per_k, knn_vote
from dmlbench.methods import make
from dmlbench.run import preprocessing, protocols


def written_out(Q, X, y_train, k, dims=None):
    """Per r in `dims` (default: all coordinates), the k-NN lists and predictions of every query
    using the first r coordinates, in plain Python: squared differences summed in coordinate
    order, then (square root, index); the vote's ties go to the smallest label."""
    dims = dims or [Q.shape[1]]
    lists = {r: [] for r in dims}
    for q in Q.tolist():
        partial = {r: [] for r in dims}
        for j, x in enumerate(X.tolist()):
            total = 0.0
            for r, (u, v) in enumerate(zip(q, x), start=1):
                total += (u - v) * (u - v)
                if r in partial:
                    partial[r].append((math.sqrt(total), j))
        for r in dims:
            lists[r].append([j for _, j in sorted(partial[r])[:k]])
    preds = {}
    for r in dims:
        votes = [collections.Counter(y_train[row].tolist()) for row in lists[r]]
        preds[r] = np.array([min(v, key=lambda c: (-v[c], c)) for v in votes])
    return {r: np.array(v) for r, v in lists.items()}, preds


@pytest.mark.parametrize("name", ["wine", "iris", "wdbc"])
def test_euclidean_accuracy_equals_the_written_out_rule_and_scikit_learn(name):
    """Against the rule written out, always; against scikit-learn for the queries whose k-th and
    (k+1)-th nearest distances differ by more than 1e-9 (scikit-learn orders near-ties by its own
    rounding, which another machine may change)."""
    ds = data.build(name)
    for split in protocols.make_splits(ds.y, {"kind": "holdout", "repeats": 3}, seed=5):
        Xtr, Xte, _ = preprocessing.fit_transform(["zscore"], ds.X[split.train], ds.X[split.test])
        ytr, yte = ds.y[split.train], ds.y[split.test]
        est = make("euclidean").fit(Xtr, ytr)
        metrics = evaluate(est, Xte, ytr, yte, [1, 3, 5], 10, timings={})
        D = np.sort(np.linalg.norm(Xte[:, None] - Xtr[None], axis=2), axis=1)
        for k in (1, 3, 5):
            _, ours = written_out(Xte, Xtr, ytr, k)
            assert metrics[f"accuracy_k{k}"] == pytest.approx(np.mean(ours[Xte.shape[1]] == yte),
                                                              abs=1e-12)
            same = evaluate(est, Xte, ytr, ours[Xte.shape[1]], [k], 1, timings={})
            assert same[f"accuracy_k{k}"] == 1.0  # every prediction, not only their count
            assert metrics[f"error_k{k}"] == pytest.approx(1 - metrics[f"accuracy_k{k}"])
            clear = D[:, k] - D[:, k - 1] > 1e-9
            assert clear.mean() > 0.8
            ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(Xtr, ytr)
            np.testing.assert_array_equal(ours[Xte.shape[1]][clear], ref.predict(Xte)[clear])


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


def sweep_cases():
    """(name, Z_train, Z_test, y_train, y_test): wine in PCA coordinates, integer data with exact
    ties, and one-decimal data offset by 100 (near-ties decided by the data's binary rounding)."""
    ds = data.build("wine")
    split = protocols.make_splits(ds.y, {"kind": "holdout", "repeats": 1}, seed=2)[0]
    Xtr, Xte, _ = preprocessing.fit_transform(["zscore"], ds.X[split.train], ds.X[split.test])
    pca = make("pca").fit(Xtr, ds.y[split.train])
    yield "wine-pca", pca, Xtr, Xte, ds.y[split.train], ds.y[split.test]
    rng = np.random.default_rng(6)
    X, y = rng.integers(-2, 3, size=(90, 4)).astype(float), rng.integers(0, 3, size=90)
    yield "integers", make("euclidean").fit(X[:60], y[:60]), X[:60], X[60:], y[:60], y[60:]
    X = 100.0 + np.round(rng.uniform(0, 1, size=(90, 3)), 1)
    yield "decimals", make("euclidean").fit(X[:60], y[:60]), X[:60], X[60:], y[:60], y[60:]


@pytest.mark.parametrize("case", list(sweep_cases()), ids=lambda case: case[0])
def test_dimension_sweep_follows_the_tie_rule_on_every_leading_subspace(case):
    """Chang 2012's sweep: k-NN on the first r mapped coordinates for every r. Each r's
    predictions (and 1-NN lists) equal the written-out rule's, for any chunk size, and at full
    dimension the search's."""
    from dmlbench.measure.evaluation import dimension_sweep

    _, est, Xtr, Xte, ytr, yte = case
    Ztr, Zte = est.transform(Xtr), est.transform(Xte)
    dims = list(range(1, Ztr.shape[1] + 1))
    metrics = evaluate(est, Xte, ytr, yte, [1, 3, 4], 5, timings={}, sweep=True)
    assert metrics["sweep_dims"] == len(dims)
    for k in (1, 3, 4):
        lists, preds = written_out(Zte, Ztr, ytr, k, dims)
        curve = metrics[f"sweep_accuracy_k{k}"]
        assert curve == pytest.approx([np.mean(preds[r] == yte) for r in dims], abs=1e-12)
        assert curve[-1] == pytest.approx(metrics[f"accuracy_k{k}"], abs=1e-12)
        # the search's own predictions, query by query (y_test := the rule's predictions)
        assert evaluate(est, Xte, ytr, preds[dims[-1]], [k], 1, {})[f"accuracy_k{k}"] == 1.0
        assert metrics[f"sweep_best_accuracy_k{k}"] == max(curve)
        assert metrics[f"sweep_best_dim_k{k}"] == curve.index(max(curve)) + 1
        for max_bytes in (8 * len(ytr) * 4, 8 * len(ytr) * 40, 2**26):
            for r in dims:  # every prediction, not only their count; the 1-NN lists themselves
                got = dimension_sweep(Zte[:, :r], Ztr[:, :r], ytr, preds[r], [k], max_bytes)
                assert got[k][-1] == 1.0
                if k == 1:
                    nearest = dimension_sweep(Zte[:, :r], Ztr[:, :r], np.arange(len(ytr)),
                                              lists[r][:, 0], [1], max_bytes)
                    assert nearest[1][-1] == 1.0


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
