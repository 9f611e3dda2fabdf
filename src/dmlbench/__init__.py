"""dmlbench: a workflow-managed benchmark of distance-metric learning for k-NN classification."""

__version__ = "0.1.0"
