"""The same aria2 JSON-RPC calls to a real `aria2c --enable-rpc` and to Ferry, answers compared
by shape: the same keys, the same types (aria2 writes numbers as strings), the same statuses
and the same error objects. Values that are each program's own (GIDs, paths, versions) differ."""

from __future__ import annotations

import base64
import hashlib
import random
import time
from pathlib import Path

import aria2p
import pytest

UNREACHABLE = "http://127.0.0.1:9/file.bin"  # refused at once: the downloads stay paused or fail


def shape(value):
    """Keys and types, not values: {"a": "str", "files": [{"index": "str"}]}."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def both(ferry, aria2c, method, *params, token=None):
    _, rpc, _ = ferry
    return rpc.send(method, *params, token=token), aria2c.send(method, *params, token=token)


def test_errors_are_aria2s(ferry, aria2c):
    _, rpc, _ = ferry
    for args in [("aria2.getVersion",), ("aria2.tellStatus", "zz"), ("aria2.tellStatus", "00000000000000ff"), ("aria2.fly",)]:
        ours, theirs = both(ferry, aria2c, *args, token="wrong" if args == ("aria2.getVersion",) else None)
        assert set(ours) == set(theirs) == {"id", "jsonrpc", "error"}, (args, ours, theirs)
        assert ours["error"] == theirs["error"], (args, ours, theirs)
    # Not JSON; not a call; an empty batch: the same answers, with the same HTTP statuses.
    for body in [b"{nope", b'{"jsonrpc": "2.0", "id": 2, "params": []}', b"[]"]:
        assert rpc.exchange(body) == aria2c.exchange(body), body
    assert rpc.exchange({"jsonrpc": "2.0", "id": 3, "method": "aria2.fly", "params": ["token:" + rpc.secret]})[0] == 400


def test_a_paused_download_looks_the_same(ferry, aria2c):
    _, rpc, _ = ferry
    gids = [rpc.call("aria2.addUri", [UNREACHABLE], {"pause": "true", "out": "file.bin"}), aria2c.call("aria2.addUri", [UNREACHABLE], {"pause": "true", "out": "file.bin"})]
    assert all(len(gid) == 16 and int(gid, 16) for gid in gids), gids
    clients = [rpc, aria2c]

    def compare(method, *params, by_gid=True):
        answers = [client.call(method, *((gid,) if by_gid else ()), *params) for client, gid in zip(clients, gids)]
        assert shape(answers[0]) == shape(answers[1]), (method, answers)
        return answers

    ours, theirs = compare("aria2.tellStatus")
    assert ours["status"] == theirs["status"] == "paused"
    assert ours["files"][0]["path"].endswith("/file.bin") == theirs["files"][0]["path"].endswith("/file.bin"), (ours, theirs)
    compare("aria2.tellStatus", ["gid", "status", "totalLength"])
    compare("aria2.getUris")
    compare("aria2.getFiles")
    compare("aria2.tellWaiting", 0, 10, by_gid=False)
    compare("aria2.tellActive", by_gid=False)
    compare("aria2.getGlobalStat", by_gid=False)
    compare("aria2.getSessionInfo", by_gid=False)
    # The options Ferry has are named, and written, as aria2's.
    global_options = [client.call("aria2.getGlobalOption") for client in clients]
    assert set(global_options[0]) <= set(global_options[1]) and all(isinstance(v, str) for v in global_options[0].values())
    download_options = [client.call("aria2.getOption", gid) for client, gid in zip(clients, gids)]
    assert set(download_options[0]) <= set(download_options[1]) and download_options[0]["out"] == download_options[1]["out"] == "file.bin"
    versions = [client.call("aria2.getVersion") for client in clients]
    assert {"version", "enabledFeatures"} <= set(versions[0]) and {"version", "enabledFeatures"} <= set(versions[1])

    # Removed before it ever started: gone, as if it had never been added.
    removed = [client.call("aria2.remove", gid) for client, gid in zip(clients, gids)]
    assert removed == gids
    gone = [client.send("aria2.tellStatus", gid)["error"]["message"] for client, gid in zip(clients, gids)]
    assert gone == [f"GID {gid} is not found" for gid in gids]
    again = [client.send("aria2.remove", gid)["error"] for client, gid in zip(clients, gids)]
    assert again[0]["code"] == again[1]["code"] == 1, again
    compare("aria2.tellStopped", 0, 10, by_gid=False)
    assert [client.call("aria2.purgeDownloadResult") for client in clients] == ["OK", "OK"]


def test_a_batch_and_a_multicall_answer_alike(ferry, aria2c):
    _, rpc, _ = ferry
    answers = []
    for client in (rpc, aria2c):
        answers.append(client.exchange([
            {"jsonrpc": "2.0", "id": "a", "method": "aria2.getGlobalStat", "params": [f"token:{client.secret}"]},
            {"jsonrpc": "2.0", "id": "b", "method": "aria2.getGlobalStat", "params": ["token:wrong"]},
            {"jsonrpc": "2.0", "id": "c", "method": "system.multicall", "params": [[
                {"methodName": "aria2.getGlobalStat", "params": [f"token:{client.secret}"]},
                {"methodName": "aria2.tellStatus", "params": [f"token:{client.secret}", "zz"]},
            ]]},
        ]))
    assert shape(answers[0]) == shape(answers[1]), answers
    (status, ours), (their_status, theirs) = answers
    assert status == their_status == 200
    assert ours[1]["error"] == theirs[1]["error"] and ours[2]["result"][1] == theirs[2]["result"][1]


def test_positions_options_and_chosen_gids_answer_alike(ferry, aria2c):
    """changePosition on the same waiting list gives the same places; changeOption and the `gid`
    option give the same results and errors."""
    _, rpc, _ = ferry
    clients = [rpc, aria2c]
    lists = []
    for client in clients:
        gids = [client.call("aria2.addUri", [f"{UNREACHABLE}?{n}"], {"pause": "true", "out": f"f{n}.bin"}) for n in range(4)]
        lists.append(gids)

    def order(client, gids):
        waiting = [d["gid"] for d in client.call("aria2.tellWaiting", 0, 100, ["gid"])]
        return [gids.index(gid) for gid in waiting if gid in gids]

    for index, pos, how in [(3, 0, "POS_SET"), (0, 1, "POS_CUR"), (1, -1, "POS_END"), (2, -10, "POS_CUR"), (3, 10, "POS_SET")]:
        answers = [client.call("aria2.changePosition", gids[index], pos, how) for client, gids in zip(clients, lists)]
        assert answers[0] == answers[1], (index, pos, how, answers)
        assert order(rpc, lists[0]) == order(aria2c, lists[1]), (index, pos, how)
    errors = [client.send("aria2.changePosition", gids[0], 0, "POS_NOWHERE")["error"] for client, gids in zip(clients, lists)]
    assert errors[0] == errors[1], errors

    changed = [client.call("aria2.changeOption", gids[0], {"max-download-limit": "100K"}) for client, gids in zip(clients, lists)]
    assert changed == ["OK", "OK"]
    limits = [client.call("aria2.getOption", gids[0]).get("max-download-limit") for client, gids in zip(clients, lists)]
    assert all(limit is not None for limit in limits), limits
    bad = [client.send("aria2.changeOption", gids[0], {"max-connection-per-server": "99"})["error"] for client, gids in zip(clients, lists)]
    assert bad[0]["code"] == bad[1]["code"] == 1, bad

    chosen = "2089b05ecca3d829"
    assert [client.call("aria2.addUri", [UNREACHABLE], {"pause": "true", "gid": chosen}) for client in clients] == [chosen, chosen]
    assert [client.call("aria2.tellStatus", chosen, ["gid"]) for client in clients] == [{"gid": chosen}] * 2
    taken = [client.send("aria2.addUri", [UNREACHABLE], {"pause": "true", "gid": chosen})["error"] for client in clients]
    assert taken[0]["code"] == taken[1]["code"] == 1, taken



def test_a_metalink_added_by_aria2p_completes_like_aria2cs(ferry, aria2c, files, tmp_path):
    """aria2p's add_metalink (a .meta4 file, sent in base64) against Ferry, and the same document
    to aria2c: a GID for each file, both files complete with the same bytes and statuses of the
    same shape; a document naming a file outside the folder is refused by both."""
    _, rpc, port = ferry
    blobs = {name: random.Random(n).randbytes(size) for n, (name, size) in enumerate([("a.bin", 300_000), ("b.bin", 120_000)])}
    urls = {name: files.add(f"/metalink/{name}", data, "application/octet-stream") for name, data in blobs.items()}
    entries = "".join(
        f'<file name="{name}"><size>{len(data)}</size><hash type="sha-256">{hashlib.sha256(data).hexdigest()}</hash>'
        f'<url priority="1">{urls[name]}</url></file>'
        for name, data in blobs.items()
    )
    document = f'<?xml version="1.0" encoding="UTF-8"?><metalink xmlns="urn:ietf:params:xml:ns:metalink">{entries}</metalink>'
    path = tmp_path / "files.meta4"
    path.write_text(document)

    api = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=port, secret=rpc.secret))
    ours = [download.gid for download in api.add_metalink(path, options={"dir": str(tmp_path / "ferry")})]
    theirs = aria2c.call("aria2.addMetalink", base64.b64encode(document.encode()).decode(), {"dir": str(tmp_path / "aria2c")})
    assert len(ours) == len(theirs) == 2, (ours, theirs)

    def complete(client, gid):
        deadline = time.monotonic() + 30
        while (status := client.call("aria2.tellStatus", gid))["status"] != "complete":
            assert status["status"] in ("active", "waiting") and time.monotonic() < deadline, status
            time.sleep(0.05)
        return status

    for mine, real in zip(ours, theirs):
        mine, real = complete(rpc, mine), complete(aria2c, real)
        assert set(shape(mine)) <= set(shape(real)), (mine, real)
        for key in ("status", "totalLength", "completedLength"):
            assert mine[key] == real[key], (key, mine, real)
        assert Path(mine["files"][0]["path"]).read_bytes() == Path(real["files"][0]["path"]).read_bytes()

    # A name that leaves the folder: refused by both, with aria2's error object, nothing written.
    hostile = base64.b64encode(document.replace('name="a.bin"', 'name="../escape.bin"').encode()).decode()
    refusals = [client.send("aria2.addMetalink", hostile, {"dir": str(tmp_path / "inner")})["error"] for client in (rpc, aria2c)]
    assert refusals[0]["code"] == refusals[1]["code"] == 1, refusals
    assert not (tmp_path / "escape.bin").exists()
