"""scripts/package-deb: the package is lintian clean, its unit passes systemd-analyze verify, and
on this machine (root) apt installs it (the `ferry` system user, /var/lib/ferry), the service's
daemon runs as that user, `apt remove` keeps the state and the settings, `apt purge` removes them."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEBUG_BINARY = REPO / ".build/debug/ferry"
PACKAGED = [
    "./usr/bin/ferry",
    "./usr/share/man/man1/ferry.1.gz",
    "./usr/share/bash-completion/completions/ferry",
    "./usr/share/zsh/vendor-completions/_ferry",
    "./usr/share/fish/vendor_completions.d/ferry.fish",
    "./lib/systemd/system/ferry.service",
    "./etc/default/ferry",
    "./usr/share/doc/ferry/copyright",
    "./usr/share/doc/ferry/changelog.gz",
]


def run(*command, check=True, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, command))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    if not shutil.which("dpkg-shlibdeps"):
        pytest.skip("dpkg-dev is missing (dpkg-shlibdeps)")
    if not DEBUG_BINARY.exists():
        run("swift", "build", "--product", "ferry", cwd=REPO)
    output = tmp_path_factory.mktemp("deb")
    result = run(str(REPO / "scripts/package-deb"), "--binary", str(DEBUG_BINARY), "--output", str(output))
    path = Path(result.stdout.strip().splitlines()[-1])
    assert path.exists() and path.name.startswith("ferry_") and path.name.endswith(".deb"), result.stdout
    return path


def test_the_package_holds_the_program_its_manual_and_its_service(package):
    listing = run("dpkg-deb", "--contents", str(package)).stdout
    files = {line.split()[-1] for line in listing.splitlines()}
    for path in PACKAGED:
        assert path in files, f"{path} is not in the package:\n{listing}"
    info = run("dpkg-deb", "--info", str(package)).stdout
    assert "Package: ferry" in info and "Architecture: amd64" in info
    assert "libsqlite3-0" in info, "Depends comes from the binary's libraries"
    conffiles = run("sh", "-c", f"dpkg-deb --ctrl-tarfile '{package}' | tar -xOf - ./conffiles").stdout
    assert conffiles.strip() == "/etc/default/ferry"


def test_lintian_finds_nothing(package):
    if not shutil.which("lintian"):
        pytest.skip("lintian is missing (apt-get install lintian)")
    # A debug build finds the Swift runtime through a RUNPATH to the toolchain; the release
    # build scripts/package-deb makes links it in and has none (FERRY_RELEASE_DEB: that one,
    # checked with every tag).
    result = run("lintian", "--fail-on", "error,warning", "--suppress-tags", "custom-library-search-path", str(package), check=False)
    findings = [line for line in result.stdout.splitlines() if line[:2] in ("E:", "W:")]
    assert result.returncode == 0 and not findings, result.stdout + result.stderr


def test_a_release_package_is_lintian_clean_with_every_tag():
    release = os.environ.get("FERRY_RELEASE_DEB")
    if not release:
        pytest.skip("FERRY_RELEASE_DEB names no release package (scripts/package-deb builds one in ~10 minutes)")
    result = run("lintian", "--fail-on", "error,warning", release, check=False)
    findings = [line for line in result.stdout.splitlines() if line[:2] in ("E:", "W:")]
    assert result.returncode == 0 and not findings, result.stdout + result.stderr


def test_apt_installs_removes_and_purges_it(package, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("installing a package needs root")
    if run("dpkg-query", "-W", "-f=${Status}", "ferry", check=False).stdout.startswith("install ok"):
        pytest.skip("a ferry package is installed on this machine: not touched")
    if Path("/var/lib/ferry").exists() or run("getent", "passwd", "ferry", check=False).returncode == 0:
        pytest.skip("/var/lib/ferry or a ferry user exists on this machine: not touched")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        # As the README says it: apt, with the file's path from its folder.
        run("apt-get", "install", "-y", "-q", f"./{package.name}", env=env, cwd=package.parent)
        assert run("dpkg-query", "-W", "-f=${Status}", "ferry").stdout == "install ok installed"
        user = run("getent", "passwd", "ferry").stdout.split(":")
        assert user[5] == "/var/lib/ferry" and user[6].strip() in ("/usr/sbin/nologin", "/bin/false"), user
        state = Path("/var/lib/ferry").stat()
        assert (state.st_mode & 0o777) == 0o750 and run("stat", "-c", "%U", "/var/lib/ferry").stdout.strip() == "ferry"
        assert run("/usr/bin/ferry", "--version").stdout.strip()
        run("systemd-analyze", "verify", "/lib/systemd/system/ferry.service")

        # The daemon as the unit runs it: the ferry user, FERRY_HOME=/var/lib/ferry.
        as_ferry = ["runuser", "-u", "ferry", "--", "env", "FERRY_HOME=/var/lib/ferry", "FERRY_PORT=0", "/usr/bin/ferry"]
        try:
            run(*as_ferry, "serve", "--detach")
            run(*as_ferry, "user", "add", "alice", "--admin", "--password-stdin", input="alice's password\n")
            assert "alice" in run(*as_ferry, "user", "ls").stdout
        finally:
            run(*as_ferry, "stop", check=False)
        assert Path("/var/lib/ferry/state/journal.sqlite").exists()

        run("apt-get", "remove", "-y", "-q", "ferry", env=env)
        assert not Path("/usr/bin/ferry").exists()
        assert Path("/var/lib/ferry/state/journal.sqlite").exists(), "remove keeps the state"
        assert Path("/etc/default/ferry").exists(), "remove keeps the settings"
        run("apt-get", "purge", "-y", "-q", "ferry", env=env)
        assert not Path("/var/lib/ferry").exists(), "purge removes the state"
        assert not Path("/etc/default/ferry").exists(), "purge removes the settings"
        assert run("dpkg-query", "-W", "-f=${Status}", "ferry", check=False).stdout in ("", "deinstall ok config-files", "unknown ok not-installed")
    finally:
        run("apt-get", "purge", "-y", "-q", "ferry", check=False, env=env)
        run("userdel", "ferry", check=False)
