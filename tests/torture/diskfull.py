"""A full disk: the library on a small tmpfs, part-filled. The download must fail with a clear
`disk_full` error, the journal must stay consistent (also across a daemon restart), and once
space is freed `ferry resume` must finish it from where it stopped, with the right SHA-256."""

import json
import subprocess
import time
from pathlib import Path

from harness import FerryDaemon, is_root, sha256, wait_for


def can_mount():
    if not is_root():
        return "not root (mounting a tmpfs needs root)"
    probe = Path("/tmp/ferry-torture-mount-probe")
    probe.mkdir(exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)], capture_output=True, text=True)
    if result.returncode != 0:
        return f"cannot mount a tmpfs here: {result.stderr.strip()}"
    subprocess.run(["umount", str(probe)], check=True)
    probe.rmdir()
    return None


def disk_full(home, binary, nginx, www):
    """Returns a summary dict; raises AssertionError on the first broken promise."""
    file = www / "diskfull-48m.bin"
    if not file.exists():
        file.write_bytes(bytes(range(256)) * (48 << 12))  # 48 MiB
    digest = sha256(file)
    daemon = FerryDaemon(home, binary)
    daemon.wipe()
    library = daemon.library
    library.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(library)], check=True)
    try:
        filler = library / "filler.bin"
        filler.write_bytes(b"\0" * (40 << 20))  # leaves ~24 MiB for a 48 MiB download
        daemon.start()
        nginx.clear_log()
        tid = daemon.get([nginx.url(file.name)], session="diskfull")[0]["id"]
        failed = wait_for(lambda: next((t for t in daemon.transfers() if t["id"] == tid and t["state"] == "failed"), None),
                          120, interval=0.1, what="the download to fail")
        error = failed.get("error") or {}
        assert error.get("code") == "disk_full", f"expected disk_full, got {error}"
        assert "disk is full" in error.get("message", "") and "resume" in error.get("message", ""), error
        part = library / ".partial" / f"{tid}.part"
        assert part.exists(), "the part file of a failed transfer must be kept for the resume"
        durable_before = failed["bytesReceived"]
        assert 0 < durable_before <= part.stat().st_size, (durable_before, part.stat().st_size)
        # The journal says the same after a restart.
        daemon.stop()
        daemon.start()
        again = next(t for t in daemon.transfers() if t["id"] == tid)
        assert again["state"] == "failed" and again["bytesReceived"] == durable_before, again
        assert part.exists(), "a restart deleted the part file of a failed transfer"
        # Free the space and resume.
        filler.unlink()
        daemon.cli("resume", tid)
        done = json.loads(daemon.cli("wait", "--json", "--timeout", "120", tid).stdout)
        done = done[0] if isinstance(done, list) else done
        assert done["state"] == "completed" and done["sha256"] == digest, done
        assert sha256(done["path"]) == digest, "the resumed file has the wrong bytes"
        time.sleep(0.2)
        requests = [e for e in nginx.log_entries() if file.name in e["request"]]
        resumed = [e for e in requests if e["range"].startswith("bytes=") and e["range"] != "bytes=0-"]
        assert resumed and resumed[-1]["status"] == 206, f"the resume did not continue with a range: {requests}"
        fetched = sum(e["bytes"] for e in requests)
        daemon.stop()
        return {"file": file.stat().st_size, "durable_at_failure": durable_before, "error": error["message"],
                "fetched": fetched, "refetched": fetched - file.stat().st_size}
    finally:
        daemon.stop()
        subprocess.run(["umount", "-l", str(library)])
