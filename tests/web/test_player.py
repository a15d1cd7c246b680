"""The player's controls: speed (kept per podcast by the daemon), skip back and forward, a sleep
timer, keyboard shortcuts with their help, and the Media Session; episodes play by their id (a
file without a transfer) or stream before they are downloaded, and the Downloads view saves
where the listener is when it knows the episode."""

from __future__ import annotations

import datetime
import json
import re

import pytest
from playwright.sync_api import Page, expect

from conftest import PHONE, screenshot
from helpers import assert_not_clipped, download_row, episode, wait_for_playable, wait_until
from servers import rss, wav

SECONDS = 90
CHAPTERS = [(0, "Intro"), (30, "The harbour"), (60, "Open sea")]
CUES = [
    (0, 8, "Ada", "Welcome aboard the morning ferry."),
    (10, 18, None, "We leave the harbour at dawn."),
    (20, 28, None, "Gulls follow the wake for a while."),
    (30, 38, "Ben", "The harbour lights fade behind us."),
    (40, 48, None, "Coffee is served on the upper deck."),
    (50, 58, None, "A lighthouse blinks to the north."),
    (60, 68, "Ada", "Now we are on the open sea."),
    (70, 78, None, "The wind picks up a little."),
    (80, 88, None, "Land is in sight. Thank you for listening."),
]


def vtt(cues) -> bytes:
    def stamp(seconds: float) -> str:
        return f"00:{int(seconds) // 60:02d}:{int(seconds) % 60:02d}.000"

    blocks = ["WEBVTT", ""]
    for start, end, speaker, text in cues:
        blocks += [f"{stamp(start)} --> {stamp(end)}", f"<v {speaker}>{text}" if speaker else text, ""]
    return "\n".join(blocks).encode()


@pytest.fixture(scope="session")
def player_feeds(files) -> dict[str, str]:
    """Two shows: "Ferry Player Club" (an episode with chapters and a transcript, one whose
    chapters and transcript are not what they say, one to stream, one without media) and
    "Other Shore" (one episode)."""
    audio = wav(SECONDS, rate=8000, seed=7)
    now = datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.timezone.utc)
    chapters = files.add("/player/chapters.json", json.dumps({"version": "1.2.0", "chapters": [{"startTime": s, "title": t} for s, t in CHAPTERS]}).encode(), "application/json")
    transcript = files.add("/player/transcript.vtt", vtt(CUES), "text/vtt")
    bad_chapters = files.add("/player/bad-chapters.json", b"<html><body>Not chapters</body></html>", "application/json")
    bad_transcript = files.add("/player/bad-transcript.vtt", b"<html><body>Sign in to read this transcript</body></html>", "text/html")
    items = [
        {"guid": "crossing", "title": "Long Crossing", "url": files.add("/player/crossing.wav", audio, "audio/wav"), "chapters": chapters, "transcript": transcript},
        {"guid": "broken", "title": "Broken Sidecars", "url": files.add("/player/broken.wav", audio, "audio/wav"), "chapters": bad_chapters, "transcript": bad_transcript, "transcript_type": "text/html"},
        {"guid": "stream", "title": "Stream Me", "url": files.add("/player/stream.wav", audio, "audio/wav")},
        {"guid": "text", "title": "Words Only", "description": "<p>An item without media.</p>"},
    ]
    for n, item in enumerate(items):
        item.update(date=now - datetime.timedelta(days=n), length=len(audio) if item.get("url") else 0, duration=f"1:{SECONDS - 60:02d}")
    other = {"guid": "shore", "title": "Far Shore", "url": files.add("/player/shore.wav", audio, "audio/wav"), "date": now, "length": len(audio), "duration": "1:30"}
    return {
        "club": files.add("/feeds/player-club.xml", rss("Ferry Player Club", items, author="The Ferry Crew", image=files.url("/art/4.png")), "application/rss+xml"),
        "other": files.add("/feeds/other-shore.xml", rss("Other Shore", [other], author="Someone Else"), "application/rss+xml"),
    }


def subscribe(daemon, feed: str, download: tuple[str, ...] = ()) -> tuple[int, dict[str, int]]:
    """Subscribes with the API and downloads the episodes named → (podcast id, episode id by title)."""
    detail = daemon.api("POST", "/v1/podcasts", {"url": feed})
    podcast_id = detail["podcast"]["id"]
    ids = {e["title"]: e["id"] for e in detail["episodes"]}
    for title in download:
        daemon.api("POST", f"/v1/episodes/{ids[title]}/download", {"session": "web"})
    wait_until(lambda: all(e["state"] == "downloaded" for e in episodes(daemon, podcast_id) if e["title"] in download), message="the episodes to download")
    return podcast_id, ids


def episodes(daemon, podcast_id: int) -> list[dict]:
    return daemon.api("GET", f"/v1/podcasts/{podcast_id}")["episodes"]


def playback(daemon, podcast_id: int, title: str) -> dict | None:
    return next(e for e in episodes(daemon, podcast_id) if e["title"] == title).get("playback")


def audio(page: Page, script: str):
    return page.evaluate(f"(() => {{ const a = document.querySelector('#player-audio'); return {script}; }})()")


def play(page: Page, title: str, verb: str = "Play"):
    episode(page, title).get_by_role("button", name=re.compile(f"^{verb} {title}")).click()
    wait_for_playable(page)
    wait_until(lambda: audio(page, "!a.paused && a.currentTime > 0"), timeout=10, message=f"{title} to play")


def seek(page: Page, seconds: float):
    audio(page, f"(a.currentTime = {seconds}, true)")
    wait_until(lambda: audio(page, f"Math.abs(a.currentTime - {seconds}) < 2 && !a.seeking"), timeout=10, message=f"the seek to {seconds} s")


def at(page: Page) -> float:
    return audio(page, "a.currentTime")


def test_speed_is_kept_for_each_podcast(daemon, pages, player_feeds):
    club, _ = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    other, _ = subscribe(daemon, player_feeds["other"], ("Far Shore",))
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    play(page, "Long Crossing")
    speed = page.get_by_role("combobox", name="Playback speed")
    expect(speed).to_have_value("1")
    speed.select_option("1.5")
    wait_until(lambda: audio(page, "a.playbackRate") == 1.5, timeout=5, message="the new speed")
    wait_until(lambda: daemon.api("GET", f"/v1/podcasts/{club}")["podcast"].get("playbackSpeed") == 1.5, timeout=5, message="the speed kept by the daemon")

    # Another show plays at the player's own speed.
    page.goto(f"{daemon.url}/#/podcasts/{other}")
    play(page, "Far Shore")
    assert audio(page, "a.playbackRate") == 1
    expect(speed).to_have_value("1")
    assert daemon.api("GET", f"/v1/podcasts/{other}")["podcast"].get("playbackSpeed") is None

    # Another browser plays the first show's episode at its speed.
    second = pages.new(daemon, path=f"#/podcasts/{club}")
    play(second, "Long Crossing")
    assert audio(second, "a.playbackRate") == 1.5
    expect(second.get_by_role("combobox", name="Playback speed")).to_have_value("1.5")
    screenshot(second, "player-speed")


def test_skips_and_keyboard_shortcuts(daemon, pages, player_feeds):
    club, _ = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    play(page, "Long Crossing")
    page.locator("#player .player-toggle").click()  # Pause
    wait_until(lambda: audio(page, "a.paused"), timeout=5, message="the pause")
    seek(page, 40)
    page.get_by_role("button", name="Back 15 seconds").click()
    wait_until(lambda: 24 <= at(page) <= 26, timeout=5, message="15 s back")
    page.get_by_role("button", name="Forward 30 seconds").click()
    wait_until(lambda: 54 <= at(page) <= 56, timeout=5, message="30 s forward")

    # From the keyboard, with the focus on the page.
    page.locator(".podcast-title").click()
    page.keyboard.press("ArrowLeft")
    wait_until(lambda: 39 <= at(page) <= 41, timeout=5, message="← to go back 15 s")
    page.keyboard.press("ArrowRight")
    wait_until(lambda: 69 <= at(page) <= 71, timeout=5, message="→ to go forward 30 s")
    page.keyboard.press("Space")
    wait_until(lambda: audio(page, "!a.paused"), timeout=5, message="Space to play")
    page.keyboard.press("Space")
    wait_until(lambda: audio(page, "a.paused"), timeout=5, message="Space to pause")

    # Not while typing: the keys go to the text field.
    before = at(page)
    search = page.get_by_role("searchbox", name="Search this show")
    search.click()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowLeft")
    page.keyboard.type("?")
    expect(search).to_have_value("? ")  # ← moved the caret before the space
    expect(page.locator("#shortcuts-dialog")).to_be_hidden()
    assert audio(page, "a.paused") and at(page) == before

    # ? lists the shortcuts; Escape closes the list.
    page.locator(".podcast-title").click()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    for words in ("Play or pause", "Back 15 seconds", "Forward 30 seconds"):
        expect(dialog).to_contain_text(words)
    screenshot(page, "player-shortcuts")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_sleep_timer_pauses(daemon, pages, player_feeds):
    club, _ = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    # A minute of 100 ms: "15 min" is 1.5 s.
    page.evaluate("localStorage.setItem('ferry.player.sleepMinuteMs', '100')")
    play(page, "Long Crossing")
    sleep = page.get_by_role("combobox", name="Sleep timer")
    started = page.evaluate("Date.now()")
    sleep.select_option("15")
    player = page.locator("#player")
    expect(player).to_have_attribute("data-sleep", "15")
    ends = int(player.get_attribute("data-sleep-ends-at"))
    assert 1400 <= ends - started <= 2500, ends - started
    assert audio(page, "!a.paused")
    wait_until(lambda: audio(page, "a.paused"), timeout=10, message="the sleep timer to pause")
    slept = page.evaluate("Date.now()")
    assert slept - started >= 1400, f"paused after {slept - started} ms"
    expect(page.locator(".toast", has_text="Sleep timer: paused.")).to_be_visible()
    expect(player).to_have_attribute("data-sleep", "off")
    expect(sleep).to_have_value("off")

    # At the end of the episode: it stops there and the timer is off.
    sleep.select_option("end")
    expect(player).to_have_attribute("data-sleep", "end")
    page.locator("#player .player-toggle").click()
    seek(page, SECONDS - 2)
    wait_until(lambda: audio(page, "a.ended"), timeout=10, message="the episode to end")
    expect(player).to_have_attribute("data-sleep", "off")


CAPTURE_SESSION = """
    window.__mediaHandlers = {};
    if (navigator.mediaSession) {
        const set = navigator.mediaSession.setActionHandler.bind(navigator.mediaSession);
        navigator.mediaSession.setActionHandler = (action, handler) => {
            window.__mediaHandlers[action] = handler;
            return set(action, handler);
        };
    }
"""


def test_media_session(daemon, pages, player_feeds, files):
    club, _ = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    page = pages.new(daemon, path=None)
    page.add_init_script(CAPTURE_SESSION)
    page.goto(f"{daemon.url}/#/podcasts/{club}")
    page.reload()  # (a new hash alone loads nothing: the script runs from the next load)
    play(page, "Long Crossing")
    metadata = page.evaluate("(() => { const m = navigator.mediaSession.metadata; return m && {title: m.title, artist: m.artist, artwork: m.artwork.map((a) => a.src)}; })()")
    assert metadata["title"] == "Long Crossing" and metadata["artist"] == "Ferry Player Club", metadata
    assert metadata["artwork"] == [files.url("/art/4.png")], metadata
    handlers = page.evaluate("Object.keys(window.__mediaHandlers)")
    for action in ("play", "pause", "seekbackward", "seekforward", "previoustrack", "nexttrack"):
        assert action in handlers, handlers

    def act(action: str):
        page.evaluate(f"window.__mediaHandlers['{action}']({{action: '{action}'}})")

    act("pause")
    wait_until(lambda: audio(page, "a.paused"), timeout=5, message="pause from the Media Session")
    assert page.evaluate("navigator.mediaSession.playbackState") == "paused"
    seek(page, 5)
    act("seekforward")
    wait_until(lambda: 34 <= at(page) <= 36, timeout=5, message="seek forward")
    act("seekbackward")
    wait_until(lambda: 19 <= at(page) <= 21, timeout=5, message="seek backward")
    # Next and previous go by chapter (30 s and 60 s; back to a chapter's start).
    act("nexttrack")
    wait_until(lambda: 30 <= at(page) <= 32, timeout=5, message="the next chapter")
    act("nexttrack")
    wait_until(lambda: 60 <= at(page) <= 62, timeout=5, message="the chapter after")
    act("pause")
    act("previoustrack")
    wait_until(lambda: 30 <= at(page) <= 32, timeout=5, message="the chapter before")
    act("play")
    wait_until(lambda: audio(page, "!a.paused"), timeout=5, message="play from the Media Session")
    assert page.evaluate("navigator.mediaSession.playbackState") == "playing"
    page.locator("#player .player-close").click()
    assert page.evaluate("navigator.mediaSession.metadata") is None


def test_an_episode_plays_by_its_id_without_a_transfer(daemon, pages, player_feeds):
    club, ids = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    transfer_id = next(e for e in episodes(daemon, club) if e["title"] == "Long Crossing")["transfer"]["id"]
    daemon.api("DELETE", f"/v1/transfers/{transfer_id}")  # off the list; the file stays
    assert next(e for e in episodes(daemon, club) if e["title"] == "Long Crossing")["state"] == "downloaded"
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    row = episode(page, "Long Crossing")
    expect(row.locator(".episode-status")).to_have_text(re.compile("^Downloaded"))
    play(page, "Long Crossing")
    state = audio(page, "({src: a.currentSrc, source: a.dataset.source, episodeId: a.dataset.episodeId})")
    assert state["src"].endswith(f"/v1/episodes/{ids['Long Crossing']}/file") and state["source"] == "file", state
    expect(row.get_by_role("button", name="Pause Long Crossing")).to_be_visible()
    seek(page, 20)
    page.locator("#player .player-toggle").click()
    saved = wait_until(lambda: (p := playback(daemon, club, "Long Crossing")) and p["positionSeconds"] >= 19 and p, timeout=10, message="the position saved")
    assert saved["positionSeconds"] <= 24


def test_an_episode_streams_before_it_is_downloaded(daemon, pages, player_feeds, files):
    club, ids = subscribe(daemon, player_feeds["club"])
    page = pages.new(daemon, viewport=PHONE, path=f"#/podcasts/{club}")
    row = episode(page, "Stream Me")
    expect(row.get_by_role("button", name="Download Stream Me")).to_be_visible()
    asked = len(files.requests_for("/player/stream.wav"))
    play(page, "Stream Me", verb="Stream")
    state = audio(page, "({src: a.currentSrc, source: a.dataset.source})")
    assert state["src"].endswith(f"/v1/episodes/{ids['Stream Me']}/stream") and state["source"] == "stream", state
    assert len(files.requests_for("/player/stream.wav")) > asked  # through the daemon, from its host
    expect(row.get_by_role("button", name="Pause Stream Me")).to_be_visible()
    # Nothing was downloaded for it.
    assert next(e for e in episodes(daemon, club) if e["title"] == "Stream Me")["state"] == "notDownloaded"
    assert not [t for t in daemon.transfers() if t["url"].endswith("/player/stream.wav")]
    player = page.locator("#player")
    for name in ("Back 15 seconds", "Forward 30 seconds"):
        control = player.get_by_role("button", name=name)
        expect(control).to_be_visible()
        assert_not_clipped(control)
    bar = player.bounding_box()
    for name in ("Playback speed", "Sleep timer"):
        box = player.get_by_role("combobox", name=name).bounding_box()
        assert box["width"] > 20 and bar["x"] <= box["x"] and box["x"] + box["width"] <= bar["x"] + bar["width"], (name, box, bar)
        assert bar["y"] <= box["y"] and box["y"] + box["height"] <= bar["y"] + bar["height"], (name, box, bar)
    screenshot(page, "player-stream-phone")
    seek(page, 30)
    page.locator("#player .player-toggle").click()
    wait_until(lambda: (p := playback(daemon, club, "Stream Me")) and p["positionSeconds"] >= 29, timeout=10, message="the streamed episode's position")


def test_downloads_view_saves_the_position_of_an_episode(daemon, pages, player_feeds):
    club, ids = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    transfer_id = next(e for e in episodes(daemon, club) if e["title"] == "Long Crossing")["transfer"]["id"]
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    expect(episode(page, "Long Crossing")).to_be_visible()
    page.locator(".nav-link[data-view=downloads]").click()
    page.locator("#tab-finished").click()
    row = download_row(page, transfer_id)
    row.locator(".act-play").click()
    wait_for_playable(page)
    assert audio(page, "a.dataset.episodeId") == str(ids["Long Crossing"])
    seek(page, 33)
    page.locator("#player .player-toggle").click()
    saved = wait_until(lambda: (p := playback(daemon, club, "Long Crossing")) and p["positionSeconds"] >= 32 and p, timeout=10, message="the position saved from Downloads")
    assert saved["positionSeconds"] <= 37


LAYOUT = """(player) => {
    const bar = player.getBoundingClientRect();
    const controls = [...player.querySelectorAll('button, select, input')].filter((el) => el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden');
    const boxes = controls.map((el) => [el.getAttribute('aria-label') || el.className, el.getBoundingClientRect()]);
    const problems = [];
    for (const [name, r] of boxes) {
        if (r.width < 16 || r.height < 3) problems.push(`${name} is too small: ${r.width}x${r.height}`);
        if (r.left < bar.left - 1 || r.right > bar.right + 1 || r.top < bar.top - 1 || r.bottom > bar.bottom + 1) problems.push(`${name} sticks out of the bar`);
        if (r.right > window.innerWidth + 1) problems.push(`${name} sticks out of the window`);
    }
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const [a, p] = boxes[i], [b, q] = boxes[j];
        if (p.left < q.right - 1 && q.left < p.right - 1 && p.top < q.bottom - 1 && q.top < p.bottom - 1) problems.push(`${a} overlaps ${b}`);
    }
    const title = player.querySelector('.player-title').getBoundingClientRect();
    if (title.width < 60) problems.push(`the title has ${title.width} px`);
    return {count: controls.length, problems};
}"""


@pytest.mark.parametrize("width", [1280, 1000, 800, 390])
def test_the_player_bar_fits(daemon, pages, player_feeds, width):
    club, _ = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    viewport = PHONE if width == PHONE["width"] else {"width": width, "height": 800}
    page = pages.new(daemon, viewport=viewport, path=f"#/podcasts/{club}")
    play(page, "Long Crossing")
    expect(page.locator("#player").get_by_role("button", name="Transcript")).to_be_visible()
    # With a sleep timer running: its time left is shown too.
    page.get_by_role("combobox", name="Sleep timer").select_option("60")
    expect(page.locator("#player .player-sleep option:checked")).to_have_text(re.compile(r"^60 min · (59:\d\d|1:00:00)$"))
    result = page.locator("#player").evaluate(LAYOUT)
    assert result["count"] >= 9 and not result["problems"], result
    # The page's end is not hidden under the bar.
    page.locator("#main").evaluate("(main) => main.scrollTo(0, main.scrollHeight)")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    last = page.locator("li.episode").last.bounding_box()
    assert last["y"] + last["height"] <= page.locator("#player").bounding_box()["y"] + 1, "the last episode is under the player"
    screenshot(page, f"player-bar-{width}")
