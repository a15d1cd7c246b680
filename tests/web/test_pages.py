"""Long lists: the Downloads view reads the newest page of a tab at once and the next ones as the
list scrolls to its end, while the event stream goes on adding what is new."""

from __future__ import annotations

import urllib.parse

from playwright.sync_api import expect

from helpers import create, download_row

COUNT = 250


def test_a_long_list_comes_in_pages_as_it_scrolls(daemon, pages, files):
    # 250 downloads that wait (a start time far away): a long queue from another client.
    urls = [files.url(f"/pages/file-{n:03}.bin") for n in range(COUNT)]
    created = create(daemon, urls, session="cli", options={"startAfter": "2099-01-01T00:00:00Z"})
    ids = [t["id"] for t in created]
    assert len(ids) == COUNT

    page = pages.new(daemon, path=None)
    lists = []
    page.on("request", lambda r: lists.append(r.url) if urllib.parse.urlsplit(r.url).path == "/v1/transfers" and r.method == "GET" else None)
    page.goto(f"{daemon.url}/#/downloads")
    page.reload()  # a new document (only the hash changed), with the init script
    rows = page.locator("li.download")
    names = page.locator("li.download .download-name")

    # The first page at once: the newest 100, newest first, and the whole count on the tab.
    expect(rows).to_have_count(100)
    expect(page.locator("#tab-active .tab-count")).to_have_text(str(COUNT))
    expect(names.first).to_have_text("file-249.bin")
    expect(names.last).to_have_text("file-150.bin")
    expect(download_row(page, ids[0])).to_have_count(0)
    page.wait_for_timeout(500)
    expect(rows).to_have_count(100)  # no more until the list scrolls
    queries = [dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(u).query)) for u in lists]
    first = [q for q in queries if q.get("state", "").startswith("queued")]
    assert first and first[0]["limit"] == "100" and first[0]["order"] == "desc" and "cursor" not in first[0], queries

    # Scrolling to the end reads the next page.
    rows.last.scroll_into_view_if_needed()
    expect(rows).to_have_count(200)
    expect(names.nth(199)).to_have_text("file-050.bin")
    page.mouse.wheel(0, 100_000)
    expect(rows).to_have_count(COUNT)
    expect(names.last).to_have_text("file-000.bin")
    # The end of the list: nothing more to read, no button asking for more.
    expect(page.get_by_role("button", name="Load more")).to_be_hidden()
    queries = [dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(u).query)) for u in lists]
    cursors = [q["cursor"] for q in queries if "cursor" in q]
    assert cursors == [str(ids[150]), str(ids[50])], queries

    # Live updates go on: a new download shows at the top; one of the pages read changes in place.
    newest = create(daemon, [files.url("/pages/new.bin")], session="cli", options={"startAfter": "2099-01-01T00:00:00Z"})[0]["id"]
    expect(names.first).to_have_text("new.bin")
    expect(page.locator("#tab-active .tab-count")).to_have_text(str(COUNT + 1))
    daemon.api("POST", f"/v1/transfers/{ids[10]}/cancel")
    expect(download_row(page, ids[10])).to_have_count(0)
    expect(page.locator("#tab-active .tab-count")).to_have_text(str(COUNT))
    expect(page.locator("#tab-cancelled .tab-count")).to_have_text("1")
    expect(rows).to_have_count(COUNT)
    assert download_row(page, newest).count() == 1


def test_without_intersection_observer_a_button_reads_the_next_page(daemon, pages, files):
    urls = [files.url(f"/pages/more-{n:03}.bin") for n in range(120)]
    create(daemon, urls, session="cli", options={"startAfter": "2099-01-01T00:00:00Z"})
    page = pages.new(daemon, path=None)
    # A browser that can't tell when the end of the list scrolls into view.
    page.context.add_init_script("delete window.IntersectionObserver;")
    page.goto(f"{daemon.url}/#/downloads")
    page.reload()  # a new document (only the hash changed), with the init script
    rows = page.locator("li.download")
    expect(rows).to_have_count(100)
    more = page.get_by_role("button", name="Load more")
    more.scroll_into_view_if_needed()
    expect(more).to_be_visible()
    page.wait_for_timeout(500)
    expect(rows).to_have_count(100)
    more.focus()
    page.keyboard.press("Enter")
    expect(rows).to_have_count(120)
    expect(page.locator("li.download .download-name").last).to_have_text("more-000.bin")
    expect(more).to_be_hidden()
    expect(page.locator(".list-end")).to_be_hidden()
