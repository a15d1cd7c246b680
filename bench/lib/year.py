"""Scenario 13: an accelerated year (issue 35). The real `ferry serve` with its wall clock moved a
day at a time (FERRY_TEST_CLOCK_FILE: the seconds the file holds are added to the real time,
for retention only) and a scripted user, through the API as the CLI and the web app call it:

- each simulated day: ctx.year_per_day downloads of small files from nginx (each its own name,
  hard links of one file a day) in session `bench`; one in 20 added paused (resumed the next day, or
  one in four of them cancelled), one in 33 cancelled as it runs, one in 10 of the day before's
  removed with its file; `ferry rm --finished` on day 45 (then the history's retention, a year
  or 10,000, is what keeps the list);
- ctx.year_feeds feeds (generated RSS, the newest 30 items), one new episode every 1, 2, 3 or 7
  days each; a quarter of them auto-download their newest and keep 3; all refreshed every day
  (POST /v1/podcasts/refresh); a few episodes a day played (positions, some to the end);
- the daemon stopped and started every 5 days (pruning happens at start: the real hourly pass
  does not come within a simulated day), killed with SIGKILL every 45.

At each simulated month's end (and the last day's), before the day's restart: transfers done so far, the journal's
bytes and its WAL's, rows per table (sqlite3, read-only), the daemon's RSS, open files and
threads. Then aria2c (`--enable-rpc`, `--max-download-result` 1000, `--save-session`) given as
many downloads: its session file and its RSS after them. The report gives the table and the
journal's bytes per 1,000 transfers done.
"""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request

from harness import FerryDaemon, free_port, log, process_memory, wait_for

FEED_PERIODS = (1, 2, 3, 7)
RESTART_EVERY = 5
KILL_EVERY = 45
# `ferry rm --finished` once, so the history's own retention (a year, 10,000) has a part too.
REMOVE_FINISHED_ON = 45


def link(path):
    """Makes `path` a hard link of its folder's 4 KiB `.source` (one a folder: ext4 allows a file
    65,000 links, fewer than a year's downloads)."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    source = path.parent / ".source"
    if not source.exists():
        source.write_bytes(bytes(range(256)) * 16)
    os.link(source, path)


def media(ctx, day, n):
    """The path under nginx's root of day `day`'s n-th file."""
    name = f"year/d{day:03d}/{n:04d}.bin"
    link(ctx.work / "www" / name)
    return name


def write_feed(ctx, index, day):
    """Feed `index` as of `day`: the newest 30 episodes (one every FEED_PERIODS[index % 4] days)."""
    period = FEED_PERIODS[index % len(FEED_PERIODS)]
    episodes = [d for d in range(day, -1, -1) if d % period == 0][:30]
    items = []
    for d in episodes:
        name = f"year/feeds/{index:03d}/e{d:03d}.mp3"
        link(ctx.work / "www" / name)
        published = time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(1_767_225_600 + d * 86_400))
        items.append(f"<item><title>Episode {d} of feed {index}</title><guid>f{index}-e{d}</guid>"
                     f"<pubDate>{published}</pubDate><itunes:duration>1800</itunes:duration>"
                     f"<enclosure url=\"{ctx.nginx.url(name)}\" length=\"4096\" type=\"audio/mpeg\"/></item>")
    text = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<rss version=\"2.0\" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel>"
            f"<title>Feed {index}</title><link>http://example.invalid/{index}</link><description>A feed</description>"
            + "".join(items) + "</channel></rss>\n")
    path = ctx.work / "www" / f"year/feeds/{index:03d}.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text)
    temporary.rename(path)
    return f"year/feeds/{index:03d}.xml"


def call(daemon, method, path, body=None, ok=(200, 201, 204)):
    """The API, with a refusal (a 409 for a transfer already done) returned as its status."""
    try:
        return daemon.api(method, path, body, timeout=120)
    except urllib.error.HTTPError as error:
        if error.code in ok:
            return None
        return error.code


def measure(daemon, done, day, started):
    journal = daemon.state / "journal.sqlite"
    connection = sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=30)
    try:
        tables = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%'")]
        rows = {table: connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] for table in tables}
        # Transfers off the list but kept for a row that names them (an episode's, a song's).
        rows["transfer hidden"] = connection.execute("SELECT COUNT(*) FROM transfer WHERE hidden").fetchone()[0]
    finally:
        connection.close()
    rss, peak = process_memory(daemon.pid)
    # As fast as in the first month? What the web app asks first, timed (median of five).
    def latency(path):
        times = []
        for _ in range(5):
            start = time.perf_counter()
            daemon.api("GET", path, timeout=60)
            times.append((time.perf_counter() - start) * 1000)
        return sorted(times)[2]
    timings = {"list_ms": latency("/v1/transfers?limit=100"), "all_ms": latency("/v1/transfers"),
               "podcasts_ms": latency("/v1/podcasts")}
    status = dict(line.split(":", 1) for line in open(f"/proc/{daemon.pid}/status").read().splitlines() if ":" in line)
    wal = journal.with_name("journal.sqlite-wal")
    return {
        "day": day, "done": done, "journal_bytes": journal.stat().st_size,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        "rows": {name: count for name, count in rows.items() if count}, "rss_kib": rss, "peak_kib": peak,
        "fds": len(os.listdir(f"/proc/{daemon.pid}/fd")), "threads": int(status["Threads"].strip()),
        "seconds": time.monotonic() - started, **timings,
    }


def settle(daemon, day, timeout=300):
    """Until nothing is queued or running; else the stuck transfers are in the error."""
    def idle():
        counts = daemon.api("GET", "/v1/status")["counts"]
        return counts.get("queued", 0) + counts.get("running", 0) == 0
    try:
        wait_for(idle, timeout, interval=0.05, what="the day's downloads")
    except TimeoutError:
        stuck = daemon.api("GET", "/v1/transfers?state=queued,running")["transfers"]
        raise TimeoutError(f"day {day}: {len(stuck)} transfers still queued or running after {timeout} s: "
                           + json.dumps(stuck[:5])[:3000]) from None


def ferry(ctx):
    clock = ctx.work / "year-clock"
    clock.write_text("0")
    daemon = FerryDaemon(ctx.work / "ferry-year", ctx.ferry, max_concurrent=8, env={"FERRY_TEST_CLOCK_FILE": str(clock)})
    daemon.wipe()
    daemon.start()
    started = time.monotonic()
    months, done, paused, finished, day = [], 0, [], [], 0
    try:
        podcasts = []
        for index in range(ctx.year_feeds):
            detail = daemon.api("POST", "/v1/podcasts", {"url": ctx.nginx.url(write_feed(ctx, index, 0))}, timeout=120)
            podcasts.append(detail["podcast"]["id"])
            if index % 4 == 0:
                daemon.api("PATCH", f"/v1/podcasts/{detail['podcast']['id']}", {"autoDownload": 1, "keepLatest": 3})
        log(f"  year: {len(podcasts)} feeds subscribed")
        for day in range(1, ctx.year_days + 1):
            clock.write_text(str(day * 86_400))
            # Yesterday's paused ones: one in four cancelled, the rest resumed.
            for n, transfer in enumerate(paused):
                call(daemon, "POST", f"/v1/transfers/{transfer}/{'cancel' if n % 4 == 0 else 'resume'}")
            done += len(paused)
            urls = [ctx.nginx.url(media(ctx, day, n)) for n in range(ctx.year_per_day)]
            held = max(1, len(urls) // 20)
            created = daemon.api("POST", "/v1/transfers", {"urls": urls[held:], "session": "bench"}, timeout=120)["transfers"]
            ids = [t["id"] for t in created]
            # Added paused (for tomorrow), and a few cancelled as they run (if not done already).
            paused = [t["id"] for t in daemon.api("POST", "/v1/transfers", {"urls": urls[:held], "session": "bench", "paused": True},
                                                  timeout=120)["transfers"]]
            for transfer in ids[7::33]:
                call(daemon, "POST", f"/v1/transfers/{transfer}/cancel")
            # New episodes where a feed's period has come round, then every feed fetched.
            for index in range(ctx.year_feeds):
                if day % FEED_PERIODS[index % len(FEED_PERIODS)] == 0:
                    write_feed(ctx, index, day)
            daemon.api("POST", "/v1/podcasts/refresh", timeout=300)
            settle(daemon, day)
            # Yesterday's finished ones, some removed with their files.
            for transfer in finished[::10]:
                call(daemon, "DELETE", f"/v1/transfers/{transfer}?deleteFile=true")
            finished = ids
            done += len(finished)
            # A few plays: positions, every third to the end.
            for n, podcast in enumerate(podcasts[day % 10::40]):
                episodes = daemon.api("GET", f"/v1/podcasts/{podcast}")["episodes"]
                if episodes:
                    position = 1800 if n % 3 == 0 else 600
                    call(daemon, "PUT", f"/v1/episodes/{episodes[0]['id']}/playback",
                         {"positionSeconds": position, "durationSeconds": 1800})
            if day == REMOVE_FINISHED_ON:
                daemon.cli("rm", "--finished")
            if day % 30 == 0 or day == ctx.year_days:
                month = measure(daemon, done, day, started)
                months.append(month)
                log(f"  year: month {len(months)}: {done:,} done, journal {month['journal_bytes'] >> 10} KiB, "
                    f"WAL {month['wal_bytes'] >> 10} KiB, RSS {month['rss_kib'] >> 10} MiB, fds {month['fds']}, "
                    f"threads {month['threads']}, rows {month['rows']}")
            if day % KILL_EVERY == 0:
                daemon.kill9()
                daemon.start()
            elif day % RESTART_EVERY == 0:
                daemon.stop()
                daemon.start()
        return {"months": months, "done": done, "days": ctx.year_days, "per_day": ctx.year_per_day, "feeds": ctx.year_feeds,
                "seconds": time.monotonic() - started}
    except Exception:
        # The evidence kept: the journal and the daemon's log.
        daemon.stop()
        kept = ctx.work / "year-failed"
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(daemon.state, kept)
        log(f"  year: failed on day {day}; the daemon's state folder kept in {kept}")
        raise
    finally:
        daemon.wipe()


def aria2c(ctx, count):
    """aria2c given `count` downloads (of day 1's files, over and over, into a folder emptied as
    it goes): its session file and RSS after them."""
    out = ctx.work / "out-year-aria2"
    out.mkdir(parents=True, exist_ok=True)
    session = ctx.work / "year-aria2.session"
    session.unlink(missing_ok=True)
    port = free_port()
    process = subprocess.Popen(["aria2c", "--enable-rpc", f"--rpc-listen-port={port}", "-j16", "--max-download-result=1000",
                                f"--save-session={session}", "--allow-overwrite=true", "--auto-file-renaming=false",
                                "--console-log-level=error", "--summary-interval=0", "-d", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def rpc(method, *params):
        body = json.dumps({"jsonrpc": "2.0", "id": "y", "method": method, "params": list(params)}).encode()
        with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/jsonrpc", data=body), timeout=60) as r:
            return json.loads(r.read())["result"]

    def answers():
        try:
            rpc("aria2.getVersion")
            return True
        except OSError:
            return False

    try:
        wait_for(answers, 10, what="aria2c's RPC")
        names = [media(ctx, 1, n) for n in range(ctx.year_per_day)]
        given = 0
        while given < count:
            batch = min(ctx.year_per_day, count - given)
            rpc("system.multicall", [{"methodName": "aria2.addUri", "params": [[ctx.nginx.url(names[n])]]} for n in range(batch)])
            given += batch

            def idle():
                stat = rpc("aria2.getGlobalStat")
                return int(stat["numActive"]) + int(stat["numWaiting"]) == 0
            wait_for(idle, 300, interval=0.05, what="aria2c's downloads")
        rpc("aria2.saveSession")
        rss, peak = process_memory(process.pid)
        stopped = int(rpc("aria2.getGlobalStat")["numStoppedTotal"])
        return {"given": given, "stopped_total": stopped, "session_bytes": session.stat().st_size if session.exists() else 0,
                "rss_kib": rss, "peak_kib": peak}
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()


def year(ctx):
    """Scenario 13 (once: it takes about a quarter of an hour with the defaults)."""
    result = {"ferry": ferry(ctx)}
    result["aria2c"] = aria2c(ctx, result["ferry"]["done"])
    return result


def markdown(result):
    f, a = result["ferry"], result["aria2c"]
    tables = sorted({name for month in f["months"] for name in month["rows"]})
    lines = [
        f"{f['days']} simulated days in {f['seconds'] / 60:.1f} min: {f['per_day']} downloads a day, {f['feeds']} feeds; "
        f"restarts every {RESTART_EVERY} days, SIGKILL every {KILL_EVERY}.",
        "",
        "| month | done | journal | per 1,000 done | WAL | RSS | fds | threads | first page ms | whole list ms | podcasts ms | "
        + " | ".join(tables) + " |",
        "|---" * (11 + len(tables)) + "|",
    ]
    for n, m in enumerate(f["months"], 1):
        lines.append(
            f"| {n} | {m['done']:,} | {m['journal_bytes'] / 1e6:.2f} MB | {m['journal_bytes'] / max(m['done'], 1):.0f} kB | "
            f"{m['wal_bytes'] / 1e6:.2f} MB | {m['rss_kib'] >> 10} MiB | {m['fds']} | {m['threads']} | "
            f"{m.get('list_ms', 0):.1f} | {m.get('all_ms', 0):.1f} | {m.get('podcasts_ms', 0):.1f} | "
            + " | ".join(f"{m['rows'].get(name, 0):,}" for name in tables) + " |")
    lines += [
        "",
        f"aria2c after {a['given']:,} downloads (`--max-download-result` 1000): session file {a['session_bytes']:,} B, "
        f"RSS {a['rss_kib'] >> 10} MiB (peak {a['peak_kib'] >> 10} MiB).",
    ]
    return "\n".join(lines)
