"""Where the listener is: the player saves its position to the daemon (while playing, on pause,
on seeking, at the end, when the page goes away), another browser starts where the first one
stopped, an episode heard to the end shows as played, and episodes are marked played or
unplayed by hand, one or all at once."""

from __future__ import annotations

import datetime
import re

import pytest
from playwright.sync_api import Page, expect

from conftest import PHONE, screenshot
from helpers import assert_not_clipped, audio, episode, episodes, playback, search_songs, track, wait_for_playable, wait_until
from servers import rss, wav

# Long enough to seek to a minute in: 90 s of 8 kHz mono (1.4 MB), served at full speed.
SECONDS = 90
TITLES = ["Chapter One", "Chapter Two", "Chapter Three"]


@pytest.fixture(scope="session")
def listening_feed(files) -> str:
    audio = wav(SECONDS, rate=8000, seed=5)
    now = datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.timezone.utc)
    items = []
    for n, title in enumerate(TITLES, start=1):
        url = files.add(f"/listening/chapter-{n}.wav", audio, "audio/wav")
        items.append({"guid": f"chapter-{n}", "title": title, "date": now - datetime.timedelta(days=n), "url": url, "length": len(audio), "duration": f"1:{SECONDS - 60:02d}"})
    return files.add("/feeds/listening.xml", rss("Ferry Listening Club", items, author="The Ferry Crew"), "application/rss+xml")


def subscribed(daemon, feed: str) -> tuple[int, dict[str, int]]:
    """Subscribes with the API and downloads every episode → (podcast id, episode id by title)."""
    detail = daemon.api("POST", "/v1/podcasts", {"url": feed})
    podcast_id = detail["podcast"]["id"]
    ids = {e["title"]: e["id"] for e in detail["episodes"]}
    for episode_id in ids.values():
        daemon.api("POST", f"/v1/episodes/{episode_id}/download", {"session": "web"})
    wait_until(lambda: all(e["state"] == "downloaded" for e in episodes(daemon, podcast_id)), message="the episodes to download")
    return podcast_id, ids


def play(page: Page, title: str):
    episode(page, title).get_by_role("button", name=re.compile(f"^Play {title}")).click()
    wait_for_playable(page)
    wait_until(lambda: audio(page, "!a.paused && a.currentTime > 0"), timeout=10, message="the episode to play")


def test_a_position_saved_in_one_browser_resumes_in_another(daemon, pages, listening_feed):
    podcast_id, _ = subscribed(daemon, listening_feed)
    first = pages.new(daemon, path=f"#/podcasts/{podcast_id}")
    row = episode(first, "Chapter One")
    expect(row.locator(".episode-played")).to_be_hidden()
    expect(row.locator(".episode-progress")).to_be_hidden()
    play(first, "Chapter One")
    audio(first, "a.currentTime = 60")
    wait_until(lambda: audio(first, "a.currentTime >= 60 && !a.seeking"), timeout=10, message="the seek")
    first.locator("#player .player-toggle").click()  # Pause
    wait_until(lambda: audio(first, "a.paused"), timeout=5, message="the pause")

    # The daemon has it (saved on seeking and on pausing), and the row says what is left.
    saved = wait_until(lambda: (p := playback(daemon, podcast_id, "Chapter One")) and p["positionSeconds"] >= 59.5 and p, timeout=10, message="the saved position")
    assert 59.5 <= saved["positionSeconds"] <= 64 and not saved["played"], saved
    expect(row.locator(".episode-progress")).to_have_text(re.compile(r"^\d+ s left$"))
    expect(row.get_by_role("button", name="Mark Chapter One as played")).to_be_visible()
    screenshot(first, "playback-paused")

    # Another browser (its own cookies and storage) starts there.
    second = pages.new(daemon, path=f"#/podcasts/{podcast_id}")
    expect(episode(second, "Chapter One").locator(".episode-progress")).to_have_text(re.compile(r"^\d+ s left$"))
    episode(second, "Chapter One").get_by_role("button", name=re.compile("^Play Chapter One")).click()
    wait_for_playable(second)
    wait_until(lambda: audio(second, "!a.paused && !a.seeking && a.currentTime > 0"), timeout=10, message="the episode to play")
    start = audio(second, "a.currentTime")
    assert 59 <= start <= 68, f"started at {start} s, not where the first browser paused"

    # Playing on, then the page goes away without a pause: the position it had when it closed
    # arrives (not the one of the seek, nor of the last save every 5 s).
    audio(second, "a.currentTime = 75")
    wait_until(lambda: audio(second, "a.currentTime >= 77.5 && !a.seeking"), timeout=10, message="the episode to play on")
    at = audio(second, "a.currentTime")
    second.close(run_before_unload=True)
    saved = wait_until(lambda: (p := playback(daemon, podcast_id, "Chapter One")) and p["positionSeconds"] >= at - 0.5 and p, timeout=10, message=f"the position at {at} s, saved as the page closed")
    assert saved["positionSeconds"] <= at + 2 and not saved["played"], saved


def test_playing_to_the_end_marks_it_played(daemon, pages, listening_feed):
    podcast_id, _ = subscribed(daemon, listening_feed)
    page = pages.new(daemon, path=f"#/podcasts/{podcast_id}")
    row = episode(page, "Chapter Two")
    play(page, "Chapter Two")
    audio(page, "a.currentTime = a.duration - 1.5")
    wait_until(lambda: audio(page, "a.ended"), timeout=15, message="the episode to end")

    expect(row.locator(".episode-played")).to_be_visible()
    expect(row.locator(".episode-played")).to_have_text("Played")
    expect(row.locator(".episode-progress")).to_be_hidden()
    expect(row.get_by_role("button", name="Mark Chapter Two as unplayed")).to_be_visible()
    saved = wait_until(lambda: playback(daemon, podcast_id, "Chapter Two"), message="the saved playback")
    assert saved["played"] is True, saved
    # The others are not.
    assert playback(daemon, podcast_id, "Chapter One") is None
    expect(episode(page, "Chapter One").locator(".episode-played")).to_be_hidden()

    # Played from the start again (not from its end), in a fresh page.
    page.reload()
    play(page, "Chapter Two")
    assert audio(page, "a.currentTime") < 10


@pytest.mark.parametrize("viewport", [PHONE], ids=["phone"])
def test_mark_all_played_then_one_unplayed(daemon, pages, listening_feed, viewport):
    podcast_id, ids = subscribed(daemon, listening_feed)
    # One begun elsewhere (another browser, the API): the page shows what is left of it.
    daemon.api("PUT", f"/v1/episodes/{ids['Chapter Three']}/playback", {"positionSeconds": 30, "durationSeconds": SECONDS})
    page = pages.new(daemon, viewport=viewport, path=f"#/podcasts/{podcast_id}")
    three = episode(page, "Chapter Three")
    expect(three.locator(".episode-progress")).to_have_text("1 min left")
    three.locator(".episode-progress").scroll_into_view_if_needed()
    assert_not_clipped(three.locator(".episode-progress"))
    expect(page.locator("li.episode .episode-played:visible")).to_have_count(0)
    screenshot(page, "playback-begun-phone")

    page.get_by_role("button", name="Mark all played").click()
    expect(page.locator(".toast", has_text="Every episode is marked played.")).to_be_visible()
    expect(page.locator("li.episode .episode-played:visible")).to_have_count(len(TITLES))
    expect(page.locator("li.episode .episode-progress:visible")).to_have_count(0)
    expect(page.get_by_role("button", name="Mark all played")).to_be_hidden()
    assert all(e["playback"]["played"] for e in episodes(daemon, podcast_id))
    for title in TITLES:
        mark = episode(page, title).get_by_role("button", name=f"Mark {title} as unplayed")
        expect(mark).to_be_visible()
        mark.scroll_into_view_if_needed()
        assert_not_clipped(mark)

    # One unplayed again: it keeps where it was (Chapter Three was begun at 30 s).
    three.get_by_role("button", name="Mark Chapter Three as unplayed").click()
    expect(three.locator(".episode-played")).to_be_hidden()
    expect(three.locator(".episode-progress")).to_have_text("1 min left")
    expect(three.get_by_role("button", name="Mark Chapter Three as played")).to_be_visible()
    expect(page.get_by_role("button", name="Mark all played")).to_be_visible()
    screenshot(page, "playback-marked-phone")
    saved = playback(daemon, podcast_id, "Chapter Three")
    assert saved["played"] is False and saved["positionSeconds"] == 30, saved
    assert [playback(daemon, podcast_id, t)["played"] for t in TITLES] == [True, True, False]

    # As the daemon keeps it: the same after a reload.
    page.reload()
    expect(page.locator("li.episode .episode-played:visible")).to_have_count(2)
    expect(episode(page, "Chapter Three").locator(".episode-played")).to_be_hidden()

    # And played by hand once more.
    episode(page, "Chapter Three").get_by_role("button", name="Mark Chapter Three as played").click()
    expect(episode(page, "Chapter Three").locator(".episode-played")).to_be_visible()
    wait_until(lambda: playback(daemon, podcast_id, "Chapter Three")["played"], timeout=5, message="played in the daemon")


def test_a_song_resumes_where_it_was_paused(daemon, pages, catalog, files):
    song = next(s for s in catalog.songs if s["trackName"] == "Winter Wind")
    path = f"/previews/{song['trackId']}.wav"
    rate = files.files[path].rate
    files.set_rate(path, None)  # no need to watch it download
    try:
        preview = daemon.api("POST", "/v1/catalog/previews", {"trackId": song["trackId"], "session": "web"})
        wait_until(lambda: daemon.api("GET", f"/v1/transfers/{preview['id']}")["state"] == "completed", message="the preview to download")
    finally:
        files.set_rate(path, rate)

    def saved():
        results = daemon.api("GET", "/v1/catalog/search?term=winter%20wind&media=music")["results"]
        return next(r for r in results if r.get("trackId") == song["trackId"]).get("playback")

    first = pages.new(daemon)
    search_songs(first, "winter wind")
    track(first, "Winter Wind").get_by_role("button", name="Play Winter Wind").click()
    wait_for_playable(first)
    audio(first, "a.currentTime = 10")
    wait_until(lambda: audio(first, "a.currentTime >= 10 && !a.seeking"), timeout=10, message="the seek")
    first.locator("#player .player-toggle").click()  # Pause
    position = wait_until(lambda: (p := saved()) and p["positionSeconds"] >= 9.5 and p["positionSeconds"], timeout=10, message="the song's saved position")
    assert position <= 14

    # Another browser starts the song there.
    second = pages.new(daemon)
    search_songs(second, "winter wind")
    track(second, "Winter Wind").get_by_role("button", name="Play Winter Wind").click()
    wait_for_playable(second)
    wait_until(lambda: audio(second, "!a.paused && !a.seeking && a.currentTime > 0"), timeout=10, message="the song to play")
    start = audio(second, "a.currentTime")
    assert position - 1 <= start <= position + 5, f"started at {start} s, not at {position} s"
