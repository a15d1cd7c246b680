"""Scenario 14: downloads over TLS from nginx on loopback, with an authority of the bench's own
(openssl) named to each tool (Ferry's --ca-certificate, curl's --cacert, aria2c's
--ca-certificate, wget's --ca-certificate); nothing is added to the system's store.

- one large file (ctx.tls_size, 1 GiB by default): Ferry, curl, wget, aria2c -x1, interleaved;
- ctx.tls_count files of 64 KiB over h2: Ferry (one `ferry get` of them all), curl --parallel
  --parallel-max 16 (h2 multiplexing), aria2c -j16 (HTTP/1.1: aria2 has no h2).

nginx offers h2 and HTTP/1.1 by ALPN; its log says which protocol each request came over and on
which connection, and the report gives connections per tool for the small files."""

import json
import os
import subprocess
import time
from pathlib import Path

from downloads import ARIA2, clear, rotate, settle
from harness import FerryDaemon, log, make_file, summary, timed


def certificates(folder: Path):
    """An authority and a certificate for 127.0.0.1 and localhost, EC P-256."""
    folder.mkdir(parents=True, exist_ok=True)

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "3", "-subj", "/CN=Ferry Bench CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=localhost")
    (folder / "server.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
            "-days", "2", "-extfile", "server.ext")
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


def connections(log_path: Path, since: int):
    """Distinct connections and protocols of the access log's lines after `since`."""
    lines = log_path.read_text().splitlines()[since:] if log_path.exists() else []
    serials = {line.split()[0] for line in lines}
    protocols = {line.split()[1] for line in lines}
    return len(serials), sorted(protocols), len(lines)


def tls(ctx):
    ca, certificate, key = certificates(ctx.work / "tls-certificates")
    nginx = ctx.nginx
    base = nginx.tls_url(certificate, key)
    big = ctx.work / "www" / "tls-big.bin"
    make_file(big, ctx.tls_size, seed=14)
    small_names = [f"tls-small/{n:04d}.bin" for n in range(ctx.tls_count)]
    for n, name in enumerate(small_names):
        make_file(ctx.work / "www" / name, 64 << 10, seed=1000 + n)
    out = ctx.work / "out-tls"
    daemon = FerryDaemon(ctx.work / "ferry-tls", ctx.ferry, max_concurrent=16).start()
    results = {"single": {}, "many": {}}
    log_path = nginx.tls_log

    def single(tool, command=None):
        def go():
            clear(out)
            target = out / "big.bin"
            start = time.perf_counter()
            if command is None:
                result = daemon.cli("get", "--force", "--session", "tls", "--json", "--ca-certificate", str(ca), f"{base}/tls-big.bin")
                transfer = json.loads(result.stdout)[0]
                assert transfer["state"] == "completed", transfer
                clear(daemon.library / "Downloads")
            else:
                subprocess.run([str(part).replace("{target}", str(target)).replace("{out}", str(out)) for part in command],
                               check=True, capture_output=True)
                assert target.stat().st_size == ctx.tls_size
            results["single"].setdefault(tool, []).append(time.perf_counter() - start)
        return go

    listing = ctx.work / "tls-urls.txt"
    listing.write_text("\n".join(f"{base}/{name}" for name in small_names) + "\n")

    def many(tool):
        def go():
            clear(out)
            before = len(log_path.read_text().splitlines()) if log_path.exists() else 0
            start = time.perf_counter()
            if tool == "ferry get":
                result = daemon.cli("get", "--force", "--session", "tls-many", "--json", "--ca-certificate", str(ca), "-i", str(listing))
                assert all(t["state"] == "completed" for t in json.loads(result.stdout))
                clear(daemon.library / "Downloads")
            elif tool.startswith("curl"):
                urls = [f"{base}/{name}" for name in small_names]
                command = ["curl", "-sSf", "--cacert", str(ca), "--parallel", "--parallel-max", "16", "--http2"]
                for n, url in enumerate(urls):
                    command += ["-o", str(out / f"{n:04d}.bin"), url]
                subprocess.run(command, check=True, capture_output=True)
                assert len(os.listdir(out)) == len(urls)
            else:
                timed([*ARIA2, "-j16", "--ca-certificate", str(ca), "-i", listing, "-d", out])
                assert len(os.listdir(out)) == len(small_names)
            seconds = time.perf_counter() - start
            time.sleep(0.3)  # nginx writes a request's line when it ends
            count, protocols, requests = connections(log_path, before)
            entry = results["many"].setdefault(tool, {"seconds": [], "connections": [], "protocols": []})
            entry["seconds"].append(seconds)
            entry["connections"].append(count)
            entry["protocols"] = protocols
        return go

    tools = [
        ("single", single("ferry get")),
        ("single", single("curl", ["curl", "-sSf", "--cacert", ca, "-o", "{target}", f"{base}/tls-big.bin"])),
        ("single", single("wget", ["wget", "-q", "--ca-certificate", ca, "-O", "{target}", f"{base}/tls-big.bin"])),
        ("single", single("aria2c -x1", [*ARIA2, "-x1", "-s1", "--ca-certificate", ca, "-d", "{out}", "-o", "big.bin", f"{base}/tls-big.bin"])),
        ("many", many("ferry get")),
        ("many", many("curl --parallel --parallel-max 16")),
        ("many", many("aria2c -j16")),
    ]
    try:
        for round_index in range(ctx.runs):
            for _, go in rotate(tools, round_index):
                settle()
                go()
            log(f"  tls: round {round_index + 1}/{ctx.runs} done")
    finally:
        daemon.wipe()
        clear(out)
    return {
        "size": ctx.tls_size, "count": ctx.tls_count,
        "single": {tool: {"seconds": v, "summary": summary(v)} for tool, v in results["single"].items()},
        "many": {tool: {**v, "summary": summary(v["seconds"])} for tool, v in results["many"].items()},
    }


def markdown(result):
    mib = result["size"] >> 20
    lines = [f"One file of {mib} MiB over HTTPS from nginx on loopback (seconds, median of the runs):", "",
             "| tool | median s | MiB/s | runs |", "|---|---|---|---|"]
    for tool, entry in sorted(result["single"].items(), key=lambda kv: kv[1]["summary"]["median"]):
        median = entry["summary"]["median"]
        lines.append(f"| {tool} | {median:.2f} | {mib / median:.0f} | {', '.join(f'{s:.2f}' for s in entry['seconds'])} |")
    lines += ["", f"{result['count']} files of 64 KiB over HTTPS (nginx offers h2 and HTTP/1.1):", "",
              "| tool | median s | connections | protocol | runs |", "|---|---|---|---|---|"]
    for tool, entry in sorted(result["many"].items(), key=lambda kv: kv[1]["summary"]["median"]):
        lines.append(f"| {tool} | {entry['summary']['median']:.2f} | {max(entry['connections'])} | {', '.join(entry['protocols'])} | "
                     f"{', '.join(f'{s:.2f}' for s in entry['seconds'])} |")
    return "\n".join(lines)
