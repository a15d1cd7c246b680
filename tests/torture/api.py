"""schemathesis (PyPI) against a running daemon's own OpenAPI document (/v1/openapi.yaml): no 5xx,
and every status, content type, header and body as the document says.

The daemon's outbound requests (catalog, feeds, downloads of generated URLs) can only reach
loopback: the torture run sits in a network namespace of its own, and the catalog points at a
stand-in on nginx serving a recorded iTunes answer."""

import shutil
import subprocess
import sys

from harness import REPO, FerryDaemon, log

CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,"
          "response_headers_conformance,response_schema_conformance")


def schemathesis_command():
    """How to start schemathesis: its script on PATH, else as a module of this Python."""
    if shutil.which("schemathesis"):
        return ["schemathesis"]
    probe = subprocess.run([sys.executable, "-c", "import schemathesis.cli"], capture_output=True)
    return [sys.executable, "-m", "schemathesis.cli"] if probe.returncode == 0 else None


def schemathesis(home, binary, nginx, www, workdir, examples, seed):
    catalog = www / "catalog"
    catalog.mkdir(parents=True, exist_ok=True)
    answer = (REPO / "Tests/Fixtures/itunes/search-song-2-results.json").read_bytes()
    (catalog / "search").write_bytes(answer)
    (catalog / "lookup").write_bytes(answer)
    daemon = FerryDaemon(home, binary, env={"FERRY_CATALOG_URL": nginx.url("catalog")})
    daemon.wipe()
    # schemathesis makes up hook commands too: this daemon refuses them and runs none.
    daemon.start(extra=["--no-hooks"])
    # Something to find for the operations that take an id.
    daemon.get([nginx.url("catalog/search")], session="cli")
    report = workdir / "schemathesis"
    shutil.rmtree(report, ignore_errors=True)
    base = [
        *schemathesis_command(), "--no-color", "run", f"{daemon.url}/v1/openapi.yaml", "--url", daemon.url,
        "-H", f"Authorization: Bearer {daemon.token}", "--checks", CHECKS, "--seed", str(seed),
        "--phases", "examples,coverage,fuzzing", "--workers", "1", "--suppress-health-check", "all",
        "--report", "junit", "--report-dir", str(report),
    ]
    runs = [
        # Stopping or restarting the daemon ends the run (the CLI and web suites test them); the event streams never end,
        # so they get a run of their own with a short read timeout. A failed password login
        # waits up to 8 s by design (the throttle): AccountAPITests test it.
        [*base, "--max-examples", str(examples), "--request-timeout", "30",
         "--exclude-operation-id", "shutdown", "--exclude-operation-id", "restart", "--exclude-operation-id", "streamEvents",
         "--exclude-operation-id", "streamAllEvents", "--exclude-operation-id", "logIn"],
        [*base, "--max-examples", str(max(2, examples // 5)), "--request-timeout", "2",
         "--include-operation-id", "streamEvents", "--include-operation-id", "streamAllEvents"],
    ]
    output, codes = [], []
    for command in runs:
        log("  " + " ".join(c if "Bearer" not in c else "Authorization: Bearer …" for c in command[:3] + command[-8:]))
        result = subprocess.run(command, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=workdir)
        output.append(result.stdout)
        codes.append(result.returncode)
    alive = daemon.answers()
    daemon.stop()
    (workdir / "schemathesis.log").write_text("\n\n".join(output))
    summary = [line for text in output for line in [l for l in text.splitlines() if l.strip()][-14:]]
    return {"exit": max(codes), "daemon_alive": alive, "tail": "\n".join(summary),
            "log": str(workdir / "schemathesis.log")}
