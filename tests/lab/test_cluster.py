"""Three Ferry daemons on three hosts work through one queue in PostgreSQL (docs/CLUSTER.md):
each member a process in a network namespace of its own, the database and the origin (nginx,
logging every request) on another, the library on storage every member shares. A member is
killed or cut off mid-download, PostgreSQL is restarted mid-run, and every file still arrives
once and right."""

from __future__ import annotations

import collections
import json
import subprocess
import time

import pytest

from cluster import ClusterLab, postgres_bin
from ferry import ferry_binary
from lab import sha256

pytestmark = pytest.mark.skipif(not list(__import__("pathlib").Path("/usr/lib/postgresql").glob("*/bin/postgres")),
                                reason="PostgreSQL is not installed (tests/lab/run installs it as root)")


@pytest.fixture
def make_cluster(lab_check, request):
    made = []

    def make(**kwargs) -> ClusterLab:
        cluster = ClusterLab(**kwargs).start()
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        if getattr(getattr(request.node, "rep_call", None), "failed", False):
            for k in cluster.daemons:
                print(f"\n--- member {k} log ---\n{cluster.log(k)[-3000:]}")
        cluster.close()


def start_all(cluster: ClusterLab):
    for k in range(1, cluster.count + 1):
        cluster.start_member(k)


def served_from(cluster: ClusterLab, requests) -> dict[str, int]:
    """Requests by member (k), from their addresses."""
    members = {ip: k for k, ip in cluster.member_ip.items()}
    return collections.Counter(members.get(r["remote_addr"], 0) for r in requests)


def assert_one_member_at_a_time(cluster: ClusterLab, paths):
    """The origin's log: no two members fetched the same file at overlapping times."""
    by_path = collections.defaultdict(list)
    for request in cluster.nginx_requests():
        by_path[request["path"]].append(request)
    for path in paths:
        requests = sorted(by_path["/" + path], key=lambda r: r["start"])
        for before, after in zip(requests, requests[1:]):
            if before["remote_addr"] != after["remote_addr"]:
                assert before["end"] <= after["start"] + 0.01, f"{path} fetched by two members at once: {before} and {after}"


def assert_files_right(cluster: ClusterLab, expected: dict[str, str]):
    """Every transfer (by the origin's path) completed once, its file in the shared library
    with the origin's bytes, and nothing else there."""
    rows = cluster.db('SELECT url, state, COUNT(*) FROM transfer GROUP BY url, state ORDER BY url')
    assert len(rows) == len(expected), f"transfers by URL and state: {rows[:5]}…"
    by_url = {row[0]: (row[1], int(row[2])) for row in rows}
    for path, digest in expected.items():
        state, count = by_url[cluster.url(path)]
        assert (state, count) == ("completed", 1), f"{path}: {count} transfer(s) {state}"
        assert sha256(cluster.library / "ferry" / "Downloads" / path.split("/")[-1]) == digest, f"{path}: wrong bytes"
    downloads = sorted(p.name for p in (cluster.library / "ferry" / "Downloads").iterdir())
    assert downloads == sorted(p.split("/")[-1] for p in expected), "a file is missing, or came twice"


def test_three_members_share_three_hundred_transfers(make_cluster):
    cluster = make_cluster(members=3, server_extra="location /slow/ { limit_rate 1m; }")
    names = [f"slow/f{i:03}.bin" for i in range(300)]
    expected = {name: sha256(cluster.add_file(name, 96 * 1024 + i * 997, seed=i)) for i, name in enumerate(names)}
    start_all(cluster)
    # Queued through one member: the others take their share from the database.
    ids = cluster.get(1, [cluster.url(name) for name in names])
    assert len(ids) == 300
    cluster.wait(lambda: all(s == "completed" for s, _ in cluster.states().values()), 180, "300 transfers to complete")

    # The library's names are the files' own (no " (2)": nothing came twice).
    assert_files_right(cluster, expected)
    requests = [r for r in cluster.nginx_requests() if r["path"].startswith("/slow/")]
    assert len({r["path"] for r in requests}) == 300
    assert all(r["status"] == 200 for r in requests), [r for r in requests if r["status"] != 200][:3]
    assert len(requests) == 300, "a file was fetched more than once"
    by_member = served_from(cluster, requests)
    assert set(by_member) == {1, 2, 3} and min(by_member.values()) >= 30, f"uneven shares: {dict(by_member)}"
    assert_one_member_at_a_time(cluster, names)
    # Every member knows the whole queue, and the cluster's members.
    assert len(cluster.transfers(3)) == 300
    # Member 3's event stream, replayed from the start, has every member's events in one
    # sequence: a completion for each of the 300, whoever ran it.
    token = (cluster.state(3) / "ferry" / "token").read_text().strip()
    stream = cluster.run_in(cluster.members[2], ["curl", "-sN", "--max-time", "3", "-H", f"Authorization: Bearer {token}",
                                                 "-H", "Last-Event-ID: 0", "http://127.0.0.1:7447/v1/events"], check=False).stdout
    events = [json.loads(line[5:]) for line in stream.splitlines() if line.startswith("data:") and '"transferId"' in line]
    assert sorted(e["transferId"] for e in events if e["kind"] == "completed") == sorted(ids)
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    status = json.loads(cluster.cli(2, "cluster", "status", "--json").stdout)
    assert status["member"] == "m2"
    assert sorted(m["id"] for m in status["members"] if m["alive"]) == ["m1", "m2", "m3"]


def test_a_member_killed_mid_download_hands_its_transfers_over_from_their_bytes(make_cluster):
    cluster = make_cluster(members=3, max_concurrent=2, server_extra="location /slow/ { limit_rate 1m; }")
    names = [f"slow/big{i}.bin" for i in range(2)]
    expected = {name: sha256(cluster.add_file(name, 16 << 20, seed=100 + i)) for i, name in enumerate(names)}
    # Member 1 alone takes both; the others join with free slots, so what the hand-over waits
    # for is the lease, not a slot.
    cluster.start_member(1)
    # One connection each (nginx limits each request): 16 s a file, so the kill comes mid-download.
    cluster.get(1, [cluster.url(name) for name in names], "--connections", "1")

    def m1_has_bytes():
        rows = cluster.db("""SELECT id, "durableBytes" FROM transfer WHERE "owner" = 'm1' AND state = 'running' AND "durableBytes" > 0""")
        return {int(r[0]): int(r[1]) for r in rows} if len(rows) == 2 else None
    held = cluster.wait(m1_has_bytes, 60, "member 1 to have checkpointed bytes of both")
    cluster.start_member(2)
    cluster.start_member(3)
    cluster.kill_member(1)
    killed = time.time()
    # Its transfers run on the others within 15 s (a lease is 10 s).
    cluster.wait(lambda: all(cluster.states()[i] in (("running", "m2"), ("running", "m3"), ("completed", None)) for i in held),
                 15, "member 1's transfers to run elsewhere")
    handed_over = time.time() - killed
    cluster.wait(lambda: all(s == "completed" for s, _ in cluster.states().values()), 180, "every transfer to complete")
    assert_files_right(cluster, expected)
    # Each went on from member 1's durable bytes, not from zero: the others fetched only what
    # was missing.
    for id in held:
        url = cluster.db(f"SELECT url FROM transfer WHERE id = {id}")[0][0]
        path = url.split("files.lab", 1)[1]
        later = [r for r in cluster.nginx_requests(path) if r["start"] >= killed - 0.5 and r["remote_addr"] != cluster.member_ip[1]]
        assert later and all(r["range"].startswith("bytes=") for r in later), f"{path}: {later[:3]}"
        assert int(later[0]["range"][6:].split("-")[0]) >= held[id], f"{path} went on from {later[0]['range']}, {held[id]} were durable"
        fetched = sum(r["body_bytes_sent"] for r in later)
        assert fetched <= (16 << 20) - held[id] + (1 << 20), f"{path}: {fetched} bytes fetched again, {held[id]} were durable"
    assert_one_member_at_a_time(cluster, names)
    print(f"hand-over after SIGKILL: {handed_over:.1f} s")


def test_a_member_cut_off_loses_its_transfers_and_its_late_writes_are_refused(make_cluster):
    cluster = make_cluster(members=3, max_concurrent=2, server_extra="location /slow/ { limit_rate 1m; }")
    names = [f"slow/cut{i}.bin" for i in range(6)]
    expected = {name: sha256(cluster.add_file(name, 16 << 20, seed=200 + i)) for i, name in enumerate(names)}
    start_all(cluster)
    cluster.get(1, [cluster.url(name) for name in names], "--connections", "1")

    def m2_running():
        rows = cluster.db("""SELECT id, fence FROM transfer WHERE "owner" = 'm2' AND state = 'running' AND "durableBytes" > 0""")
        return {int(r[0]): int(r[1]) for r in rows} or None
    held = cluster.wait(m2_running, 60, "member 2 to run transfers")
    cluster.link_down(2)
    # Past its lease, the others take them, with higher fences.
    def taken():
        rows = {int(r[0]): (r[1], int(r[2]), r[3]) for r in cluster.db('SELECT id, "owner", fence, state FROM transfer')}
        return all((rows[i][0] in ("m1", "m3") and rows[i][1] > held[i]) or rows[i][2] == "completed" for i in held)
    cluster.wait(taken, 20, "member 2's transfers to be taken over")
    time.sleep(2)
    cluster.link_up(2)
    # Back, member 2 finds its claims gone and stops those transfers; whatever it still tried
    # to write of them was refused.
    cluster.wait(lambda: "claim was lost" in cluster.log(2), 30, "member 2 to notice it lost its claims")
    cluster.wait(lambda: all(s == "completed" for s, _ in cluster.states().values()), 180, "every transfer to complete")
    assert_files_right(cluster, expected)
    assert not cluster.db("""SELECT id FROM transfer WHERE "owner" = 'm2'""")
    # No completion by member 2 of a transfer it lost.
    for id in held:
        events = cluster.db(f"SELECT payload FROM event WHERE \"transferId\" = {id} AND kind = 'completed'")
        assert len(events) == 1, f"transfer {id} completed {len(events)} times"


def test_postgres_restarted_mid_run(make_cluster):
    cluster = make_cluster(members=3, server_extra="location /slow/ { limit_rate 2m; }")
    names = [f"slow/r{i:02}.bin" for i in range(30)]
    expected = {name: sha256(cluster.add_file(name, (2 << 20) + i, seed=300 + i)) for i, name in enumerate(names)}
    start_all(cluster)
    cluster.get(3, [cluster.url(name) for name in names])
    cluster.wait(lambda: sum(s == "completed" for s, _ in cluster.states().values()) >= 5, 60, "some transfers to complete")
    cluster.stop_postgres()
    time.sleep(3)
    cluster.start_postgres()
    cluster.wait(lambda: all(s == "completed" for s, _ in cluster.states().values()), 180, "every transfer to complete")
    assert_files_right(cluster, expected)
    for k in (1, 2, 3):
        assert cluster.daemons[k].poll() is None, f"member {k} exited"
    assert_one_member_at_a_time(cluster, names)


def podcast_feed(cluster: ClusterLab, episodes: int) -> bytes:
    """An RSS feed of `episodes` items (their media on the origin), about 200 bytes each."""
    items = "".join(
        f"<item><title>Episode {n}</title><guid>ep-{n}</guid><pubDate>Mon, 02 Jan 2023 {n % 24:02}:00:00 GMT</pubDate>"
        f'<enclosure url="{cluster.url(f"media/{n}.mp3")}" length="1000" type="audio/mpeg"/><description>Show notes {n}.</description></item>'
        for n in range(episodes)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>Lab Radio</title>{items}</channel></rss>'.encode()


def api(cluster: ClusterLab, k: int, method: str, path: str, body: dict | None = None) -> dict:
    """Member k's API, from its own host, with its own token."""
    token = (cluster.state(k) / "ferry" / "token").read_text().strip()
    command = ["curl", "-sf", "-X", method, "-H", f"Authorization: Bearer {token}", f"http://127.0.0.1:7447/v1/{path}"]
    if body is not None:
        command += ["-H", "Content-Type: application/json", "--data", json.dumps(body)]
    return json.loads(cluster.run_in(cluster.members[k - 1], command).stdout or "null")


def test_members_share_one_library_and_take_turns_refreshing_a_feed(make_cluster):
    # The feed is slow to fetch (about 4 s), so refreshes that overlapped would show in the log.
    cluster = make_cluster(members=3, server_extra="location /feeds/ { limit_rate 16k; }")
    feed = cluster.add_file("feeds/lab.xml", data=podcast_feed(cluster, 300))
    start_all(cluster)

    # Subscribed on one member, the podcast, its episodes and a position saved on another are
    # every member's.
    added = json.loads(cluster.cli(1, "podcast", "add", cluster.url("feeds/lab.xml"), "--json").stdout)
    for k in (2, 3):
        listed = json.loads(cluster.cli(k, "podcast", "ls", "--json").stdout)
        assert [(p["id"], p["title"], p["episodeCount"]) for p in listed] == [(added["id"], "Lab Radio", 300)], f"member {k}"
    episodes = api(cluster, 2, "GET", f"podcasts/{added['id']}")["episodes"]
    api(cluster, 2, "PUT", f"episodes/{episodes[0]['id']}/playback", {"positionSeconds": 42})
    seen = api(cluster, 3, "GET", f"podcasts/{added['id']}")["episodes"]
    assert next(e for e in seen if e["id"] == episodes[0]["id"])["playback"]["positionSeconds"] == 42

    # A new episode, and all three members asked to refresh at once: one fetches the feed
    # (200), the others wait their turn and find it unchanged (304), and the episode is there once.
    feed.write_bytes(podcast_feed(cluster, 301))
    before = len(cluster.nginx_requests("/feeds/lab.xml"))
    refreshes = [cluster.exec_in(cluster.members[k - 1], ["env", *cluster.env(k), ferry_binary(), "podcast", "refresh"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for k in (1, 2, 3)]
    outputs = [process.communicate(timeout=120)[0].decode() for process in refreshes]
    assert all(process.returncode == 0 for process in refreshes), outputs
    fetches = cluster.nginx_requests("/feeds/lab.xml")[before:]
    assert sorted(r["status"] for r in fetches) == [200, 304, 304], fetches
    assert {r["remote_addr"] for r in fetches} == set(cluster.member_ip.values())
    assert_one_member_at_a_time(cluster, ["feeds/lab.xml"])
    assert sorted(output.strip() for output in outputs) == ["Refreshed 1 podcast: 0 new episodes."] * 2 + ["Refreshed 1 podcast: 1 new episode."], outputs
    assert cluster.db('SELECT COUNT(*), COUNT(DISTINCT guid) FROM episode') == [["301", "301"]]
