"""A network lab for Ferry's tests: Linux network namespaces joined by veth pairs, with nginx as
the origin, tinyproxy and danted as proxies, tc shaping, link loss and per-namespace /etc/hosts.
Root only. Traffic never leaves the namespaces it makes: every address is in 10.213.0.0/16 and
lives inside them (nothing is added to the host's own namespace).

Topologies (`Lab(proxied=False)` / `Lab(proxied=True)`):

    direct    C ──veth── O          C 10.213.1.2, O 10.213.1.1 (C's default route via O)
    proxied   C ──veth── P ──veth── O
                                    C 10.213.2.2, P 10.213.2.1 | P 10.213.3.2, O 10.213.3.1
                                    (C's default route via P; ip_forward is off in P, so C
                                    reaches O only through tinyproxy or danted in P)

C is the client (Ferry's daemon and CLI run there: `ip netns exec C ...`), O the origin (nginx on
ports 80 and 8080), P the proxy. `lo` is up in each. The origin's name (`files.lab`) resolves
through the namespace's own hosts file, /etc/netns/<ns>/hosts, which `ip netns exec` bind-mounts
over /etc/hosts: in C in the direct topology, only in P in the proxied one (so `socks5h://` and
HTTP proxies resolve it remotely). Each namespace's resolv.conf points at its own loopback, where
nothing answers: a name not in the hosts file fails at once and no query leaves the lab.

    with Lab() as lab:                        # or Lab(proxied=True); .start() / .close() also work
        lab.add_file("big.bin", 64 << 20)     # random bytes in lab.www, served by nginx in O
        url = lab.url("big.bin")              # http://files.lab/big.bin (port=8080, host=IP too)
        p = lab.exec_in(lab.client, ["curl", "-sSo", "/tmp/f", url])   # a Popen, killed at close

API (ns arguments are namespace names: lab.client, lab.origin, lab.proxy):
  exec_in(ns, argv, **popen_kwargs) -> Popen   starts argv in ns (`ip netns exec`), in its own
                                               session; the lab kills it (its group) at close
  run_in(ns, argv, check=True, timeout=60, **kw) -> CompletedProcess (text, output captured)
  stop_process(popen, sig=SIGTERM)             signals its process group, waits, SIGKILL if needed
  add_file(name, size=None, data=None, seed=0) -> Path in lab.www; sha256(path) -> hex
  url(path, host=None, port=80)                the origin's URL (host: files.lab by default)
  nginx_requests(path=None) -> [dict]          the access log, one dict a request: start, end
                                               (epoch s, ms precision: $msec and $msec -
                                               $request_time), duration, remote_addr, status,
                                               bytes_sent, body_bytes_sent, request, method, path,
                                               range ($http_range, "" if none), if_range, host,
                                               user_agent, connection, connection_requests, protocol (HTTP/2.0), port. nginx
                                               logs a request when it ends.
  clear_nginx_log()                            empties it in place (nginx appends with O_APPEND)
  shape(rate="20mbit", burst=None, qdisc="tbf") / unshape()
                                               tc tbf (or htb: qdisc="htb") on O's egress toward C
                                               (or P); no netem here
  link_down() -> epoch / link_up(wait=True) -> dict
                                               `ip link set <C's veth> down/up`, run inside C so a
                                               process there watching rtnetlink sees it. The
                                               kernel drops C's default route with the link;
                                               link_up puts it back, then waits until C reaches
                                               the next hop; returns what it did and how long it took
  routes(ns=None) -> [str]                     `ip -4 route show` in ns (C by default)
  wait_reachable(timeout=10) -> seconds        until a TCP connect from C to O (direct) or P
                                               (proxied) gets an answer (accepted or refused)
  add_laptop() -> ns                           a second device: its own link to O, reaching O's address
  resolve(name, ip=None, ns=None) / unresolve(name, ns=None)
                                               edit /etc/netns/<ns>/hosts (C's by default) IN
                                               PLACE (same inode, which the bind mounts follow):
                                               running processes in ns see the change at their
                                               next lookup (glibc reads /etc/hosts each time)
  hosts_file(ns) -> Path
  proxy_url("tinyproxy" | "danted", user=..., password=..., remote_dns=True)
                                               http://ferry:lab-secret@10.213.2.1:8888 or
                                               socks5h://10.213.2.1:1080
  stop_proxy(name, sig=SIGKILL) / start_proxy(name)   kill one mid-test; restart it on the
                                               same address and port, same configuration
  cpu_seconds(pid) -> float                    utime + stime of all its threads, from /proc
  close()                                      kills everything running in the lab's
                                               namespaces, deletes them (their veths go with
                                               them) and their /etc/netns folders, and the
                                               work folder if the lab made it. Idempotent; also
                                               registered with atexit.

Lab(http_extra="...") adds blocks to nginx's http block (more servers: TLS ones);
Lab(server_extra="...") adds directives to nginx's server block (e.g. a location with
limit_rate: bench/lib/throttled.py); the same access log records its requests.

Attributes: client, origin, proxy (namespace names; proxy None when direct), client_ip, origin_ip,
proxy_ip (P's C side), proxy_origin_ip (P's O side), client_dev (C's veth), gateway (C's next
hop), origin_name, www, workdir, access_log, nginx (its Popen), link_is_up; also reachable(),
proxy_log(name) and the module's make_file(path, size, seed) and rate_bits("20mbit").

Names are unique per process and lab: namespaces fl<pid>x<n>{c,o,p}, interfaces fl<pid>x<n><a><b>
(≤ 15 characters). A lab left behind by a killed process is swept by the next Lab.start()
(sweep_stale(): only names of this pattern whose pid is gone).
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

NETNS_ETC = Path("/etc/netns")
ORIGIN_NAME = "files.lab"
PROXY_USER = "ferry"
PROXY_PASSWORD = "lab-secret"
TINYPROXY_PORT = 8888
DANTED_PORT = 1080
NAME_PATTERN = re.compile(r"^fl(\d+)x(\d+)(?:[copl]|m\d)$")  # m1, m2…: a cluster's members; l: a laptop
HOSTS_HEADER = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
# Nothing listens on the namespace's loopback port 53: a name missing from its hosts file fails at
# once (ICMP port unreachable), and no DNS query goes anywhere.
RESOLV_CONF = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"
# Proxy settings from the caller's environment must not send lab traffic anywhere else.
PROXY_ENV = {"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy",
             "HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "ALL_PROXY", "NO_PROXY"}

_labs = itertools.count()


def sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def cpu_seconds(pid: int) -> float:
    """CPU time of a process, user + system, of all its threads (live and exited), in seconds:
    fields 14 and 15 of /proc/<pid>/stat, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rate_bits(rate: str) -> int:
    """tc's rate syntax (bit, kbit, mbit, gbit; bps, kbps, mbps: bytes) in bits per second."""
    match = re.fullmatch(r"([0-9.]+)\s*([kmg]?)(bit|bps)?", rate.strip().lower())
    if not match:
        raise ValueError(f"not a rate: {rate!r}")
    value = float(match.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[match.group(2)]
    return int(value * (8 if match.group(3) == "bps" else 1))


def make_file(path, size: int, seed: int = 0) -> Path:
    """`size` incompressible bytes (no two MiB alike); kept if it already has that size."""
    path = Path(path)
    if path.exists() and path.stat().st_size == size:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    chunk = os.urandom(1 << 20)
    with open(path, "wb") as f:
        counter, remaining = seed << 32, size
        while remaining > 0:
            piece = counter.to_bytes(8, "little") + chunk[8:]
            f.write(piece[:remaining])
            remaining -= len(piece)
            counter += 1
    return path


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _ip(*args, check=True):
    result = subprocess.run(["ip", *map(str, args)], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(map(str, args))}: {result.stderr.strip()}")
    return result


def _kill_namespace_processes(ns: str, grace: float = 3.0):
    """Every process left in namespace `ns` (all of them the lab's or its tests': the namespace is
    the lab's own), SIGTERM then SIGKILL, by pid."""
    def pids():
        out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
        return [int(p) for p in out.split() if p.isdigit() and int(p) != os.getpid()]
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        remaining = pids()
        if not remaining:
            return
        for pid in remaining:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(_alive(p) for p in remaining):
            time.sleep(0.02)


def _delete_namespace(ns: str):
    _kill_namespace_processes(ns)
    _ip("netns", "del", ns, check=False)
    shutil.rmtree(NETNS_ETC / ns, ignore_errors=True)


def sweep_stale():
    """Deletes labs left behind by processes that no longer run (killed before their cleanup):
    only namespaces named like this module names them, fl<pid>x<n>{c,o,p}, whose pid is gone."""
    listing = _ip("netns", "list", check=False).stdout
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        match = NAME_PATTERN.match(name)
        if match and not _alive(int(match.group(1))):
            _delete_namespace(name)
    if NETNS_ETC.exists():
        for folder in NETNS_ETC.iterdir():
            match = NAME_PATTERN.match(folder.name)
            if match and not _alive(int(match.group(1))):
                shutil.rmtree(folder, ignore_errors=True)


class Lab:
    def __init__(self, proxied: bool = False, workdir=None, www=None, origin_name: str = ORIGIN_NAME,
                 ports=(80, 8080), nginx_workers: int = 1, server_extra: str = "", http_extra: str = ""):
        self.proxied = proxied
        self.server_extra = server_extra
        self.http_extra = http_extra
        self.prefix = f"fl{os.getpid()}x{next(_labs)}"
        self.client, self.origin = self.prefix + "c", self.prefix + "o"
        self.proxy = self.prefix + "p" if proxied else None
        self.origin_name = origin_name
        self.ports = tuple(ports)
        self.nginx_workers = nginx_workers
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix=f"ferry-lab-{self.prefix}-"))
        self.www = Path(www) if www else self.workdir / "www"
        if proxied:
            net_cp, net_po = "10.213.2", "10.213.3"
            self.client_dev, self.proxy_client_dev = self.prefix + "cp", self.prefix + "pc"
            self.proxy_origin_dev, self.origin_dev = self.prefix + "po", self.prefix + "op"
            self.client_ip, self.proxy_ip = f"{net_cp}.2", f"{net_cp}.1"
            self.proxy_origin_ip, self.origin_ip = f"{net_po}.2", f"{net_po}.1"
            self.client_subnet = f"{net_cp}.0/24"
            self.gateway = self.proxy_ip
        else:
            self.client_dev, self.origin_dev = self.prefix + "co", self.prefix + "oc"
            self.client_ip, self.origin_ip = "10.213.1.2", "10.213.1.1"
            self.client_subnet = "10.213.1.0/24"
            self.proxy_ip = self.proxy_origin_ip = None
            self.gateway = self.origin_ip
        self.proxy_user, self.proxy_password = PROXY_USER, PROXY_PASSWORD
        self.namespaces: list[str] = []
        self._etc_dirs: list[Path] = []
        self._made_netns_etc = False
        self._processes: list[subprocess.Popen] = []
        self._proxies: dict[str, subprocess.Popen] = {}
        self.nginx: subprocess.Popen | None = None
        self.shaped: str | None = None
        self.link_is_up = True
        self._closed = False

    # MARK: Setup and teardown

    def __enter__(self) -> "Lab":
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def start(self) -> "Lab":
        if os.geteuid() != 0:
            raise PermissionError("the network lab needs root (network namespaces, veth pairs, tc)")
        sweep_stale()
        atexit.register(self.close)
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def _build(self):
        self.www.mkdir(parents=True, exist_ok=True)
        for ns in (self.client, self.origin, self.proxy):
            if ns:
                _ip("netns", "add", ns)
                self.namespaces.append(ns)
                self._write_etc(ns)
                _ip("-n", ns, "link", "set", "lo", "up")
                self._sysctl(ns, "net.ipv4.ip_forward", "0")
        if self.proxied:
            self._veth(self.client, self.client_dev, self.client_ip, self.proxy, self.proxy_client_dev, self.proxy_ip)
            self._veth(self.proxy, self.proxy_origin_dev, self.proxy_origin_ip, self.origin, self.origin_dev,
                       self.origin_ip)
        else:
            self._veth(self.client, self.client_dev, self.client_ip, self.origin, self.origin_dev, self.origin_ip)
        self._add_default_route()
        if self.proxied:
            self.resolve(self.origin_name, self.origin_ip, ns=self.proxy)
        else:
            self.resolve(self.origin_name, self.origin_ip, ns=self.client)
        self._start_nginx()
        if self.proxied:
            self.start_proxy("tinyproxy")
            self.start_proxy("danted")

    def _write_etc(self, ns: str):
        if not NETNS_ETC.exists():
            NETNS_ETC.mkdir()
            self._made_netns_etc = True
        folder = NETNS_ETC / ns
        folder.mkdir()
        self._etc_dirs.append(folder)
        (folder / "hosts").write_text(HOSTS_HEADER)
        (folder / "resolv.conf").write_text(RESOLV_CONF)

    def add_laptop(self, ip: str = "10.213.4.2", origin_side: str = "10.213.4.1") -> str:
        """A second device beside C: a namespace on a link of its own to O, reaching O's lab
        address (origin_ip) through it. No default route: it reaches nothing else. -> its name."""
        ns = self.prefix + "l"
        _ip("netns", "add", ns)
        self.namespaces.append(ns)
        self._write_etc(ns)
        _ip("-n", ns, "link", "set", "lo", "up")
        self._veth(ns, self.prefix + "lo", ip, self.origin, self.prefix + "ol", origin_side)
        _ip("-n", ns, "route", "add", f"{self.origin_ip}/32", "via", origin_side)
        return ns

    def _sysctl(self, ns: str, key: str, value: str):
        self.run_in(ns, ["sysctl", "-qw", f"{key}={value}"])

    def _veth(self, ns_a, dev_a, ip_a, ns_b, dev_b, ip_b):
        _ip("link", "add", dev_a, "netns", ns_a, "type", "veth", "peer", "name", dev_b, "netns", ns_b)
        for ns, dev, address in ((ns_a, dev_a, ip_a), (ns_b, dev_b, ip_b)):
            # IPv4 only: no IPv6 link-local addresses, DAD or router solicitations on the lab's
            # links, so the rtnetlink events a process in C sees are the lab's own.
            self._sysctl(ns, f"net.ipv6.conf.{dev}.disable_ipv6", "1")
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")

    def _add_default_route(self):
        _ip("-n", self.client, "route", "replace", "default", "via", self.gateway, "dev", self.client_dev)

    def close(self):
        """Kills what runs in the lab, deletes its namespaces (and with them the veths, qdiscs and
        any iptables rules inside) and /etc/netns folders, and its work folder if it made it."""
        if self._closed:
            return
        self._closed = True
        for process in reversed(self._processes):
            self.stop_process(process, signal.SIGKILL)
        for ns in self.namespaces:
            _delete_namespace(ns)
        for folder in self._etc_dirs:
            shutil.rmtree(folder, ignore_errors=True)
        if self._made_netns_etc:
            try:
                NETNS_ETC.rmdir()
            except OSError:
                pass
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        try:
            atexit.unregister(self.close)
        except Exception:
            pass

    # MARK: Processes

    def _command(self, ns: str, argv) -> list[str]:
        return ["ip", "netns", "exec", ns, *map(str, argv)]

    @staticmethod
    def _clean_env(kwargs):
        env = kwargs.get("env")
        kwargs["env"] = {k: v for k, v in (os.environ if env is None else env).items() if k not in PROXY_ENV}

    def exec_in(self, ns: str, argv, **popen_kwargs) -> subprocess.Popen:
        """Starts argv inside namespace ns, in a session of its own (so its children can be
        killed with it); stdin is /dev/null unless given. The lab kills it at close."""
        popen_kwargs.setdefault("stdin", subprocess.DEVNULL)
        popen_kwargs.setdefault("start_new_session", True)
        self._clean_env(popen_kwargs)
        process = subprocess.Popen(self._command(ns, argv), **popen_kwargs)
        self._processes.append(process)
        return process

    def run_in(self, ns: str, argv, check: bool = True, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
        """Runs argv inside namespace ns and waits; text output captured unless told otherwise."""
        kwargs.setdefault("text", True)
        if "stdout" not in kwargs and "stderr" not in kwargs:
            kwargs.setdefault("capture_output", True)
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        self._clean_env(kwargs)
        result = subprocess.run(self._command(ns, argv), timeout=timeout, **kwargs)
        if check and result.returncode != 0:
            raise RuntimeError(f"in {ns}: {' '.join(map(str, argv))} exited {result.returncode}: "
                               f"{(result.stderr or '').strip() or (result.stdout or '').strip()}")
        return result

    @staticmethod
    def stop_process(process: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 5):
        """Signals the process's group (exec_in makes each one a session leader) and waits."""
        if process.poll() is None:
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(5)
        else:
            # The leader is gone; children it left in its group may not be.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _listening(self, ns: str, port: int) -> bool:
        out = self.run_in(ns, ["ss", "-Hltn", f"sport = :{port}"], check=False).stdout
        return bool(out.strip())

    def _wait_listening(self, ns: str, port: int, process: subprocess.Popen, what: str, log: Path | None = None):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if process.poll() is not None:
                detail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
                raise RuntimeError(f"{what} exited ({process.returncode}) at start: {detail}")
            if self._listening(ns, port):
                return
            time.sleep(0.02)
        raise TimeoutError(f"{what} did not listen on port {port} in {ns}")

    # MARK: Origin

    def add_file(self, name: str, size: int | None = None, data: bytes | None = None, seed: int = 0) -> Path:
        """A file in the origin's folder: `data`, or `size` random bytes (kept if already made)."""
        path = self.www / name
        if data is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            return path
        return make_file(path, size, seed)

    def url(self, path: str, host: str | None = None, port: int = 80) -> str:
        host = host or self.origin_name
        return f"http://{host}{'' if port == 80 else f':{port}'}/{path.lstrip('/')}"

    @property
    def access_log(self) -> Path:
        return self.workdir / "nginx" / "access.log"

    def _start_nginx(self):
        work = self.workdir / "nginx"
        (work / "temp").mkdir(parents=True, exist_ok=True)
        fields = {
            "msec": "$msec", "request_time": "$request_time", "remote_addr": '"$remote_addr"',
            "status": "$status", "bytes_sent": "$bytes_sent", "body_bytes_sent": "$body_bytes_sent",
            "request": '"$request"', "range": '"$http_range"', "if_range": '"$http_if_range"',
            "host": '"$http_host"', "user_agent": '"$http_user_agent"', "connection": "$connection",
            "connection_requests": "$connection_requests", "protocol": '"$server_protocol"', "port": "$server_port",
        }
        line = "{" + ",".join(f'"{k}":{v}' for k, v in fields.items()) + "}"
        listens = "\n        ".join(f"listen {port};" for port in self.ports)
        temp = work / "temp"
        config = f"""
user root;
worker_processes {self.nginx_workers};
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format lab escape=json '{line}';
    access_log {self.access_log} lab;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 60s;
    server {{
        {listens}
        server_name _;
        root {self.www};
        location / {{ }}
        location = /__lab/ping {{ access_log off; return 204; }}
        {self.server_extra}
    }}
    {self.http_extra}
}}
"""
        (work / "nginx.conf").write_text(config)
        self.nginx = self.exec_in(self.origin, ["nginx", "-p", work, "-c", work / "nginx.conf"],
                                  stdout=subprocess.DEVNULL, stderr=open(work / "stderr.log", "w"))
        self._wait_listening(self.origin, self.ports[0], self.nginx, "nginx", work / "stderr.log")

    def nginx_requests(self, path: str | None = None) -> list[dict]:
        """The access log's requests (optionally only those whose path is `path`), oldest first."""
        if not self.access_log.exists():
            return []
        entries = []
        for line in self.access_log.read_text(errors="replace").splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            entry["end"] = entry["msec"]
            entry["duration"] = entry["request_time"]
            entry["start"] = round(entry["msec"] - entry["request_time"], 3)
            method, _, rest = entry["request"].partition(" ")
            entry["method"], entry["path"] = method, rest.rsplit(" ", 1)[0]
            if path is None or entry["path"] == "/" + path.lstrip("/"):
                entries.append(entry)
        return entries

    def clear_nginx_log(self):
        if self.access_log.exists():
            with open(self.access_log, "r+") as f:
                f.truncate(0)

    def shape(self, rate: str = "20mbit", burst: str | None = None, latency: str = "200ms", qdisc: str = "tbf"):
        """Limits the origin's egress toward the client (or the proxy) to `rate` with tc tbf, or
        with qdisc="htb" an htb root with one class (rate = ceil) that all traffic falls into,
        as a router's shaper would be set up (`latency` is tbf's only). `burst` defaults to
        20 ms of the rate (at least 32 KiB): tc's own htb default is rate/HZ + MTU, under 2 KB
        with high-resolution timers, smaller than one GSO packet on a veth."""
        bits = rate_bits(rate)
        burst = burst or f"{max(32 << 10, bits // 8 // 50)}b"
        tc = ["tc", "qdisc", "replace", "dev", self.origin_dev, "root"]
        if qdisc == "tbf":
            self.run_in(self.origin, [*tc, "tbf", "rate", f"{bits}bit", "burst", burst, "latency", latency])
        elif qdisc == "htb":
            self.run_in(self.origin, [*tc, "handle", "1:", "htb", "default", "1"])
            # quantum only shares a parent between classes (there is one); set so the kernel does
            # not warn that rate / r2q is "big".
            self.run_in(self.origin, ["tc", "class", "replace", "dev", self.origin_dev, "parent", "1:", "classid",
                                      "1:1", "htb", "rate", f"{bits}bit", "ceil", f"{bits}bit", "burst", burst,
                                      "cburst", burst, "quantum", "200000"])
        else:
            raise ValueError(f"shape: qdisc must be tbf or htb, not {qdisc!r}")
        self.shaped = rate

    def unshape(self):
        self.run_in(self.origin, ["tc", "qdisc", "del", "dev", self.origin_dev, "root"], check=False)
        self.shaped = None

    # MARK: The link

    def link_down(self) -> float:
        """`ip link set <C's veth> down`, run in C. Returns the time (epoch) it was done."""
        self.run_in(self.client, ["ip", "link", "set", self.client_dev, "down"])
        self.link_is_up = False
        return time.time()

    def routes(self, ns: str | None = None) -> list[str]:
        return self.run_in(ns or self.client, ["ip", "-4", "route", "show"]).stdout.strip().splitlines()

    def link_up(self, wait: bool = True, timeout: float = 10) -> dict:
        """`ip link set <C's veth> up`, run in C; then puts back C's default route (the kernel
        drops it with the link, and unlike the subnet's own route it does not come back by
        itself), and with `wait` waits until C reaches the next hop. Returns {"at": epoch of the
        up command, "connected_route_back", "default_route_readded", "seconds": until reachable}."""
        at = time.time()
        self.run_in(self.client, ["ip", "link", "set", self.client_dev, "up"])
        self.link_is_up = True
        result = {"at": at}
        deadline = time.monotonic() + timeout
        subnet = self.client_subnet.split("/")[0]
        while True:
            routes = self.routes()
            result["connected_route_back"] = any(r.startswith(subnet) for r in routes)
            has_default = any(r.startswith("default") for r in routes)
            result["default_route_readded"] = not has_default
            if has_default:
                break
            added = self.run_in(self.client, ["ip", "route", "replace", "default", "via", self.gateway, "dev",
                                              self.client_dev], check=False)
            if added.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"could not put back the default route in {self.client}: {added.stderr.strip()}")
            time.sleep(0.01)
        if wait:
            self.wait_reachable(max(0.5, deadline - time.monotonic()))
        result["seconds"] = time.time() - at
        return result

    def reachable(self) -> bool:
        """One TCP connect from C to the next hop (O's nginx, or P's tinyproxy port): True if it
        was accepted or refused (either way the peer answered)."""
        target = (self.proxy_ip, TINYPROXY_PORT) if self.proxied else (self.origin_ip, self.ports[0])
        probe = self.run_in(self.client, ["timeout", "1", "bash", "-c", f"exec 3<>/dev/tcp/{target[0]}/{target[1]}"],
                            check=False)
        return probe.returncode == 0 or "refused" in probe.stderr

    def wait_reachable(self, timeout: float = 10) -> float:
        start = time.monotonic()
        while not self.reachable():
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"{self.client} did not reach its next hop within {timeout} s")
            time.sleep(0.02)
        return time.monotonic() - start

    # MARK: Names

    def hosts_file(self, ns: str | None = None) -> Path:
        return NETNS_ETC / (ns or self.client) / "hosts"

    def _edit_hosts(self, ns: str | None, name: str, ip: str | None):
        """Rewrites the hosts file in place: same inode (bind mounts of it follow the inode, a
        new file would not be seen by processes already started), truncated after the write."""
        with open(self.hosts_file(ns), "r+") as f:
            lines = [line for line in f.read().splitlines() if name not in line.split()[1:]]
            if ip:
                lines.append(f"{ip}\t{name}")
            f.seek(0)
            f.write("\n".join(lines) + "\n")
            f.truncate()

    def resolve(self, name: str, ip: str | None = None, ns: str | None = None):
        """`name` resolves to `ip` (the origin's by default) in ns (C by default) from now on."""
        self._edit_hosts(ns, name, ip or self.origin_ip)

    def unresolve(self, name: str, ns: str | None = None):
        self._edit_hosts(ns, name, None)

    # MARK: Proxies (the proxied topology)

    def proxy_url(self, name: str, user: str | None = None, password: str | None = None, remote_dns: bool = True) -> str:
        if name == "tinyproxy":
            user = self.proxy_user if user is None else user
            password = self.proxy_password if password is None else password
            auth = f"{user}:{password}@" if user else ""
            return f"http://{auth}{self.proxy_ip}:{TINYPROXY_PORT}"
        if name == "danted":
            return f"socks5{'h' if remote_dns else ''}://{self.proxy_ip}:{DANTED_PORT}"
        raise ValueError(f"no proxy named {name!r}")

    def _proxy_config(self, name: str) -> tuple[list[str], int, Path]:
        work = self.workdir / name
        work.mkdir(parents=True, exist_ok=True)
        log = work / f"{name}.log"
        if name == "tinyproxy":
            config = work / "tinyproxy.conf"
            # Runs as root (no User): it writes its log in the lab's folder. Allow: the C side only.
            # ConnectPort: the CONNECT method only to the origin's ports.
            config.write_text(f"""Port {TINYPROXY_PORT}
Listen {self.proxy_ip}
Timeout 600
LogFile "{log}"
LogLevel Info
PidFile "{work}/tinyproxy.pid"
MaxClients 100
Allow {self.client_subnet}
BasicAuth {self.proxy_user} {self.proxy_password}
ConnectPort 80
ConnectPort 443
ConnectPort 8080
DisableViaHeader Yes
""")
            return ["tinyproxy", "-d", "-c", config], TINYPROXY_PORT, log
        if name == "danted":
            config = work / "danted.conf"
            config.write_text(f"""logoutput: {log}
internal: {self.proxy_ip} port = {DANTED_PORT}
external: {self.proxy_origin_ip}
clientmethod: none
socksmethod: none
user.privileged: root
user.unprivileged: nobody
client pass {{
    from: {self.client_subnet} to: 0.0.0.0/0
    log: error
}}
socks pass {{
    from: {self.client_subnet} to: 0.0.0.0/0
    command: connect
    log: error connect disconnect
}}
""")
            return ["danted", "-f", config, "-p", work / "danted.pid"], DANTED_PORT, log
        raise ValueError(f"no proxy named {name!r}")

    def start_proxy(self, name: str):
        """Starts (or restarts) tinyproxy or danted in P on its usual address and port; returns
        once it listens."""
        if not self.proxied:
            raise RuntimeError("proxies run only in the proxied topology: Lab(proxied=True)")
        if name in self._proxies and self._proxies[name].poll() is None:
            return self._proxies[name]
        argv, port, log = self._proxy_config(name)
        stderr = open(self.workdir / name / "stderr.log", "a")
        process = self.exec_in(self.proxy, argv, stdout=stderr, stderr=stderr)
        self._proxies[name] = process
        self._wait_listening(self.proxy, port, process, name, self.workdir / name / "stderr.log")
        return process

    def stop_proxy(self, name: str, sig=signal.SIGKILL):
        """Kills tinyproxy or danted (all its processes: it has a group of its own); its clients'
        connections break. Returns once the port is free."""
        process = self._proxies.get(name)
        if process is None:
            raise ValueError(f"no proxy named {name!r} was started")
        self.stop_process(process, sig)
        port = TINYPROXY_PORT if name == "tinyproxy" else DANTED_PORT
        deadline = time.monotonic() + 5
        while self._listening(self.proxy, port) and time.monotonic() < deadline:
            time.sleep(0.02)

    def proxy_log(self, name: str) -> str:
        path = self.workdir / name / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # MARK: Accounting

    cpu_seconds = staticmethod(cpu_seconds)
