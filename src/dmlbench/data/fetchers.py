"""20 Newsgroups as scikit-learn vectorises it, built from its verified archive.

scikit-learn's fetcher downloads ``20news-bydate.tar.gz`` (sha256 published in its source,
`ARCHIVE` below) and keeps pickles of the parsed and vectorised documents in its data_home;
loading a pickle runs code, so pickles must never come from a mirror or an unverified file. Here
the archive is an ordinary downloaded file (mirror path ``scikit-learn/20news-bydate.tar.gz``,
checked against that sha256 before it enters the cache), and the fetcher runs on a fresh,
private data_home holding only that archive: it finds the archive with the sha256 it expects
(so it downloads nothing), builds its pickles from it, loads them, and the data_home is removed.
The only pickles ever loaded are the ones it has just written from the verified archive.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import _twenty_newsgroups, fetch_20newsgroups_vectorized

from ..files import temporary_dir
from . import download
from .embedded import RawData
from .spec import RemoteFile

GROUP = "scikit-learn"
#: scikit-learn's ARCHIVE (sklearn/datasets/_twenty_newsgroups.py): the bydate archive on figshare
ARCHIVE = RemoteFile(
    "20news-bydate.tar.gz", ("https://ndownloader.figshare.com/files/5975967",),
    "sha256:8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610")


def twenty_newsgroups(paths: dict[str, Path]) -> RawData:
    """20 Newsgroups "bydate" as scikit-learn vectorises it (token counts, rows scaled to unit
    length, 130107 terms): the 11314 training then 7532 test documents, as a given split."""
    archive = paths[ARCHIVE.name]
    expected = _twenty_newsgroups.ARCHIVE.checksum
    if download.checksum_of(archive, "sha256") != expected:
        raise ValueError(f"{ARCHIVE.name}: scikit-learn expects the archive with sha256 "
                         f"{expected}; this file differs, so its fetcher would download")
    with temporary_dir(archive.parent, "scikit-learn-home") as home:
        (home / "20news_home").mkdir()
        shutil.copyfile(archive, home / "20news_home" / _twenty_newsgroups.ARCHIVE.filename)
        parts = [fetch_20newsgroups_vectorized(subset=subset, data_home=str(home))
                 for subset in ("train", "test")]
    names = np.asarray(parts[0].target_names)
    X = sp.vstack([p.data for p in parts]).tocsr().astype(np.float64)
    y = np.concatenate([names[p.target] for p in parts])
    n_train = parts[0].data.shape[0]
    split = {"train": np.arange(n_train), "test": np.arange(n_train, X.shape[0])}
    return RawData(X=X, y=y, given_split=split)
