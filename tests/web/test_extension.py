"""The browser extension (extensions/chromium/), loaded unpacked into Debian's headless Chromium
and paired with the real daemon: "Download with Ferry" and taken-over downloads reach Ferry with
the page's cookie (the origin refuses requests without it), the browser downloads by itself when
Ferry is down or the extension's token was revoked, and the token opens nothing but transfers.

Chromium runs with its own download behaviour (Playwright's own download handling is switched
off over CDP), so the extension's chrome.downloads listeners see every download and files land
in the profile's download folder, as for a user."""

from __future__ import annotations

import hashlib
import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from conftest import CHROMIUM
from helpers import wait_until
from servers import CookieOrigin

EXTENSION = Path(__file__).resolve().parents[2] / "extensions" / "chromium"
ZIP = os.urandom(300_000)


@pytest.fixture
def origin():
    server = CookieOrigin()
    server.add("report.zip", ZIP)
    server.add("photo.zip", ZIP[:1000])
    server.add("fallback.zip", ZIP[:5000])
    server.add("kept.zip", ZIP[:7000])
    yield server
    server.close()


class ExtensionBrowser:
    """A Chromium profile with the unpacked extension; `sw` is its service worker."""

    def __init__(self, context, downloads: Path):
        self.context = context
        self.downloads = downloads
        self.sw = context.service_workers[0] if context.service_workers else context.wait_for_event("serviceworker", timeout=15_000)
        self.id = self.sw.url.split("/")[2]
        self.page = context.pages[0] if context.pages else context.new_page()
        # Chromium's own downloads (into the profile's folder), not Playwright's: the extension's
        # chrome.downloads.onDeterminingFilename only runs for those.
        context.new_cdp_session(self.page).send("Browser.setDownloadBehavior", {"behavior": "default"})

    def url(self, page: str) -> str:
        return f"chrome-extension://{self.id}/{page}"

    def storage(self) -> dict:
        return self.sw.evaluate("chrome.storage.local.get(null)")

    def set_take_over(self, **rules):
        self.sw.evaluate("rules => chrome.storage.local.set({takeOver: {enabled: true, minSizeMB: 0, types: '', bypassSites: '', modifier: 'alt', ...rules}})", rules)

    def pair(self, daemon) -> str:
        """Pairs through the options page, as a user does, with a code from `ferry extension pair --json`."""
        code = json.loads(daemon.run("extension", "pair", "--json"))
        options = self.context.new_page()
        options.goto(self.url("options.html"))
        options.fill("#daemon-url", code["daemonURL"])
        options.fill("#code", code["code"])
        options.get_by_role("button", name="Pair").click()
        expect(options.locator("#pair-result")).to_have_text("Paired: Ferry accepts this extension.")
        expect(options.locator("#pairing-state")).to_contain_text(f"Paired with {daemon.url}")
        options.close()
        return code["code"]

    def browser_files(self) -> list[str]:
        return sorted(p.name for p in self.downloads.iterdir() if not p.name.endswith(".crdownload"))

    def browser_download_items(self) -> list[dict]:
        return self.sw.evaluate("chrome.downloads.search({})")


@pytest.fixture
def extension(tmp_path, playwright):
    profile = tmp_path / "profile"
    downloads = tmp_path / "browser-downloads"
    (profile / "Default").mkdir(parents=True)
    downloads.mkdir()
    (profile / "Default" / "Preferences").write_text(json.dumps({"download": {"default_directory": str(downloads), "prompt_for_download": False, "directory_upgrade": True}}))
    context = playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        headless=False,  # --headless=new below: extensions need the new headless mode
        args=[
            "--headless=new",
            "--no-sandbox",
            f"--disable-extensions-except={EXTENSION}",
            f"--load-extension={EXTENSION}",
            # Chromium 137+ ignores --load-extension unless this is off.
            "--disable-features=DisableLoadExtensionCommandLineSwitch",
        ],
    )
    try:
        yield ExtensionBrowser(context, downloads)
    finally:
        context.close()


def ferry_requests(origin: CookieOrigin, name: str) -> list[dict]:
    """The requests for a file that Ferry made (a browser's carry Sec-Fetch-Mode; the test's own
    probes are urllib's)."""
    return [r for r in origin.requests_for(name) if not r["browser"] and not (r["user_agent"] or "").startswith("Python-urllib")]


def transfer_for(daemon, url: str) -> dict | None:
    return next((t for t in daemon.transfers() if t["url"] == url), None)


def completed(daemon, url: str) -> dict:
    wait_until(lambda: (transfer_for(daemon, url) or {}).get("state") in ("completed", "failed"), timeout=30, message=f"Ferry finishing {url}")
    transfer = transfer_for(daemon, url)
    assert transfer["state"] == "completed", transfer
    return transfer


def test_pairing_takes_a_one_time_code_and_gives_a_token_that_opens_only_transfers(daemon, extension):
    code = extension.pair(daemon)
    stored = extension.storage()
    assert len(stored["token"]) == 64 and stored["needsPairing"] is False
    # Chromium sent the extension's origin, and the daemon bound the token to it.
    status = json.loads(daemon.run("extension", "status", "--json"))
    assert status["paired"] and status["origin"] == f"chrome-extension://{extension.id}"
    assert (daemon.state / "extension.json").stat().st_mode & 0o777 == 0o600
    assert stored["token"] not in (daemon.state / "extension.json").read_text()

    # The code worked once; a wrong one is refused too, and the options page says so.
    options = extension.context.new_page()
    options.goto(extension.url("options.html"))
    for wrong in (code, "0123456789abcdef0123456789abcdef"):
        options.fill("#code", wrong)
        options.get_by_role("button", name="Pair").click()
        expect(options.locator("#pair-result")).to_contain_text("unknown, used or expired")
    # Only loopback addresses: the token goes nowhere else.
    options.fill("#daemon-url", "http://ferry.example:7447")
    options.fill("#code", "whatever")
    options.get_by_role("button", name="Pair").click()
    expect(options.locator("#pair-result")).to_contain_text("listens on this machine only")
    assert extension.storage()["token"] == stored["token"], "a failed pairing keeps the working token"

    # From the extension's own service worker (its origin, its token): transfers and status
    # open, every other API refused; no CORS stands in the way (host permissions).
    check = """async ([base, token]) => {
        const statuses = {};
        for (const [method, path] of [["GET", "/v1/status"], ["GET", "/v1/transfers"], ["GET", "/v1/config"], ["PATCH", "/v1/config"],
                                      ["GET", "/v1/podcasts"], ["POST", "/v1/shutdown"], ["GET", "/v1/extension"], ["POST", "/v1/login-links"]]) {
            const response = await fetch(base + path, {method, headers: {Authorization: `Bearer ${token}`, "Content-Type": "application/json"},
                                                       body: method === "PATCH" ? JSON.stringify({set: {onComplete: "touch /tmp/x"}}) : undefined});
            statuses[`${method} ${path}`] = response.status;
        }
        return statuses;
    }"""
    statuses = extension.sw.evaluate(check, [daemon.url, stored["token"]])
    assert statuses == {
        "GET /v1/status": 200, "GET /v1/transfers": 200, "GET /v1/config": 403, "PATCH /v1/config": 403,
        "GET /v1/podcasts": 403, "POST /v1/shutdown": 403, "GET /v1/extension": 403, "POST /v1/login-links": 403,
    }, statuses
    # The daemon's own token from the extension's origin: refused. Chromium sends the Origin
    # (chrome-extension://ID) on POST, PUT, PATCH and DELETE from an extension, not on GET, so
    # it is the changes the daemon can tell apart (a GET looks like any other client's).
    own = extension.sw.evaluate(
        """async ([base, token]) => (await fetch(base + '/v1/transfers', {method: 'POST', headers: {Authorization: `Bearer ${token}`, 'Content-Type': 'application/json'},
                                                                          body: JSON.stringify({urls: ['http://127.0.0.1:9/x.zip']})})).status""",
        [daemon.url, daemon.token()],
    )
    assert own == 403
    assert daemon.transfers() == []
    assert daemon.api("GET", "/v1/status")["version"], "the daemon is still up"


def test_download_with_ferry_from_the_context_menu_sends_the_pages_cookie(daemon, extension, origin):
    """A native context menu cannot be clicked in headless Chromium: the test calls the function
    the menu's chrome.contextMenus.onClicked listener calls (`ferry.onMenuClicked`), with the
    `info` Chromium would pass for a right-click on the page's link and on an image."""
    extension.pair(daemon)
    page = extension.page
    page.goto(origin.base + "/page")
    url = origin.base + "/files/report.zip"
    # The origin refuses Ferry without the page's cookie.
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url, timeout=5)
    assert refused.value.code == 403

    result = extension.sw.evaluate(
        "([url, page]) => ferry.onMenuClicked({menuItemId: 'ferry-link', linkUrl: url, pageUrl: page}, null)", [url, origin.base + "/page"]
    )
    assert result["outcome"] == "ferry", result
    transfer = completed(daemon, url)
    assert transfer["session"] == "browser"
    assert hashlib.sha256(Path(transfer["path"]).read_bytes()).hexdigest() == hashlib.sha256(ZIP).hexdigest()
    sent = ferry_requests(origin, "report.zip")
    assert sent and all(f"sid={origin.secret}" in r["cookie"] for r in sent), sent
    user_agent = page.evaluate("navigator.userAgent")
    assert sent[0]["user_agent"] == user_agent
    assert sent[0]["referer"] == origin.base + "/page"

    # An image's menu item uses its source URL.
    photo = origin.base + "/files/photo.zip"
    result = extension.sw.evaluate("([url, page]) => ferry.onMenuClicked({menuItemId: 'ferry-image', srcUrl: url, pageUrl: page}, null)", [photo, origin.base + "/page"])
    assert result["outcome"] == "ferry", result
    completed(daemon, photo)

    # The cookie is a secret in Ferry: redacted in the API's listing, `ferry ls --json` and the log.
    listed = transfer_for(daemon, url)
    assert listed["options"]["headers"]["Cookie"] == "<redacted>"
    assert listed["options"]["headers"]["User-Agent"] == user_agent
    assert origin.secret not in json.dumps(daemon.transfers())
    assert origin.secret not in daemon.run("ls", "--all", "--json")
    assert origin.secret not in (daemon.state / "daemon.log").read_text(errors="replace")

    # The popup shows Ferry's transfers with their progress.
    popup = extension.context.new_page()
    popup.goto(extension.url("popup.html"))
    row = popup.locator(f'li[data-id="{transfer["id"]}"]')
    expect(row.locator(".name")).to_have_text("report.zip")
    expect(row.locator(".detail")).to_have_text("completed · 100.0% of 300.0 kB")
    expect(popup.locator("#last")).to_contain_text("Ferry downloads")


def test_a_taken_over_download_goes_to_ferry_with_its_cookie_and_the_browsers_is_cancelled(daemon, extension, origin):
    extension.pair(daemon)
    extension.set_take_over(minSizeMB=0.1, types="zip")
    page = extension.page
    page.goto(origin.base + "/page")
    page.click("#dl-report")
    url = origin.base + "/files/report.zip"
    transfer = completed(daemon, url)
    assert Path(transfer["path"]).read_bytes() == ZIP
    # The browser asked first (with the cookie), then Ferry, with the same cookie and user agent.
    browser = [r for r in origin.requests_for("report.zip") if r["browser"]]
    sent = ferry_requests(origin, "report.zip")
    assert len(browser) == 1 and sent, origin.requests_for("report.zip")
    assert all(f"sid={origin.secret}" in r["cookie"] for r in sent)
    assert sent[0]["user_agent"] == browser[0]["user_agent"]
    assert sent[0]["referer"] == origin.base + "/page"
    # The browser's own download was cancelled and erased: no file, no entry.
    time.sleep(1)
    assert extension.browser_files() == []
    assert extension.browser_download_items() == []
    assert extension.storage()["lastResult"]["outcome"] == "ferry"

    # Smaller than the minimum (1000 bytes < 0.1 MB): the browser keeps it.
    page.click("#dl-photo")
    wait_until(lambda: extension.browser_files() == ["photo.zip"], message="the browser downloading the small file")
    assert transfer_for(daemon, origin.base + "/files/photo.zip") is None

    # The bypass key (Alt) held while clicking: the browser keeps it, whatever its size.
    extension.set_take_over(minSizeMB=0, modifier="alt")
    page.click("#dl-kept", modifiers=["Alt"])
    wait_until(lambda: "kept.zip" in extension.browser_files(), message="the browser downloading the Alt-clicked file")
    assert transfer_for(daemon, origin.base + "/files/kept.zip") is None
    # A site on the bypass list: the browser keeps it.
    extension.set_take_over(bypassSites="example.com\n127.0.0.1")
    page.click("#dl-fallback")
    wait_until(lambda: "fallback.zip" in extension.browser_files(), message="the browser downloading from a bypassed site")
    assert transfer_for(daemon, origin.base + "/files/fallback.zip") is None


def test_when_ferry_is_down_the_browser_downloads_it_itself(daemon, extension, origin):
    extension.pair(daemon)
    extension.set_take_over()
    daemon.stop()
    page = extension.page
    page.goto(origin.base + "/page")
    page.click("#dl-fallback")
    wait_until(lambda: extension.browser_files() == ["fallback.zip"], message="the browser's own download")
    assert (extension.downloads / "fallback.zip").read_bytes() == ZIP[:5000]
    last = extension.storage()["lastResult"]
    assert last["outcome"] == "unreachable" and "does not answer" in last["message"], last

    # The context menu falls back the same way (the browser's download, never taken over again).
    result = extension.sw.evaluate(
        "([url, page]) => ferry.onMenuClicked({menuItemId: 'ferry-link', linkUrl: url, pageUrl: page}, null)",
        [origin.base + "/files/kept.zip", origin.base + "/page"],
    )
    assert result["outcome"] == "unreachable"
    wait_until(lambda: "kept.zip" in extension.browser_files(), message="the browser's download from the menu")
    assert (extension.downloads / "kept.zip").read_bytes() == ZIP[:7000]
    popup = extension.context.new_page()
    popup.goto(extension.url("popup.html"))
    expect(popup.locator("#status")).to_contain_text("Ferry does not answer")


def test_a_revoked_token_sends_the_user_back_to_pairing_and_the_browser_downloads(daemon, extension, origin):
    extension.pair(daemon)
    extension.set_take_over()
    assert "Revoked" in daemon.run("extension", "revoke")
    page = extension.page
    page.goto(origin.base + "/page")
    # The first download after the revocation: Ferry answers 401, the browser keeps it.
    page.click("#dl-fallback")
    wait_until(lambda: extension.browser_files() == ["fallback.zip"], message="the browser's own download")
    stored = extension.storage()
    assert stored["needsPairing"] is True
    assert stored["lastResult"]["outcome"] == "needs-pairing"
    assert daemon.transfers() == []
    assert extension.sw.evaluate("chrome.action.getBadgeText({})") == "!"
    # Later ones are not even offered to Ferry until it is paired again.
    page.click("#dl-kept")
    wait_until(lambda: "kept.zip" in extension.browser_files(), message="the next download, in the browser")
    popup = extension.context.new_page()
    popup.goto(extension.url("popup.html"))
    expect(popup.locator("#status")).to_contain_text("pair it again")
    options = extension.context.new_page()
    options.goto(extension.url("options.html"))
    expect(options.locator("#pairing-state")).to_have_text("Ferry no longer accepts this extension's token: pair it again.")

    # Pairing again mends it.
    extension.pair(daemon)
    assert extension.storage()["needsPairing"] is False
    assert extension.sw.evaluate("chrome.action.getBadgeText({})") == ""
    page.click("#dl-report")
    completed(daemon, origin.base + "/files/report.zip")


def test_the_take_over_rules_and_request_headers(extension):
    """The pure functions in lib/rules.js, imported in the options page (an extension page)."""
    page = extension.context.new_page()
    page.goto(extension.url("options.html"))
    results = page.evaluate(
        """async () => {
        const r = await import('./lib/rules.js');
        const on = {token: 't', needsPairing: false, takeOver: {enabled: true, minSizeMB: 1, types: 'zip iso video/*', bypassSites: 'example.org', modifier: 'alt'}};
        const item = (over) => ({id: 1, url: 'https://files.example.com/a.zip', filename: '', mime: 'application/zip', totalBytes: 5e6, referrer: 'https://example.com/', ...over});
        const d = (i, s = on, extra = {}) => r.takeOverDecision(i, s, {own: 'me', ...extra}).reason;
        const jar = [{name: 'lax', value: '1', sameSite: 'lax'}, {name: 'strict', value: '2', sameSite: 'strict'}, {name: 'none', value: '3', sameSite: 'no_restriction'}];
        return {
            take: d(item()),
            off: d(item(), {...on, takeOver: {...on.takeOver, enabled: false}}),
            unpaired: d(item(), {...on, needsPairing: true}),
            own: d(item({byExtensionId: 'me'})),
            small: d(item({totalBytes: 1000})),
            unknownSize: d(item({totalBytes: -1, fileSize: 0})),
            type: d(item({url: 'https://files.example.com/a.pdf', mime: 'application/pdf'})),
            videoMime: d(item({url: 'https://files.example.com/watch', mime: 'video/mp4'})),
            site: d(item({url: 'https://cdn.example.org/a.zip'})),
            blob: d(item({url: 'blob:https://example.com/1'})),
            key: d(item(), on, {bypassed: true}),
            cookie: r.cookieHeader([{name: 'a', value: '1', path: '/'}, {name: 'b', value: '2', path: '/files/'}]),
            strictSameSite: r.cookiesToSend(jar, 'https://files.example.com/a.zip', 'https://www.example.com/page').map(c => c.name),
            strictCrossSite: r.cookiesToSend(jar, 'https://files.example.com/a.zip', 'https://evil.example.net/').map(c => c.name),
            strictHttp: r.cookiesToSend(jar, 'https://files.example.com/a.zip', 'http://www.example.com/').map(c => c.name),
            strictTyped: r.cookiesToSend(jar, 'https://files.example.com/a.zip', '').map(c => c.name),
            sameOrigin: r.referrerFor('https://example.com/f.zip', 'https://user:pw@example.com/page?q=1#frag'),
            crossOrigin: r.referrerFor('https://cdn.example.net/f.zip', 'https://example.com/page?q=1'),
            downgrade: r.referrerFor('http://example.com/f.zip', 'https://example.com/page'),
        };
    }"""
    )
    assert results == {
        "take": "take", "off": "take-over is off", "unpaired": "not paired", "own": "the extension's own download",
        "small": "smaller than the minimum size", "unknownSize": "take", "type": "not a listed type", "videoMime": "take",
        "site": "a site on the bypass list", "blob": "not an http(s) URL", "key": "the bypass key was held",
        "cookie": "b=2; a=1", "strictSameSite": ["lax", "strict", "none"], "strictCrossSite": ["lax", "none"], "strictHttp": ["lax", "none"],
        "strictTyped": ["lax", "strict", "none"], "sameOrigin": "https://example.com/page?q=1", "crossOrigin": "https://example.com/", "downgrade": None,
    }, results
