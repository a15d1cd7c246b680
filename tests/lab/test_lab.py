"""The network lab itself, proven with real tools (curl, wget, getent, ip monitor): each test
fails if the feature it names does not work."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from lab import Lab, cpu_seconds, sha256, sweep_stale


def curl(lab: Lab, *args, ns=None, timeout=60) -> subprocess.CompletedProcess:
    return lab.run_in(ns or lab.client, ["curl", "-sS", *map(str, args)], check=False, timeout=timeout)


class Lines:
    """Reads a process's stdout in a thread: (monotonic time, line) pairs, waited on by content."""

    def __init__(self, process: subprocess.Popen):
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[tuple[float, str]] = []
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream):
        for line in iter(stream.readline, ""):
            self.lines.put((time.monotonic(), line.rstrip("\n")))

    def wait_for(self, predicate, timeout: float) -> tuple[float, str]:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no matching line within {timeout} s; last lines: {self.seen[-5:]}")
            try:
                item = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            self.seen.append(item)
            if predicate(item[1]):
                return item


def netns_inode(ns: str) -> int:
    return os.stat(f"/run/netns/{ns}").st_ino


# MARK: Namespaces, processes, the origin


def test_client_reaches_origin_by_name_with_curl_and_wget(lab, files, tmp_path):
    assert "UP" in lab.run_in(lab.client, ["ip", "-o", "link", "show", "lo"]).stdout.split("<")[1].split(">")[0]
    began = time.time()
    got = curl(lab, "-o", tmp_path / "c.bin", "-w", "%{http_code}", lab.url("one.bin"))
    assert got.returncode == 0 and got.stdout == "200", got
    assert sha256(tmp_path / "c.bin") == files["one.bin"]
    fetched = lab.run_in(lab.client, ["wget", "-q", "-O", tmp_path / "w.bin", lab.url("one.bin", port=8080)], check=False)
    assert fetched.returncode == 0, fetched.stderr
    assert sha256(tmp_path / "w.bin") == files["one.bin"]
    requests = lab.nginx_requests("one.bin")
    assert [(r["status"], r["remote_addr"], r["host"], r["user_agent"].split("/")[0]) for r in requests] == [
        (200, lab.client_ip, "files.lab", "curl"), (200, lab.client_ip, "files.lab:8080", "Wget")]
    assert all(began - 0.01 <= r["start"] <= r["end"] <= time.time() for r in requests)
    assert requests[0]["body_bytes_sent"] == 1 << 20
    lab.add_file("made/here.txt", data=b"made by the test\n")
    assert curl(lab, lab.url("made/here.txt")).stdout == "made by the test\n"


def test_ranged_request_shows_range_and_206_in_the_log(lab, files, www):
    got = curl(lab, "-D", "-", "-o", "/dev/null", "-r", "1000-1999", lab.url("one.bin"))
    assert got.returncode == 0 and got.stdout.startswith("HTTP/1.1 206"), got
    etag = next(line.split(":", 1)[1].strip() for line in got.stdout.splitlines() if line.lower().startswith("etag:"))
    # If-Range with the ETag: still 206; with another one: the whole file (200).
    same = curl(lab, "-o", "/dev/null", "-w", "%{http_code}", "-r", "10-19", "-H", f"If-Range: {etag}", lab.url("one.bin"))
    other = curl(lab, "-o", "/dev/null", "-w", "%{http_code}", "-r", "10-19", "-H", 'If-Range: "other"', lab.url("one.bin"))
    assert (same.stdout, other.stdout) == ("206", "200")
    log = lab.nginx_requests("one.bin")
    assert [(r["status"], r["range"], r["body_bytes_sent"]) for r in log] == [
        (206, "bytes=1000-1999", 1000), (206, "bytes=10-19", 10), (200, "bytes=10-19", 1 << 20)]
    assert log[1]["if_range"] == etag
    lab.clear_nginx_log()
    assert lab.nginx_requests() == []
    curl(lab, "-o", "/dev/null", lab.url("small.txt"))
    assert [r["path"] for r in lab.nginx_requests()] == ["/small.txt"]


def test_processes_run_in_their_namespace_and_die_with_the_lab(www):
    lab = Lab(www=www).start()
    try:
        tracked = lab.exec_in(lab.client, ["sleep", "1000"])
        # One that escapes the lab's bookkeeping, as `ferry serve --detach` would: still in C.
        lab.run_in(lab.client, ["bash", "-c", "setsid sleep 1001 >/dev/null 2>&1 < /dev/null &"])
        time.sleep(0.1)
        escaped = [int(p) for p in lab.run_in(lab.client, ["pgrep", "-f", "^sleep 1001$"]).stdout.split()]
        assert len(escaped) == 1
        for pid in (tracked.pid, escaped[0]):
            assert os.stat(f"/proc/{pid}/ns/net").st_ino == netns_inode(lab.client)
        assert os.stat(f"/proc/{lab.nginx.pid}/ns/net").st_ino == netns_inode(lab.origin)
        assert os.stat(f"/proc/{os.getpid()}/ns/net").st_ino != netns_inode(lab.client)
        names = (lab.client, lab.origin)
        assert all((Path("/etc/netns") / ns).is_dir() for ns in names)
    finally:
        lab.close()
    assert tracked.poll() is not None
    assert not Path(f"/proc/{escaped[0]}").exists() or "Z" in Path(f"/proc/{escaped[0]}/stat").read_text().split(")")[1][:3]
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(ns in listed for ns in names)
    assert not any((Path("/etc/netns") / ns).exists() for ns in names)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert lab.prefix not in links
    assert not lab.workdir.exists()


def test_a_lab_left_by_a_killed_process_is_swept(lab_check):
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = f"fl{gone.pid}x0c"
    subprocess.run(["ip", "netns", "add", stale], check=True)
    try:
        (Path("/etc/netns") / stale).mkdir(parents=True)
        left = subprocess.Popen(["ip", "netns", "exec", stale, "sleep", "1000"], start_new_session=True)
        time.sleep(0.1)
        sweep_stale()
        assert left.wait(10) is not None
        assert stale not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert not (Path("/etc/netns") / stale).exists()
    finally:
        subprocess.run(["ip", "netns", "del", stale], capture_output=True)
        shutil.rmtree(Path("/etc/netns") / stale, ignore_errors=True)
        try:
            Path("/etc/netns").rmdir()
        except OSError:
            pass


def test_shaping_limits_the_origins_rate(lab, files):
    lab.shape("20mbit")
    got = curl(lab, "-o", "/dev/null", "-w", "%{time_total}", lab.url("four.bin"))
    shaped = float(got.stdout)
    expected = (4 << 20) * 8 / 20e6  # 1.68 s
    assert expected * 0.85 < shaped < expected * 1.5, f"{shaped:.2f} s at 20 Mbit/s, expected about {expected:.2f} s"
    lab.unshape()
    free = float(curl(lab, "-o", "/dev/null", "-w", "%{time_total}", lab.url("four.bin")).stdout)
    assert free < expected / 3, f"unshaped download took {free:.2f} s"



def test_htb_shaping_limits_the_origins_rate(lab, files):
    lab.shape("20mbit", qdisc="htb")
    classes = lab.run_in(lab.origin, ["tc", "class", "show", "dev", lab.origin_dev]).stdout
    assert "htb 1:1 root" in classes and "rate 20Mbit" in classes, classes
    got = curl(lab, "-o", "/dev/null", "-w", "%{time_total}", lab.url("four.bin"))
    shaped = float(got.stdout)
    expected = (4 << 20) * 8 / 20e6  # 1.68 s
    assert expected * 0.85 < shaped < expected * 1.5, f"{shaped:.2f} s at 20 Mbit/s, expected about {expected:.2f} s"
    lab.unshape()
    assert "htb" not in lab.run_in(lab.origin, ["tc", "qdisc", "show", "dev", lab.origin_dev]).stdout


def test_server_extra_adds_a_rate_limited_location(www, files):
    lab = Lab(www=www, server_extra=f"location /slow/ {{ alias {www}/; limit_rate 1m; }}").start()
    try:
        got = curl(lab, "-o", "/dev/null", "-w", "%{http_code} %{time_total}", lab.url("slow/four.bin"))
        status, seconds = got.stdout.split()
        assert status == "200" and 3.0 < float(seconds) < 6.0, got.stdout  # 4 MiB at 1 MiB/s
        assert lab.nginx_requests("slow/four.bin")[-1]["body_bytes_sent"] == 4 << 20
    finally:
        lab.close()


# MARK: The link


def test_link_down_fails_fast_and_link_up_restores_routes(lab, files):
    monitor = lab.exec_in(lab.client, ["ip", "-o", "monitor", "link"], stdout=subprocess.PIPE, text=True)
    events = Lines(monitor)
    time.sleep(0.2)  # the monitor subscribes
    before = lab.routes()
    assert any(r.startswith("default via") for r in before)

    lab.link_down()
    events.wait_for(lambda l: lab.client_dev in l and "state DOWN" in l and ",UP" not in l, 3)
    assert lab.routes() == []  # the kernel takes both the subnet's route and the default route
    began = time.monotonic()
    failed = curl(lab, "--connect-timeout", "3", "-o", "/dev/null", lab.url("small.txt"))
    assert failed.returncode in (7, 28) and time.monotonic() - began < 3.5, failed
    by_ip = curl(lab, "--connect-timeout", "3", "-o", "/dev/null", lab.url("small.txt", host=lab.origin_ip))
    assert by_ip.returncode in (7, 28), by_ip

    came_back = lab.link_up()
    events.wait_for(lambda l: lab.client_dev in l and "LOWER_UP" in l, 3)
    assert came_back["connected_route_back"] and came_back["default_route_readded"], came_back
    assert came_back["seconds"] < 2, came_back
    assert sorted(lab.routes()) == sorted(before)
    got = curl(lab, "--connect-timeout", "3", "-o", "/dev/null", "-w", "%{http_code}", lab.url("small.txt"))
    assert got.stdout == "200", got
    # Twice more: the same every time.
    for _ in range(2):
        lab.link_down()
        assert curl(lab, "--connect-timeout", "2", "-o", "/dev/null", lab.url("small.txt")).returncode != 0
        assert lab.link_up()["seconds"] < 2
        assert curl(lab, "-o", "/dev/null", "-w", "%{http_code}", lab.url("small.txt")).stdout == "200"


def test_a_transfer_stalls_while_the_link_is_down_and_goes_on_after(lab, files, tmp_path):
    """What the link-loss benchmark relies on: an outage of a few seconds stalls a running
    download (its TCP connection lives on) and the same connection finishes it after link_up."""
    lab.shape("20mbit")  # eight.bin: about 3.4 s
    target = tmp_path / "eight.bin"
    download = lab.exec_in(lab.client, ["curl", "-sS", "-o", target, lab.url("eight.bin")], stderr=subprocess.PIPE)
    size = lambda: target.stat().st_size if target.exists() else 0
    deadline = time.monotonic() + 10
    while size() < 2 << 20 and time.monotonic() < deadline:
        time.sleep(0.02)
    lab.link_down()
    time.sleep(0.3)  # what was in flight and in C's socket buffer lands
    stalled_at = size()
    time.sleep(1.5)
    assert size() == stalled_at < 8 << 20 and download.poll() is None
    lab.link_up()
    assert download.wait(30) == 0, download.stderr.read()
    assert sha256(target) == files["eight.bin"]
    assert [(r["status"], r["range"]) for r in lab.nginx_requests("eight.bin")] == [(200, "")]


# MARK: Names


def test_name_resolution_toggles_for_a_process_already_running(lab):
    hosts = lab.hosts_file()
    inode = hosts.stat().st_ino
    loop = lab.exec_in(lab.client, ["bash", "-c", "while :; do if getent hosts files.lab; then :; else echo fail; fi; sleep 0.05; done"],
                       stdout=subprocess.PIPE, text=True)
    lines = Lines(loop)
    lines.wait_for(lambda l: l.split() == [lab.origin_ip, "files.lab"], 3)
    lab.unresolve("files.lab")
    lines.wait_for(lambda l: l == "fail", 2)
    assert curl(lab, "-o", "/dev/null", lab.url("small.txt")).returncode == 6  # a new process: the same
    lab.resolve("files.lab", "10.213.1.99")
    lines.wait_for(lambda l: l.split() == ["10.213.1.99", "files.lab"], 2)
    lab.resolve("files.lab")
    lines.wait_for(lambda l: l.split() == [lab.origin_ip, "files.lab"], 2)
    assert loop.poll() is None  # one `ip netns exec`, started before every edit
    assert hosts.stat().st_ino == inode
    assert "localhost" in hosts.read_text()
    assert curl(lab, "-o", "/dev/null", "-w", "%{http_code}", lab.url("small.txt")).stdout == "200"
    # A name in no hosts file fails at once: the namespace's resolver asks its own loopback.
    began = time.monotonic()
    assert lab.run_in(lab.client, ["getent", "hosts", "nowhere.lab"], check=False).returncode == 2
    assert time.monotonic() - began < 1


# MARK: The proxied topology


def test_client_reaches_the_origin_only_through_the_proxies(proxied_lab):
    lab = proxied_lab
    assert lab.run_in(lab.proxy, ["sysctl", "-n", "net.ipv4.ip_forward"]).stdout.strip() == "0"
    direct = curl(lab, "--connect-timeout", "2", "-o", "/dev/null", lab.url("small.txt", host=lab.origin_ip))
    assert direct.returncode in (7, 28), direct
    assert lab.run_in(lab.client, ["getent", "hosts", "files.lab"], check=False).returncode == 2
    assert lab.run_in(lab.proxy, ["getent", "hosts", "files.lab"]).stdout.split() == [lab.origin_ip, "files.lab"]
    assert curl(lab, "-o", "/dev/null", lab.url("small.txt")).returncode == 6
    assert lab.nginx_requests() == []


def test_tinyproxy_basic_auth(proxied_lab, files, tmp_path):
    lab = proxied_lab
    got = curl(lab, "-x", lab.proxy_url("tinyproxy"), "-o", tmp_path / "a.bin", "-w", "%{http_code}", lab.url("one.bin"))
    assert got.stdout == "200", got
    assert sha256(tmp_path / "a.bin") == files["one.bin"]
    fetched = lab.run_in(lab.client, ["wget", "-q", "-O", tmp_path / "w.bin", "-e", "use_proxy=yes",
                                      "-e", f"http_proxy={lab.proxy_url('tinyproxy', user='')}",
                                      f"--proxy-user={lab.proxy_user}", f"--proxy-password={lab.proxy_password}",
                                      lab.url("one.bin")], check=False)
    assert fetched.returncode == 0, fetched.stderr
    assert sha256(tmp_path / "w.bin") == files["one.bin"]
    # CONNECT (curl -p) to the origin's port 8080: allowed by ConnectPort.
    tunnel = curl(lab, "-p", "-x", lab.proxy_url("tinyproxy"), "-o", "/dev/null", "-w", "%{http_connect} %{http_code}",
                  lab.url("small.txt", port=8080))
    assert tunnel.stdout == "200 200", tunnel

    no_auth = curl(lab, "-x", lab.proxy_url("tinyproxy", user=""), "-D", "-", "-o", "/dev/null", lab.url("one.bin"))
    assert no_auth.stdout.startswith("HTTP/1.0 407") and "Proxy-Authenticate: Basic" in no_auth.stdout, no_auth
    # A wrong password: 407 by RFC 9110; Debian 12's tinyproxy 1.11.1 answers 401 (with
    # WWW-Authenticate), tinyproxy issue #532, fixed in 1.11.2. Either way nothing reaches nginx.
    wrong = curl(lab, "-x", lab.proxy_url("tinyproxy", password="wrong"), "-o", "/dev/null", "-w", "%{http_code}",
                 lab.url("one.bin"))
    assert wrong.stdout in ("407", "401"), wrong
    wrong_tunnel = curl(lab, "-p", "-x", lab.proxy_url("tinyproxy", password="wrong"), "-o", "/dev/null",
                        lab.url("one.bin"))
    assert wrong_tunnel.returncode == 56 and "CONNECT tunnel failed" in wrong_tunnel.stderr, wrong_tunnel
    log = lab.nginx_requests()
    assert [(r["path"], r["status"], r["remote_addr"]) for r in log] == [
        ("/one.bin", 200, lab.proxy_origin_ip), ("/one.bin", 200, lab.proxy_origin_ip),
        ("/small.txt", 200, lab.proxy_origin_ip)]


def test_socks5_resolves_names_in_the_proxy(proxied_lab, files, tmp_path):
    lab = proxied_lab
    got = curl(lab, "--socks5-hostname", f"{lab.proxy_ip}:1080", "-o", tmp_path / "s.bin", lab.url("one.bin"))
    assert got.returncode == 0, got
    assert sha256(tmp_path / "s.bin") == files["one.bin"]
    as_url = curl(lab, "-x", lab.proxy_url("danted"), "-o", "/dev/null", "-w", "%{http_code}", lab.url("small.txt"))
    assert as_url.stdout == "200", as_url
    local = curl(lab, "--socks5", f"{lab.proxy_ip}:1080", "-o", "/dev/null", lab.url("small.txt"))
    assert local.returncode in (6, 97) and "resolve" in local.stderr, local  # C cannot resolve it itself
    assert [r["remote_addr"] for r in lab.nginx_requests()] == [lab.proxy_origin_ip] * 2


def test_killing_tinyproxy_breaks_a_download_and_curl_resumes_after_restart(proxied_lab, files, tmp_path):
    lab = proxied_lab
    lab.shape("20mbit")  # eight.bin: about 3.4 s
    target = tmp_path / "eight.bin"
    proxy = lab.proxy_url("tinyproxy")
    download = lab.exec_in(lab.client, ["curl", "-sS", "-x", proxy, "-o", target, lab.url("eight.bin")],
                           stderr=subprocess.PIPE, text=True)
    size = lambda: target.stat().st_size if target.exists() else 0
    deadline = time.monotonic() + 10
    while size() < 1 << 20 and time.monotonic() < deadline:
        time.sleep(0.02)
    lab.stop_proxy("tinyproxy")
    code = download.wait(10)
    assert code in (18, 56), (code, download.stderr.read())
    partial = size()
    assert 1 << 20 <= partial < 8 << 20
    assert curl(lab, "-x", proxy, "-o", "/dev/null", lab.url("small.txt")).returncode == 7  # refused
    lab.start_proxy("tinyproxy")
    resumed = curl(lab, "-x", proxy, "-C", "-", "-o", target, "-w", "%{http_code}", lab.url("eight.bin"))
    assert resumed.returncode == 0 and resumed.stdout == "206", resumed
    assert sha256(target) == files["eight.bin"]
    time.sleep(0.1)
    log = [(r["status"], r["range"]) for r in lab.nginx_requests("eight.bin")]
    assert log[-1] == (206, f"bytes={partial}-"), log
    assert log[0] == (200, "") and len(log) == 2, log


def test_danted_stops_and_restarts_on_the_same_port(proxied_lab):
    lab = proxied_lab
    socks = ["--socks5-hostname", f"{lab.proxy_ip}:1080", "-o", "/dev/null", "-w", "%{http_code}", lab.url("small.txt")]
    assert curl(lab, *socks).stdout == "200"
    lab.stop_proxy("danted")
    down = curl(lab, "--connect-timeout", "2", *socks)
    assert down.returncode in (7, 97), down
    lab.start_proxy("danted")
    assert curl(lab, *socks).stdout == "200"
    # tinyproxy was not touched.
    assert curl(lab, "-x", lab.proxy_url("tinyproxy"), "-o", "/dev/null", "-w", "%{http_code}",
                lab.url("small.txt")).stdout == "200"


def test_link_loss_in_the_proxied_topology(proxied_lab):
    lab = proxied_lab
    lab.link_down()
    assert curl(lab, "--connect-timeout", "2", "-x", lab.proxy_url("tinyproxy"), "-o", "/dev/null",
                lab.url("small.txt")).returncode in (7, 28)
    assert lab.link_up()["seconds"] < 2
    assert curl(lab, "-x", lab.proxy_url("tinyproxy"), "-o", "/dev/null", "-w", "%{http_code}",
                lab.url("small.txt")).stdout == "200"


# MARK: CPU accounting


def test_cpu_seconds_counts_a_busy_process_and_not_an_idle_one(lab):
    busy = lab.exec_in(lab.client, ["bash", "-c", "while :; do :; done"])
    idle = lab.exec_in(lab.client, ["sleep", "100"])
    began = time.monotonic()
    time.sleep(0.8)
    spent = cpu_seconds(busy.pid)
    # The scheduler's own count (ns), independent of clock ticks: the same within a few ticks,
    # however loaded the machine is.
    scheduled = int(Path(f"/proc/{busy.pid}/schedstat").read_text().split()[0]) / 1e9
    assert 0.1 < spent <= time.monotonic() - began + 0.02, spent
    assert abs(spent - scheduled) < 0.08, (spent, scheduled)
    assert lab.cpu_seconds(idle.pid) < 0.05
    # All threads: at least the sum over the live ones in /proc/<pid>/task.
    me = os.getpid()
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            pass
    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    time.sleep(0.3)
    per_thread = sum(cpu_seconds_of_task(me, tid) for tid in os.listdir(f"/proc/{me}/task"))
    total = cpu_seconds(me)
    stop.set()
    spinner.join()
    assert total >= per_thread - 0.02 and total > 0.2, (total, per_thread)


def cpu_seconds_of_task(pid: int, tid: str) -> float:
    fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
