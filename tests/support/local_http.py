"""A local HTTP server for the tests that download: ``http_server`` serves a temporary
folder on 127.0.0.1 at a free port, in a thread, and counts requests; ``closed_port_url``
is a URL where nothing listens. Test modules and conftests import the fixtures by name."""

from __future__ import annotations

import http.server
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest


@dataclass
class LocalServer:
    root: Path
    url: str
    requests: list = field(default_factory=list)
    # path (e.g. "/HIGGS.bz2") -> HTTP status to answer instead of the file
    fail: dict = field(default_factory=dict)
    # path -> number of bytes to actually send while announcing the full length
    truncate: dict = field(default_factory=dict)

    def count(self, name: str) -> int:
        return sum(1 for p in self.requests if p == "/" + name)


@pytest.fixture
def http_server(tmp_path):
    """Serve ``tmp_path / "served"`` on 127.0.0.1 at a free port, in a thread."""
    root = tmp_path / "served"
    root.mkdir()
    state = LocalServer(root=root, url="")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):  # noqa: N802 (http.server's naming)
            state.requests.append(self.path)
            if self.path in state.fail:
                self.send_error(state.fail[self.path])
                return
            if self.path in state.truncate:
                body = (root / self.path.lstrip("/")).read_bytes()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: state.truncate[self.path]])
                self.close_connection = True
                return
            super().do_GET()

        def log_message(self, *args):  # keep test output clean
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def closed_port_url():
    """An http URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"
