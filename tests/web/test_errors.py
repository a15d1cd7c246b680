"""What goes wrong outside the page shows in it as a sentence a person can act on, never as
silence, a stack trace or raw JSON: the catalog unreachable or throttled, a broken feed, a full
disk."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from conftest import PHONE
from helpers import episode, readable_message, track

CLOSED_PORT = "http://127.0.0.1:9"  # discard: nothing listens there

# MARK: The catalog


def test_search_with_the_catalog_unreachable_says_so(start_daemon, pages):
    daemon = start_daemon(catalog_url=CLOSED_PORT)
    page = pages.new(daemon)
    field = page.locator("#search-input")
    field.fill("jose james")
    field.press("Enter")
    box = page.locator(".error-box")
    expect(box).to_have_attribute("role", "alert")
    readable_message(box.locator("p"), r"reach")
    expect(page.locator("li.track")).to_have_count(0)
    # Trying again asks again, and says it again.
    box.get_by_role("button", name="Try again").click()
    readable_message(page.locator(".error-box p"), r"reach")


def test_podcast_search_with_the_catalog_unreachable_says_so(start_daemon, pages):
    daemon = start_daemon(catalog_url=CLOSED_PORT)
    page = pages.new(daemon, path="#/podcasts")
    field = page.locator("#podcast-input")
    field.fill("jazz")
    field.press("Enter")
    readable_message(page.locator(".error-box p"), r"reach")
    expect(page.locator(".result-card")).to_have_count(0)


@pytest.mark.parametrize("term", ["throttle me", "toomany requests"], ids=["403", "429"])
def test_catalog_throttling_says_to_try_again_later(daemon, pages, catalog, term):
    page = pages.new(daemon)
    field = page.locator("#search-input")
    field.fill(term)
    field.press("Enter")
    text = readable_message(page.locator(".error-box p"), r"limiting|throttl|too many")
    assert re.search(r"try again", text, re.I), text
    assert any(r.get("term") == term for r in catalog.requests)


# MARK: Feeds


@pytest.mark.parametrize("path", ["/feeds/broken.xml", "/feeds/garbage.xml", "/feeds/missing.xml"], ids=["web-page", "not-xml", "404"])
def test_subscribing_to_a_broken_feed_says_what_is_wrong(daemon, pages, files, path):
    page = pages.new(daemon, path="#/podcasts")
    field = page.locator("#podcast-input")
    field.fill(files.url(path))
    field.press("Enter")
    readable_message(page.locator(".toast-error .toast-text"), r"feed")
    expect(page).to_have_url(re.compile(r"#/podcasts$"))
    expect(page.get_by_text("No subscriptions yet")).to_be_visible()
    assert daemon.api("GET", "/v1/podcasts")["podcasts"] == []


def test_a_feed_that_breaks_after_subscribing_says_so(daemon, pages, files):
    good = files.files["/feeds/sistak.xml"]
    url = files.add("/feeds/breaks-later.xml", good.data, good.content_type)
    page = pages.new(daemon, path="#/podcasts")
    page.locator("#podcast-input").fill(url)
    page.locator("#podcast-input").press("Enter")
    expect(page.locator("h1.podcast-title")).to_have_text("s i s t a k")
    podcast_page = page.url

    files.add("/feeds/breaks-later.xml", b"<html><body>Moved to a new host</body></html>", "text/html")
    page.get_by_role("link", name="Podcasts").first.click()
    page.get_by_role("button", name="Refresh all").click()
    readable_message(page.locator(".toast-error .toast-text"), r"refresh.*feed")
    card = page.locator(".podcast-card", has_text="s i s t a k")
    expect(card.locator(".card-error")).to_have_text("Feed problem")
    # The podcast's own page says what the problem is.
    page.goto(podcast_page)
    readable_message(page.locator(".error-box p"), r"refresh failed.*feed")


# MARK: A full disk


BIG = "/files/too-big.iso"  # 4 MiB, for a 2 MiB library


# Each at desktop and at phone width, where the message has the least room.


def test_a_full_disk_shows_on_the_download(small_disk_daemon, pages, files):
    daemon = small_disk_daemon("2m")
    url = files.add(BIG, bytes(4 << 20), "application/octet-stream")
    page = pages.new(daemon, path="#/downloads")
    page.locator("#url-input").fill(url)
    page.locator("#url-input").press("Enter")
    row = page.locator("li.download", has_text="too-big.iso")
    status = row.locator(".download-status")
    readable_message(status, r"disk.*full|space", within=row.locator(".download-main"), timeout=30_000)
    expect(status).to_have_class(re.compile(r"\bis-error\b"))
    expect(row.get_by_role("button", name="Retry download")).to_be_visible()
    assert [t["error"]["code"] for t in daemon.transfers()] == ["disk_full"]
    phone = pages.new(daemon, viewport=PHONE, path="#/downloads")
    row = phone.locator("li.download", has_text="too-big.iso")
    readable_message(row.locator(".download-status"), r"disk.*full|space", within=row.locator(".download-main"))


def test_a_full_disk_shows_on_the_song(small_disk_daemon, pages):
    daemon = small_disk_daemon("1m")  # a preview is 2.1 MB
    page = pages.new(daemon, path="#/search?q=velvet")
    row = track(page, "Velvet")
    row.get_by_role("button", name="Download").click()
    status = row.locator(".progress-text")
    readable_message(status, r"disk.*full|space", within=row.locator(".track-main"), timeout=30_000)
    expect(row.get_by_role("button", name="Retry download")).to_be_visible()
    phone = pages.new(daemon, viewport=PHONE, path="#/search?q=velvet")
    row = track(phone, "Velvet")
    readable_message(row.locator(".progress-text"), r"disk.*full|space", within=row.locator(".track-main"))


def test_a_full_disk_shows_on_the_episode(small_disk_daemon, pages, files):
    daemon = small_disk_daemon("512k")  # an episode is 706 kB
    page = pages.new(daemon, path="#/podcasts")
    page.locator("#podcast-input").fill(files.url("/feeds/radio.xml"))
    page.locator("#podcast-input").press("Enter")
    row = episode(page, "Pilot")
    row.get_by_role("button", name="Download").click()
    status = row.locator(".episode-status")
    readable_message(status, r"disk.*full|space", within=row.locator(".episode-main"), timeout=30_000)
    phone = pages.new(daemon, viewport=PHONE, path="#" + page.url.split("#", 1)[1])
    row = episode(phone, "Pilot")
    readable_message(row.locator(".episode-status"), r"disk.*full|space", within=row.locator(".episode-main"))

