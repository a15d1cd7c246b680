"""Scenarios 1–4: one large download, the daemon's memory, many small downloads, resume cost.
Every tool downloads the same bytes from the same nginx; runs are interleaved (the order rotates
each round) so that a slow moment of the machine does not land on one tool."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from harness import (AnonPeak, FerryDaemon, log, process_memory, reset_peak_memory, run, sha256, summary,
                     timed, timed_with_rss, wait_for)

ARIA2 = ["aria2c", "--console-log-level=error", "--summary-interval=0", "--download-result=hide",
         "--allow-overwrite=true", "--auto-file-renaming=false"]


def settle():
    """Flush the previous run's dirty pages so they are not charged to the next tool."""
    os.sync()
    time.sleep(0.5)


def rotate(items, round_index):
    k = round_index % len(items)
    return items[k:] + items[:k]


def clear(folder):
    folder = Path(folder)
    if folder.exists():
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    folder.mkdir(parents=True)


def fsync_seconds(path):
    """How long making an already-written file durable takes (`sync FILE` = fsync)."""
    return timed(["sync", str(path)])


def ferry_daemons(ctx, folder, **options):
    """The ferry under test and each --variant build, a daemon of its own each, by tool name."""
    daemons = {"ferry get": FerryDaemon(ctx.work / folder, ctx.ferry, **options).start()}
    for i, (name, binary) in enumerate(ctx.variants.items()):
        daemons[f"ferry get ({name})"] = FerryDaemon(ctx.work / f"{folder}-{i}", binary, **options).start()
    return daemons


# MARK: - Scenario 1 and 2: one large file


def single_large(ctx):
    """One file of ctx.size bytes to disk, each tool ctx.runs times, interleaved; the daemon's
    and aria2c's peak RSS on the way (scenario 2)."""
    url = ctx.nginx.url(ctx.big.name)
    out = ctx.work / "out-single"
    daemons = ferry_daemons(ctx, "ferry-single")
    daemon = daemons["ferry get"]
    expected = ctx.big_sha256
    results = {}

    def record(tool, seconds, rss=None, durable=None, anon=None):
        entry = results.setdefault(tool, {"seconds": [], "rss_kib": [], "anon_kib": [], "durable_seconds": []})
        entry["seconds"].append(seconds)
        entry["rss_kib"].append(rss)
        entry["anon_kib"].append(anon)
        entry["durable_seconds"].append(durable)

    def ferry_get(tool, daemon):
        def go():
            idle_rss, _ = process_memory(daemon.pid)
            reset_peak_memory(daemon.pid)
            start = time.perf_counter()
            with AnonPeak(daemon.pid) as anon:
                result = daemon.cli("get", "--force", "--session", "bench", "--json", url)
            seconds = time.perf_counter() - start
            _, peak = process_memory(daemon.pid)
            transfer = json.loads(result.stdout)[0]
            assert transfer["state"] == "completed" and transfer["sha256"] == expected, transfer
            record(tool, seconds, peak, seconds, anon.peak_kib)
            results[tool].setdefault("idle_rss_kib", []).append(idle_rss)
            clear(daemon.library / "Downloads")
        return go

    def competitor(tool, command, target):
        def go():
            seconds, rss, anon = timed_with_rss(command)
            record(tool, seconds, rss, seconds + fsync_seconds(target), anon)
            target.unlink()
        return go

    def ceiling(tool, command, target=None):
        def go():
            seconds, rss, anon = timed_with_rss(command)
            record(tool, seconds, rss, anon=anon)
            if target:
                target.unlink()
        return go

    clear(out)
    file = out / "big.bin"
    mib = ctx.size >> 20
    tools = [
        *(ferry_get(tool, d) for tool, d in daemons.items()),
        competitor("curl -o", ["curl", "-sSf", "-o", file, url], file),
        competitor("wget", ["wget", "-q", "-O", file, url], file),
        competitor("aria2c -x1", [*ARIA2, "-x1", "-s1", "-d", out, "-o", "big.bin", url], file),
        competitor("aria2c -x4", [*ARIA2, "-x4", "-s4", "-d", out, "-o", "big.bin", url], file),
        ceiling("ceiling: curl -o /dev/null", ["curl", "-sSf", "-o", "/dev/null", url]),
        # The disk's own write bandwidth: O_DIRECT bypasses the page cache, so this is the device.
        ceiling("ceiling: dd to disk, O_DIRECT", ["dd", "if=/dev/zero", f"of={file}", "bs=16M", f"count={mib // 16}",
                                                   "oflag=direct", "status=none"], file),
        # Writes to the page cache, then one fsync at the end: unlike a download, nothing overlaps.
        ceiling("reference: dd to disk + fsync", ["dd", "if=/dev/zero", f"of={file}", "bs=1M", f"count={mib}",
                                                 "conv=fsync", "status=none"], file),
        ceiling("reference: dd to page cache", ["dd", "if=/dev/zero", f"of={file}", "bs=1M", f"count={mib}",
                                                "status=none"], file),
        ceiling("reference: sha256sum", ["sha256sum", ctx.big]),
    ]
    try:
        for round_index in range(ctx.runs):
            for go in rotate(tools, round_index):
                settle()
                go()
            log(f"  single: round {round_index + 1}/{ctx.runs} done")
        flat = memory_flatness(ctx, daemon)
    finally:
        for d in daemons.values():
            d.wipe()
    return {"tools": {k: {**v, "summary": summary(v["seconds"]), "durable": summary(v["durable_seconds"]),
                          "rss": summary(v["rss_kib"]), "anon": summary(v["anon_kib"])} for k, v in results.items()},
            "flatness": flat, "size": ctx.size}


def memory_flatness(ctx, daemon):
    """Scenario 2's second half: the daemon's peak RSS for files of 1/16, 1/4 and 1× the size,
    against aria2c's, to show it does not grow with the file."""
    rows = []
    out = ctx.work / "out-flat"
    for size in (ctx.size // 16, ctx.size // 4, ctx.size):
        name = ctx.make_sized(size)
        url = ctx.nginx.url(name)
        settle()
        idle, _ = process_memory(daemon.pid)
        reset_peak_memory(daemon.pid)
        with AnonPeak(daemon.pid) as anon:
            daemon.cli("get", "--force", "--session", "flat", "--json", url)
        _, peak = process_memory(daemon.pid)
        clear(daemon.library / "Downloads")
        clear(out)
        settle()
        _, aria, aria_anon = timed_with_rss([*ARIA2, "-x1", "-s1", "-d", out, "-o", "f.bin", url])
        rows.append({"size": size, "ferry_idle_kib": idle, "ferry_peak_kib": peak, "aria2c_peak_kib": aria,
                     "ferry_anon_kib": anon.peak_kib, "aria2c_anon_kib": aria_anon})
    clear(out)
    return rows


# MARK: - Scenario 3: many small files


def many_small(ctx):
    """ctx.many_count files of 1 MiB at concurrency 16: Ferry vs aria2c -j16 -i vs xargs -P16 curl."""
    urls = [ctx.nginx.url(f"many/{name}") for name in ctx.many_names]
    out = ctx.work / "out-many"
    listing = ctx.work / "many-urls.txt"
    listing.write_text("\n".join(urls) + "\n")
    daemons = ferry_daemons(ctx, "ferry-many", max_concurrent=16)
    results = {}

    def ferry_get(daemon):
        def go():
            start = time.perf_counter()
            result = daemon.cli("get", "--force", "--session", "many", "--json", *urls)
            seconds = time.perf_counter() - start
            transfers = json.loads(result.stdout)
            assert len(transfers) == len(urls) and all(t["state"] == "completed" for t in transfers)
            clear(daemon.library / "Downloads")
            return seconds
        return go

    def aria2c():
        clear(out)
        seconds = timed([*ARIA2, "-j16", "-i", listing, "-d", out])
        assert len(os.listdir(out)) == len(urls)
        return seconds

    def xargs_curl():
        clear(out)
        with open(listing) as stdin:
            seconds = timed(["xargs", "-P16", "-n1", "curl", "-sSfO"], stdin=stdin, cwd=out)
        assert len(os.listdir(out)) == len(urls)
        return seconds

    tools = [*((name, ferry_get(d)) for name, d in daemons.items()),
             ("aria2c -j16 -i list", aria2c), ("xargs -P16 curl", xargs_curl)]
    try:
        for round_index in range(ctx.runs):
            for name, go in rotate(tools, round_index):
                settle()
                results.setdefault(name, []).append(go())
            log(f"  many: round {round_index + 1}/{ctx.runs} done")
    finally:
        for daemon in daemons.values():
            daemon.wipe()
        clear(out)
    return {"count": len(urls), "tools": {k: {"seconds": v, "summary": summary(v)} for k, v in results.items()}}


# MARK: - Scenario 4: resume cost


def resume_cost(ctx):
    """Stop each tool at 50 % of the large file (gracefully, and with kill -9), start it again,
    and read from nginx's access log how many bytes were fetched beyond the remainder and how long
    after the restart command the resumed request arrived."""
    url = ctx.nginx.url(ctx.big.name)
    out = ctx.work / "out-resume"
    clear(out)
    daemons = ferry_daemons(ctx, "ferry-resume")
    half = ctx.size // 2
    results = {}

    def part_size(path):
        try:
            return path.stat().st_size
        except FileNotFoundError:
            return 0

    def ferry_variant(daemon, kill, api=False):
        """`ferry pause` / `ferry resume`, or kill -9 and a new daemon; with `api`, pause and
        resume through the HTTP API, as the web app and FerryKit do (no CLI process to start)."""
        def go():
            transfer = json.loads(daemon.cli("get", "--no-wait", "--force", "--session", "resume", "--json", url).stdout)[0]
            tid = transfer["id"]
            part = daemon.library / ".partial" / f"{tid}.part"
            wait_for(lambda: part_size(part) >= half, 120, interval=0.002, what="50 %")
            stopped_at = part_size(part)
            stop_started = time.perf_counter()
            if kill:
                daemon.kill9(all_threads=True)  # The same start for every build (see kill9).
                stop_seconds = time.perf_counter() - stop_started
                restart_at = time.time()
                daemon.start()
            else:
                if api:
                    daemon.api("POST", f"/v1/transfers/{tid}/pause")
                else:
                    daemon.cli("pause", tid)
                stop_seconds = time.perf_counter() - stop_started
                wait_for(lambda: not any(t["id"] == tid and t["state"] == "running" for t in daemon.transfers()), 30,
                         what="pause")
                restart_at = time.time()
                if api:
                    daemon.api("POST", f"/v1/transfers/{tid}/resume")
                else:
                    daemon.cli("resume", tid)
            done = json.loads(daemon.cli("wait", "--json", tid, timeout=600).stdout)
            done = done[0] if isinstance(done, list) else done
            assert done["sha256"] == ctx.big_sha256, done
            clear(daemon.library / "Downloads")
            return stopped_at, restart_at, stop_seconds
        return go

    def cli_variant(start_command, resume_command, target, kill):
        def go():
            if target.exists():
                target.unlink()
            for control in out.glob("*.aria2"):
                control.unlink()
            process = subprocess.Popen(start_command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for(lambda: part_size(target) >= half, 120, interval=0.002, what="50 %")
            stopped_at = part_size(target)
            stop_started = time.perf_counter()
            process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
            process.wait()
            stop_seconds = time.perf_counter() - stop_started
            restart_at = time.time()
            run(resume_command)
            assert sha256(target) == ctx.big_sha256, f"{resume_command[0]} produced a wrong file"
            target.unlink()
            return stopped_at, restart_at, stop_seconds
        return go

    file = out / "big.bin"
    aria = [*ARIA2, "-x1", "-s1", "--file-allocation=none", "-d", out, "-o", "big.bin", url]
    variants = []
    for tool, daemon in daemons.items():
        suffix = tool.removeprefix("ferry get")  # "" or " (variant name)"
        variants += [
            (f"ferry pause / resume{suffix}", ferry_variant(daemon, kill=False)),
            (f"ferry API pause / resume{suffix}", ferry_variant(daemon, kill=False, api=True)),
            (f"ferry kill -9 / restart daemon{suffix}", ferry_variant(daemon, kill=True)),
        ]
    variants += [
        ("curl Ctrl-C / curl -C -", cli_variant(["curl", "-sS", "-o", file, url],
                                                ["curl", "-sSf", "-C", "-", "-o", file, url], file, kill=False)),
        ("curl kill -9 / curl -C -", cli_variant(["curl", "-sS", "-o", file, url],
                                                 ["curl", "-sSf", "-C", "-", "-o", file, url], file, kill=True)),
        ("wget Ctrl-C / wget -c", cli_variant(["wget", "-q", "-O", file, url], ["wget", "-q", "-c", "-O", file, url],
                                              file, kill=False)),
        ("wget kill -9 / wget -c", cli_variant(["wget", "-q", "-O", file, url], ["wget", "-q", "-c", "-O", file, url],
                                               file, kill=True)),
        ("aria2c Ctrl-C / aria2c -c", cli_variant(aria, [*aria, "-c"], file, kill=False)),
        ("aria2c kill -9 / aria2c -c", cli_variant(aria, [*aria, "-c"], file, kill=True)),
    ]
    try:
        for round_index in range(ctx.runs):
            for name, go in rotate(variants, round_index):
                settle()
                ctx.nginx.clear_log()
                stopped_at, restart_at, stop_seconds = go()
                time.sleep(0.2)  # nginx logs a request when it ends
                entries = [e for e in ctx.nginx.log_entries() if ctx.big.name in e["request"]]
                fetched = sum(e["bytes"] for e in entries)
                resumed = [e for e in entries if e["end"] - e["duration"] >= restart_at - 0.002]
                first = min((e["end"] - e["duration"] for e in resumed), default=None)
                entry = results.setdefault(name, {"refetched": [], "first_byte": [], "stop": [], "stopped_at": [],
                                                  "requests": []})
                entry["stop"].append(stop_seconds)
                entry["refetched"].append(fetched - ctx.size)
                entry["first_byte"].append(None if first is None else max(0.0, first - restart_at))
                entry["stopped_at"].append(stopped_at)
                entry["requests"].append([(e["status"], e["range"], e["bytes"]) for e in entries])
            log(f"  resume: round {round_index + 1}/{ctx.runs} done")
    finally:
        for daemon in daemons.values():
            daemon.wipe()
        clear(out)
    return {"size": ctx.size, "variants": {k: {**v, "refetched_summary": summary(v["refetched"]),
                                               "first_byte_summary": summary(v["first_byte"]),
                                               "stop_summary": summary(v["stop"])}
                                           for k, v in results.items()}}
