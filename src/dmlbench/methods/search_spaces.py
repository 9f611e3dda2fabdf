"""Search spaces: the hyperparameters of each method that the equal-tuning rule searches
(`dmlbench.run.tuning`), as data next to the parameter constraints (`methods.parameters`).

A space maps a parameter to its candidate values, in *declared order*: the first value of each
parameter is the simpler setting, and so is the first parameter's value before the second's
(candidates are ordered lexicographically by these positions; a tie in the inner score goes to
the earlier candidate). Values are checked against the method's `_parameter_constraints`.

A method's own internal selection is switched off under the rule: its space fixes the values
that selection would choose (KLHP's K and lam instead of its leave-one-out over K_grid x
lam_grid; Move-labeled's lam instead of its CV over lam_grid; DML-eig's mu instead of mu_grid;
RMVEM, RMLE and MiniVenn's m, and MiniVenn's rho, instead of their leave-one-out over m_grid and
rho_grid). Every method is thus chosen by the same inner folds and criterion, and its own
selection's cost is not spent on top of the budget. A plug-in method (or a registered one whose
space a config replaces) gives its space as `search_space:` under the method in the config.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..suggestions import did_you_mean
from .parameters import ParameterError, check_value

#: registered method name -> {parameter: candidate values, simplest first}; the source of
#: every range is the comment above it
SPACES: dict[str, dict[str, list]] = {
    # Euclidean: no hyperparameter (the reference every method is compared with)
    "euclidean": {},
    # Weinberger & Saul 2009 sect. 6 (target neighbours k = 1..5; mu = 0.5) and metric-learn's
    # LMNN defaults (learn_rate 1e-7, regularization 0.5), a decade either side of the rate
    "lmnn": {"n_neighbors": [3, 1, 5], "regularization": [0.5, 0.25, 0.75],
             "learn_rate": [1e-7, 1e-6, 1e-8]},
    # Davis et al. 2007 sect. 5 (gamma tuned by CV over 10^-4 .. 10^4) on metric-learn's default 1
    "itml": {"gamma": [1.0, 0.01, 0.1, 10.0, 100.0]},
    # Xing et al. 2002: the diagonal metric (simpler) and the full one
    "mmc": {"diagonal": [True, False]},
    # Sugiyama 2007 sect. 4 (local-scaling neighbour k = 7) and metric-learn's embeddings
    "lfda": {"k": [7, 3, 5, 10], "embedding_type": ["weighted", "orthonormalized", "plain"]},
    # Goldberger et al. 2005: full rank or reduced to 2 / 5 dimensions; initialisations of
    # scikit-learn's NeighborhoodComponentsAnalysis (pca, lda, identity) and ours (rca)
    "nca": {"n_components": [None, 2, 5], "init": ["rca", "pca", "lda", "identity"]},
    # Shigeto, Shimbo & Matsumoto 2017 sect. 5.1 (Move-labeled): the paper's lambda grid
    # 10^-2 .. 10^4 (config/repro/shigeto-2017.yaml's lam_grid), the default 1 first
    "move_labeled": {"lam": [1.0, 0.01, 0.1, 10.0, 100.0, 1000.0, 10000.0]},
    # Ying & Li 2012 sect. 5: mu over 10^-4 .. 10^-1 (default 1e-3)
    "dml_eig": {"mu": [0.001, 0.0001, 0.01, 0.1]},
    # Chang 2012 sect. 2.6.2 and Table 2 (BoostMDM-G): the Gaussian width mu from the
    # mu_neighbor-th neighbour (default 7) and the boosting rounds T (max_boost_iter; None = until
    # Algorithm 2's stop rule)
    "boostmdm_g": {"mu_neighbor": [7, 3, 5, 10], "max_boost_iter": [None, 10, 50]},
    # Chang 2012 sect. 2.6.1 (I-MFA = one round of BoostMDM-K, k_h = k_m = 5): hit and miss
    # neighbour counts around the paper's 5
    "i_mfa": {"k_h": [5, 3, 7], "k_m": [5, 10, 20]},
    # Abou-Moustafa 2017 sect. 5.2: m over d+1 .. 3d in the paper; here fixed sizes that fit
    # most training parts (a size above the inner training part is skipped), eps over decades
    "rmvem": {"m": [10, 5, 20, 40], "eps": [0.0001, 0.001, 0.01]},
    "rmle": {"m": [10, 5, 20, 40], "eps": [0.0001, 0.001, 0.01]},
    # Abou-Moustafa 2007 (MiniVenn) Alg. 1: rho over its own default grid, tau 0.05 and 0.1
    "minivenn": {"m": [10, 5, 20, 40], "rho": [0.5, 0.0, 0.25, 0.75, 1.0],
                 "tau": [0.05, 0.1]},
    # Vincent & Bengio 2002 (HKNN, KLHP): K and lambda over the method's own default grids
    "klhp": {"K": [3, 1, 2, 5, 7, 10, 15, 20], "lam": [0.1, 0.0, 0.01, 1.0, 10.0]},
    # PCA, LDA, RCA: the output dimension (None = all, the default); LDA also with the
    # within-class covariance shrunk (Ledoit-Wolf, scikit-learn's 'auto'; Friedman 1989's
    # regularised discriminant analysis), which a singular within-class scatter needs
    "pca": {"n_components": [None, 2, 5, 10]},
    "lda": {"n_components": [None, 1, 2], "shrinkage": [None, "auto"]},
    "rca": {"n_components": [None, 2, 5]},
}


def check(space: dict, cls: type) -> None:
    """`ParameterError` naming the parameter of `space` (the caller names the key) that is not
    one of `cls`'s (with the closest of its parameters), whose values are not a non-empty list
    without repeats, or one of whose values breaks the parameter's declared constraints. The
    class is named as the user named it (a plug-in by its class path, not its adapter)."""
    names = cls.parameter_names()
    constraints = getattr(cls, "_parameter_constraints", {})
    shown = getattr(cls, "class_path", "") or cls.__name__
    for name, values in space.items():
        if name not in names:
            raise ParameterError(name, f"{shown} has no parameter '{name}'"
                                       f"{did_you_mean(name, names)}; its parameters are "
                                       f"{sorted(names)}")
        if not isinstance(values, list) or not values:
            raise ParameterError(name, f"the candidates of '{name}' must be a non-empty list "
                                       f"of values, got {values!r}")
        if any(a == b for a, b in itertools.combinations(values, 2)):
            raise ParameterError(name, f"the candidates of '{name}' list a value twice: "
                                       f"{values}")
        for value in values:
            if name in constraints:
                check_value(name, value, constraints[name])


def space_of(name: str, cls: type, declared: dict | None = None) -> dict[str, list]:
    """The search space of method `name` (class `cls`): the config's `search_space` when
    given, else the registered one (`SPACES`), else none (the method runs as configured)."""
    if declared is not None:
        return {key: list(values) for key, values in declared.items()}
    return {key: list(values) for key, values in SPACES.get(name, {}).items()}


def grid_size(space: dict) -> int:
    return int(np.prod([len(values) for values in space.values()], dtype=np.int64))


def candidates(space: dict, budget: int, seed: int) -> list[dict]:
    """The settings the rule tries: the full grid when it has at most `budget` points, else
    the first point (every parameter at its first, simplest value; mostly the defaults) and
    `budget - 1` others drawn without replacement with `seed`. Both in declared order, which is
    how ties are broken."""
    names = list(space)
    size = grid_size(space)
    if size <= budget:
        chosen = range(size)
    else:
        drawn = np.random.default_rng(seed).choice(np.arange(1, size), budget - 1, replace=False)
        chosen = [0, *np.sort(drawn)]
    shape = [len(space[name]) for name in names]
    out = []
    for flat in chosen:
        position = np.unravel_index(int(flat), shape) if names else ()
        out.append({name: space[name][int(i)] for name, i in zip(names, position)})
    return out
