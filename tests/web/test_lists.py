"""Lists: a song's row plays it when downloaded and downloads it otherwise; an episode's row
opens with what can be done with it; a podcast's episodes filtered (unplayed, downloaded, in
progress), searched and listed oldest first; an item without media is not offered for
download."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from conftest import DESKTOP, PHONE, screenshot
from helpers import assert_not_clipped, episode, search_songs, track, wait_for_playable, wait_until
from test_player import audio, player_feeds, subscribe  # noqa: F401 (a fixture)

TITLES = ["Long Crossing", "Broken Sidecars", "Stream Me", "Words Only"]


def test_a_song_row_downloads_then_plays(daemon, pages, catalog, files):
    song = next(s for s in catalog.songs if s["trackName"] == "Park Bench People")
    path = f"/previews/{song['trackId']}.wav"
    rate = files.files[path].rate
    files.set_rate(path, None)  # no need to watch it download
    try:
        page = pages.new(daemon)
        search_songs(page, "park bench people")
        row = track(page, "Park Bench People")
        expect(row).to_have_attribute("data-state", "none")
        row.locator(".track-subtitle").click()  # not a button: the row itself
        expect(row).to_have_class(re.compile(r"\bis-done\b"), timeout=20_000)
        assert [t for t in daemon.transfers() if t["url"].endswith(path)], "no download was made"
        expect(page.locator("#player")).to_be_hidden()

        row.locator(".track-title").click()
        wait_for_playable(page)
        wait_until(lambda: audio(page, "!a.paused"), timeout=10, message="the song to play")
        assert audio(page, "a.dataset.trackId") == str(song["trackId"])
        expect(row).to_have_class(re.compile(r"\bis-playing\b"))
        row.locator(".track-title").click()
        wait_until(lambda: audio(page, "a.paused"), timeout=5, message="a second click to pause")
    finally:
        files.set_rate(path, rate)


def rows(page):
    return page.locator("li.episode .episode-title")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_episodes_open_filter_search_and_order(daemon, pages, player_feeds, viewport):  # noqa: F811
    club, ids = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    daemon.api("PUT", f"/v1/episodes/{ids['Broken Sidecars']}/playback", {"positionSeconds": 30, "durationSeconds": 90})
    daemon.api("PUT", f"/v1/episodes/{ids['Stream Me']}/playback", {"played": True})
    page = pages.new(daemon, viewport=viewport, path=f"#/podcasts/{club}")
    expect(rows(page)).to_have_text(TITLES)
    expect(page.locator(".episode-count")).to_have_text("4 episodes")

    # An episode without media: nothing to download or stream.
    words = episode(page, "Words Only")
    expect(words.locator(".tag-none")).to_have_text("No media")
    expect(words.get_by_role("button", name=re.compile("^(Download|Stream|Play) "))).to_have_count(0)

    # A row opens with a click anywhere on it but its buttons, and closes again.
    stream = episode(page, "Stream Me")
    stream.locator(".episode-meta").click()
    expect(stream).to_have_class(re.compile(r"\bis-open\b"))
    expect(stream.locator(".episode-open")).to_have_attribute("aria-expanded", "true")
    more = stream.locator(".episode-more")
    expect(more.get_by_role("button", name="Stream Stream Me")).to_be_visible()
    expect(more.locator(".act-download-labelled")).to_be_visible()
    for button in more.get_by_role("button").all():
        assert_not_clipped(button)
    screenshot(page, f"episode-open-{'phone' if viewport == PHONE else 'desktop'}")
    stream.locator(".episode-meta").click()
    expect(more).to_be_hidden()
    # The downloaded one opens with a labelled Play; Words Only with none.
    episode(page, "Long Crossing").locator(".episode-open").click()
    expect(episode(page, "Long Crossing").locator(".episode-more .act-play-labelled")).to_have_text("Play")
    words.locator(".episode-open").click()
    expect(words.locator(".episode-open")).to_have_attribute("aria-expanded", "true")
    expect(words.locator(".episode-more").get_by_role("button", name=re.compile("^(Download|Stream|Play)"))).to_have_count(0)

    # Filters.
    filters = page.get_by_role("group", name="Show episodes")
    for button in filters.get_by_role("button").all():
        assert_not_clipped(button)
    filters.get_by_role("button", name="Unplayed").click()
    expect(rows(page)).to_have_text(["Long Crossing", "Broken Sidecars", "Words Only"])
    expect(page.locator(".episode-count")).to_have_text("3 of 4 episodes")
    assert "filter=unplayed" in page.url
    filters.get_by_role("button", name="Downloaded").click()
    expect(rows(page)).to_have_text(["Long Crossing"])
    filters.get_by_role("button", name="In progress").click()
    expect(rows(page)).to_have_text(["Broken Sidecars"])
    # A reload keeps the filter (it is in the address).
    page.reload()
    expect(rows(page)).to_have_text(["Broken Sidecars"])
    filters.get_by_role("button", name="All").click()
    expect(rows(page)).to_have_text(TITLES)

    # Search within the show: titles and show notes.
    search = page.get_by_role("searchbox", name="Search this show")
    search.fill("stream")
    expect(rows(page)).to_have_text(["Stream Me"])
    search.fill("without media")
    expect(rows(page)).to_have_text(["Words Only"])
    search.fill("nothing like this")
    expect(rows(page)).to_have_count(0)
    expect(page.locator(".episode-none")).to_contain_text("No episode matches.")
    page.get_by_role("button", name="Show all").click()
    expect(rows(page)).to_have_text(TITLES)
    expect(search).to_have_value("")

    # Oldest first, kept by the daemon.
    switch = page.get_by_role("switch", name="Oldest first")
    expect(switch).not_to_be_checked()
    switch.click()
    expect(rows(page)).to_have_text(list(reversed(TITLES)))
    wait_until(lambda: daemon.api("GET", f"/v1/podcasts/{club}")["podcast"].get("oldestFirst") is True, timeout=5, message="oldest first in the daemon")
    page.reload()
    expect(rows(page)).to_have_text(list(reversed(TITLES)))
    expect(page.get_by_role("switch", name="Oldest first")).to_be_checked()
    screenshot(page, f"episodes-oldest-first-{'phone' if viewport == PHONE else 'desktop'}")
    page.get_by_role("switch", name="Oldest first").click()
    expect(rows(page)).to_have_text(TITLES)


@pytest.mark.parametrize("viewport", [PHONE], ids=["phone"])
def test_a_song_without_a_preview_is_not_offered_for_download(daemon, pages, catalog, viewport):
    song = next(s for s in catalog.songs if s["trackName"] == "Touch")
    preview = song.pop("previewUrl")
    try:
        page = pages.new(daemon, viewport=viewport)
        search_songs(page, "touch")
        row = track(page, "Touch")
        expect(row.locator(".tag-none")).to_have_text("No preview")
        assert_not_clipped(row.locator(".tag-none"))
        expect(row.get_by_role("button")).to_have_count(0)
        # A click on the row does nothing either.
        row.locator(".track-title").click()
        expect(row).to_have_attribute("data-state", "none")
        assert not [t for t in daemon.transfers() if "/previews/" in t["url"]]
    finally:
        song["previewUrl"] = preview
