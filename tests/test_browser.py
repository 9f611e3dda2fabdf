"""Browser check: the smoke run's HTML report and the MLflow UI render in headless Chromium.

Chromium comes from Debian (`apt-get install chromium`); the test installs it when it is missing
and it can (root with apt-get), and skips with the reason otherwise. Screenshots are saved under
test-artifacts/ for a person to look at.
"""

import functools
import http.server
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import mlflow
import pytest
from conftest import REPO

pytestmark = [pytest.mark.workflow, pytest.mark.slow]
ARTIFACTS = REPO / "test-artifacts"
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1400,1000"]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], capture_output=True,
                       timeout=600)
        found = shutil.which("chromium")
        if found:
            return found
    pytest.skip("headless Chromium is not installed and could not be installed "
                "(needs root and Debian's apt-get: `apt-get install chromium`)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def render(url: str, tmp_path: Path, screenshot: Path, budget_ms: int = 10000) -> str:
    """The DOM of `url` after its scripts ran, and a screenshot of it."""
    browser = chromium()
    profile = tmp_path / f"profile-{screenshot.stem}"
    common = [browser, *CHROME_FLAGS, f"--user-data-dir={profile}",
              f"--virtual-time-budget={budget_ms}"]
    dom = subprocess.run([*common, "--dump-dom", url], capture_output=True, text=True,
                         timeout=300).stdout
    ARTIFACTS.mkdir(exist_ok=True)
    subprocess.run([*common, f"--screenshot={screenshot}", url], capture_output=True, timeout=300)
    return dom


@pytest.fixture
def report_server(smoke_run):
    work, _ = smoke_run
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(work / "reports" / "smoke"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    server.shutdown()


@pytest.fixture
def mlflow_ui(smoke_run):
    _, env = smoke_run
    port = free_port()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "mlflow"), "ui",
                             "--backend-store-uri", env["MLFLOW_TRACKING_URI"],
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(480):
            try:
                urllib.request.urlopen(base + "/health", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("mlflow ui did not answer within 240 s")
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # mlflow ui runs its server in child processes
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_report_shows_the_leaderboard(report_server, tmp_path):
    dom = render(report_server, tmp_path, ARTIFACTS / "report.png", budget_ms=2000)
    assert "<h2 id=\"leaderboard\">Leaderboard</h2>" in dom
    assert "Mean rank per k" in dom and "euclidean" in dom
    assert "<img" in dom and "figures/" in dom
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


def test_mlflow_ui_lists_the_experiments_runs(mlflow_ui, smoke_run, tmp_path):
    _, env = smoke_run
    mlflow.set_tracking_uri(env["MLFLOW_TRACKING_URI"])
    exp = mlflow.get_experiment_by_name("smoke")
    dom = render(f"{mlflow_ui}/#/experiments/{exp.experiment_id}/runs", tmp_path,
                 ARTIFACTS / "mlflow.png", budget_ms=15000)
    for name in ("iris / euclidean", "wine / lmnn"):
        assert name in dom, f"run {name!r} not visible in the MLflow UI"
    assert (ARTIFACTS / "mlflow.png").stat().st_size > 10_000
