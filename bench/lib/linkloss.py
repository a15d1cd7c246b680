"""Scenario 8: link loss. A download from nginx in a network namespace O (egress shaped with tc
so the file takes about --linkloss-seconds), to a client namespace C whose link goes down 30 % of
the way in, for --linkloss-outage seconds, and comes back (tests/lab/lab.py builds it; root only).

Each tool runs in C, with its own retry options and with its defaults:
  aria2c --max-tries=0 --retry-wait=1      | aria2c (defaults)
  curl --retry 1000 --retry-all-errors --retry-delay 1 -C - | curl (defaults)
  wget -c --tries=0 --retry-connrefused --waitretry=1       | wget (defaults)
  ferry: `ferry serve` in C (FERRY_HOME in the work folder), `ferry get --no-wait URL`, then
         `ferry ls --all --json` until it completes or fails
(aria2c gets --file-allocation=none in both, so its file grows as bytes arrive.)

Measured from the moment of link_up (`ip link set up` in C): the first new byte (the output file
sampled every 50 ms: its first growth) and the start of the first new request in nginx's access
log ($msec - $request_time; none when the old connection carried on), the time to completion, and
whether it completed with the right SHA-256; also how it ended (exit status or Ferry's state and
error), the CPU time the tool (or the daemon) spent during the outage, and every request nginx
logged. A tool still running without progress long after link_up is stopped and recorded as such.

What to expect: nginx's send_timeout (its default, 60 s) closes a connection it could not send on
for that long, so with the default outage the old connection is gone by link_up (its last buffered
bytes and FIN arrive just after) and every tool needs a new request; after a shorter outage the old
connection may carry on, waiting for TCP's next retransmission. Ferry writes about 1 MiB at a time,
so its file grows in steps: for it the new request's start is the finer measure.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from downloads import ARIA2, clear, rotate, settle
from harness import REPO, Sampler, is_root, log, sha256, summary

sys.path.insert(0, str(REPO / "tests" / "lab"))
from lab import Lab, cpu_seconds  # noqa: E402

DOWN_AT = 0.30
SAMPLE_INTERVAL = 0.05


class Growth(Sampler):
    """Samples a file's size every 50 ms in a thread: (epoch seconds, bytes) pairs."""

    def __init__(self, size):
        super().__init__(SAMPLE_INTERVAL)
        self.size = size
        self.samples = []

    def tick(self):
        self.samples.append((time.time(), self.size()))

    def latest(self):
        return self.samples[-1][1] if self.samples else 0

    def at(self, moment):
        before = [s for t, s in self.samples if t <= moment]
        return before[-1] if before else 0

    def first_growth_after(self, moment):
        """The time of the first sample after `moment` larger than the one before it."""
        previous = self.at(moment)
        for t, s in self.samples:
            if t <= moment:
                continue
            if s > previous:
                return t
            previous = s
        return None

    def last_growth(self):
        last, previous = None, None
        for t, s in self.samples:
            if previous is not None and s > previous:
                last = t
            previous = s
        return last


def file_size(path):
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def process_cpu(pid):
    """cpu_seconds, or None once the process is gone."""
    try:
        return cpu_seconds(pid)
    except (OSError, IndexError, ValueError):
        return None


class Tool:
    """A command-line downloader run in C: start(), finished() -> None or (completed, how it
    ended), path of its output, pid for CPU time, stop()."""

    def __init__(self, lab, argv, path, stderr_path):
        self.lab, self.argv, self.path, self.stderr_path = lab, argv, path, stderr_path
        self.process = None
        self._ended = None

    def start(self):
        with open(self.stderr_path, "w") as stderr:
            self.process = self.lab.exec_in(self.lab.client, self.argv, stdout=subprocess.DEVNULL, stderr=stderr)

    @property
    def pid(self):
        return self.process.pid

    def size(self):
        return file_size(self.path)

    def finished(self):
        if self._ended is None:
            code = self.process.poll()
            if code is None:
                return None
            tail = self.stderr_path.read_text(errors="replace").strip().splitlines()[-1:]
            # The last thing it said on failure (on success: warnings of retries it got past).
            self._ended = code == 0, f"exit {code}" + (f": {tail[0][:160]}" if tail and code else "")
        return self._ended

    def stop(self):
        self.lab.stop_process(self.process, signal.SIGKILL)

    def output(self):
        return self.path


class Ferry:
    """`ferry serve` in C for the whole scenario; one `ferry get --no-wait` per run (with
    `options` after get's own, e.g. bench/run --ferry-option); `ferry ls` at most every
    `poll_interval` s. Also used by bench/lib/throttled.py."""

    def __init__(self, lab, binary, home, session="linkloss", options=(), poll_interval=0.5):
        self.lab, self.binary, self.home = lab, binary, home
        self.session, self.options, self.poll_interval = session, list(options), poll_interval
        self.env = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "XDG_STATE_HOME", "FERRY_HOST")}
        self.env.update(FERRY_HOME=str(home), FERRY_PORT="0")
        self.serve = None
        self.transfer = None
        self.name = None
        self._state = None
        self._polled = 0.0

    def cli(self, *args, check=True, timeout=60):
        return self.lab.run_in(self.lab.client, [self.binary, *map(str, args)], env=self.env, check=check,
                               timeout=timeout)

    def start_daemon(self):
        shutil.rmtree(self.home, ignore_errors=True)
        self.home.mkdir(parents=True)
        self.serve = self.lab.exec_in(self.lab.client, [self.binary, "serve", "--log-level", "warning"], env=self.env,
                                      stdout=open(self.home / "serve.log", "w"), stderr=subprocess.STDOUT)
        info = self.home / "state" / "daemon.json"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.serve.poll() is not None:
                raise RuntimeError(f"ferry serve exited {self.serve.returncode}: "
                                   f"{(self.home / 'serve.log').read_text()[-1000:]}")
            try:
                if json.loads(info.read_text())["pid"] == self.serve.pid and self.cli("status", check=False).returncode == 0:
                    return
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        raise TimeoutError("ferry serve did not answer within 30 s")

    def stop_daemon(self):
        if self.serve and self.serve.poll() is None:
            self.cli("stop", check=False)
            try:
                self.serve.wait(20)
            except subprocess.TimeoutExpired:
                self.lab.stop_process(self.serve, signal.SIGKILL)

    def get(self, url):
        def go():
            transfer = json.loads(self.cli("get", "--no-wait", "--force", "--session", self.session, "--json",
                                           *self.options, url).stdout)
            self.transfer = transfer[0] if isinstance(transfer, list) else transfer
            self.name = url.rsplit("/", 1)[1]
            self._state = None
        return go

    @property
    def pid(self):
        return self.serve.pid

    @property
    def part(self):
        return self.home / "library" / ".partial" / f"{self.transfer['id']}.part"

    def size(self):
        part = file_size(self.part)
        if part:
            return part
        path = (self._state or {}).get("path")
        return file_size(Path(path) if path else self.home / "library" / "Downloads" / self.name)

    def _poll(self):
        if time.monotonic() - self._polled < self.poll_interval and self._state is not None:
            return self._state
        self._polled = time.monotonic()
        listed = self.cli("ls", "--all", "--json", check=False)
        if listed.returncode == 0:
            for transfer in json.loads(listed.stdout or "[]"):
                if str(transfer["id"]) == str(self.transfer["id"]):
                    self._state = transfer
        return self._state

    def finished(self):
        if self.serve.poll() is not None:
            return False, f"ferry serve exited {self.serve.returncode}"
        state = self._poll() or {}
        if state.get("state") == "completed":
            return True, "completed"
        if state.get("state") in ("failed", "cancelled"):
            return False, f"{state['state']}: {str(state.get('error'))[:200]}"
        return None

    def stop(self):
        self.cli("cancel", self.transfer["id"], check=False)

    def output(self):
        path = (self._poll() or {}).get("path")
        return Path(path) if path else None

    def tidy(self):
        if self.transfer:
            self.cli("cancel", self.transfer["id"], check=False)
            self.cli("rm", self.transfer["id"], "--delete-file", check=False)
        clear(self.home / "library" / "Downloads")


def one_run(lab, tool, starter, size, expected, outage, nominal):
    """One download with one outage; the measurements, relative to link_up."""
    lab.clear_nginx_log()
    began = time.time()
    starter()
    record = {"completed": False, "sha256_ok": False, "first_byte": None, "first_request": None,
              "completion": None, "ended": None, "ended_at": None, "cpu_outage": None, "down_at": None,
              "requests": [], "refetched": None, "link_up": None}
    with Growth(tool.size) as growth:
        deadline = time.monotonic() + 3 * nominal + 60
        while growth.latest() < DOWN_AT * size:
            if tool.finished() is not None or time.monotonic() > deadline:
                tool.stop()
                record["ended"] = f"before the outage: {tool.finished() or 'no progress'}"
                return record
            time.sleep(0.01)
        down_at = lab.link_down()
        record["down_at"] = growth.latest()
        cpu_before = process_cpu(tool.pid)
        ended = None
        while time.time() < down_at + outage:
            if ended is None:
                ended = tool.finished()
                if ended:
                    record["ended_at"] = round(time.time() - down_at - outage, 2)  # < 0: before link_up
            time.sleep(0.05)
        cpu_after = process_cpu(tool.pid)
        if cpu_before is not None and cpu_after is not None:
            record["cpu_outage"] = round(cpu_after - cpu_before, 3)
        up = lab.link_up()
        up_at = up["at"]
        record["link_up"] = {k: up[k] for k in ("connected_route_back", "default_route_readded", "seconds")}
        limit = up_at + 2 * outage + 3 * nominal + 30
        stall = outage + 60
        while ended is None:
            ended = tool.finished()
            if ended:
                record["ended_at"] = round(time.time() - up_at, 2)
                break
            last = growth.last_growth() or up_at
            now = time.time()
            if now > limit or now - max(last, up_at) > stall:
                tool.stop()
                ended = (False, f"stopped by the bench: no progress for {now - max(last, up_at):.0f} s after link up"
                         if now - max(last, up_at) > stall else f"stopped by the bench: {now - up_at:.0f} s after link up")
                break
            time.sleep(0.05)
        finished_at = time.time()
        time.sleep(SAMPLE_INTERVAL * 2)
    completed, how = ended
    record["ended"] = how
    first = growth.first_growth_after(up_at)
    record["first_byte"] = None if first is None else round(first - up_at, 3)
    output = tool.output()
    if completed and output and output.exists():
        record["sha256_ok"] = sha256(output) == expected
        record["completed"] = record["sha256_ok"]
        record["completion"] = round(finished_at - up_at, 3)
    time.sleep(0.2)  # nginx logs a request when it ends
    entries = lab.nginx_requests()
    record["requests"] = [(e["status"], e["range"], e["body_bytes_sent"], round(e["start"] - up_at, 3),
                           round(e["end"] - up_at, 3)) for e in entries]
    record["refetched"] = sum(e["body_bytes_sent"] for e in entries) - size if record["completed"] else None
    new = [e["start"] for e in entries if e["start"] >= up_at - 0.002 and e["start"] >= began]
    record["first_request"] = round(min(new) - up_at, 3) if new else None
    return record


def linkloss(ctx):
    if not is_root():
        raise RuntimeError("linkloss needs root: network namespaces, veth pairs and tc (tests/lab/lab.py)")
    for tool in ("ip", "tc", "nginx", "curl", "wget", "aria2c"):
        if not shutil.which(tool):
            raise RuntimeError(f"linkloss needs {tool} (tests/lab/run installs the lab's packages)")
    size, outage, nominal = ctx.linkloss_size, ctx.linkloss_outage, ctx.linkloss_seconds
    www = ctx.work / "www"
    name = ctx.big.name if ctx.size == size else ctx.make_sized(size)
    log(f"  linkloss: hashing {name}")
    expected = ctx.big_sha256 if name == ctx.big.name else sha256(www / name)
    subprocess.run(f"cat {www / name} > /dev/null", shell=True, check=True)
    rate = int(size * 8 / nominal)
    out = ctx.work / "out-linkloss"
    clear(out)
    results = {}
    with Lab(www=www) as lab:
        lab.shape(f"{rate}bit")
        url = lab.url(name)
        target = out / "file.bin"
        aria = [*ARIA2, "-x1", "-s1", "--file-allocation=none", "-d", out, "-o", "file.bin"]
        cases = [
            ("aria2c --max-tries=0 --retry-wait=1", [*aria, "--max-tries=0", "--retry-wait=1", url]),
            ("aria2c (defaults)", [*aria, url]),
            ("curl --retry 1000 --retry-all-errors -C -",
             ["curl", "-sS", "--retry", "1000", "--retry-all-errors", "--retry-delay", "1", "-C", "-", "-o", target, url]),
            ("curl (defaults)", ["curl", "-sS", "-o", target, url]),
            ("wget -c --tries=0 --retry-connrefused", ["wget", "-q", "-c", "--tries=0", "--retry-connrefused",
                                                       "--waitretry=1", "-O", target, url]),
            ("wget (defaults)", ["wget", "-q", "-O", target, url]),
        ]
        stderr = ctx.work / "linkloss-stderr.log"
        runs = [(label, (lambda argv=argv: Tool(lab, argv, target, stderr))) for label, argv in cases]
        ferry = None
        if ctx.ferry.exists():
            ferry = Ferry(lab, ctx.ferry, ctx.work / "ferry-linkloss")
            ferry.start_daemon()
            runs.append(("ferry get", lambda: ferry))
        else:
            log(f"  linkloss: no ferry binary at {ctx.ferry}: Ferry not measured")
        log(f"  linkloss: {size >> 20} MiB at {rate / 1e6:.1f} Mbit/s (about {nominal} s), link down at "
            f"{DOWN_AT:.0%} for {outage:g} s")
        try:
            for round_index in range(ctx.linkloss_runs):
                for label, make in rotate(runs, round_index):
                    settle()
                    for leftover in out.glob("*"):
                        leftover.unlink()
                    tool = make()
                    starter = ferry.get(url) if tool is ferry else tool.start
                    try:
                        record = one_run(lab, tool, starter, size, expected, outage, nominal)
                    finally:
                        if tool is ferry:
                            ferry.tidy()
                        elif tool.process:
                            tool.stop()
                        if not lab.link_is_up:
                            lab.link_up()
                    entry = results.setdefault(label, {})
                    for key, value in record.items():
                        entry.setdefault(key, []).append(value)
                    log(f"  linkloss: {label}: completed={record['completed']} first byte {record['first_byte']} s, "
                        f"done {record['completion']} s after link up; {record['ended']}")
                log(f"  linkloss: round {round_index + 1}/{ctx.linkloss_runs} done")
        finally:
            if ferry:
                ferry.stop_daemon()
                shutil.rmtree(ferry.home, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
            stderr.unlink(missing_ok=True)
    if not ctx.ferry.exists():
        results["ferry get"] = {"not_measured": f"no ferry binary at {ctx.ferry}"}
    for entry in results.values():
        if "completed" in entry:
            for key in ("first_byte", "first_request", "completion", "cpu_outage"):
                entry[f"{key}_summary"] = summary(entry[key])
    return {"size": size, "outage": outage, "seconds": nominal, "rate_bits": rate, "down_at": DOWN_AT,
            "runs": ctx.linkloss_runs, "tools": results}


def markdown(result):
    from report import mib, span
    lines = [
        f"File: {mib(result['size'])}, origin shaped to {result['rate_bits'] / 1e6:.1f} Mbit/s (about "
        f"{result['seconds']} s), link down in the client's namespace at {result['down_at']:.0%} for "
        f"{result['outage']:g} s, {result['runs']} run(s) each. Times are from link up. *First new byte*: the "
        "output file's first growth (sampled every 50 ms); *first new request*: the start of the first "
        "request nginx logged after link up (— when the old connection carried on or none came); *CPU in "
        "outage*: the tool's (Ferry: the daemon's) user + system time while the link was down. nginx closes a "
        "connection that could not send for 60 s (send_timeout), so after a longer outage every tool needs a "
        "new request.",
        "",
        "| tool | completed (SHA-256 ok) | first new byte | first new request | completion | CPU in outage | "
        "how it ended | requests (status range) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, entry in result["tools"].items():
        if "not_measured" in entry:
            lines.append(f"| {name} | not measured: {entry['not_measured']} | | | | | | |")
            continue
        done = f"{sum(entry['completed'])}/{len(entry['completed'])}"
        first, _ = span(entry["first_byte_summary"])
        request, _ = span(entry["first_request_summary"])
        complete, _ = span(entry["completion_summary"])
        cpu, _ = span(entry["cpu_outage_summary"])
        ended = "; ".join(sorted(set(str(e) for e in entry["ended"])))
        requests = " / ".join(", ".join(f"{status} {rng or '-'}" for status, rng, *_ in run) for run in entry["requests"])
        lines.append(f"| {name} | {done} | {first} | {request} | {complete} | {cpu} | {ended} | {requests} |")
    return "\n".join(lines)
