"""NetworkManager's own word on metering, as iOS takes the system's: a real NetworkManager (Debian's)
runs in the client namespace on a system bus of the test's own, with a udevd of its own there (it
manages only devices udev has announced). It manages one interface of its own (a veth pair inside the namespace) whose connection says
`connection.metered yes` and carries a default route behind the lab's (a higher metric: traffic
still goes through the lab's link). The daemon beside it asks NetworkManager's `Metered` over that
bus: a session that said `--no-metered` waits while the connection is metered and goes once the
user marks it unmetered (`nmcli connection modify` and `nmcli device reapply`; the daemon sees it
at its next re-check, every 15 s, or sooner if the reapply changes an address or route).

NetworkManager is told to leave DNS, the hostname and every other device alone: it must not touch
the machine's `/etc/resolv.conf` or the lab's link.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ferry import Ferry
from lab import Lab, make_file, sha256

UDEVD = next((p for p in ("/lib/systemd/systemd-udevd", "/usr/lib/systemd/systemd-udevd") if os.path.exists(p)), None)
NM = shutil.which("NetworkManager") or shutil.which("NetworkManager", path="/usr/sbin:/sbin")
DEVICE = "nmlink"
CONNECTION = "ferry-lab-metered"


def missing() -> str | None:
    for name, path in (("NetworkManager (Debian: network-manager)", NM), ("systemd-udevd (Debian: udev)", UDEVD),
                       ("dbus-daemon", shutil.which("dbus-daemon")), ("busctl (Debian: systemd)", shutil.which("busctl"))):
        if not path:
            return f"{name} is not installed"
    if subprocess.run(["pgrep", "-x", "systemd-udevd"], capture_output=True).returncode == 0:
        return "a udevd already runs on this machine; the lab needs its own, in the namespace, for NetworkManager's devices"
    if subprocess.run(["pgrep", "-x", "NetworkManager"], capture_output=True).returncode == 0:
        return "NetworkManager already runs on this machine; a second one would fight it over /run/NetworkManager"
    return None


class NetworkManagerLab:
    """dbus-daemon, udevd and NetworkManager for one namespace; `close()` stops them all."""

    def __init__(self, lab: Lab, folder: Path):
        self.lab, self.folder = lab, folder
        self.bus = folder / "system_bus"
        self.address = f"unix:path={self.bus}"
        self.processes: list[subprocess.Popen] = []
        self.made_run_udev = not os.path.exists("/run/udev")

    def start(self, metered: bool) -> "NetworkManagerLab":
        f = self.folder
        f.mkdir(parents=True, exist_ok=True)
        (f / "bus.conf").write_text(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={self.bus}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="root"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/>
  </policy>
</busconfig>
""")
        self._spawn(["dbus-daemon", "--nofork", f"--config-file={f / 'bus.conf'}"], "dbus")
        self._until(lambda: self.bus.exists(), 10, "the test's system bus")
        self._spawn(["ip", "netns", "exec", self.lab.client, UDEVD], "udevd")
        self._until(lambda: os.path.exists("/run/udev/control"), 10, "udevd in the client namespace")
        # A veth pair within the namespace (this kernel has no dummy devices): its far end up, for a carrier.
        self.lab.run_in(self.lab.client, ["ip", "link", "add", DEVICE, "type", "veth", "peer", "name", DEVICE + "p"])
        self.lab.run_in(self.lab.client, ["ip", "link", "set", DEVICE + "p", "up"])
        # NetworkManager manages a device once udev has announced it: announce the namespace's.
        self.lab.run_in(self.lab.client, ["udevadm", "trigger", "--action=add", "--subsystem-match=net"])
        self.lab.run_in(self.lab.client, ["udevadm", "settle", "-t", "10"])
        connections = f / "connections"
        connections.mkdir(exist_ok=True)
        profile = connections / f"{CONNECTION}.nmconnection"
        profile.write_text(f"""[connection]
id={CONNECTION}
type=ethernet
interface-name={DEVICE}
metered={1 if metered else 2}
autoconnect=true

[ethernet]

[ipv4]
method=manual
address1=10.231.9.2/24,10.231.9.1
route-metric=5000

[ipv6]
method=disabled
""")
        profile.chmod(0o600)
        (f / "conf.d").mkdir(exist_ok=True)
        (f / "NetworkManager.conf").write_text(f"""[main]
plugins=keyfile
no-auto-default=*
dns=none
rc-manager=unmanaged
hostname-mode=none
[keyfile]
path={connections}
unmanaged-devices=except:interface-name:{DEVICE}
[device-ours]
match-device=interface-name:{DEVICE}
managed=1
[connectivity]
enabled=false
""")
        self._spawn(["ip", "netns", "exec", self.lab.client, "env", f"DBUS_SYSTEM_BUS_ADDRESS={self.address}", NM, "--no-daemon", "--debug", "--log-level=INFO",
                     f"--config={f / 'NetworkManager.conf'}", f"--config-dir={f / 'conf.d'}",
                     f"--state-file={f / 'NetworkManager.state'}", f"--pid-file={f / 'nm.pid'}"], "networkmanager")
        return self

    def metered(self) -> str:
        """busctl's answer for NetworkManager's Metered ("u 1": yes, "u 2": no), or its error."""
        answer = subprocess.run(["busctl", "--system", "get-property", "org.freedesktop.NetworkManager",
                                 "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", "Metered"],
                                capture_output=True, text=True, env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": self.address})
        return answer.stdout.strip() or answer.stderr.strip()

    def nmcli(self, *args: str) -> str:
        return self.lab.run_in(self.lab.client, ["env", f"DBUS_SYSTEM_BUS_ADDRESS={self.address}", "nmcli", *args]).stdout

    def close(self):
        for process in reversed(self.processes):
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        self.lab.run_in(self.lab.client, ["ip", "link", "del", DEVICE], check=False)
        if self.made_run_udev:
            shutil.rmtree("/run/udev", ignore_errors=True)

    def _spawn(self, argv: list[str], name: str):
        log = open(self.folder / f"{name}.log", "w")
        self.processes.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))

    @staticmethod
    def _until(condition, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {what} within {timeout} s")
            time.sleep(0.1)


def test_networkmanagers_metered_connection_holds_a_session_until_the_user_unmeters_it(www, tmp_path):
    reason = missing()
    if reason:
        pytest.skip(reason)
    big = make_file(www / "nm-big.bin", 1 << 20, seed=41)
    small = make_file(www / "nm-small.bin", 256 << 10, seed=42)
    lab = Lab(proxied=False, www=www).start()
    nm = NetworkManagerLab(lab, tmp_path / "nm")
    ferry = None
    try:
        resolv = Path("/etc/resolv.conf").read_bytes() if Path("/etc/resolv.conf").exists() else None
        nm.start(metered=True)
        try:
            NetworkManagerLab._until(lambda: nm.metered() == "u 1", 30, "NetworkManager saying the connection is metered")
        except TimeoutError as error:
            raise TimeoutError(f"{error}: {nm.metered()}; devices: {nm.nmcli('-t', 'device')}; connections: {nm.nmcli('-t', 'connection')}") from None
        assert f"{DEVICE}:ethernet:connected" in nm.nmcli("-t", "device"), nm.nmcli("-t", "device")
        assert lab.client_dev not in nm.nmcli("-t", "-f", "DEVICE,STATE", "device").replace(f"{lab.client_dev}:unmanaged", ""), \
            "NetworkManager left the lab's link alone"
        routes = lab.routes(lab.client)
        assert routes[0].startswith("default") and lab.client_dev in routes[0], routes

        ferry = Ferry(lab, tmp_path / "ferry", env={"DBUS_SYSTEM_BUS_ADDRESS": nm.address})
        ferry.cli("session", "set", "careful", "--no-metered")
        held = ferry.get(lab.url("nm-big.bin"), "--session", "careful")
        free = ferry.get(lab.url("nm-small.bin"))
        ferry.wait_for(free, lambda t: t["state"] == "completed", 30, "the unconstrained download")
        time.sleep(1)
        assert ferry.transfer(held)["state"] == "queued", "held while NetworkManager says metered"
        assert not lab.nginx_requests("/nm-big.bin"), "nothing of the careful session went out"

        nm.nmcli("connection", "modify", CONNECTION, "connection.metered", "no")
        nm.nmcli("device", "reapply", DEVICE)
        NetworkManagerLab._until(lambda: nm.metered() == "u 2", 30, "NetworkManager saying the connection is not metered")
        done = ferry.wait_for(held, lambda t: t["state"] == "completed", 45, "the held download once unmetered")
        assert sha256(done["path"]) == sha256(big)
        assert sha256(ferry.transfer(free)["path"]) == sha256(small)
        if resolv is not None:
            assert Path("/etc/resolv.conf").read_bytes() == resolv, "NetworkManager left the machine's resolv.conf alone"
    finally:
        if ferry:
            ferry.stop()
        nm.close()
        lab.close()
