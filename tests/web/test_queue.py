"""Steering the queue from the Downloads view: pause all and resume all, the Finished and
Cancelled tabs and clearing them (with a question first), priorities and Move to top."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

from helpers import create, download_row, held_downloads, transfer, wait_until

# A running download of a held file: "12.0 kB of 1.2 MB · 1.0% · 20.0 kB/s · 59 s left".
RUNNING = re.compile(r"^[\d.]+ (B|kB|MB) of 1\.2 MB · \d+\.\d%")


def test_pause_all_and_resume_all(daemon, pages, files):
    urls = held_downloads(files, "all", 3)
    page = pages.new(daemon, path="#/downloads")
    pause_all = page.get_by_role("button", name="Pause all")
    resume_all = page.get_by_role("button", name="Resume all")
    expect(page.get_by_text("Nothing downloading")).to_be_visible()
    # Nothing to pause or resume yet.
    expect(pause_all).to_be_disabled()
    expect(resume_all).to_be_disabled()

    # Two from this page's session, one from another client: "all" means all of them.
    ids = [t["id"] for t in create(daemon, urls[:2])] + [t["id"] for t in create(daemon, urls[2:], session="cli")]
    rows = [download_row(page, i) for i in ids]
    for row in rows:
        expect(row.locator(".download-status")).to_have_text(RUNNING, timeout=15_000)
    expect(pause_all).to_be_enabled()
    expect(resume_all).to_be_disabled()

    pause_all.click()
    for row in rows:
        expect(row.locator(".download-status")).to_have_text(re.compile(r"^Paused · \d+\.\d% of 1\.2 MB$"))
        expect(row.get_by_role("button", name="Resume download")).to_be_visible()
    expect(page.locator(".toast", has_text="Paused 3 downloads.")).to_be_visible()
    assert [transfer(daemon, i)["state"] for i in ids] == ["paused"] * 3
    expect(pause_all).to_be_disabled()
    expect(resume_all).to_be_enabled()
    # Paused for real: no byte moves.
    kept = [transfer(daemon, i)["bytesReceived"] for i in ids]
    time.sleep(1.0)
    assert [transfer(daemon, i)["bytesReceived"] for i in ids] == kept

    resume_all.click()
    expect(page.locator(".toast", has_text="Resumed 3 downloads.")).to_be_visible()
    for row in rows:
        expect(row.locator(".download-status")).to_have_text(RUNNING)
        expect(row.get_by_role("button", name="Pause download")).to_be_visible()
    wait_until(lambda: all(transfer(daemon, i)["bytesReceived"] > b for i, b in zip(ids, kept)), message="every download to go on")
    expect(pause_all).to_be_enabled()
    expect(resume_all).to_be_disabled()


def test_finished_and_cancelled_tabs_and_clearing_them(daemon, pages, files):
    done = [files.add(f"/tabs/done-{n}.txt", f"finished file {n}\n".encode() * 2000, "text/plain") for n in range(2)]
    held = held_downloads(files, "tabs", 2)
    finished_ids = [t["id"] for t in create(daemon, done)]
    wait_until(lambda: all(transfer(daemon, i)["state"] == "completed" for i in finished_ids), message="the small files")
    running, cancelled = (t["id"] for t in create(daemon, held))
    daemon.api("POST", f"/v1/transfers/{cancelled}/cancel")

    page = pages.new(daemon, path="#/downloads")
    expect(page.locator("#tab-active .tab-count")).to_have_text("1")
    expect(page.locator("#tab-finished .tab-count")).to_have_text("2")
    expect(page.locator("#tab-cancelled .tab-count")).to_have_text("1")
    expect(page.locator("li.download")).to_have_count(1)
    expect(download_row(page, running)).to_be_visible()

    # Finished: the completed files only.
    page.get_by_role("tab", name=re.compile("^Finished")).click()
    expect(page).to_have_url(re.compile(r"#/downloads\?tab=finished$"))
    expect(page.locator("li.download .download-name")).to_have_text(["done-1.txt", "done-0.txt"])  # newest first
    expect(page.locator("li.download", has_text="Cancelled")).to_have_count(0)

    # Cancelled: a tab of its own (the arrow keys move between tabs, as in any tab list).
    page.get_by_role("tab", name=re.compile("^Finished")).press("ArrowRight")
    cancelled_tab = page.get_by_role("tab", name=re.compile("^Cancelled"))
    expect(cancelled_tab).to_have_attribute("aria-selected", "true")
    expect(cancelled_tab).to_be_focused()
    expect(page).to_have_url(re.compile(r"#/downloads\?tab=cancelled$"))
    expect(page.locator("li.download")).to_have_count(1)
    expect(download_row(page, cancelled).locator(".download-status")).to_have_text("Cancelled")
    expect(download_row(page, cancelled).locator(".download-name")).to_have_text("tabs-1.bin")

    # Clearing asks first; "Cancel" changes nothing.
    clear = page.get_by_role("button", name="Clear finished")
    clear.click()
    dialog = page.get_by_role("dialog", name="Clear finished downloads?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("3 completed or cancelled downloads will leave this list. Their files stay where they are.")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("li.download")).to_have_count(1)
    assert len(daemon.transfers()) == 4

    clear.click()
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Clear").click()
    expect(dialog).to_be_hidden()
    expect(page.locator(".toast", has_text="Cleared 3 finished downloads from the list. Their files stay.")).to_be_visible()
    expect(page.get_by_text("No cancelled downloads")).to_be_visible()
    expect(page.locator("#tab-finished .tab-count")).to_have_text("0")
    expect(page.locator("#tab-cancelled .tab-count")).to_have_text("0")
    expect(page.locator("#tab-active .tab-count")).to_have_text("1")
    expect(clear).to_be_disabled()
    page.get_by_role("tab", name=re.compile("^Finished")).click()
    expect(page.get_by_text("No finished downloads yet")).to_be_visible()
    # The running download stays, and so do the files.
    assert [t["id"] for t in daemon.transfers()] == [running]
    for n in range(2):
        assert (daemon.library / "Downloads" / f"done-{n}.txt").exists()


def test_priority_badge_and_move_to_top(daemon, pages, files):
    # One download at a time: the others wait in the queue, in the order the daemon picks.
    daemon.api("PATCH", "/v1/sessions/web/config", {"set": {"maxConcurrent": 1}})
    urls = held_downloads(files, "queue", 4)
    first = create(daemon, urls[:1])[0]["id"]
    wait_until(lambda: transfer(daemon, first)["state"] == "running", message="the first download to start")
    normal = create(daemon, urls[1:2])[0]["id"]
    high = create(daemon, urls[2:3], priority="high")[0]["id"]
    low = create(daemon, urls[3:4], priority="low")[0]["id"]

    page = pages.new(daemon, path="#/downloads")
    for queued in (normal, high, low):
        expect(download_row(page, queued).locator(".download-status")).to_have_text("Queued…")
    expect(download_row(page, first).locator(".download-status")).to_have_text(RUNNING)
    expect(download_row(page, high).locator(".badge-priority")).to_have_text("High priority")
    expect(download_row(page, low).locator(".badge-priority")).to_have_text("Low priority")
    expect(download_row(page, normal).locator(".badge-priority")).to_be_hidden()
    expect(download_row(page, first).locator(".badge-priority")).to_be_hidden()
    # Only what waits in the queue can move to its top.
    expect(download_row(page, first).get_by_role("button", name="Move to top")).to_have_count(0)
    for queued in (normal, high, low):
        expect(download_row(page, queued).get_by_role("button", name="Move to top")).to_be_visible()

    # The low one goes first: raised to the highest priority waiting, ahead of the high one.
    download_row(page, low).get_by_role("button", name="Move to top").click()
    expect(page.locator(".toast", has_text="queue-3.bin is next in the queue.")).to_be_visible()
    expect(download_row(page, low).locator(".badge-priority")).to_have_text("High priority")
    assert transfer(daemon, low)["priority"] == "high"

    # When the running one is cancelled, the moved one starts, and the others still wait.
    download_row(page, first).get_by_role("button", name="Cancel download").click()
    expect(download_row(page, first)).to_have_count(0)
    expect(download_row(page, low).locator(".download-status")).to_have_text(RUNNING, timeout=15_000)
    expect(download_row(page, low).get_by_role("button", name="Move to top")).to_have_count(0)
    for queued in (normal, high):
        expect(download_row(page, queued).locator(".download-status")).to_have_text("Queued…")
    assert transfer(daemon, high)["state"] == "queued" and transfer(daemon, normal)["state"] == "queued"
