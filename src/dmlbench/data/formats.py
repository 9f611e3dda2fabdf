"""Readers for the file formats data sets come in: text tables (comma- or whitespace-separated),
compressed or archived files (.gz, .bz2, .zip, .tar[.gz]), MATLAB .mat, svmlight/LIBSVM, the
MNIST idx format and R's data files (.rda / .RData). They return plain arrays (an R data frame:
its columns); `dmlbench.data.downloaded` turns them into `RawData`.
"""

from __future__ import annotations

import bz2
import gzip
import io
import struct
import tarfile
import warnings
import zipfile
from pathlib import Path

import numpy as np
from scipy.io import loadmat
from sklearn.datasets import load_svmlight_file


def read_bytes(path: str | Path, member: str | None = None) -> bytes:
    """The content of `path`, decompressed (.gz, .bz2) or taken from archive `member` (.zip,
    .tar, .tar.gz, .tgz)."""
    path = Path(path)
    name = path.name.lower()
    if name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2")):
        with tarfile.open(path) as tar:
            try:
                fh = tar.extractfile(_member(member, tar.getnames(), path))
            except KeyError:
                raise ValueError(f"{path}: no member {member!r}") from None
            return fh.read()
    if name.endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            return archive.read(_member(member, archive.namelist(), path))
    if name.endswith(".gz"):
        return gzip.decompress(path.read_bytes())
    if name.endswith(".bz2"):
        return bz2.decompress(path.read_bytes())
    return path.read_bytes()


def _member(member: str | None, names: list[str], path: Path) -> str:
    if member is None:
        files = [n for n in names if not n.endswith("/")]
        if len(files) != 1:
            raise ValueError(f"{path}: archive holds {len(files)} files; name the member to read")
        return files[0]
    if member not in names:
        raise ValueError(f"{path}: no member {member!r} (members: {names[:10]})")
    return member


def read_table(path: str | Path, sep: str | None = ",", skip_header: int = 0,
               member: str | None = None, encoding: str = "utf-8") -> np.ndarray:
    """A text table as a 2-D array of stripped strings. `sep` None splits on runs of whitespace.
    Blank lines are skipped; rows of unequal length are an error naming the line."""
    text = read_bytes(path, member).decode(encoding)
    lines = text.splitlines()[skip_header:]
    rows = []
    for number, line in enumerate(lines, start=skip_header + 1):
        if not line.strip():
            continue
        cells = line.split() if sep is None else [c.strip() for c in line.split(sep)]
        if rows and len(cells) != len(rows[0]):
            raise ValueError(
                f"{Path(path).name} line {number}: {len(cells)} fields, expected {len(rows[0])}"
            )
        rows.append(cells)
    if not rows:
        raise ValueError(f"{Path(path).name}: no data rows")
    return np.array(rows, dtype=object)


def to_float(table: np.ndarray, label: str) -> np.ndarray:
    """Cells as float64; a cell that is not a number is an error naming its row and column."""
    try:
        return table.astype(np.float64)
    except ValueError:
        for (i, j), cell in np.ndenumerate(table):
            try:
                float(cell)
            except ValueError:
                raise ValueError(
                    f"{label}: row {i}, column {j} is not a number: {cell!r}") from None
        raise


def read_mat(path: str | Path, *keys: str) -> list:
    """Variables `keys` of a MATLAB .mat file (v4 to v7.2, scipy.io.loadmat), squeezing
    label vectors to 1-D. A missing key is an error listing the file's variables."""
    content = loadmat(io.BytesIO(read_bytes(path)))
    out = []
    for key in keys:
        if key not in content:
            names = sorted(k for k in content if not k.startswith("__"))
            raise ValueError(f"{Path(path).name}: no variable '{key}' (variables: {names})")
        value = content[key]
        out.append(value.ravel() if getattr(value, "ndim", 0) == 2 and 1 in value.shape else value)
    return out


def read_svmlight(path: str | Path, n_features: int | None = None):
    """An svmlight/LIBSVM file (optionally .gz/.bz2): (sparse CSR X, labels as float)."""
    X, y = load_svmlight_file(io.BytesIO(read_bytes(path)), n_features=n_features)
    return X, y


def read_idx(path: str | Path) -> np.ndarray:
    """An array in LeCun's idx format (MNIST), optionally gzipped: magic 0x00 0x00 <type> <ndim>,
    then ndim big-endian int32 sizes, then the data."""
    data = read_bytes(path)
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError(f"{Path(path).name}: not an idx file (bad magic number)")
    dtypes = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    if data[2] not in dtypes:
        raise ValueError(f"{Path(path).name}: unknown idx data type 0x{data[2]:02x}")
    ndim = data[3]
    shape = struct.unpack(f">{ndim}i", data[4:4 + 4 * ndim])
    dtype = np.dtype(dtypes[data[2]])
    body = data[4 + 4 * ndim:]
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(body) != expected:
        raise ValueError(
            f"{Path(path).name}: idx header says shape {shape} ({expected} bytes), "
            f"the file has {len(body)} data bytes"
        )
    return np.frombuffer(body, dtype=dtype).reshape(shape)


def read_rda(path: str | Path, name: str) -> tuple[list[str], dict[str, np.ndarray]]:
    """The data frame `name` of R data file `path` (.rda / .RData, any of R's compressions), read
    by the `rdata` package (pure Python, no R): (column names, {column: values}), numeric columns
    as float64 (NA as NaN), factors as the text of their levels (object; NA as None), so the
    checks of `dmlbench.data.cache` see R's missing values. `ValueError` naming what is
    missing."""
    import rdata  # imports pandas and xarray: only the data sets stored as R files need it

    with warnings.catch_warnings():
        # R files written without an encoding flag (R before 3.5, as mlbench's): ASCII levels
        warnings.filterwarnings("ignore", message="Unknown encoding", category=UserWarning)
        try:
            objects = rdata.read_rda(path)
        except Exception as err:  # rdata raises plain exceptions on a damaged or foreign file
            raise ValueError(f"{Path(path).name}: not a readable R data file ({err})") from None
    if name not in objects:
        raise ValueError(f"{Path(path).name}: no R object {name!r} (it holds {sorted(objects)})")
    frame = objects[name]
    if not hasattr(frame, "columns"):
        raise ValueError(f"{Path(path).name}: R object {name!r} is not a data frame")
    columns = {}
    for column in frame.columns:
        values = frame[column]
        if str(values.dtype) == "category":
            text = values.astype(str).to_numpy(dtype=object)
            text[values.isna().to_numpy()] = None
            columns[str(column)] = text
        else:
            columns[str(column)] = np.asarray(values, dtype=np.float64)
    return [str(c) for c in frame.columns], columns
