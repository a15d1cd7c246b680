"""Shared by bench/ and tests/torture/: an nginx origin on loopback, a Ferry daemon in a
throwaway FERRY_HOME, processes, timing and statistics. Nothing here talks to anything but
127.0.0.1."""

import hashlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def is_root():
    return os.geteuid() == 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, timeout, interval=0.01, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


def sha256(path):
    """Lower-case hex SHA-256 of a file, read 1 MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def run(command, **kwargs):
    """Runs a command, raising with its output when it fails."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    result = subprocess.run(command, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def timed(command, **kwargs):
    """Wall-clock seconds of one run of `command` (which must succeed)."""
    start = time.perf_counter()
    run(command, **kwargs)
    return time.perf_counter() - start


def timed_with_rss(command, **kwargs):
    """(seconds, peak RSS in KiB, peak anonymous RSS in KiB) of one run: the RSS from GNU time,
    the anonymous part sampled by an AnonPeak."""
    start = time.perf_counter()
    process = subprocess.Popen(["/usr/bin/time", "-f", "%M", *map(str, command)], text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    with AnonPeak(process.pid, children=True) as anon:
        stdout, stderr = process.communicate()
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {process.returncode}:\n{stdout}\n{stderr}")
    return seconds, int(stderr.strip().splitlines()[-1]), anon.peak_kib


class Sampler:
    """A thread that calls `tick()` every `interval` seconds while in the `with` block (and once at
    its start); a `tick()` that returns True ends it early."""

    def __init__(self, interval):
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        while not self.tick() and not self._stop.wait(self.interval):
            pass

    def tick(self):
        raise NotImplementedError


class AnonPeak(Sampler):
    """The peak anonymous memory (RssAnon: heap, stacks, buffers) of a process, or with
    `children` of its child processes (the tool under GNU time), sampled every 5 ms while in the
    `with` block. Unlike RSS it leaves out the mapped pages of the binary and its libraries,
    which are clean, shared and can be dropped: it is the memory the process itself asks for."""

    def __init__(self, pid, children=False, interval=0.005):
        super().__init__(interval)
        self.pid = pid
        self.children = children
        self.peak_kib = 0

    def _pids(self):
        if not self.children:
            return [self.pid]
        try:
            return Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        except OSError:
            return []

    def tick(self):
        for pid in self._pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("RssAnon:"):
                        self.peak_kib = max(self.peak_kib, int(line.split()[1]))
            except (OSError, ValueError):
                pass


def summary(values):
    """Median, min and max of a list of numbers."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def process_memory(pid):
    """(current RSS, peak RSS) of a process in KiB, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def reset_peak_memory(pid):
    """Resets a process's peak RSS (VmHWM) to its current RSS (Linux ≥ 4.0, same user or root)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def threads_alive(pid):
    """Whether any thread of the process has not exited yet (zombies have)."""
    try:
        states = [(Path(f"/proc/{pid}/task") / tid / "stat").read_text().split(") ")[1][0]
                  for tid in os.listdir(f"/proc/{pid}/task")]
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False
    return any(state != "Z" for state in states)


class FreePageReportingOff:
    """Holds off a virtual machine's free page reporting (virtio-balloon) while benchmarks run.

    With it on, the guest hands memory it frees back to the host, and the next tool to fill the
    page cache waits for the host to supply those pages again: on the machine of docs/PERFORMANCE.md
    a 1 GiB `dd` + fsync took 3.1 s with it and 0.6 s without, and every tool swung by tens of
    percent from run to run. Raising the reporting order above the largest page order stops it;
    the old order is put back on exit. Nothing happens where the parameter does not exist (no
    balloon, or not root). `state` says what was done, for the report."""

    PARAMETER = Path("/sys/module/page_reporting/parameters/page_reporting_order")

    def __init__(self):
        self.saved = None
        self.state = "not present"

    def __enter__(self):
        if not self.PARAMETER.exists():
            return self
        if not is_root():
            self.state = "on (not root: left as it was)"
            return self
        self.saved = self.PARAMETER.read_text().strip()
        self.PARAMETER.write_text("11\n")  # MAX_PAGE_ORDER is 10: no free block is ever that large
        self.state = f"held off during the run (page_reporting_order {self.saved} -> 11, restored after)"
        log(f"free page reporting {self.state}")
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            self.PARAMETER.write_text(self.saved + "\n")


def make_file(path, size, seed):
    """A file of `size` pseudo-random (incompressible) bytes, made once and kept."""
    path = Path(path)
    if path.exists() and path.stat().st_size == size:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        remaining = size
        chunk = os.urandom(1 << 20)
        counter = seed
        while remaining > 0:
            # Cheap variation per MiB so no two MiB are equal, without 1 GiB of urandom.
            piece = counter.to_bytes(8, "little") + chunk[8:]
            f.write(piece[: min(remaining, len(piece))])
            remaining -= len(piece)
            counter += 1
    return path


class Nginx:
    """nginx from Debian's packages serving `root` on 127.0.0.1, with sendfile, Range and ETag.
    With `access_log`, each response is logged as `msec request_time status bytes "request" "range"`."""

    def __init__(self, root, workdir, access_log=False, workers=2):
        self.root = Path(root)
        self.workdir = Path(workdir)
        self.access_log = access_log
        self.workers = workers
        self.port = None
        self.process = None
        # A TLS server beside the plain one (tls_url): its port, certificate and key.
        self.tls = None

    def start(self):
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        log_line = (
            f'log_format bench \'$msec $request_time $status $body_bytes_sent "$request" "$http_range"\';\n'
            f"    access_log {self.workdir}/access.log bench;" if self.access_log else "access_log off;"
        )
        temp = self.workdir / "temp"
        temp.mkdir(exist_ok=True)
        config = f"""
{'user root;' if is_root() else ''}
worker_processes {self.workers};
daemon off;
pid {self.workdir}/nginx.pid;
error_log {self.workdir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    {log_line}
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.root};
        location / {{ }}
    }}
    {self._tls_server()}
}}
"""
        (self.workdir / "nginx.conf").write_text(config)
        self.process = subprocess.Popen(
            ["nginx", "-p", str(self.workdir), "-c", str(self.workdir / "nginx.conf")],
            stdout=subprocess.DEVNULL, stderr=open(self.workdir / "stderr.log", "w"),
        )
        wait_for(self._answers, 10, what="nginx")
        return self

    def _answers(self):
        if self.process.poll() is not None:
            raise RuntimeError(f"nginx exited: {(self.workdir / 'stderr.log').read_text()}")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            return True
        except OSError:
            return False

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/{name}"

    def _tls_server(self):
        if not self.tls:
            return ""
        port, certificate, key = self.tls
        return f"""
    log_format tls '$connection $server_protocol $status $body_bytes_sent "$request"';
    server {{
        listen 127.0.0.1:{port} ssl http2;
        ssl_certificate {certificate};
        ssl_certificate_key {key};
        access_log {self.tls_log} tls;
        root {self.root};
        location / {{ }}
    }}"""

    @property
    def tls_log(self):
        return self.workdir / "tls-access.log"

    def tls_url(self, certificate, key):
        """The base URL of a TLS server (h2 and HTTP/1.1 by ALPN) serving the same folder, started
        now beside the plain one (nginx restarted on the same port)."""
        if not self.tls:
            self.tls = (free_port(), certificate, key)
            self.stop()
            self.start()
        return f"https://127.0.0.1:{self.tls[0]}"

    def log_entries(self):
        """Parsed access-log lines: dicts with time, duration, status, bytes, request, range."""
        path = self.workdir / "access.log"
        entries = []
        if not path.exists():
            return entries
        for line in path.read_text().splitlines():
            head, _, rest = line.partition(' "')
            msec, request_time, status, sent = head.split()
            request, _, range_header = rest.partition('" "')
            entries.append({
                "end": float(msec), "duration": float(request_time), "status": int(status),
                "bytes": int(sent), "request": request, "range": range_header.rstrip('"'),
            })
        return entries

    def clear_log(self):
        path = self.workdir / "access.log"
        if path.exists():
            path.write_text("")  # nginx keeps appending at its offset: O_APPEND, so this is safe.

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


class FerryDaemon:
    """A `ferry serve` in its own FERRY_HOME, driven through the real CLI and API."""

    def __init__(self, home, binary, max_concurrent=4, env=None):
        self.home = Path(home)
        self.binary = Path(binary)
        self.max_concurrent = max_concurrent
        self.env = {**os.environ, "FERRY_HOME": str(self.home), "FERRY_PORT": "0", **(env or {})}
        self.env.pop("FERRY_HOST", None)
        self.url = None
        self.pid = None

    @property
    def state(self):
        return self.home / "state"

    @property
    def library(self):
        return self.home / "library"

    def cli(self, *args, check=True, timeout=None, **kwargs):
        command = [str(self.binary), *map(str, args)]
        result = subprocess.run(command, env=self.env, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, timeout=timeout, **kwargs)
        if check and result.returncode != 0:
            raise RuntimeError(f"ferry {' '.join(map(str, args))[:200]} exited {result.returncode}: {result.stderr.strip()[:2000]}")
        return result

    def start(self, extra=()):
        """`ferry serve --detach`: returns once the API answers."""
        self.serve_detached(extra=extra)
        self.read_address()
        return self

    def serve_detached(self, extra=(), check=True):
        """Runs `ferry serve --detach` and returns its result; with check=False a refusal is
        returned, not raised (the torture run's restarts count them)."""
        return self.cli("serve", "--detach", "--max-concurrent", self.max_concurrent, "--log-level", "warning",
                        *extra, check=check)

    def read_address(self):
        info = json.loads((self.state / "daemon.json").read_text())
        self.url, self.pid = info["url"], info["pid"]

    @property
    def token(self):
        return (self.state / "token").read_text().strip()

    def api(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
        })
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
            return json.loads(text) if text else None

    def answers(self):
        try:
            self.api("GET", "/v1/status", timeout=1)
            return True
        except (urllib.error.URLError, ConnectionError, OSError, TimeoutError):
            return False

    def transfers(self):
        return self.api("GET", "/v1/transfers?state=all")["transfers"]

    def get(self, urls, session="bench", force=True):
        """Queues URLs (`POST /v1/transfers`, as `ferry get --no-wait` does) and returns the transfers."""
        body = {"urls": list(urls), "session": session, "force": force}
        return self.api("POST", "/v1/transfers", body, timeout=120)["transfers"]

    def stop(self):
        if self.pid and pid_alive(self.pid):
            self.cli("stop", check=False, timeout=60)
            try:
                wait_for(lambda: not pid_alive(self.pid), 60, what="the daemon to stop")
            except TimeoutError:
                os.kill(self.pid, signal.SIGKILL)
        self.pid = None

    def kill9(self, all_threads=False):
        """kill -9, then wait until the daemon is dead (gone or a zombie), as a person at a shell
        would see it; with `all_threads`, until every thread of it has exited too, as a
        supervisor would wait (a killed thread may still be finishing an fsync, holding the
        daemon lock: builds before a6b7a58 then failed to start)."""
        os.kill(self.pid, signal.SIGKILL)
        alive = threads_alive if all_threads else pid_alive
        wait_for(lambda: not alive(self.pid), 30, what="the killed daemon to go")
        self.pid = None

    def wipe(self):
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)
