"""Two daemons on one PostgreSQL queue (docs/CLUSTER.md): each one's web app shows the whole
queue with the member that runs each transfer, a command given on one stops the other's
download, and a podcast subscribed on one is on the other's. PostgreSQL is Debian's, started here on loopback in a folder of the test's own."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from daemon import free_port
from helpers import create, download_row, episode, transfer

BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"))


@pytest.fixture(scope="module")
def database():
    """postgres://…/ferry on a PostgreSQL of its own (stopped afterwards)."""
    if not BIN:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql; scripts/test installs it)")
    bin = BIN[-1].parent
    folder = Path(tempfile.mkdtemp(prefix="ferry-web-pg-"))
    data = folder / "data"
    # initdb refuses to run as root: the server runs as the package's user then.
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    os.chmod(folder, 0o755)
    data.mkdir(mode=0o700)
    if as_user:
        shutil.chown(data, "postgres", "postgres")
    subprocess.run([*as_user, bin / "initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"], check=True, capture_output=True)
    port = free_port()
    server = subprocess.Popen([*as_user, bin / "postgres", "-D", data, "-p", str(port), "-k", data, "-c", "listen_addresses=127.0.0.1",
                               "-c", "fsync=off"], stdout=open(folder / "log", "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while subprocess.run([bin / "pg_isready", "-q", "-h", "127.0.0.1", "-p", str(port)]).returncode != 0:
            assert server.poll() is None and time.monotonic() < deadline, (folder / "log").read_text()[-2000:]
            time.sleep(0.1)
        subprocess.run([bin / "psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c", "CREATE DATABASE ferry"], check=True,
                       capture_output=True)
        yield f"postgres://postgres@127.0.0.1:{port}/ferry"
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


def test_every_member_shows_the_whole_queue_and_who_runs_each_transfer(database, start_daemon, files, pages):
    files.add("/files/cluster.bin", os.urandom(3 << 20), "application/octet-stream", rate=150_000)
    a = start_daemon(args=("--database", database, "--member", "web-a"))
    # One connection: at 150 kB/s each, Ferry's own added connections (ConnectionTuner) would
    # end the download within seconds, before b's page could pause it.
    [queued] = create(a, [files.url("/files/cluster.bin")], options={"connections": 1})
    deadline = time.monotonic() + 20
    while not ((t := transfer(a, queued["id"]))["state"] == "running" and t.get("member") == "web-a"):
        assert time.monotonic() < deadline, f"member web-a never ran it: {t}"
        time.sleep(0.1)

    # Member b did not create it and does not run it, yet lists it, with who does.
    b = start_daemon(args=("--database", database, "--member", "web-b"))
    assert transfer(b, queued["id"])["member"] == "web-a"
    page = pages.new(b, path="#/downloads")
    row = download_row(page, queued["id"])
    expect(row.locator(".download-status")).to_have_text(re.compile(r"of 3\.1 MB · .* · on web-a$"), timeout=15_000)
    cluster = b.api("GET", "/v1/cluster")
    assert cluster["member"] == "web-b"
    holders = {m["id"]: m["transfers"] for m in cluster["members"] if m["alive"]}
    assert holders["web-a"] == [queued["id"]] and holders["web-b"] == []

    # Paused on b's page: a stops downloading it and no longer holds it.
    row.get_by_role("button", name="Pause download").click()
    expect(row.locator(".download-status")).to_have_text(re.compile(r"^Paused · "))
    deadline = time.monotonic() + 15
    while queued["id"] in next(m["transfers"] for m in a.api("GET", "/v1/cluster")["members"] if m["id"] == "web-a"):
        assert time.monotonic() < deadline, "member web-a still holds the paused transfer"
        time.sleep(0.2)
    assert transfer(a, queued["id"])["state"] == "paused"
    held = transfer(a, queued["id"])["bytesReceived"]
    time.sleep(2)
    assert transfer(a, queued["id"])["bytesReceived"] == held, "the paused transfer still moves"


def test_every_member_shows_one_library(database, start_daemon, files, pages):
    """A podcast subscribed in one member's web app is on every member's, with its episodes."""
    a = start_daemon(args=("--database", database, "--member", "web-a"))
    b = start_daemon(args=("--database", database, "--member", "web-b"))
    page = pages.new(a, path="#/podcasts")
    page.locator("#podcast-input").fill(files.url("/feeds/radio.xml"))
    expect(page.get_by_role("button", name="Subscribe")).to_be_visible()
    page.locator("#podcast-input").press("Enter")
    expect(page.locator("h1.podcast-title")).to_have_text("Ferry Test Radio")

    other = pages.new(b, path="#/podcasts")
    card = other.locator(".podcast-card", has_text="Ferry Test Radio")
    expect(card).to_contain_text("4 episodes")
    card.click()
    expect(other.locator("h1.podcast-title")).to_have_text("Ferry Test Radio")
    expect(episode(other, "Night Drive")).to_be_visible()
