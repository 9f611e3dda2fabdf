"""Can each data set of a run be obtained? Decided before any job starts (Snakefile parse time).

A data set is obtainable when it is embedded, already cached (``<cache>/datasets``), its files are
already downloaded (``<cache>/downloads``, each matching its pin: a kept file that does not is
deleted and does not count; `dmlbench.data.lock`), the mirror has them
(a directory: the files exist; a URL: HEAD answers 200), or, unless `offline`, a TCP connection to
the host of each of its public homes opens within `PROBE_TIMEOUT` seconds (one probe per host,
`dmlbench.data.download.probe`, honouring http(s)_proxy). The probe is cheap and fails fast
without DNS; it cannot tell that a file is still online, which the download itself reports.
`offline: true` skips the probes: a machine known to have no internet needs no waiting.
A downloaded set with a file the download lock cannot pin (or a cached one built from such a
file) is "unpinned" unless the config trusts unpinned files (`data.trust_unpinned`): refused
before any job, as its prepare step would refuse it.
"""

from __future__ import annotations

import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import requests

from ..files import read_json
from . import cache, download, lock, registry
from .spec import mirror_path

PROBE_TIMEOUT = 3.0


@dataclass
class Status:
    """How data set `name` can be had: `how` is embedded, cached, downloaded, mirror, network,
    or missing / unavailable (then `detail` says what is needed); "probe" only internally."""

    name: str
    how: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.how not in ("missing", "unavailable", "probe", "unpinned")


def _downloaded(spec, cache_dir: Path) -> bool:
    """Whether every file is kept in the cache and matches its pin (failures are deleted)."""
    base = cache.downloads_dir(cache_dir) / spec.group
    return all([(base / f.name).exists() and cache.verified(base / f.name, lock.pinned(spec, f))
                for f in spec.files])


def _in_mirror(spec, mirror) -> tuple[bool, str]:
    root = download.mirror_root(mirror)
    missing = []
    for file in spec.files:
        found = False
        file = lock.pinned(spec, file)
        for source in download.sources(file, spec.group, mirror, offline=True):
            if download.untrusted(source, file, spec.array_sha256 is not None):
                continue
            if isinstance(root, Path):
                found = Path(download.location(source)).is_file()
            else:
                found = _head_ok(str(download.location(source)))
            if found:
                break
        if not found:
            missing.append(mirror_path(spec.group, file))
    return not missing, ", ".join(missing)


def _head_ok(url: str) -> bool:
    try:
        response = requests.head(url, timeout=PROBE_TIMEOUT, allow_redirects=True)
        return response.status_code == 200
    except requests.exceptions.RequestException:
        return False


def _homes(spec) -> list[str]:
    """The first public home of each file (its Debian package's, for a file only a package
    holds)."""
    return [url for f in spec.files
            for url in (f.urls or (f.debian.package.urls if f.debian else ()))[:1]]


def status(name: str, cache_dir: str | Path, mirror=None, offline: bool = False,
           probes: dict | None = None) -> Status:
    """The `Status` of data set `name`; `probes` holds probe results by host (missing hosts are
    probed here)."""
    local = _status_without_network(name, Path(cache_dir), mirror, offline)
    if local.how != "probe":
        return local
    probes = {} if probes is None else probes
    spec = registry.get(name)
    reasons = []
    for url in _homes(spec):
        host = urllib.parse.urlsplit(url).netloc
        if host not in probes:
            probes[host] = download.probe(url, PROBE_TIMEOUT)
        if probes[host] is None:
            return Status(name, "network")
        reasons.append(probes[host])
    why = "; ".join(dict.fromkeys(reasons)) or "no public home registered"
    return Status(name, "missing", f"{local.detail}; no network: {why}")


def _status_without_network(name: str, cache_dir: Path, mirror, offline: bool) -> Status:
    """Everything but the probe: how "probe" means only the network can still provide it."""
    spec = registry.get(name)
    if not spec.available:
        return Status(name, "unavailable", spec.reason)
    if spec.embedded:
        return Status(name, "embedded")
    if all(p.exists() for p in cache.paths(name, cache_dir)):
        return Status(name, "cached")
    if _downloaded(spec, cache_dir):
        return Status(name, "downloaded")
    detail = f"needs {', '.join(spec.mirror_paths())}"
    if mirror is not None:
        found, missing_files = _in_mirror(spec, mirror)
        if found:
            return Status(name, "mirror")
        detail += f"; not in the mirror {mirror}: {missing_files}"
    if offline:
        return Status(name, "missing", f"{detail} (data.offline is set)")
    return Status(name, "probe", detail)


def _unpinned(name: str, cache_dir: Path) -> Status | None:
    """Status "unpinned" when data set `name` is (or would be) built from files without a pin."""
    spec = registry.get(name)
    if not spec.downloads:
        return None
    json_path = cache.paths(name, cache_dir)[1]
    if json_path.exists():
        files = list(read_json(json_path).get("unpinned", {}))
    else:
        files = [lock.key(spec, f) for f in spec.files if lock.pin_of(spec, f) == "unpinned"]
    if not files:
        return None
    return Status(name, "unpinned", f"{', '.join(files)} ha{'ve' if len(files) > 1 else 's'} "
                                    "no pin (dmlbench datasets --files)")


def missing(names, cache_dir, mirror=None, offline: bool = False,
            trust_unpinned: bool = False) -> list[Status]:
    """The statuses of the data sets among `names` that cannot be obtained (or are unpinned and
    not trusted). The hosts still to probe are probed in parallel, so unreachable homes cost one
    timeout, not one each."""
    names = list(dict.fromkeys(names))
    refused = [] if trust_unpinned else [s for s in (_unpinned(n, Path(cache_dir)) for n in names)
                                         if s is not None]
    statuses = [_status_without_network(n, Path(cache_dir), mirror, offline)
                for n in names if n not in {s.name for s in refused}]
    hosts = {urllib.parse.urlsplit(url).netloc: url for s in statuses if s.how == "probe"
             for url in _homes(registry.get(s.name))}
    probes: dict = {}
    if hosts:
        with ThreadPoolExecutor(max_workers=min(8, len(hosts))) as pool:
            results = pool.map(lambda url: download.probe(url, PROBE_TIMEOUT), hosts.values())
            probes = dict(zip(hosts, results))
    final = [status(s.name, cache_dir, mirror, offline, probes) if s.how == "probe" else s
             for s in statuses]
    return refused + [s for s in final if not s.ok]


def message(problems: list[Status], cache_dir) -> str:
    """One message listing what is missing and how to provide it."""
    lines = [f"{len(problems)} data set(s) of this config cannot be obtained, so no job was "
             "started:"]
    lines += [f"  - {s.name}: {'not available: ' if s.how == 'unavailable' else ''}{s.detail}"
              for s in problems]
    fixable = [s.name for s in problems if s.how == "missing"]
    if fixable:
        lines += [
            "Provide them in one of these ways (docs/data.md, 'Mirrors and offline use'):",
            "  1. set data.mirror in the config to a directory or http(s) base URL holding the "
            "files above as <mirror>/<group>/<file> (`dmlbench datasets --files` lists them);",
            "  2. or build them where there is internet (`dmlbench dataset NAME --cache DIR`) "
            f"and copy DIR/datasets/NAME.npz and NAME.json into {cache_dir}/datasets/;",
            "  3. or, if this machine does have internet, remove data.offline / check the proxy "
            "settings (https_proxy).",
        ]
    if any(s.how == "unavailable" for s in problems):
        lines.append("Data sets marked 'not available' have no public source: remove them from "
                     "the config.")
    if any(s.how == "unpinned" for s in problems):
        lines.append("Files without a pin are refused: nothing says they are the genuine files. "
                     "To use them anyway set data: {trust_unpinned: true} in the config; their "
                     "records are then marked unpinned.")
    return "\n".join(lines)
