"""An admin's Settings page: the daemon-wide speed limit, its schedule and the other transfer
options apply at once (/v1/config); the listeners beyond loopback, aria2's RPC and the sync API
are saved for the daemon's next start, which opens them. A member sees none of it."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from conftest import PHONE, screenshot
from daemon import free_port
from helpers import wait_until


def test_an_admin_sets_the_speed_limit_and_its_schedule(daemon, pages):
    page = pages.new(daemon, path="#/settings")
    expect(page.locator(".view-settings h1")).to_have_text("Settings")
    form = page.locator("section", has=page.get_by_role("heading", name="Downloads", exact=True))
    form.get_by_label("Speed limit", exact=True).fill("2")
    form.get_by_label("Downloads at once", exact=True).fill("3")
    form.get_by_role("button", name="Add a time window").click()
    window = form.get_by_role("group", name="Time window")
    expect(window.get_by_label("From", exact=True)).to_be_focused()
    # Mon-Fri were picked; Saturday too, from the keyboard.
    window.get_by_label("Sat", exact=True).focus()
    page.keyboard.press("Space")
    expect(window.get_by_label("Sat", exact=True)).to_be_checked()
    window.get_by_label("From", exact=True).fill("08:00")
    window.get_by_label("Until", exact=True).fill("20:30")
    window.get_by_label("Limit in the window", exact=True).fill("500")
    window.get_by_label("Unit").select_option(label="KB/s")
    form.get_by_label("Outside the windows", exact=True).select_option("paused")
    screenshot(page, "settings-desktop")
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Settings saved: they apply now.")).to_be_visible()

    config = daemon.api("GET", "/v1/config")
    assert config["bytesPerSecond"] == 2 * 1024 * 1024 and config["maxConcurrent"] == 3, config
    assert config["schedule"]["outside"] == "paused", config
    [saved] = config["schedule"]["windows"]
    assert sorted(saved["days"]) == [1, 2, 3, 4, 5, 6] and saved["start"] == 8 * 3600 and saved["end"] == 20 * 3600 + 1800, saved
    assert saved["bytesPerSecond"] == 500 * 1024, saved

    # The page reads back what the daemon holds.
    page.reload()
    form = page.locator("section", has=page.get_by_role("heading", name="Downloads", exact=True))
    expect(form.get_by_label("Speed limit", exact=True)).to_have_value("2")
    expect(form.get_by_role("group", name="Time window").get_by_label("Until", exact=True)).to_have_value("20:30")

    # A limit the daemon refuses: its sentence next to the field, and nothing changed.
    form.get_by_label("Speed limit", exact=True).fill("0.5")
    form.locator("#settings-rate ~ select").select_option(label="KB/s")
    form.get_by_role("button", name="Save").click()
    expect(form.get_by_label("Speed limit", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(form.locator(".error-box")).to_contain_text("bytesPerSecond must be at least 1024")
    assert daemon.api("GET", "/v1/config")["bytesPerSecond"] == 2 * 1024 * 1024

    # Emptied, the limit and the schedule are gone.
    form.get_by_label("Speed limit", exact=True).fill("")
    form.get_by_role("button", name="Remove this window").click()
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Settings saved: they apply now.")).to_be_visible()
    config = daemon.api("GET", "/v1/config")
    assert "bytesPerSecond" not in config and "schedule" not in config and config["maxConcurrent"] == 3, config


def test_listeners_are_saved_for_the_next_start_which_opens_them(start_daemon, pages):
    daemon = start_daemon()
    page = pages.new(daemon, path="#/settings")
    section = page.locator("section", has=page.get_by_role("heading", name="Listeners"))
    expect(section.locator(".notice")).to_contain_text("take effect when the daemon starts again")
    remote_port, aria2_port, sync_port = free_port(), free_port(), free_port()

    # A plain listener without a trusted proxy would stop the start: refused, nothing saved.
    section.get_by_label("Serve the web app and the API to other devices").check()
    section.get_by_label("Addresses", exact=True).fill(f"http://127.0.0.1:{remote_port}")
    section.get_by_role("button", name="Save").click()
    expect(section.locator(".error-box")).to_contain_text("trusted-proxy")
    expect(section.get_by_label("Addresses", exact=True)).to_have_attribute("aria-invalid", "true")
    # A certificate the daemon cannot read: said next to it.
    section.get_by_label("Addresses", exact=True).fill(f"127.0.0.1:{remote_port}")
    section.get_by_label("Certificate (PEM)").first.fill("/nonexistent/fullchain.pem")
    section.get_by_label("Private key (PEM)").first.fill("/nonexistent/privkey.pem")
    section.get_by_role("button", name="Save").click()
    expect(section.get_by_label("Certificate (PEM)").first).to_have_attribute("aria-invalid", "true")
    expect(section.locator(".error-box")).to_contain_text("cannot read /nonexistent/fullchain.pem")
    section.get_by_label("Certificate (PEM)").first.fill("")
    section.get_by_label("Private key (PEM)").first.fill("")
    assert not (daemon.state / "remote.json").exists()

    section.get_by_label("Addresses", exact=True).fill(f"127.0.0.1:{remote_port}")
    section.get_by_label("Server names", exact=True).fill("ferry.localhost")
    section.get_by_label("Answer aria2's JSON-RPC (AriaNg, webui-aria2) on this machine").check()
    section.get_by_label("Port", exact=True).fill(str(aria2_port))
    section.get_by_label("Let podcast apps on phones sync (AntennaPod, gPodder, Kasts)").check()
    section.get_by_label("Address", exact=True).fill(f"127.0.0.1:{sync_port}")
    section.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved: the daemon opens them at its next start.")).to_be_visible()

    # The same files the CLI writes (`ferry remote enable`, `ferry aria2 enable`).
    assert json.loads((daemon.state / "remote.json").read_text())["listen"] == [f"127.0.0.1:{remote_port}"]
    assert (daemon.state / "aria2-rpc").read_text() == f"{aria2_port}\n"
    assert json.loads((daemon.state / "sync.json").read_text())["listen"] == f"127.0.0.1:{sync_port}"
    assert f"port {aria2_port}" in daemon.run("aria2", "status")
    status = daemon.api("GET", "/v1/status")
    assert not status.get("aria2URL") and not status.get("syncURL"), "nothing opens before the next start"

    # Restart now, from the page: the daemon starts again (the same process, the same address)
    # and opens all three; the page comes back showing where, with the certificate's fingerprint.
    before = daemon.api("GET", "/v1/status")
    page.get_by_role("button", name="Restart now").click()

    def restarted():
        try:
            return (status := daemon.api("GET", "/v1/status"))["startedAt"] != before["startedAt"] and status
        except Exception:
            return None

    status = wait_until(restarted, timeout=60, message="the daemon to start again")
    assert status["pid"] == before["pid"] and status["url"] == before["url"], (status, before)
    assert status["aria2URL"] == f"http://127.0.0.1:{aria2_port}/jsonrpc" and status["syncURL"] == f"http://127.0.0.1:{sync_port}", status
    remote = daemon.api("GET", "/v1/remote")
    assert remote["urls"] and remote["certificateFingerprint"], remote
    page = pages.new(daemon, path="#/settings")
    section = page.locator("section", has=page.get_by_role("heading", name="Listeners"))
    expect(section.get_by_text(remote["certificateFingerprint"])).to_be_visible()
    expect(section.get_by_role("link", name=remote["urls"][0])).to_be_visible()
    expect(section.get_by_text(status["aria2URL"])).to_be_visible()
    expect(section.get_by_text(daemon.run("aria2", "secret").strip(), exact=True)).to_be_visible()
    expect(section.get_by_text(status["syncURL"])).to_be_visible()
    expect(section.get_by_label("Port", exact=True)).to_have_value(str(aria2_port))

    # Switched off again: the files go, as `ferry remote disable` and `ferry aria2 disable` do.
    for name in ["Serve the web app and the API to other devices", "Answer aria2's JSON-RPC (AriaNg, webui-aria2) on this machine", "Let podcast apps on phones sync (AntennaPod, gPodder, Kasts)"]:
        section.get_by_label(name).uncheck()
    section.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved: the daemon opens them at its next start.")).to_be_visible()
    assert not any((daemon.state / name).exists() for name in ["remote.json", "aria2-rpc", "sync.json"])


# Each language's browser locale, so the page picks it by itself.
LOCALES = {"en": "en-GB", "zh-Hans": "zh-CN", "ru": "ru-RU", "vi": "vi-VN"}


def test_the_settings_page_at_phone_width(daemon, pages):
    for code, locale in LOCALES.items():
        page = pages.new(daemon, viewport=PHONE, path="#/settings", locale=locale)
        assert page.evaluate("document.documentElement.lang") == code
        page.locator(".schedule .btn-secondary").click()  # a time window, the widest row
        expect(page.locator(".window")).to_have_count(1)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], code
        # An admin's six tabs at the bottom: each inside the screen, its name whole.
        tabs = page.locator(".nav-link:visible")
        expect(tabs).to_have_count(6)
        for n in range(6):
            box = tabs.nth(n).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (code, box)
            label = tabs.nth(n).locator("[data-i18n]")
            assert label.evaluate("(el) => el.scrollWidth <= el.clientWidth"), f"{code}: {label.inner_text()!r} is cut off"
        screenshot(page, f"settings-{code}-phone")


def test_an_admin_holds_downloads_on_metered_networks_and_names_the_interfaces(daemon, pages):
    page = pages.new(daemon, path="#/settings", viewport=PHONE)
    form = page.locator("section", has=page.get_by_role("heading", name="Downloads", exact=True))
    group = form.get_by_role("group", name="Metered networks")
    expect(group).to_contain_text("NetworkManager")
    expect(form).to_contain_text("--discretionary")
    group.get_by_label("Hold every download while the network is metered").check()
    group.get_by_label("Metered interfaces", exact=True).fill("wwan0, usb0")
    # At phone width the group fits: nothing wider than the screen.
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    screenshot(page, "settings-metered-phone")
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Settings saved: they apply now.")).to_be_visible()
    config = daemon.api("GET", "/v1/config")
    assert config["allowsMeteredNetwork"] is False and config["meteredInterfaces"] == ["wwan0", "usb0"], config

    # A name the daemon refuses: its sentence next to the field, nothing changed.
    group.get_by_label("Metered interfaces", exact=True).fill("wwan0, bad/name")
    form.get_by_role("button", name="Save").click()
    expect(group.get_by_label("Metered interfaces", exact=True)).to_have_attribute("aria-invalid", "true")
    assert daemon.api("GET", "/v1/config")["meteredInterfaces"] == ["wwan0", "usb0"]

    # Unchecked and emptied: both gone.
    page.reload()
    group = page.get_by_role("group", name="Metered networks")
    expect(group.get_by_label("Hold every download while the network is metered")).to_be_checked()
    group.get_by_label("Hold every download while the network is metered").uncheck()
    group.get_by_label("Metered interfaces", exact=True).fill("")
    page.get_by_role("button", name="Save").first.click()
    expect(page.get_by_text("Settings saved: they apply now.")).to_be_visible()
    config = daemon.api("GET", "/v1/config")
    assert "allowsMeteredNetwork" not in config and "meteredInterfaces" not in config, config


def test_the_health_section_reports_and_mends_at_phone_width(daemon, pages):
    """The doctor's report for an admin: an orphan part file and a secret readable by others are
    named, the button mends both, and the report then says what it did."""
    orphan = daemon.library / ".partial" / "4242.part"
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"\0" * 2048)
    (daemon.state / "token").chmod(0o644)
    page = pages.new(daemon, path="#/settings", viewport=PHONE)
    health = page.locator("section", has=page.get_by_role("heading", name="Health", exact=True))
    parts = health.locator(".health-check[data-status='problem']", has_text="Part files")
    expect(parts).to_contain_text("4242.part: no transfer 4242")
    expect(health.locator(".health-check[data-status='problem']", has_text="Permissions")).to_contain_text("token has mode 644")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    parts.scroll_into_view_if_needed()
    screenshot(page, "settings-health-phone")
    health.get_by_role("button", name="Mend what is safe").click()
    expect(health.locator(".health-check", has_text="Part files")).to_contain_text("Mended: deleted 1 part file no transfer owned")
    expect(health.locator(".health-check[data-status='problem']")).to_have_count(0)
    expect(health.get_by_role("button", name="Mend what is safe")).to_have_count(0)
    assert not orphan.exists()
    assert (daemon.state / "token").stat().st_mode & 0o777 == 0o600
    # In Russian the same page names its checks in Russian.
    ru = pages.new(daemon, path="#/settings", viewport=PHONE, locale="ru-RU")
    expect(ru.get_by_role("heading", name="Состояние", exact=True)).to_be_visible()
    expect(ru.locator(".health-check", has_text="Части загрузок")).to_have_count(1)
