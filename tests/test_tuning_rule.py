"""The tuning rule of issue 46 (docs/tuning.md): spaces resolved on the inner training parts
(values relative to their size, values and points a method cannot take dropped before drawing),
candidates drawn per (data set, split), any candidate's failure recorded (issue 45, point 6),
the candidate time limit, and the declared order reaching the job through the workflow."""

import time

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import StratifiedShuffleSplit

from dmlbench import cli, data, publish, records
from dmlbench.methods import REGISTRY, make, search_spaces, space_resolution
from dmlbench.run import tuning
from dmlbench.run.time_limit import TimeLimitExceeded, limit

from conftest import copy_project, snakemake
from test_tuning import fussy_build, iris, run_tune, run_toy_jobs, toy  # noqa: F401 (fixture)


def inner_parts(X, y, seed=0, split=0):
    fold = tuning.make_inner_folds(y, 3, seed, split)
    return tuning.inner_parts(X, y, fold)


def resolved(name, parts, params=None, budget=100):
    """(values per parameter, dropped, feasible points) of method `name`'s space on `parts`."""
    settings = {"space": search_spaces.as_pairs(search_spaces.SPACES[name]), "budget": budget,
                "seed": 0}
    points, _, fields = tuning.candidates(settings, REGISTRY[name], params or {}, parts, "x", 0)
    return dict(fields["resolved"]), fields["dropped"], points


def refuses(name, params, parts) -> bool:
    """Whether method `name` with `params` raises when fitted on some inner training part."""
    for X, y in parts:
        try:
            make(name, params).fit(X, y)
        except ValueError:
            return True
    return False


# --- spaces resolved on the data


def test_expressions_are_integer_arithmetic_over_the_training_facts():
    facts = {"n": 70, "d": 4, "classes": 3, "smallest_class": 23, "largest_class": 24}
    assert search_spaces.evaluate("3 * d", facts) == 12
    assert search_spaces.evaluate("min(3 * d, n - 1) // 5", facts) == 2
    assert search_spaces.evaluate("n - largest_class + -1", facts) == 45
    assert search_spaces.evaluate(7, facts) == 7
    for bad in ("d ** 2", "d / 2", "__import__('os')", "e", "3 *", 2.5):
        with pytest.raises(ValueError):
            search_spaces.evaluate(bad, facts)


@pytest.fixture(scope="module")
def digits_parts(tmp_path_factory):
    """The inner training parts of 300 training points of digits (d = 61 > 40), MinMax
    scaled on the training part."""
    ds = data.ensure("digits", tmp_path_factory.mktemp("cache"))
    train, _ = next(StratifiedShuffleSplit(1, train_size=300, random_state=0).split(ds.X, ds.y))
    X, y = ds.X[train], ds.y[train]
    span = X.max(axis=0) - X.min(axis=0)
    X = (X - X.min(axis=0)) / np.where(span > 0, span, 1)
    return inner_parts(X, y)


def test_a_space_on_a_set_with_more_than_40_features_takes_the_papers_ranges(digits_parts):
    """digits, d = 61: m over d + 1 .. 3d in 6 evenly spaced values (Abou-Moustafa 2017 sect.
    5.2), all below the inner parts' n; every component count below d; K and the target
    neighbours within the smallest class; LDA's components within classes - 1."""
    d = digits_parts[0][0].shape[1]
    n = min(y.size for _, y in digits_parts)
    smallest = min(np.bincount(y.astype(int)).min() for _, y in digits_parts)
    assert d == 61 and n == 200
    values, _, _ = resolved("rmvem", digits_parts)
    step = (3 * d - (d + 1)) / 5  # by hand: 62, 86.2, 110.4, 134.6, 158.8, 183
    assert values["m"] == [62, 86, 110, 135, 159, 183] == [
        int(np.floor(d + 1 + i * step + 0.5)) for i in range(6)]
    assert values["eps"] == [1e-4, 1e-3, 1e-2]
    assert dict(resolved("minivenn", digits_parts)[0])["m"] == [62, 102, 143, 183]
    assert resolved("pca", digits_parts)[0]["n_components"] == [None, 2, 5, 10]
    assert resolved("lda", digits_parts)[0]["n_components"] == [None, 1, 2]
    assert resolved("klhp", digits_parts)[0]["K"] == [
        K for K in (3, 1, 2, 5, 7, 10, 15, 20) if K <= smallest - 1]
    assert resolved("lmnn", digits_parts)[0]["n_neighbors"] == [3, 1, 5]


def test_a_start_or_setting_is_dropped_exactly_when_the_method_refuses_it(digits_parts):
    """NCA's rca and lda starts and LDA without shrinkage need a regular within-class scatter:
    dropped on the inner parts of digits (pixels constant within every class) exactly when the
    method itself refuses them there; pca and identity always stay."""
    values, dropped, _ = resolved("nca", digits_parts, {"max_iter": 1})
    for init in ("rca", "lda"):
        assert (init not in values["init"]) == refuses(
            "nca", {"init": init, "max_iter": 1, "optimizer": "lbfgs"}, digits_parts)
    assert {"pca", "identity"} <= set(values["init"])
    values, _, points = resolved("lda", digits_parts)
    assert (None not in values["shrinkage"]) == refuses("lda", {"shrinkage": None}, digits_parts)
    assert all(point["shrinkage"] in values["shrinkage"] for point in points)


def test_the_starts_stay_when_the_within_class_scatter_is_regular():
    X, y = iris()
    values, dropped, points = resolved("nca", inner_parts(X, y))
    assert values["init"] == ["rca", "pca", "lda", "identity"]
    assert values["n_components"] == [None, 2]  # 5 is not below d = 4
    assert {"point": {"n_components": 2, "init": "identity"},
            "reason": "init = identity needs all_components: n_components = 2 is not all"} in dropped
    assert points[0] == {"n_components": None, "init": "rca"}  # the declared default first
    assert not refuses("nca", {"init": "rca", "max_iter": 1}, inner_parts(X, y))


def small_class_part(members: int):
    """Iris's first two classes and `members` points of the third: a training part whose
    smallest class has `members` points."""
    X, y = iris()
    keep = np.r_[np.flatnonzero(y < 2), np.flatnonzero(y == 2)[:members]]
    return X[keep], y[keep]


def test_a_space_on_a_training_part_with_a_2_member_class_in_each_inner_part():
    """3 points of a class in the training part, 2 in each inner training part: K and the
    target neighbours at most 1 (2 and more are dropped: KLHP refuses them), I-MFA's hits all
    above it take the cap itself; the points left fit."""
    parts = inner_parts(*small_class_part(3))
    assert [int(np.bincount(y).min()) for _, y in parts] == [2, 2, 2]
    values, dropped, _ = resolved("klhp", parts)
    assert values["K"] == [1]
    assert {d["value"] for d in dropped if d["parameter"] == "K"} == {2, 3, 5, 7, 10, 15, 20}
    assert refuses("klhp", {"K": 2, "lam": 0.1}, parts)
    assert not refuses("klhp", {"K": 1, "lam": 0.1}, parts)
    assert resolved("lmnn", parts)[0]["n_neighbors"] == [1]
    values, _, points = resolved("i_mfa", parts)
    assert values["k_h"] == [1] and values["k_m"] == [5, 10, 20]
    assert not refuses("i_mfa", points[0], parts)


def test_a_training_part_with_a_2_member_class_leaves_klhp_no_point(tmp_path):
    """2 points of a class in the training part: an inner part keeps only 1, where no K fits;
    the job fails naming the reason, while a method that needs no neighbours of a class runs."""
    X, y = small_class_part(2)
    with pytest.raises(ValueError, match=r"no point of the search space fits .*smallest class "
                                         r"1\): K = 3 exceeds smallest_class - 1 = 0"):
        run_tune(tmp_path, "klhp", search_spaces.SPACES["klhp"], X, y, 0, [1])
    _, tried, _ = run_tune(tmp_path, "pca", search_spaces.SPACES["pca"], X, y, 0, [1])
    assert tried == [{"n_components": None}, {"n_components": 2}]


def test_resolved_spaces_are_printed_for_a_data_set(tmp_path, capsys):
    assert cli.main(["methods", "--spaces", "--dataset", "iris", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # iris: d = 4, so m over 5 .. 12 in 6 values: 5, 6.4, 7.8, 9.2, 10.6, 12 rounded
    assert "  m: 5, 6, 8, 9, 11, 12" in out
    assert "dropped: n_components = 5 exceeds d - 1 = 3" in out
    assert "inner training parts have n = 70, d = 4, classes = 3" in out
    assert cli.main(["methods", "--dataset", "iris"]) == 2


# --- draws per data set and split


def test_each_split_draws_its_own_candidates_reproducibly(tmp_path):
    X, y = iris()
    space = search_spaces.SPACES["klhp"]
    draws = [run_tune(tmp_path / str(s), "klhp", space, X, y, s, [1], budget=4)[1]
             for s in range(3)]
    again = run_tune(tmp_path / "again", "klhp", space, X, y, 1, [1], budget=4)[1]
    assert again == draws[1]
    assert len({tuple(map(str, d)) for d in draws}) == 3
    assert all(d[0] == {"K": 3, "lam": 0.1} for d in draws)  # the declared default each time


# --- failures of candidates (issue 45, point 6) and the candidate time limit


RAISING = '''
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


class Raising(BaseEstimator, TransformerMixin):
    """Scales every feature by `scale` (the same k-NN lists whatever the scale); raises a
    RuntimeError at scale 3."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def fit(self, X, y=None):
        if self.scale == 3.0:
            raise RuntimeError("scale 3 is broken")
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def transform(self, X):
        return self.scale * np.asarray(X, dtype=float)
'''


def test_a_candidate_raising_any_exception_is_recorded_and_skipped(tmp_path, toy):
    """A plug-in raising RuntimeError for one value: that candidate fails with the exception's
    type in its reason, the others are scored and the job has its records (before: the job
    failed)."""
    plugin = tmp_path / "raising.py"
    plugin.write_text(RAISING)
    entry = {"class": f"{plugin}:Raising", "search_space": {"scale": [1.0, 3.0, 2.0]}}
    _, _, out = run_toy_jobs(tmp_path, {"raising": entry})
    for record in out["raising"]:
        tuned = record["tuning"]
        assert tuned["failed"] == {"1": "RuntimeError: scale 3 is broken"}
        assert tuned["inner_scores"]["1"][1] is None
        assert tuned["inner_scores"]["1"][0] == tuned["inner_scores"]["1"][2]
        assert tuned["chosen_index"] == {"1": 0, "3": 0}


@pytest.mark.parametrize("error", [MemoryError, KeyboardInterrupt, SystemExit])
def test_memory_errors_and_interrupts_are_not_a_candidates_failure(tmp_path, error):
    X, y = iris()
    with pytest.raises(error):
        run_tune(tmp_path, "pca", {"n_components": [1, 2]}, X, y, 0, [1],
                 build=fussy_build({2}, error))


def sleeping_build(slow, wrap=False):
    """PCA estimators whose fit sleeps a minute at n_components in `slow` (with `wrap`, the
    method turns what interrupts it into a ValueError, as a method wrapping its library's
    errors does)."""
    def build(params):
        est = make("pca", params)
        if params["n_components"] in slow:
            def fit(*args, **kwargs):
                try:
                    time.sleep(60)
                except Exception as err:
                    if wrap:
                        raise ValueError("the fit was interrupted") from err
                    raise
            est.fit = fit
        return est
    return build


@pytest.mark.parametrize("wrap", [False, True])
def test_a_candidate_over_the_time_limit_is_tried_and_failed_with_reason_time(tmp_path, wrap):
    X, y = iris()
    chosen, tried, entry = run_tune(tmp_path, "pca", {"n_components": [1, 2, 3]}, X, y, 0,
                                    [1], build=sleeping_build({2}, wrap), time_limit=2)
    assert entry["time_limit_s"] == 2 and len(tried) == 3
    assert entry["failed"] == {"1": "time: tuning candidate 1 exceeded its time limit of 2 s"}
    assert entry["inner_scores"]["1"][1] is None and None not in entry["inner_scores"]["1"][::2]
    assert len(entry["candidate_wall_s"]) == 3


def test_the_jobs_own_time_limit_is_not_a_candidates(tmp_path):
    X, y = iris()
    with pytest.raises(TimeLimitExceeded, match="job"):
        with limit(2, "job"):
            run_tune(tmp_path, "pca", {"n_components": [1, 2]}, X, y, 0, [1],
                     build=sleeping_build({2}, wrap=True), time_limit=30)


# --- the declared order, through the workflow


ORDER_CONFIG = """
benchmark: order
data: {cache: resources}
protocol: {kind: holdout, repeats: 2, train_fraction: 0.7}
k: [1, 3]
preprocess: [minmax]
tuning: {folds: 3, budget: 4, time_limit: 600}
datasets:
  iris:
methods:
  lda:
    search_space: {shrinkage: [null, auto], n_components: [1, null]}
  nca:
    params: {optimizer: lbfgs, max_iter: 5}
"""


@pytest.mark.slow
def test_the_declared_order_reaches_the_job_through_the_workflow(tmp_path):
    """A space declared out of alphabetical order (shrinkage before n_components; NCA's
    registered n_components before init) keeps its order through config, job spec, the
    workflow's JSON and the record: the candidates follow it, the declared default first. The
    published config.json keeps it too, so the published records are the jobs it gives them
    (`dmlbench report --records` accepts them; a key-sorted config.json made other job keys)."""
    work = copy_project(tmp_path)
    (work / "config" / "order.yaml").write_text(ORDER_CONFIG)
    result = snakemake(work, "reports/order/records/manifest.json", "--cores", "1",
                       "--configfile", "config/order.yaml")
    assert result.returncode == 0, result.stderr[-3000:]
    published = work / "reports/order/records"
    verified = publish.verified_files(published)
    assert list(verified[2]["methods"]["lda"]["search_space"]) == ["shrinkage", "n_components"]
    assert cli._check_published_records(str(published), verified) == []
    lda = records.read(work / "results/order/runs/iris/lda/part0.json")
    for record in lda:
        tuned = record["tuning"]
        assert [name for name, _ in tuned["space"]] == ["shrinkage", "n_components"]
        assert tuned["candidates"] == [{"shrinkage": s, "n_components": q}
                                       for s in (None, "auto") for q in (1, None)]
    for record in records.read(work / "results/order/runs/iris/nca/part0.json"):
        tuned = record["tuning"]
        assert [name for name, _ in tuned["space"]] == ["n_components", "init"]
        assert [name for name, _ in tuned["resolved"]] == ["n_components", "init"]
        points = [{"n_components": q, "init": i} for q in (None, 2)
                  for i in ("rca", "pca", "lda", "identity") if q is None or i != "identity"]
        assert tuned["grid_size"] == len(points) == 7
        assert tuned["candidates"][0] == points[0]
        indices = [points.index(c) for c in tuned["candidates"]]
        assert indices == sorted(indices) and len(indices) == 4
        assert tuned["draw_seed"] == tuning.draw_seed(0, "iris", record["split"]["index"])
