"""The disk is the truth: a finished download whose file was deleted or moved shows as missing
(not as finished, with no Play that fails) and offers to download it again, in the Downloads
view and for a song in Half Tunes."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from playwright.sync_api import expect

from conftest import PREVIEW_RATE
from helpers import create, download_row, search_songs, track, transfer, wait_for_playable, wait_until


def test_a_deleted_download_shows_missing_and_downloads_again(daemon, pages, files, media):
    url = files.add("/missing/tune.wav", media["episode"], "audio/wav")
    old = create(daemon, [url])[0]["id"]
    wait_until(lambda: transfer(daemon, old)["state"] == "completed", message="the download")
    path = Path(transfer(daemon, old)["path"])
    assert path.exists()

    page = pages.new(daemon, path="#/downloads?tab=finished")
    row = download_row(page, old)
    expect(row.locator(".download-status")).to_have_text(re.compile(r"^706 kB · "))
    expect(row.get_by_role("button", name="Play tune.wav")).to_be_visible()
    expect(row.get_by_role("button", name="Download again")).to_have_count(0)

    # Deleted behind the page's back (a file manager, rm): the next look shows it missing.
    path.unlink()
    page.reload()
    expect(row.locator(".download-status")).to_have_text(re.compile(r"^Missing · the file was deleted or moved"))
    expect(row).to_have_attribute("data-missing", "true")
    expect(row.locator(".download-status")).not_to_contain_text("706 kB")
    expect(row.get_by_role("button", name=re.compile("^Play"))).to_have_count(0)
    expect(row.get_by_role("link", name=re.compile("^Save"))).to_have_count(0)
    expect(row.get_by_role("button", name="Delete file")).to_have_count(0)
    expect(row.locator(".sha")).to_have_count(0)
    requests_before = len(files.requests_for("/missing/tune.wav"))

    row.get_by_role("button", name="Download again").click()
    # The file comes back where it was, with the same bytes; a new entry replaces the old one.
    wait_until(path.exists, message="the file to come back")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == hashlib.sha256(media["episode"]).hexdigest()
    assert len(files.requests_for("/missing/tune.wav")) > requests_before
    expect(row).to_have_count(0)
    again = page.locator("li.download", has_text="tune.wav")
    expect(again).to_have_count(1)
    expect(again.locator(".download-status")).to_have_text(re.compile(r"^706 kB · "), timeout=15_000)
    expect(again).not_to_have_attribute("data-missing", "true")
    again.get_by_role("button", name="Play tune.wav").click()
    wait_for_playable(page)
    listed = daemon.transfers()
    assert [(t["url"], t["state"], t.get("fileMissing")) for t in listed] == [(url, "completed", None)], listed
    assert listed[0]["id"] != old


def test_a_song_whose_file_is_gone_offers_download_again(daemon, pages, catalog, files):
    song = next(s for s in catalog.songs if s["trackName"] == "Code")
    preview = f"/previews/{song['trackId']}.wav"
    files.set_rate(preview, None)
    try:
        page = pages.new(daemon)
        search_songs(page, "code")
        row = track(page, "Code")
        row.get_by_role("button", name="Download").click()
        expect(row).to_have_attribute("data-state", "completed", timeout=20_000)
        expect(row.get_by_role("button", name="Play Code")).to_be_visible()
        path = Path(next(t for t in daemon.transfers() if t["session"] == "web")["path"])
        assert path.exists()

        path.unlink()
        search_songs(page, "code")  # the catalog's answer says what became of the file
        expect(row.locator(".tag-missing")).to_have_text("Missing")
        expect(row.get_by_role("button", name=re.compile("^Play"))).to_have_count(0)
        expect(row.get_by_text("Downloaded")).to_have_count(0)
        again = row.get_by_role("button", name="Download again: Code")
        expect(again).to_be_visible()

        again.click()
        wait_until(path.exists, message="the song to come back")
        expect(row.get_by_role("button", name="Play Code")).to_be_visible(timeout=20_000)
        expect(row.get_by_text("Downloaded")).to_be_visible()
        expect(row.locator(".tag-missing")).to_have_count(0)
        row.get_by_role("button", name="Play Code").click()
        state = wait_for_playable(page)
        assert state["error"] is None
        # One entry for the song: the new download (the missing one is forgotten).
        listed = daemon.transfers()
        assert len(listed) == 1 and listed[0]["state"] == "completed" and not listed[0].get("fileMissing"), listed
        assert listed[0]["path"] == str(path)
    finally:
        files.set_rate(preview, PREVIEW_RATE)
