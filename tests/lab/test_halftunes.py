"""The URLSession tutorials' Half Tunes code (Examples/HalfTunes: the fixture's files with only
their imports changed) on Linux, against "the internet" of a lab: in the client namespace C,
itunes.apple.com and audio-ssl.itunes.apple.com resolve to nginx in O, which serves the recorded
iTunes search and a preview over HTTPS with a certificate of the test's own CA, trusted in C only
(C's /etc/ssl is the system's bundle plus that CA, as `ip netns exec` mounts it). The Ferry daemon
runs in C too, for the tutorial's background session.

- The search is a data task over TLS; the preview downloads with progress; paused with resume
  data, it goes on with a Range (nginx's log).
- A background download started by a run that exits at once finishes in the daemon; the daemon
  starts the program again (sessionSendsLaunchEvents) and the tutorial's delegate places the file;
  a later run gets nothing more: each event is delivered once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ferry import REPO, Ferry
from lab import NETNS_ETC, Lab, make_file, sha256

FIXTURE = REPO / "Tests/Fixtures/itunes/search-song-2-results.json"
PREVIEW = "itunes-assets/AudioPreview114/v4/db/4f/d3/db4fd3e6-412d-336e-87c2-1dbba8d2cc58/mzaf_9168872909681524128.plus.aac.p.m4a"
HOSTS = ("itunes.apple.com", "audio-ssl.itunes.apple.com")


def halftunes_binary() -> str:
    binary = REPO / ".build/debug/HalfTunes"
    if not binary.exists():
        raise RuntimeError(f"no HalfTunes at {binary}: build it (swift build)")
    return str(binary)


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and a certificate for the iTunes hosts signed by it."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca, key, csr, cert = (folder / n for n in ("ca.key", "ca.pem", "server.key", "server.csr", "server.pem"))
    run = lambda *argv: subprocess.run(argv, check=True, capture_output=True)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
        "-subj", "/CN=Half Tunes lab CA")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=itunes.apple.com")
    extensions = folder / "san.cnf"
    extensions.write_text("subjectAltName=" + ",".join(f"DNS:{h}" for h in HOSTS) + "\n")
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert, "-days", "2",
        "-extfile", extensions)
    return ca, cert, key


@pytest.fixture
def itunes(tmp_path, www):
    ca, cert, key = make_certificates(tmp_path / "tls")
    shutil.copy(FIXTURE, www / "search")
    preview = make_file(www / PREVIEW, 3 << 20, seed=11)
    extra = f"""
        listen 443 ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        location = /search {{ default_type application/json; }}
        location /itunes-assets/ {{ limit_rate 1m; }}
    """
    lab = Lab(proxied=False, www=www, server_extra=extra).start()
    try:
        for host in HOSTS:
            lab.resolve(host, lab.origin_ip, ns=lab.client)
        # C trusts the lab's CA beside the system's roots: its /etc/ssl, mounted by ip netns exec.
        certs = NETNS_ETC / lab.client / "ssl/certs"
        certs.mkdir(parents=True)
        bundle = Path("/etc/ssl/certs/ca-certificates.crt").read_text() + ca.read_text()
        (certs / "ca-certificates.crt").write_text(bundle)
        yield lab, preview
    finally:
        lab.close()


def run_halftunes(lab: Lab, home: Path, documents: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return lab.run_in(lab.client, ["env", f"FERRY_HOME={home}", f"HALFTUNES_DOCUMENTS={documents}", halftunes_binary(), *args],
                      check=False, timeout=timeout)


def test_the_tutorials_search_download_and_pause_with_resume_data(itunes, tmp_path):
    lab, preview = itunes
    home, documents = tmp_path / "ferry", tmp_path / "Documents"
    documents.mkdir()
    ferry = Ferry(lab, home, env={"HALFTUNES_DOCUMENTS": str(documents)})
    try:
        searched = run_halftunes(lab, home, documents, "search", "jazz")
        assert searched.returncode == 0, searched.stdout + searched.stderr
        assert "track 0: Hellogoodbye - Here (In Your Arms) https://audio-ssl.itunes.apple.com/" in searched.stdout
        searches = [r["request"] for r in lab.nginx_requests() if r["request"].startswith("GET /search?")]
        assert searches and "media=music&entity=song&term=jazz" in searches[-1], searches

        paused = run_halftunes(lab, home, documents, "pause-resume", "jazz", "0")
        assert paused.returncode == 0, paused.stdout + paused.stderr
        assert "paused at" in paused.stdout and "downloaded " in paused.stdout
        placed = documents / Path(PREVIEW).name
        assert sha256(placed) == sha256(preview)
        requests = lab.nginx_requests("/" + PREVIEW)
        assert any(r["status"] == 206 and r["range"].startswith("bytes=") and r["range"] != "bytes=0-" for r in requests), requests
        # The tutorial's download session is a background one: the daemon did the downloading.
        downloads = [t for t in ferry.transfers() if t["session"] == "com.xxxx.HalfTunes.bgSession"]
        assert downloads and downloads[-1]["state"] == "completed"

        # Resume data made by one run, used by the next (as an app keeps it across launches).
        placed.unlink()
        saved = tmp_path / "resume.data"
        before = len(lab.nginx_requests("/" + PREVIEW))
        first = run_halftunes(lab, home, documents, "pause-save", "jazz", "0", str(saved))
        assert first.returncode == 0 and saved.stat().st_size > 0, first.stdout + first.stderr
        assert not placed.exists()
        second = run_halftunes(lab, home, documents, "resume-from", "jazz", "0", str(saved))
        assert second.returncode == 0, second.stdout + second.stderr
        assert sha256(placed) == sha256(preview)
        later = lab.nginx_requests("/" + PREVIEW)[before:]
        assert any(r["status"] == 206 and r["range"] != "bytes=0-" for r in later), later

        # cancelDownload: the task ends, the daemon's transfer with it, and nothing is placed.
        placed.unlink()
        cancelled = run_halftunes(lab, home, documents, "cancel", "jazz", "0")
        assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
        assert "nothing placed" in cancelled.stdout and "(completed)" in cancelled.stdout, cancelled.stdout
        task = int(cancelled.stdout.split("cancelled task ")[1].split()[0])
        assert ferry.transfer(task)["state"] == "cancelled"
        assert not placed.exists()
    finally:
        ferry.stop()


def test_a_background_download_ends_while_the_program_is_gone_and_reaches_it_once(itunes, tmp_path):
    lab, preview = itunes
    home, documents = tmp_path / "ferry", tmp_path / "Documents"
    documents.mkdir()
    # The daemon starts the program for its session's events with its own environment.
    ferry = Ferry(lab, home, env={"HALFTUNES_DOCUMENTS": str(documents)})
    try:
        started = run_halftunes(lab, home, documents, "start", "jazz", "0")
        assert started.returncode == 0, started.stdout + started.stderr
        task = int(started.stdout.split("started task ")[1].split()[0])
        assert task > 0
        transfer = ferry.transfer(task)
        assert transfer["session"] == "com.xxxx.HalfTunes.bgSession"
        # The program is gone; the daemon finishes the download and starts it again, and the
        # tutorial's didFinishDownloadingTo copies the file into Documents.
        placed = documents / Path(PREVIEW).name
        try:
            Ferry.wait(lambda: placed.exists(), 60, "the relaunched program to place the file")
        except AssertionError:
            print(ferry.log.read_text(errors="replace")[-4000:], json.dumps(ferry.transfer(task), indent=1))
            raise
        time.sleep(1)
        assert sha256(placed) == sha256(preview)
        # Delivered once: a later run has nothing to place.
        placed.unlink()
        again = run_halftunes(lab, home, documents, "events", "jazz", "0", "3")
        assert again.returncode == 3, again.stdout + again.stderr
        assert "nothing delivered" in again.stdout
    finally:
        ferry.stop()
