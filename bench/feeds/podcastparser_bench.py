#!/usr/bin/env python3
"""Times podcastparser (PyPI) for bench/run scenario 7, like Fuzz/Sources/FeedBench times Ferry:
every file is read into memory first, then the set is parsed N times. Prints one JSON object:
each iteration's seconds, feeds parsed and refused, episodes, and the process's peak RSS.

    podcastparser_bench.py [--iterations N] FILE...
"""
import io
import json
import sys
import time

import podcastparser


def main():
    args = sys.argv[1:]
    iterations = 5
    if "--iterations" in args:
        i = args.index("--iterations")
        iterations = int(args[i + 1])
        del args[i:i + 2]
    documents = [open(path, "rb").read() for path in args]
    seconds = []
    for _ in range(iterations):
        parsed = refused = episodes = 0
        start = time.perf_counter()
        for document in documents:
            try:
                feed = podcastparser.parse("https://example.com/feed.xml", io.BytesIO(document))
                parsed += 1
                episodes += len(feed.get("episodes", []))
            except Exception:
                refused += 1
        seconds.append(time.perf_counter() - start)
    print(json.dumps({
        "parser": "podcastparser " + podcastparser.__version__, "seconds": seconds, "feeds": parsed,
        "refused": refused, "episodes": episodes,
        "peak_rss_kib": peak_rss_kib(),
    }, sort_keys=True))


def peak_rss_kib():
    """VmHWM. Not getrusage's ru_maxrss: that keeps the peak of the process before its exec (the
    harness, ~50 MiB), hiding anything smaller."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


if __name__ == "__main__":
    main()
