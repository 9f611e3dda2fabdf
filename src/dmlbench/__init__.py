"""dmlbench: a workflow-managed benchmark of distance-metric learning for k-NN classification.

As a library, every registered method is importable by its class name, with the classifier
that turns any of them into a scikit-learn classifier::

    from dmlbench import RMVEM, MoveLabeled, NCA, BoostMDMG, MetricKNeighborsClassifier

The names resolve on first use (PEP 562 `__getattr__`): `import dmlbench` (and every
`dmlbench` command, one process per workflow step) loads none of the methods.
"""

import importlib

from ._version import __version__

#: what the top level offers besides the methods' classes, and the module defining each
_OTHERS = {"MetricKNeighborsClassifier": "dmlbench.methods.classifier",
           "PluginMethod": "dmlbench.methods.plugins"}


def _method_classes() -> dict[str, type]:
    """Every registered method's class by its class name."""
    registry = importlib.import_module("dmlbench.methods").REGISTRY
    return {cls.__name__: cls for cls in registry.values()}


def __getattr__(name: str):
    if name in _OTHERS:
        return getattr(importlib.import_module(_OTHERS[name]), name)
    if name[:1].isupper():
        classes = _method_classes()
        if name in classes:
            return classes[name]
    raise AttributeError(f"module 'dmlbench' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted([*globals(), *_OTHERS, *_method_classes()])
