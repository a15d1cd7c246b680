"""15. Searching what was said: a show of --transcripts-count (2,000) episodes, each with a
WebVTT transcript of about 40 minutes served by nginx, subscribed to by a fresh daemon, which
fetches and indexes them by itself. Measured: the time from `ferry podcast add` until every
transcript is indexed, the daemon's peak anonymous memory meanwhile, the journal's size after,
and then each of a fixed set of searches through the API (`GET /v1/transcripts/search`) against
`grep -r` over the same files (the floor to beat: no index, the page cache warm), --runs rounds
interleaved; p50 and p99 per tool."""

import random
import shutil
import subprocess
import time
import urllib.parse

from harness import AnonPeak, FerryDaemon, log, summary, wait_for

CUE_SECONDS = 5
CUES = 480  # 40 minutes


def vocabulary(rng):
    """Up to 5,000 made-up words whose frequencies fall off as in speech (Zipf-like)."""
    syllables = ["ka", "lo", "mi", "ter", "on", "va", "su", "pre", "dil", "an", "qu", "or", "el", "tis", "ba", "zen"]
    words = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(6000)})[:5000]
    weights = [1 / (rank + 1) for rank in range(len(words))]
    return words, weights


def make_show(folder, count, rng):
    """`count` transcripts; episode n also says "needle{n}" once, at a second it records."""
    words, weights = vocabulary(rng)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(1, count + 1):
        path = folder / f"{n}.vtt"
        if path.exists():
            continue
        needle = rng.randrange(CUES)
        lines = ["WEBVTT", ""]
        for cue in range(CUES):
            start = cue * CUE_SECONDS
            text = " ".join(rng.choices(words, weights, k=12))
            if cue == needle:
                text += f" needle{n}"
            lines += [f"{start // 3600:02d}:{start // 60 % 60:02d}:{start % 60:02d}.000 --> "
                      f"{(start + CUE_SECONDS) // 3600:02d}:{(start + CUE_SECONDS) // 60 % 60:02d}:{(start + CUE_SECONDS) % 60:02d}.000",
                      text, ""]
        path.write_text("\n".join(lines))
    return words


def queries(words, count):
    """Rare words (one episode's needle), words of every frequency, two words anywhere in a
    line, and phrases: what a listener types."""
    rng = random.Random(7)
    found = []
    size = len(words)
    for _ in range(10):
        found.append(("rare", f"needle{rng.randint(1, count)}"))
        found.append(("common", words[rng.randrange(10)]))
        found.append(("middling", words[rng.randrange(size // 50, size // 5)]))
        found.append(("unusual", words[rng.randrange(size * 3 // 5, size)]))
        found.append(("two words", f"{words[rng.randrange(size // 100, size // 10)]} {words[rng.randrange(size // 100, size // 10)]}"))
        found.append(("phrase", f'"{words[rng.randrange(20)]} {words[rng.randrange(20)]}"'))
    return found


def grep_command(folder, query):
    """The same search with grep: each word, case-insensitive, as a whole word; a phrase as is;
    two words: lines with the first, then those with the second."""
    if query.startswith('"'):
        return ["grep", "-r", "-i", "-w", "-F", query.strip('"'), str(folder)]
    parts = query.split()
    command = f"grep -r -i -w -F {parts[0]} {folder}"
    for word in parts[1:]:
        command += f" | grep -i -w -F {word}"
    return ["sh", "-c", command]


def transcripts(ctx):
    rng = random.Random(1)
    count = ctx.transcripts_count
    folder = ctx.work / "transcripts"
    words = make_show(folder, count, rng)
    served = ctx.nginx.root / "transcripts"
    if served.exists():
        shutil.rmtree(served)
    shutil.copytree(folder, served)
    items = "".join(
        f'<item><guid>t-{n}</guid><title>Episode {n}</title><enclosure url="{ctx.nginx.url("tiny.mp3")}" type="audio/mpeg"/>'
        f'<podcast:transcript url="{ctx.nginx.url(f"transcripts/{n}.vtt")}" type="text/vtt"/></item>'
        for n in range(1, count + 1))
    (ctx.nginx.root / "transcripts.xml").write_text(
        '<?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">'
        f"<channel><title>Transcribed</title>{items}</channel></rss>")
    total_bytes = sum(path.stat().st_size for path in folder.glob("*.vtt"))

    daemon = FerryDaemon(ctx.work / "ferry-transcripts", ctx.ferry)
    daemon.wipe()
    daemon.start()
    try:
        log(f"  transcripts: the daemon indexes {count} transcripts ({total_bytes >> 20} MiB)")
        began = time.monotonic()
        with AnonPeak(daemon.pid, interval=0.05) as peak:
            daemon.cli("podcast", "add", ctx.nginx.url("transcripts.xml"), timeout=600)
            wait_for(lambda: daemon.api("GET", "/v1/transcripts/search?q=needle1&limit=1")["index"]["pending"] == 0,
                     1800, interval=0.25, what="every transcript indexed")
        index_seconds = time.monotonic() - began
        log(f"  transcripts: indexed in {index_seconds:.1f} s; now {len(queries(words, count))} searches × {ctx.runs} rounds against grep -r")
        status = daemon.api("GET", "/v1/transcripts/search?q=needle1&limit=1")["index"]
        journal = sum(path.stat().st_size for path in daemon.state.glob("journal.sqlite*"))
        # Every file read once before grep is timed, so that both search from memory.
        subprocess.run(f"cat {folder}/*.vtt > /dev/null", shell=True, check=True)
        searches = queries(words, count)
        times = {"ferry (API)": [], "grep -r": []}
        by_kind = {}
        hits = {}
        for round_index in range(ctx.runs):
            for kind, query in searches:
                tools = ["ferry (API)", "grep -r"] if round_index % 2 == 0 else ["grep -r", "ferry (API)"]
                for tool in tools:
                    start = time.perf_counter()
                    if tool == "grep -r":
                        subprocess.run(grep_command(folder, query), stdout=subprocess.DEVNULL, check=False)
                    else:
                        answer = daemon.api("GET", "/v1/transcripts/search?q=" + urllib.parse.quote(query) + "&limit=50")
                        hits[query] = len(answer["hits"])
                    elapsed = (time.perf_counter() - start) * 1000
                    times[tool].append(elapsed)
                    by_kind.setdefault(kind, {}).setdefault(tool, []).append(elapsed)
        found_needles = sum(1 for kind, query in searches if kind == "rare" and hits.get(query) == 1)
        return {
            "count": count, "bytes": total_bytes, "index_seconds": index_seconds, "status": status,
            "peak_anon_kib": peak.peak_kib, "journal_bytes": journal, "searches": len(searches),
            "needles_found": found_needles, "needles": sum(1 for kind, _ in searches if kind == "rare"),
            "ms": {tool: percentiles(values) for tool, values in times.items()},
            "by_kind": {kind: {tool: percentiles(values) for tool, values in tools.items()} for kind, tools in by_kind.items()},
        }
    finally:
        daemon.wipe()


def percentiles(values):
    ordered = sorted(values)
    def at(fraction):
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
    return {"p50": at(0.5), "p99": at(0.99), "max": ordered[-1], "n": len(ordered), "summary": summary(values)}


def markdown(result):
    lines = [
        f"{result['count']:,} episodes' WebVTT transcripts ({result['bytes'] >> 20} MiB) fetched from nginx and indexed by the daemon "
        f"in {result['index_seconds']:.1f} s (indexed {result['status']['indexed']}, failed {result['status']['failed']}); "
        f"its peak anonymous memory meanwhile {result['peak_anon_kib'] >> 10} MiB; the journal after: {result['journal_bytes'] >> 20} MiB.",
        "",
        f"{result['searches']} searches, each tool in the same interleaved rounds (ms; Ferry through its HTTP API, "
        f"found {result['needles_found']} of {result['needles']} one-episode words):", "",
        "| tool | p50 ms | p99 ms | max ms |", "|---|---|---|---|",
    ]
    for tool, entry in result["ms"].items():
        lines.append(f"| {tool} | {entry['p50']:.1f} | {entry['p99']:.1f} | {entry['max']:.1f} |")
    lines += ["", "By kind of search (p50 / p99 ms):", "", "| search | ferry | grep -r |", "|---|---|---|"]
    for kind, tools in result["by_kind"].items():
        lines.append(f"| {kind} | {tools['ferry (API)']['p50']:.1f} / {tools['ferry (API)']['p99']:.1f} | "
                     f"{tools['grep -r']['p50']:.1f} / {tools['grep -r']['p99']:.1f} |")
    return "\n".join(lines)
