"""The New download dialog: what `ferry get` takes (several URLs or a file of them, folder, name,
checksum, mirrors, connections, priority, start time, headers), in one request the daemon
checks whole: a bad URL is said next to the field and creates nothing."""

from __future__ import annotations

import hashlib
from playwright.sync_api import Page, expect

from conftest import PHONE, screenshot
from helpers import assert_readable, held_downloads, wait_until

NOTES = b"Ferry downloads anything.\n" * 4000  # the file server's /files/notes.txt


def open_dialog(page: Page):
    page.get_by_role("button", name="New download").click()
    dialog = page.locator("dialog#new-download")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("URLs", exact=True)).to_be_focused()
    return dialog


def test_several_urls_with_their_options(daemon, pages, files, tmp_path):
    urls = held_downloads(files, "dialog", 3)
    folder = tmp_path / "new" / "folder"
    page = pages.new(daemon, path="#/downloads")
    dialog = open_dialog(page)
    dialog.get_by_label("URLs", exact=True).fill("\n".join([urls[0], "# a comment", "", urls[1], urls[2]]))
    dialog.get_by_label("Folder", exact=True).fill(str(folder))
    dialog.get_by_label("Create the folder if it is missing", exact=True).check()
    dialog.get_by_label("Connections", exact=True).fill("2")
    dialog.get_by_label("Priority", exact=True).select_option("high")
    dialog.get_by_label("Start at", exact=True).fill("2099-01-01T06:30")
    dialog.get_by_label("Extra headers", exact=True).fill("X-Test: yes\nAuthorization: Bearer secret")
    dialog.get_by_role("button", name="Download").click()

    expect(dialog).to_be_hidden()
    expect(page.get_by_text("Added 3 downloads.")).to_be_visible()
    created = sorted(daemon.transfers(), key=lambda t: t["id"])
    assert [t["url"] for t in created] == urls
    for t in created:
        assert t["session"] == "web" and t["priority"] == "high", t
        assert t["options"]["connections"] == 2 and (t.get("startAfter") or t["options"]["startAfter"]).startswith("2099-01-01T06:30:00"), t
        assert t["options"]["headers"]["X-Test"] == "yes" and t["options"]["headers"]["Authorization"] == "<redacted>", t
        assert t["directory"] == str(folder), t
        assert t["state"] == "queued", t
    assert folder.is_dir(), "the folder was created"
    # They show in the list at once, with their priority.
    for t in created:
        expect(page.locator(f'li.download[data-transfer-id="{t["id"]}"] .badge-priority')).to_have_text("High priority")


def test_one_url_with_a_name_a_checksum_and_a_mirror(daemon, pages, files):
    files.add("/files/notes-mirror.txt", NOTES, "text/plain")
    page = pages.new(daemon, path="#/downloads")
    dialog = open_dialog(page)
    dialog.get_by_label("URLs", exact=True).fill(files.url("/files/notes.txt"))
    dialog.get_by_label("File name", exact=True).fill("renamed.txt")
    dialog.get_by_label("Checksum", exact=True).fill("sha-256=" + hashlib.sha256(NOTES).hexdigest())
    dialog.get_by_label("Mirrors", exact=True).fill(files.url("/files/notes-mirror.txt"))
    dialog.get_by_role("button", name="Download").click()
    expect(dialog).to_be_hidden()

    transfer = wait_until(lambda: (ts := daemon.transfers()) and ts[0]["state"] == "completed" and ts[0], message="the download to complete")
    assert transfer["path"].endswith("/renamed.txt"), transfer
    assert transfer["checksum"] == "sha-256=" + hashlib.sha256(NOTES).hexdigest()
    assert [m["url"] for m in transfer["mirrors"]] == [files.url("/files/notes-mirror.txt")]


def test_a_bad_url_creates_nothing_and_says_why(daemon, pages, files):
    page = pages.new(daemon, path="#/downloads")
    dialog = open_dialog(page)
    urls = dialog.get_by_label("URLs", exact=True)
    submit = dialog.get_by_role("button", name="Download")

    # Nothing typed: said in the form, without asking the daemon.
    submit.click()
    expect(urls).to_have_attribute("aria-invalid", "true")
    expect(dialog.locator(".field-error").first).to_have_text("Enter at least one URL, one a line.")

    # One bad URL among good ones: the daemon's sentence, at the top and under the URLs.
    urls.fill(f"{files.url('/files/notes.txt')}\nftp://example.com/file.iso\n{files.url('/files/mix.wav')}")
    submit.click()
    top = dialog.locator(".error-box")
    expect(top).to_be_visible()
    message = assert_readable(top.inner_text(), r"ftp.*only http and https")
    expect(urls).to_have_attribute("aria-invalid", "true")
    expect(page.locator(f"#{urls.get_attribute('id')}-error")).to_have_text(message)
    expect(dialog).to_be_visible()
    assert daemon.transfers() == []

    # A bad checksum: said next to the checksum.
    urls.fill(files.url("/files/notes.txt"))
    checksum = dialog.get_by_label("Checksum", exact=True)
    checksum.fill("crc32=1234")
    submit.click()
    expect(checksum).to_have_attribute("aria-invalid", "true")
    expect(dialog.locator(".error-box")).to_contain_text("checksum algorithm")
    # A header that is not one: said before anything is sent.
    checksum.fill("")
    dialog.get_by_label("Extra headers", exact=True).fill("no colon here")
    submit.click()
    expect(dialog.get_by_label("Extra headers", exact=True)).to_have_attribute("aria-invalid", "true")
    assert daemon.transfers() == []

    # Cancel closes it; Escape too.
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    open_dialog(page)
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert daemon.transfers() == []


def test_a_file_of_urls_chosen_or_dropped(daemon, pages, files):
    urls = held_downloads(files, "listfile", 2)
    listing = f"# aria2c's input file\n{urls[0]}\n  out=first.bin\n{urls[1]}\n".encode()
    page = pages.new(daemon, path="#/downloads")
    dialog = open_dialog(page)
    dialog.locator("#nd-file").set_input_files(files=[{"name": "urls.txt", "mimeType": "text/plain", "buffer": listing}])
    expect(dialog.get_by_label("URLs", exact=True)).to_have_value("\n".join(urls))
    expect(page.get_by_text("Read 2 URLs from urls.txt.")).to_be_visible()

    # Dropped onto the list: its URLs join what is there.
    dialog.get_by_label("URLs", exact=True).fill("")
    page.evaluate(
        """(text) => {
            const data = new DataTransfer();
            data.items.add(new File([text], "dropped.txt", {type: "text/plain"}));
            const target = document.querySelector("#nd-urls");
            target.dispatchEvent(new DragEvent("dragover", {dataTransfer: data, bubbles: true, cancelable: true}));
            target.dispatchEvent(new DragEvent("drop", {dataTransfer: data, bubbles: true, cancelable: true}));
        }""",
        listing.decode(),
    )
    expect(dialog.get_by_label("URLs", exact=True)).to_have_value("\n".join(urls))
    dialog.get_by_label("Start at", exact=True).fill("2099-01-01T00:00")
    dialog.get_by_role("button", name="Download").click()
    expect(dialog).to_be_hidden()
    assert sorted(t["url"] for t in daemon.transfers()) == sorted(urls)


def metalink(files: dict[str, tuple[str, str]]) -> bytes:
    """A Metalink 4 document: name → (URL, sha-256)."""
    body = "".join(f'<file name="{name}"><hash type="sha-256">{sha}</hash><url priority="1">{url}</url></file>' for name, (url, sha) in files.items())
    return f'<?xml version="1.0" encoding="UTF-8"?><metalink xmlns="urn:ietf:params:xml:ns:metalink">{body}</metalink>'.encode()


def test_a_metalink_chosen_downloads_each_file_checked(daemon, pages, files):
    """A .meta4 chosen in the dialog: each file downloaded and checked against its digest, one in
    the folder its name gives; a Metalink naming a file outside the folder creates nothing."""
    files.add("/files/notes-copy.txt", NOTES, "text/plain")
    sha = hashlib.sha256(NOTES).hexdigest()
    document = metalink({"notes.txt": (files.url("/files/notes.txt"), sha), "copies/notes.txt": (files.url("/files/notes-copy.txt"), sha)})
    page = pages.new(daemon, path="#/downloads")
    dialog = open_dialog(page)
    dialog.locator("#nd-file").set_input_files(files=[{"name": "notes.meta4", "mimeType": "application/metalink4+xml", "buffer": document}])
    expect(dialog.locator("#nd-metalink")).to_have_text(
        "Metalink notes.meta4: 2 files, each downloaded from its mirrors and checked against its digest.")
    expect(dialog.get_by_label("URLs", exact=True)).to_have_value("")
    dialog.get_by_role("button", name="Download").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_text("Added 2 downloads.")).to_be_visible()
    done = wait_until(lambda: (ts := daemon.transfers()) and len(ts) == 2 and all(t["state"] == "completed" for t in ts) and ts,
                      message="both files to complete")
    assert sorted(t["path"].split("/Downloads/")[1] for t in done) == ["copies/notes.txt", "notes.txt"], done
    assert all(t["verifiedBy"] == ["checksum sha-256"] for t in done), done

    # Hostile: a name that leaves the folder. The daemon's sentence, under the URLs; nothing created.
    dialog = open_dialog(page)
    hostile = metalink({"../../escape.txt": (files.url("/files/notes.txt"), sha)})
    dialog.locator("#nd-file").set_input_files(files=[{"name": "hostile.meta4", "mimeType": "application/metalink4+xml", "buffer": hostile}])
    dialog.get_by_role("button", name="Download").click()
    expect(dialog.locator(".error-box")).to_contain_text("leaves the download folder")
    expect(dialog.get_by_label("URLs", exact=True)).to_have_attribute("aria-invalid", "true")
    # URLs typed besides a Metalink: said before anything is sent.
    dialog.get_by_label("URLs", exact=True).fill(files.url("/files/notes.txt"))
    dialog.get_by_role("button", name="Download").click()
    expect(dialog.locator("#nd-urls-error")).to_contain_text("Give URLs or a Metalink, not both")
    assert len(daemon.transfers()) == 2


def test_the_dialog_at_phone_width(daemon, pages):
    page = pages.new(daemon, viewport=PHONE, path="#/downloads")
    dialog = open_dialog(page)
    box = dialog.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # Every field is reachable by scrolling inside the dialog, and none is wider than it.
    widths = dialog.locator("input, select, textarea").evaluate_all("(els) => els.map((el) => el.getBoundingClientRect().right)")
    assert max(widths) <= box["x"] + box["width"], widths
    submit = dialog.get_by_role("button", name="Download")
    submit.scroll_into_view_if_needed()
    expect(submit).to_be_in_viewport()
    screenshot(page, "new-download-phone")


def test_the_dialog_from_the_keyboard(daemon, pages, files):
    [url] = held_downloads(files, "keyboard", 1)
    page = pages.new(daemon, path="#/downloads")
    opener = page.get_by_role("button", name="New download")
    opener.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("dialog#new-download")
    expect(dialog.get_by_label("URLs", exact=True)).to_be_focused()
    page.keyboard.type(url)
    # Every field on the way, then the Download button, by Tab alone.
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == "Download":
            break
    else:
        raise AssertionError("Tab never reached the Download button")
    screenshot(page, "new-download-desktop")
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    expect(opener).to_be_focused()  # back where it was opened
    assert [t["url"] for t in daemon.transfers()] == [url]
