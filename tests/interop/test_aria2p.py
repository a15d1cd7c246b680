"""aria2p, a real aria2 client library from PyPI, driving Ferry end to end as it drives aria2:
add, status, pause, resume, remove, lists and statistics; what it adds is an ordinary Ferry
transfer (`ferry ls`), and a wrong secret is aria2's Unauthorized."""

from __future__ import annotations

import hashlib
import json
import random
import time
from pathlib import Path

import aria2p
import pytest


def wait_for(condition, timeout: float = 20, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {message}")


def test_aria2p_drives_ferry(ferry, files, tmp_path):
    daemon, rpc, port = ferry
    api = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=port, secret=rpc.secret))
    data = random.Random(7).randbytes(500_000)
    url = files.add("/interop/song.bin", data, "application/octet-stream")
    target = tmp_path / "incoming"

    # Added with aria2's options: a folder of the user's, a name, a header.
    download = api.add_uris([url], options={"dir": str(target), "out": "song.bin", "header": ["X-Client: aria2p"]})
    done = wait_for(lambda: (d := api.get_download(download.gid)).is_complete and d, message="the download to complete")
    assert done.total_length == len(data) and done.completed_length == len(data)
    path = Path(done.files[0].path)
    assert path == target / "song.bin" and hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(data).digest()
    assert any(headers.get("x-client") == "aria2p" for _, p, headers in files.request_headers if p == "/interop/song.bin")
    listed = json.loads(daemon.run("ls", "--all", "--json"))
    assert [(t["session"], t["state"]) for t in listed] == [("aria2", "completed")], listed

    # A slow one: paused, resumed, removed, as aria2p's users do.
    slow = files.add("/interop/slow.bin", random.Random(8).randbytes(3_000_000), "application/octet-stream", rate=300_000)
    running = api.add_uris([slow])
    wait_for(lambda: api.get_download(running.gid).is_active, message="the slow one to start")
    assert api.pause([running]) == [True]
    assert wait_for(lambda: api.get_download(running.gid).is_paused, message="the pause")
    assert api.resume([running]) == [True]
    assert wait_for(lambda: api.get_download(running.gid).is_active, message="the resume")
    assert {d.gid for d in api.get_downloads()} == {download.gid, running.gid}
    stats = api.get_stats()
    assert stats.num_active == 1 and stats.num_stopped == 1
    assert api.remove([running]) == [True]
    # Removed and its result cleaned, as aria2p asks: gone from the lists.
    wait_for(lambda: running.gid not in {d.gid for d in api.get_downloads()}, message="the removal")

    # The waiting list reordered as aria2p does it, and a download's limit changed.
    queued = [api.add_uris([f"{slow}?{n}"], options={"pause": "true"}) for n in range(3)]
    waiting = lambda: [d.gid for d in api.get_downloads() if d.is_paused or d.is_waiting]
    assert waiting() == [d.gid for d in queued]
    assert api.move_to_top(queued[2]) == 0  # its place now
    assert waiting() == [queued[2].gid, queued[0].gid, queued[1].gid]
    assert api.move_down(queued[2]) == 1
    assert waiting() == [queued[0].gid, queued[2].gid, queued[1].gid]
    assert api.move_to_bottom(queued[0]) == 2
    assert waiting() == [queued[2].gid, queued[1].gid, queued[0].gid]
    assert api.set_options({"max-download-limit": "64K"}, [queued[1]]) == [True]
    assert api.get_options([queued[1]])[0].get("max-download-limit") == "65536"
    assert api.remove(queued) == [True, True, True]

    # A wrong secret: aria2's error, and nothing added.
    wrong = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=port, secret="not-the-secret"))
    with pytest.raises(aria2p.ClientException, match="Unauthorized"):
        wrong.add_uris([url])
    assert len(json.loads(daemon.run("ls", "--all", "--json"))) == 1


def test_notifications_and_calls_over_the_websocket(ferry, files):
    daemon, rpc, port = ferry
    api = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=port, secret=rpc.secret))
    heard: list[tuple[str, str]] = []

    def on(kind):
        return lambda _api, gid: heard.append((kind, gid))

    api.listen_to_notifications(
        threaded=True, handle_signals=False, timeout=1, on_download_start=on("start"), on_download_pause=on("pause"),
        on_download_stop=on("stop"), on_download_complete=on("complete"), on_download_error=on("error"),
    )
    try:
        time.sleep(0.5)  # the socket opens before anything happens
        quick = api.add_uris([files.add("/interop/quick.bin", random.Random(9).randbytes(200_000), "application/octet-stream")])
        wait_for(lambda: ("complete", quick.gid) in heard, message="onDownloadComplete")
        assert ("start", quick.gid) in heard and heard.index(("start", quick.gid)) < heard.index(("complete", quick.gid))
        slow = api.add_uris([files.add("/interop/slower.bin", random.Random(10).randbytes(3_000_000), "application/octet-stream", rate=300_000)])
        wait_for(lambda: ("start", slow.gid) in heard, message="onDownloadStart")
        api.pause([slow])
        wait_for(lambda: ("pause", slow.gid) in heard, message="onDownloadPause")
        api.remove([slow])
        wait_for(lambda: ("stop", slow.gid) in heard, message="onDownloadStop")
        failing = api.add_uris([files.url("/interop/missing.bin")])
        wait_for(lambda: ("error", failing.gid) in heard, message="onDownloadError")
    finally:
        api.stop_listening()

    # Calls over the WebSocket, as front ends make them: answered on the same socket.
    import websocket

    socket = websocket.create_connection(f"ws://127.0.0.1:{port}/jsonrpc", timeout=10)
    try:
        socket.send(json.dumps({"jsonrpc": "2.0", "id": "w1", "method": "aria2.tellStatus", "params": [f"token:{rpc.secret}", quick.gid, ["status"]]}))
        assert json.loads(socket.recv()) == {"id": "w1", "jsonrpc": "2.0", "result": {"status": "complete"}}
        socket.send(json.dumps({"jsonrpc": "2.0", "id": "w2", "method": "aria2.getVersion", "params": ["token:wrong"]}))
        assert json.loads(socket.recv())["error"] == {"code": 1, "message": "Unauthorized"}
    finally:
        socket.close()
    # Not under another name (a web page that rebound a name of its own to 127.0.0.1).
    with pytest.raises(websocket.WebSocketBadStatusException):
        websocket.create_connection(f"ws://127.0.0.1:{port}/jsonrpc", timeout=10, host="evil.example")
