"""The package's version, in a leaf module: the modules that print or record it (the data
cache's metadata, a record's environment, the report's footer, the download's user agent) read
it here, not from the package root, whose lazy exports would make them look as if they
depended on the methods. pyproject.toml's `version` must be the same (tested)."""

__version__ = "0.1.0"
