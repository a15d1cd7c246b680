"""Half Tunes: search → download → progress → pause → resume → finished → play."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

from helpers import fraction_of, search_songs, track, wait_for_playable, wait_until


def test_search_download_pause_resume_finish_and_play(daemon, pages, catalog, files):
    page = pages.new(daemon)
    rows = search_songs(page, "jose james")
    expect(page.locator(".list-summary")).to_have_text("50 songs for “jose james”")
    row = track(page, "Desire")
    expect(row.locator(".track-subtitle")).to_have_text("Jose James · The Dreamer")
    expect(row.locator(".track-duration")).to_have_text("7:29")
    expect(row.locator(".art img")).to_have_attribute("src", re.compile(r"^http://127\.0\.0\.1:\d+/art/\d\.png$"))
    assert rows.count() == 50
    # The term reached the catalog intact (a space is not a "+").
    assert any(r.get("term") == "jose james" for r in catalog.requests)

    row.get_by_role("button", name="Download").click()
    label = row.locator(".progress-text")
    expect(label).to_have_text(re.compile(r"^\d+\.\d% of 2\.1 MB$"))
    bar = row.get_by_role("progressbar")
    expect(bar).to_be_visible()

    # The bar moves.
    first = wait_until(lambda: (f := fraction_of(label.text_content())) > 0.05 and f, message="progress above 5%")
    second = wait_until(lambda: (f := fraction_of(label.text_content())) > first + 0.05 and f, message="the progress to move")
    assert 0 < first < second < 1
    assert float(bar.get_attribute("aria-valuenow")) > 0

    # Every text the label shows from here on, as the page renders it.
    label.evaluate(
        """node => {
            window.labelTexts = [];
            new MutationObserver(() => window.labelTexts.push(node.textContent))
                .observe(node, {childList: true, characterData: true, subtree: true});
        }"""
    )
    with page.expect_response(lambda r: r.url.endswith("/pause") and r.request.method == "POST") as answer:
        row.get_by_role("button", name="Pause download").click()
    expect(label).to_have_text(re.compile(r"^Paused · \d+\.\d% of 2\.1 MB$"))
    expect(row).to_have_attribute("data-state", "paused")
    # The pause answers once the download has stopped, with the bytes it kept: the label comes
    # to them and stays there.
    paused = answer.value.json()
    assert paused["state"] == "paused" and paused["bytesReceived"] > 0, paused
    wait_until(lambda: abs(fraction_of(label.text_content()) - paused["bytesReceived"] / paused["totalBytes"]) < 0.0006,
               message=f"the label to show the {paused['bytesReceived']} bytes kept")
    paused_at = label.text_content()
    time.sleep(1.0)
    assert label.text_content() == paused_at, "a paused download must not move"
    web = next(t for t in daemon.transfers() if t["session"] == "web")
    assert web["bytesReceived"] == paused["bytesReceived"], web
    # Never backwards on the way: the pause is journaled before the last bytes are (it showed
    # "Paused · 0.0%" for a moment when it came before the first checkpoint).
    shown = [fraction_of(text) for text in page.evaluate("window.labelTexts") if "%" in text]
    assert shown and min(shown) >= second, shown
    expect(row.get_by_role("button", name="Resume download")).to_be_visible()

    row.get_by_role("button", name="Resume download").click()
    expect(label).not_to_contain_text("Paused")
    expect(row).to_have_attribute("data-state", "completed", timeout=30_000)
    expect(row.get_by_text("Downloaded")).to_be_visible()
    expect(label).to_be_hidden()
    # The resume asked for the rest of the file, not all of it again.
    ranges = [r for (_, _, r) in files.requests_for(f"/previews/{catalog.songs[0]['trackId']}.wav") if r]
    assert ranges and ranges[-1].startswith("bytes=") and not ranges[-1].startswith("bytes=0-"), ranges

    row.get_by_role("button", name="Play Desire").click()
    state = wait_for_playable(page)
    assert state["error"] is None and abs(state["duration"] - 24) < 0.5, state
    expect(page.locator("#player .player-title")).to_have_text("Desire")
    expect(row.get_by_role("button", name="Pause Desire")).to_be_visible()
    # Served with Range: seeking works.
    page.evaluate("document.querySelector('#player-audio').currentTime = 20")
    wait_until(lambda: page.evaluate("document.querySelector('#player-audio').currentTime") >= 20, message="the seek")
    size = len(files.files[f"/previews/{catalog.songs[0]['trackId']}.wav"].data)
    partial = page.evaluate(
        """src => fetch(src, {headers: {Range: 'bytes=100-199'}})
            .then(async r => ({status: r.status, range: r.headers.get('Content-Range'), length: (await r.arrayBuffer()).byteLength}))""",
        state["src"],
    )
    assert partial == {"status": 206, "range": f"bytes 100-199/{size}", "length": 100}, partial

    # The daemon agrees with the page.
    transfer = next(t for t in daemon.transfers() if t["session"] == "web")
    assert transfer["state"] == "completed" and transfer["folder"] == "Music"
    assert transfer["path"].endswith("Jose James - Desire.wav")


def test_enter_searches_typing_replaces_the_search_in_flight_and_tab_order(daemon, pages, catalog):
    page = pages.new(daemon)
    field = page.locator("#search-input")
    expect(field).to_be_focused()
    expect(page.get_by_text("Find something to listen to")).to_be_visible()

    field.press_sequentially("velvet")
    field.press("Enter")
    expect(page.locator(".list-summary")).to_have_text("1 song for “velvet”")
    expect(page).to_have_url(re.compile(r"#/search\?q=velvet$"))

    # A slow search, then a new one before it answers: only the new one's results show.
    field.fill("slow song")
    field.press("Enter")
    expect(page.locator(".loading-line")).to_be_visible()
    field.fill("code")
    field.press("Enter")
    expect(page.locator(".list-summary")).to_have_text("1 song for “code”")
    wait_until(lambda: "slow song" in catalog.answered, message="the slow answer")
    expect(page.locator(".list-summary")).to_have_text("1 song for “code”")
    expect(page.locator(".track-title")).to_have_text(["Code"])
    expect(page.locator(".error-box")).to_have_count(0)
    assert any(r.get("term") == "slow song" for r in catalog.requests)

    # Tab order: the search field, its button, then the first result's action.
    field.focus()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Search", exact=True)).to_be_focused()
    page.keyboard.press("Tab")
    expect(track(page, "Code").get_by_role("button", name="Download")).to_be_focused()
    # Enter on the focused button starts the download.
    page.keyboard.press("Enter")
    expect(track(page, "Code")).not_to_have_attribute("data-state", "none")

    # Typing alone searches too, once the typing pauses.
    field.fill("")
    expect(page.get_by_text("Find something to listen to")).to_be_visible()
    field.press_sequentially("warrior", delay=30)
    expect(page.locator(".list-summary")).to_have_text("3 songs for “warrior”")


def test_catalog_throttling_shows_a_readable_message(daemon, pages):
    page = pages.new(daemon)
    field = page.locator("#search-input")
    field.fill("throttle me")
    field.press("Enter")
    error = page.locator(".error-box")
    expect(error).to_contain_text("Apple's catalog is limiting requests; try again in a minute.")
    expect(error.get_by_role("button", name="Try again")).to_be_visible()
    # And a search that works afterwards replaces the message.
    field.fill("velvet")
    field.press("Enter")
    expect(page.locator(".error-box")).to_have_count(0)
    expect(page.locator(".track-title")).to_have_text(["Velvet"])


def test_rows_keep_their_state_when_the_list_is_rebuilt_or_the_page_reopened(daemon, pages, catalog, files):
    song = catalog.songs[1]  # Love Conversation
    files.set_rate(f"/previews/{song['trackId']}.wav", 100_000)
    try:
        page = pages.new(daemon)
        search_songs(page, "jose james")
        row = track(page, "Love Conversation")
        row.get_by_role("button", name="Download").click()
        expect(row.locator(".progress-text")).to_have_text(re.compile(r"% of 2\.1 MB"))
        row.get_by_role("button", name="Pause download").click()
        expect(row.locator(".progress-text")).to_contain_text("Paused")

        # Another search, then the first again: the row is rebuilt and still paused.
        search_songs(page, "code")
        expect(page.locator(".track-title")).to_have_text(["Code"])
        search_songs(page, "jose james")
        expect(track(page, "Love Conversation").locator(".progress-text")).to_contain_text("Paused")
        # Scrolled far down and back: still right.
        page.locator("li.track").last.scroll_into_view_if_needed()
        track(page, "Love Conversation").scroll_into_view_if_needed()
        expect(track(page, "Love Conversation")).to_have_attribute("data-state", "paused")

        # A new tab (the state comes from the daemon, with the search results).
        again = pages.new(daemon, path="#/search?q=jose%20james")
        expect(track(again, "Love Conversation").locator(".progress-text")).to_contain_text("Paused")
        # Resumed in one tab, the other follows.
        track(again, "Love Conversation").get_by_role("button", name="Resume download").click()
        expect(track(page, "Love Conversation").locator(".progress-text")).not_to_contain_text("Paused")
        track(page, "Love Conversation").get_by_role("button", name="Cancel download").click()
        expect(track(again, "Love Conversation").get_by_role("button", name=re.compile("^Download"))).to_be_visible()
    finally:
        files.set_rate(f"/previews/{song['trackId']}.wav", 300_000)
