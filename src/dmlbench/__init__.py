"""dmlbench: a workflow-managed benchmark of distance-metric learning for k-NN classification.

As a library, every registered method is importable by its class name and by its registry
name upper-cased (`dmlbench methods` lists both), with the classifier that turns any of them
into a scikit-learn classifier::

    from dmlbench import RMVEM, KLHP, KLocalHyperplane, MoveLabeled, MetricKNeighborsClassifier

The names resolve on first use (PEP 562 `__getattr__`): `import dmlbench` (and every
`dmlbench` command, one process per workflow step) loads none of the methods.
"""

import importlib

from ._version import __version__

#: what the top level offers besides the methods' classes, and the module defining each
_OTHERS = {"MetricKNeighborsClassifier": "dmlbench.methods.classifier",
           "PluginMethod": "dmlbench.methods.plugins"}


def _method_classes() -> dict[str, type]:
    """Every registered method's class by its class name and its import alias
    (`methods.registry.importable`)."""
    importlib.import_module("dmlbench.methods")  # registers them
    return importlib.import_module("dmlbench.methods.registry").importable()


def __getattr__(name: str):
    if name in _OTHERS:
        return getattr(importlib.import_module(_OTHERS[name]), name)
    if name[:1].isupper():
        classes = _method_classes()
        if name in classes:
            return classes[name]
        hint = importlib.import_module("dmlbench.suggestions").did_you_mean(name, classes)
        raise AttributeError(f"module 'dmlbench' has no attribute '{name}'{hint}; importable: "
                             f"{', '.join(sorted([*classes, *_OTHERS]))} (each method by its "
                             "class name and by its registry name upper-cased, e.g. "
                             "KLocalHyperplane = KLHP)")
    raise AttributeError(f"module 'dmlbench' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted([*globals(), *_OTHERS, *_method_classes()])
