"""Split protocols: stratification, disjointness, coverage, determinism, errors."""

import numpy as np
import pytest

from dmlbench.run import protocols

Y = np.repeat([0, 1, 2], [50, 30, 20])


def test_holdout_is_stratified_disjoint_and_deterministic():
    p = {"kind": "holdout", "repeats": 5, "train_fraction": 0.7}
    splits = protocols.make_splits(Y, p, seed=3)
    assert len(splits) == 5 == protocols.n_splits(p)
    for s in splits:
        assert np.intersect1d(s.train, s.test).size == 0
        assert s.train.size + s.test.size == Y.size == np.union1d(s.train, s.test).size
        assert s.train.size == 70
        for c, count in zip(*np.unique(Y, return_counts=True)):
            assert abs(np.sum(Y[s.train] == c) - 0.7 * count) <= 1
    again = protocols.make_splits(Y, p, seed=3)
    assert all(np.array_equal(a.train, b.train) for a, b in zip(splits, again))
    other = protocols.make_splits(Y, p, seed=4)
    assert not all(np.array_equal(a.train, b.train) for a, b in zip(splits, other))


def test_holdout_with_absolute_sizes():
    splits = protocols.make_splits(Y, {"kind": "holdout", "train_size": 60, "test_size": 25}, 0)
    assert (splits[0].train.size, splits[0].test.size) == (60, 25)


def test_kfold_partitions_every_point_once_per_repeat():
    p = {"kind": "kfold", "folds": 10, "repeats": 2}
    splits = protocols.make_splits(Y, p, seed=0)
    assert len(splits) == 20
    for r in range(2):
        tests = np.concatenate([s.test for s in splits[10 * r:10 * (r + 1)]])
        assert np.array_equal(np.sort(tests), np.arange(Y.size))
    for s in splits:
        assert np.bincount(Y[s.test]).tolist() == [5, 3, 2]


def test_given_split_is_used_as_is():
    given = {"train": np.arange(0, 100, 2), "test": np.arange(1, 100, 2)}
    (s,) = protocols.make_splits(Y, {"kind": "given"}, 0, given=given)
    assert np.array_equal(s.train, given["train"]) and np.array_equal(s.test, given["test"])


def test_given_without_a_given_split_is_an_error():
    with pytest.raises(ValueError, match="'toy' has none"):
        protocols.make_splits(Y, {"kind": "given"}, 0, dataset="toy")


def test_singleton_class_is_an_error_naming_it_and_the_remedy():
    y = np.array([0] * 10 + [1] * 10 + [2])
    with pytest.raises(ValueError, match=r"'toy': classes \[2\].*drop_classes_below"):
        protocols.make_splits(y, {"kind": "holdout", "repeats": 1}, 0, dataset="toy")


def test_drop_classes_below_leaves_small_classes_out():
    y = np.array([0] * 10 + [1] * 10 + [2])
    splits = protocols.make_splits(y, {"kind": "holdout", "repeats": 2}, 0,
                                   drop_classes_below=2)
    for s in splits:
        assert 20 not in s.train and 20 not in s.test
        assert s.train.size + s.test.size == 20


def test_impossible_holdout_sizes_are_an_error():
    with pytest.raises(ValueError, match="impossible"):
        protocols.make_splits(Y, {"kind": "holdout", "train_size": 99}, 0)


def test_saved_splits_roundtrip(tmp_path):
    p = {"kind": "kfold", "folds": 5}
    splits = protocols.make_splits(Y, p, 1)
    path = tmp_path / "s.npz"
    protocols.save_splits(path, splits, p, 1, "ab" * 32)
    s, info = protocols.load_split(path, 3)
    assert np.array_equal(s.test, splits[3].test)
    assert info["protocol"] == p and info["n_splits"] == 5
    with pytest.raises(IndexError, match="split 7 does not exist"):
        protocols.load_split(path, 7)


def test_a_rewritten_split_file_is_read_again(tmp_path):
    """The open split file is kept between splits, keyed by the file's identity: a new file in
    its place (the prepare step writes by rename) is read, not the old one."""
    path = tmp_path / "s.npz"
    first = protocols.make_splits(Y, {"kind": "kfold", "folds": 5}, 1)
    protocols.save_splits(path, first, {"kind": "kfold", "folds": 5}, 1, "ab" * 32)
    assert np.array_equal(protocols.load_split(path, 0)[0].test, first[0].test)
    second = protocols.make_splits(Y, {"kind": "kfold", "folds": 4}, 2)
    protocols.save_splits(path, second, {"kind": "kfold", "folds": 4}, 2, "ab" * 32)
    split, info = protocols.load_split(path, 0)
    assert np.array_equal(split.test, second[0].test) and info["n_splits"] == 4
    info["n_splits"] = 0  # a caller's copy
    assert protocols.load_split(path, 0)[1]["n_splits"] == 4


def test_protocol_ids_are_readable_and_distinct():
    a = protocols.protocol_id({"kind": "holdout", "repeats": 4, "train_fraction": 0.7}, 0)
    b = protocols.protocol_id({"kind": "holdout", "repeats": 4, "train_fraction": 0.7}, 1)
    assert a == "holdout-r4-p0.7-seed0" and a != b


def test_leave_one_out_tests_each_sample_once_on_all_others():
    p = {"kind": "loo"}
    splits = protocols.make_splits(Y, p, seed=0)
    assert len(splits) == Y.size == protocols.n_splits(p, n_samples=Y.size)
    for i, s in enumerate(splits):
        assert s.test.tolist() == [i]
        assert np.array_equal(s.train, np.delete(np.arange(Y.size), i))
    with pytest.raises(ValueError, match="n_samples is needed"):
        protocols.n_splits(p)
    with pytest.raises(ValueError, match="classes \\[2\\]"):
        protocols.make_splits(np.array([0, 0, 1, 1, 2]), p, 0)


@pytest.mark.parametrize("threshold, kept", [(60, 1), (72, 0)])
def test_dropping_classes_must_leave_two_classes(threshold, kept):
    """wine has 59, 71 and 48 samples per class: 60 left a one-class problem (100 % accuracy),
    72 none at all (a numpy error)."""
    y = np.repeat([0, 1, 2], [59, 71, 48])
    p = {"kind": "holdout", "repeats": 2, "train_fraction": 0.7}
    with pytest.raises(ValueError, match=f"data set 'wine': drop_classes_below = {threshold} "
                                         f"keeps {kept} of its 3 classes \\(samples per class: "
                                         "0: 59, 1: 71, 2: 48\\).*drop_classes_below <= 59 "
                                         "keeps two"):
        protocols.make_splits(y, p, 0, dataset="wine", drop_classes_below=threshold)
    splits = protocols.make_splits(y, p, 0, dataset="wine", drop_classes_below=59)
    assert set(np.unique(y[splits[0].train])) == {0, 1}


def test_a_single_class_cannot_be_split():
    with pytest.raises(ValueError, match="data set 'one' has a single class"):
        protocols.make_splits(np.zeros(10), {"kind": "holdout", "repeats": 1}, 0, dataset="one")


@pytest.mark.parametrize("protocol", [
    {"kind": "holdout", "repeats": 3, "train_fraction": 0.7},
    {"kind": "holdout", "repeats": 2, "train_fraction": 0.33},
    {"kind": "holdout", "repeats": 2, "train_size": 41, "test_size": 30},
    {"kind": "kfold", "folds": 10, "repeats": 2},
    {"kind": "kfold", "folds": 7},
    {"kind": "kfold", "folds": 3},
    {"kind": "loo"},
])
@pytest.mark.parametrize("counts", [[50, 30, 20], [13, 2, 40, 7], [49, 48]])
def test_smallest_training_part_is_that_of_the_splits(protocol, counts):
    """What config checks use before any job equals the fewest training points of the splits
    made (the reference), for class counts whose folds do not divide evenly."""
    y = np.random.default_rng(len(counts)).permutation(np.repeat(np.arange(len(counts)), counts))
    try:
        splits = protocols.make_splits(y, protocol, seed=3)
    except ValueError as err:  # 41 + 30 of 62 points: the same error
        with pytest.raises(ValueError, match="impossible") as ours:
            protocols.smallest_training_part(protocol, y.size, len(counts))
        assert str(ours.value) == str(err)
        return
    assert protocols.smallest_training_part(protocol, y.size, len(counts)) == min(
        s.train.size for s in splits)


def test_smallest_training_part_of_a_given_split_and_impossible_sizes():
    assert protocols.smallest_training_part({"kind": "given"}, 556, 2, given_train=124) == 124
    with pytest.raises(ValueError, match="'toy' has none"):
        protocols.smallest_training_part({"kind": "given"}, 100, 3, dataset="toy")
    with pytest.raises(ValueError, match="impossible"):
        protocols.smallest_training_part({"kind": "holdout", "train_size": 99}, 100, 3)
    with pytest.raises(ValueError, match=r"folds must be in \[2, n = 100\]"):
        protocols.smallest_training_part({"kind": "kfold", "folds": 101}, 100, 3)


def test_kept_counts_are_those_make_splits_keeps():
    y = np.repeat(["a", "b", "c", "d"], [3, 9, 1, 20])
    kept = protocols.kept_counts({"a": 3, "b": 9, "c": 1, "d": 20}, 3, "toy")
    splits = protocols.make_splits(y, {"kind": "holdout", "repeats": 1}, 0, dataset="toy",
                                   drop_classes_below=3)
    used = np.union1d(splits[0].train, splits[0].test)
    labels, sizes = np.unique(y[used], return_counts=True)
    assert kept == dict(zip(labels.tolist(), sizes.tolist()))
