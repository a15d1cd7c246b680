"""Examples/TaskManager, a downloader written the way the Chinese URLSession tutorials write their
TaskManager (one background session, the manager as its delegate, the list keyed by
taskIdentifier and saved between launches), run as separate launches against the lab's nginx and
a real `ferry serve` in the client namespace:

- one launch adds two downloads and exits; another pauses one of them (a task of an earlier
  launch, found by its identifier) and keeps its resume data in the list;
- the other finishes while no launch runs: the daemon starts the program, whose delegate moves
  the file and marks that identifier done;
- a third launch goes on from the resume data (the same identifier, a Range at nginx) and a
  fourth waits for it to end.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ferry import REPO, Ferry
from lab import Lab, make_file, sha256


def run(lab: Lab, home: Path, tm: Path, *args: str, timeout: float = 150) -> subprocess.CompletedProcess:
    binary = REPO / ".build/debug/TaskManager"
    assert binary.exists(), f"no {binary}: build it (swift build)"
    result = lab.run_in(lab.client, ["env", f"FERRY_HOME={home}", f"TASKMANAGER_HOME={tm}", str(binary), *args],
                        check=False, timeout=timeout)
    assert result.returncode == 0, f"TaskManager {' '.join(args)}: {result.stdout}{result.stderr}"
    return result


def listed(tm: Path) -> dict:
    return {int(key): value for key, value in json.loads((tm / "tasks.json").read_text()).items()}


def test_a_task_list_keyed_by_identifier_across_launches(www, tmp_path):
    first = make_file(www / "slow" / "first.bin", 2 << 20, seed=21)
    second = make_file(www / "slow" / "second.bin", 6 << 20, seed=22)
    lab = Lab(proxied=False, www=www, server_extra="location /slow/ { limit_rate 1m; }").start()
    home, tm = tmp_path / "ferry", tmp_path / "taskmanager"
    ferry = Ferry(lab, home, env={"TASKMANAGER_HOME": str(tm)})
    try:
        # One connection each: nginx's limit_rate is per connection, and the connections Ferry adds
        # by itself ended the second download before it could be paused (a full run saw "done").
        ferry.cli("session", "set", "com.example.TaskManager.background", "--connections", "1")
        added = run(lab, home, tm, "add", lab.url("slow/first.bin"), lab.url("slow/second.bin"))
        ids = [int(line.split()[1]) for line in added.stdout.splitlines() if line.startswith("task ")]
        assert len(ids) == 2 and all(ferry.transfer(i)["session"] == "com.example.TaskManager.background" for i in ids)
        ferry.wait_for(ids[1], lambda t: t["bytesReceived"] > 0, 30, "the second download to begin")

        paused = run(lab, home, tm, "pause", str(ids[1]))
        assert "paused" in paused.stdout
        entry = listed(tm)[ids[1]]
        assert entry["state"] == "paused" and entry.get("resumeData"), entry

        # The first ends while no launch runs: the daemon starts the program for its events.
        Ferry.wait(lambda: listed(tm)[ids[0]]["state"] == "done", 60, "the relaunched program to take the first download")
        assert sha256(tm / "Downloads" / "first.bin") == sha256(first)

        run(lab, home, tm, "resume", str(ids[1]))
        waited = run(lab, home, tm, "wait")
        final = listed(tm)
        assert final[ids[1]]["state"] == "done", waited.stdout
        assert sorted(final) == sorted(ids), "the same identifiers in every launch"
        assert sha256(tm / "Downloads" / "second.bin") == sha256(second)
        ranges = [r["range"] for r in lab.nginx_requests("/slow/second.bin")]
        assert any(r.startswith("bytes=") and r != "bytes=0-" for r in ranges), ranges
    finally:
        ferry.stop()
        lab.close()
