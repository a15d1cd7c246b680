"""Turns bench/run's results into its Markdown report (bench/results/<date>.md; see docs/PERFORMANCE.md)."""

import platform
import subprocess


def sh(command):
    try:
        return subprocess.run(command, shell=True, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT).stdout.strip()
    except OSError:
        return "?"


def machine():
    return {
        "cpus": sh("nproc"),
        "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip(),
        "memory": sh("free -h | awk '/Mem:/{print $2}'"),
        "disk": sh("df -hT . | awk 'NR==2{print $1\" \"$2\", \"$3\" total\"}'"),
        "kernel": platform.release(),
        "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
        "swift": sh("swift --version 2>&1 | head -1"),
        "tools": sh("(nginx -v 2>&1; curl --version | head -1 | cut -d' ' -f1-2; wget --version | head -1 | cut -d' ' -f1-3;"
                    " aria2c --version | head -1; wrk -v 2>&1 | head -1 | cut -d' ' -f1-2;"
                    " python3 -c 'import podcastparser; print(\"podcastparser\", podcastparser.__version__)')"
                    " | paste -sd ';' | sed 's/;/; /g'"),
        "load": sh("cut -d' ' -f1-3 /proc/loadavg"),
        # The largest socket buffers the kernel grows to: a stopped download's re-fetched bytes
        # (scenario 4) include what the sender's held (tcp_wmem) and the receiver's (tcp_rmem).
        "tcp": sh("echo tcp_rmem $(cat /proc/sys/net/ipv4/tcp_rmem), tcp_wmem $(cat /proc/sys/net/ipv4/tcp_wmem)"),
    }


def mib(n):
    return f"{n / (1 << 20):.0f} MiB" if n >= 1 << 20 else f"{n / 1024:.0f} KiB"


def secs(s):
    if s is None:
        return "—"
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"


def span(summary, fmt=secs):
    if not summary:
        return "—", "—"
    return fmt(summary["median"]), f"{fmt(summary['min'])} – {fmt(summary['max'])}"


def ratio(theirs, ours):
    """How many times faster Ferry is (>1) or slower (<1)."""
    if not theirs or not ours or ours["median"] == 0:
        return "—"
    return f"{theirs['median'] / ours['median']:.2f}×"


def single(result):
    size = result["size"]
    tools = result["tools"]
    ferry = tools["ferry get"]["summary"]
    network = tools.get("ceiling: curl -o /dev/null", {}).get("summary")
    disk = tools.get("ceiling: dd to disk, O_DIRECT", {}).get("summary")
    limit = max(network["median"], disk["median"]) if network and disk else None
    lines = [
        f"File: {mib(size)}. Time is wall clock until the tool exits; *durable* adds `sync FILE` (fsync) "
        "after tools that do not fsync themselves (Ferry fsyncs before it reports completion). "
        "Ratio = the tool's median time ÷ Ferry's (above 1: Ferry is faster). "
        f"Machine limit = the slower of the network and disk ceilings ({secs(limit)}).",
        "",
        "| tool | median | min – max | MB/s | durable (median) | Ferry's speed ratio | % of machine limit | peak RSS |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, entry in tools.items():
        s = entry["summary"]
        median, rng = span(s)
        rate = f"{size / s['median'] / 1e6:.0f}" if s else "—"
        durable = secs(entry["durable"]["median"]) if entry.get("durable") else "—"
        compare = "—" if name == "ferry get" or name.startswith(("ceiling", "reference")) else ratio(s, ferry)
        of_limit = f"{limit / s['median'] * 100:.0f} %" if limit and not name.startswith(("ceiling", "reference")) else "—"
        rss = f"{entry['rss']['median'] / 1024:.1f} MiB" if entry.get("rss") else "—"
        lines.append(f"| {name} | {median} | {rng} | {rate} | {durable} | {compare} | {of_limit} | {rss} |")
    return "\n".join(lines)


def memory(result):
    tools = result["tools"]
    ferry = tools["ferry get"]
    idle = ferry.get("idle_rss_kib", [])
    lines = [
        "Peak RSS during the single-file runs above (the daemon's VmHWM, reset before each download; "
        "the others' from GNU time), and peak anonymous memory (RssAnon, sampled every 5 ms: heap, stacks "
        "and buffers, without the mapped pages of the binary and its libraries):",
        "",
        "| process | peak RSS median | min – max | peak anonymous median | min – max |",
        "| --- | --- | --- | --- | --- |",
    ]
    kib = lambda v: f"{v / 1024:.1f} MiB"
    variants = [name for name in tools if name.startswith("ferry get (")]
    for name in ("ferry get", *variants, "aria2c -x1", "aria2c -x4", "curl -o", "wget"):
        if name in tools and tools[name].get("rss"):
            label = name.replace("ferry get", "ferry daemon")
            median, rng = span(tools[name]["rss"], kib)
            anon_median, anon_rng = span(tools[name].get("anon"), kib)
            lines.append(f"| {label} | {median} | {rng} | {anon_median} | {anon_rng} |")
    if idle:
        lines.append(f"| ferry daemon, idle before the download | {kib(sorted(idle)[len(idle) // 2])} | | | |")
    lines += ["", "Flat in the file's size (one download each; RSS, and anonymous in brackets):", "",
              "| file | ferry daemon idle | ferry daemon peak | aria2c -x1 peak |", "| --- | --- | --- | --- |"]
    for row in result.get("flatness", []):
        anon = lambda key: f" ({kib(row[key])})" if row.get(key) is not None else ""
        lines.append(f"| {mib(row['size'])} | {kib(row['ferry_idle_kib'])} | {kib(row['ferry_peak_kib'])}"
                     f"{anon('ferry_anon_kib')} | {kib(row['aria2c_peak_kib'])}{anon('aria2c_anon_kib')} |")
    return "\n".join(lines)


def many(result):
    tools = result["tools"]
    ferry = tools["ferry get"]["summary"]
    lines = [f"{result['count']} files of 1 MiB, 16 at a time.", "",
             "| tool | median | min – max | files/s | Ferry's speed ratio |", "| --- | --- | --- | --- | --- |"]
    for name, entry in tools.items():
        median, rng = span(entry["summary"])
        rate = result["count"] / entry["summary"]["median"]
        lines.append(f"| {name} | {median} | {rng} | {rate:.0f} | "
                     f"{'—' if name == 'ferry get' else ratio(entry['summary'], ferry)} |")
    return "\n".join(lines)


def resume(result):
    lines = [
        f"File: {mib(result['size'])}, stopped at 50 %. *Re-fetched* = bytes nginx sent for the file in all "
        "requests minus the file's size. *First resumed byte* = from the restart command (`ferry resume`, "
        "`ferry serve --detach` after kill -9, or the tool run again) to nginx receiving the ranged request. "
        "*Stop* = until the stop returned: `ferry pause` (or the API's) answered, or the stopped process "
        "exited (after kill -9 of Ferry's daemon: until every thread of it had).",
        "",
        "| case | re-fetched median | min – max | first resumed byte median | min – max | stop median | min – max |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, entry in result["variants"].items():
        refetched, rng = span(entry["refetched_summary"], mib_signed)
        first, frng = span(entry["first_byte_summary"])
        stop, srng = span(entry["stop_summary"]) if "stop_summary" in entry else ("—", "—")
        lines.append(f"| {name} | {refetched} | {rng} | {first} | {frng} | {stop} | {srng} |")
    return "\n".join(lines)


def mib_signed(n):
    return f"{n / (1 << 20):.1f} MiB" if abs(n) >= 1 << 20 else f"{n / 1024:.0f} KiB" if n else "0"


def start(result):
    return "\n".join([
        f"A journal of {result['transfers']:,} completed transfers ({mib(result['journal_bytes'])} of SQLite, WAL "
        f"included; filling it — {result['transfers']:,} downloads of 4 KiB at concurrency 16 — took "
        f"{secs(result['populate_seconds'])}). Time from exec of `ferry serve` until `GET /v1/status` answers:",
        "",
        "| journal | median | min – max |", "| --- | --- | --- |",
        *(f"| empty{named(name)} | %s | %s |" % span(entry["summary"]) for name, entry in result["empty"].items()),
        *(f"| {result['transfers']:,} transfers{named(name)} | %s | %s |" % span(entry["summary"])
          for name, entry in result["loaded"].items()),
    ])


def named(binary):
    """The ferry under test is unnamed in a row; a --variant build is named in brackets."""
    return "" if binary == "ferry" else f" ({binary})"


def api(result):
    ms = lambda v: f"{v:.1f} ms" if v >= 1 else f"{v * 1000:.0f} µs"
    lines = [
        f"wrk -t2 -c{result['connections']} -d{result['seconds']}s on the same 2 cores as the daemon; the full list "
        f"is {mib(result['list_bytes'])} of JSON. Medians over runs (min – max).",
        "",
        "| endpoint | p50 | p99 | requests/s | non-2xx |", "| --- | --- | --- | --- | --- |",
    ]
    for name, entry in result["endpoints"].items():
        p50, p50r = span(entry["p50"], ms)
        p99, p99r = span(entry["p99"], ms)
        rps, rpsr = span(entry["rps"], lambda v: f"{v:,.0f}")
        lines.append(f"| {name} | {p50} ({p50r}) | {p99} ({p99r}) | {rps} ({rpsr}) | {entry['non2xx']} |")
    return "\n".join(lines)


def feeds(result):
    lines = [
        f"Corpus: {result['corpus_files']} test feeds (gofeed RSS/Atom, podcastparser's); synthetic feed: "
        f"{mib(result['big_bytes'])}, 20,000 episodes. Time = parse only (files already in memory; the corpus "
        "is the best of 20 passes in a process), median over processes. Peak RSS = the whole process.",
        "",
        "| input | parser | time median | min – max | Ferry's speed ratio | peak RSS | parsed / refused | episodes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for set_name, parsers in result["sets"].items():
        ferry = parsers.get("ferry FeedParser", {}).get("summary")
        for name, entry in parsers.items():
            median, rng = span(entry["summary"])
            compare = "—" if name.startswith("ferry") or set_name.startswith("nothing") else ratio(entry["summary"], ferry)
            lines.append(f"| {set_name} | {name} | {median} | {rng} | {compare} | "
                         f"{entry['rss']['median'] / 1024:.1f} MiB | {entry['feeds']} / {entry['refused']} | "
                         f"{entry['episodes']} |")
    daemon = result.get("daemon")
    if daemon:
        lines += [
            "",
            "The daemon with the 20,000-episode feed: `ferry podcast add` (served by nginx), then "
            "`ferry podcast episodes --json`, in a fresh daemon. Peak RSS = the daemon's VmHWM; "
            f"anonymous = its RssAnon right after, and {daemon['settle_seconds']} s later.",
            "",
            "| daemon | peak RSS median | min – max | anonymous after | "
            f"{daemon['settle_seconds']} s later | min – max |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for name, entry in daemon["binaries"].items():
            peak, settled = entry["peak"], entry["settled"]
            lines.append(f"| {name} | {peak['median'] / 1024:.1f} MiB | {peak['min'] / 1024:.1f} – "
                         f"{peak['max'] / 1024:.1f} MiB | {entry['after']['median'] / 1024:.1f} MiB | "
                         f"{settled['median'] / 1024:.1f} MiB | {settled['min'] / 1024:.1f} – "
                         f"{settled['max'] / 1024:.1f} MiB |")
    return "\n".join(lines)


SECTIONS = [
    ("single", "1. One large file to disk", single),
    ("single", "2. Peak memory of the daemon during scenario 1", memory),
    ("many", "3. Many small files", many),
    ("resume", "4. Resume cost", resume),
    ("start", "5. Daemon start with a large journal", start),
    ("api", "6. API under load", api),
    ("feeds", "7. Feeds", feeds),
]


def markdown(results, command, started, finished, info):
    lines = [
        f"Command: `{command}`  ",
        f"Date: {started} – {finished}  ",
        f"Machine: {info['cpus']} × {info['cpu']}, {info['memory']} RAM, disk {info['disk']}, Linux {info['kernel']} "
        f"({info['os']}), load average at start {info['load']}, free page reporting "
        f"{info.get('page_reporting', 'not recorded')}, {info.get('tcp', 'TCP buffers not recorded')}  ",
        f"Swift: {info['swift']}  ",
        f"Tools: {info['tools']}",
        "",
    ]
    shown_load = set()
    for key, title, render in SECTIONS:
        if key in results:
            lines += [f"### {title}", "", render(results[key]), ""]
            load = results[key].get("load")
            if load and key not in shown_load:
                shown_load.add(key)
                lines += [f"Load average (1, 5, 15 min) before: {load['before']}; after: {load['after']}.", ""]
    return "\n".join(lines)
