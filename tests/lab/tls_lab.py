"""Certificates made with openssl for TLS tests, and nginx servers that present them.

`Certificates(folder)` makes, with EC P-256 keys:
  ca.pem / ca.key            the lab's authority (what a company's or a home lab's CA is)
  server.pem / server.key    files.lab (and any name given), signed by it
  expired.pem                files.lab, signed by it, valid 1-2 January 2020 (`openssl ca`)
  other-host.pem             other.lab only, signed by it
  stranger.pem / .key        files.lab, signed by another authority nobody trusts
  client-ca.pem              the authority nginx checks client certificates against
  client.pem / client.key    a client certificate it signed; client-encrypted.key: the same key
                             under the passphrase CLIENT_PASSPHRASE
  rogue-client.pem / .key    a client certificate of an authority nginx does not trust

`servers(certs)` is the nginx `http` block text for them: each on its port of TLS_PORTS, serving the lab's www.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

CLIENT_PASSPHRASE = "correct horse battery"

# name → port of each TLS server the lab's nginx runs.
TLS_PORTS = {"good": 8443, "expired": 8444, "other-host": 8445, "stranger": 8446, "mutual": 8447}
# `openssl s_server` speaking TLS 1.1 only (old_server()).
OLD_PORT = 8448


def openssl(*args: str, cwd: Path):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, text=True)


class Certificates:
    def __init__(self, folder: Path, host: str = "files.lab"):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.host = host
        self._authority("ca", "Ferry Lab CA")
        self._authority("stranger-ca", "Nobody's CA")
        self._authority("client-ca", "Ferry Lab Clients CA")
        self._leaf("server", host, "ca")
        self._leaf("other-host", "other.lab", "ca")
        self._leaf("stranger", host, "stranger-ca")
        self._leaf("client", "ferry client", "client-ca", client=True)
        self._leaf("rogue-client", "ferry client", "stranger-ca", client=True)
        openssl("pkey", "-in", "client.key", "-aes256", "-passout", f"pass:{CLIENT_PASSPHRASE}", "-out", "client-encrypted.key",
                cwd=folder)
        self._expired()

    def path(self, name: str) -> str:
        return str(self.folder / name)

    def _authority(self, name: str, common_name: str):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{name}.key",
                "-out", f"{name}.pem", "-days", "3", "-subj", f"/CN={common_name}",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=self.folder)

    def _leaf(self, name: str, common_name: str, authority: str, client: bool = False):
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{name}.key",
                "-out", f"{name}.csr", "-subj", f"/CN={common_name}", cwd=self.folder)
        extensions = self.folder / f"{name}.ext"
        extensions.write_text("extendedKeyUsage=clientAuth\n" if client else
                              f"subjectAltName=DNS:{common_name}\nextendedKeyUsage=serverAuth\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{authority}.pem", "-CAkey", f"{authority}.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", "2", "-extfile", extensions.name, cwd=self.folder)

    def _expired(self):
        """`openssl x509` cannot date a certificate in the past (OpenSSL 3.0); `openssl ca` can."""
        work = self.folder / "expired-ca"
        work.mkdir(exist_ok=True)
        (work / "index.txt").write_text("")
        (work / "serial").write_text("1000\n")
        (work / "ca.cnf").write_text(f"""
[ca]
default_ca = lab
[lab]
dir = {work}
database = {work}/index.txt
serial = {work}/serial
new_certs_dir = {work}
certificate = {self.folder}/ca.pem
private_key = {self.folder}/ca.key
default_md = sha256
policy = anything
copy_extensions = none
x509_extensions = leaf
[anything]
commonName = supplied
[leaf]
subjectAltName = DNS:{self.host}
extendedKeyUsage = serverAuth
""")
        openssl("req", "-new", "-key", "server.key", "-out", "expired.csr", "-subj", f"/CN={self.host}", cwd=self.folder)
        openssl("ca", "-config", str(work / "ca.cnf"), "-batch", "-notext", "-in", "expired.csr", "-out", "expired.pem",
                "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", cwd=self.folder)


def servers(certs: Certificates, www: Path, log: Path) -> str:
    """nginx server blocks: one per TLS_PORTS entry, h2 and HTTP/1.1 offered."""
    chains = {"good": ("server.pem", "server.key"), "expired": ("expired.pem", "server.key"),
              "other-host": ("other-host.pem", "other-host.key"), "stranger": ("stranger.pem", "stranger.key"),
              "mutual": ("server.pem", "server.key")}
    blocks = []
    for name, port in TLS_PORTS.items():
        certificate, key = chains[name]
        mutual = (f"ssl_client_certificate {certs.path('client-ca.pem')}; ssl_verify_client on;"
                  if name == "mutual" else "")
        blocks.append(f"""
    server {{
        listen {port} ssl http2;
        server_name _;
        ssl_certificate {certs.path(certificate)};
        ssl_certificate_key {certs.path(key)};
        {mutual}
        access_log {log} lab;
        root {www};
        location / {{ }}
    }}""")
    return "\n".join(blocks)


def old_server(lab, certs: Certificates):
    """A server that speaks TLS 1.1 only, in the origin namespace: OpenSSL's s_server (nginx's
    per-server ssl_protocols did not hold in the lab's configuration). OpenSSL 3 allows 1.1 at
    security level 0 alone."""
    process = lab.exec_in(lab.origin, ["openssl", "s_server", "-quiet", "-accept", str(OLD_PORT), "-cert", certs.path("server.pem"),
                                       "-key", certs.path("server.key"), "-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0", "-www"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lab._wait_listening(lab.origin, OLD_PORT, process, "openssl s_server")
    return process
