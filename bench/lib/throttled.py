"""Scenario 9: a throttled origin. nginx in a namespace O serves one file (--throttled-size,
default 256 MiB) to a client namespace C over a veth whose O→C direction is shaped with htb to
--throttled-rate (default 400mbit; this kernel has htb and tbf, no netem), built by
tests/lab/lab.py. Root only, and run only when named: `bench/run --only throttled`.

Why: a server that caps each connection (nginx `limit_rate`, common on mirrors and CDNs) is
where several connections per file pay off, and a link without such a cap is where they must not
cost anything. So two variants, measured in the same interleaved rounds (every tool of both
variants once per round, the order rotating each round; --runs rounds, default 3 here):

  limited    the file under /limited/, an nginx location with `limit_rate --throttled-limit;`
             (default 4m: 4 MiB/s per request, so about 12 connections fill 400 Mbit/s)
  unlimited  the same file and link, no limit_rate

Tools, each run in C and each output checked by SHA-256:
  ferry get      `ferry serve` in C with its defaults (FERRY_HOME in the work folder), then per run
                 `ferry get --no-wait --force --session throttled --json [--ferry-option...] URL`
                 and `ferry ls --all --json` (every 0.5 s) until completed or failed
                 (bench/lib/linkloss.py's Ferry)
  ferry get --connections 1
                 only in the unlimited variant, and only when this ferry's `get --help` has
                 --connections: Ferry's own single-connection baseline (else curl is the baseline)
  aria2c -x16 -s16 -k1M, aria2c -x4 -s4
                 both with --no-conf (no aria2.conf; nor any session or input file) and
                 --file-allocation=none
  curl -o        curl -q (no .curlrc) -sSf -o FILE
  wget           wget --no-config -q -O FILE

--ferry-option (repeatable; each value is split like a shell would: --ferry-option='--connections
16') adds flags to every `ferry get` of the default row, and names the row after them, so later
runs can compare fixed and adaptive settings. A flag this ferry does not know fails its runs
(recorded with get's error), not the scenario.

Measured per run: wall time from the tool's start (for Ferry, from `ferry get`) until its output
is complete: the process's exit (checked every 10 ms), for Ferry the moment its finished file is
whole in Downloads/ (checked every 10 ms by a thread; `ferry ls` then confirms the state); the
throughput as a fraction of the link rate (file bytes × 8 / time / rate: the most a tool can reach
is about 95.6 %, the share of TCP payload in each 1514-byte frame htb counts, MTU 1500 with TCP
timestamps; a small file gains up to the shaper's burst, 20 ms of the rate, on top); the requests and the distinct TCP connections ($connection) nginx logged for the file,
their statuses, the bytes nginx sent and each connection's average rate; and the peak RSS of the
tool (for Ferry: its daemon, whose peak is reset before each run), VmHWM and RssAnon read from
/proc every 100 ms. A tool still running after --throttled-timeout-factor (default 4) × the
single-connection expectation (the file at min(limit, link rate); at least 30 s) is killed and
recorded as stopped by the bench.

The report shows medians per tool per variant, and the goals: with the limit, Ferry at least as
fast as aria2c -x16 and within 10 % of the link rate; without it, not slower than a single
connection (Ferry's own with --connections 1 when it has the flag, else curl).

What to know when reading it: nginx's limit_rate holds each *request* (not connection) to the
rate counted from the request's start in whole seconds, plus one second's worth: every new
request may start with a burst of up to one second of the rate (4 MiB), so a client that asks for
many short ranges gets more than the rate per connection. The per-connection rate column shows it,
but reads high for short transfers: nginx's $request_time ends when the last byte is handed to the
kernel, a few MB (socket buffer, htb's queue) before the client has it.
"""

import contextlib
import copy
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from downloads import ARIA2, clear, rotate, settle
from harness import REPO, Sampler, is_root, log, reset_peak_memory, sha256, summary
from linkloss import Ferry, Tool

sys.path.insert(0, str(REPO / "tests" / "lab"))
from lab import Lab, rate_bits  # noqa: E402

SESSION = "throttled"
SAMPLE_INTERVAL = 0.1  # peak memory
ARRIVAL_INTERVAL = 0.01  # the end of a run
MIN_TIMEOUT = 30.0
# TCP payload per frame htb counts: 1448 of 1514 bytes (MTU 1500, 20 + 32 bytes of IP and TCP
# headers with timestamps, 14 of Ethernet). The most of the link rate any tool can show.
PAYLOAD_SHARE = 1448 / 1514
VARIANTS = ("limited", "unlimited")
SINGLE_FLAG = "--connections"


def nginx_size(text):
    """nginx's size syntax (4m, 512k, 1048576) in bytes: k and m count in 1024s."""
    text = text.strip().lower()
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def unavailable():
    """Why the scenario cannot run here (None when it can): a skip says so instead of failing."""
    if not is_root():
        return "needs root (network namespaces, veth pairs, tc): run bench/run as root"
    missing = [t for t in ("ip", "tc", "nginx", "curl", "wget", "aria2c") if not shutil.which(t)]
    if missing:
        return f"missing {', '.join(missing)} (tests/lab/run installs the lab's packages)"
    name = f"flprobe{os.getpid()}"
    probe = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"'ip netns add' is not permitted here: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


class PeakMemory(Sampler):
    """Peak RSS and peak anonymous RSS (KiB) of one process, from /proc every 100 ms in a thread.
    RSS is read from VmHWM, the kernel's own high-water mark, so a peak between two samples still
    counts (a long-lived daemon's mark must be reset before: harness.reset_peak_memory)."""

    def __init__(self, pid):
        super().__init__(SAMPLE_INTERVAL)
        self.pid = pid
        self.rss_kib = self.anon_kib = None

    def tick(self):
        self.sample()

    def sample(self):
        try:
            lines = Path(f"/proc/{self.pid}/status").read_text().splitlines()
        except OSError:
            return  # gone (or not started yet)
        for line in lines:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "RssAnon"):
                kib = int(value.split()[0])
                if key == "VmHWM":
                    self.rss_kib = max(self.rss_kib or 0, kib)
                else:
                    self.anon_kib = max(self.anon_kib or 0, kib)


class Arrival(Sampler):
    """The first moment (monotonic) a file of `size` bytes is in `folder`, checked every 10 ms
    in a thread: when Ferry's download is done for its user (it moves the whole file there from
    .partial/), without waiting for the next `ferry ls`."""

    def __init__(self, folder, size):
        super().__init__(ARRIVAL_INTERVAL)
        self.folder, self.size = Path(folder), size
        self.at = None

    def tick(self):
        try:
            if any(p.stat().st_size == self.size for p in self.folder.iterdir() if not p.name.startswith(".")):
                self.at = time.monotonic()
                return True
        except OSError:
            pass  # the folder is made at the first download; a file may move under us
        return False


def has_single_connection_flag(binary):
    """Whether this ferry's `get` takes --connections (segmented downloads): then its own
    single-connection run is the unlimited variant's baseline."""
    result = subprocess.run([binary, "get", "--help"], capture_output=True, text=True)
    return re.search(rf"(^|\s){SINGLE_FLAG}\b", result.stdout, re.MULTILINE) is not None


def limited_location(www, limit):
    """The nginx location of the limited variant: the same files under /limited/."""
    return f"location /limited/ {{ alias {www}/; limit_rate {limit}; }}"


def check_origin(lab, url):
    """The response headers from C, after checking what segmented downloads need: Range support
    and a strong ETag (nginx's static files have both by default)."""
    head = lab.run_in(lab.client, ["curl", "-q", "-sSfI", url]).stdout
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head.splitlines()) if v}
    ranged = lab.run_in(lab.client, ["curl", "-q", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-r", "0-0",
                                     url]).stdout
    etag = headers.get("etag", "")
    if ranged != "206" or headers.get("accept-ranges") != "bytes" or not etag or etag.startswith("W/"):
        raise RuntimeError(f"{url}: no Range support or no strong ETag (status {ranged} for bytes=0-0): {head}")
    return {"etag": etag, "accept_ranges": headers["accept-ranges"]}


def connections(entries):
    """What nginx logged for one run: requests, distinct connections, statuses, bytes sent, and
    each connection's average rate (its bytes over its first request's start to last one's end)."""
    per_connection = {}
    for e in entries:
        per_connection.setdefault(e["connection"], []).append(e)
    rates = []
    for requests in per_connection.values():
        span = max(r["end"] for r in requests) - min(r["start"] for r in requests)
        sent = sum(r["body_bytes_sent"] for r in requests)
        if span > 0 and sent >= 1 << 20:  # a probe or a short tail says nothing of the rate
            rates.append(sent / span)
    return {"requests": len(entries), "connections": len(per_connection),
            "statuses": dict(Counter(str(e["status"]) for e in entries)),
            "body_bytes": sum(e["body_bytes_sent"] for e in entries),
            "connection_rate": statistics.median(rates) if rates else None}


def one_run(lab, tool, url, size, expected, rate, timeout):
    """One download by one tool: its wall time, throughput, nginx's requests and connections,
    peak memory, and whether the output's SHA-256 is right. Never raises for the tool's failure:
    a failed, wrong or stuck run is recorded as such (a stuck one is killed after `timeout`)."""
    lab.clear_nginx_log()
    is_ferry = isinstance(tool, Ferry)
    record = {"completed": False, "sha256_ok": False, "seconds": None, "fraction": None, "timed_out": False,
              "ended": None, "rss_kib": None, "anon_kib": None, "idle_rss_kib": None}
    memory = arrival = None
    with contextlib.ExitStack() as sampling:
        if is_ferry:  # The daemon is already running: watch it from before the request.
            record["idle_rss_kib"] = resident(tool.pid)
            reset_peak_memory(tool.pid)
            arrival = sampling.enter_context(Arrival(tool.home / "library" / "Downloads", size))
            memory = sampling.enter_context(PeakMemory(tool.pid))
        began = time.monotonic()
        try:
            if is_ferry:
                tool.get(url)()
            else:
                tool.start()
                memory = sampling.enter_context(PeakMemory(tool.pid))
            ended = wait(tool, began, timeout, record)
        except RuntimeError as error:  # `ferry get` refused (e.g. an option this build lacks)
            ended = (False, refusal(error))
        finished_at = time.monotonic()
    if memory:
        record["rss_kib"], record["anon_kib"] = memory.rss_kib, memory.anon_kib
    completed, record["ended"] = ended
    if arrival and arrival.at is not None:
        finished_at = min(finished_at, arrival.at)
    output = tool.output() if completed else None
    if output and output.exists():
        record["sha256_ok"] = sha256(output) == expected
        record["completed"] = record["sha256_ok"]
        if not record["sha256_ok"]:
            record["ended"] += ": wrong SHA-256"
    elif completed:
        record["ended"] += ": no output file"
    if record["completed"]:
        record["seconds"] = round(finished_at - began, 3)
        record["fraction"] = round(size * 8 / record["seconds"] / rate, 4)
    time.sleep(0.2)  # nginx logs a request when it ends
    record.update(connections(lab.nginx_requests(url.split("/", 3)[3])))
    return record


def refusal(error):
    """The line of a refused `ferry get` that says why ("Error: Unknown option ..."), not its usage."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    said = [line for line in lines if "Error:" in line]
    return (said[0][said[0].index("Error:"):] if said else f"ferry get failed: {lines[-1] if lines else error}")[:200]


def wait(tool, began, timeout, record):
    """Until the tool has finished: (completed, how it ended); a tool still at it after
    `timeout` s is stopped, so one stuck tool cannot hang the whole benchmark."""
    while True:
        ended = tool.finished()
        if ended is not None:
            return ended
        if time.monotonic() - began > timeout:
            tool.stop()
            record["timed_out"] = True
            return False, f"stopped by the bench after {timeout:.0f} s"
        time.sleep(ARRIVAL_INTERVAL)


def resident(pid):
    """A process's current RSS in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def cases(lab, ferry, name, out, stderr, single_flag, builds=()):
    """(variant, label, url, make) for every run of a round, each tool's two variants side by
    side; `make` returns a fresh Tool, or the Ferry whose daemon runs for the whole scenario."""
    target = out / name
    clis = [
        ("aria2c -x16 -s16 -k1M", [*ARIA2, "--no-conf=true", "--file-allocation=none", "-x16", "-s16", "-k1M",
                                    "-d", out, "-o", name]),
        ("aria2c -x4 -s4", [*ARIA2, "--no-conf=true", "--file-allocation=none", "-x4", "-s4", "-d", out, "-o", name]),
        ("curl -o", ["curl", "-q", "-sSf", "-o", target]),
        ("wget", ["wget", "--no-config", "-q", "-O", target]),
    ]
    made = []
    for variant in VARIANTS:
        url = lab.url(f"limited/{name}" if variant == "limited" else name)
        if ferry:
            made.append((variant, ferry_label(ferry.options), url, lambda: ferry))
            for build_name, build in builds:
                made.append((variant, f"{ferry_label(build.options)} [{build_name}]", url, lambda build=build: build))
            if single_flag and variant == "unlimited":
                single = copy.copy(ferry)  # the same daemon, other options
                single.options = [SINGLE_FLAG, "1"]
                made.append((variant, ferry_label(single.options), url, lambda single=single: single))
        for label, argv in clis:
            made.append((variant, label, url, lambda argv=argv, url=url: Tool(lab, [*argv, url], target, stderr)))
    # Tool-major order, so each tool's two variants run next to each other in a round.
    order = [label for _, label, _, _ in made]
    return sorted(made, key=lambda c: (order.index(c[1]), VARIANTS.index(c[0])))


def ferry_label(options):
    return " ".join(["ferry get", *options])


def single_connection_seconds(size, rate, limit, variant):
    """How long one connection takes: the file at the link rate, or at the limit if lower."""
    per_second = rate / 8 * PAYLOAD_SHARE
    if variant == "limited":
        per_second = min(per_second, limit)
    return size / per_second


def throttled(ctx):
    reason = unavailable()
    if reason:
        log(f"  throttled: skipped: {reason}")
        return {"skipped": reason}
    size, rate_text, limit_text = ctx.throttled_size, ctx.throttled_rate, ctx.throttled_limit
    rate, limit = rate_bits(rate_text), nginx_size(limit_text)
    www = ctx.work / "www"
    name = ctx.big.name if ctx.size == size else ctx.make_sized(size)
    log(f"  throttled: hashing {name}")
    expected = ctx.big_sha256 if name == ctx.big.name else sha256(www / name)
    subprocess.run(f"cat {www / name} > /dev/null", shell=True, check=True)
    timeouts = {v: max(MIN_TIMEOUT, ctx.throttled_timeout_factor * single_connection_seconds(size, rate, limit, v))
                for v in VARIANTS}
    out = ctx.work / "out-throttled"
    clear(out)
    stderr = ctx.work / "throttled-stderr.log"
    ferry = None
    builds = []
    single_flag = False
    results = {v: {} for v in VARIANTS}
    with Lab(www=www, nginx_workers=2, server_extra=limited_location(www, limit_text)) as lab:
        lab.shape(rate_text, qdisc="htb")
        origin = check_origin(lab, lab.url(name))
        if ctx.ferry.exists():
            ferry = Ferry(lab, ctx.ferry, ctx.work / "ferry-throttled", session=SESSION, options=ctx.ferry_options)
            ferry.start_daemon()
            single_flag = has_single_connection_flag(ctx.ferry)
            # Other builds (--variant), each with a daemon of its own, in the same rounds.
            for build_name, binary in ctx.variants.items():
                build = Ferry(lab, Path(binary), ctx.work / f"ferry-throttled-{build_name}", session=SESSION, options=ctx.ferry_options)
                build.start_daemon()
                builds.append((build_name, build))
        else:
            log(f"  throttled: no ferry binary at {ctx.ferry}: Ferry not measured")
        runs = cases(lab, ferry, name, out, stderr, single_flag, builds)
        log(f"  throttled: {size >> 20} MiB over htb {rate / 1e6:g} Mbit/s; limited: limit_rate {limit_text} "
            f"({limit / (1 << 20):g} MiB/s a request); {len(runs)} runs a round, timeouts "
            f"{timeouts['limited']:.0f} s / {timeouts['unlimited']:.0f} s")
        try:
            for round_index in range(ctx.throttled_runs):
                for variant, label, url, make in rotate(runs, round_index):
                    settle()
                    clear(out)
                    tool = make()
                    try:
                        record = one_run(lab, tool, url, size, expected, rate, timeouts[variant])
                    finally:
                        if isinstance(tool, Ferry):
                            tool.tidy()
                        elif tool.process:
                            tool.stop()
                    entry = results[variant].setdefault(label, {})
                    for key, value in record.items():
                        entry.setdefault(key, []).append(value)
                    log(f"  throttled: {variant} {label}: "
                        + (f"{record['seconds']:.2f} s, {record['fraction']:.0%} of the link"
                           if record["completed"] else f"not completed ({record['ended']})")
                        + f", {record['connections']} connection(s), {record['requests']} request(s), peak RSS "
                        f"{(record['rss_kib'] or 0) / 1024:.1f} MiB")
                log(f"  throttled: round {round_index + 1}/{ctx.throttled_runs} done")
            shaper = lab.run_in(lab.origin, ["tc", "-s", "class", "show", "dev", lab.origin_dev]).stdout
        finally:
            for daemon in ([ferry] if ferry else []) + [build for _, build in builds]:
                daemon.stop_daemon()
                shutil.rmtree(daemon.home, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
            stderr.unlink(missing_ok=True)
    if not ferry:
        for variant in VARIANTS:
            results[variant][ferry_label(ctx.ferry_options)] = {"not_measured": f"no ferry binary at {ctx.ferry}"}
    for tools in results.values():
        for entry in tools.values():
            if "completed" in entry:
                for key in ("seconds", "fraction", "connections", "requests", "body_bytes", "rss_kib", "anon_kib",
                            "connection_rate", "idle_rss_kib"):
                    entry[f"{key}_summary"] = summary(entry[key])
    return {"size": size, "rate": rate_text, "rate_bits": rate, "limit": limit_text, "limit_bytes": limit,
            "runs": ctx.throttled_runs, "timeouts": timeouts, "origin": origin, "shaper": shaper.strip(),
            "ferry": ferry_label(ctx.ferry_options), "single_flag": single_flag, "variants": results}


# MARK: - Report


def markdown(result):
    from report import mib, secs
    if "skipped" in result:
        return f"Skipped: {result['skipped']}."
    rate_mbit = result["rate_bits"] / 1e6
    lines = [
        f"File: {mib(result['size'])}, from nginx in namespace O to the tools in C over a veth shaped with htb to "
        f"{rate_mbit:g} Mbit/s (O→C). *Limited*: nginx `limit_rate {result['limit']};` "
        f"({result['limit_bytes'] / (1 << 20):g} MiB/s per request); *unlimited*: the same link without it. "
        f"{result['runs']} round(s), every tool of both variants once a round, the order rotating. Time: from the "
        "tool's start (Ferry: `ferry get --no-wait`) until the file is complete (exit, or Ferry's file whole in "
        "Downloads/); medians over completed runs. *Of link*: file bytes × 8 / time / link rate (at most about "
        f"{PAYLOAD_SHARE:.1%}: headers; a small file gains up to htb's burst, 20 ms of the rate). *Connections / requests*: what nginx logged for the file; *nginx sent*: the bytes it sent for them ÷ "
        "the file's size (above 1: bytes sent on connections the tool then dropped); *per connection*: "
        "each connection's bytes over its lifetime, median. *Peak RSS*: the tool's (Ferry: the daemon's, reset "
        "before each run), anonymous in brackets, read every 100 ms. Stopped after "
        f"{result['timeouts']['limited']:.0f} s (limited) / {result['timeouts']['unlimited']:.0f} s (unlimited). "
        f"The origin: ETag {result['origin']['etag']}, Accept-Ranges {result['origin']['accept_ranges']}.",
    ]
    titles = {"limited": f"limit_rate {result['limit']} per request", "unlimited": "no limit_rate"}
    for variant in VARIANTS:
        tools = result["variants"][variant]
        lines += ["", f"**{titles[variant]}**", "",
                  "| tool | completed (SHA-256 ok) | time median | min – max | Mbit/s | of link | connections | requests "
                  "| nginx sent | per connection | peak RSS (anon) | how it ended |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for label, entry in tools.items():
            lines.append(row(label, entry, result["size"], mib, secs))
        lines += ["", *goals(result, variant)]
    lines += ["", "htb's counters at the end (`tc -s class show`):", "", "```", result["shaper"], "```"]
    return "\n".join(lines)


def row(label, entry, size, mib, secs):
    if "not_measured" in entry:
        return f"| {label} | not measured: {entry['not_measured']} | | | | | | | | | | |"
    s = entry["seconds_summary"]
    done = f"{sum(entry['completed'])}/{len(entry['completed'])}"
    median, span = (secs(s["median"]), f"{secs(s['min'])} – {secs(s['max'])}") if s else ("—", "—")
    mbit = f"{size * 8 / s['median'] / 1e6:.0f}" if s else "—"
    fraction = f"{entry['fraction_summary']['median']:.1%}" if entry["fraction_summary"] else "—"
    count = lambda key: f"{entry[key + '_summary']['median']:g}" if entry[key + "_summary"] else "—"
    sent = entry["body_bytes_summary"]
    sent = f"{sent['median'] / size:.2f}×" if sent else "—"
    per = entry["connection_rate_summary"]
    per = f"{per['median'] / (1 << 20):.2f} MiB/s" if per else "—"
    rss, anon = entry["rss_kib_summary"], entry["anon_kib_summary"]
    memory = f"{rss['median'] / 1024:.1f} MiB" if rss else "—"
    if anon:
        memory += f" ({anon['median'] / 1024:.1f} MiB)"
    ended = "; ".join(sorted(set(str(e) for e in entry["ended"])))
    return (f"| {label} | {done} | {median} | {span} | {mbit} | {fraction} | {count('connections')} | "
            f"{count('requests')} | {sent} | {per} | {memory} | {ended} |")


def goals(result, variant):
    """The lines that say whether Ferry met this variant's goals, with the numbers behind them."""
    tools = result["variants"][variant]
    ferry = tools.get(result["ferry"], {}).get("seconds_summary")

    def verdict(ok):
        return "met" if ok else "**not met**"

    if variant == "limited":
        aria = tools.get("aria2c -x16 -s16 -k1M", {}).get("seconds_summary")
        fraction = tools.get(result["ferry"], {}).get("fraction_summary")
        lines = []
        if ferry and aria:
            ratio = ferry["median"] / aria["median"]
            lines.append(f"Ferry / aria2c -x16 (median time): {ratio:.2f} — goal ≤ 1.00 (at least as fast): "
                         f"{verdict(ratio <= 1.0)}.  ")
        else:
            lines.append("Ferry / aria2c -x16: — (one of them has no completed run): goal not met.  ")
        if fraction:
            share = fraction["median"]
            lines.append(f"Ferry's throughput: {share:.1%} of the link rate — goal ≥ 90 % (within 10 %): "
                         f"{verdict(share >= 0.9)}.")
        return lines
    single_label = ferry_label([SINGLE_FLAG, "1"])
    single = tools.get(single_label, {}).get("seconds_summary")
    reference = f"{single_label} (Ferry on one connection)" if single else "curl -o (one connection)"
    single = single or tools.get("curl -o", {}).get("seconds_summary")
    if ferry and single:
        ratio = ferry["median"] / single["median"]
        return [f"Ferry / {reference} (median time): {ratio:.2f} — goal ≤ 1.00 (not slower than one connection): "
                f"{verdict(ratio <= 1.0)}."]
    return [f"Ferry / {reference}: — (one of them has no completed run): goal not met."]
