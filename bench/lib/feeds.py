"""Scenario 7: Ferry's feed parser (Fuzz/Sources/FeedBench, release build) against podcastparser,
on a corpus of test feeds and on a synthetic 20,000-episode feed: time and peak memory."""

import json
import subprocess
import sys

from harness import REPO, run, summary


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
    return {"corpus_files": len(corpus), "big_bytes": big.stat().st_size, "sets": results}
