"""Scenario 12: serving the house over TLS. Ferry's daemon in the lab's namespace O (tests/lab/
lab.py; root only) with a listener beyond loopback on 10.213.1.1:8443 (its own CA's
certificate), and a client in namespace C (10.213.1.2):

  file      a 1 GiB episode in Ferry's library (downloaded into it first from a loopback nginx)
            fetched with `Range: bytes=0-` by curl through Ferry's listener (a member's token),
            against nginx in O serving the same file with the same certificate and key
            (10.213.1.1:9443, `sendfile on`); --runs interleaved rounds, medians; each download
            counted by curl's size_download
  api       the API's first page (`GET /v1/transfers?limit=100&order=desc`, 200 transfers queued)
            under `wrk -t2 -c50 -d10s --latency` from C with a member's token: requests per
            second, p50, p99
  sessions  1,000 password logins (each a session kept in the journal), then a request with
            each: the daemon's anonymous memory (RssAnon) before and after, read after a pause

Goals (issue "Every device in the house"): at least 0.9x nginx's throughput, p99 under 20 ms, a
thousand sessions under 10 MiB.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from harness import REPO, is_root, log, make_file, summary

sys.path.insert(0, str(REPO / "tests" / "lab"))
from lab import Lab  # noqa: E402

SERVER = "10.213.1.1"
PORT = 8443
NGINX_PORT = 9443
GOALS = {"throughput_ratio": 0.9, "p99_ms": 20, "sessions_mib": 10}


def remote(ctx):
    if not is_root():
        raise RuntimeError("remote needs root: network namespaces (tests/lab/lab.py)")
    for tool in ("ip", "nginx", "wrk", "curl"):
        if not shutil.which(tool):
            raise RuntimeError(f"remote needs {tool}")
    work = ctx.work / "remote"
    shutil.rmtree(work, ignore_errors=True)
    www = work / "www"
    www.mkdir(parents=True)
    size = ctx.remote_size
    make_file(www / "episode.mp3", size, seed=12)
    with Lab(workdir=work / "lab") as lab:
        server = Server(lab, ctx.ferry, work / "home", www)
        try:
            token = server.member_token()
            file_runs = serve_file(ctx, lab, server, token, www, size)
            api = api_load(lab, server, token, www)
            sessions = session_memory(lab, server, ctx.remote_sessions)
        finally:
            server.stop()
    ferry = summary([r["ferry"] for r in file_runs])
    nginx = summary([r["nginx"] for r in file_runs])
    ratio = nginx["median"] / ferry["median"] if ferry["median"] else 0
    return {
        "size": size, "runs": file_runs, "ferry": ferry, "nginx": nginx, "ratio": ratio, "api": api, "sessions": sessions,
        "goals": {
            "throughput": (ratio, ratio >= GOALS["throughput_ratio"]),
            "p99": (api.get("p99_ms"), (api.get("p99_ms") or 1e9) < GOALS["p99_ms"]),
            "sessions": (sessions["mib"], sessions["mib"] < GOALS["sessions_mib"] * sessions["sessions"] / 1000),
        },
    }


class Server:
    """`ferry serve` in O, listening on its LAN address over TLS; the episode in its library."""

    def __init__(self, lab, binary, home, www):
        self.lab, self.binary, self.home = lab, str(binary), home
        home.mkdir(parents=True)
        self.process = lab.exec_in(
            lab.origin, ["env", f"FERRY_HOME={home}", self.binary, "serve", "--port", "7447", "--listen", f"0.0.0.0:{PORT}",
                         "--log-level", "warning"],
            stdout=(home / "daemon.log").open("ab"), stderr=subprocess.STDOUT,
        )
        self.wait(lambda: self.cli("remote", "--json", check=False).returncode == 0
                  and json.loads(self.cli("remote", "--json").stdout)["urls"], 30, "the listener")
        # The episode into the library, from a loopback nginx in O.
        self.origin = write_nginx(home / "origin.conf", home, f"127.0.0.1:8099", www, tls=None)
        self.nginx_origin = lab.exec_in(lab.origin, ["nginx", "-c", str(self.origin), "-g", "daemon off;"])
        time.sleep(0.5)
        listed = json.loads(self.cli("get", "--json", "http://127.0.0.1:8099/episode.mp3", timeout=600).stdout)
        self.transfer = listed[0]["id"]

    def cli(self, *args, check=True, input=None, timeout=120):
        return self.lab.run_in(self.lab.origin, ["env", f"FERRY_HOME={self.home}", "TERM=dumb", self.binary, *args],
                               check=check, timeout=timeout, **({} if input is None else {"input": input, "stdin": None}))

    def member_token(self):
        self.cli("user", "add", "bench", "--password-stdin", input="bench's password\n")
        return self.cli("user", "token", "bench").stdout.strip()

    @property
    def ca(self):
        return self.home / "state/tls/ca.pem"

    def pid(self):
        return self.process.pid

    def daemon_pid(self):
        return json.loads((self.home / "state/daemon.json").read_text())["pid"]

    @staticmethod
    def wait(condition, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if condition():
                    return
            except Exception:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"remote: {what} did not come up")

    def stop(self):
        self.cli("stop", check=False)
        self.lab.stop_process(self.nginx_origin)


def write_nginx(conf, folder, listen, root, tls):
    ssl = ""
    if tls:
        ssl = f"ssl_certificate {tls[0]}; ssl_certificate_key {tls[1]}; ssl_protocols TLSv1.2 TLSv1.3;"
    conf.write_text(f"""
worker_processes 2;
pid {folder}/{conf.stem}.pid;
error_log {folder}/{conf.stem}-error.log;
events {{ worker_connections 256; }}
http {{
    access_log off;
    sendfile on;
    server {{
        listen {listen}{' ssl' if tls else ''};
        {ssl}
        root {root};
    }}
}}
""")
    return conf


def curl_seconds(lab, ca, url, headers=()):
    command = ["curl", "-sS", "--cacert", str(ca), "-o", "/dev/null", "-H", "Range: bytes=0-", "-w", "%{time_total} %{size_download} %{http_code}"]
    for header in headers:
        command += ["-H", header]
    result = lab.run_in(lab.client, command + [url], timeout=600)
    seconds, size, status = result.stdout.split()
    return float(seconds), int(size), int(status)


def serve_file(ctx, lab, server, token, www, size):
    tls = (server.home / "state/tls/server.pem", server.home / "state/tls/server-key.pem")
    conf = write_nginx(server.home / "front.conf", server.home, f"{SERVER}:{NGINX_PORT}", www, tls=tls)
    nginx = lab.exec_in(lab.origin, ["nginx", "-c", str(conf), "-g", "daemon off;"])
    time.sleep(0.5)
    runs = []
    try:
        for round_index in range(ctx.runs or 5):
            tools = [("ferry", f"https://{SERVER}:{PORT}/v1/transfers/{server.transfer}/file", [f"Authorization: Bearer {token}"]),
                     ("nginx", f"https://{SERVER}:{NGINX_PORT}/episode.mp3", [])]
            if round_index % 2:
                tools.reverse()
            record = {}
            for name, url, headers in tools:
                seconds, got, status = curl_seconds(lab, server.ca, url, headers)
                if got != size or status not in (200, 206):
                    raise RuntimeError(f"remote: {name} sent {got} of {size} bytes (HTTP {status})")
                record[name] = seconds
            runs.append(record)
            log(f"  remote: round {round_index + 1}: ferry {record['ferry']:.2f} s, nginx {record['nginx']:.2f} s")
    finally:
        lab.stop_process(nginx)
    return runs


def api_load(lab, server, token, www):
    """Ferry's first page under wrk, and the same bytes from nginx as a file with the same
    certificate and wrk: what this machine can do at all with 50 connections over TLS."""
    urls = "".join(f"http://127.0.0.1:9/later/{i}.bin\n" for i in range(200))
    server.cli("get", "--no-wait", "--at", "+1d", "-i", "-", input=urls)
    url = f"https://{SERVER}:{PORT}/v1/transfers?limit=100&order=desc"
    out = wrk(lab, url, [f"Authorization: Bearer {token}"])
    page = www / "page.json"
    lab.run_in(lab.client, ["curl", "-sS", "--cacert", str(server.ca), "-H", f"Authorization: Bearer {token}", "-o", str(page), url])
    tls = (server.home / "state/tls/server.pem", server.home / "state/tls/server-key.pem")
    conf = write_nginx(server.home / "page.conf", server.home, f"{SERVER}:{NGINX_PORT}", www, tls=tls)
    nginx = lab.exec_in(lab.origin, ["nginx", "-c", str(conf), "-g", "daemon off;"])
    time.sleep(0.5)
    try:
        out["nginx"] = wrk(lab, f"https://{SERVER}:{NGINX_PORT}/page.json", [])
    finally:
        lab.stop_process(nginx)
    out["bytes"] = page.stat().st_size
    log(f"  remote: API first page under wrk -c50: {out['requests_per_second']} req/s, p50 {out['p50_ms']} ms, p99 {out['p99_ms']} ms; "
        f"the same {out['bytes']} bytes from nginx: {out['nginx']['requests_per_second']} req/s, p99 {out['nginx']['p99_ms']} ms")
    return out


def wrk(lab, url, headers):
    command = ["wrk", "-t2", "-c50", "-d10s", "--latency"]
    for header in headers:
        command += ["-H", header]
    text = lab.run_in(lab.client, command + [url], timeout=60).stdout

    def latency(label):
        match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        if not match:
            return None
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rate = re.search(r"Requests/sec:\s+([\d.]+)", text)
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    return {"requests_per_second": float(rate.group(1)) if rate else None, "p50_ms": latency("50"), "p99_ms": latency("99"),
            "non_2xx": int(errors.group(1)) if errors else 0}


def rss_anon_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    return 0


def session_memory(lab, server, count=1000):
    pid = server.daemon_pid()
    time.sleep(3)
    before = rss_anon_kib(pid)
    url = f"https://{SERVER}:{PORT}"
    script = server.home / "logins.py"
    script.write_text(f"""
import json, ssl, urllib.request
context = ssl.create_default_context(cafile="{server.ca}")
cookies = []
for i in range({count}):
    request = urllib.request.Request("{url}/v1/session", data=json.dumps({{"name": "bench", "password": "bench's password"}}).encode(),
                                     headers={{"Content-Type": "application/json"}}, method="POST")
    with urllib.request.urlopen(request, context=context) as response:
        cookies.append(response.headers["Set-Cookie"].split(";")[0])
for cookie in cookies:
    with urllib.request.urlopen(urllib.request.Request("{url}/v1/me", headers={{"Cookie": cookie}}), context=context) as response:
        assert response.status == 200
print(len(cookies))
""")
    began = time.time()
    result = lab.run_in(lab.client, [sys.executable, str(script)], timeout=1800)
    seconds = time.time() - began
    time.sleep(5)  # the heap trimmer's turn
    after = rss_anon_kib(pid)
    out = {"sessions": int(result.stdout.strip()), "before_kib": before, "after_kib": after,
           "mib": (after - before) / 1024, "login_seconds": seconds}
    log(f"  remote: {out['sessions']} sessions: RssAnon {before >> 10} → {after >> 10} MiB ({out['mib']:+.1f} MiB), {seconds:.0f} s")
    return out


def markdown(result):
    g = result["goals"]
    lines = [
        f"Ferry's listener (TLS, its own CA) against nginx with the same certificate, {result['size'] >> 20} MiB with "
        f"`Range: bytes=0-` to curl in another namespace, medians of {len(result['runs'])} interleaved rounds:",
        "",
        "| | Ferry | nginx | Ferry's throughput ÷ nginx's |",
        "| --- | --- | --- | --- |",
        f"| {result['size'] >> 20} MiB over TLS | {result['ferry']['median']:.2f} s | {result['nginx']['median']:.2f} s | {g['throughput'][0]:.2f}× "
        f"({'goal met' if g['throughput'][1] else 'goal 0.9× missed'}) |",
        "",
        f"The API's first page under `wrk -t2 -c50 -d10s` over TLS with a member's token: {result['api']['requests_per_second']} requests/s, "
        f"p50 {result['api']['p50_ms']} ms, p99 {result['api']['p99_ms']} ms ({'goal met' if g['p99'][1] else 'goal under 20 ms missed'}); "
        f"the same {result['api']['bytes']} bytes as a file from nginx (same certificate, same wrk): "
        f"{result['api']['nginx']['requests_per_second']} requests/s, p50 {result['api']['nginx']['p50_ms']} ms, p99 {result['api']['nginx']['p99_ms']} ms.",
        "",
        f"{result['sessions']['sessions']} password logins (sessions kept in the journal), then a request with each: the daemon's "
        f"anonymous memory {result['sessions']['before_kib'] >> 10} → {result['sessions']['after_kib'] >> 10} MiB "
        f"({result['sessions']['mib']:+.1f} MiB; {'goal met' if g['sessions'][1] else 'goal under 10 MiB missed'}).",
    ]
    return "\n".join(lines)
