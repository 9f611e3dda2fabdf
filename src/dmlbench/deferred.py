"""Modules imported when first used rather than when first imported.

scikit-learn imports pandas and pyarrow at start-up whenever they are installed
(`sklearn.utils.fixes`: `import pandas`, and `import pyarrow` to read `pyarrow.__version__`),
and so do some of dmlbench's own modules, although most commands never touch a DataFrame:
about a quarter of a job process's start-up (`docs/performance.md`, "Default benchmark").

Within `deferring(...)`, `import pandas` binds a stand-in module, which knows only its name,
spec and its distribution's `__version__`; the first other attribute asked of it imports the
module for real (as does importing one of its submodules), after which it forwards to the
module. On leaving the block, the stand-ins nobody used are taken out of `sys.modules` again, so
code that asks `sys.modules` whether pandas is loaded (scikit-learn does, before every
`isinstance(X, pandas.DataFrame)`) is told the truth: it is not, so no DataFrame exists. A
process that never uses pandas never loads it; one that does pays the import where it is used.
`dmlbench.cli` imports its modules within `deferring("pandas", "pyarrow")`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.util
import sys
import threading
import types

_LOCK = threading.RLock()


class Deferred(types.ModuleType):
    """The stand-in of a module not imported yet (see the module's docstring)."""

    def __init__(self, name: str, spec, version: str | None):
        super().__init__(name)
        self.__spec__ = spec  # `import name` sees a module that is not being initialised
        if version is not None:
            self.__version__ = version

    def __getattr__(self, attr: str):
        """Called for the attributes the stand-in lacks: import the module (once), copy its
        attributes here (later lookups of them are plain) and answer from it."""
        return getattr(_materialise(self), attr)


def _materialise(stand_in: Deferred) -> types.ModuleType:
    name = stand_in.__name__
    with _LOCK:
        module = sys.modules.get(name)
        if module is stand_in or module is None:
            sys.modules.pop(name, None)
            try:
                module = importlib.import_module(name)
            except BaseException:
                sys.modules.setdefault(name, stand_in)
                raise
            stand_in.__dict__.update(module.__dict__)
    return module


@contextlib.contextmanager
def deferring(*names: str):
    """Within the block, importing one of `names` (top-level modules that are neither imported
    yet nor missing) binds its stand-in; on leaving it, the unused stand-ins leave
    `sys.modules`."""
    placed = {}
    for name in names:
        spec = None if name in sys.modules else importlib.util.find_spec(name)
        if spec is None:
            continue
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = None
        placed[name] = sys.modules[name] = Deferred(name, spec, version)
    try:
        yield
    finally:
        with _LOCK:
            for name, stand_in in placed.items():
                if sys.modules.get(name) is stand_in:
                    del sys.modules[name]
