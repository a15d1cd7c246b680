"""Screenshots of every view at desktop (1280×800) and phone (390×844) width, light and dark,
saved to a temporary folder, or by scripts/screenshots to docs/screenshots/ for the README. The state shown is built through the page itself:
downloads finished, paused and running, subscriptions with new episodes, a track playing."""

from __future__ import annotations

import datetime

from playwright.sync_api import Page, expect

from conftest import DESKTOP, PHONE, screenshot
from helpers import episode, fraction_of, search_songs, track, wait_for_playable, wait_until
from servers import rss

SHOW = "/feeds/harbour.xml"


def harbour_feed(files, media, count: int) -> bytes:
    start = datetime.datetime(2026, 11, 21, 7, 0, tzinfo=datetime.timezone.utc)
    titles = [
        "Tide tables and tape loops",
        "The ferryman's playlist",
        "Foghorns in F minor",
        "Night crossing",
        "Lighthouse keepers, part two",
        "Lighthouse keepers, part one",
        "Episode 1: welcome aboard",
    ]
    items = []
    for n in range(count):
        path = f"/episodes/harbour-{n}.wav"
        files.add(path, media["episode"], "audio/wav", rate=None if n else 40_000)
        items.append(
            {
                "guid": f"harbour-{n}",
                "title": titles[len(titles) - 1 - n],
                "date": start - datetime.timedelta(days=3 * (count - 1 - n)),
                "url": files.url(path),
                "length": len(media["episode"]),
                "duration": f"{24 + 5 * n}:{(13 * n) % 60:02d}",
                "description": "<p>Field recordings from the quay, a new <b>ambient</b> mix and your letters.</p>",
            }
        )
    items.reverse()
    return rss(
        "Harbour Sessions",
        items,
        author="Radio Ferry",
        image=files.url("/art/7.png"),
        description="<p>Slow music for fast boats. Every week: field recordings from harbours around the world, ambient mixes and the stories of the people who work the docks.</p>",
    )


def settle(page: Page):
    """Artwork loaded, no transition half-way (spinners and other endless animations go on)."""
    page.wait_for_function(
        """() => [...document.querySelectorAll('.art img')]
            .filter(i => { const r = i.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; })
            .every(i => i.complete)
          && document.getAnimations()
            .filter(a => a.effect && a.effect.getComputedTiming().iterations !== Infinity)
            .every(a => a.playState !== 'running')"""
    )


BACKGROUND_IS_DARK = """() => {
    const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 128;
}"""


def shoot(page: Page, name: str, *, scheme: str = "light"):
    for size, label in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page.set_viewport_size(size)
        page.emulate_media(color_scheme=scheme)
        page.evaluate("window.scrollTo(0, 0)")
        page.mouse.move(size["width"] - 2, 62)  # away from anything that reacts to hover
        settle(page)
        # Nothing wider than the screen (no sideways scrolling on a phone), and the scheme applied.
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], f"{name} overflows at {label} width"
        dark = page.evaluate(BACKGROUND_IS_DARK)
        assert dark == (scheme == "dark"), f"{name} in the {scheme} scheme has a {'dark' if dark else 'light'} background"
        screenshot(page, f"{name}-{label}" if scheme == "light" else f"{name}-dark-{label}")
    page.set_viewport_size(DESKTOP)
    page.emulate_media(color_scheme="light")


def test_screenshots_of_every_view(daemon, pages, catalog, files, media):
    # The login screen.
    login = pages.new(daemon, login=False, path="")
    expect(login.locator("#login")).to_be_visible()
    shoot(login, "login")

    page = pages.new(daemon)
    # One connection per download: a throttled preview would otherwise grow to several, whose
    # progress moves every sample, so the bars' transitions never rest for the shot.
    daemon.api("PATCH", "/v1/sessions/web/config", {"set": {"connections": 1}})
    # Half Tunes: one finished and playing, one finished, one paused, one downloading.
    slow = f"/previews/{catalog.songs[4]['trackId']}.wav"
    files.set_rate(slow, 45_000)
    fast = [f"/previews/{catalog.songs[i]['trackId']}.wav" for i in (0, 2)]
    for path in fast:
        files.set_rate(path, None)
    try:
        search_songs(page, "jose james")
        for title in ("Desire", "Save Your Love for Me", "Love Conversation", "Warrior"):
            track(page, title).get_by_role("button", name="Download").click()
        expect(track(page, "Desire")).to_have_attribute("data-state", "completed")
        expect(track(page, "Save Your Love for Me")).to_have_attribute("data-state", "completed")
        love = track(page, "Love Conversation")
        wait_until(lambda: fraction_of(love.locator(".progress-text").text_content()) > 0.35, message="35%")
        love.get_by_role("button", name="Pause download").click()
        expect(love.locator(".progress-text")).to_contain_text("Paused")
        track(page, "Save Your Love for Me").get_by_role("button", name="Play Save Your Love for Me").click()
        wait_for_playable(page)
        page.evaluate("document.querySelector('#player-audio').currentTime = 9")
        page.locator("#search-input").blur()
        shoot(page, "search")
        shoot(page, "search", scheme="dark")

        # Podcasts: three subscriptions, one with new episodes.
        files.add(SHOW, harbour_feed(files, media, 5), "application/rss+xml")
        page.get_by_role("link", name="Podcasts").first.click()
        field = page.locator("#podcast-input")
        for feed in (SHOW, "/feeds/radio.xml", "/feeds/sistak.xml"):
            field.fill(files.url(feed))
            field.press("Enter")
            expect(page.locator("h1.podcast-title")).to_be_visible()
            page.get_by_role("link", name="Podcasts").first.click()
        files.add(SHOW, harbour_feed(files, media, 7), "application/rss+xml")
        page.get_by_role("button", name="Refresh all").click()
        expect(page.locator(".podcast-card", has_text="Harbour Sessions").locator(".badge-new")).to_have_text("2 new")
        page.locator(".toast").evaluate_all("ts => ts.forEach(t => t.remove())")
        page.locator("#podcast-input").blur()
        shoot(page, "podcasts")

        # A podcast: one episode downloading, one done, new ones marked.
        page.locator(".podcast-card", has_text="Harbour Sessions").click()
        episode(page, "Foghorns in F minor").get_by_role("button", name="Download").click()
        expect(episode(page, "Foghorns in F minor")).to_have_attribute("data-state", "done")
        episode(page, "Episode 1: welcome aboard").get_by_role("button", name="Download").click()
        first = episode(page, "Episode 1: welcome aboard")
        wait_until(lambda: fraction_of(first.locator(".episode-status").text_content()) > 0.15, message="episode progress")
        page.locator(".toast").evaluate_all("ts => ts.forEach(t => t.remove())")
        shoot(page, "podcast")
        shoot(page, "podcast", scheme="dark")

        # Downloads: both tabs.
        page.get_by_role("link", name="Downloads").first.click()
        expect(page.locator("li.download").first).to_be_visible()
        page.locator("#url-input").fill("https://example.com/big.iso")
        page.locator("#url-input").blur()
        shoot(page, "downloads")
        page.locator("#url-input").fill("")
        page.get_by_role("tab", name="Finished").click()
        expect(page.locator("li.download .sha").first).to_be_visible()
        shoot(page, "downloads-finished")
    finally:
        files.set_rate(slow, 300_000)
        for path in fast:
            files.set_rate(path, 300_000)
