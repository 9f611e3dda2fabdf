"""What a published file may say about the machine that made it: the checked config with its
local paths and credentials left out (the store's own label is `records.tracking.store_label`)."""

from __future__ import annotations

import copy
import urllib.parse
from pathlib import Path


def public_config(config: dict) -> dict:
    """A copy of `config` fit to publish: a local mirror or absolute cache directory shown by its
    last folder, a mirror URL by scheme, host and path (no credentials, no query)."""
    out = copy.deepcopy(config)
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
