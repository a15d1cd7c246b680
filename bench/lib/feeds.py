"""Scenario 7: Ferry's feed parser (Fuzz/Sources/FeedBench, release build) against podcastparser,
on a corpus of test feeds and on a synthetic 20,000-episode feed: time and peak memory. Then the
daemon with that feed: subscribing and listing it, its peak memory and what it keeps after."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from downloads import rotate
from harness import REPO, FerryDaemon, log, process_memory, run, summary

# HeapTrimmer looks every 30 s: the daemon's memory is read again after this long.
SETTLE_SECONDS = 35


def parse(command):
    result = run(command, stderr=subprocess.DEVNULL)
    return json.loads(result.stdout.strip().splitlines()[-1])


def feeds(ctx):
    corpus = sorted(map(str, [*(REPO / "Tests/Fixtures/feeds").glob("gofeed-*/*.xml"),
                              *(REPO / "bench/feeds/corpus-podcastparser").glob("*.rss")]))
    big = ctx.work / "feed-20000.xml"
    if not big.exists():
        run([sys.executable, REPO / "bench/feeds/make_feed.py", big, "20000"])
    parsers = {
        "ferry FeedParser": [str(ctx.feedbench)],
        "podcastparser": [sys.executable, str(REPO / "bench/feeds/podcastparser_bench.py")],
    }
    sets = {
        "corpus": (corpus, 20),
        "20,000 episodes": ([str(big)], 1),
        "nothing (process baseline)": ([], 1),
    }
    results = {}
    for set_name, (files, iterations) in sets.items():
        for round_index in range(ctx.runs):
            # Interleaved: one process per parser per round.
            for parser, command in (parsers.items() if round_index % 2 == 0 else reversed(parsers.items())):
                report = parse([*command, "--iterations", str(iterations), *files])
                entry = results.setdefault(set_name, {}).setdefault(parser, {"seconds": [], "rss_kib": []})
                entry["seconds"].append(min(report["seconds"]) if report["seconds"] else 0)
                entry["rss_kib"].append(report["peak_rss_kib"])
                entry.update(feeds=report["feeds"], refused=report["refused"], episodes=report["episodes"])
    for by_parser in results.values():
        for entry in by_parser.values():
            entry["summary"] = summary(entry["seconds"])
            entry["rss"] = summary(entry["rss_kib"])
    return {"corpus_files": len(corpus), "big_bytes": big.stat().st_size, "sets": results,
            "daemon": daemon_feed(ctx, big)}


def daemon_feed(ctx, big):
    """`ferry podcast add` of the big feed (served by nginx) and `ferry podcast episodes --json`
    of it, in a fresh daemon, for the ferry under test and each --variant: the daemon's peak RSS,
    and its anonymous memory right after and SETTLE_SECONDS later. No competitor here:
    podcastparser is a library, not a daemon."""
    shutil.copy(big, ctx.nginx.root / big.name)
    url = ctx.nginx.url(big.name)
    binaries = {"ferry": ctx.ferry, **ctx.variants}
    rows = {name: {"peak_kib": [], "after_kib": [], "settled_kib": []} for name in binaries}
    for round_index in range(ctx.runs):
        for name, binary in rotate(list(binaries.items()), round_index):
            log(f"  feeds: {name} subscribes to the 20,000-episode feed")
            daemon = FerryDaemon(ctx.work / "ferry-feed", binary)
            daemon.wipe()
            daemon.start()
            daemon.cli("podcast", "add", url, timeout=600)
            daemon.cli("podcast", "episodes", "1", "--json", timeout=600)
            rows[name]["peak_kib"].append(process_memory(daemon.pid)[1])
            rows[name]["after_kib"].append(anonymous_kib(daemon.pid))
            time.sleep(SETTLE_SECONDS)
            rows[name]["settled_kib"].append(anonymous_kib(daemon.pid))
            daemon.wipe()
    for entry in rows.values():
        for key in list(entry):
            entry[key.replace("_kib", "")] = summary(entry[key])
    return {"settle_seconds": SETTLE_SECONDS, "binaries": rows}


def anonymous_kib(pid):
    """RssAnon: the heap, stacks and buffers, without mapped files."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    return -1
