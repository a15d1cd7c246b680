"""TLS the user's way, against nginx in the origin namespace with certificates openssl made for
the test (tls_lab.py), and the real daemon and CLI in the client namespace:

- an authority the system does not know, trusted by --ca-certificate, by --ca-directory, by the
  daemon's SSL_CERT_FILE;
- an untrusted, an expired and a wrong-host server: each fails at once (one attempt) with its
  one-line reason;
- nginx's `ssl_verify_client on`: refused without a client certificate (saying it wants one),
  refused with one of another authority, served with the right one, also with its key encrypted
  (the passphrase from stdin, never shown);
- bad input refused before anything is journaled: a key that is not the certificate's, a wrong
  passphrase, an encrypted key without one, a PEM that is not one;
- a pinned public key (curl's sha256// syntax): the pinned server serves, over several
  connections too; another key is refused at once with both keys named, even with a valid chain;
  the pin does not replace the chain's check, and with --insecure the pin alone is checked;
- --insecure downloads from the untrusted server and is listed as "certificate not checked",
  per transfer and per session; never daemon-wide.
"""

from __future__ import annotations

import base64
import hashlib
import json
import stat
import subprocess
import time
from pathlib import Path

import pytest

from ferry import Ferry
from lab import Lab, sha256
from tls_lab import CLIENT_PASSPHRASE, OLD_PORT, TLS_PORTS, Certificates, old_server, servers


@pytest.fixture(scope="module")
def tls(www, tmp_path_factory):
    certs = Certificates(tmp_path_factory.mktemp("certificates"))
    log = tmp_path_factory.mktemp("tls-log") / "access.log"
    lab = Lab(proxied=False, www=www, http_extra=servers(certs, www, log)).start()
    for port in TLS_PORTS.values():
        lab._wait_listening(lab.origin, port, lab.nginx, "nginx (TLS)")
    yield lab, certs, log
    lab.close()


def url(lab: Lab, server: str, name: str = "one.bin") -> str:
    return f"https://{lab.origin_name}:{TLS_PORTS[server]}/{name}"


def failed_at_once(ferry: Ferry, id: int) -> dict:
    transfer = ferry.wait_for(id, lambda t: t["state"] == "failed", 30, "the refusal")
    assert transfer["attempts"] == 1, f"a certificate failure fails at once, no retries: {transfer}"
    return transfer


def refused_before_journaling(ferry: Ferry, *args: str) -> str:
    before = len(ferry.transfers())
    result = ferry.cli("get", "--no-wait", *args, check=False)
    assert result.returncode != 0, result
    assert len(ferry.transfers()) == before, "nothing journaled"
    return result.stderr


def test_an_authority_of_ones_own_is_trusted_where_the_user_says_so(tls, files, tmp_path):
    lab, certs, _ = tls
    ferry = Ferry(lab, tmp_path / "ferry")
    try:
        untrusted = failed_at_once(ferry, ferry.get(url(lab, "good")))
        message = untrusted["error"]["message"]
        assert 'signed by “CN=Ferry Lab CA”' in message and "--ca-certificate" in message, message

        by_file = ferry.get(url(lab, "good", "four.bin"), "--ca-certificate", certs.path("ca.pem"))
        assert sha256(ferry.wait_for(by_file, lambda t: t["state"] == "completed", 30, "trusted by file")["path"]) == files["four.bin"]

        folder = tmp_path / "authorities"
        folder.mkdir()
        (folder / "lab.pem").write_bytes((certs.folder / "ca.pem").read_bytes())
        ferry.cli("session", "set", "lab", "--ca-directory", str(folder))
        by_folder = ferry.get(url(lab, "good", "eight.bin"), "--session", "lab")
        assert sha256(ferry.wait_for(by_folder, lambda t: t["state"] == "completed", 30, "trusted by folder")["path"]) == files["eight.bin"]
    finally:
        ferry.stop()

    environment = Ferry(lab, tmp_path / "environment", env={"SSL_CERT_FILE": certs.path("ca.pem")})
    try:
        by_environment = environment.get(url(lab, "good"))
        assert sha256(environment.wait_for(by_environment, lambda t: t["state"] == "completed", 30, "trusted by SSL_CERT_FILE")["path"]) \
            == files["one.bin"]
    finally:
        environment.stop()


def test_each_certificate_refusal_says_why_in_one_line_and_fails_at_once(tls, tmp_path):
    lab, certs, _ = tls
    ferry = Ferry(lab, tmp_path / "ferry")
    try:
        trust = ("--ca-certificate", certs.path("ca.pem"))
        expired = failed_at_once(ferry, ferry.get(url(lab, "expired"), *trust))["error"]["message"]
        assert "expired on 2 Jan 2020" in expired or "expired on" in expired and "2020" in expired, expired
        other = failed_at_once(ferry, ferry.get(url(lab, "other-host"), *trust))["error"]["message"]
        assert "is for other.lab, not files.lab" in other, other
        stranger = failed_at_once(ferry, ferry.get(url(lab, "stranger"), *trust))["error"]["message"]
        assert 'signed by “CN=Nobody\'s CA”' in stranger, stranger
        server = old_server(lab, certs)
        try:
            old = failed_at_once(ferry, ferry.get(f"https://{lab.origin_name}:{OLD_PORT}/one.bin", *trust))["error"]["message"]
        finally:
            Lab.stop_process(server)
        assert "only TLS versions older than 1.2" in old, old
        plain = failed_at_once(ferry, ferry.get(f"https://{lab.origin_name}:80/one.bin", *trust))["error"]["message"]
        assert "did not answer in TLS" in plain, plain
        for message in (expired, other, stranger, old, plain):
            assert "\n" not in message and "BoringSSL" not in message, message
    finally:
        ferry.stop()


def test_a_server_that_asks_for_a_client_certificate(tls, files, tmp_path):
    lab, certs, log = tls
    ferry = Ferry(lab, tmp_path / "ferry")
    trust = ("--ca-certificate", certs.path("ca.pem"))
    try:
        none = failed_at_once(ferry, ferry.get(url(lab, "mutual"), *trust))["error"]["message"]
        assert "400" in none and "wants a client certificate" in none and "--certificate" in none, none
        rogue = ferry.get(url(lab, "mutual"), *trust, "--certificate", certs.path("rogue-client.pem"),
                          "--private-key", certs.path("rogue-client.key"))
        refused = failed_at_once(ferry, rogue)["error"]["message"]
        assert "refused the client certificate" in refused, refused

        plain = ferry.get(url(lab, "mutual"), *trust, "--certificate", certs.path("client.pem"), "--private-key", certs.path("client.key"))
        assert sha256(ferry.wait_for(plain, lambda t: t["state"] == "completed", 30, "served with the certificate")["path"]) \
            == files["one.bin"]
        listed = json.loads(ferry.cli("get", "--no-wait", "--json", *trust, "--certificate", certs.path("client.pem"),
                                      "--private-key", certs.path("client-encrypted.key"), "--private-key-passphrase-stdin",
                                      url(lab, "mutual", "four.bin"), input=CLIENT_PASSPHRASE + "\n").stdout)
        encrypted = ferry.wait_for(listed[0]["id"], lambda t: t["state"] == "completed", 30, "served with the encrypted key")
        assert sha256(encrypted["path"]) == files["four.bin"]
        assert encrypted["options"]["clientKeyPassphrase"] == "<redacted>"
        assert CLIENT_PASSPHRASE not in ferry.cli("ls", "--all", "--json").stdout
        served = [r for r in json.loads("[" + ",".join(log.read_text().splitlines()) + "]") if int(r["port"]) == TLS_PORTS["mutual"]]
        assert [r["status"] for r in served if r["status"] == 200], served

        # Bad input: refused before anything is journaled, saying what is wrong.
        mismatched = refused_before_journaling(ferry, *trust, "--certificate", certs.path("client.pem"),
                                               "--private-key", certs.path("rogue-client.key"), url(lab, "mutual"))
        assert "is not the key of the certificate" in mismatched, mismatched
        wrong = ferry.cli("get", "--no-wait", *trust, "--certificate", certs.path("client.pem"), "--private-key",
                          certs.path("client-encrypted.key"), "--private-key-passphrase-stdin", url(lab, "mutual"),
                          input="not it\n", check=False)
        assert wrong.returncode != 0 and "passphrase does not open" in wrong.stderr, wrong
        missing = refused_before_journaling(ferry, *trust, "--certificate", certs.path("client.pem"), "--private-key",
                                            certs.path("client-encrypted.key"), url(lab, "mutual"))
        assert "is encrypted: give its passphrase" in missing, missing
        not_pem = refused_before_journaling(ferry, "--certificate", certs.path("client.key"), "--private-key",
                                            certs.path("client.key"), url(lab, "mutual"))
        assert "is not a PEM certificate" in not_pem, not_pem
        half = refused_before_journaling(ferry, "--certificate", certs.path("client.pem"), url(lab, "mutual"))
        assert "--certificate and --private-key go together" in half, half
    finally:
        ferry.stop()


def test_insecure_downloads_and_says_so_per_transfer_and_session_never_for_the_daemon(tls, files, tmp_path):
    lab, certs, _ = tls
    ferry = Ferry(lab, tmp_path / "ferry")
    try:
        one = ferry.get(url(lab, "stranger"), "--insecure")
        done = ferry.wait_for(one, lambda t: t["state"] == "completed", 30, "the unchecked download")
        assert sha256(done["path"]) == files["one.bin"] and done["options"]["insecure"] is True
        assert "certificate not checked" in ferry.cli("ls", "--all").stdout

        refused = ferry.cli("session", "set", "*", "--insecure", check=False)
        assert refused.returncode != 0 and "always checked daemon-wide" in refused.stderr, refused

        ferry.cli("session", "set", "devices", "--insecure")
        made_while_set = ferry.get(url(lab, "expired", "four.bin"), "--session", "devices")
        assert ferry.wait_for(made_while_set, lambda t: t["state"] == "completed", 30, "the session's")["options"]["insecure"] is True
        ferry.cli("session", "set", "devices", "--clear", "insecure")
        checked = ferry.get(url(lab, "expired", "eight.bin"), "--session", "devices")
        assert "expired" in failed_at_once(ferry, checked)["error"]["message"]
        rows = {t["id"]: t for t in ferry.transfers()}
        assert not (rows[checked].get("options") or {}).get("insecure")
    finally:
        ferry.stop()


def test_many_small_files_from_an_h2_server_share_one_connection(tls, tmp_path):
    lab, certs, log = tls
    names = [f"h2/{n:03d}.bin" for n in range(200)]
    for n, name in enumerate(names):
        lab.add_file(name, 16 << 10, seed=500 + n)
    listing = tmp_path / "urls.txt"
    listing.write_text("".join(url(lab, "good", name) + "\n" for name in names))
    ferry = Ferry(lab, tmp_path / "ferry")
    try:
        before = len(log.read_text().splitlines()) if log.exists() else 0
        ferry.cli("get", "--ca-certificate", certs.path("ca.pem"), "-i", str(listing), timeout=120)
        transfers = [t for t in ferry.transfers() if "/h2/" in t["url"]]
        assert len(transfers) == 200 and all(t["state"] == "completed" for t in transfers)
        assert {t.get("httpVersion") for t in transfers} == {"HTTP/2"}, {t.get("httpVersion") for t in transfers}
        served = [json.loads(line) for line in log.read_text().splitlines()[before:]]
        served = [r for r in served if "/h2/" in r["request"]]
        assert len(served) == 200 and {r["protocol"] for r in served} == {"HTTP/2.0"}
        serials = {r["connection"] for r in served}
        assert len(serials) == 1, f"200 files over {len(serials)} connections (nginx's serial numbers)"
    finally:
        ferry.stop()


def key_pin(certs: Certificates, key: str) -> str:
    """The pin of a key as a user makes it with openssl (curl's documented recipe)."""
    public = subprocess.run(["openssl", "pkey", "-in", certs.path(key), "-pubout", "-outform", "der"], check=True, capture_output=True).stdout
    return "sha256//" + base64.b64encode(hashlib.sha256(public).digest()).decode()


def test_a_pinned_public_key_is_the_only_one_accepted(tls, files, tmp_path):
    lab, certs, log = tls
    ferry = Ferry(lab, tmp_path / "ferry")
    trust = ("--ca-certificate", certs.path("ca.pem"))
    good, stranger = key_pin(certs, "server.key"), key_pin(certs, "stranger.key")
    try:
        before = len(log.read_text().splitlines()) if log.exists() else 0
        big = lab.add_file("pinned/big.bin", 96 << 20, seed=96)
        pinned = ferry.get(url(lab, "good", "pinned/big.bin"), *trust, "--pinned-public-key", f"{stranger};{good}", "--connections", "4")
        done = ferry.wait_for(pinned, lambda t: t["state"] == "completed", 60, "the pinned download")
        assert sha256(done["path"]) == sha256(big) and done["options"]["pinnedPublicKey"] == f"{stranger};{good}"
        served = [json.loads(line) for line in log.read_text().splitlines()[before:]]
        ranges = [r for r in served if "/pinned/big.bin" in r["request"] and int(r["status"]) == 206]
        assert len({r["connection"] for r in ranges}) >= 2, f"the ranges came over several pinned connections: {served}"

        # The tunnel's sockets carry this user's TLS (and client certificate): no other user may open them.
        sockets = [path for path in Path("/tmp").glob("ferry-pinned-*/*.sock") if path.stat().st_mtime >= time.time() - 120]
        assert sockets, "the pinned download's socket"
        assert stat.S_IMODE(sockets[0].parent.stat().st_mode) == 0o700
        other_user = subprocess.run(["runuser", "-u", "nobody", "--", "python3", "-c",
                                     f"import socket; socket.socket(socket.AF_UNIX).connect({str(sockets[0])!r})"],
                                    capture_output=True, text=True)
        assert other_user.returncode != 0 and "PermissionError" in other_user.stderr, other_user

        # A valid chain is not enough: the key must be the pinned one.
        other = failed_at_once(ferry, ferry.get(url(lab, "good"), *trust, "--pinned-public-key", stranger))["error"]["message"]
        assert f"public key is {good}, not the one pinned ({stranger})" in other and "\n" not in other, other
        # Nor is the pin alone: the chain is still checked…
        unchecked = failed_at_once(ferry, ferry.get(url(lab, "stranger"), "--pinned-public-key", stranger))["error"]["message"]
        assert 'signed by “CN=Nobody\'s CA”' in unchecked, unchecked
        # …unless the user says not to, when the pin is all that is checked (as curl -k --pinnedpubkey).
        insecure = ferry.get(url(lab, "stranger", "four.bin"), "--insecure", "--pinned-public-key", stranger)
        assert sha256(ferry.wait_for(insecure, lambda t: t["state"] == "completed", 30, "pinned, insecure")["path"]) == files["four.bin"]
        wrong_insecure = failed_at_once(ferry, ferry.get(url(lab, "stranger"), "--insecure", "--pinned-public-key", good))
        assert "not the one pinned" in wrong_insecure["error"]["message"], wrong_insecure

        # A session's pin holds for its transfers.
        ferry.cli("session", "set", "pinned", "--pinned-public-key", stranger, *trust)
        session = failed_at_once(ferry, ferry.get(url(lab, "good", "four.bin"), "--session", "pinned"))
        assert "not the one pinned" in session["error"]["message"], session

        for bad in ("sha256//nothex", "md5//AAAA", good + ";"):
            refused = refused_before_journaling(ferry, "--pinned-public-key", bad, url(lab, "good"))
            assert "is not a public key pin" in refused and "openssl" in refused, refused
    finally:
        ferry.stop()
