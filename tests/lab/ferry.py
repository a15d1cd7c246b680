"""The real `ferry` in a lab's client namespace: its daemon (`ferry serve`) and its CLI, with a
FERRY_HOME of the test's own. The binary: FERRY_BIN, else the checkout's .build/debug/ferry."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from lab import Lab

REPO = Path(__file__).resolve().parents[2]


def ferry_binary() -> str:
    binary = os.environ.get("FERRY_BIN") or str(REPO / ".build/debug/ferry")
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"no ferry binary at {binary}: build it (swift build) or set FERRY_BIN")
    return binary


class Ferry:
    """A daemon in `lab.client` and the CLI that talks to it. `env` adds variables (proxies) to
    the daemon's environment, which the lab would otherwise strip of proxy variables."""

    def __init__(self, lab: Lab, home: Path, env: dict[str, str] | None = None):
        self.lab = lab
        self.home = home
        self.binary = ferry_binary()
        self.log = home / "daemon-output.log"
        home.mkdir(parents=True, exist_ok=True)
        extra = [f"{key}={value}" for key, value in (env or {}).items()]
        self.process = lab.exec_in(
            lab.client, ["env", f"FERRY_HOME={home}", *extra, self.binary, "serve"],
            stdout=self.log.open("ab"), stderr=subprocess_stdout(),
        )
        self.wait(lambda: (home / "state/daemon.json").exists(), 20, "the daemon to start")

    @property
    def pid(self) -> int:
        return self.process.pid

    def cli(self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60):
        """Runs `ferry ARGS` in the client namespace against this daemon."""
        stdin = {} if input is None else {"input": input, "stdin": None}
        return self.lab.run_in(self.lab.client, ["env", f"FERRY_HOME={self.home}", "TERM=dumb", self.binary, *args],
                               check=check, timeout=timeout, **stdin)

    def get(self, url: str, *options: str) -> int:
        """Queues a download and returns its id."""
        listed = json.loads(self.cli("get", "--no-wait", "--json", *options, url).stdout)
        return listed[0]["id"]

    def transfer(self, id: int) -> dict:
        return next(t for t in self.transfers() if t["id"] == id)

    def transfers(self) -> list[dict]:
        return json.loads(self.cli("ls", "--all", "--json").stdout)

    def wait_for(self, id: int, predicate, timeout: float, what: str) -> dict:
        """Polls the transfer until `predicate(transfer)`; fails with its last state."""
        last = {}

        def check():
            nonlocal last
            last = self.transfer(id)
            if last["state"] in ("failed", "cancelled") and not predicate(last):
                raise AssertionError(f"transfer {id} is {last['state']}: {last.get('error')}")
            return predicate(last)

        try:
            self.wait(check, timeout, what)
        except AssertionError as error:
            raise AssertionError(f"{error}; last: {json.dumps(last)[:600]}") from None
        return last

    @staticmethod
    def wait(condition, timeout: float, what: str, interval: float = 0.1):
        deadline = time.time() + timeout
        while not condition():
            if time.time() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            time.sleep(interval)

    def stop(self):
        self.lab.stop_process(self.process)


def subprocess_stdout():
    import subprocess
    return subprocess.STDOUT
