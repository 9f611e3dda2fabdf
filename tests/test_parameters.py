"""Declared parameter constraints (methods/parameters.py): every registered method declares one
for each parameter, each kind of wrong value is refused with a one-line message naming the
parameter, and the same declaration is checked at config time and at fit."""

from numbers import Integral, Real

import numpy as np
import pytest

from dmlbench.methods import REGISTRY, make
from dmlbench.methods.parameters import (
    Array,
    Boolean,
    Grid,
    Interval,
    Options,
    ParameterError,
    check_value,
)

# ---- the constraints themselves, against values written out by hand -----------------------

@pytest.mark.parametrize("constraint, good, bad", [
    (Interval(Integral, 1, None), [1, 2, 10**9, np.int64(3)], [0, -1, 1.0, 2.5, True, "1", None]),
    (Interval(Real, 0, None, closed="neither"), [1e-300, 0.5, 3, np.float64(2.0)],
     [0, 0.0, -1e-9, float("inf"), float("nan"), False, "1e-4", [1.0]]),
    (Interval(Real, 0, 1), [0, 0.0, 0.5, 1, 1.0], [-1e-12, 1.0000001, float("nan")]),
    (Interval(Real, 0, 0.5, closed="left"), [0.0, 0.49], [0.5, -0.1]),
    (Interval(Real, 0, 1, closed="right"), [1.0, 1e-9], [0.0]),
    (Options(("cg", "lbfgs")), ["cg", "lbfgs"], ["CG", "newton", None, 1]),
    (Options(("all",)), ["all"], ["some", 1]),
    (Boolean(), [True, False, np.bool_(True)], [0, 1, "true", "yes", None]),
    (Grid(Interval(Integral, 1, None)), [[1], (1, 3, 5), np.array([2, 4])],
     [[], (), [0], [1, "3"], 3, "13", np.array([[1, 2]]), [1.5]]),
    (Grid(Interval(Integral, 1, None), None), [[None, 2]], [[None, 0]]),
    (Array(), [[[1.0, 0.0]], np.eye(2)], [[1, 2], [[1, 2], [3]], [[1.0, float("nan")]],
                                           np.zeros((0, 2)), "identity"]),
])
def test_constraints_accept_and_refuse_what_they_say(constraint, good, bad):
    for value in good:
        assert constraint.accepts(value), value
    for value in bad:
        assert not constraint.accepts(value), value


@pytest.mark.parametrize("constraints, text", [
    ([Interval(Real, 0, None, closed="neither")], "a number > 0"),
    ([Interval(Integral, 2, None), None], "an integer >= 2 or None"),
    ([Interval(Real, 0, 0.5, closed="left")], "a number in [0, 0.5)"),
    ([Options(("auto",)), Interval(Real, 0, 1), None], "'auto', a number in [0, 1] or None"),
    ([Grid(Interval(Integral, 1, None)), None],
     "a non-empty list (each item an integer >= 1) or None"),
])
def test_messages_say_what_is_allowed_and_what_was_given(constraints, text):
    with pytest.raises(ParameterError) as err:
        check_value("p", {"wrong": 1}, constraints)
    assert str(err.value) == f"p must be {text}, got {{'wrong': 1}}"
    assert err.value.parameter == "p"


def test_a_number_yaml_read_as_text_is_explained_and_arrays_stay_on_one_line():
    with pytest.raises(ParameterError, match=r"got '1e-4' \(a string: YAML reads 1e-4 as text"):
        check_value("eps", "1e-4", [Interval(Real, 0, None, closed="neither")])
    with pytest.raises(ParameterError) as err:
        check_value("init", np.full((30, 30), np.nan), [Options(("rca",)), Array()])
    assert "\n" not in str(err.value) and "an array of shape (30, 30)" in str(err.value)


# ---- every registered method ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_parameter_of_every_method_has_a_constraint_its_default_meets(name):
    cls = REGISTRY[name]
    assert set(cls._parameter_constraints) == set(cls.parameter_names())
    cls.check_parameters({})  # the defaults


def _cases():
    return [(name, param) for name in sorted(REGISTRY)
            for param in REGISTRY[name].parameter_names()]


@pytest.mark.parametrize("name, param", _cases())
def test_every_parameter_refuses_a_value_of_no_allowed_type(name, param):
    """A mapping is no parameter's type: refused at config time and at fit, naming it."""
    with pytest.raises(ParameterError) as err:
        REGISTRY[name].check_parameters({param: {"a": 1}})
    assert err.value.parameter == param and str(err.value).startswith(f"{param} must be ")
    X = np.random.default_rng(0).normal(size=(12, 3))
    with pytest.raises(ParameterError, match=f"^{param} must be "):
        make(name, {param: {"a": 1}}).fit(X, np.repeat([0, 1, 2], 4))


@pytest.mark.parametrize("name, params, parameter, message", [
    # issue 13, section 4
    ("lmnn", {"n_neighbors": "three"}, "n_neighbors", "an integer >= 1, got 'three'"),
    ("rmvem", {"eps": 0}, "eps", "a number > 0, got 0"),
    ("rmvem", {"eps": -1}, "eps", "a number > 0, got -1"),
    ("move_labeled", {"lam": -1}, "lam", "a number >= 0, got -1"),
    # a wrong value of each kind: type, range, choice, boolean, grid, array, None
    ("rmvem", {"m": 2.5}, "m", "an integer >= 2 or None, got 2.5"),
    ("nca", {"validation_fraction": 0.5}, "validation_fraction", "a number in [0, 0.5)"),
    ("nca", {"optimizer": "newton"}, "optimizer", "one of 'cg', 'lbfgs', 'bold_driver'"),
    ("lda", {"shrinkage": "yes"}, "shrinkage", "'auto', a number in [0, 1] or None"),
    ("mmc", {"diagonal": "yes"}, "diagonal", "true or false, got 'yes'"),
    ("nca", {"anneal": 1}, "anneal", "true or false, got 1"),
    ("rmvem", {"m_grid": []}, "m_grid", "a non-empty list (each item an integer >= 2)"),
    ("minivenn", {"tau_grid": [0.1, 1.5]}, "tau_grid", "each item a number in (0, 1)"),
    ("klhp", {"lam_grid": None}, "lam_grid",
     "a non-empty list (each item a number >= 0), got None"),
    ("boostmdm", {"lam": None}, "lam", "a number > 0, got None"),
    ("nca", {"init": [[1, 2], [3]]}, "init", "or a 2-D array of numbers"),
    ("dml_eig", {"dissimilar": "some"}, "dissimilar", "'all' or an integer >= 1"),
    ("itml", {"random_state": -1}, "random_state", "an integer >= 0 or None, got -1"),
    # relations between parameters
    ("move_labeled", {"k_grid": [1, 3]}, "k_grid", "k_grid needs lam_grid"),
    ("dml_eig", {"k_grid": [1]}, "k_grid", "k_grid needs mu_grid"),
    ("nca", {"anneal": True, "init": [[1.0, 0.0]]}, "init", "give init by name"),
    ("nca_cs", {"optimizer": "sgd", "batch_size": None}, "batch_size", "needs a batch_size"),
])
def test_wrong_values_are_refused_before_and_at_fit(name, params, parameter, message):
    with pytest.raises(ParameterError) as err:
        REGISTRY[name].check_parameters(params)
    assert err.value.parameter == parameter and message in str(err.value)
    X = np.random.default_rng(1).normal(size=(30, 4))
    with pytest.raises(ParameterError) as at_fit:
        make(name, params).fit(X, np.repeat([0, 1, 2], 10))
    assert str(at_fit.value) == str(err.value)


@pytest.mark.parametrize("name, params, parameter, message", [
    ("nca", {"n_components": 10}, "n_components", "integer in [1, 4] (the number of features d)"),
    ("lmnn", {"n_components": 5}, "n_components", "n_components = 5 exceeds d = 4"),
    ("pca", {"n_components": 5}, "n_components", "exceeds min(n_train, d) = 4"),
    ("lda", {"n_components": 3}, "n_components", "exceeds min(classes - 1, d) = 2"),
    ("rmvem", {"m": 30}, "m", "m = 30 must be < n_train = 30"),
    ("rmle", {"m_grid": [5, 40]}, "m_grid", "m_grid: m = 40 must be < n_train = 30"),
    ("minivenn", {"k_select": [1, 30]}, "k_select", "at most n_train - 1 = 29"),
    ("move_query", {"n_targets": 30}, "n_targets", "n_targets = 30 same-class targets"),
    ("dml_eig", {"n_similar": 30}, "n_similar", "exceeds the n_train - 1 = 29"),
    ("boostmdm_k", {"k_m": 30}, "k_m", "k_m = 30 exceeds the n_train - 1 = 29"),
    ("mfa", {"n_components": 5}, "n_components", "exceeds min(d, n_train - 1) = 4"),
    ("klhp", {"K": 30}, "K", "K = 30 nearest points"),
])
def test_data_limits_are_one_check_at_config_time_and_at_fit(name, params, parameter, message):
    """n_train = 30 points, d = 4, 3 classes: the declared limit refuses the value from the
    numbers alone (config time) and from the data (fit), with one message."""
    cls = REGISTRY[name]
    with pytest.raises(ParameterError) as err:
        cls.check_data_limits(cls.with_defaults(params), 30, 4, 3)
    assert err.value.parameter == parameter and message in str(err.value)
    X = np.random.default_rng(2).normal(size=(30, 4))
    with pytest.raises(ParameterError) as at_fit:
        make(name, params).fit(X, np.repeat([0, 1, 2], 10))
    assert str(at_fit.value) == str(err.value)


@pytest.mark.parametrize("name, params", [
    ("nca", {"n_components": 4}), ("pca", {"n_components": 4}), ("lda", {"n_components": 2}),
    ("rmvem", {"m": 29, "k_select": [1, 29]}), ("move_query", {"n_targets": 9}),
    ("mfa", {"n_components": 4}),
])
def test_values_at_the_limit_pass_it(name, params):
    cls = REGISTRY[name]
    cls.check_data_limits(cls.with_defaults(params), 30, 4, 3)
