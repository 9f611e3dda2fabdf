"""Browser checks in headless Chromium: every committed report page and the scoreboard page
(`reports/`) at 1400 px with no table whose columns scroll out of view; the default report, two
paper reports and the scoreboard also read right (no horizontal overflow, the leaderboard's best
rank first, sorting by a column, no figure over two screens); the smoke run's report and the
MLflow UI.

Chromium comes from Debian (`apt-get install chromium`); the test installs it when it is missing
and it can (root with apt-get), and skips with the reason otherwise. A page is measured by a
harness page that loads it in a 1400 px frame of the same origin and writes what it measured
into its own DOM, which `--dump-dom` returns (no driver needed). Screenshots of the first screen
are saved under test-artifacts/ for a person to look at.
"""

import functools
import http.server
import json
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

pytestmark = pytest.mark.slow
ARTIFACTS = REPO / "test-artifacts"
REPORTS = REPO / "reports"
#: every committed page: each report's and the scoreboard (paths under reports/)
PAGES = sorted(str(p.relative_to(REPORTS)) for p in REPORTS.rglob("*.html")
               if "records" not in p.relative_to(REPORTS).parts)
#: one Chromium run's limit: it starts in seconds, but minutes on a machine many jobs share
BROWSER_TIMEOUT_S = 240
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


def run_browser(args: list[str]) -> str:
    """Run Chromium to its end and return its stdout. Its own process group, killed whole on
    timeout: its helper processes keep the output pipe open, so killing the first one alone
    leaves the wait hanging."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=BROWSER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"Chromium did not finish within {BROWSER_TIMEOUT_S} s: {args[-1]}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return out


def render(url: str, tmp_path: Path, screenshot: Path | None, budget_ms: int = 10000) -> str:
    """The DOM of `url` after its scripts ran, and a screenshot of its first screen."""
    browser = chromium()
    profile = tmp_path / f"profile-{abs(hash(url))}"
    # the virtual-time budget lets the page's scripts run; --timeout (real time) makes Chromium
    # stop and give what it has before the process is killed (a busy machine, a page that polls)
    common = [browser, *CHROME_FLAGS, f"--user-data-dir={profile}",
              f"--virtual-time-budget={budget_ms}", f"--timeout={(BROWSER_TIMEOUT_S - 60) * 1000}"]
    dom = run_browser([*common, "--dump-dom", url])
    if screenshot is not None:
        ARTIFACTS.mkdir(exist_ok=True)
        run_browser([*common, f"--screenshot={screenshot}", url])
    return dom


#: loads the page `?page` in a 1400 x 1000 frame and writes the measures into #out as JSON
HARNESS = """<!DOCTYPE html><html><body style="margin:0">
<pre id="out">not measured</pre>
<iframe id="frame" style="width:1400px;height:1000px;border:0"></iframe>
<script>
var frame = document.getElementById("frame");
frame.onload = function () {
  var doc = frame.contentDocument, out = {};
  var root = doc.documentElement;
  out.scrollWidth = root.scrollWidth;
  out.clientWidth = root.clientWidth;
  out.h2 = Array.prototype.map.call(doc.querySelectorAll("h2"), function (h) { return h.id; });
  out.figureHeights = Array.prototype.map.call(doc.querySelectorAll("img"), function (img) {
    return img.getBoundingClientRect().height; });
  // folded tables (and folded cells) opened, as a reader's click shows them
  Array.prototype.forEach.call(doc.querySelectorAll("details"), function (d) { d.open = true; });
  out.tables = doc.querySelectorAll(".table-wrap").length;
  out.wideTables = Array.prototype.filter.call(doc.querySelectorAll("table"), function (t) {
    var box = t.parentNode.getBoundingClientRect(); return box.right > root.clientWidth + 1;
  }).length;
  // tables whose frame scrolls sideways (columns out of view): the section they are in, the
  // caption above them, their width and their frame's
  out.hiddenColumns = Array.prototype.filter.call(doc.querySelectorAll(".table-wrap"),
    function (w) { return w.scrollWidth > w.clientWidth + 1; }).map(function (w) {
      var sections = Array.prototype.filter.call(doc.querySelectorAll("h2"), function (h) {
        return h.compareDocumentPosition(w) & Node.DOCUMENT_POSITION_FOLLOWING; });
      var caption = w.previousElementSibling;
      while (caption && caption.classList.contains("table-wrap")) {
        caption = caption.previousElementSibling; }
      return {section: sections.length ? sections[sections.length - 1].id : "",
              caption: caption ? caption.textContent.trim().slice(0, 100) : "",
              width: w.scrollWidth, frame: w.clientWidth}; });
  // header swatches on a line of their own: the swatch's line against its label's first letter
  out.loneSwatches = Array.prototype.filter.call(doc.querySelectorAll("th .swatch"),
    function (swatch) {
      var node = swatch.nextSibling;
      while (node && node.nodeType !== Node.TEXT_NODE) { node = node.firstChild || node.nextSibling; }
      if (!node) { node = swatch.parentNode.nextSibling; }
      if (!node || !node.textContent.length) { return false; }
      var range = doc.createRange();
      range.setStart(node, 0); range.setEnd(node, 1);
      var letter = range.getBoundingClientRect(), box = swatch.getBoundingClientRect();
      return Math.abs((letter.top + letter.bottom) / 2 - (box.top + box.bottom) / 2) > letter.height / 2;
    }).map(function (swatch) { return swatch.closest("th").textContent.trim(); });
  function column(table, index) {
    return Array.prototype.map.call(table.tBodies[0].rows, function (row) {
      return row.cells[index].textContent.trim(); });
  }
  var board = doc.querySelector("#leaderboard ~ .pair table, #leaderboard ~ div table");
  if (board) {
    var heads = Array.prototype.map.call(board.tHead.rows[0].cells, function (c) {
      return c.textContent.trim(); });
    var first = heads.findIndex(function (h) { return h.indexOf("k = ") === 0; });
    out.leaderboard = {heads: heads, ranks: column(board, first)};
    var header = board.tHead.rows[0].cells[first];
    header.click();
    out.leaderboard.ascending = column(board, first);
    header.click();
    out.leaderboard.descending = column(board, first);
    out.leaderboard.sortState = header.getAttribute("aria-sort");
  }
  document.getElementById("out").textContent = JSON.stringify(out);
};
frame.src = decodeURIComponent(location.search.slice(1));
</script></body></html>"""


def measure(base_url: str, page: str, tmp_path: Path) -> dict:
    """What the harness measured of `page` (a path under the served folder)."""
    dom = render(f"{base_url}/__harness.html?{page}", tmp_path, None, budget_ms=20000)
    text = dom.split('<pre id="out">', 1)[-1].split("</pre>", 1)[0]
    assert text != "not measured" and text.startswith("{"), f"{page} was not measured: {text[:200]}"
    return json.loads(text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def serve(folder: Path):
    """A local HTTP server of `folder`, with the harness at /__harness.html."""
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def do_GET(self):
            if self.path.startswith("/__harness.html"):
                body = HARNESS.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def published():
    if not (REPORTS / "default" / "index.html").exists():
        pytest.skip("no published default report under reports/")
    chromium()
    server, url = serve(REPORTS)
    yield url
    server.shutdown()


@pytest.fixture(scope="module")
def measured(published, tmp_path_factory):
    """`measure` of a published page, once per page for the tests of this module."""
    done = {}

    def get(page: str) -> dict:
        if page not in done:
            done[page] = measure(published, page, tmp_path_factory.mktemp("measure"))
        return done[page]
    return get


@pytest.mark.parametrize("page", PAGES)
def test_no_table_of_a_published_page_hides_columns_at_1400_px(measured, page):
    """Every table of every committed page, folded ones opened, fits a 1400 px window: no
    table's frame scrolls sideways, none reaches past the page, the page does not scroll
    sideways."""
    m = measured(page)
    assert m["tables"] > 0, f"{page}: no table measured"
    assert m["hiddenColumns"] == [], (
        f"{page}: {len(m['hiddenColumns'])} of {m['tables']} tables scroll sideways at "
        f"1400 px: {m['hiddenColumns']}")
    assert m["wideTables"] == 0 and m["scrollWidth"] <= m["clientWidth"] + 1, m
    assert m["loneSwatches"] == [], (
        f"{page}: a header's colour swatch on a line of its own: {m['loneSwatches']}")


def _rank(text: str) -> float:
    return float(text.split()[0].replace("\u2212", "-"))


def test_published_default_report_reads_at_1400_px(published, measured, tmp_path):
    """The default report at 1400 px: the summary first, no horizontal overflow of the page or
    of a table's frame, the leaderboard's first row the best mean rank, a click on its column
    sorts it both ways, no figure taller than two screens; a screenshot of the first screen."""
    m = measured("default/index.html")
    assert m["h2"][0] == "summary", m["h2"]
    assert m["scrollWidth"] <= m["clientWidth"] + 1, m
    assert m["wideTables"] == 0 and m["hiddenColumns"] == [], m["hiddenColumns"]
    assert m["figureHeights"] and max(m["figureHeights"]) <= 2000, m["figureHeights"]
    board = m["leaderboard"]
    ranks = [_rank(r) for r in board["ranks"]]
    assert ranks[0] == min(ranks), board
    ascending = [_rank(r) for r in board["ascending"]]
    assert ascending == sorted(ranks) and board["descending"] == board["ascending"][::-1]
    assert board["sortState"] == "descending"
    shot = ARTIFACTS / "published-default.png"
    render(f"{published}/default/index.html", tmp_path, shot, budget_ms=5000)
    assert shot.stat().st_size > 10_000


@pytest.mark.parametrize("report", ["shigeto-2017", "abou-moustafa-2017"])
def test_published_paper_report_reads_at_1400_px(published, measured, tmp_path, report):
    """A paper's report at 1400 px: the summary first, no horizontal overflow of the page or of
    a table's frame, the leaderboard's first row the best mean rank, no figure taller than two
    screens."""
    m = measured(f"{report}/index.html")
    assert m["h2"][0] == "summary", m["h2"]
    assert m["scrollWidth"] <= m["clientWidth"] + 1, m
    assert m["wideTables"] == 0 and m["hiddenColumns"] == [], m["hiddenColumns"]
    assert m["figureHeights"] and max(m["figureHeights"]) <= 2000, m["figureHeights"]
    ranks = [_rank(r) for r in m["leaderboard"]["ranks"]]
    assert ranks[0] == min(ranks), m["leaderboard"]
    shot = ARTIFACTS / f"published-{report}.png"
    render(f"{published}/{report}/index.html", tmp_path, shot, budget_ms=5000)
    assert shot.stat().st_size > 10_000


def test_published_scoreboard_reads_at_1400_px(published, measured, tmp_path):
    """The scoreboard at 1400 px: the verdicts and the list of reports first, no overflow."""
    m = measured("index.html")
    assert m["h2"][:2] == ["verdicts", "reports"], m["h2"]
    assert m["scrollWidth"] <= m["clientWidth"] + 1, m
    assert m["wideTables"] == 0 and m["hiddenColumns"] == [], m["hiddenColumns"]
    shot = ARTIFACTS / "published-scoreboard.png"
    render(f"{published}/index.html", tmp_path, shot, budget_ms=5000)
    assert shot.stat().st_size > 10_000


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


@pytest.mark.workflow
def test_report_shows_the_leaderboard(report_server, tmp_path):
    dom = render(report_server, tmp_path, ARTIFACTS / "report.png", budget_ms=2000)
    assert "<h2 id=\"leaderboard\">Leaderboard</h2>" in dom
    assert "Mean rank per k" in dom and "euclidean" in dom
    assert "<img" in dom and "figures/" in dom
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


@pytest.mark.workflow
def test_mlflow_ui_lists_the_experiments_runs(mlflow_ui, smoke_run, tmp_path):
    """The report's link to the runs view (`MODEL_TRAINING`) opens on the runs in the MLflow 3
    UI's "Model training" workflow, not on its GenAI overview."""
    from dmlbench.report.base import MODEL_TRAINING

    _, env = smoke_run
    mlflow.set_tracking_uri(env["MLFLOW_TRACKING_URI"])
    exp = mlflow.get_experiment_by_name("smoke")
    dom = render(f"{mlflow_ui}/#/experiments/{exp.experiment_id}/runs?{MODEL_TRAINING}", tmp_path,
                 ARTIFACTS / "mlflow.png", budget_ms=15000)
    for name in ("iris / euclidean", "wine / lmnn"):
        assert name in dom, f"run {name!r} not visible in the MLflow UI"
    assert (ARTIFACTS / "mlflow.png").stat().st_size > 10_000
