"""Browser checks in headless Chromium: every committed report page and the scoreboard page
(`reports/`) at 1400 and 800 px: a first page (folded sections closed) under 10 000 px, no table
whose columns scroll out of view, no table of methods cut between its methods; the default
report, two paper reports and the scoreboard also read right (no horizontal overflow, the
leaderboard's best rank first, sorting by a column, no figure over two screens, a link to a
folded section opens it); a page of records; the smoke run's report and the MLflow UI (the
report's link opens the runs with their accuracy and fit time).

Chromium comes from Debian (`apt-get install chromium`); the test installs it when it is missing
and it can (root with apt-get), and skips with the reason otherwise. A page is measured by a
harness page that loads it in a frame of the same origin (1400 or 800 px wide) and writes what it
measured into its own DOM, which `--dump-dom` returns (no driver needed). Screenshots of the
first screen are saved under test-artifacts/ for a person to look at.
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
from urllib.parse import quote

import mlflow
import pytest
from conftest import REPO

pytestmark = pytest.mark.slow
ARTIFACTS = REPO / "test-artifacts"
REPORTS = REPO / "reports"
#: every committed page: each report's and the scoreboard (paths under reports/); not the
#: pages of records (`record-views/`, a sample is measured apart)
PAGES = sorted(str(p.relative_to(REPORTS)) for p in REPORTS.rglob("*.html")
               if not {"records", "record-views"} & set(p.relative_to(REPORTS).parts))
#: the window widths every page must read at: a laptop's and a narrow window's
WIDTHS = [1400, 800]
#: the tallest first page (folded sections closed) a reader scrolls, in pixels
FIRST_PAGE_PX = 10_000
#: one Chromium run's limit: it starts in seconds, but minutes on a machine many jobs share
BROWSER_TIMEOUT_S = 240
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]


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


def render(url: str, tmp_path: Path, screenshot: Path | None, budget_ms: int = 10000,
           width: int = 1400) -> str:
    """The DOM of `url` after its scripts ran, and a screenshot of its first screen in a window
    `width` px wide."""
    browser = chromium()
    profile = tmp_path / f"profile-{abs(hash(url))}"
    # the virtual-time budget lets the page's scripts run; --timeout (real time) makes Chromium
    # stop and give what it has before the process is killed (a busy machine, a page that polls)
    common = [browser, *CHROME_FLAGS, f"--window-size={width},1000", f"--user-data-dir={profile}",
              f"--virtual-time-budget={budget_ms}", f"--timeout={(BROWSER_TIMEOUT_S - 60) * 1000}"]
    dom = run_browser([*common, "--dump-dom", url])
    if screenshot is not None:
        ARTIFACTS.mkdir(exist_ok=True)
        run_browser([*common, f"--screenshot={screenshot}", url])
    return dom


#: loads the page `?<width>&<page>` in a frame of that width (1000 px high) and writes what it
#: measured into #out as JSON: first the page as a reader first scrolls it (folded sections and
#: tables closed), then with everything unfolded (as a reader's clicks open it)
HARNESS = """<!DOCTYPE html><html><body style="margin:0">
<pre id="out">not measured</pre>
<iframe id="frame" style="height:1000px;border:0"></iframe>
<script>
var frame = document.getElementById("frame");
var query = location.search.slice(1), cut = query.indexOf("&");
frame.style.width = query.slice(0, cut) + "px";
frame.onload = function () {
  var doc = frame.contentDocument, out = {};
  var root = doc.documentElement;
  out.firstPage = root.scrollHeight;
  out.openSections = Array.prototype.map.call(doc.querySelectorAll("details.section[open]"),
    function (d) { return d.id; });
  out.h2 = Array.prototype.map.call(doc.querySelectorAll("h2"), function (h) {
    return h.id || (h.closest("[id]") || {}).id || ""; });
  out.figureHeights = Array.prototype.map.call(doc.querySelectorAll("img"), function (img) {
    return img.getBoundingClientRect().height; });
  function labels(table, selector) {
    return Array.prototype.map.call(table.querySelectorAll(selector), function (c) {
      return c.textContent.trim(); });
  }
  var board = doc.querySelector("#leaderboard table, #leaderboard ~ .pair table, #leaderboard ~ div table");
  var methods = board ? labels(board, "tbody th") : [];
  out.methods = methods;
  // folded sections, tables and cells opened, as a reader's clicks show them
  Array.prototype.forEach.call(doc.querySelectorAll("details"), function (d) { d.open = true; });
  out.unfolded = root.scrollHeight;
  out.scrollWidth = root.scrollWidth;
  out.clientWidth = root.clientWidth;
  out.tables = doc.querySelectorAll(".table-wrap").length;
  out.wideTables = Array.prototype.filter.call(doc.querySelectorAll("table"), function (t) {
    var box = t.parentNode.getBoundingClientRect(); return box.right > root.clientWidth + 1;
  }).length;
  function sectionOf(node) {
    var sections = Array.prototype.filter.call(doc.querySelectorAll("h2"), function (h) {
      return h.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING; });
    var h = sections.length ? sections[sections.length - 1] : null;
    return h ? (h.id || (h.closest("[id]") || {}).id || "") : "";
  }
  function captionOf(wrap) {
    var caption = wrap.previousElementSibling;
    while (caption && caption.classList.contains("table-wrap")) {
      caption = caption.previousElementSibling; }
    for (var up = wrap.parentNode; !caption && up && /table-parts|-window/.test(up.className);
         up = up.parentNode) {
      caption = up.previousElementSibling;
      while (caption && /-window/.test(caption.className)) { caption = caption.previousElementSibling; }
    }
    return caption ? caption.textContent.trim().slice(0, 100) : "";
  }
  // tables whose frame scrolls sideways (columns out of view): the section they are in, the
  // caption above them, their width and their frame's
  out.hiddenColumns = Array.prototype.filter.call(doc.querySelectorAll(".table-wrap"),
    function (w) { return w.scrollWidth > w.clientWidth + 1; }).map(function (w) {
      return {section: sectionOf(w), caption: captionOf(w), width: w.scrollWidth,
              frame: w.clientWidth}; });
  // a table cut into parts (neighbouring frames) whose rows are not methods: the methods among
  // its column headers must be the same in every part (no method cut off from the others)
  var groups = [], seen = new Set();
  Array.prototype.forEach.call(doc.querySelectorAll(".table-wrap"), function (w) {
    if (seen.has(w)) { return; }
    var group = [w]; seen.add(w);
    var next = w.nextElementSibling;
    while (next && next.classList.contains("table-wrap")) {
      group.push(next); seen.add(next); next = next.nextElementSibling; }
    groups.push(group);
  });
  var isMethod = function (label) { return methods.indexOf(label) >= 0; };
  out.splitMethods = groups.filter(function (group) {
    if (group.length < 2) { return false; }
    var parts = group.map(function (w) {
      var table = w.querySelector("table");
      return {heads: labels(table, "thead th").slice(1).filter(isMethod),
              rows: labels(table, "tbody th").filter(isMethod)}; });
    if (parts.some(function (p) { return p.rows.length; })) { return false; }
    var first = parts[0].heads.slice().sort().join("|");
    return parts.some(function (p) { return p.heads.slice().sort().join("|") !== first; });
  }).map(function (group) {
    return {section: sectionOf(group[0]), caption: captionOf(group[0]), parts: group.length}; });
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
frame.src = decodeURIComponent(query.slice(cut + 1));
</script></body></html>"""


def measure(base_url: str, page: str, tmp_path: Path, width: int = 1400) -> dict:
    """What the harness measured of `page` (a path under the served folder) in a frame
    `width` px wide."""
    dom = render(f"{base_url}/__harness.html?{width}&{quote(page, safe='/')}", tmp_path, None,
                 budget_ms=20000)
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
    """`measure` of a published page at a width, once per (page, width) for this module."""
    done = {}

    def get(page: str, width: int = 1400) -> dict:
        if (page, width) not in done:
            done[page, width] = measure(published, page, tmp_path_factory.mktemp("measure"),
                                        width)
        return done[page, width]
    return get


def _reads_at(m: dict, page: str, width: int) -> None:
    """Every table of a measured page, folded ones opened, fits the window: no table's frame
    scrolls sideways, none reaches past the page, the page does not scroll sideways; no colour
    swatch of a header on a line of its own; no table of methods cut between its methods (a
    table cut into parts whose rows are not methods has the same methods in every part)."""
    assert m["hiddenColumns"] == [], (
        f"{page} at {width} px: {len(m['hiddenColumns'])} of {m['tables']} tables scroll "
        f"sideways: {m['hiddenColumns']}")
    assert m["wideTables"] == 0 and m["scrollWidth"] <= m["clientWidth"] + 1, m
    assert m["loneSwatches"] == [], (
        f"{page} at {width} px: a header's colour swatch on a line of its own: "
        f"{m['loneSwatches']}")
    assert m["splitMethods"] == [], (
        f"{page} at {width} px: tables whose methods are cut into parts: {m['splitMethods']}")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_every_published_page_reads_at_1400_and_800_px(measured, page, width):
    """Every committed page at 1400 and 800 px: the first page a reader scrolls (the summary,
    the list of sections, folded sections closed) is under `FIRST_PAGE_PX`, and every table
    reads as `_reads_at` says."""
    m = measured(page, width)
    assert m["tables"] > 0, f"{page}: no table measured"
    assert m["firstPage"] < FIRST_PAGE_PX, (
        f"{page} at {width} px: the first page is {m['firstPage']} px tall "
        f"(unfolded {m['unfolded']} px)")
    _reads_at(m, page, width)


def _rank(text: str) -> float:
    return float(text.split()[0].replace("\u2212", "-"))


def test_published_default_report_reads_at_1400_px(published, measured, tmp_path):
    """The default report at 1400 px: the summary first, the leaderboard's first row the best
    mean rank, a click on its column sorts it both ways, no figure taller than two screens; a
    link to a folded section opens it; screenshots of the first screen at 1400 and 800 px."""
    m = measured("default/index.html")
    assert m["h2"][0] == "summary", m["h2"]
    assert m["figureHeights"] and max(m["figureHeights"]) <= 2000, m["figureHeights"]
    board = m["leaderboard"]
    ranks = [_rank(r) for r in board["ranks"]]
    assert ranks[0] == min(ranks), board
    ascending = [_rank(r) for r in board["ascending"]]
    assert ascending == sorted(ranks) and board["descending"] == board["ascending"][::-1]
    assert board["sortState"] == "descending"
    assert "statistics" not in m["openSections"]
    assert "statistics" in measured("default/index.html#statistics")["openSections"]
    for width in WIDTHS:
        shot = ARTIFACTS / f"published-default-{width}.png"
        render(f"{published}/default/index.html", tmp_path, shot, budget_ms=5000, width=width)
        assert shot.stat().st_size > 10_000


@pytest.mark.parametrize("report", ["shigeto-2017", "abou-moustafa-2017"])
def test_published_paper_report_reads_at_1400_px(published, measured, tmp_path, report):
    """A paper's report at 1400 px: the summary first, the leaderboard's first row the best
    mean rank, no figure taller than two screens."""
    m = measured(f"{report}/index.html")
    assert m["h2"][0] == "summary", m["h2"]
    assert m["figureHeights"] and max(m["figureHeights"]) <= 2000, m["figureHeights"]
    ranks = [_rank(r) for r in m["leaderboard"]["ranks"]]
    assert ranks[0] == min(ranks), m["leaderboard"]
    shot = ARTIFACTS / f"published-{report}.png"
    render(f"{published}/{report}/index.html", tmp_path, shot, budget_ms=5000)
    assert shot.stat().st_size > 10_000


def test_published_scoreboard_reads_at_1400_px(published, measured, tmp_path):
    """The scoreboard at 1400 px: the verdicts and the list of reports first."""
    m = measured("index.html")
    assert m["h2"][:2] == ["verdicts", "reports"], m["h2"]
    shot = ARTIFACTS / "published-scoreboard.png"
    render(f"{published}/index.html", tmp_path, shot, budget_ms=5000)
    assert shot.stat().st_size > 10_000


@pytest.mark.parametrize("width", WIDTHS)
def test_a_published_page_of_records_reads_at_1400_and_800_px(measured, width):
    """A page of records (record-views/, where the default report's cells link) at 1400 and
    800 px: its tables fit, none scrolls sideways."""
    views = sorted((REPORTS / "default" / "record-views").glob("*.html"))
    if not views:
        pytest.fail("reports/default has no record-views/: rebuild it (reports/README.md)")
    page = str(views[0].relative_to(REPORTS))
    m = measured(page, width)
    assert m["tables"] > 0
    _reads_at(m, page, width)


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
    assert 'id="leaderboard"' in dom and "<h2>Leaderboard</h2>" in dom
    assert "Mean rank per k" in dom and "euclidean" in dom
    assert "<img" in dom and "figures/" in dom
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


@pytest.mark.workflow
@pytest.mark.parametrize("width", WIDTHS)
def test_the_smoke_report_reads_at_1400_and_800_px(smoke_run, tmp_path, width):
    """A report this code builds (the smoke run's) at 1400 and 800 px: the summary first, the
    sections below it folded but the leaderboard, a short first page, every table fitting."""
    work, _ = smoke_run
    server, url = serve(work / "reports" / "smoke")
    try:
        m = measure(url, "index.html", tmp_path, width)
    finally:
        server.shutdown()
    assert m["h2"][0] == "summary" and m["openSections"] == ["leaderboard"], m
    assert m["firstPage"] < FIRST_PAGE_PX and m["firstPage"] < m["unfolded"], m
    _reads_at(m, "smoke", width)


@pytest.mark.workflow
def test_mlflow_ui_lists_the_experiments_runs(mlflow_ui, smoke_run, tmp_path):
    """The report's link to the runs view (`Context.experiment_url`) opens on the runs in the
    MLflow 3 UI's "Model training" workflow, not on its GenAI overview, with the columns the
    ingest chose: the accuracy at k = 1 and the fit time of each parent run."""
    from dmlbench.report.base import Context

    _, env = smoke_run
    mlflow.set_tracking_uri(env["MLFLOW_TRACKING_URI"])
    exp = mlflow.get_experiment_by_name("smoke")
    link = Context(None, None, None, 0, [], mlflow_ui=mlflow_ui).experiment_url(exp.experiment_id)
    names = ("iris / euclidean", "wine / lmnn")
    # Chromium's virtual time does not wait for the UI server's answers: on a busy machine the
    # runs may arrive after the first dump (its screenshot, taken later, shows them), so the
    # page is loaded up to three times
    for _ in range(3):
        dom = render(link, tmp_path, ARTIFACTS / "mlflow.png", budget_ms=15000)
        if all(name in dom for name in names):
            break
    for name in names:
        assert name in dom, f"run {name!r} not visible in the MLflow UI"
    for column in ("accuracy_k1_mean", "fit_wall_s_mean"):
        assert column in dom, f"column {column!r} not shown in the MLflow UI's runs table"
    assert (ARTIFACTS / "mlflow.png").stat().st_size > 10_000
