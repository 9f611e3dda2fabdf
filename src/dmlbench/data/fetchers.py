"""Data sets obtained through scikit-learn's fetchers, kept in the benchmark's cache.

A fetcher runs with ``data_home = <cache>/scikit-learn``, so its downloads live beside the other
cached files. Before it runs, the files it would otherwise download (`DatasetSpec.files`, paths
relative to data_home, e.g. ``20news-bydate_py3.pkz``) are taken from the mirror when it has them
(``<mirror>/scikit-learn/<path>``): a mirror's ``scikit-learn/`` folder is a copy of a data_home
in which the fetcher has run once, on a machine with internet.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import download
from .embedded import RawData
from .spec import DatasetSpec

GROUP = "scikit-learn"


def data_home(cache_dir: str | Path) -> Path:
    return Path(cache_dir) / GROUP


def load(spec: DatasetSpec, cache_dir: str | Path, mirror=None, offline: bool = False,
         **fetch_options) -> RawData:
    """Run the fetcher of `spec` on the cache's data_home, seeding it from the mirror first."""
    home = data_home(cache_dir)
    for file in spec.files:
        target = home / file.name
        if target.exists() or mirror is None:
            continue
        try:
            download.fetch(file, GROUP, target, mirror=mirror, offline=True, **fetch_options)
        except download.DownloadError:
            pass  # not in the mirror: the fetcher downloads it unless offline
    try:
        return spec.fetch(home, not offline)
    except OSError as err:
        where = f"the mirror ({mirror}) or " if mirror else ""
        raise download.DownloadError(
            f"data set '{spec.name}': the scikit-learn fetcher could not get its files "
            f"({err}); they are not in {where}{home}"
            + (" and data.offline is set" if offline else "")
        ) from None


def twenty_newsgroups(home: Path, download_if_missing: bool) -> RawData:
    """20 Newsgroups "bydate" as scikit-learn vectorises it (token counts, rows scaled to unit
    length, 130107 terms): the 11314 training then 7532 test documents, as a given split."""
    import scipy.sparse as sp
    from sklearn.datasets import fetch_20newsgroups_vectorized

    parts = [fetch_20newsgroups_vectorized(subset=subset, data_home=str(home),
                                           download_if_missing=download_if_missing)
             for subset in ("train", "test")]
    names = np.asarray(parts[0].target_names)
    X = sp.vstack([p.data for p in parts]).tocsr().astype(np.float64)
    y = np.concatenate([names[p.target] for p in parts])
    n_train = parts[0].data.shape[0]
    split = {"train": np.arange(n_train), "test": np.arange(n_train, X.shape[0])}
    return RawData(X=X, y=y, given_split=split)
