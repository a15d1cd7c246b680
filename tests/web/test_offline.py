"""The web app on a phone with no network: the service worker keeps the app's shell after one
visit; "Keep on this device" saves an episode in the browser's own storage (progress, pause,
resume with Range, removal, Background Fetch where Chromium has it), the player plays it offline
from there (the worker answers Range), and a position made offline reaches the daemon when the
network is back, never over a newer one. A full quota is said clearly, in the user's language.

Only the browser is faked, never Ferry: a test without Background Fetch hides it (as Firefox and
Safari have none), and the quota test makes the browser's storage report itself full."""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import urllib.request

import pytest
from playwright.sync_api import Page, expect

from conftest import PHONE, screenshot
from helpers import assert_not_clipped, audio, episode, readable_message, search_songs, track, wait_for_playable, wait_until
from servers import rss, wav

TITLE = "Harbour Nights"
OTHER = "Far Lights"
# 60 s of 22 kHz mono: 2.6 MB, sent at 250 kB/s, so a keep takes about ten seconds to watch.
SECONDS = 60
RATE = 250_000

NO_BACKGROUND_FETCH = "Object.defineProperty(ServiceWorkerRegistration.prototype, 'backgroundFetch', {get() { return undefined; }});"


@pytest.fixture(scope="session")
def offline_media() -> bytes:
    return wav(SECONDS, rate=22050, seed=11)


@pytest.fixture(scope="session")
def offline_feed(files, offline_media) -> str:
    now = datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.timezone.utc)
    items = []
    for n, title in enumerate([TITLE, OTHER], start=1):
        url = files.add(f"/offline/episode-{n}.wav", offline_media, "audio/wav", rate=RATE)
        items.append({"guid": f"offline-{n}", "title": title, "date": now - datetime.timedelta(days=n), "url": url, "length": len(offline_media), "duration": f"1:{SECONDS - 60:02d}"})
    return files.add("/feeds/offline.xml", rss("Ferry Offline Hour", items, author="The Ferry Crew"), "application/rss+xml")


def subscribe(daemon, feed: str) -> tuple[int, dict[str, int]]:
    detail = daemon.api("POST", "/v1/podcasts", {"url": feed})
    return detail["podcast"]["id"], {e["title"]: e["id"] for e in detail["episodes"]}


def controlled(page: Page):
    """Waits until the service worker controls the page (it kept the shell first)."""
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=20_000)


def open_page(pages, daemon, path: str, *, init: str | None = None, locale: str = "en-US") -> Page:
    page = pages.new(daemon, viewport=PHONE, path=path, locale=locale)
    if init:
        page.context.add_init_script(init)
        page.reload()
        page.wait_for_selector("#shell:not([hidden])")
    controlled(page)
    return page


def kept(page: Page, key: str) -> dict:
    """What the page's storage holds of `key`: its facts and the bytes kept."""
    return page.evaluate("async (key) => ({facts: await keptStore.meta(key), bytes: await keptStore.keptBytes(key)})", key)


def server_playback(daemon, episode_id: int):
    return daemon.api("GET", f"/v1/episodes/{episode_id}/playback")


def test_the_shell_loads_offline_after_one_visit(daemon, pages):
    page = open_page(pages, daemon, "#/podcasts", locale="ru-RU")
    version = daemon_shell_version(daemon)
    assert page.evaluate("caches.keys()").count(f"ferry-shell-{version}") == 1

    page.context.set_offline(True)
    from_worker = []
    page.on("response", lambda r: from_worker.append(r.url) if r.from_service_worker else None)
    page.reload()
    expect(page.locator("#shell")).to_be_visible()
    # In the user's language (its catalogue kept too), with every view's code.
    expect(page.locator(".sidebar .nav-link[data-view='device']")).to_have_text("На устройстве")
    assert any(url.endswith("/js/app.js") for url in from_worker) and any(url.endswith("/i18n/ru.json") for url in from_worker), from_worker
    page.goto(f"{daemon.url}/#/device")
    expect(page.locator(".view-device .empty")).to_contain_text("На устройстве пока ничего не сохранено")
    # Offline by the browser's own word: the banner says the daemon is away, no error piles up.
    expect(page.locator("#banner")).to_be_visible()
    expect(page.locator(".toast-error")).to_have_count(0)
    screenshot(page, "offline-shell-phone")
    # The API is never kept (the app asked for /v1/status online): offline, it fails as without a worker.
    assert page.evaluate("fetch('/v1/status').then(() => 'answered', () => 'failed')") == "failed"
    page.context.set_offline(False)


def test_a_visit_online_replaces_an_older_shell(daemon, pages):
    page = open_page(pages, daemon, "#/podcasts")
    version = daemon_shell_version(daemon)
    # As if an older daemon's app were kept: another version, with another index.html.
    page.evaluate(
        """async (version) => {
            await caches.delete('ferry-shell-' + version);
            const old = await caches.open('ferry-shell-0123456789abcdef');
            await old.put('/index.html', new Response('<p>an older Ferry</p>', {headers: {'Content-Type': 'text/html'}}));
        }""",
        version,
    )
    page.reload()
    expect(page.locator("#shell")).to_be_visible()
    wait_until(lambda: [k for k in page.evaluate("caches.keys()") if k.startswith("ferry-shell-")] == [f"ferry-shell-{version}"], timeout=10, message="the current shell, alone")
    assert "an older Ferry" not in page.evaluate("caches.match('/index.html').then((r) => r.text())")


def daemon_shell_version(daemon) -> str:
    return json.loads(urllib.request.urlopen(daemon.url + "/shell.json").read())["version"]


def test_an_episode_kept_plays_offline_and_its_position_reaches_the_daemon(daemon, pages, files, offline_feed, offline_media):
    podcast_id, ids = subscribe(daemon, offline_feed)
    key = f"episodes/{ids[TITLE]}"
    page = open_page(pages, daemon, f"#/podcasts/{podcast_id}", init=NO_BACKGROUND_FETCH)
    row = episode(page, TITLE)
    row.locator(".episode-open").click()
    row.get_by_role("button", name=f"Keep {TITLE} on this device").click()

    # Its progress shows as the bytes come (from the host, through the daemon: not downloaded).
    control = row.locator(".keep")
    expect(control).to_have_attribute("data-state", "fetching")
    expect(control.locator(".keep-text")).to_contain_text(re.compile(r"Keeping on this device: \d+\.\d% of 2\.6 MB"))
    screenshot(page, "offline-keeping-phone")
    wait_until(lambda: kept_live(page, key) > 600_000, timeout=20, message="600 kB to arrive")

    # Paused: what arrived is kept.
    row.get_by_role("button", name=f"Pause keeping {TITLE}").click()
    expect(control).to_have_attribute("data-state", "paused")
    expect(control.locator(".keep-text")).to_contain_text(re.compile(r"^Paused: \d+\.\d% of 2\.6 MB kept$"))
    paused = kept(page, key)
    assert 600_000 <= paused["bytes"] < len(offline_media) and paused["facts"]["state"] == "paused", paused
    assert_not_clipped(control.locator(".keep-text"))

    # Resumed from there: the host is asked for the rest (Range passes through the daemon).
    row.get_by_role("button", name=f"Resume keeping {TITLE}").click()
    expect(control).to_have_attribute("data-state", "done", timeout=30_000)
    expect(control).to_contain_text("On this device")
    ranges = [headers.get("range") for method, headers in files.headers_for("/offline/episode-1.wav") if method == "GET"]
    assert f"bytes={paused['bytes']}-" in ranges, ranges
    done = kept(page, key)
    assert done["bytes"] == len(offline_media) and done["facts"]["total"] == len(offline_media), done

    # The service worker answers from storage: the whole, a range, and 416 beyond the end.
    answers = page.evaluate(
        """async (key) => {
            const read = async (range) => {
                const r = await fetch('/kept/' + key, range ? {headers: {Range: range}} : {});
                const body = new Uint8Array(await r.arrayBuffer());
                const hex = [...new Uint8Array(await crypto.subtle.digest('SHA-256', body))].map((b) => b.toString(16).padStart(2, '0')).join('');
                return {status: r.status, range: r.headers.get('Content-Range'), length: body.length, sha: hex, type: r.headers.get('Content-Type')};
            };
            return {whole: await read(null), part: await read('bytes=1000-2999'), tail: await read('bytes=-100'), beyond: await read('bytes=99999999-')};
        }""",
        key,
    )
    size = len(offline_media)
    assert answers["whole"]["status"] == 200 and answers["whole"]["sha"] == hashlib.sha256(offline_media).hexdigest() and answers["whole"]["type"] == "audio/wav", answers["whole"]
    assert (answers["part"]["status"], answers["part"]["range"], answers["part"]["sha"]) == (206, f"bytes 1000-2999/{size}", hashlib.sha256(offline_media[1000:3000]).hexdigest())
    assert (answers["tail"]["status"], answers["tail"]["range"], answers["tail"]["length"]) == (206, f"bytes {size - 100}-{size - 1}/{size}", 100)
    assert (answers["beyond"]["status"], answers["beyond"]["range"]) == (416, f"bytes */{size}")

    # No network at all: the app starts from the worker and plays the episode from this device.
    page.context.set_offline(True)
    page.goto(f"{daemon.url}/#/device")
    page.reload()
    item = page.locator(f'li.kept-item[data-key="{key}"]')
    expect(item).to_contain_text(TITLE)
    expect(page.locator(".keep-usage")).to_contain_text("Kept here: 2.6 MB")
    screenshot(page, "offline-device-phone")
    item.get_by_role("button", name=f"Play {TITLE}").click()
    wait_for_playable(page)
    assert audio(page, "a.dataset.source") == "device"
    audio(page, "a.currentTime = 20")
    wait_until(lambda: audio(page, "!a.paused && !a.seeking && a.currentTime > 20.5"), timeout=10, message="the kept episode to play on from 20 s")
    page.locator("#player .player-toggle").click()  # Pause: a save, which cannot reach the daemon
    wait_until(lambda: audio(page, "a.paused"), timeout=5, message="the pause")
    at = audio(page, "a.currentTime")
    noted = lambda: page.evaluate("(key) => JSON.parse(localStorage.getItem('ferry.playback.pending') || '{}')[key]?.update.positionSeconds", key)
    wait_until(lambda: abs((noted() or 0) - at) < 0.2, timeout=5, message=f"the position at {at} s noted in the browser")
    assert server_playback(daemon, ids[TITLE]) is None

    # Back online: the position made offline is on the daemon, and no longer waiting here.
    page.context.set_offline(False)
    saved = wait_until(lambda: server_playback(daemon, ids[TITLE]), timeout=15, message="the offline position on the daemon")
    assert abs(saved["positionSeconds"] - at) < 0.2 and not saved["played"], (saved, at)
    wait_until(lambda: page.evaluate("localStorage.getItem('ferry.playback.pending')") is None, timeout=5, message="the queue to empty")

    # Removed: its storage is freed.
    page.locator("#player .player-close").click()
    before = page.evaluate("navigator.storage.estimate().then((e) => e.usage)")
    item.get_by_role("button", name=f"Remove {TITLE} from this device").click()
    expect(page.locator(".view-device .empty")).to_be_visible()
    assert page.evaluate("navigator.storage.getDirectory().then((d) => d.getDirectoryHandle('kept')).then(async (d) => { const names = []; for await (const name of d.keys()) names.push(name); return names; })") == []
    assert page.evaluate("(key) => fetch('/kept/' + key).then((r) => r.status)", key) == 404
    wait_until(lambda: page.evaluate("navigator.storage.estimate().then((e) => e.usage)") <= before - 2_000_000, timeout=10, message="the usage to drop")


def kept_live(page: Page, key: str) -> int:
    """The bytes the page has of `key` so far, written or not yet (the keep module's count)."""
    return page.evaluate("(key) => import('/js/keep.js').then((m) => m.keeper.bytes(key))", key)


def test_a_position_made_offline_never_overwrites_a_newer_one(daemon, pages, offline_feed):
    podcast_id, ids = subscribe(daemon, offline_feed)
    page = open_page(pages, daemon, f"#/podcasts/{podcast_id}")
    older, newer = f"episodes/{ids[TITLE]}", f"episodes/{ids[OTHER]}"
    # Both were listened to here offline, a minute ago; since then another device saved one.
    page.evaluate(
        """([older, newer]) => {
            const at = Date.now() - 60_000;
            localStorage.setItem('ferry.playback.pending', JSON.stringify({
                [older]: {update: {positionSeconds: 12}, at},
                [newer]: {update: {positionSeconds: 34}, at},
            }));
        }""",
        [older, newer],
    )
    daemon.api("PUT", f"/v1/episodes/{ids[TITLE]}/playback", {"positionSeconds": 50})
    page.evaluate("dispatchEvent(new Event('online'))")
    wait_until(lambda: server_playback(daemon, ids[OTHER]), timeout=10, message="the offline position that is newest")
    assert server_playback(daemon, ids[OTHER])["positionSeconds"] == 34
    assert server_playback(daemon, ids[TITLE])["positionSeconds"] == 50
    wait_until(lambda: page.evaluate("localStorage.getItem('ferry.playback.pending')") is None, timeout=5, message="the queue to empty")


def test_background_fetch_keeps_an_episode(daemon, pages, offline_feed, offline_media):
    podcast_id, ids = subscribe(daemon, offline_feed)
    key = f"episodes/{ids[OTHER]}"
    page = open_page(pages, daemon, f"#/podcasts/{podcast_id}")
    if not page.evaluate("navigator.serviceWorker.ready.then((r) => Boolean(r.backgroundFetch))"):
        pytest.skip("this Chromium has no Background Fetch")
    row = episode(page, OTHER)
    row.locator(".episode-open").click()
    row.get_by_role("button", name=f"Keep {OTHER} on this device").click()
    control = row.locator(".keep")
    expect(control).to_have_attribute("data-state", "fetching")
    wait_until(lambda: page.evaluate("navigator.serviceWorker.ready.then((r) => r.backgroundFetch.getIds())") == [f"keep:{key}"], timeout=5, message="a Background Fetch")
    # Its progress shows as the browser reports it.
    wait_until(lambda: kept_live(page, key) > 200_000, timeout=15, message="progress from the Background Fetch")
    expect(control.locator(".keep-text")).to_contain_text(re.compile(r"Keeping on this device: \d+\.\d% of 2\.6 MB"))
    # Paused: the Background Fetch is aborted (what it had fetched is not handed over), then
    # resumed as a new one.
    row.get_by_role("button", name=f"Pause keeping {OTHER}").click()
    expect(control).to_have_attribute("data-state", "paused")
    wait_until(lambda: page.evaluate("navigator.serviceWorker.ready.then((r) => r.backgroundFetch.getIds())") == [], timeout=5, message="the Background Fetch to end")
    row.get_by_role("button", name=f"Resume keeping {OTHER}").click()
    expect(control).to_have_attribute("data-state", "fetching")
    # The browser fetches it; the worker writes it when it is all there.
    expect(control).to_have_attribute("data-state", "done", timeout=30_000)
    done = kept(page, key)
    assert done["facts"]["via"] == "background" and done["bytes"] == len(offline_media), done

    page.context.set_offline(True)
    page.goto(f"{daemon.url}/#/device")
    page.locator(f'li.kept-item[data-key="{key}"]').get_by_role("button", name=f"Play {OTHER}").click()
    wait_for_playable(page)
    wait_until(lambda: audio(page, "!a.paused && a.currentTime > 0.5"), timeout=10, message="the kept episode to play")
    assert audio(page, "a.dataset.source") == "device"
    page.context.set_offline(False)


# The browser's storage says it is full: its estimate leaves 100 kB, and (second case) its file
# system refuses bytes (not the facts' few) as a full quota does.
FULL_ESTIMATE = "StorageManager.prototype.estimate = async () => ({usage: 9_900_000, quota: 10_000_000});"
FULL_DISK = """
const write = FileSystemWritableFileStream.prototype.write;
FileSystemWritableFileStream.prototype.write = function (data) {
    if (data instanceof Blob) return Promise.reject(new DOMException('The quota has been exceeded.', 'QuotaExceededError'));
    return write.call(this, data);
};
"""


@pytest.mark.parametrize("full", [FULL_ESTIMATE, FULL_DISK], ids=["estimate", "disk"])
def test_no_room_is_said_clearly_in_the_users_language(daemon, pages, offline_feed, full):
    podcast_id, ids = subscribe(daemon, offline_feed)
    page = open_page(pages, daemon, f"#/podcasts/{podcast_id}", init=NO_BACKGROUND_FETCH + full, locale="ru-RU")
    row = episode(page, TITLE)
    row.locator(".episode-open").click()
    row.get_by_role("button", name=f"Сохранить на устройстве: {TITLE}").click()
    control = row.locator(".keep")
    expect(control).to_have_attribute("data-state", "failed", timeout=20_000)
    readable_message(control.locator(".keep-text"), "не осталось места")
    readable_message(page.locator(".toast-error").first, "не осталось места")
    assert kept(page, f"episodes/{ids[TITLE]}")["facts"]["error"] == "quota"
    screenshot(page, f"offline-quota-phone-{'estimate' if full == FULL_ESTIMATE else 'disk'}")


def test_a_song_kept_plays_offline(daemon, pages, catalog, files):
    song = next(s for s in catalog.songs if s["trackName"] == "Winter Wind")
    path = f"/previews/{song['trackId']}.wav"
    rate = files.files[path].rate
    files.set_rate(path, None)  # no need to watch the daemon download it
    try:
        preview = daemon.api("POST", "/v1/catalog/previews", {"trackId": song["trackId"], "session": "web"})
        wait_until(lambda: daemon.api("GET", f"/v1/transfers/{preview['id']}")["state"] == "completed", message="the preview to download")
    finally:
        files.set_rate(path, rate)
    size = daemon.api("GET", f"/v1/transfers/{preview['id']}")["totalBytes"]
    key = f"tracks/{song['trackId']}"

    page = open_page(pages, daemon, "#/search")
    search_songs(page, "winter wind")
    row = track(page, "Winter Wind")
    row.get_by_role("button", name="Keep Winter Wind on this device").click()
    expect(row.locator(".keep")).to_have_attribute("data-state", "done", timeout=30_000)
    expect(row.locator(".keep .keep-done")).to_be_visible()
    assert_not_clipped(row.locator(".keep .keep-done"))
    assert kept(page, key)["bytes"] == size

    page.context.set_offline(True)
    page.goto(f"{daemon.url}/#/device")
    page.reload()
    page.locator(f'li.kept-item[data-key="{key}"]').get_by_role("button", name="Play Winter Wind").click()
    wait_for_playable(page)
    wait_until(lambda: audio(page, "!a.paused && a.currentTime > 0.5"), timeout=10, message="the kept song to play")
    assert audio(page, "a.dataset.source") == "device" and audio(page, "a.dataset.trackId") == str(song["trackId"])
    page.context.set_offline(False)
