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

    # A wrong secret: aria2's error, and nothing added.
    wrong = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=port, secret="not-the-secret"))
    with pytest.raises(aria2p.ClientException, match="Unauthorized"):
        wrong.add_uris([url])
    assert len(json.loads(daemon.run("ls", "--all", "--json"))) == 1
