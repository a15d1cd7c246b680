"""Up Next: episodes and songs added at its end or to play next, reordered (buttons, dragging)
and removed in the player's panel, kept by the daemon; when an item ends the next starts and
leaves the list, unless the sleep timer stops at the end."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from conftest import PHONE, screenshot
from helpers import episode, search_songs, track, wait_for_playable, wait_until
from test_player import SECONDS, audio, player_feeds, play, seek, subscribe  # noqa: F401 (a fixture)


def up_next(daemon) -> list[tuple[str, str]]:
    return [(item["kind"], item["title"]) for item in daemon.api("GET", "/v1/up-next")["items"]]


def add(page, title: str, label: str):
    row = episode(page, title)
    if "is-open" not in (row.get_attribute("class") or ""):
        row.locator(".episode-open").click()
    row.locator(".episode-more").get_by_role("button", name=f"{label}: {title}").click()


def wait_list(daemon, expected: list[str]):
    wait_until(lambda: [t for _, t in up_next(daemon)] == expected, timeout=5, message=f"Up Next to be {expected}")


def test_up_next_is_ordered_and_plays_on(daemon, pages, player_feeds):  # noqa: F811
    club, ids = subscribe(daemon, player_feeds["club"], ("Long Crossing", "Broken Sidecars"))
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    play(page, "Long Crossing")
    page.locator("#player .player-toggle").click()  # Pause
    add(page, "Stream Me", "Add to Up Next")
    expect(page.locator(".toast", has_text="“Stream Me” is in Up Next.")).to_be_visible()
    add(page, "Broken Sidecars", "Add to Up Next")
    wait_list(daemon, ["Stream Me", "Broken Sidecars"])
    add(page, "Broken Sidecars", "Play next")
    wait_list(daemon, ["Broken Sidecars", "Stream Me"])

    # The panel: the list in order, moved with buttons, removed.
    page.locator("#player").get_by_role("button", name="Up Next").click()
    panel = page.locator("#player-panel")
    titles = panel.locator(".upnext-title")
    expect(titles).to_have_text(["Broken Sidecars", "Stream Me"])
    panel.get_by_role("button", name="Move Stream Me up").click()
    expect(titles).to_have_text(["Stream Me", "Broken Sidecars"])
    wait_list(daemon, ["Stream Me", "Broken Sidecars"])
    expect(panel.get_by_role("button", name="Move Stream Me up")).to_be_disabled()
    panel.get_by_role("button", name="Remove Broken Sidecars from Up Next").click()
    expect(titles).to_have_text(["Stream Me"])
    wait_list(daemon, ["Stream Me"])
    add(page, "Broken Sidecars", "Add to Up Next")
    expect(titles).to_have_text(["Stream Me", "Broken Sidecars"])
    # Dragging a row onto another puts it there.
    panel.locator(".upnext-item", has_text="Broken Sidecars").drag_to(panel.locator(".upnext-item", has_text="Stream Me"))
    expect(titles).to_have_text(["Broken Sidecars", "Stream Me"])
    wait_list(daemon, ["Broken Sidecars", "Stream Me"])
    screenshot(page, "player-up-next")

    # Played to the end: the first of Up Next starts and leaves the list.
    page.locator("#player .player-toggle").click()
    seek(page, SECONDS - 1.5)
    wait_until(lambda: audio(page, "a.dataset.episodeId") == str(ids["Broken Sidecars"]), timeout=15, message="the next episode to start")
    wait_for_playable(page)
    wait_until(lambda: audio(page, "!a.paused"), timeout=10, message="the next episode to play")
    expect(page.locator("#player .player-title")).to_have_text("Broken Sidecars")
    wait_list(daemon, ["Stream Me"])
    expect(titles).to_have_text(["Stream Me"])
    # The one heard to the end is played.
    wait_until(lambda: next(e for e in daemon.api("GET", f"/v1/podcasts/{club}")["episodes"] if e["title"] == "Long Crossing").get("playback", {}).get("played"), timeout=5, message="Long Crossing played")

    # Asleep at the end: nothing starts after it, and the list stays.
    page.get_by_role("combobox", name="Sleep timer").select_option("end")
    seek(page, SECONDS - 1.5)
    wait_until(lambda: audio(page, "a.ended"), timeout=10, message="the episode to end")
    assert audio(page, "a.dataset.episodeId") == str(ids["Broken Sidecars"])
    assert up_next(daemon) == [("episode", "Stream Me")]

    # Played from the panel: it streams (not downloaded), and the list is empty.
    panel.get_by_role("button", name="Play Stream Me now").click()
    wait_until(lambda: audio(page, "a.dataset.source") == "stream" and audio(page, "a.dataset.episodeId") == str(ids["Stream Me"]), timeout=10, message="Stream Me to stream")
    wait_list(daemon, [])
    expect(panel.locator(".panel-note", has_text="Nothing is up next")).to_be_visible()


def test_a_song_in_up_next_at_phone_width(daemon, pages, catalog, files, player_feeds):  # noqa: F811
    song = next(s for s in catalog.songs if s["trackName"] == "Desire")
    path = f"/previews/{song['trackId']}.wav"
    rate = files.files[path].rate
    files.set_rate(path, None)
    try:
        preview = daemon.api("POST", "/v1/catalog/previews", {"trackId": song["trackId"], "session": "web"})
        wait_until(lambda: daemon.api("GET", f"/v1/transfers/{preview['id']}")["state"] == "completed", message="the preview to download")
    finally:
        files.set_rate(path, rate)
    club, ids = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    daemon.api("PUT", "/v1/up-next", {"items": [{"kind": "episode", "id": ids["Long Crossing"]}]})

    page = pages.new(daemon, viewport=PHONE)
    search_songs(page, "desire")
    row = track(page, "Desire")
    row.get_by_role("button", name="Play next: Desire").click()
    wait_until(lambda: up_next(daemon) == [("track", "Desire"), ("episode", "Long Crossing")], timeout=5, message="the song first in Up Next")
    row.get_by_role("button", name="Add to Up Next: Desire").click()
    wait_until(lambda: up_next(daemon) == [("episode", "Long Crossing"), ("track", "Desire")], timeout=5, message="the song last in Up Next")

    # The episode plays and leaves the list; the panel shows the song, nothing cut off.
    page.goto(f"{daemon.url}/#/podcasts/{club}")
    play(page, "Long Crossing")
    wait_until(lambda: up_next(daemon) == [("track", "Desire")], timeout=5, message="the playing episode to leave Up Next")
    page.locator("#player").get_by_role("button", name="Up Next").click()
    panel = page.locator("#player-panel")
    expect(panel.locator(".upnext-title")).to_have_text(["Desire"])
    # (Read at once: the list is drawn again as the daemon answers.)
    boxes = wait_until(lambda: (b := panel.locator(".upnext-item").last.evaluate("(row) => row.isConnected && [...row.querySelectorAll('button')].map((b) => { const r = b.getBoundingClientRect(); return [r.left, r.right, r.width]; })")) and b, timeout=5, message="the row's buttons")
    assert len(boxes) == 4 and all(left >= 0 and right <= PHONE["width"] and width > 20 for left, right, width in boxes), boxes
    screenshot(page, "player-up-next-phone")
    # The song after the episode.
    seek(page, SECONDS - 1.5)
    wait_until(lambda: audio(page, "a.dataset.trackId") == str(song["trackId"]), timeout=15, message="the song to start")
    wait_until(lambda: audio(page, "!a.paused && a.currentTime > 0"), timeout=10, message="the song to play")
    expect(page.locator("#player .player-title")).to_have_text(re.compile("Desire"))
    wait_until(lambda: up_next(daemon) == [], timeout=5, message="Up Next to be empty")


def test_the_first_of_up_next_waits_in_the_player(daemon, pages, player_feeds):  # noqa: F811
    club, ids = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    daemon.api("PUT", "/v1/up-next", {"items": [{"kind": "episode", "id": ids["Stream Me"]}, {"kind": "episode", "id": ids["Long Crossing"]}]})
    daemon.api("PATCH", f"/v1/podcasts/{club}", {"playbackSpeed": 1.5})
    # Nothing playing, and no podcast page seen: the first waits in the bar, paused.
    page = pages.new(daemon, path="#/downloads")
    player = page.locator("#player")
    expect(player).to_be_visible()
    expect(player.locator(".player-title")).to_have_text("Stream Me")
    expect(player.locator(".player-subtitle")).to_have_text("Ferry Player Club")
    assert audio(page, "a.paused") and audio(page, "a.dataset.source") == "stream"
    # At its podcast's speed, found although no page described the episode.
    expect(player.get_by_role("combobox", name="Playback speed")).to_have_value("1.5")
    assert audio(page, "a.playbackRate") == 1.5
    # Still in the list until it plays; the daemon says it has no chapters (no button).
    assert [t for _, t in up_next(daemon)] == ["Stream Me", "Long Crossing"]
    expect(player.get_by_role("button", name="Chapters")).to_be_hidden()
    player.get_by_role("button", name="Up Next").click()
    expect(page.locator("#player-panel .upnext-title")).to_have_text(["Stream Me", "Long Crossing"])

    # Played: it leaves the list. Next (the Media Session's, here the list's "play now"): its
    # chapters are found although no page described the episode.
    player.locator(".player-toggle").click()
    wait_until(lambda: audio(page, "!a.paused && a.currentTime > 0"), timeout=10, message="Stream Me to play")
    wait_list(daemon, ["Long Crossing"])
    page.locator("#player-panel").get_by_role("button", name="Play Long Crossing now").click()
    wait_until(lambda: audio(page, "a.dataset.episodeId") == str(ids["Long Crossing"]) and audio(page, "a.dataset.source") == "file", timeout=10, message="Long Crossing from its file")
    expect(player.get_by_role("button", name="Chapters")).to_be_visible()
    expect(player.locator(".player-chapter")).to_have_text(re.compile("Intro|The harbour|Open sea"))
    wait_list(daemon, [])
