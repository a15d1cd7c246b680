"""An episode's chapters and transcript in the player's panel: listed, followed as it plays,
clicked to seek, the transcript searched; a file the daemon cannot read is a quiet note and the
episode plays."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from conftest import PHONE, screenshot
from helpers import wait_until
from test_player import CHAPTERS, CUES, at, audio, player_feeds, play, seek, subscribe  # noqa: F401 (a fixture)


def test_chapters_and_transcript_follow_and_seek(daemon, pages, player_feeds):  # noqa: F811
    club, _ = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    play(page, "Long Crossing")
    page.locator("#player .player-toggle").click()  # Pause: the test moves the time itself
    wait_until(lambda: audio(page, "a.paused"), timeout=5, message="the pause")
    player = page.locator("#player")
    expect(player.locator(".player-chapter")).to_have_text("Intro")

    # Chapters: listed with their times; the one playing marked; a click seeks there.
    player.get_by_role("button", name="Chapters").click()
    panel = page.locator("#player-panel")
    expect(panel).to_be_visible()
    chapters = panel.locator(".chapter")
    expect(chapters).to_have_count(len(CHAPTERS))
    expect(chapters.locator(".chapter-title")).to_have_text([title for _, title in CHAPTERS])
    expect(chapters.locator(".chapter-time")).to_have_text(["0:00", "0:30", "1:00"])
    expect(panel.locator(".chapter.is-current")).to_have_text(re.compile("Intro"))
    panel.get_by_role("button", name="Open sea, at 1:00").click()
    wait_until(lambda: 60 <= at(page) <= 63, timeout=5, message="the seek to the chapter")
    expect(panel.locator(".chapter.is-current")).to_have_text(re.compile("Open sea"))
    expect(player.locator(".player-chapter")).to_have_text("Open sea")
    page.locator("#player .player-toggle").click()
    wait_until(lambda: audio(page, "a.paused"), timeout=5, message="the pause")
    seek(page, 35)
    expect(player.locator(".player-chapter")).to_have_text("The harbour")

    # The transcript: every line, the one spoken now highlighted.
    panel.get_by_role("tab", name="Transcript").click()
    cues = panel.locator(".cue")
    expect(cues).to_have_count(len(CUES))
    expect(panel.locator(".cue.is-current")).to_have_text(re.compile("The harbour lights fade behind us"))
    expect(panel.locator(".cue.is-current .cue-speaker")).to_have_text("Ben:")
    seek(page, 52)
    expect(panel.locator(".cue.is-current")).to_have_text(re.compile("A lighthouse blinks"))
    # Between two lines (58-60 s), none.
    seek(page, 59.2)
    expect(panel.locator(".cue.is-current")).to_have_count(0)

    # Searched: only the matching lines; a click on one seeks there.
    search = panel.get_by_role("searchbox", name="Search the transcript")
    search.fill("harbour")
    expect(panel.locator(".cue:visible")).to_have_count(2)
    expect(panel.locator(".panel-count")).to_have_text("2 lines match")
    panel.locator(".cue:visible", has_text="We leave the harbour").click()
    wait_until(lambda: 10 <= at(page) <= 13, timeout=5, message="the seek to the line")
    expect(panel.locator(".cue.is-current")).to_have_text(re.compile("We leave the harbour"))
    search.fill("no such words")
    expect(panel.locator(".cue:visible")).to_have_count(0)
    expect(panel.locator(".panel-count")).to_have_text("No line matches.")
    search.fill("")
    expect(panel.locator(".cue:visible")).to_have_count(len(CUES))
    screenshot(page, "player-transcript")


def test_a_long_transcript_scrolls_to_the_line_spoken(daemon, pages, player_feeds):  # noqa: F811
    club, _ = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    page = pages.new(daemon, viewport=PHONE, path=f"#/podcasts/{club}")
    play(page, "Long Crossing")
    page.locator("#player .player-toggle").click()
    page.locator("#player").get_by_role("button", name="Transcript").click()
    panel = page.locator("#player-panel")
    expect(panel.locator(".cue")).to_have_count(len(CUES))
    seek(page, 85)
    current = panel.locator(".cue.is-current")
    expect(current).to_have_text(re.compile("Land is in sight"))
    # In view inside the list, and the panel above the player, inside the window.
    inside = current.evaluate("(el) => { const l = el.parentElement.getBoundingClientRect(), r = el.getBoundingClientRect(); return r.top >= l.top - 1 && r.bottom <= l.bottom + 1; }")
    assert inside, "the current line is scrolled out of the list"
    bar = page.locator("#player").bounding_box()

    def fits():
        box = panel.bounding_box()  # (once it has risen into place)
        return box["y"] >= 0 and box["y"] + box["height"] <= bar["y"] + 1 and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]

    wait_until(fits, timeout=5, message="the panel above the player, inside the window")
    screenshot(page, "player-transcript-phone")

    # Scrolled back by hand: the list stays there while the highlight moves on.
    cue_list = panel.locator(".cue-list")
    cue_list.hover()
    page.mouse.wheel(0, -2000)
    wait_until(lambda: cue_list.evaluate("(l) => l.scrollTop") == 0, timeout=5, message="the list scrolled to its top")
    seek(page, 72)
    expect(panel.locator(".cue.is-current")).to_have_text(re.compile("The wind picks up"))
    assert cue_list.evaluate("(l) => l.scrollTop") == 0, "the transcript jumped away from where the listener scrolled"


def test_unreadable_chapters_and_transcript_are_a_quiet_note(daemon, pages, player_feeds):  # noqa: F811
    club, ids = subscribe(daemon, player_feeds["club"], ("Broken Sidecars",))
    # What the daemon says of them.
    for what in ("chapters", "transcript"):
        try:
            daemon.api("GET", f"/v1/episodes/{ids['Broken Sidecars']}/{what}")
            raise AssertionError(f"the {what} were read")
        except Exception as error:  # noqa: BLE001
            assert getattr(error, "status", None) == 422, error
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    play(page, "Broken Sidecars")
    player = page.locator("#player")
    player.get_by_role("button", name="Chapters").click()
    panel = page.locator("#player-panel")
    expect(panel.locator("#panel-chapters .panel-note")).to_have_text("This episode's chapters can't be read.")
    panel.get_by_role("tab", name="Transcript").click()
    expect(panel.locator("#panel-transcript .panel-note:not(.panel-count)")).to_have_text("This episode's transcript can't be read.")
    expect(player.locator(".player-chapter")).to_be_hidden()
    # No error toast, and it plays on.
    expect(page.locator(".toast-error")).to_have_count(0)
    start = at(page)
    wait_until(lambda: at(page) > start + 0.5 and audio(page, "!a.paused"), timeout=10, message="the episode to play on")
    # An episode without chapters or a transcript offers neither, and the panel closes.
    play(page, "Stream Me", verb="Stream")
    expect(player.get_by_role("button", name="Chapters")).to_be_hidden()
    expect(player.get_by_role("button", name="Transcript")).to_be_hidden()
    expect(panel).to_be_hidden()
