#!/usr/bin/env python3
"""Makes journal-v16.sqlite: a journal written by the Ferry of 27 November 2026 (commit ecd5b4c,
the last with one SQLite schema in FerryCore, migrations v1-v16), kept so that every later Ferry
is tested to open it and read back the same (JournalFixtureTests).

    make-journal-v16.py FERRY_BINARY OUTPUT.sqlite

It runs that binary's daemon in a temporary FERRY_HOME against a loopback origin and puts in:
a completed download, a paused one, one queued for 2030, a podcast with three episodes (one
downloaded, one with a playback position, one in Up Next), a catalog-free song row is not made
(the catalog needs Apple), a sync user, and a download added over aria2's RPC with a GID of its
own. The daemon is stopped cleanly, so the journal is one file (its WAL checkpointed)."""

import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

FEED = """<?xml version="1.0"?><rss version="2.0"><channel><title>Fixture Radio</title>
<item><title>Three</title><guid>ep-3</guid><pubDate>Wed, 03 Jan 2024 06:00:00 GMT</pubDate><enclosure url="{base}/media/3.mp3" length="3000" type="audio/mpeg"/></item>
<item><title>Two</title><guid>ep-2</guid><pubDate>Tue, 02 Jan 2024 06:00:00 GMT</pubDate><enclosure url="{base}/media/2.mp3" length="2000" type="audio/mpeg"/></item>
<item><title>One</title><guid>ep-1</guid><pubDate>Mon, 01 Jan 2024 06:00:00 GMT</pubDate><enclosure url="{base}/media/1.mp3" length="1000" type="audio/mpeg"/></item>
</channel></rss>"""


def serve(root: Path):
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def main():
    binary, output = sys.argv[1], Path(sys.argv[2])
    work = Path(tempfile.mkdtemp())
    origin = work / "origin"
    (origin / "media").mkdir(parents=True)
    for n in (1, 2, 3):
        (origin / "media" / f"{n}.mp3").write_bytes(bytes([n]) * (1000 * n))
    (origin / "file.bin").write_bytes(b"fixture" * 1000)
    server, base = serve(origin)
    (origin / "feed.xml").write_text(FEED.format(base=base))
    env = dict(os.environ, FERRY_HOME=str(work / "home"), FERRY_PORT="0")

    def ferry(*args, stdin=None):
        result = subprocess.run([binary, *args], env=env, capture_output=True, text=True, input=stdin)
        if result.returncode != 0:
            raise SystemExit(f"ferry {' '.join(args)}: {result.stdout}{result.stderr}")
        return result.stdout

    try:
        ferry("aria2", "enable", "--port", "0")
        ferry("get", f"{base}/file.bin")
        paused = json.loads(ferry("get", "--no-wait", "--at", "2030-01-01T00:00:00Z", "--json", f"{base}/paused.bin"))[0]["id"]
        ferry("pause", str(paused))
        ferry("get", "--no-wait", "--at", "2030-01-01T00:00:00Z", f"{base}/later.bin")
        podcast = json.loads(ferry("podcast", "add", f"{base}/feed.xml", "--json"))
        episodes = json.loads(ferry("podcast", "episodes", str(podcast["id"]), "--json"))
        ferry("podcast", "download", str(podcast["id"]), str(episodes[0]["id"]))
        ferry("sync", "user", "add", "alice", "--password-stdin", stdin="fixture-password\n")
        info = json.loads((work / "home" / "state" / "daemon.json").read_text())
        token = (work / "home" / "state" / "token").read_text().strip()

        def api(method, path, body):
            request = urllib.request.Request(f"{info['url']}/v1/{path}", method=method, data=json.dumps(body).encode(),
                                             headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
            return json.loads(urllib.request.urlopen(request).read() or b"null")

        api("PUT", f"episodes/{episodes[1]['id']}/playback", {"positionSeconds": 42.5})
        api("PUT", "up-next", {"items": [{"kind": "episode", "id": episodes[2]["id"]}]})
        status = json.loads(ferry("aria2", "status", "--json"))
        secret = ferry("aria2", "secret").strip()
        call = {"jsonrpc": "2.0", "id": "1", "method": "aria2.addUri",
                "params": [f"token:{secret}", [f"{base}/aria.bin"], {"gid": "0123456789abcdef", "pause": "true"}]}
        request = urllib.request.Request(status["url"], data=json.dumps(call).encode(), headers={"Content-Type": "application/json"})
        print(urllib.request.urlopen(request).read().decode())
        ferry("stop")
        time.sleep(1)
        shutil.copy(work / "home" / "state" / "journal.sqlite", output)
        print(f"wrote {output}")
    finally:
        subprocess.run([binary, "stop"], env=env, capture_output=True)
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
