"""Downloads: the download manager's two tabs, adding by URL, details of finished files."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from playwright.sync_api import expect

from conftest import PHONE
from daemon import APIError, free_port
from helpers import wait_for_playable


def test_add_by_url_shows_the_daemons_message_for_a_bad_url(daemon, pages):
    page = pages.new(daemon, path="#/downloads")
    expect(page.get_by_text("Nothing downloading")).to_be_visible()
    field = page.locator("#url-input")
    button = page.get_by_role("button", name="Download", exact=True)

    field.fill("ftp://example.com/file.iso")
    button.click()
    error = page.locator("#add-error")
    expect(error).to_be_visible()
    message = daemon_message(daemon, "ftp://example.com/file.iso")
    expect(error).to_have_text(message)
    expect(field).to_have_attribute("aria-invalid", "true")

    field.fill("this is not a link")
    field.press("Enter")
    expect(error).to_have_text(daemon_message(daemon, "this is not a link"))
    # Typing clears the message; nothing was created.
    field.press_sequentially("x")
    expect(error).to_be_hidden()
    assert daemon.transfers() == []

    # A server that cannot be reached: the transfer waits, and the row says why.
    field.fill(f"http://127.0.0.1:{free_port()}/big.iso")
    field.press("Enter")
    status = page.locator("li.download", has_text="big.iso").locator(".download-status")
    expect(status).to_have_text(re.compile(r"^(Waiting · 127\.0\.0\.1 refused the connection · next try \d\d:\d\d:\d\d|Connecting again · 127\.0\.0\.1 refused the connection\.)$"), timeout=30_000)
    expect(status).to_have_class(re.compile(r"\bis-error\b"))


def daemon_message(daemon, url: str) -> str:
    """What the daemon itself says about this URL (the page must show exactly that)."""
    try:
        daemon.api("POST", "/v1/transfers", {"urls": [url], "session": "web"})
    except APIError as error:
        assert error.status == 400
        return error.error["message"]
    raise AssertionError(f"{url} was accepted")


def test_downloads_progress_details_and_finished_files(daemon, pages, files):
    page = pages.new(daemon, path="#/downloads")
    field = page.locator("#url-input")
    field.fill(files.url("/files/mix.wav"))
    field.press("Enter")
    row = page.locator("li.download").first
    status = row.locator(".download-status")
    # bytes, percent, speed and time left
    expect(status).to_have_text(re.compile(r"^[\d.]+ (B|kB) of 706 kB · \d+\.\d% · [\d.]+ kB/s · \d+ s left$"), timeout=10_000)
    expect(page.locator("#tab-active .tab-count")).to_have_text("1")
    expect(page.locator("#nav-badge")).to_have_text("1")
    row.get_by_role("button", name="Pause download").click()
    expect(status).to_have_text(re.compile(r"^Paused · \d+\.\d% of 706 kB$"))
    row.get_by_role("button", name="Resume download").click()

    # A download from another client (the CLI's session) shows up too.
    daemon.api("POST", "/v1/transfers", {"urls": [files.url("/files/notes.txt")], "session": "cli"})
    expect(page.locator("#tab-finished .tab-count")).to_have_text("1", timeout=10_000)
    expect(page.locator("#tab-finished .tab-count")).to_have_text("2", timeout=20_000)
    expect(page.locator("#tab-active .tab-count")).to_have_text("0")
    expect(page.get_by_text("Nothing downloading")).to_be_visible()

    page.get_by_role("tab", name=re.compile("Finished")).click()
    expect(page).to_have_url(re.compile(r"#/downloads\?tab=finished$"))
    notes = page.locator("li.download", has_text="notes.txt")
    expect(notes.locator(".download-source")).to_contain_text("from cli")
    expect(notes.locator(".download-status")).to_have_text(re.compile(r"^104 kB · [A-Z][a-z]{2} \d{1,2}, \d{4}, \d\d:\d\d [AP]M$"))
    expect(notes.locator(".sha")).to_have_text(hashlib.sha256(files.files["/files/notes.txt"].data).hexdigest())
    save = notes.get_by_role("link", name="Save notes.txt to this computer")
    expect(save).to_have_attribute("href", re.compile(r"^/v1/transfers/\d+/file\?download=1$"))
    with page.expect_download() as download:
        save.click()
    assert download.value.suggested_filename == "notes.txt"
    expect(notes.get_by_role("button", name=re.compile("^Play"))).to_have_count(0)  # not audio

    mix = page.locator("li.download", has_text="mix.wav")
    mix.get_by_role("button", name="Play mix.wav").click()
    wait_for_playable(page)

    # Remove from the list (the file stays), and delete a file (asks twice).
    notes.get_by_role("button", name="Remove from list").click()
    expect(page.locator("li.download", has_text="notes.txt")).to_have_count(0)
    remaining = [t for t in daemon.transfers()]
    assert [t["url"] for t in remaining] == [files.url("/files/mix.wav")]
    mix.get_by_role("button", name="Delete file").click()
    mix.get_by_role("button", name="Click again to delete the file").click()
    expect(page.get_by_text("No finished downloads yet")).to_be_visible()
    expect(page.locator("#player")).to_be_hidden()
    assert not (daemon.library / "Downloads" / "mix.wav").exists()
    assert (daemon.library / "Downloads" / "notes.txt").exists()

    # Cancelling: the download moves to the cancelled tab (not the finished one).
    field.fill(files.url("/episodes/radio-2.wav"))
    field.press("Enter")
    expect(page).to_have_url(re.compile(r"#/downloads$"))
    running = page.locator("li.download", has_text="radio-2.wav")
    expect(running.locator(".download-status")).to_contain_text("% ·")
    running.get_by_role("button", name="Cancel download").click()
    expect(page.get_by_text("Nothing downloading")).to_be_visible()
    expect(page.locator("#tab-cancelled .tab-count")).to_have_text("1")
    page.get_by_role("tab", name=re.compile("Finished")).click()
    expect(page.get_by_text("No finished downloads yet")).to_be_visible()
    page.get_by_role("tab", name=re.compile("Cancelled")).click()
    expect(page).to_have_url(re.compile(r"#/downloads\?tab=cancelled$"))
    expect(page.locator("li.download", has_text="radio-2.wav").locator(".download-status")).to_have_text("Cancelled")


ROOT = Path(__file__).resolve().parents[2]


def test_a_download_whose_certificate_is_not_checked_says_so(daemon, pages, files):
    """`--insecure` (per transfer, or a session's while it is set) is named on its row, in the
    page's language; a checked one says nothing of the kind."""
    data = b"unchecked" * 1000
    url = files.add("/files/unchecked.bin", data, "application/octet-stream")
    checked_url = files.add("/files/checked.bin", data, "application/octet-stream")
    unchecked = daemon.api("POST", "/v1/transfers", {"urls": [url], "session": "lab", "options": {"insecure": True}})["transfers"][0]
    checked = daemon.api("POST", "/v1/transfers", {"urls": [checked_url], "session": "lab"})["transfers"][0]
    for locale, words in (("en-US", "certificate not checked"), ("ru-RU", None)):
        page = pages.new(daemon, path="#/downloads", locale=locale, **({"viewport": PHONE} if locale == "en-US" else {}))
        # Both finished at once: they are under Finished.
        page.locator("#tab-finished").click()
        row = page.locator(f'li.download[data-transfer-id="{unchecked["id"]}"] .download-source')
        other = page.locator(f'li.download[data-transfer-id="{checked["id"]}"] .download-source')
        expect(other).to_be_visible()
        if words is None:
            words = json.loads((ROOT / "Sources/FerryServer/Resources/web/i18n/ru.json").read_text())["transfer.insecure"]
            assert words != "certificate not checked", "translated"
        expect(row).to_contain_text(words)
        assert words not in other.inner_text()
        page.close()
