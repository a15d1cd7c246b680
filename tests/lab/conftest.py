"""Fixtures for tests that need a network: the lab of lab.py, direct (C ── O) or proxied
(C ── P ── O), each made for one test and deleted after it, whatever the test did. Root only:
without it (or where `ip netns add` is refused) every test here is skipped, saying why."""

from __future__ import annotations

import os
import subprocess

import pytest

from lab import Lab, make_file, sha256

# name → size of the files every lab's nginx serves (made once per session).
FILES = {"small.txt": 0, "one.bin": 1 << 20, "four.bin": 4 << 20, "eight.bin": 8 << 20}


def lab_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the network lab needs root (network namespaces, veth pairs, tc): run tests/lab/run as root"
    probe = f"flprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"'ip netns add' is not permitted here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture(scope="session")
def lab_check():
    reason = lab_unavailable()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def www(tmp_path_factory, lab_check):
    """The folder every lab serves, and the SHA-256 of each of its files (`files` fixture)."""
    folder = tmp_path_factory.mktemp("www")
    for seed, (name, size) in enumerate(FILES.items()):
        if name.endswith(".txt"):
            (folder / name).write_bytes(b"Ferry's network lab.\n" * 100)
        else:
            make_file(folder / name, size, seed=seed)
    return folder


@pytest.fixture(scope="session")
def files(www) -> dict[str, str]:
    return {path.name: sha256(path) for path in www.iterdir()}


def _lab(request, www, proxied):
    lab = Lab(proxied=proxied, www=www).start()
    request.addfinalizer(lambda: _finish(request, lab))
    return lab


def _finish(request, lab: Lab):
    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    if failed:
        print(f"\n--- nginx access log ({lab.origin}) ---")
        print(lab.access_log.read_text(errors="replace")[-3000:] if lab.access_log.exists() else "(none)")
        for name in ("tinyproxy", "danted"):
            if lab.proxied:
                print(f"--- {name} log ---\n{lab.proxy_log(name)[-2000:]}")
    lab.close()


@pytest.fixture
def lab(request, www) -> Lab:
    """C ── O: nginx in O serves `www` as http://files.lab/ (resolved by C's hosts file)."""
    return _lab(request, www, proxied=False)


@pytest.fixture
def proxied_lab(request, www) -> Lab:
    """C ── P ── O, no forwarding in P: tinyproxy (Basic auth) and danted (SOCKS5) in P; the
    origin's name resolves in P only."""
    return _lab(request, www, proxied=True)
