"""Fixtures for the web app's browser tests: loopback file and catalog servers, the real `ferry`
daemon in a temporary FERRY_HOME, and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import datetime
import os
import subprocess
import tempfile
import time
import urllib.parse
import zlib
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from daemon import Daemon, ferry_binary
from servers import CatalogServer, FileServer, png, rss, wav

REPO = Path(__file__).resolve().parents[2]
# Where screenshots go: a temporary folder, so a test run never rewrites tracked files;
# scripts/screenshots sets FERRY_SCREENSHOTS=docs/screenshots to refresh the README's.
SCREENSHOTS = Path(os.environ.get("FERRY_SCREENSHOTS") or tempfile.mkdtemp(prefix="ferry-screenshots-"))
CHROMIUM = os.environ.get("FERRY_CHROMIUM", "/usr/bin/chromium")
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

# A preview downloads at this speed: 2.1 MB in about 7 seconds, so progress is visible.
PREVIEW_RATE = 300_000
EPISODE_RATE = 250_000

XSS_TITLE = CatalogServer.XSS_TITLE


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


# MARK: Loopback world


@pytest.fixture(scope="session")
def media():
    return {"preview": wav(24), "episode": wav(16, rate=22050, seed=3)}


@pytest.fixture(scope="session")
def files(media):
    server = FileServer()
    for index in range(10):
        server.add(f"/art/{index}.png", png(index), "image/png")
    server.add("/files/notes.txt", b"Ferry downloads anything.\n" * 4000, "text/plain")
    server.add("/files/mix.wav", media["episode"], "audio/wav", rate=EPISODE_RATE)
    now = datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.timezone.utc)
    radio_items = []
    titles = ["Night Drive: synths for the long road", "Interview: the sound of ferries", "Live from the harbour", "Pilot"]
    for n, title in enumerate(titles, start=1):
        path = f"/episodes/radio-{n}.wav"
        server.add(path, media["episode"], "audio/wav", rate=EPISODE_RATE)
        radio_items.append(
            {
                "guid": f"radio-{n}",
                "title": title,
                "date": now - datetime.timedelta(days=7 * (n - 1)),
                "url": server.url(path),
                "length": len(media["episode"]),
                "duration": f"{30 + n * 7}:{10 + n:02d}",
                "description": f"<p>Episode {n} of <b>Ferry Test Radio</b>. With <a href=\"https://example.com/{n}\">links</a>.</p><ul><li>One</li><li>Two</li></ul>",
            }
        )
    server.add(
        "/feeds/radio.xml",
        rss("Ferry Test Radio", radio_items, author="The Ferry Crew", image=server.url("/art/1.png"), description="<p>Music, stories and the sea. A weekly show made for <b>testing</b> Ferry.</p>"),
        "application/rss+xml",
    )
    server.add("/episodes/xss-1.wav", media["episode"], "audio/wav", rate=EPISODE_RATE)
    server.add(
        "/feeds/xss.xml",
        # The title decodes to markup: escaped twice in the XML, as feeds that mean "<" write it.
        rss(
            XSS_TITLE.replace("<", "&lt;").replace(">", "&gt;"),
            [
                {
                    "guid": "xss-1",
                    "title": "<svg onload=alert(4)>Hostile episode",
                    "date": now,
                    "url": server.url("/episodes/xss-1.wav"),
                    "length": len(media["episode"]),
                    "duration": "12:34",
                    "description": "<p>Show notes</p><script>alert(5)</script><img src=x onerror=alert(6)><a href=\"javascript:alert(7)\">click</a><iframe src=\"javascript:alert(8)\"></iframe>",
                }
            ],
            author="<script>alert(2)</script>Mallory",
            image=server.url("/art/2.png"),
            description="<p>About</p><script>alert(3)</script><img src=x onerror=alert(3)>",
        ),
        "application/rss+xml",
    )
    server.add("/feeds/sistak.xml", rss("s i s t a k", radio_items[:2], author="Julie Kummer", image=server.url("/art/3.png")), "application/rss+xml")
    server.add("/feeds/broken.xml", b"<html><body>This is not a feed</body></html>", "text/html")
    # Bytes that are not text at all (a feed URL that serves a binary by mistake).
    server.add("/feeds/garbage.xml", zlib.compress(b"not a feed " * 300), "application/rss+xml")
    yield server
    server.close()


@pytest.fixture(scope="session")
def catalog(files, media):
    server = CatalogServer(files)
    # One preview URL per song (the same bytes), so a test can slow down just its own.
    for song in server.songs:
        path = f"/previews/{song['trackId']}.wav"
        files.add(path, media["preview"], "audio/wav", rate=PREVIEW_RATE)
        song["previewUrl"] = files.url(path)
    yield server
    server.close()


# MARK: The daemon


@pytest.fixture
def start_daemon(tmp_path, catalog, request):
    """start_daemon(port=0, home=None, catalog_url=None, args=()) → a running Daemon (its catalog:
    the loopback one unless told otherwise; args: more `ferry serve` flags); every one is
    stopped afterwards."""
    started: list[Daemon] = []
    if not ferry_binary().exists():
        pytest.fail(f"no ferry binary at {ferry_binary()}: run the tests with tests/web/run, which builds it (or set FERRY_BIN)")

    def start(port: int = 0, home: Path | None = None, catalog_url: str | None = None, args: tuple[str, ...] = ()) -> Daemon:
        daemon = Daemon(home or tmp_path / f"home{len(started)}", catalog_url or catalog.base, port)
        started.append(daemon)
        return daemon.start(*args)

    yield start
    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    for daemon in started:
        if failed:
            print(f"\n--- daemon log ({daemon.home}) ---\n{daemon.log_tail(40)}")
        daemon.stop()


@pytest.fixture
def daemon(start_daemon) -> Daemon:
    return start_daemon()


@pytest.fixture
def small_disk_daemon(tmp_path, start_daemon):
    """small_disk_daemon(size="2m") → a running Daemon whose library is a tmpfs of that size
    (its journal and token stay on the real disk): a disk that fills up on demand. Root only:
    skips when not root or when the mount fails; stops the daemon and unmounts afterwards."""
    mounts: list[Path] = []
    daemons: list[Daemon] = []

    def start(size: str = "2m") -> Daemon:
        if os.geteuid() != 0:
            pytest.skip("a full disk needs a small tmpfs, and mounting one needs root")
        home = tmp_path / f"small-disk-home{len(mounts)}"
        library = home / "library"
        library.mkdir(parents=True)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(library)], capture_output=True, text=True)
        if mounted.returncode != 0:
            pytest.skip(f"could not mount a {size} tmpfs at {library}: {mounted.stderr.strip() or mounted.returncode}")
        mounts.append(library)
        daemon = start_daemon(home=home)
        daemons.append(daemon)
        return daemon

    yield start
    for daemon in daemons:
        daemon.stop()  # before unmounting: it holds files open in the library
    for library in mounts:
        unmount(library)


def unmount(path: Path):
    for _ in range(20):
        if subprocess.run(["umount", str(path)], capture_output=True).returncode == 0:
            return
        time.sleep(0.25)
    # Still busy (a process that outlived the test): detach it, so nothing stays mounted.
    subprocess.run(["umount", "--lazy", str(path)], capture_output=True)


# MARK: The browser


@pytest.fixture(scope="session")
def playwright():
    """One Playwright for the whole run (its sync API allows one at a time): the shared browser
    and the extension's own Chromium profiles (test_extension.py) start from it."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium (tests/web/run does it as root)")
    with sync_playwright() as instance:
        yield instance


@pytest.fixture(scope="session")
def browser(playwright) -> Browser:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless=new", "--no-sandbox"])
    yield browser
    browser.close()


class AppPages:
    """Opens pages of the web app and records what must never happen in them: uncaught
    exceptions, Content-Security-Policy violations, missing translations, dialogs (alert() from
    injected script), and requests to anything but loopback (fonts, CDNs: the app must work
    offline)."""

    def __init__(self, browser: Browser):
        self.browser = browser
        self.contexts = []
        self.problems: list[str] = []
        self.dialogs: list[str] = []

    def new(self, daemon: Daemon, *, viewport=DESKTOP, scheme: str = "light", login: bool = True, path: str = "#/search", locale: str = "en-US",
            user: str | None = None) -> Page:
        """A page of the web app, signed in by a one-time link: this machine's own user, or `user`'s account."""
        context = self.browser.new_context(viewport=viewport, color_scheme=scheme, device_scale_factor=1, locale=locale, timezone_id="UTC")
        self.contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: self.problems.append(f"uncaught exception: {error}"))
        page.on("console", lambda message: self._console(message))
        page.on("dialog", lambda dialog: self._dialog(dialog))
        page.on("request", lambda request: self._request(request.url))
        if login:
            page.goto(daemon.login_url(user))
            page.wait_for_selector("#shell:not([hidden])")
        if path is not None:
            page.goto(f"{daemon.url}/{path}")
            page.wait_for_selector("#shell:not([hidden])" if login else "body.ready, #login:not([hidden])")
        return page

    def _console(self, message):
        text = message.text
        if message.type == "error" and ("Content Security Policy" in text or "Refused to" in text):
            self.problems.append(f"CSP violation: {text}")
        # i18n.js's warning: a text shown in English (or as its key) for want of a translation.
        if message.type == "warning" and text.startswith("i18n:"):
            self.problems.append(f"translation missing: {text}")

    def _request(self, url: str):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("data", "blob") and parts.hostname not in ("127.0.0.1", "::1"):
            self.problems.append(f"request off loopback: {url}")

    def _dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def close(self):
        for context in self.contexts:
            context.close()


@pytest.fixture
def pages(browser):
    app = AppPages(browser)
    yield app
    app.close()
    assert not app.dialogs, f"a dialog opened (injected script ran?): {app.dialogs}"
    assert not app.problems, "\n".join(app.problems)


def screenshot(page: Page, name: str):
    """Saves <name>.png in SCREENSHOTS (docs/screenshots/ through scripts/screenshots)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
