"""The web app in English, 简体中文, Русский and Tiếng Việt: catalogues that agree with each other
and with the code, views and the sidebar in each language at desktop and phone width (Downloads, Podcasts, Half Tunes, a
podcast's page and the player with its panel), the language switch (live, and remembered, the
player relabelled too), and numbers and dates formatted per language."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from conftest import DESKTOP, PHONE, REPO, screenshot
from helpers import assert_not_clipped, audio, create, episode, search_songs, transfer, wait_for_playable, wait_until
from test_player import LAYOUT, player_feeds, subscribe  # noqa: F401 (a fixture)

WEB = REPO / "Sources/FerryServer/Resources/web"
LANGUAGES = ["en", "zh-Hans", "ru", "vi"]
NAMES = ["English", "简体中文", "Русский", "Tiếng Việt"]
# A browser language of each, so the page picks it by itself.
LOCALES = {"en": "en-GB", "zh-Hans": "zh-CN", "ru": "ru-RU", "vi": "vi-VN"}
PLACEHOLDER = re.compile(r"\{(\w+)\}")

# A finished file of 1,234,567 bytes: its size and date as each language writes them.
SIZE = 1_234_567
SIZE_TEXT = {"en": "1.2 MB", "zh-Hans": "1.2 MB", "ru": "1,2 МБ", "vi": "1,2 MB"}
DATE_TIME = {
    "en": r"[A-Z][a-z]{2} \d{1,2}, \d{4}, \d\d:\d\d [AP]M",
    "zh-Hans": r"\d{4}年\d{1,2}月\d{1,2}日 \d\d:\d\d",
    "ru": r"\d{1,2} [а-я]{3,4}\.? \d{4} г\., \d\d:\d\d",
    "vi": r"\d\d:\d\d \d{1,2} thg \d{1,2}, \d{4}",
}
# Ferry Test Radio has 4 episodes: Russian's "few" form.
EPISODES = {"en": "4 episodes", "zh-Hans": "4 个单集", "ru": "4 выпуска", "vi": "4 tập"}


def catalogue(code: str) -> dict:
    return json.loads((WEB / "i18n" / f"{code}.json").read_text(encoding="utf-8"))


def forms(value) -> list[str]:
    """A text, or each form of a plural."""
    return list(value.values()) if isinstance(value, dict) else [value]


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


# MARK: Catalogues


def test_every_language_has_every_key_with_the_same_placeholders():
    english = catalogue("en")
    problems = []
    for key, value in english.items():
        if not all(isinstance(form, str) and form.strip() for form in forms(value)):
            problems.append(f"en: {key!r} has an empty or non-text form")
        if isinstance(value, dict) and len({frozenset(placeholders(form)) for form in value.values()}) > 1:
            problems.append(f"en: the forms of {key!r} name different placeholders")
        # t() picks a plural's form by params.count: a plural without {count} would always be "other".
        if isinstance(value, dict) and not all("count" in placeholders(form) for form in value.values()):
            problems.append(f"en: the plural {key!r} does not name {{count}}")
    for code in LANGUAGES[1:]:
        other = catalogue(code)
        problems += [f"{code}: no {key!r}" for key in sorted(english.keys() - other.keys())]
        problems += [f"{code}: {key!r} is not in English" for key in sorted(other.keys() - english.keys())]
        for key in sorted(english.keys() & other.keys()):
            if isinstance(english[key], dict) != isinstance(other[key], dict):
                problems.append(f"{code}: {key!r} is {'not ' if isinstance(english[key], dict) else ''}a plural, as in English it is{'' if isinstance(english[key], dict) else ' not'}")
                continue
            wanted = set().union(*(placeholders(form) for form in forms(english[key])))
            for form in forms(other[key]):
                if not isinstance(form, str) or not form.strip():
                    problems.append(f"{code}: {key!r} has an empty or non-text form")
                elif placeholders(form) != wanted:
                    problems.append(f"{code}: {key!r} names {sorted(placeholders(form))}, English {sorted(wanted)}: {form!r}")
    assert not problems, "\n".join(problems)


IMPORT = re.compile(r"import\s*\{([^}]*)\}\s*from\s*\"[./]+i18n\.js\"")


def keys_used(source: str) -> set[str]:
    """The literal keys of t("…") / t('…') calls in a module, whatever it imports `t` as."""
    found = IMPORT.search(source)
    if not found:
        return set()
    names = [part.split(" as ")[-1].strip() for part in found.group(1).split(",") if part.split(" as ")[0].strip() == "t"]
    keys = set()
    for name in names:
        call = re.compile(rf"(?<![\w.$]){re.escape(name)}\(\s*([\"'])([^\"'`]+)\1")
        keys |= {key for _, key in call.findall(source)}
    return keys


def test_the_key_scanner_finds_calls_under_any_name():
    source = 'import { language, t as tr } from "../i18n.js";\nconst a = tr("one.key", {n}); b(tr(\'two.key\')); x.tr("not.this"); attr("nor.this");'
    assert keys_used(source) == {"one.key", "two.key"}
    assert keys_used('import { t } from "./i18n.js"; t("a.b"); it("c.d")') == {"a.b"}
    assert keys_used('t("no.import")') == set()


def test_every_key_the_code_uses_is_in_the_catalogues():
    uses: dict[str, set[str]] = {}
    for path in sorted((WEB / "js").rglob("*.js")):
        for key in keys_used(path.read_text(encoding="utf-8")):
            uses.setdefault(key, set()).add(path.name)
    for key in re.findall(r'data-i18n(?:-label|-title)?="([^"]+)"', (WEB / "index.html").read_text(encoding="utf-8")):
        uses.setdefault(key, set()).add("index.html")
    files = set().union(*uses.values())
    # The scan itself works: it sees the modules that speak.
    assert {"app.js", "ui.js", "transfers.js", "downloads.js", "podcasts.js", "format.js", "index.html"} <= files, files
    english = catalogue("en")
    missing = {key: sorted(where) for key, where in uses.items() if key not in english}
    assert not missing, f"keys no catalogue has: {missing}"


def test_plural_forms_are_the_languages_own(daemon, pages):
    page = pages.new(daemon, login=False, path="")
    for code in LANGUAGES:
        categories = set(page.evaluate("(code) => new Intl.PluralRules(code).resolvedOptions().pluralCategories", code))
        for key, value in catalogue(code).items():
            if isinstance(value, dict):
                assert set(value) == categories, f"{code}: {key!r} has forms {sorted(value)}, the language {sorted(categories)}"


def test_a_missing_key_is_shown_in_english_or_as_itself_and_warned(daemon, pages):
    page = pages.new(daemon, login=False, path=None)
    warnings = []
    page.on("console", lambda message: warnings.append(message.text) if message.type == "warning" else None)
    page.goto(f"{daemon.url}/")
    page.wait_for_selector("#login:not([hidden])")
    shown = page.evaluate("import('/js/i18n.js').then(i => [i.t('nav.podcasts'), i.t('no.such.key'), i.t('no.such.key')])")
    assert shown == ["Podcasts", "no.such.key", "no.such.key"]
    wait_until(lambda: warnings, message="the warning")
    assert warnings == ['i18n: missing key "no.such.key" in en'], warnings
    # The pages fixture counts it as a problem: every test fails on a missing translation.
    assert pages.problems == ['translation missing: i18n: missing key "no.such.key" in en']
    pages.problems.clear()


# MARK: Views in each language


def finished_file(daemon, files) -> dict:
    url = files.add("/files/i18n-size.bin", bytes(range(256)) * (SIZE // 256) + bytes(SIZE % 256), "application/octet-stream")
    [created] = create(daemon, [url])
    return wait_until(lambda: (t := transfer(daemon, created["id"])) and t["state"] == "completed" and t, message="the download to finish")


def texts_fit(page: Page, selector: str, within: str | None = None) -> int:
    """Every visible element of `selector` that has text shows all of it (scrolled into view
    first); returns how many. Labels kept for screen readers only (1 px, clipped) are not shown,
    so not checked."""
    count = 0
    for element in page.locator(selector).all():
        box = element.bounding_box() if element.is_visible() else None
        if box and box["width"] > 1 and box["height"] > 1 and element.inner_text().strip():
            element.scroll_into_view_if_needed()
            assert_not_clipped(element, page.locator(within).first if within else None)
            count += 1
    return count


def no_keys_shown(page: Page, strings: dict):
    text = page.locator("body").inner_text()
    shown = [key for key in strings if re.search(rf"(?<![\w.]){re.escape(key)}(?![\w.])", text)]
    assert not shown, f"raw keys on the page: {shown}"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("code", LANGUAGES)
def test_sidebar_downloads_and_podcasts_in_each_language(daemon, pages, files, code, viewport):
    strings = catalogue(code)
    done = finished_file(daemon, files)
    daemon.api("POST", "/v1/podcasts", {"url": files.url("/feeds/radio.xml")})
    page = pages.new(daemon, viewport=viewport, path="#/downloads", locale=LOCALES[code])
    phone = viewport is PHONE

    assert page.evaluate("document.documentElement.lang") == code
    expect(page.locator(".view-downloads h1")).to_have_text(strings["nav.downloads"])
    assert page.title() == f"{strings['nav.downloads']} · Ferry"
    for view in ["search", "podcasts", "downloads"]:
        label = page.locator(f".nav-link[data-view='{view}'] [data-i18n]")
        expect(label).to_have_text(strings[f"nav.{view}"])
        assert_not_clipped(label)
    # The switch names each language in itself and shows this one.
    switch = page.locator(".topbar .language-select" if phone else ".sidebar .language-select")
    expect(switch).to_be_visible()
    expect(switch).to_have_value(code)
    assert switch.locator("option").all_inner_texts() == NAMES
    assert switch.get_attribute("aria-label") == strings["language.label"]
    box, window = switch.bounding_box(), viewport
    assert box["x"] >= 0 and box["x"] + box["width"] <= window["width"], box
    expect(page.locator(".connection-text").first).to_have_text(strings["connection.open"])

    # Downloads: header, tabs, tools; the finished file's size and date as the language writes them.
    texts_fit(page, ".view-downloads .view-header h1, .view-downloads .view-subtitle, .switch-label")
    assert texts_fit(page, ".tabs .tab") == 3
    texts_fit(page, ".bulk-actions .btn-label, .search-bar .btn-label")
    expect(page.locator("#url-input")).to_have_attribute("placeholder", strings["downloads.add.placeholder"])
    expect(page.locator("#tab-active")).to_contain_text(strings["downloads.tab.active"])
    expect(page.get_by_text(strings["downloads.empty.active"])).to_be_visible()
    texts_fit(page, ".empty h2, .empty p")
    page.locator("#tab-finished").click()
    status = page.locator(f"li.download[data-transfer-id='{done['id']}'] .download-status")
    expect(status).to_have_text(re.compile(rf"^{re.escape(SIZE_TEXT[code])} · {DATE_TIME[code]}$"))
    texts_fit(page, "li.download .download-name, li.download .download-status")
    no_keys_shown(page, strings)
    screenshot(page, f"i18n-downloads-{code}-{'phone' if phone else 'desktop'}")

    # Podcasts, the list of subscriptions.
    page.get_by_role("link", name=strings["nav.podcasts"]).first.click()
    expect(page.locator(".view-podcasts h1")).to_have_text(strings["nav.podcasts"])
    assert page.title() == f"{strings['nav.podcasts']} · Ferry"
    expect(page.locator("#subscriptions-title")).to_have_text(strings["podcasts.yours"])
    card = page.locator(".podcast-card").first
    expect(card.locator(".card-meta")).to_have_text(EPISODES[code])
    expect(page.locator("#podcast-input")).to_have_attribute("placeholder", strings["podcasts.input.placeholder"])
    texts_fit(page, ".view-podcasts .view-header h1, .view-podcasts .view-subtitle, .toolbar .btn-label, .search-bar .btn-label, .section-header h2, .section-header .muted")
    texts_fit(page, ".podcast-card .card-meta")
    no_keys_shown(page, strings)
    screenshot(page, f"i18n-podcasts-{code}-{'phone' if phone else 'desktop'}")


def tr(page: Page, key: str, **params) -> str:
    """The text of `key` as the page says it now (its language, its plural forms and numbers)."""
    return page.evaluate("([key, params]) => import('/js/i18n.js').then((i) => i.t(key, params))", [key, params])


def no_keys_in_labels(page: Page, strings: dict):
    """No accessible name, tooltip or placeholder is a raw key."""
    labels = page.evaluate("() => [...document.querySelectorAll('[aria-label], [title], [placeholder]')].flatMap((el) => ['aria-label', 'title', 'placeholder'].map((a) => el.getAttribute(a)).filter(Boolean))")
    shown = sorted({label for label in labels if label in strings})
    assert not shown, f"raw keys in labels: {shown}"


def play_episode(page: Page, title: str):
    episode(page, title).locator(".act-play").click()
    wait_for_playable(page)
    wait_until(lambda: audio(page, "!a.paused && a.currentTime > 0"), timeout=10, message=f"{title} to play")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("code", LANGUAGES)
def test_half_tunes_a_podcast_and_the_player_in_each_language(daemon, pages, catalog, player_feeds, code, viewport):  # noqa: F811
    strings = catalogue(code)
    club, _ = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    page = pages.new(daemon, viewport=viewport, path="#/search", locale=LOCALES[code])
    phone = viewport is PHONE
    name = f"{code}-{'phone' if phone else 'desktop'}"

    # Half Tunes with results.
    expect(page.locator(".view-search .view-subtitle")).to_have_text(strings["search.subtitle"])
    expect(page.locator("#search-input")).to_have_attribute("placeholder", strings["search.placeholder"])
    rows = search_songs(page, "james")
    count = rows.count()
    assert count > 4, count
    expect(page.locator(".view-search .list-summary")).to_have_text(tr(page, "search.summary", count=count, term="james"))
    downloads = page.locator("li.track .track-actions .btn-label")
    expect(downloads.first).to_have_text(strings["episode.download"])
    assert set(downloads.all_inner_texts()) == {strings["episode.download"]}
    texts_fit(page, ".view-search .view-header h1, .view-search .view-subtitle, .view-search .search-bar .btn-label, .view-search .list-summary")
    texts_fit(page, "li.track .track-actions .btn-label, li.track .tag-label")
    no_keys_shown(page, strings)
    no_keys_in_labels(page, strings)
    screenshot(page, f"i18n-search-{name}")

    # A podcast's page, an episode's row open, then that episode playing.
    page.goto(f"{daemon.url}/#/podcasts/{club}")
    expect(page.locator(".episode-count")).to_have_text(EPISODES[code])
    expect(page.locator(".podcast-hero .kicker")).to_have_text(strings["nav.podcast"])
    assert page.locator(".episode-toolbar .segment").all_inner_texts() == [strings[f"podcast.filter.{f}"] for f in ["all", "unplayed", "downloaded", "progress"]]
    row = episode(page, "Long Crossing")
    row.locator(".episode-open").click()
    expect(row.locator(".act-play-next .btn-label")).to_have_text(strings["upnext.playNext"])
    expect(row.locator(".act-up-next .btn-label")).to_have_text(strings["upnext.add"])
    expect(row.locator(".act-play-labelled .btn-label")).to_have_text(strings["action.play"])
    expect(row.locator(".act-mark")).to_have_attribute("aria-label", tr(page, "episode.markPlayedName", title="Long Crossing"))
    expect(episode(page, "Words Only").locator(".tag-none")).to_have_text(strings["episode.noMedia"])
    texts_fit(page, ".podcast-hero .kicker, .podcast-meta, .podcast-actions .btn-label, .podcast-actions .select-label, .view-podcasts .section-header h2, .episode-count")
    assert texts_fit(page, ".episode-toolbar .segment") == 4
    texts_fit(page, ".episode-toolbar .switch-label, li.episode .episode-meta, li.episode .episode-status, li.episode .tag-label, li.episode .btn-label, .episode-more-facts .tag")
    assert texts_fit(page, "li.episode.is-open .episode-more-actions .btn-label") == 4  # play, play next, add to Up Next, add to playlist
    no_keys_shown(page, strings)
    no_keys_in_labels(page, strings)
    screenshot(page, f"i18n-podcast-{name}")

    play_episode(page, "Long Crossing")
    player = page.locator("#player")
    expect(player.locator(".player-toggle")).to_have_attribute("aria-label", strings["action.pause"])
    expect(player.locator(".player-back")).to_have_attribute("aria-label", tr(page, "player.back", count=15))
    expect(player.locator(".player-forward")).to_have_attribute("aria-label", tr(page, "player.forward", count=30))
    expect(player.locator(".player-speed")).to_have_attribute("aria-label", strings["player.speed"])
    expect(player.locator(".player-speed option[value='1.25']")).to_have_text(tr(page, "player.speedOption", speed=1.25))
    assert player.locator(".player-sleep option").all_inner_texts() == [strings["player.sleep.off"], tr(page, "player.sleep.minutes", n=15), tr(page, "player.sleep.minutes", n=30), tr(page, "player.sleep.minutes", n=60), strings["player.sleep.end"]]
    player.locator(".player-sleep").select_option("30")
    expect(player.locator(".player-sleep option:checked")).to_have_text(re.compile(rf"^{re.escape(tr(page, 'player.sleep.minutes', n=30))} · (29:\d\d|30:00)$"))
    result = player.evaluate(LAYOUT)
    assert result["count"] >= 9 and not result["problems"], result
    texts_fit(page, "#player .player-title, #player .player-subtitle, #player .player-chapter")

    # The panel: chapters, the transcript and Up Next, each in the language.
    player.locator(".player-open-chapters").click()
    panel = page.locator("#player-panel")
    expect(panel).to_be_visible()
    expect(panel).to_have_attribute("aria-label", strings["panel.label"])
    assert panel.locator(".panel-tab").all_inner_texts() == [strings["panel.chapters"], strings["panel.transcript"], strings["upnext.tab"]]
    assert texts_fit(page, "#player-panel .panel-tab") == 3
    assert panel.locator(".panel-tabs").evaluate("(tabs) => tabs.scrollWidth <= tabs.clientWidth"), "the tabs do not fit side by side"
    expect(panel.locator(".chapter-button").first).to_have_attribute("aria-label", tr(page, "panel.chapterAt", title="Intro", at="0:00"))
    panel.locator(".panel-tab", has_text=strings["panel.transcript"]).click()
    expect(panel.locator(".panel-filter")).to_have_attribute("placeholder", strings["panel.filter"])
    panel.locator(".panel-filter").fill("harbour")
    expect(panel.locator(".panel-count")).to_have_text(tr(page, "panel.matches", count=2))
    texts_fit(page, "#player-panel .panel-count")
    panel.locator(".panel-tab", has_text=strings["upnext.tab"]).click()
    expect(panel.locator("#panel-upnext .panel-note")).to_have_text(strings["upnext.empty"])
    texts_fit(page, "#player-panel #panel-upnext .panel-note")
    no_keys_shown(page, strings)
    no_keys_in_labels(page, strings)
    screenshot(page, f"i18n-player-{name}")


def test_the_player_its_panel_and_the_open_view_change_language_live(daemon, pages, player_feeds):  # noqa: F811
    club, _ = subscribe(daemon, player_feeds["club"], ("Long Crossing",))
    en, ru = catalogue("en"), catalogue("ru")
    page = pages.new(daemon, path=f"#/podcasts/{club}")
    play_episode(page, "Long Crossing")
    player, panel = page.locator("#player"), page.locator("#player-panel")
    expect(player.locator(".player-toggle")).to_have_attribute("aria-label", en["action.pause"])
    player.locator(".player-open-chapters").click()
    expect(panel.locator(".panel-tab").first).to_have_text(en["panel.chapters"])
    expect(player.locator(".player-speed option[value='1.25']")).to_have_text("1.25×")

    page.locator(".sidebar .language-select").select_option("ru")
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    # The open view is drawn again in Russian, with the episode still playing.
    expect(page.locator(".view-podcasts .section-header h2")).to_have_text(ru["podcast.episodes"])
    expect(page.locator(".episode-count")).to_have_text("4 выпуска")
    assert audio(page, "!a.paused")
    # The bar and the panel, built once, are relabelled.
    expect(player.locator(".player-toggle")).to_have_attribute("aria-label", ru["action.pause"])
    expect(player.locator(".player-back")).to_have_attribute("aria-label", "Назад на 15 секунд")
    expect(player.locator(".player-close")).to_have_attribute("aria-label", ru["player.close"])
    expect(player.locator(".player-help")).to_have_attribute("aria-label", ru["player.keys.title"])
    expect(player.locator(".player-open-transcript")).to_have_attribute("aria-label", ru["panel.transcript"])
    expect(player.locator(".player-speed option[value='1.25']")).to_have_text("1,25×")
    assert player.locator(".player-sleep option").all_inner_texts() == ["Выкл.", "15 мин", "30 мин", "60 мин", ru["player.sleep.end"]]
    assert panel.locator(".panel-tab").all_inner_texts() == [ru["panel.chapters"], ru["panel.transcript"], ru["upnext.tab"]]
    expect(panel).to_have_attribute("aria-label", ru["panel.label"])
    expect(panel.locator(".chapter-button").first).to_have_attribute("aria-label", "Intro, с 0:00")
    expect(panel.locator("#panel-upnext .panel-note")).to_have_text(ru["upnext.empty"])
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name=ru["player.keys.title"])
    expect(dialog).to_be_visible()
    expect(dialog.locator("dd").first).to_have_text(ru["player.keys.toggle"])
    expect(dialog.locator("kbd").first).to_have_text(ru["player.keys.space"])
    no_keys_shown(page, ru)
    no_keys_in_labels(page, ru)


def test_a_browser_language_ferry_does_not_speak_falls_back_to_english(daemon, pages):
    page = pages.new(daemon, path="#/podcasts", locale="de-DE")
    assert page.evaluate("document.documentElement.lang") == "en"
    expect(page.locator(".view-podcasts h1")).to_have_text("Podcasts")


# MARK: The switch


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_switch_changes_the_language_live_and_it_is_remembered(daemon, pages, files, viewport):
    done = finished_file(daemon, files)
    page = pages.new(daemon, viewport=viewport, path="#/downloads?tab=finished")
    switch = page.locator(".topbar .language-select" if viewport is PHONE else ".sidebar .language-select")
    status = page.locator(f"li.download[data-transfer-id='{done['id']}'] .download-status")
    expect(status).to_contain_text("1.2 MB")
    ru, vi, en = catalogue("ru"), catalogue("vi"), catalogue("en")

    switch.select_option("ru")
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator(".nav-link[data-view='podcasts'] [data-i18n]")).to_have_text(ru["nav.podcasts"])
    # The view is drawn again, on the same tab, with the store's transfers.
    expect(page.locator(".view-downloads h1")).to_have_text(ru["nav.downloads"])
    expect(page.locator("#tab-finished")).to_have_attribute("aria-selected", "true")
    expect(status).to_contain_text("1,2 МБ")
    expect(page.locator(".connection-text").first).to_have_text(ru["connection.open"])
    assert page.title() == f"{ru['nav.downloads']} · Ferry"
    assert page.locator(".language-select").evaluate_all("(all) => all.map((s) => s.value)") == ["ru", "ru"]  # both switches agree
    # Names that are attributes change too.
    expect(page.locator(".topbar .logout")).to_have_attribute("aria-label", ru["shell.signOut"])
    expect(switch).to_have_attribute("aria-label", ru["language.label"])
    expect(page.locator(".nav")).to_have_attribute("aria-label", ru["nav.label"])
    expect(page.locator("#url-input")).to_have_attribute("placeholder", ru["downloads.add.placeholder"])

    page.reload()
    page.wait_for_selector("#shell:not([hidden])")
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator(".view-downloads h1")).to_have_text(ru["nav.downloads"])
    expect(switch).to_have_value("ru")

    # The choice beats the browser's language, and back to English works the same way.
    switch.select_option("vi")
    expect(page.locator(".view-downloads h1")).to_have_text(vi["nav.downloads"])
    expect(status).to_contain_text("1,2 MB")
    switch.select_option("en")
    expect(page.locator(".view-downloads h1")).to_have_text(en["nav.downloads"])
    expect(page.locator("html")).to_have_attribute("lang", "en")
    assert page.evaluate("localStorage.getItem('ferry.language')") == "en"


def test_the_saved_choice_beats_the_browsers_language(daemon, pages):
    page = pages.new(daemon, path=None, locale="ru-RU")
    page.evaluate("localStorage.setItem('ferry.language', 'zh-Hans')")
    page.goto(f"{daemon.url}/#/podcasts")
    page.reload()
    expect(page.locator(".view-podcasts h1")).to_have_text(catalogue("zh-Hans")["nav.podcasts"])
    assert page.evaluate("document.documentElement.lang") == "zh-Hans"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_login_screen_speaks_the_language_and_has_the_switch(daemon, pages, viewport):
    zh, ru = catalogue("zh-Hans"), catalogue("ru")
    page = pages.new(daemon, viewport=viewport, login=False, path="", locale="zh-CN")
    expect(page.locator(".login-card h1")).to_have_text(zh["login.heading"])
    assert page.title() == f"{zh['login.title']} · Ferry"
    texts_fit(page, ".login-card h1, .login-lead, .login-steps li, .login-card .btn-label, .login-form label")
    switch = page.locator(".login .language-select")
    switch.select_option("ru")
    expect(page.locator(".login-card h1")).to_have_text(ru["login.heading"])
    expect(page.locator(".login .language-select")).to_be_focused()
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    assert texts_fit(page, ".login-card h1, .login-lead, .login-steps li, .login-card .btn-label, .login-form label") == 8
    screenshot(page, f"i18n-login-ru-{'phone' if viewport is PHONE else 'desktop'}")
