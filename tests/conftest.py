import os
from pathlib import Path

import pytest

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def mlflow_uri(tmp_path, monkeypatch):
    """A fresh SQLite MLflow store for one test."""
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri
