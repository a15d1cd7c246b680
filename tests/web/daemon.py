"""The real `ferry` daemon, started and stopped the way a user does (`ferry serve --detach`,
`ferry open --print-only`, `ferry stop`), in its own FERRY_HOME."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def ferry_binary() -> Path:
    return Path(os.environ.get("FERRY_BIN") or REPO / ".build" / "debug" / "ferry")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False
    return state != "Z"


class APIError(Exception):
    def __init__(self, method: str, path: str, status: int, body: bytes):
        self.status = status
        try:
            self.error = json.loads(body)["error"]
        except (ValueError, KeyError, TypeError):
            self.error = {"code": "", "message": body.decode(errors="replace")}
        super().__init__(f"{method} {path}: {status} {self.error}")


class Daemon:
    def __init__(self, home: Path, catalog_url: str, port: int = 0):
        self.home = home
        self.port = port
        self.binary = ferry_binary()
        self.env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_DATA_HOME", "XDG_STATE_HOME")}
        self.env.update(FERRY_HOME=str(home), FERRY_PORT=str(port), FERRY_CATALOG_URL=catalog_url)
        self.url = ""
        self.pid = 0

    @property
    def state(self) -> Path:
        return self.home / "state"

    @property
    def library(self) -> Path:
        return self.home / "library"

    def run(self, *args: str, timeout: float = 60) -> str:
        done = subprocess.run([str(self.binary), *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"ferry {' '.join(args)} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}\n{self.log_tail()}")
        return done.stdout

    def start(self, *args: str) -> "Daemon":
        self.run("serve", "--detach", *args, timeout=40)
        info = json.loads((self.state / "daemon.json").read_text())
        self.url, self.pid = info["url"], info["pid"]
        return self

    def login_url(self, user: str | None = None) -> str:
        """A one-time link for this machine's own user, or for an account (its own places)."""
        return self.run("open", "--print-only", *(("--user", user) if user else ())).strip().splitlines()[-1]

    def stop(self):
        """Graceful (`ferry stop`); kill -9 if that fails."""
        if not self.pid or not alive(self.pid):
            return
        try:
            self.run("stop", timeout=40)
        except Exception:
            pass
        self.wait_dead(10)
        if alive(self.pid):
            self.kill()

    def kill(self):
        """kill -9 of the daemon's process group (`serve --detach` makes it a session leader)."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        self.wait_dead(10)

    def wait_dead(self, seconds: float):
        deadline = time.monotonic() + seconds
        while alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.05)

    def token(self) -> str:
        return (self.state / "token").read_text().strip()

    def api(self, method: str, path: str, body: dict | None = None, token: str | None = None):
        """Calls the API with the daemon's token, or an account's (for test setup and checks,
        never for what the page must do)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={"Authorization": f"Bearer {token or self.token()}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                text = response.read()
                return json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            raise APIError(method, path, error.code, error.read()) from None

    def transfers(self) -> list[dict]:
        return self.api("GET", "/v1/transfers?state=all")["transfers"]

    def log_tail(self, lines: int = 30) -> str:
        log = self.state / "daemon.log"
        if not log.exists():
            return ""
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
