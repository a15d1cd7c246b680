"""Live updates survive a daemon restart: the page shows "Reconnecting…", reconnects with
Last-Event-ID, and shows the download that finished; a closed tab comes back to the truth."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from daemon import free_port
from helpers import fraction_of, search_songs, track, wait_until


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_daemon_restart_during_a_download(start_daemon, pages, catalog, files, how):
    port = free_port()  # a fixed port, so that the page's origin stays the same
    daemon = start_daemon(port=port)
    song = catalog.songs[3]  # Park Bench People
    path = f"/previews/{song['trackId']}.wav"
    files.set_rate(path, 250_000)
    try:
        page = pages.new(daemon)
        streams = []
        page.on("request", lambda request: "/v1/events" in request.url and streams.append(request))
        search_songs(page, "park bench")
        row = track(page, "Park Bench People")
        row.get_by_role("button", name="Download").click()
        label = row.locator(".progress-text")
        # Past a checkpoint (every 2 s), so that even kill -9 keeps bytes on disk.
        wait_until(lambda: fraction_of(label.text_content()) > 0.3, timeout=20, message="30% downloaded")
        before = fraction_of(label.text_content())

        if how == "stop":
            daemon.stop()
        else:
            daemon.kill()
        banner = page.locator("#banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Reconnecting…")
        expect(page.locator(".sidebar .connection")).to_have_text("Reconnecting…")

        asked_before = len(files.requests_for(path))
        daemon.start()
        assert daemon.url.endswith(f":{port}")
        expect(banner).to_be_hidden(timeout=20_000)
        expect(page.locator(".toast", has_text="Reconnected to Ferry.")).to_be_visible()
        expect(row).to_have_attribute("data-state", "completed", timeout=30_000)
        expect(row.get_by_role("button", name="Play Park Bench People")).to_be_visible()
        # It resumed from the bytes on disk rather than starting again: the second daemon asked
        # only for ranges (one, or one per range of a segmented download), and for less than what
        # the page had shown minus a checkpoint's worth (half of it, generously).
        size = len(files.files[path].data)
        ranges = [r for (_, _, r) in files.requests_for(path)[asked_before:]]
        assert ranges and all(ranges), f"the second daemon should have asked for the rest with Range: {ranges}"
        asked = covered(ranges, size)
        assert 0 < asked < size - before * 0.5 * size, (asked, before, size, ranges)
        expect(page.locator("#nav-badge")).to_be_hidden()
        # The stream reopened after the restart asked for what came after the last event seen.
        resumed = [r.header_value("last-event-id") for r in streams]
        assert any(value and int(value) > 0 for value in resumed), resumed
    finally:
        files.set_rate(path, 300_000)


def covered(ranges, size):
    """Bytes of the file that `Range: bytes=a-b` / `bytes=a-` headers ask for, overlaps counted once."""
    spans = []
    for header in ranges:
        first, last = re.match(r"bytes=(\d+)-(\d*)", header).groups()
        spans.append((int(first), int(last) + 1 if last else size))
    total, reach = 0, 0
    for start, end in sorted(spans):
        start = max(start, reach)
        if end > start:
            total += end - start
            reach = end
    return total


def test_a_tab_opened_later_shows_what_finished_meanwhile(daemon, pages, catalog, files):
    page = pages.new(daemon)
    search_songs(page, "warrior")
    track(page, "Warrior").get_by_role("button", name="Download").click()
    expect(track(page, "Warrior").locator(".progress-text")).to_have_text(re.compile(r"% of 2\.1 MB"))
    page.context.close()
    # While no page is open, it finishes.
    wait_until(lambda: any(t["state"] == "completed" for t in daemon.transfers()), timeout=30, message="the download to finish")

    later = pages.new(daemon, path="#/downloads?tab=finished")
    expect(later.locator("li.download")).to_have_count(1)
    expect(later.locator("li.download .download-name")).to_contain_text("Warrior")
    later.get_by_role("link", name="Half Tunes").click()
    search_songs(later, "warrior")
    expect(track(later, "Warrior")).to_have_attribute("data-state", "completed")
