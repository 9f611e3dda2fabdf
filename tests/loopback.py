"""A loopback HTTP server for the download tests: serves a directory, with failure modes chosen
by the first path component:

    /ok/<path>         the file (404 when missing)
    /truncate/<path>   announces the full Content-Length, sends half the body, closes
    /slow/<path>       waits `slow_seconds` before answering (a read timeout)
    /flaky/<path>      HTTP 503 on the first request for a path, the file afterwards
"""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from pathlib import Path


class _Handler(http.server.BaseHTTPRequestHandler):
    root: Path
    slow_seconds: float
    requests: list
    seen: set

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_HEAD(self):
        self._serve(body=False)

    def do_GET(self):
        self._serve(body=True)

    def _serve(self, body: bool):
        self.requests.append((self.command, self.path))
        mode, _, rest = self.path.lstrip("/").partition("/")
        path = self.root / rest
        if mode == "slow":
            time.sleep(self.slow_seconds)
        if mode == "flaky" and self.path not in self.seen:
            self.seen.add(self.path)
            self.send_error(503, "try again")
            return
        if mode not in ("ok", "truncate", "slow", "flaky") or not path.is_file():
            self.send_error(404, "Not Found")
            return
        content = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        if not body:
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if mode == "truncate":
                self.wfile.write(content[: len(content) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(content)


@contextlib.contextmanager
def serve(root: Path, slow_seconds: float = 2.0):
    """Serve `root` on 127.0.0.1 (a free port); yield (base URL, list of requests)."""
    handler = type("Handler", (_Handler,), {"root": Path(root), "slow_seconds": slow_seconds,
                                            "requests": [], "seen": set()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.requests
    finally:
        server.shutdown()
        server.server_close()


def uci_dir() -> Path:
    """The team's copies of UCI files (../shared/data/uci), used only as test references."""
    import os

    candidates = [os.environ.get("DMLBENCH_UCI_DIR"),
                  Path(__file__).resolve().parents[2] / "shared" / "data" / "uci",
                  "/work/shared/data/uci"]
    for candidate in filter(None, candidates):
        if Path(candidate).is_dir():
            return Path(candidate)
    return Path("/nonexistent")
