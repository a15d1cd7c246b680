"""A cluster in the network lab: PostgreSQL and nginx on an origin host O, and three Ferry
members, each on a host (namespace) of its own with one link to O. Root only.

    m1 ──veth── O ──veth── m2          mK 10.213.1K.2, O's side 10.213.1K.1 (K = 1, 2, 3)
                │
               veth── m3

O runs nginx (the origin, its access log as lab.py's) and PostgreSQL 13+ (Debian's, on port 5432,
trusting the lab's addresses). Every member runs `ferry serve --database postgres://…@O/ferry
--member mK` with a state folder of its own and one library folder for all (storage every
member shares: the namespaces share the host's file systems). Cutting a member off is
`link_down(k)`: its only link goes down, so it reaches neither the database nor the origin.

    with ClusterLab(members=3) as cluster:
        cluster.add_file("a.bin", 8 << 20)
        ids = cluster.get(1, [cluster.url("a.bin")])        # queued through member 1's CLI
        cluster.wait_all_completed(ids, timeout=60)
        cluster.db("SELECT id, owner FROM transfer")        # psql -At in O
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from lab import Lab, _ip
from ferry import ferry_binary

PG_PORT = 5432


def postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"))
    if not found:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    return found[-1].parent


class ClusterLab(Lab):
    def __init__(self, members: int = 3, lease_seconds: int = 10, max_concurrent: int = 4, server_extra: str = "", **kwargs):
        super().__init__(server_extra=server_extra, **kwargs)
        self.count = members
        self.lease_seconds = lease_seconds
        self.max_concurrent = max_concurrent
        # The lab's client namespace is not made; members take its place.
        self.client = None
        self.members = [f"{self.prefix}m{k}" for k in range(1, members + 1)]
        self.member_ip = {k: f"10.213.1{k}.2" for k in range(1, members + 1)}
        self.origin_side = {k: f"10.213.1{k}.1" for k in range(1, members + 1)}
        self.member_dev = {k: f"{self.prefix}m{k}o" for k in range(1, members + 1)}
        self.library = self.workdir / "shared"
        self.daemons: dict[int, subprocess.Popen] = {}
        self.postgres: subprocess.Popen | None = None

    # MARK: Setup

    def _build(self):
        self.www.mkdir(parents=True, exist_ok=True)
        for ns in (self.origin, *self.members):
            _ip("netns", "add", ns)
            self.namespaces.append(ns)
            self._write_etc(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        for k, ns in enumerate(self.members, start=1):
            self._veth(ns, self.member_dev[k], self.member_ip[k], self.origin, f"{self.prefix}o{k}m", self.origin_side[k])
            self.resolve(self.origin_name, self.origin_side[k], ns=ns)
        self._start_nginx()
        self._init_postgres()
        self.start_postgres()
        self.psql("CREATE DATABASE ferry", database="postgres")
        self.library.mkdir(parents=True, exist_ok=True)

    def _init_postgres(self):
        self.pgdata = self.workdir / "pg"
        os.chmod(self.workdir, 0o755)
        self.pgdata.mkdir(mode=0o700)
        shutil_chown(self.pgdata, "postgres")
        subprocess.run(["runuser", "-u", "postgres", "--", postgres_bin() / "initdb", "-D", self.pgdata, "-A", "trust", "-U", "postgres",
                        "--no-sync"], check=True, capture_output=True)
        with open(self.pgdata / "pg_hba.conf", "a") as hba:
            hba.write("host all all 10.213.0.0/16 trust\n")

    def start_postgres(self):
        """Starts (or starts again) PostgreSQL in O, listening on every address there."""
        log = self.workdir / "postgres.log"
        self.postgres = self.exec_in(self.origin, [
            "runuser", "-u", "postgres", "--", postgres_bin() / "postgres", "-D", self.pgdata, "-p", PG_PORT,
            "-c", "listen_addresses=*", "-c", f"unix_socket_directories={self.pgdata}", "-c", "fsync=off",
            "-c", "max_connections=200",
        ], stdout=open(log, "ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.postgres.poll() is not None:
                raise RuntimeError(f"postgres exited at start: {log.read_text(errors='replace')[-2000:]}")
            if self.run_in(self.origin, ["runuser", "-u", "postgres", "--", postgres_bin() / "pg_isready", "-q", "-h", self.pgdata,
                                         "-p", PG_PORT], check=False).returncode == 0:
                return
            time.sleep(0.1)
        raise TimeoutError("postgres did not accept connections within 30 s")

    def stop_postgres(self):
        """Stops PostgreSQL at once (a fast shutdown: clients are cut off)."""
        self.stop_process(self.postgres, signal.SIGINT, timeout=20)

    def psql(self, sql: str, database: str = "ferry") -> str:
        result = self.run_in(self.origin, ["runuser", "-u", "postgres", "--", postgres_bin() / "psql", "-h", self.pgdata, "-p", PG_PORT, "-d", database, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
        return result.stdout.strip()

    def db(self, sql: str) -> list[list[str]]:
        """Rows of a query in the ferry database, each a list of its columns as text."""
        out = self.psql(sql)
        return [line.split("|") for line in out.splitlines()] if out else []

    # MARK: Members

    def database_url(self, k: int) -> str:
        return f"postgres://postgres@{self.origin_side[k]}:{PG_PORT}/ferry"

    def state(self, k: int) -> Path:
        return self.workdir / f"m{k}"

    def env(self, k: int) -> list[str]:
        return [f"XDG_DATA_HOME={self.library}", f"XDG_STATE_HOME={self.state(k)}", "TERM=dumb"]

    def start_member(self, k: int, *extra: str) -> subprocess.Popen:
        state = self.state(k)
        (state / "ferry").mkdir(parents=True, exist_ok=True)
        info = state / "ferry" / "daemon.json"
        info.unlink(missing_ok=True)
        log = state / "daemon.log"
        process = self.exec_in(self.members[k - 1], [
            "env", *self.env(k), ferry_binary(), "serve", "--port", "7447", "--database", self.database_url(k), "--member", f"m{k}",
            "--lease-seconds", self.lease_seconds, "--max-concurrent", self.max_concurrent, *extra,
        ], stdout=open(log, "ab"), stderr=subprocess.STDOUT)
        self.daemons[k] = process
        deadline = time.monotonic() + 30
        while not info.exists():
            if process.poll() is not None:
                raise RuntimeError(f"member {k} exited at start: {log.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"member {k} did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        return process

    def kill_member(self, k: int):
        """SIGKILL: the member's process dies at once, holding its leases."""
        self.stop_process(self.daemons[k], signal.SIGKILL)

    def log(self, k: int) -> str:
        return (self.state(k) / "daemon.log").read_text(errors="replace")

    def cli(self, k: int, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return self.run_in(self.members[k - 1], ["env", *self.env(k), ferry_binary(), *map(str, args)], timeout=timeout)

    def get(self, k: int, urls: list[str], *options: str) -> list[int]:
        """Queues downloads through member k's CLI (`options`: more `ferry get` flags); their ids."""
        listed = json.loads(self.cli(k, "get", "--no-wait", "--json", *options, *urls).stdout)
        return [t["id"] for t in listed]

    def transfers(self, k: int) -> list[dict]:
        return json.loads(self.cli(k, "ls", "--all", "--json").stdout)

    # MARK: Links

    def shape_member(self, k: int, rate: str):
        """Limits O's egress toward member k to `rate` (tc tbf, as lab.py's shape): the member's
        own link, as each host of a real cluster has its own."""
        self.origin_dev = f"{self.prefix}o{k}m"
        self.shape(rate)

    def link_down(self, k: int):
        self.run_in(self.members[k - 1], ["ip", "link", "set", self.member_dev[k], "down"])

    def link_up(self, k: int):
        self.run_in(self.members[k - 1], ["ip", "link", "set", self.member_dev[k], "up"])

    # MARK: Waiting

    def states(self) -> dict[int, tuple[str, str | None]]:
        """Every transfer's state and holder, from the database."""
        return {int(row[0]): (row[1], row[2] or None) for row in self.db('SELECT id, state, "owner" FROM transfer')}

    def wait(self, condition, timeout: float, what: str, interval: float = 0.2):
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            time.sleep(interval)


def shutil_chown(path: Path, user: str):
    import shutil
    shutil.chown(path, user, user)
