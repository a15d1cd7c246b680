"""Kill rounds: queue downloads, kill -9 the daemon at a random moment, start it again, and at
the end check that every file is whole and right, each asked-for URL has exactly one transfer
and nothing is left behind. Used with nginx (well-behaved) and with chaos_origin.py. Every other
round queues its downloads in a session whose transfers use 8 connections each (segmented
downloads: ranges journaled and resumed from their own durable ends)."""

import json
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

from harness import FerryDaemon, log, sha256, threads_alive, wait_for

KNOWN_STATE_FILES = {"journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm", "token", "daemon.json",
                     "daemon.lock", "daemon.log", "last-search.json"}


SEGMENTED = "torture-x8"


def make_pool(folder, count, rng, largest, smallest=1024):
    """`count` files of log-uniform random sizes (smallest .. largest), with their SHA-256."""
    folder.mkdir(parents=True, exist_ok=True)
    pool = {}
    for i in range(count):
        size = int(smallest * (largest / smallest) ** rng.random())
        path = folder / f"file-{i:03d}-{size}.bin"
        if not path.exists() or path.stat().st_size != size:
            with open(path, "wb") as f:
                for start in range(0, size, 16 << 20):  # randbytes takes at most 2^31 bits
                    f.write(rng.randbytes(min(16 << 20, size - start)))
        pool[path.name] = (size, sha256(path))
    return pool


def kill_rounds(label, home, binary, base_url, pool, rounds, rng, per_round=20, max_delay=1.5,
                drain_timeout=900, max_concurrent=6):
    """Runs the rounds and returns a summary dict; raises AssertionError with every problem found."""
    daemon = FerryDaemon(home, binary, max_concurrent=max_concurrent)
    daemon.wipe()
    daemon.start()
    daemon.api("PATCH", f"/v1/sessions/{SEGMENTED}/config", {"set": {"connections": 8}})
    expected = {}  # url → (size, sha256)
    kills = 0
    names = sorted(pool)
    began = time.monotonic()
    for round_index in range(rounds):
        session = SEGMENTED if round_index % 2 else "torture"
        batch = []
        for k in range(per_round):
            name = rng.choice(names)
            url = f"{base_url}/{name}?round={round_index}&n={k}"
            batch.append(url)
            expected[url] = pool[name]

        def ask():
            try:
                daemon.get(batch, session=session, force=False)
            except Exception:
                pass  # The daemon may die mid-request: the client asks again below.

        asking = threading.Thread(target=ask)
        asking.start()
        time.sleep(rng.uniform(0, max_delay))
        daemon.kill9()
        kills += 1
        asking.join()
        daemon.start()
        # A client that does not know whether its request landed asks again: same URLs, same
        # session, no force — it must get the same transfers back, not new ones.
        daemon.get(batch, session=session, force=False)
        if (round_index + 1) % 10 == 0 or round_index + 1 == rounds:
            log(f"  {label}: round {round_index + 1}/{rounds}, {kills} kills")

    def drained():
        transfers = daemon.transfers()
        return all(t["state"] in ("completed", "failed", "cancelled") for t in transfers) and transfers
    wait_for(drained, drain_timeout, interval=0.5, what="every transfer to finish")
    seconds = time.monotonic() - began
    transfers = daemon.transfers()
    daemon.stop()
    problems = verify(daemon, transfers, expected)
    completed = [t for t in transfers if t["state"] == "completed"]
    result = {
        "rounds": rounds, "kills": kills, "transfers": len(transfers), "completed": len(completed),
        "bytes": sum(expected[t["url"]][0] for t in completed if t["url"] in expected),
        # Over 8 connections: those of the segmented session with 2 MiB or more.
        "segmented": sum(1 for t in completed if t["session"] == SEGMENTED and (t.get("totalBytes") or 0) >= 2 << 20),
        "seconds": round(seconds, 1), "problems": problems,
    }
    if not problems:
        daemon.wipe()
    return result


def restart_rounds(home, binary, url, size, digest, rounds, rng):
    """Rounds of: one large download, kill -9 of the daemon while it writes (at 20–80 % of the
    file), and `ferry serve --detach` at once, while the killed daemon's last threads may still be
    finishing an fsync and holding the daemon lock. Every start must succeed, and every download
    must complete with the right SHA-256."""
    daemon = FerryDaemon(home, binary)
    daemon.wipe()
    daemon.start()
    problems, failed_starts, verified = [], 0, 0
    began = time.monotonic()
    for round_index in range(rounds):
        transfer = daemon.get([url], session="restarts")[0]
        part = daemon.library / ".partial" / f"{transfer['id']}.part"
        at = int(size * rng.uniform(0.2, 0.8))
        wait_for(lambda: part.exists() and part.stat().st_size >= at, 120, interval=0.002, what=f"{at} bytes")
        pid = daemon.pid
        daemon.kill9()  # returns once the process is dead, as a person at a shell would see it
        started = daemon.serve_detached(check=False)
        if started.returncode != 0:
            failed_starts += 1
            problems.append(f"round {round_index + 1}: no daemon right after kill -9: {started.stderr.strip()[:300]}")
            wait_for(lambda: not threads_alive(pid), 30, what="the killed daemon's threads")
            daemon.start()
        else:
            daemon.read_address()
        done = json.loads(daemon.cli("wait", "--json", transfer["id"], timeout=600).stdout)
        done = done[0] if isinstance(done, list) else done
        if done.get("sha256") == digest:
            verified += 1
            Path(done["path"]).unlink()  # 256 MiB a round
        else:
            problems.append(f"round {round_index + 1}: transfer {transfer['id']} ended {done.get('state')} "
                            f"with SHA-256 {done.get('sha256')}")
        if round_index + 1 in (rounds, 10, 20, 50):
            log(f"  restarts: round {round_index + 1}/{rounds}")
    daemon.stop()
    result = {"rounds": rounds, "kills": rounds, "transfers": rounds, "completed": verified, "bytes": size * verified,
              "failed_starts": failed_starts, "seconds": round(time.monotonic() - began, 1), "problems": problems}
    if not problems:
        daemon.wipe()
    return result


def verify(daemon, transfers, expected):
    problems = []
    per_url = Counter(t["url"] for t in transfers)
    for url in expected:
        if per_url[url] == 0:
            problems.append(f"lost: no transfer for {url}")
        elif per_url[url] > 1:
            problems.append(f"duplicated: {per_url[url]} transfers for {url}")
    for url in per_url.keys() - expected.keys():
        problems.append(f"unexpected transfer for {url}")
    paths = set()
    for t in transfers:
        size, digest = expected.get(t["url"], (None, None))
        if t["state"] != "completed":
            problems.append(f"transfer {t['id']} {t['state']}: {t.get('error')}")
            continue
        if t.get("sha256") != digest:
            problems.append(f"transfer {t['id']}: journal SHA-256 {t.get('sha256')} != {digest}")
        path = Path(t["path"])
        paths.add(path)
        if not path.is_file():
            problems.append(f"transfer {t['id']}: {path} missing")
        elif path.stat().st_size != size or sha256(path) != digest:
            problems.append(f"transfer {t['id']}: {path} has the wrong bytes")
    partials = daemon.library / ".partial"
    leftovers = list(partials.iterdir()) if partials.exists() else []
    problems += [f"left behind: {p}" for p in leftovers]
    on_disk = {p for p in daemon.library.rglob("*") if p.is_file() and partials not in p.parents}
    problems += [f"file no transfer owns: {p}" for p in sorted(on_disk - paths)]
    problems += [f"unexpected file in the state folder: {p.name}" for p in daemon.state.iterdir()
                 if p.name not in KNOWN_STATE_FILES]
    # Straight from the journal: one `completed` event per transfer, no event of a lost transfer.
    with sqlite3.connect(f"file:{daemon.state / 'journal.sqlite'}?mode=ro", uri=True) as db:
        twice = db.execute("SELECT transferId, COUNT(*) FROM event WHERE kind = 'completed' "
                           "GROUP BY transferId HAVING COUNT(*) > 1").fetchall()
        problems += [f"transfer {tid}: {n} completed events" for tid, n in twice]
        orphans = db.execute("SELECT COUNT(*) FROM event WHERE transferId NOT IN (SELECT id FROM transfer)").fetchone()[0]
        if orphans:
            problems.append(f"{orphans} events of transfers that do not exist")
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        if integrity != "ok":
            problems.append(f"journal integrity_check: {integrity}")
    return problems
