"""What a published file may say about the machine that made it: the checked config with its
local paths and credentials left out (the store's own label is `records.tracking.store_label`)."""

from __future__ import annotations

import copy
import urllib.parse
from pathlib import Path


def _local(path: str) -> str:
    return f"<local directory>/{Path(path).name}" if Path(path).is_absolute() else path


def public_config(config: dict) -> dict:
    """A copy of `config` fit to publish: a local mirror or absolute cache directory shown by its
    last folder, a mirror URL by scheme, host and path (no credentials, no query), the user's
    data files (`datasets.<label>.path`) and plug-in files (`methods.<label>.class`) by their
    names (their sha256 is in the records)."""
    out = copy.deepcopy(config)
    for entry in (out.get("datasets") or {}).values():
        if isinstance(entry, dict) and entry.get("path"):
            entry["path"] = _local(entry["path"])
    for entry in (out.get("methods") or {}).values():
        if isinstance(entry, dict) and ".py:" in str(entry.get("class", "")):
            where, name = entry["class"].rsplit(":", 1)
            entry["class"] = f"{_local(where)}:{name}"
    data = out.get("data", {})
    if data.get("cache") and Path(data["cache"]).is_absolute():
        data["cache"] = f"<local directory>/{Path(data['cache']).name}"
    if data.get("mirror"):
        parts = urllib.parse.urlsplit(data["mirror"])
        if parts.scheme in ("http", "https"):
            host = parts.hostname + (f":{parts.port}" if parts.port else "")
            data["mirror"] = f"{parts.scheme}://{host}{parts.path}"
        else:
            data["mirror"] = f"<local directory>/{Path(parts.path).name}"
    return out
