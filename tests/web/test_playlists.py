"""Playlists: a listener keeps a "road trip" beside Up Next — made and filled from episode rows,
reordered, renamed, an item moved to Up Next, played through (one item's end starts the next) —
at a phone's width, in English and in Russian; another account sees none of it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from conftest import DESKTOP, screenshot
from helpers import audio, episode, wait_for_playable, wait_until
from servers import wav
from test_i18n import LOCALES, catalogue, no_keys_in_labels, no_keys_shown, texts_fit, tr

NARROW = {"width": 360, "height": 740}


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def road_feed(files) -> tuple[str, list[str]]:
    legs = ["Leg One", "Leg Two", "Leg Three"]
    items = []
    for n, title in enumerate(legs, start=1):
        sound = wav(6, rate=8000, seed=n)
        media = files.add(f"/media/leg{n}.wav", sound, "audio/wav")
        items.append(f"""<item><guid>leg-{n}</guid><title>{title}</title><pubDate>Fri, 0{n} Oct 2026 09:00:00 GMT</pubDate>
<enclosure url="{media}" length="{len(sound)}" type="audio/wav"/></item>""")
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Road Show</title>{''.join(items)}</channel></rss>"""
    return files.add("/feeds/road.xml", xml.encode(), "application/rss+xml"), legs


def add_to_playlist(page, title: str, playlist: str, new: bool = False):
    row = episode(page, title)
    if not row.locator(".act-add-to-playlist").is_visible():
        row.locator(".episode-open").click()
    row.locator(".act-add-to-playlist").click()
    choose = row.locator(".playlist-choose")
    if new:
        choose.select_option(value="new")
        row.locator(".playlist-picker-new input").fill(playlist)
        row.locator(".playlist-picker-new input").press("Enter")
    else:
        choose.select_option(label=playlist)
    expect(page.locator("#toasts")).to_contain_text(f"“{title}” is in {playlist}.")


def open_playlists(page):
    page.goto(page.url.split("#")[0] + "#/podcasts")
    page.locator(".act-open-playlists").click()
    expect(page.locator("#panel-playlists")).to_be_visible()
    return page.locator("#panel-playlists")


def titles(panel) -> list[str]:
    return panel.locator(".playlist-items .upnext-title").all_text_contents()


def test_a_road_trip_playlist_beside_up_next(daemon, pages, files):
    url, legs = road_feed(files)
    detail = daemon.api("POST", "/v1/podcasts", {"url": url})
    ids = {e["title"]: e["id"] for e in detail["episodes"]}
    podcast = detail["podcast"]["id"]

    page = pages.new(daemon, viewport=NARROW, path=f"#/podcasts/{podcast}")
    add_to_playlist(page, "Leg One", "road trip", new=True)
    add_to_playlist(page, "Leg Two", "road trip")
    add_to_playlist(page, "Leg Three", "road trip")
    assert fits(page), "the rows fit a phone"

    panel = open_playlists(page)
    row = panel.locator(".playlist-row").filter(has_text="road trip")
    expect(row).to_contain_text("3 items")
    row.locator(".playlist-open").click()
    expect(panel.locator(".playlist-items li")).to_have_count(3)
    assert titles(panel) == legs

    # Reordered with the buttons; renamed; one item moved to Up Next.
    panel.get_by_role("button", name="Move Leg Two up").click()
    wait_until(lambda: titles(panel) == ["Leg Two", "Leg One", "Leg Three"], message="the new order")
    panel.locator(".playlist-rename-name").fill("Road trip")
    panel.get_by_role("button", name="Rename", exact=True).click()
    wait_until(lambda: [p["name"] for p in daemon.api("GET", "/v1/playlists")["playlists"]] == ["Road trip"], message="the new name")
    panel.locator(".playlist-item").filter(has_text="Leg Three").locator(".playlist-move").select_option(value="up-next")
    expect(page.locator("#toasts")).to_contain_text("“Leg Three” moved to Up Next.")
    wait_until(lambda: titles(panel) == ["Leg Two", "Leg One"], message="Leg Three gone from the playlist")
    assert [i["id"] for i in daemon.api("GET", "/v1/up-next")["items"]] == [ids["Leg Three"]]
    assert fits(page), "the panel fits a phone"
    screenshot(page, "playlist-phone")

    # Played through: the first item's end starts the second; the playlist keeps both.
    panel.locator(".playlist-actions .act-play-playlist").click()
    wait_for_playable(page)
    wait_until(lambda: audio(page, "a.dataset.episodeId") == str(ids["Leg Two"]), message="Leg Two playing")
    expect(panel.locator(".playlist-item.is-current")).to_contain_text("Leg Two")
    audio(page, "a.currentTime = a.duration - 0.4")
    wait_until(lambda: audio(page, "a.dataset.episodeId") == str(ids["Leg One"]) and audio(page, "!a.paused"), timeout=15, message="Leg One after Leg Two")
    expect(panel.locator(".playlist-item.is-current")).to_contain_text("Leg One")
    playlist = daemon.api("GET", "/v1/playlists")["playlists"][0]
    assert [i["id"] for i in daemon.api("GET", f"/v1/playlists/{playlist['id']}")["items"]] == [ids["Leg Two"], ids["Leg One"]]
    # The playlist's last item ended: Up Next goes on.
    wait_for_playable(page)
    audio(page, "a.currentTime = a.duration - 0.4")
    wait_until(lambda: audio(page, "a.dataset.episodeId") == str(ids["Leg Three"]), timeout=15, message="Up Next after the playlist")
    assert fits(page)

    # In Russian, the same playlist, its words and its count.
    ru = pages.new(daemon, viewport=NARROW, path="#/podcasts", locale="ru-RU")
    ru.locator(".act-open-playlists").click()
    ru_panel = ru.locator("#panel-playlists")
    expect(ru_panel.locator(".queue-playlists")).to_have_text("Плейлисты")
    expect(ru.locator("#panel-tab-upnext")).to_have_attribute("aria-selected", "true")
    expect(ru_panel.locator(".playlist-row")).to_contain_text("2 записи")
    ru_panel.locator(".playlist-open").click()
    expect(ru_panel.get_by_role("button", name="Переименовать")).to_be_visible()
    screenshot(ru, "playlist-ru-phone")
    expect(ru_panel.locator(".playlist-actions .act-play-playlist")).to_have_text("Слушать")
    assert fits(ru)

    # Another account has no playlists, and cannot reach this one.
    daemon.api("POST", "/v1/users", {"name": "bob", "password": "bob's password"})
    bob = pages.new(daemon, viewport=NARROW, path="#/podcasts", user="bob")
    bob.locator(".act-open-playlists").click()
    expect(bob.locator("#panel-playlists .playlists-note")).to_be_visible()
    expect(bob.locator("#panel-playlists .playlist-row")).to_have_count(0)
    token = daemon.run("user", "token", "bob").strip()
    assert daemon.api("GET", "/v1/playlists", token=token)["playlists"] == []
    status = bob.evaluate(f"fetch('/v1/playlists/{playlist['id']}').then(r => r.status)")
    assert status == 404


@pytest.mark.parametrize("viewport", [DESKTOP, NARROW], ids=["desktop", "phone"])
@pytest.mark.parametrize("code", list(LOCALES))
def test_the_playlists_pane_in_each_language(daemon, pages, files, code, viewport):
    url, legs = road_feed(files)
    detail = daemon.api("POST", "/v1/podcasts", {"url": url})
    items = [{"kind": "episode", "id": e["id"]} for e in detail["episodes"]]
    daemon.api("POST", "/v1/playlists", {"name": "Дорога · 旅途 · road trip", "items": items})
    strings = catalogue(code)
    page = pages.new(daemon, viewport=viewport, path=f"#/podcasts/{detail['podcast']['id']}", locale=LOCALES[code])
    # An open episode offers "Add to playlist…", with the other actions, in the language.
    row = episode(page, "Leg One")
    row.locator(".episode-open").click()
    expect(row.locator(".act-add-to-playlist")).to_have_text(strings["playlists.add"])
    row.locator(".act-add-to-playlist").click()
    expect(row.locator(".playlist-choose option").first).to_have_text(strings["playlists.choose"])
    texts_fit(page, "li.episode.is-open .episode-more-actions .btn-label")

    page.goto(f"{daemon.url}/#/podcasts")
    page.locator(".act-open-playlists").click()
    panel = page.locator("#panel-playlists")
    expect(panel.locator(".queue-playlists")).to_have_text(strings["playlists.tab"])
    expect(panel.locator(".playlist-row .playlist-facts")).to_contain_text(tr(page, "playlists.count", count=3))
    panel.locator(".playlist-open").click()
    expect(panel.locator(".playlist-items li")).to_have_count(3)
    expect(panel.locator(".playlist-actions .act-play-playlist")).to_have_text(strings["playlists.playAll"])
    expect(panel.locator(".playlist-move").first.locator("option").first).to_have_text(strings["playlists.moveToLabel"])
    assert texts_fit(page, "#player-panel .segment, #player-panel .playlist-actions .btn-label, #player-panel .upnext-title") >= 5
    # The switch goes back to Up Next, whose own words are there too.
    panel.locator(".queue-upnext").click()
    expect(page.locator("#panel-upnext .panel-note")).to_have_text(strings["upnext.empty"])
    assert fits(page)
    no_keys_shown(page, strings)
    no_keys_in_labels(page, strings)
    screenshot(page, f"i18n-playlists-{code}-{'phone' if viewport == NARROW else 'desktop'}")
