"""The real daemon (tests/web/daemon.py's Daemon) with aria2's RPC on, a loopback file server
(tests/web/servers.py's), and a real aria2c to compare with."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))

from daemon import Daemon, free_port  # noqa: E402
from servers import FileServer  # noqa: E402


class RPC:
    """aria2's JSON-RPC over HTTP POST, raw: what a front end sends."""

    def __init__(self, url: str, secret: str):
        self.url, self.secret = url, secret

    def post(self, payload) -> object:
        return self.exchange(payload)[1]

    def exchange(self, payload) -> tuple[int, object]:
        """POSTs → (HTTP status, parsed answer): aria2 answers a call's error with 400."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        request = urllib.request.Request(self.url, data=body, method="POST", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def send(self, method: str, *params, token: str | None = None) -> dict:
        return self.post({"jsonrpc": "2.0", "id": "t", "method": method, "params": [f"token:{token or self.secret}", *params]})

    def call(self, method: str, *params):
        answer = self.send(method, *params)
        assert "result" in answer, answer
        return answer["result"]


@pytest.fixture(scope="session")
def files():
    server = FileServer()
    yield server
    server.httpd.shutdown()


@pytest.fixture
def ferry(tmp_path):
    port = free_port()
    daemon = Daemon(tmp_path / "home", "http://127.0.0.1:9", 0)
    daemon.start("--aria2-rpc", "--aria2-port", str(port))
    secret = daemon.run("aria2", "secret").strip()
    yield daemon, RPC(f"http://127.0.0.1:{port}/jsonrpc", secret), port
    daemon.stop()


@pytest.fixture
def aria2c(tmp_path):
    port = free_port()
    folder = tmp_path / "aria2"
    folder.mkdir()
    process = subprocess.Popen(
        ["aria2c", "--enable-rpc", f"--rpc-listen-port={port}", "--rpc-secret=aria2-secret", f"--dir={folder}", "--quiet=true", "--no-conf"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    rpc = RPC(f"http://127.0.0.1:{port}/jsonrpc", "aria2-secret")
    deadline = time.monotonic() + 10
    while True:
        try:
            rpc.call("aria2.getVersion")
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    yield rpc
    process.terminate()
    process.wait(timeout=10)
