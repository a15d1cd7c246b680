"""Scenarios 5 and 6: the daemon with 10,000 transfers in its journal — how long until its API
answers after a start, and the list endpoint's latency under wrk."""

import os
import re
import signal
import subprocess
import time
import urllib.request

from downloads import rotate
from harness import FerryDaemon, free_port, log, summary, wait_for


def populate(ctx):
    """A daemon whose journal holds ctx.journal_count completed transfers: it downloads that
    many 4 KiB files (one POST, concurrency 16). Returns the daemon (stopped) and how long it took."""
    daemon = FerryDaemon(ctx.work / "ferry-journal", ctx.ferry, max_concurrent=16)
    daemon.wipe()
    daemon.start()
    urls = [ctx.nginx.url(f"tiny/{name}") for name in ctx.tiny_names]
    start = time.perf_counter()
    daemon.get(urls, session="journal")
    completed = lambda: daemon.api("GET", "/v1/status")["counts"].get("completed", 0) >= len(urls)
    wait_for(completed, 1800, interval=0.25, what=f"{len(urls)} downloads")
    seconds = time.perf_counter() - start
    return daemon, seconds


def start_latency(ctx, daemon, runs):
    """Seconds from exec of `ferry serve` until GET /v1/status answers 200, `runs` times for
    the ferry under test and for each --variant build (interleaved, on the same journal), by
    binary name ("ferry" for the one under test)."""
    binaries = {"ferry": daemon.binary, **ctx.variants}
    times = {name: [] for name in binaries}
    daemon.stop()
    for round_index in range(runs):
        for name, binary in rotate(list(binaries.items()), round_index):
            times[name].append(serve_until_answering(daemon, binary))
    return times


def serve_until_answering(daemon, binary):
    """Starts `binary serve` on the daemon's home, waits until its API answers and stops it:
    the seconds until it answered."""
    port = free_port()
    env = {**daemon.env, "FERRY_PORT": str(port)}
    url = f"http://127.0.0.1:{port}/v1/status"
    token = daemon.token
    start = time.perf_counter()
    process = subprocess.Popen([str(binary), "serve", "--log-level", "warning"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def answers():
        if process.poll() is not None:
            raise RuntimeError("ferry serve exited")
        try:
            request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=1) as response:
                return response.status == 200
        except OSError:
            return False

    wait_for(answers, 120, interval=0.002, what="the API")
    seconds = time.perf_counter() - start
    process.send_signal(signal.SIGTERM)
    process.wait(60)
    return seconds


def daemon_start(ctx):
    """Scenario 5, and the daemon of scenario 6 left running in ctx.loaded_daemon."""
    empty = FerryDaemon(ctx.work / "ferry-empty", ctx.ferry)
    empty.wipe()
    empty.start()
    empty_times = start_latency(ctx, empty, ctx.runs)
    empty.wipe()
    log(f"  start: populating a journal with {ctx.journal_count} transfers")
    daemon, populate_seconds = populate(ctx)
    loaded_times = start_latency(ctx, daemon, ctx.runs)
    journal = daemon.state / "journal.sqlite"
    sizes = {p.name: p.stat().st_size for p in daemon.state.glob("journal.sqlite*")}
    daemon.start()
    ctx.loaded_daemon = daemon
    return {
        "transfers": ctx.journal_count,
        "populate_seconds": populate_seconds,
        "journal_bytes": sum(sizes.values()),
        "empty": {name: {"seconds": t, "summary": summary(t)} for name, t in empty_times.items()},
        "loaded": {name: {"seconds": t, "summary": summary(t)} for name, t in loaded_times.items()},
    }


LATENCY = re.compile(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s)\s*$", re.M)
RATE = re.compile(r"^Requests/sec:\s+([\d.]+)", re.M)
UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def wrk(url, token, seconds, connections):
    result = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "30s",
         "-H", f"Authorization: Bearer {token}", url],
        text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=True,
    )
    latency = {f"p{p}": float(v) * UNIT[u] for p, v, u in LATENCY.findall(result.stdout)}
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", result.stdout)
    return {**latency, "rps": float(RATE.search(result.stdout).group(1)),
            "non2xx": int(errors.group(1)) if errors else 0, "raw": result.stdout}


def api_load(ctx):
    """Scenario 6: wrk -t2 -c8 for 10 s against the list endpoint (all 10,000 transfers) and, for
    scale, a filtered list, one transfer and the status."""
    daemon = getattr(ctx, "loaded_daemon", None)
    if daemon is None:
        daemon, _ = populate(ctx)
        daemon.start()
    middle = daemon.transfers()[ctx.journal_count // 2]["id"]
    endpoints = [
        (f"GET /v1/transfers (all {ctx.journal_count:,})", "/v1/transfers?state=all"),
        ("GET /v1/transfers?state=running (none)", "/v1/transfers?state=running"),
        (f"GET /v1/transfers/{middle}", f"/v1/transfers/{middle}"),
        ("GET /v1/status", "/v1/status"),
    ]
    body = len(urllib.request.urlopen(urllib.request.Request(
        daemon.url + endpoints[0][1], headers={"Authorization": f"Bearer {daemon.token}"})).read())
    results = {}
    try:
        for round_index in range(ctx.runs):
            for name, path in endpoints:
                results.setdefault(name, []).append(wrk(daemon.url + path, daemon.token, ctx.wrk_seconds, 8))
            log(f"  api: round {round_index + 1}/{ctx.runs} done")
    finally:
        daemon.wipe()
    return {"list_bytes": body, "connections": 8, "seconds": ctx.wrk_seconds, "endpoints": {
        name: {"runs": [{k: v for k, v in r.items() if k != "raw"} for r in runs],
               "p50": summary([r.get("p50") for r in runs]), "p99": summary([r.get("p99") for r in runs]),
               "rps": summary([r["rps"] for r in runs]), "non2xx": sum(r["non2xx"] for r in runs)}
        for name, runs in results.items()}}
