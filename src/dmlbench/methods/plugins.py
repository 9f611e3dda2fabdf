"""Methods from outside the package: a class a config names, or one an installed package
registers under the entry-point group `dmlbench.methods`.

A config's method entry names the class instead of a registered method::

    methods:
      whiten: {class: "plugins/whiten.py:Whiten"}                  # a file (relative to the config)
      lsml:   {class: "metric_learn:LSML_Supervised", params: {random_state: 0}}

and a package declares ``[project.entry-points."dmlbench.methods"] mymethod = "pkg.mod:Class"``,
after which ``method: mymethod`` (or the label ``mymethod``) finds it (`entry_point`).

A plug-in is any scikit-learn style estimator (keyword parameters in `__init__`, `fit(X, y)`)
with one of these capabilities, looked for in this order (`CAPABILITIES`):

- ``kneighbors(X, n_neighbors)`` returning (dist, ind), indices into the training set: its own
  neighbour search (local or asymmetric metrics; scikit-learn's `KNeighborsMixin` has it);
- ``transform(X)``: an embedding; the search is Euclidean in the embedded space (a linear map
  L gives the Mahalanobis distance ||L x - L y||; every metric-learn estimator has it);
- ``get_mahalanobis_matrix()``: M (D x D, positive semi-definite) of d(x, y)^2 = (x - y)^T M
  (x - y), searched through a factor L with L^T L = M.

`load(class_path)` imports the class (`PluginError`, one line, when it cannot: the file or module
is not found, no such class, no `fit`, none of the capabilities) and returns the method class the
benchmark uses: the class itself when it already is a `KNeighborsMethod`, else `adapter(cls)`,
a `PluginMethod` subclass giving it the method contract (`methods.base`): neighbour lists
ordered by (distance, training index), leave-one-out lists of the training points, `fit_info`,
the parameter names and their check (`check_parameters`: unknown or missing names, the
constructor, and scikit-learn's own declared constraints where the class has them).
"""

from __future__ import annotations

import ast
import difflib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import scipy.linalg

from ..measure.contract import check_embedding, check_lists
from ..measure.neighbours import euclidean_kneighbors
from .base import KNeighborsMethod, check_query, check_training_data
from .parameters import ParameterError

#: the entry-point group through which installed packages register methods
ENTRY_POINT_GROUP = "dmlbench.methods"
#: what a plug-in may offer, in the order the adapter looks for them
CAPABILITIES = ("kneighbors", "transform", "get_mahalanobis_matrix")
#: a Mahalanobis matrix whose smallest eigenvalue is below -PSD_RTOL x its largest is refused
PSD_RTOL = 1e-8
#: the `kind` values a record may carry (a plug-in with its own search may declare one)
KINDS = ("global", "asymmetric", "local")


class PluginError(ValueError):
    """A plug-in that cannot be used: one line naming the class path and the problem."""


def is_file(class_path: str) -> bool:
    """Whether `class_path` names a file (``path/to/file.py:Class``) rather than a module."""
    return class_path.rpartition(":")[0].endswith(".py")


def split(class_path: str) -> tuple[str, str]:
    """(file or module, class name) of ``<file.py or module>:<Class>``; `PluginError` else."""
    where, _, name = class_path.rpartition(":")
    if not where or not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name):
        raise PluginError(f"'{class_path}' is not '<file>.py:<Class>' or '<module>:<Class>'")
    return where, name


def shown(class_path: str) -> str:
    """The class path as records show it: a file by its name only (its sha256 identifies it;
    where it lies on this machine does not), a module as written."""
    if not is_file(class_path):
        return class_path
    where, name = split(class_path)
    return f"{Path(where).name}:{name}"


def _one_line(err: BaseException) -> str:
    return " ".join(f"{type(err).__name__}: {err}".split())


def _import_file(path: Path):
    """The module of a plug-in file, imported under a name of its own (its folder is on
    sys.path while it runs, so it may import files beside it)."""
    if not path.is_file():
        raise PluginError(f"plug-in file {path} not found")
    name = f"dmlbench_plugin_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the classes it defines can be pickled within this process
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        del sys.modules[name]
        raise PluginError(f"importing plug-in file {path} failed: {_one_line(err)}") from None
    finally:
        sys.path.remove(str(path.parent))
    return module


def _import_module(module: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name and module.startswith(err.name):
            raise PluginError(f"module '{module}' not found: install it in this environment, "
                              "or name a file ending in .py") from None
        raise PluginError(f"importing module '{module}' failed: {_one_line(err)}") from None
    except Exception as err:
        raise PluginError(f"importing module '{module}' failed: {_one_line(err)}") from None


def import_class(class_path: str) -> type:
    """The class `class_path` names, checked against the plug-in contract (`check_class`)."""
    where, name = split(class_path)
    module = _import_file(Path(where)) if where.endswith(".py") else _import_module(where)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            classes = [n for n, v in vars(module).items() if inspect.isclass(v)
                       and not n.startswith("_")]
            close = difflib.get_close_matches(name, classes, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise PluginError(f"'{where}' has no class '{name}'{hint}")
        obj = getattr(obj, part)
    check_class(obj, class_path)
    return obj


def capability(cls: type) -> str | None:
    """The first of `CAPABILITIES` the class has, or None."""
    return next((c for c in CAPABILITIES if callable(getattr(cls, c, None))), None)


def check_class(cls, class_path: str) -> None:
    """`PluginError` unless `cls` is a class with `fit` and one of the `CAPABILITIES`."""
    if not inspect.isclass(cls):
        raise PluginError(f"'{class_path}' is not a class but a {type(cls).__name__}")
    if issubclass(cls, KNeighborsMethod):
        return
    if not callable(getattr(cls, "fit", None)):
        raise PluginError(f"'{class_path}' has no fit(X, y) method")
    if capability(cls) is None:
        raise PluginError(f"'{class_path}' has none of the methods a plug-in needs: "
                          "kneighbors(X, n_neighbors) (its own neighbour search), transform(X) "
                          "(an embedding) or get_mahalanobis_matrix() (a Mahalanobis metric)")


@functools.cache
def load(class_path: str) -> type:
    """The method class of `class_path` (``<file>.py:<Class>`` with an absolute or working-
    directory-relative file, or ``<module>:<Class>``): the class itself when it is a
    `KNeighborsMethod`, else its `adapter`."""
    cls = import_class(class_path)
    return cls if issubclass(cls, KNeighborsMethod) else adapter(cls, class_path)


@functools.lru_cache(maxsize=8)
def _entry_points(path: tuple[str, ...]) -> dict[str, str]:
    """{name: class path} of the group `ENTRY_POINT_GROUP` for this `sys.path` (10 ms to
    find: once per process and path; the first of a name wins, as `importlib.metadata`)."""
    out: dict[str, str] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        out.setdefault(ep.name, ep.value)
    return out


def entry_point(name: str) -> str | None:
    """The class path (``module:Class``) an installed package registers as `name` in the group
    `ENTRY_POINT_GROUP`, or None."""
    return _entry_points(tuple(sys.path)).get(name)


def entry_point_names() -> list[str]:
    return sorted(_entry_points(tuple(sys.path)))


@functools.lru_cache(maxsize=8)
def _distributions(path: tuple[str, ...]) -> dict[str, list[str]]:
    """{top-level module: distributions providing it} for this `sys.path` (0.3 s to find:
    once per process and path)."""
    return metadata.packages_distributions()


def distribution(class_path: str) -> tuple[str, str] | None:
    """(name, version) of the installed distribution providing the module of `class_path`;
    None for a file, or a module outside any distribution."""
    if is_file(class_path):
        return None
    top = split(class_path)[0].split(".")[0]
    for name in _distributions(tuple(sys.path)).get(top, [])[:1]:
        return name, metadata.version(name)
    return None


def code_files(class_path: str) -> tuple[Path, Path, list[Path]] | None:
    """(root, main file, local modules) of the code a plug-in outside any distribution runs:
    for a file, its folder (first on sys.path while it is imported), the file, and the files
    under that folder it imports (`local_imports`); for a module on sys.path, the folder its
    top-level package lies in, the module's file and the files under that folder it imports.
    None for a module of an installed distribution (its name and version identify it,
    `distribution`) or one without a Python source file."""
    where = split(class_path)[0]
    if is_file(class_path):
        main = Path(os.path.abspath(where))
        root = main.parent
    elif distribution(class_path) is not None:
        return None
    else:
        found = importlib.util.find_spec(where)
        if found is None or not (found.origin or "").endswith(".py"):
            return None
        main = Path(os.path.abspath(found.origin))
        depth = where.count(".") + (main.name == "__init__.py")
        root = main.parents[depth]
    return root, main, local_imports(main, root)


def local_imports(path: Path, root: Path) -> list[Path]:
    """The Python files under `root` that the file `path` imports, directly or through one
    another, by its import statements (read, not run, so those inside functions count too;
    `importlib.import_module` and other imports by computed name are not seen), sorted."""
    root, path = Path(os.path.abspath(root)), Path(os.path.abspath(path))
    found, todo = set(), [path]
    while todo:
        current = todo.pop()
        stat = current.stat()
        for target in _imported_files(current, root, stat.st_size, stat.st_mtime_ns):
            if target != path and target not in found:
                found.add(target)
                todo.append(target)
    return sorted(found)


@functools.lru_cache(maxsize=256)
def _imported_files(path: Path, root: Path, size: int, mtime_ns: int) -> tuple[Path, ...]:
    """The files under `root` one import statement of `path` names (a version of the file:
    its size and mtime)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError):  # importing the plug-in reports it
        return ()
    out: list[Path] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out += _module_files(root, alias.name.split("."))
        elif isinstance(node, ast.ImportFrom):
            base = root
            if node.level:
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
            names = [alias.name for alias in node.names]
            out += _module_files(base, node.module.split(".") if node.module else [], names)
    return tuple(f for f in out if f.is_relative_to(root))


def _module_files(base: Path, parts: list[str], names=()) -> list[Path]:
    """The files importing module `parts` (a dotted name split) from folder `base` runs: each
    package's __init__.py on the way, the module's own file, and of `names` (``from m import
    names``) those that are submodules of the package m."""
    out, folder = [], Path(os.path.abspath(base))
    if not parts and (folder / "__init__.py").is_file():
        out.append(folder / "__init__.py")
    for part in parts:
        if (folder / part / "__init__.py").is_file():
            folder = folder / part
            out.append(folder / "__init__.py")
        elif (folder / f"{part}.py").is_file():
            return [*out, folder / f"{part}.py"]
        elif (folder / part).is_dir():  # a namespace package
            folder = folder / part
        else:
            return out
    for name in names:
        for candidate in (folder / f"{name}.py", folder / name / "__init__.py"):
            if candidate.is_file():
                out.append(candidate)
    return out


# --- the adapter ---------------------------------------------------------------------------


def _signature(target: type) -> inspect.Signature:
    return inspect.signature(target.__init__)


def parameter_names(target: type) -> list[str]:
    """The keyword parameters of the class's `__init__` (its `_get_param_names` when it is a
    scikit-learn estimator)."""
    getter = getattr(target, "_get_param_names", None)
    if callable(getter):
        try:
            return list(getter())
        except RuntimeError:  # an __init__ with *args: read the signature instead
            pass
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return sorted(n for n, p in _signature(target).parameters.items()
                  if n != "self" and p.kind in kinds)


def _sklearn_message(err: BaseException) -> tuple[str | None, str]:
    """(parameter, one-line message) of scikit-learn's InvalidParameterError."""
    text = " ".join(str(err).split())
    match = re.search(r"The '(\w+)' parameter", text)
    return (match.group(1) if match else None), text


class PluginMethod(KNeighborsMethod):
    """The method contract for an estimator from outside the package (`adapter` makes one
    subclass per class: `estimator_class`, `class_path`). Its parameters are the estimator's:
    `PluginMethod(**params)` builds `estimator_class(**params)` at `fit`.

    Attributes
    ----------
    estimator_ : object
        The fitted estimator.
    n_features_in_ : int
        Features D seen by `fit`.
    """

    family = "plug-in"
    estimator_class: type = object
    class_path = ""
    capability = ""

    def __init__(self, **params):
        self._params = dict(params)

    # ---- parameters ---------------------------------------------------------------------
    @classmethod
    def _get_param_names(cls) -> list[str]:
        return parameter_names(cls.estimator_class)

    @classmethod
    def with_defaults(cls, params: dict | None = None) -> dict:
        signature = _signature(cls.estimator_class).parameters
        return {name: signature[name].default for name in cls.parameter_names()
                if name in signature and signature[name].default is not inspect.Parameter.empty
                } | (params or {})

    @classmethod
    def check_parameters(cls, params: dict) -> None:
        """`ParameterError` naming the parameter: one the class does not take, one without a
        default left out, a value its constructor or its declared scikit-learn constraints
        refuse (`_validate_params`); a constructor error naming no parameter is a
        `ValueError`."""
        names = cls.parameter_names()
        signature = _signature(cls.estimator_class).parameters
        open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.values())
        unknown = sorted(set(params) - set(names))
        if unknown and not open_ended:
            close = difflib.get_close_matches(unknown[0], names, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ParameterError(unknown[0], f"{cls.class_path} has no parameter "
                                 f"'{unknown[0]}'{hint}; its parameters are {names}")
        required = [n for n, p in signature.items() if n in names and n not in params
                    and p.default is inspect.Parameter.empty]
        if required:
            raise ParameterError(required[0], f"{cls.class_path} needs parameter "
                                 f"'{required[0]}' (it has no default)")
        try:
            estimator = cls.estimator_class(**params)
        except Exception as err:
            raise ValueError(f"{cls.class_path}({', '.join(sorted(params))}) cannot be made: "
                             f"{_one_line(err)}") from None
        validate = getattr(estimator, "_validate_params", None)
        if callable(validate) and isinstance(getattr(estimator, "_parameter_constraints", None),
                                             dict):
            try:
                validate()
            except (TypeError, ValueError) as err:
                if type(err).__name__ != "InvalidParameterError":
                    raise
                name, message = _sklearn_message(err)
                raise ParameterError(name or "params", message) from None

    def get_params(self, deep: bool = True) -> dict:
        out = dict(self._params)
        if deep:
            for name, value in self._params.items():
                if hasattr(value, "get_params") and not isinstance(value, type):
                    out.update({f"{name}__{k}": v for k, v in value.get_params().items()})
        return out

    def set_params(self, **params):
        type(self).check_parameters({**self._params, **params})
        self._params.update(params)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in sorted(self._params.items()))
        return f"{self.class_path}({args})"

    def __reduce__(self):
        """Pickled by the estimator class (importable by name) and the parameters."""
        return _rebuild, (self.estimator_class, self.class_path, self._params), self.__dict__

    # ---- fit ----------------------------------------------------------------------------
    def fit(self, X, y):
        X, y = check_training_data(X, y)
        self.n_features_in_ = X.shape[1]
        self.estimator_ = self.estimator_class(**self._params)
        self.estimator_.fit(X, y)
        self._fitted(X)
        return self

    def _fitted(self, X) -> None:
        """What the capability keeps of the training points after the estimator's fit."""

    def fit_info(self) -> dict:
        """The capability used, and the estimator's own `fit_info()` where it has one."""
        own = getattr(self.estimator_, "fit_info", None)
        return {"capability": self.capability, **(own() if callable(own) else {})}


def _rebuild(estimator_class: type, class_path: str, params: dict):
    return adapter(estimator_class, class_path)(**params)


class EmbeddingPlugin(PluginMethod):
    """A plug-in with `transform` or `get_mahalanobis_matrix`: its training points embedded,
    searched with the exact Euclidean search (`measure.neighbours`), ties by training index.

    Attributes
    ----------
    embedding_ : ndarray of shape (n, r)
        The training points embedded.
    components_ : ndarray of shape (r, D)
        With `get_mahalanobis_matrix` only: L with L^T L = M (eigenvalues clipped at 0).
    """

    kind = "global"

    def _fitted(self, X) -> None:
        if self.capability == "get_mahalanobis_matrix":
            M = np.asarray(self.estimator_.get_mahalanobis_matrix(), dtype=float)
            D = X.shape[1]
            if M.shape != (D, D) or not np.all(np.isfinite(M)):
                raise ValueError(f"{self.class_path}: get_mahalanobis_matrix() must return a "
                                 f"finite {D} x {D} matrix, got shape {M.shape}")
            values, vectors = scipy.linalg.eigh((M + M.T) / 2)
            if values.min() < -PSD_RTOL * max(abs(values).max(), 1e-300):
                raise ValueError(f"{self.class_path}: the Mahalanobis matrix is not positive "
                                 f"semi-definite (smallest eigenvalue {values.min():.3g})")
            keep = values > 0
            self.components_ = np.sqrt(values[keep])[::-1, None] * vectors[:, keep][:, ::-1].T
        self.embedding_ = self.embed(X)

    def embed(self, X) -> np.ndarray:
        """The points in the space the search runs in (n x r floats)."""
        X = check_query(X, self.n_features_in_)
        if self.capability == "get_mahalanobis_matrix":
            return X @ self.components_.T
        Z = self.estimator_.transform(X)
        if not isinstance(Z, np.ndarray):
            Z = np.asarray(getattr(Z, "toarray", lambda: Z)())
        return check_embedding(self, Z, X.shape[0], "transform")

    def kneighbors(self, X, n_neighbors: int, progress: bool = False):
        return euclidean_kneighbors(self.embed(X), self.embedding_, n_neighbors,
                                    progress=progress)

    def train_kneighbors(self, n_neighbors: int):
        return euclidean_kneighbors(self.embedding_, self.embedding_, n_neighbors,
                                    exclude_self=True)

    def search_vectors(self, X=None):
        return (self.embedding_ if X is None else self.embed(X)), self.embedding_

    def fit_info(self) -> dict:
        return {**super().fit_info(), "embedding_dim": int(self.embedding_.shape[1])}

    def artifacts(self, X_test, y_test) -> dict:
        """A two-dimensional embedding keeps the test set's (and labels) for scatter plots."""
        if self.embedding_.shape[1] != 2:
            return {}
        return {"test_embedding": self.embed(X_test), "test_labels": np.asarray(y_test)}


class NeighboursPlugin(PluginMethod):
    """A plug-in with its own `kneighbors(X, n_neighbors)`: its lists, each row re-ordered by
    (distance, training index) (the benchmark's tie rule among the neighbours it returns).
    Leave-one-out lists of the training points: its own `train_kneighbors(n)` if it has one,
    else `kneighbors` of the training points with one more neighbour, the point itself removed
    (else the last)."""

    def _fitted(self, X) -> None:
        self._X_train = X

    def _lists(self, X, n_neighbors: int):
        """The estimator's lists of X, checked (`measure.contract.check_lists`) and ordered."""
        found = self.estimator_.kneighbors(X, n_neighbors=n_neighbors)
        return self._ordered(*check_lists(self, found, X.shape[0], n_neighbors,
                                          self._X_train.shape[0]))

    def kneighbors(self, X, n_neighbors: int, progress: bool = False):
        return self._lists(check_query(X, self.n_features_in_), n_neighbors)

    def train_kneighbors(self, n_neighbors: int):
        n = self._X_train.shape[0]
        own = getattr(self.estimator_, "train_kneighbors", None)
        if callable(own):
            return self._ordered(*check_lists(self, own(n_neighbors), n, n_neighbors, n,
                                              "train_kneighbors", exclude_self=True))
        dist, ind = self._lists(self._X_train, min(n_neighbors + 1, n))
        own_row = ind == np.arange(n)[:, None]
        drop = np.where(own_row.any(axis=1), own_row.argmax(axis=1), ind.shape[1] - 1)
        keep = np.ones(ind.shape, dtype=bool)
        keep[np.arange(n), drop] = False
        return (dist[keep].reshape(n, -1)[:, :n_neighbors],
                ind[keep].reshape(n, -1)[:, :n_neighbors])

    @staticmethod
    def _ordered(dist, ind):
        order = np.lexsort((ind, dist), axis=1)
        return (np.take_along_axis(dist, order, axis=1),
                np.take_along_axis(ind, order, axis=1).astype(np.int64))


@functools.cache
def adapter(estimator_class: type, class_path: str | None = None) -> type:
    """The `PluginMethod` subclass for `estimator_class` (one per class): `NeighboursPlugin`
    for a class with its own `kneighbors`, else `EmbeddingPlugin`."""
    class_path = class_path or f"{estimator_class.__module__}:{estimator_class.__qualname__}"
    check_class(estimator_class, class_path)
    found = capability(estimator_class)
    base = NeighboursPlugin if found == "kneighbors" else EmbeddingPlugin
    attributes = {"estimator_class": estimator_class, "class_path": class_path,
                  "capability": found, "registry_name": shown(class_path),
                  "__module__": __name__, "__doc__": base.__doc__}
    if base is NeighboursPlugin:
        own = getattr(estimator_class, "kind", None)
        attributes["kind"] = own if own in KINDS else "local"
    for name in ("family", "papers"):
        own = getattr(estimator_class, name, None)
        if name == "family" and isinstance(own, str):
            attributes[name] = own
        if name == "papers" and isinstance(own, tuple) and all(isinstance(p, str) for p in own):
            attributes[name] = own
    return type(f"{estimator_class.__name__}Plugin", (base,), attributes)
