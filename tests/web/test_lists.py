"""Lists: a song's row plays it when downloaded and downloads it otherwise; an episode's row
opens with what can be done with it; a podcast's episodes filtered (unplayed, downloaded, in
progress), searched and listed oldest first; an item without media is not offered for
download."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from conftest import DESKTOP, PHONE, screenshot
from helpers import assert_not_clipped, audio, episode, search_songs, track, wait_for_playable, wait_until
from test_player import player_feeds, subscribe  # noqa: F401 (a fixture)

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
    filters.scroll_into_view_if_needed()  # the open rows above may have scrolled it off
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


def test_an_episodes_file_is_deleted_from_the_podcast_page(daemon, pages, player_feeds):  # noqa: F811
    club, ids = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    path = next(t["path"] for t in daemon.transfers() if t["state"] == "completed")
    assert Path(path).exists()
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    row = episode(page, "Long Crossing")
    row.locator(".episode-open").click()
    delete = row.locator(".episode-more").get_by_role("button", name="Delete file")
    expect(delete).to_be_visible()
    # Another row that is not downloaded has nothing to delete.
    other = episode(page, "Broken Sidecars")
    other.locator(".episode-open").click()
    expect(other.locator(".act-delete-file")).to_have_count(0)

    delete.click()  # asks once more
    expect(row.locator(".act-delete-file")).to_contain_text("Delete the file?")
    assert Path(path).exists(), "one click deleted the file"
    row.locator(".act-delete-file").click()
    expect(page.locator(".toast", has_text="Deleted the file of “Long Crossing”")).to_be_visible()
    expect(row).to_have_attribute("data-state", "idle")
    expect(row.locator(".episode-more .act-download-labelled")).to_be_visible()
    expect(row.locator(".act-delete-file")).to_have_count(0)
    wait_until(lambda: not Path(path).exists(), timeout=5, message="the file to be deleted")
    detail = daemon.api("GET", f"/v1/podcasts/{club}")
    assert next(e for e in detail["episodes"] if e["id"] == ids["Long Crossing"])["state"] == "notDownloaded"
    assert not [t for t in daemon.transfers() if t["path"] == path], "the transfer was not forgotten"
    # A reload agrees: the episode can be downloaded again.
    page.reload()
    expect(episode(page, "Long Crossing").get_by_role("button", name="Download Long Crossing")).to_be_visible()


def test_a_podcasts_refresh_interval_is_chosen_on_its_page(daemon, pages, player_feeds):  # noqa: F811
    club, _ = subscribe(daemon, player_feeds["club"])
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    interval = page.get_by_role("combobox", name="Refresh")
    expect(interval).to_have_value("0")
    expect(interval.locator("option:checked")).to_have_text("Hourly (default)")
    interval.select_option(label="Every 6 hours")
    expect(page.locator(".toast", has_text="Refresh: Every 6 hours.")).to_be_visible()
    wait_until(lambda: daemon.api("GET", f"/v1/podcasts/{club}")["podcast"].get("refreshMinutes") == 360, timeout=5, message="the interval in the daemon")
    # One set elsewhere (the CLI's --refresh 90) shows as itself; back to the default clears it.
    daemon.api("PATCH", f"/v1/podcasts/{club}", {"refreshMinutes": 90})
    page.reload()
    expect(page.get_by_role("combobox", name="Refresh")).to_have_value("90")
    expect(page.get_by_role("combobox", name="Refresh").locator("option:checked")).to_have_text("Every 90 minutes")
    page.get_by_role("combobox", name="Refresh").select_option("0")
    wait_until(lambda: "refreshMinutes" not in daemon.api("GET", f"/v1/podcasts/{club}")["podcast"], timeout=5, message="the default again")
