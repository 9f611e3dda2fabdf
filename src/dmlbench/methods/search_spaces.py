"""Search spaces: the hyperparameters of each method that the equal-tuning rule searches
(`dmlbench.run.tuning`), as data next to the parameter constraints (`methods.parameters`).

A space maps a parameter to its candidate values, in *declared order*: the first value of each
parameter is the simpler setting, and so is the first parameter's value before the second's
(candidates are ordered lexicographically by these positions; a tie in the inner score goes to
the earlier candidate). A parameter's entry is either a list of values or a mapping that makes
the values fit the training part (`space_resolution.resolve` evaluates it on each one):

- `values: [...]` (literal values) or `from: <expr>, to: <expr>, points: <int>` (that many
  evenly spaced integers from .. to, rounded, repeats removed, in ascending order);
- `max: <expr>`: integer values above it are dropped (None, "all", is kept);
- `needs: {<requirement>: [values]}`: those values are dropped unless the training part meets
  the requirement (`space_resolution.REQUIREMENTS`, e.g. a regular within-class scatter).

An expression is integer arithmetic (`+ - * //`, `min`, `max`) over what the inner training
parts have: `n` (points of the smallest), `d` (features), `classes`, `smallest_class` (the
smallest class of any of them) and `largest_class` (the largest), e.g. `"3 * d"`,
`"smallest_class - 1"`. Values are checked against the method's `_parameter_constraints`.

A method's own internal selection is switched off under the rule: its space fixes the values
that selection would choose (KLHP's K and lam instead of its leave-one-out over K_grid x
lam_grid; Move-labeled's lam instead of its CV over lam_grid; DML-eig's mu instead of mu_grid;
RMVEM, RMLE and MiniVenn's m, and MiniVenn's rho, instead of their leave-one-out over m_grid and
rho_grid). Every method is thus chosen by the same inner folds and criterion, and its own
selection's cost is not spent on top of the budget. A plug-in method (or a registered one whose
space a config replaces) gives its space as `search_space:` under the method in the config.

Spaces travel in job specs and records as lists of [parameter, entry] pairs (`as_pairs`): JSON
written with sorted keys keeps a list's order, not a mapping's.
"""

from __future__ import annotations

import ast
import itertools

import numpy as np

from ..suggestions import did_you_mean
from .parameters import ParameterError, check_value

#: what an expression may name: the inner training parts' sizes (`space_resolution.Facts`)
VARIABLES = ("n", "d", "classes", "smallest_class", "largest_class")
#: the keys of a parameter entry given as a mapping
ENTRY_KEYS = {"values", "from", "to", "points", "max", "needs"}
#: what an entry's `needs` may name, with what it asks (tested by `space_resolution`)
REQUIREMENTS = {
    "regular_within_class_scatter": "a regular within-class scatter (full rank, no constant or "
                                    "collinear feature) on every inner training part",
    "all_components": "n_components = None (all)",
}

#: every registered method's space; the source of every range is the comment above it
SPACES: dict[str, dict[str, list | dict]] = {
    # Euclidean: no hyperparameter (the reference every method is compared with)
    "euclidean": {},
    # Weinberger & Saul 2009 sect. 6 (target neighbours k = 1..5; mu = 0.5) and metric-learn's
    # LMNN defaults (learn_rate 1e-7, regularization 0.5), a decade either side of the rate;
    # target neighbours are same-class points: at most smallest_class - 1 (a larger value acts
    # as that one)
    "lmnn": {"n_neighbors": {"values": [3, 1, 5], "max": "smallest_class - 1"},
             "regularization": [0.5, 0.25, 0.75], "learn_rate": [1e-7, 1e-6, 1e-8]},
    # Davis et al. 2007 sect. 5 (gamma tuned by CV over 10^-4 .. 10^4) on metric-learn's default 1
    "itml": {"gamma": [1.0, 0.01, 0.1, 10.0, 100.0]},
    # Xing et al. 2002: the diagonal metric (simpler) and the full one
    "mmc": {"diagonal": [True, False]},
    # Sugiyama 2007 sect. 4 (local-scaling neighbour k = 7) and metric-learn's embeddings;
    # metric-learn uses d - 1 for any k >= d
    "lfda": {"k": {"values": [7, 3, 5, 10], "max": "d - 1"},
             "embedding_type": ["weighted", "orthonormalized", "plain"]},
    # Goldberger et al. 2005: full rank or reduced to 2 / 5 dimensions (fewer than d: all is d);
    # the starts of Oneata 2011 sect. 3.3.2: ours (rca, the default) and lda need a regular
    # within-class scatter, pca always exists, identity is full rank only
    "nca": {"n_components": {"values": [None, 2, 5], "max": "d - 1"},
            "init": {"values": ["rca", "pca", "lda", "identity"],
                     "needs": {"regular_within_class_scatter": ["rca", "lda"],
                               "all_components": ["identity"]}}},
    # Shigeto, Shimbo & Matsumoto 2017 sect. 5.1 (Move-labeled) tune lambda over decades
    # (10^-2 .. 10^4); here the decades on both sides of the default 1, 10^-3 .. 10^3 (10^4 and
    # 10^3 scored far below the default in the inner folds of every reality-check set)
    "move_labeled": {"lam": [1.0, 0.1, 10.0, 0.01, 100.0, 0.001, 1000.0]},
    # Ying & Li 2012 sect. 5: mu over 10^-4 .. 10^-1 (default 1e-3)
    "dml_eig": {"mu": [0.001, 0.0001, 0.01, 0.1]},
    # Chang 2012 sect. 2.6.2 and Table 2 (BoostMDM-G): the Gaussian width mu from the
    # mu_neighbor-th neighbour (default 7) and the boosting rounds T (max_boost_iter; None = until
    # Algorithm 2's stop rule)
    "boostmdm_g": {"mu_neighbor": {"values": [7, 3, 5, 10], "max": "n - 1"},
                   "max_boost_iter": [None, 10, 50]},
    # Chang 2012 sect. 2.6.1 (I-MFA = one round of BoostMDM-K, k_h = k_m = 5): hit and miss
    # neighbour counts around the paper's 5; hits are same-class points (a larger k_h acts as
    # smallest_class - 1), misses the points of the other classes
    "i_mfa": {"k_h": {"values": [5, 3, 7], "max": "smallest_class - 1"},
              "k_m": {"values": [5, 10, 20], "max": "n - largest_class"}},
    # Abou-Moustafa 2017 sect. 5.2 (and the 2007 paper): m over d+1 .. 3d, 6 evenly spaced
    # values (the methods' own grid thins it to 12), below the inner training part's n; eps
    # over decades around the paper's 1e-4
    "rmvem": {"m": {"from": "d + 1", "to": "3 * d", "points": 6, "max": "n - 1"},
              "eps": [0.0001, 0.001, 0.01]},
    "rmle": {"m": {"from": "d + 1", "to": "3 * d", "points": 6, "max": "n - 1"},
             "eps": [0.0001, 0.001, 0.01]},
    # Abou-Moustafa 2007 (MiniVenn) Alg. 1: m over d+1 .. 3d (4 values, the grid stays at 40
    # points), rho over its own default grid, tau 0.05 and 0.1
    "minivenn": {"m": {"from": "d + 1", "to": "3 * d", "points": 4, "max": "n - 1"},
                 "rho": [0.5, 0.0, 0.25, 0.75, 1.0], "tau": [0.05, 0.1]},
    # Vincent & Bengio 2002 (HKNN, KLHP): K and lambda over the method's own default grids; K
    # nearest points of each class besides the query: at most smallest_class - 1
    "klhp": {"K": {"values": [3, 1, 2, 5, 7, 10, 15, 20], "max": "smallest_class - 1"},
             "lam": [0.1, 0.0, 0.01, 1.0, 10.0]},
    # PCA, LDA, RCA: the output dimension (None = all, the default; a number below all); LDA
    # also with the within-class covariance shrunk (Ledoit-Wolf, scikit-learn's 'auto';
    # Friedman 1989's regularised discriminant analysis), which a singular within-class
    # scatter needs (all of LDA is classes - 1 components)
    "pca": {"n_components": {"values": [None, 2, 5, 10], "max": "d - 1"}},
    "lda": {"n_components": {"values": [None, 1, 2], "max": "classes - 2"},
            "shrinkage": {"values": [None, "auto"],
                          "needs": {"regular_within_class_scatter": [None]}}},
    "rca": {"n_components": {"values": [None, 2, 5], "max": "d - 1"}},
}


# --- expressions


_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
              ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b}


def evaluate(expression: str | int, facts: dict[str, int]) -> int:
    """The integer value of `expression` (an int, or integer arithmetic over `VARIABLES`:
    + - * //, min, max) for `facts` ({variable: value}); `ValueError` naming what is wrong."""
    if isinstance(expression, bool) or not isinstance(expression, (int, str)):
        raise ValueError(f"an expression must be an integer or a string, got {expression!r}")
    if isinstance(expression, int):
        return expression
    try:
        tree = ast.parse(expression, mode="eval").body
    except SyntaxError:
        raise ValueError(f"cannot read the expression {expression!r}") from None

    def value(node) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name) and node.id in VARIABLES:
            return int(facts[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("min", "max") and node.args and not node.keywords):
            return (min if node.func.id == "min" else max)(value(a) for a in node.args)
        raise ValueError(f"the expression {expression!r} may use integers, + - * //, min, max "
                         f"and {', '.join(VARIABLES)} only")

    return value(tree)


# --- checking and describing spaces


def check(space: dict, cls: type) -> None:
    """`ParameterError` naming the parameter of `space` (the caller names the key) that is not
    one of `cls`'s (with the closest of its parameters), whose entry is neither a non-empty list
    of values without repeats nor a mapping of `ENTRY_KEYS` (readable expressions, known
    requirements, values the parameter lists), or a literal value of which breaks the
    parameter's declared constraints. The class is named as the user named it (a plug-in by its
    class path, not its adapter)."""
    names = cls.parameter_names()
    constraints = getattr(cls, "_parameter_constraints", {})
    shown = getattr(cls, "class_path", "") or cls.__name__
    probe = dict.fromkeys(VARIABLES, 10)
    for name, entry in space.items():
        key = f"the entry of '{name}'"
        if name not in names:
            raise ParameterError(name, f"{shown} has no parameter '{name}'"
                                       f"{did_you_mean(name, names)}; its parameters are "
                                       f"{sorted(names)}")
        if isinstance(entry, dict):
            unknown = set(entry) - ENTRY_KEYS
            if unknown:
                raise ParameterError(name, f"{key}: unknown key(s) {sorted(unknown)}; an entry "
                                           f"takes {sorted(ENTRY_KEYS)}")
            ranged = {"from", "to", "points"} & set(entry)
            if ("values" in entry) == bool(ranged) or (ranged and len(ranged) < 3):
                raise ParameterError(name, f"{key}: give either `values` or all of `from`, "
                                           "`to` and `points`")
            if ranged and (not isinstance(entry["points"], int) or entry["points"] < 1):
                raise ParameterError(name, f"{key}: `points` must be a positive integer")
            for part in ("from", "to", "max"):
                if part in entry:
                    try:
                        evaluate(entry[part], probe)
                    except ValueError as err:
                        raise ParameterError(name, f"{key}: `{part}`: {err}") from None
            values = entry.get("values", [])
            if not isinstance(values, list) or ("values" in entry and not values):
                raise ParameterError(name, f"{key}: `values` must be a non-empty list of values")
            if "max" in entry and any(v is not None and (isinstance(v, bool) or not isinstance(
                    v, int)) for v in values):
                raise ParameterError(name, f"{key}: `max` applies to integer values (and None)")
            for requirement, needing in (entry.get("needs") or {}).items():
                if requirement not in REQUIREMENTS:
                    raise ParameterError(name, f"{key}: `needs`: unknown requirement "
                                               f"'{requirement}'; known: {sorted(REQUIREMENTS)}")
                if not isinstance(needing, list) or any(v not in values for v in needing):
                    raise ParameterError(name, f"{key}: `needs.{requirement}` must list "
                                               "values of its `values`")
        else:
            if not isinstance(entry, list) or not entry:
                raise ParameterError(name, f"the candidates of '{name}' must be a non-empty list "
                                           f"of values, got {entry!r}")
            values = entry
        if any(a == b for a, b in itertools.combinations(values, 2)):
            raise ParameterError(name, f"the candidates of '{name}' list a value twice: "
                                       f"{values}")
        for value in values:
            if name in constraints:
                check_value(name, value, constraints[name])


def space_of(name: str, cls: type, declared: dict | None = None) -> dict:
    """The search space of method `name` (class `cls`): the config's `search_space` when
    given, else the registered one (`SPACES`), else none (the method runs as configured)."""
    source = declared if declared is not None else SPACES.get(name, {})
    return {key: _copy(entry) for key, entry in source.items()}


def _copy(entry):
    if isinstance(entry, dict):
        return {key: _copy(value) for key, value in entry.items()}
    return list(entry) if isinstance(entry, list) else entry


def as_pairs(space: dict) -> list[list]:
    """The space as [parameter, entry] pairs in declared order (what specs and records keep)."""
    return [[name, entry] for name, entry in space.items()]


def from_pairs(pairs) -> dict:
    """The space of `as_pairs` (a mapping, as a test may pass, is returned as it is)."""
    return dict(pairs) if not isinstance(pairs, dict) else pairs


def is_relative(entry) -> bool:
    """Whether an entry's values depend on the training part (a mapping entry)."""
    return isinstance(entry, dict)


def literal_values(entry) -> list:
    """The values an entry lists (a range has none until resolved)."""
    return list(entry.get("values", [])) if isinstance(entry, dict) else list(entry)


def grid_size(space: dict) -> int:
    """Points of the declared grid, at most (a range counts its `points`; values a training
    part cannot take are dropped when the space is resolved)."""
    sizes = [entry["points"] if isinstance(entry, dict) and "points" in entry
             else len(literal_values(entry)) for entry in space.values()]
    return int(np.prod(sizes, dtype=np.int64))


def describe(entry) -> str:
    """One parameter's entry as text, e.g. "d + 1 .. 3 * d (6 points; at most n - 1)"."""
    if not isinstance(entry, dict):
        return ", ".join(map(_shown, entry))
    notes = [f"{entry['points']} points"] if "points" in entry else []
    if "max" in entry:
        notes.append(f"at most {entry['max']}")
    notes += [f"{', '.join(map(_shown, values))} only with {requirement}"
              for requirement, values in (entry.get("needs") or {}).items()]
    text = (", ".join(map(_shown, entry["values"])) if "values" in entry else
            f"{entry['from']} .. {entry['to']}")
    return f"{text} ({'; '.join(notes)})" if notes else text


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
