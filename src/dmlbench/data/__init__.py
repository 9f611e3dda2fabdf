"""Data sets: the registry, the embedded loaders and generators, downloads, and the validated
cache."""

from .cache import Dataset, build, ensure, load, save
from .download import DownloadError
from .registry import PAPERS, REGISTRY, DatasetSpec, get

__all__ = ["Dataset", "DatasetSpec", "DownloadError", "PAPERS", "REGISTRY", "build", "ensure",
           "get", "load", "save"]
