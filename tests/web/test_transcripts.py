"""What was said: transcripts searched across the listener's podcasts in the browser, each hit
starting its episode at that second; at phone width, in Russian, per listener, and a
transcript that tries to inject markup shown as text."""

from __future__ import annotations

import re
import urllib.parse

from playwright.sync_api import expect

from conftest import PHONE
from helpers import audio, wait_until
from servers import wav


def said_show(daemon, files) -> dict:
    """A show of two episodes with WebVTT transcripts; the owner subscribes, and the daemon
    indexes both by itself."""
    sound = wav(60, rate=8000, seed=4)
    media = files.add("/media/said.wav", sound, "audio/wav")
    first = files.add("/t/said-1.vtt", (
        "WEBVTT\n\n00:00:02.000 --> 00:00:05.000\n<v Host>Welcome back to the show.\n\n"
        "00:00:30.000 --> 00:00:34.000\n<v Vera Rubin>Our guest said the word Quasar, twice.\n\n"
        "00:00:40.000 --> 00:00:44.000\n<v Host>And &lt;script&gt;alert(1)&lt;/script&gt; is just words here.\n"
    ).encode(), "text/vtt")
    second = files.add("/t/said-2.vtt", b"WEBVTT\n\n00:00:10.000 --> 00:00:12.000\nNothing about the sky.\n", "text/vtt")
    items = "".join(
        f"""<item><guid>said-{n}</guid><title>{title}</title><pubDate>Fri, 2{n} Nov 2026 09:00:00 GMT</pubDate>
<enclosure url="{media}" length="{len(sound)}" type="audio/wav"/><podcast:transcript url="{url}" type="text/vtt"/></item>"""
        for n, title, url in ((1, "The Quasar Episode", first), (2, "A Quiet Episode", second))
    )
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Said Show</title>{items}</channel></rss>"""
    detail = daemon.api("POST", "/v1/podcasts", {"url": files.add("/feeds/said.xml", xml.encode(), "application/rss+xml")})
    wait_until(lambda: daemon.api("GET", "/v1/transcripts/search?q=quasar")["index"]["indexed"] == 2, timeout=30, message="both transcripts indexed")
    return detail


def test_a_hit_plays_its_episode_from_the_second_it_was_said(daemon, pages, files):
    said_show(daemon, files)
    page = pages.new(daemon, viewport=PHONE, path="#/podcasts")
    page.get_by_role("link", name="What was said").click()
    expect(page).to_have_url(re.compile(r"#/said$"))
    page.locator("#said-input").fill("QUASAR")
    page.locator("#said-input").press("Enter")
    hit = page.locator(".said-hit")
    expect(hit).to_have_count(1)
    expect(hit.locator(".said-episode")).to_have_text("The Quasar Episode")
    expect(hit.locator(".said-show")).to_have_text("Said Show")
    expect(hit.locator(".said-snippet")).to_have_text("Vera Rubin: Our guest said the word Quasar, twice.")
    expect(hit.locator("mark")).to_have_text("Quasar")
    expect(page.locator(".said-coverage")).to_have_text("2 episodes searched")
    # The words stay in the address: Back and a reload find the same.
    assert urllib.parse.unquote(page.url).endswith("#/said?q=QUASAR"), page.url
    hit.get_by_role("button", name="Play The Quasar Episode from 0:30").click()
    wait_until(lambda: audio(page, "!a.paused && a.currentTime >= 30 && a.currentTime < 40"), timeout=15, message="playing from 0:30")
    expect(page.locator("#player")).to_contain_text("The Quasar Episode")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "fits a phone"

    # A phrase in its order; words the transcript never says; markup in a transcript is words.
    page.locator("#said-input").fill('"word quasar"')
    page.locator("#said-input").press("Enter")
    expect(page.locator(".said-hit")).to_have_count(1)
    page.locator("#said-input").fill("nebula")
    page.locator("#said-input").press("Enter")
    expect(page.locator(".said-hits")).to_have_count(0)
    expect(page.get_by_text("Nobody said that.")).to_be_visible()
    page.locator("#said-input").fill("script alert")
    page.locator("#said-input").press("Enter")
    expect(page.locator(".said-snippet")).to_have_text("Host: And <script>alert(1)</script> is just words here.")
    assert page.locator(".said-snippet script").count() == 0


def test_what_was_said_in_russian_and_for_another_listener(daemon, pages, files):
    said_show(daemon, files)
    page = pages.new(daemon, path="#/podcasts", locale="ru-RU")
    page.get_by_role("link", name="Что говорили").click()
    page.locator("#said-input").fill("quasar")
    page.get_by_role("button", name="Найти").click()
    expect(page.locator(".said-coverage")).to_have_text("Просмотрено 2 выпуска")
    expect(page.locator(".said-hit")).to_have_count(1)
    expect(page.locator(".said-play")).to_have_accessible_name("Слушать «The Quasar Episode» с 0:30")

    # Alice has no podcasts: nothing of the owner's, and she is told why.
    daemon.api("POST", "/v1/users", {"name": "alice", "password": "alice's password"})
    theirs = pages.new(daemon, viewport=PHONE, path="#/said?q=quasar", user="alice")
    expect(theirs.get_by_text("No transcripts yet.")).to_be_visible()
    expect(theirs.locator(".said-hit")).to_have_count(0)
