"""Data sets: the registry, the embedded loaders and generators, and the validated cache."""

from .cache import Dataset, build, ensure, load, save
from .registry import PAPERS, REGISTRY, DatasetSpec, get

__all__ = ["Dataset", "DatasetSpec", "PAPERS", "REGISTRY", "build", "ensure", "get", "load", "save"]
