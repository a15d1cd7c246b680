"""Podcasts: subscribe (search or pasted feed), episode downloads with progress, settings,
OPML, broken feeds, and a feed and catalog entry that try to inject script."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

from conftest import PHONE, XSS_TITLE
from helpers import audio, episode, wait_for_playable, wait_until
from servers import wav


def test_subscribe_from_search_and_download_an_episode(daemon, pages, files):
    page = pages.new(daemon, path="#/podcasts")
    expect(page.get_by_text("No subscriptions yet")).to_be_visible()
    field = page.locator("#podcast-input")
    field.fill("ferry test radio")
    field.press("Enter")
    card = page.locator(".result-card", has_text="Ferry Test Radio")
    card.get_by_role("button", name="Subscribe").click()
    expect(card.get_by_role("link", name="Subscribed")).to_be_visible()
    subscription = page.locator(".podcast-card", has_text="Ferry Test Radio")
    expect(subscription).to_contain_text("4 episodes")
    expect(subscription.locator(".art img")).to_have_attribute("src", files.url("/art/1.png"))

    subscription.click()
    expect(page).to_have_url(re.compile(r"#/podcasts/\d+$"))
    expect(page.locator("h1.podcast-title")).to_have_text("Ferry Test Radio")
    expect(page.locator(".podcast-author")).to_have_text("The Ferry Crew")
    expect(page.locator(".podcast-description b")).to_have_text("testing")
    first = episode(page, "Night Drive")
    expect(first.locator(".episode-facts")).to_have_text("Nov 20, 2026 · 37 min · 706 kB")

    first.get_by_role("button", name="Download").click()
    status = first.locator(".episode-status")
    expect(status).to_have_text(re.compile(r"^\d+\.\d% of 706 kB$"))
    # The row fills as it downloads.
    fill = first.locator(".episode-fill")
    expect(fill).to_have_js_property("isConnected", True)
    page.wait_for_function("el => parseFloat(el.style.getPropertyValue('--fraction')) > 0.2", arg=fill.element_handle())
    first.get_by_role("button", name="Pause download").click()
    expect(status).to_contain_text("Paused")
    first.get_by_role("button", name="Resume download").click()
    expect(first).to_have_attribute("data-state", "done", timeout=20_000)
    expect(status).to_have_text("Downloaded · 706 kB")
    first.get_by_role("button", name=re.compile("^Play Night Drive")).click()
    wait_for_playable(page)
    expect(page.locator("#player .player-subtitle")).to_have_text("Ferry Test Radio")

    # Auto-download: a setting of the podcast, saved by the daemon.
    page.select_option("#auto-download", "3")
    expect(page.get_by_text("New episodes will download by themselves (newest 3).")).to_be_visible()
    podcast_id = int(page.url.rsplit("/", 1)[1])
    assert daemon.api("GET", f"/v1/podcasts/{podcast_id}")["podcast"]["autoDownload"] == 3
    # Which downloads the newest three (the first is done already).
    expect(page.locator("li.episode[data-state=active], li.episode[data-state=done]")).to_have_count(3, timeout=20_000)

    page.get_by_role("button", name="Refresh").click()
    expect(page.get_by_text("No new episodes.")).to_be_visible()

    # OPML export is a download link with the session cookie.
    opml = page.evaluate("fetch('/v1/podcasts/export').then(r => r.text())")
    assert files.url("/feeds/radio.xml") in opml
    expect(page.locator("a[download='ferry-podcasts.opml']")).to_have_count(0)  # only on the list view
    page.get_by_role("link", name="Podcasts").first.click()
    expect(page.locator("a[download='ferry-podcasts.opml']")).to_have_attribute("href", "/v1/podcasts/export")


def test_paste_feed_urls_import_opml_and_broken_feeds(daemon, pages, files, tmp_path):
    page = pages.new(daemon, path="#/podcasts")
    field = page.locator("#podcast-input")

    # A broken feed: a readable message, no subscription.
    field.fill(files.url("/feeds/broken.xml"))
    expect(page.get_by_role("button", name="Subscribe")).to_be_visible()
    field.press("Enter")
    toast = page.locator(".toast-error")
    expect(toast).to_be_visible()
    assert "feed" in toast.text_content().lower()
    field.fill(files.url("/feeds/missing.xml"))
    field.press("Enter")
    expect(page.locator(".toast-error", has_text="404")).to_be_visible()
    expect(page.get_by_text("No subscriptions yet")).to_be_visible()

    # An Apple Podcasts page URL: the daemon looks its id up in the (loopback) catalog.
    field.fill("https://podcasts.apple.com/us/podcast/ferry-test-radio/id900001")
    field.press("Enter")
    expect(page.locator("h1.podcast-title")).to_have_text("Ferry Test Radio")
    podcast_url = page.url
    episode(page, "Pilot").get_by_role("button", name="Download").click()
    expect(episode(page, "Pilot")).to_have_attribute("data-state", "done", timeout=20_000)
    # Cancelling an episode's download: back to Download, nothing kept.
    live = episode(page, "Live from the harbour")
    live.get_by_role("button", name="Download").click()
    expect(live.locator(".episode-status")).to_contain_text("% of 706 kB")
    live.get_by_role("button", name="Cancel download").click()
    expect(live).to_have_attribute("data-state", "idle")
    expect(live.get_by_role("button", name=re.compile("^Download"))).to_be_visible()
    assert [t["state"] for t in daemon.transfers() if t["url"].endswith("/radio-3.wav")] == ["cancelled"]

    # The same show's feed URL pasted: the same subscription.
    page.get_by_role("link", name="Podcasts").first.click()
    field.fill(files.url("/feeds/radio.xml"))
    field.press("Enter")
    expect(page.locator("h1.podcast-title")).to_have_text("Ferry Test Radio")
    assert page.url == podcast_url

    # OPML import.
    opml = tmp_path / "subs.opml"
    opml.write_text(
        '<?xml version="1.0"?><opml version="2.0"><body>'
        f'<outline type="rss" text="sistak" xmlUrl="{files.url("/feeds/sistak.xml")}"/>'
        f'<outline type="rss" text="gone" xmlUrl="{files.url("/feeds/gone.xml")}"/>'
        "</body></opml>"
    )
    page.get_by_role("link", name="Podcasts").first.click()
    page.locator("input[type=file]").set_input_files(str(opml))
    expect(page.locator(".toast", has_text="Imported 1 podcast; 1 failed")).to_be_visible()
    expect(page.locator(".podcast-card")).to_have_count(2)
    expect(page.locator(".podcast-card", has_text="s i s t a k")).to_contain_text("2 episodes")

    # Unsubscribing asks twice, in place.
    page.locator(".podcast-card", has_text="s i s t a k").click()
    page.get_by_role("button", name="Unsubscribe").click()
    page.get_by_role("button", name="Click again to unsubscribe").click()
    expect(page.get_by_text("Unsubscribed from “s i s t a k”.")).to_be_visible()
    expect(page.locator(".podcast-card .card-title")).to_have_text(["Ferry Test Radio"])


def test_hostile_feed_and_catalog_texts_stay_text(daemon, pages, files):
    page = pages.new(daemon, path="#/podcasts")
    field = page.locator("#podcast-input")
    field.fill("jazz")  # the stand-in catalog answers with every podcast it has
    field.press("Enter")
    hostile = page.locator(".result-card").filter(has=page.locator(".card-title", has_text=XSS_TITLE))
    expect(hostile.locator(".card-subtitle")).to_have_text('<b>bold</b> "quoted" & more · <script>alert(2)</script>')
    hostile.get_by_role("button", name="Subscribe").click()
    expect(hostile.get_by_role("link", name="Subscribed")).to_be_visible()

    card = page.locator(".podcast-card").filter(has=page.locator(".card-title", has_text=XSS_TITLE))
    expect(card).to_be_visible()
    card.click()
    title = page.locator("h1.podcast-title")
    expect(title).to_have_text(XSS_TITLE)
    expect(page).to_have_title(f"{XSS_TITLE} · Ferry")
    expect(page.locator(".podcast-author")).to_have_text("Mallory")
    row = page.locator("li.episode").first
    # Its title was markup and nothing else: the daemon names it after its media file.
    expect(row.locator(".episode-title")).to_have_text("xss-1")
    row.locator("summary").click()
    notes = row.locator(".episode-notes-body")
    expect(notes).to_contain_text("Show notes")
    row.get_by_role("button", name="Download").click()
    expect(row).to_have_attribute("data-state", "done", timeout=20_000)

    for where in ("#view", "#player", "#toasts"):
        assert page.locator(f"{where} script, {where} iframe, {where} [onerror], {where} [onload], {where} svg:not(.icon)").count() == 0
    assert page.locator("#view a[href^='javascript']").count() == 0
    # The only images in the view are artwork from the feed's own http(s) URLs.
    sources = page.locator("#view img").evaluate_all("imgs => imgs.map(i => i.getAttribute('src'))")
    assert sources and all(s.startswith(files.base) for s in sources), sources

    # The same feed pasted as a URL: the same subscription, still text.
    page.goto(f"{daemon.url}/#/podcasts")
    expect(page.locator(".podcast-card .card-title")).to_have_text([XSS_TITLE])
    # The conftest `pages` fixture fails the test if any dialog (alert) opened.


def test_a_private_feed_asks_for_a_login_and_subscribes_with_it(daemon, pages, files):
    """A feed behind HTTP Basic authentication: the page asks for a user name and password
    (only then), says when they are refused, and subscribes with the right ones."""
    files.add("/feeds/members.xml", files.files["/feeds/sistak.xml"].data.replace(b"s i s t a k", b"Members Only"), "application/rss+xml")
    files.protect("/feeds/members.xml", "member", "open sesame")
    page = pages.new(daemon, path="#/podcasts")
    page.locator("#podcast-input").fill(files.url("/feeds/members.xml"))
    page.locator("#podcast-input").press("Enter")
    login = page.get_by_role("form", name="Private feed login")
    expect(login).to_be_visible()
    expect(login.locator(".feed-login-message")).to_have_text("This feed needs a user name and password.")
    expect(page.locator("#feed-user")).to_be_focused()
    page.locator("#feed-user").fill("member")
    page.locator("#feed-password").fill("wrong")
    login.get_by_role("button", name="Subscribe").click()
    expect(login.locator(".feed-login-message")).to_contain_text("refused the user name and password")
    page.locator("#feed-password").fill("open sesame")
    login.get_by_role("button", name="Subscribe").click()
    expect(page.locator("h1.podcast-title")).to_have_text("Members Only")
    podcast = [p for p in daemon.api("GET", "/v1/podcasts")["podcasts"] if p["title"] == "Members Only"][0]
    assert podcast["user"] == "member"
    assert "open sesame" not in str(daemon.api("GET", f"/v1/podcasts/{podcast['id']}"))


def namespace_feed(files, name: str, title: str, channel: str) -> str:
    """A feed whose channel carries Podcasting 2.0 elements (`channel`, raw XML)."""
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>{title}</title>{channel}
<item><guid>{name}-1</guid><title>{title} 1</title><pubDate>Fri, 20 Nov 2026 09:00:00 GMT</pubDate></item>
</channel></rss>"""
    return files.add(f"/feeds/{name}.xml", xml.encode(), "application/rss+xml")


def test_what_a_podcasting_2_feed_says_of_its_show(daemon, pages, files):
    recommended = namespace_feed(files, "recommended", "The Recommended Show", "")
    feed = namespace_feed(files, "namespace-show", "Namespace Show", f"""
<podcast:medium>music</podcast:medium><podcast:locked owner="me@example.org">yes</podcast:locked>
<podcast:updateFrequency rrule="FREQ=WEEKLY;BYDAY=TU">Weekly on Tuesday</podcast:updateFrequency>
<podcast:person>Ann Host</podcast:person><podcast:person role="guest">&lt;b&gt;Bo&lt;/b&gt;</podcast:person>
<podcast:funding url="{files.base}/fund">Support &lt;script&gt;</podcast:funding><podcast:funding url="javascript:alert(1)">Evil</podcast:funding>
<podcast:license url="{files.base}/license">CC-BY-4.0</podcast:license>
<podcast:trailer pubdate="Thu, 01 Apr 2021 08:00:00 GMT" url="{files.base}/trailer.mp3" length="12345" type="audio/mpeg" season="2">Season &lt;i&gt;Two&lt;/i&gt;</podcast:trailer>
<podcast:txt purpose="verify">S6lpp-7ZCn8-dZfGc-OoyaG</podcast:txt>
<podcast:podroll><podcast:remoteItem feedGuid="11111111-2222-3333-4444-555555555555" feedUrl="{recommended}"/></podcast:podroll>""")
    detail = daemon.api("POST", "/v1/podcasts", {"url": feed})
    for locale, viewport in (("en-US", PHONE), ("ru-RU", None)):
        page = pages.new(daemon, path=f"#/podcasts/{detail['podcast']['id']}", locale=locale, **({"viewport": viewport} if viewport else {}))
        about = page.locator(".podcast-about")
        if locale == "ru-RU":
            expect(about.locator(".badge").first).to_have_text("Музыка")
            expect(about).to_contain_text("Выходит: Weekly on Tuesday")
            page.close()
            continue
        expect(about.locator(".badge")).to_have_text(["Music", "Locked by its publisher"])
        expect(about).to_contain_text("Publishes: Weekly on Tuesday")
        # A name written as markup is shown as its text (as titles are), never as markup.
        expect(about.locator(".podcast-people")).to_have_text("Hosted by Ann Host · With Bo")
        assert about.locator(".podcast-people b").count() == 0
        # Only the http(s) funding link is kept (the javascript: one is dropped by the parser), its
        # text without the markup it tried.
        expect(about.locator(".podcast-funding a")).to_have_count(1)
        expect(about.locator(".podcast-funding a")).to_have_text("Support")
        expect(about.locator(".podcast-funding a")).to_have_attribute("href", f"{files.base}/fund")
        expect(about.locator(".podcast-funding a")).to_have_attribute("rel", "noopener noreferrer nofollow external")
        assert "Evil" not in about.locator(".podcast-funding").inner_text()
        expect(about).to_contain_text("License: CC-BY-4.0")
        # A trailer opens at its host; podcast:txt is shown as text with its purpose.
        expect(about.locator(".podcast-trailers a")).to_have_text("Season Two (season 2)")
        expect(about.locator(".podcast-trailers a")).to_have_attribute("href", f"{files.base}/trailer.mp3")
        expect(about.locator(".podcast-txt")).to_have_text("verify: S6lpp-7ZCn8-dZfGc-OoyaG")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "fits a phone"
        # A recommended show is subscribed with a tap.
        about.locator(".podroll-item").get_by_role("button", name="Subscribe").click()
        expect(page.locator("h1.podcast-title")).to_have_text("The Recommended Show")
        page.close()
    assert recommended in {p["feedURL"] for p in daemon.api("GET", "/v1/podcasts")["podcasts"]}


def test_seasons_people_and_soundbites_of_an_episode(daemon, pages, files):
    sound = wav(40, rate=8000, seed=7)
    media = files.add("/media/bites.wav", sound, "audio/wav")
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Bites Show</title>
<item><guid>bites-1</guid><title>The Bitten One</title><pubDate>Fri, 20 Nov 2026 09:00:00 GMT</pubDate>
<enclosure url="{media}" length="{len(sound)}" type="audio/wav"/>
<podcast:season name="Egypt">2</podcast:season><podcast:episode display="Ch. 3">3</podcast:episode>
<podcast:person>Ann Host</podcast:person><podcast:person role="guest">Cy Guest</podcast:person>
<podcast:soundbite startTime="10" duration="3">The best bit</podcast:soundbite>
</item>
<item><guid>bites-0</guid><title>An Older One</title><pubDate>Fri, 13 Nov 2026 09:00:00 GMT</pubDate>
<podcast:season>1</podcast:season></item></channel></rss>"""
    feed = files.add("/feeds/bites.xml", xml.encode(), "application/rss+xml")
    detail = daemon.api("POST", "/v1/podcasts", {"url": feed})
    episode_id = detail["episodes"][0]["id"]
    page = pages.new(daemon, viewport=PHONE, path=f"#/podcasts/{detail['podcast']['id']}")
    row = episode(page, "The Bitten One")
    expect(row.locator(".episode-facts")).to_contain_text("S2 · Egypt Ch. 3")
    # Two seasons: listed season by season, each under its heading.
    expect(page.locator(".episode-list > li")).to_have_count(4)
    expect(page.locator(".season-heading")).to_have_text(["Season 2 · Egypt", "Season 1"])
    order = page.locator(".episode-list > li").evaluate_all("items => items.map(i => i.classList.contains('season-heading') ? 'H' : 'E')")
    assert order == ["H", "E", "H", "E"], order
    row.locator(".episode-open").click()
    expect(row.locator(".episode-people")).to_have_text("Hosted by Ann Host · With Cy Guest")
    clip = row.get_by_role("button", name=re.compile("^Clip: The best bit"))
    expect(clip).to_have_text(re.compile(r"Clip: The best bit \(0:03\)"))
    clip.click()
    wait_for_playable(page)
    # It plays from 10 s and stops by itself after 3.
    wait_until(lambda: audio(page, "!a.paused && a.currentTime >= 10"), timeout=10, message="the clip to play from its start")
    wait_until(lambda: audio(page, "a.paused"), timeout=10, message="the clip to stop")
    stopped = audio(page, "a.currentTime")
    assert 12.9 <= stopped <= 14, f"stopped at {stopped} s"
    # A clip is not listening on: the episode's place is not changed.
    time.sleep(1)
    assert daemon.api("GET", f"/v1/episodes/{episode_id}/playback") is None, "no place saved (204)"


def test_bookmarks_are_made_in_the_player_and_jumped_to(daemon, pages, files):
    sound = wav(60, rate=8000, seed=9)
    media = files.add("/media/marks.wav", sound, "audio/wav")
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Marks Show</title>
<item><guid>marks-1</guid><title>Marked Episode</title><pubDate>Fri, 20 Nov 2026 09:00:00 GMT</pubDate>
<enclosure url="{media}" length="{len(sound)}" type="audio/wav"/></item></channel></rss>"""
    detail = daemon.api("POST", "/v1/podcasts", {"url": files.add("/feeds/marks.xml", xml.encode(), "application/rss+xml")})
    episode_id = detail["episodes"][0]["id"]
    page = pages.new(daemon, viewport=PHONE, path=f"#/podcasts/{detail['podcast']['id']}")
    row = episode(page, "Marked Episode")
    row.locator(".episode-open").click()
    row.get_by_role("button", name=re.compile("^Stream")).first.click()
    wait_for_playable(page)
    audio(page, "a.currentTime = 20")
    wait_until(lambda: audio(page, "a.currentTime >= 20 && !a.seeking"), timeout=10, message="the seek")
    page.locator("#player .player-bookmark").click()
    expect(page.locator("#toasts")).to_contain_text(re.compile(r"Bookmarked at 0:2\d"))
    # The open row lists it; a note typed there is kept by the daemon.
    mark = row.locator(".bookmark")
    expect(mark).to_have_count(1)
    mark.locator(".bookmark-note").fill("the good part")
    mark.locator(".bookmark-note").press("Enter")
    wait_until(lambda: daemon.api("GET", f"/v1/episodes/{episode_id}/bookmarks")["bookmarks"][0].get("note") == "the good part", message="the note saved")
    saved = daemon.api("GET", "/v1/bookmarks")["bookmarks"][0]
    assert 20 <= saved["seconds"] < 30 and saved["title"] == "Marked Episode" and saved["showTitle"] == "Marks Show", saved
    # Elsewhere in the episode, a tap on the bookmark goes back there.
    audio(page, "a.currentTime = 45")
    wait_until(lambda: audio(page, "a.currentTime >= 45"), timeout=10, message="the seek to 45")
    mark.locator(".act-bookmark").click()
    wait_until(lambda: audio(page, f"Math.abs(a.currentTime - {saved['seconds']}) < 3"), timeout=10, message="the jump to the bookmark")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "fits a phone"
    mark.get_by_role("button", name="Remove this bookmark").click()
    expect(row.locator(".bookmark")).to_have_count(0)
    assert daemon.api("GET", "/v1/bookmarks")["bookmarks"] == []


def test_a_podcast_takes_the_smallest_audio_its_feed_offers(daemon, pages, files):
    """The files menu shows when the feed offers an episode in several files; "Smallest audio"
    is kept for the household and the next download takes that file."""
    big, small = wav(20, rate=16000, seed=5), wav(20, rate=8000, seed=6)
    big_url = files.add("/media/choice.wav", big, "audio/wav")
    small_url = files.add("/media/choice-small.wav", small, "audio/x-wav")
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Choice Show</title>
<item><guid>choice-1</guid><title>Choice Episode</title><pubDate>Fri, 20 Nov 2026 09:00:00 GMT</pubDate>
<enclosure url="{big_url}" length="{len(big)}" type="audio/wav"/>
<podcast:alternateEnclosure type="audio/wav" bitrate="256000" default="true"><podcast:source uri="{big_url}"/></podcast:alternateEnclosure>
<podcast:alternateEnclosure type="audio/x-wav" bitrate="128000"><podcast:source uri="{small_url}"/></podcast:alternateEnclosure>
</item></channel></rss>"""
    plain = namespace_feed(files, "no-choice", "Plain Show", "")
    detail = daemon.api("POST", "/v1/podcasts", {"url": files.add("/feeds/choice.xml", xml.encode(), "application/rss+xml")})
    other = daemon.api("POST", "/v1/podcasts", {"url": plain})
    page = pages.new(daemon, viewport=PHONE, path=f"#/podcasts/{other['podcast']['id']}")
    expect(page.locator("h1.podcast-title")).to_have_text("Plain Show")
    expect(page.locator("#enclosure-choice")).to_have_count(0)
    page.goto(page.url.split("#")[0] + f"#/podcasts/{detail['podcast']['id']}")
    choice = page.locator("#enclosure-choice")
    expect(choice).to_have_value("feed")
    choice.select_option("smallest-audio")
    expect(page.locator("#toasts")).to_contain_text("Downloads now take: Smallest audio.")
    assert daemon.api("GET", f"/v1/podcasts/{detail['podcast']['id']}")["podcast"]["enclosureChoice"] == "smallest-audio"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "fits a phone"
    transfer = daemon.api("POST", f"/v1/episodes/{detail['episodes'][0]['id']}/download", {})
    wait_until(lambda: daemon.api("GET", f"/v1/transfers/{transfer['id']}")["state"] == "completed", timeout=20, message="the download")
    done = daemon.api("GET", f"/v1/transfers/{transfer['id']}")
    assert done["url"] == small_url, done["url"]
