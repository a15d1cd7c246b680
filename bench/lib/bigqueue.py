"""Scenario 10: a queue of half a million. ctx.queue_count URLs (500,000) queued and held (nothing
downloads), Ferry against aria2c:

- Ferry: a session held by a schedule (`--outside paused`, a window that is not now), then
  `ferry get --no-wait --session q -i urls.txt`: seconds until the CLI returns (all journaled),
  the CLI's peak RSS, the daemon's RSS and peak after; a restart with them in the journal
  (seconds until /v1/status answers, and until the web app's first page does); the first page
  (`?limit=100&order=desc`, the web app's) under wrk -c8: p50 / p99; the daemon's RSS after.
- Ferry again with each URL's own start time instead (`ferry get --no-wait --at +1d -i`): the
  control keeps them apart from the queue with one timer for the earliest.
- aria2c: `aria2c --enable-rpc --pause=true -i urls.txt`: seconds until its RPC reports them all
  waiting, and its RSS (aria2's issue #902: about 6 GB for 500,000).
"""

import datetime
import json
import os
import signal
import subprocess
import time
import urllib.request

from daemon import wrk
from harness import FerryDaemon, free_port, log, process_memory, wait_for

GOALS = {"accept_seconds": 30, "daemon_rss_mib": 150, "ready_seconds": 1, "page_p99_ms": 20}


def urls_file(ctx):
    """The list: URLs of files that need not exist (nothing is fetched), one a line."""
    path = ctx.work / f"queue-{ctx.queue_count}.txt"
    if not path.exists():
        with open(path, "w") as out:
            for i in range(ctx.queue_count):
                out.write(ctx.nginx.url(f"queue/{i:07d}.bin") + "\n")
    return path


def a_window_not_now():
    """A one-minute window on another day of the week than today."""
    tomorrow = datetime.datetime.now() + datetime.timedelta(days=1)
    return tomorrow.strftime("%a") + " 03:00-03:01"


def ferry(ctx, listing, held_by="schedule"):
    """`held_by`: "schedule" (a session a schedule holds) or "at" (each URL's own start time)."""
    daemon = FerryDaemon(ctx.work / "ferry-queue", ctx.ferry, max_concurrent=16)
    daemon.wipe()
    daemon.start()
    try:
        held = ["--at", "+1d"]
        if held_by == "schedule":
            daemon.cli("session", "set", "q", "--limit-rate", "1M", "--during", a_window_not_now(), "--outside", "paused")
            held = []
        start = time.perf_counter()
        process = subprocess.run(["/usr/bin/time", "-f", "%M", str(daemon.binary), "get", "--no-wait", "--session", "q", *held,
                                  "-i", str(listing)], env=daemon.env, text=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        accept = time.perf_counter() - start
        if process.returncode != 0:
            raise RuntimeError(f"ferry get -i exited {process.returncode}: {process.stderr[-2000:]}")
        cli_peak = int(process.stderr.strip().splitlines()[-1])
        rss, peak = process_memory(daemon.pid)
        counts = daemon.api("GET", "/v1/status")["counts"]
        assert counts.get("queued", 0) == ctx.queue_count, counts
        log(f"  queue: ferry (held by {held_by}) accepted {ctx.queue_count:,} in {accept:.1f} s; daemon RSS {rss >> 10} MiB (peak {peak >> 10})")

        daemon.stop()
        ready, first_page = restart(daemon)
        log(f"  queue: ferry restarted: status in {ready:.2f} s, first page in {first_page:.2f} s")
        restarted_rss, restarted_peak = process_memory(daemon.pid)
        page = "/v1/transfers?limit=100&order=desc"
        runs = [wrk(daemon.url + page, daemon.token, ctx.wrk_seconds, 8) for _ in range(ctx.runs)]
        after_rss, after_peak = process_memory(daemon.pid)
        return {
            "accept_seconds": accept, "cli_peak_kib": cli_peak,
            "daemon_rss_kib": rss, "daemon_peak_kib": peak,
            "ready_seconds": ready, "first_page_seconds": first_page,
            "restarted_rss_kib": restarted_rss, "restarted_peak_kib": restarted_peak,
            "page": page, "page_p50_ms": [r.get("p50") for r in runs], "page_p99_ms": [r.get("p99") for r in runs],
            "page_rps": [r["rps"] for r in runs], "page_non2xx": sum(r["non2xx"] for r in runs),
            "after_wrk_rss_kib": after_rss, "after_wrk_peak_kib": after_peak,
            "journal_bytes": sum(p.stat().st_size for p in daemon.state.glob("journal.sqlite*")),
        }
    finally:
        daemon.wipe()


def restart(daemon):
    """`ferry serve` on the full journal, left running: seconds until /v1/status answers, and
    until the first page does."""
    port = free_port()
    env = {**daemon.env, "FERRY_PORT": str(port)}
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {daemon.token}"}

    def answers(path):
        def check():
            try:
                with urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), timeout=5) as response:
                    return response.status == 200
            except OSError:
                return False
        return check

    start = time.perf_counter()
    process = subprocess.Popen([str(daemon.binary), "serve", "--max-concurrent", "16", "--log-level", "warning"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for(answers("/v1/status"), 300, interval=0.002, what="the API")
    ready = time.perf_counter() - start
    wait_for(answers("/v1/transfers?limit=100&order=desc"), 300, interval=0.002, what="the first page")
    first_page = time.perf_counter() - start
    daemon.url, daemon.pid = base, process.pid
    return ready, first_page


def aria2c(ctx, listing):
    out = ctx.work / "out-queue"
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    start = time.perf_counter()
    process = subprocess.Popen(["aria2c", "--enable-rpc", f"--rpc-listen-port={port}", "--pause=true",
                                "--console-log-level=error", "--summary-interval=0", "-i", str(listing), "-d", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def waiting():
        if process.poll() is not None:
            raise RuntimeError(f"aria2c exited {process.returncode}")
        body = json.dumps({"jsonrpc": "2.0", "id": "b", "method": "aria2.getGlobalStat"}).encode()
        try:
            with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/jsonrpc", data=body), timeout=5) as r:
                return int(json.loads(r.read())["result"]["numWaiting"]) >= ctx.queue_count
        except OSError:
            return False

    try:
        wait_for(waiting, ctx.queue_timeout, interval=0.05, what="aria2c to queue them")
        accept = time.perf_counter() - start
        rss, peak = process_memory(process.pid)
        log(f"  queue: aria2c queued {ctx.queue_count:,} in {accept:.1f} s; RSS {rss >> 10} MiB (peak {peak >> 10})")
        return {"accept_seconds": accept, "rss_kib": rss, "peak_kib": peak}
    except TimeoutError:
        rss, peak = process_memory(process.pid)
        return {"accept_seconds": None, "gave_up_after": ctx.queue_timeout, "rss_kib": rss, "peak_kib": peak}
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()


def queue(ctx):
    """Scenario 10 (once each: it takes minutes)."""
    listing = urls_file(ctx)
    result = {"count": ctx.queue_count, "ferry": ferry(ctx, listing), "ferry_at": ferry(ctx, listing, held_by="at"),
              "aria2c": aria2c(ctx, listing)}
    f = result["ferry"]
    p99 = max(v for v in f["page_p99_ms"] if v is not None)
    result["goals"] = {
        "accept_seconds": (f["accept_seconds"], f["accept_seconds"] < GOALS["accept_seconds"]),
        "accept_seconds_at": (result["ferry_at"]["accept_seconds"], result["ferry_at"]["accept_seconds"] < GOALS["accept_seconds"]),
        "daemon_rss_mib": (f["daemon_peak_kib"] / 1024, f["daemon_peak_kib"] / 1024 < GOALS["daemon_rss_mib"]),
        "ready_seconds": (f["ready_seconds"], f["ready_seconds"] < GOALS["ready_seconds"]),
        "page_p99_ms": (p99, p99 < GOALS["page_p99_ms"]),
    }
    return result


def markdown(result):
    f, a = result["ferry"], result["aria2c"]
    t = result.get("ferry_at")
    mib = lambda kib: f"{kib / 1024:.0f} MiB"
    accept = "gave up after {} s".format(a["gave_up_after"]) if a["accept_seconds"] is None else f"{a['accept_seconds']:.1f} s"
    lines = [
        f"{result['count']:,} URLs queued and held.",
        "",
        "| | Ferry | aria2c |",
        "|---|---|---|",
        f"| accepted in | {f['accept_seconds']:.1f} s (held by a schedule)"
        + (f"; {t['accept_seconds']:.1f} s (each with `--at`, peak RSS {mib(t['daemon_peak_kib'])})" if t else "") + f" | {accept} |",
        f"| resident memory after (peak) | {mib(f['daemon_rss_kib'])} ({mib(f['daemon_peak_kib'])}) | {mib(a['rss_kib'])} ({mib(a['peak_kib'])}) |",
        f"| the CLI's peak RSS | {mib(f['cli_peak_kib'])} | |",
        f"| restart: API answers / first page | {f['ready_seconds']:.2f} s / {f['first_page_seconds']:.2f} s | |",
        f"| restarted daemon RSS (peak) | {mib(f['restarted_rss_kib'])} ({mib(f['restarted_peak_kib'])}) | |",
        f"| first page under wrk -c8, p50 / p99 | {', '.join(f'{v:.2f}' for v in f['page_p50_ms'])} / "
        f"{', '.join(f'{v:.2f}' for v in f['page_p99_ms'])} ms ({', '.join(f'{v:.0f}' for v in f['page_rps'])} req/s) | |",
        f"| daemon RSS after wrk (peak) | {mib(f['after_wrk_rss_kib'])} ({mib(f['after_wrk_peak_kib'])}) | |",
        f"| journal | {f['journal_bytes'] / 1e6:.0f} MB | |",
        "",
        "Goals: " + "; ".join(f"{name} {value:.2f} {'met' if met else 'NOT met'}" for name, (value, met) in result["goals"].items()),
    ]
    return "\n".join(lines)
