"""Browser notifications: off until the user turns them on (the permission is asked for on that
click only), remembered, and shown when a download finishes or fails; names and messages from
the daemon are only ever a notification's text."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from helpers import create, transfer, wait_until

# Records what the page does with the Notification API (it still calls the real one).
RECORD = """(() => {
    const Real = window.Notification;
    window.__notes = [];
    window.__asked = 0;
    class Recorded extends Real {
        constructor(title, options = {}) {
            window.__notes.push({title, body: options.body, tag: options.tag});
            super(title, options);
        }
        static requestPermission(...args) {
            window.__asked += 1;
            return Real.requestPermission(...args);
        }
    }
    window.Notification = Recorded;
})();"""

HOSTILE = '<img src=x onerror=alert(1)>Report "Q4" & more'


def notes(page):
    return page.evaluate("window.__notes")


def test_notifications_ask_on_click_remember_and_tell_of_finished_and_failed_downloads(daemon, pages, files):
    page = pages.new(daemon, path=None)
    context = page.context
    context.add_init_script(RECORD)
    page.goto(f"{daemon.url}/#/downloads")
    page.reload()  # a new document (only the hash changed), with the init script
    toggle = page.get_by_role("switch", name="Notify me when downloads finish")
    expect(toggle).not_to_be_checked()
    assert page.evaluate("window.__asked") == 0, "the permission must not be asked for without a click"

    # The click asks the browser; not allowed (headless Chromium answers without asking anyone),
    # the switch stays off and says why.
    toggle.click()
    wait_until(lambda: page.evaluate("window.__asked") == 1, message="the permission to be asked for")
    expect(page.locator(".toast", has_text=re.compile("Notifications (are blocked for this page|stay off)"))).to_be_visible()
    expect(toggle).not_to_be_checked()
    assert page.evaluate("localStorage.getItem('ferry.notifications')") != "on"
    # Blocked for good: the switch says where to change that, and asks the browser no more.
    page.evaluate("() => Object.defineProperty(window.Notification, 'permission', {get: () => 'denied', configurable: true})")
    toggle.click()
    expect(page.locator(".toast", has_text="Notifications are blocked for this page")).to_be_visible()
    expect(toggle).not_to_be_checked()
    expect(page.locator("#notify-hint")).to_have_text("Blocked in the browser's site settings.")
    assert page.evaluate("window.__asked") == 1

    # Allowed: one click turns them on, and the choice outlives the page.
    context.grant_permissions(["notifications"], origin=daemon.url)
    page.reload()
    expect(toggle).not_to_be_checked()
    toggle.click()
    expect(toggle).to_be_checked()
    expect(page.locator(".toast", has_text="You'll get a notification when a download finishes or fails.")).to_be_visible()
    assert page.evaluate("localStorage.getItem('ferry.notifications')") == "on"
    page.reload()
    expect(toggle).to_be_checked()
    assert page.evaluate("window.__notes") == []

    # A download finishes (started by another client, with a name that looks like markup).
    done = files.add("/notify/report.txt", b"quarterly numbers\n" * 500, "text/plain")
    finished = create(daemon, [done], session="cli", taskDescription=HOSTILE)[0]["id"]
    wait_until(lambda: notes(page), message="a notification")
    assert notes(page) == [{"title": "Download finished", "body": HOSTILE, "tag": f"ferry-{finished}"}]
    assert transfer(daemon, finished)["state"] == "completed"

    # One fails: its name and the daemon's reason.
    failing = create(daemon, [files.url("/notify/gone.bin")], session="cli")[0]["id"]
    wait_until(lambda: len(notes(page)) == 2, message="a second notification")
    note = notes(page)[1]
    assert note["title"] == "Download failed" and note["tag"] == f"ferry-{failing}", note
    assert re.fullmatch(r"gone\.bin: .*404.*", note["body"]), note
    assert transfer(daemon, failing)["state"] == "failed"
    # Only as notification text: nothing of the name became markup in the page.
    assert page.locator("img[src='x']").count() == 0

    # Off: no more notifications, and it stays off.
    toggle.click()
    expect(toggle).not_to_be_checked()
    assert page.evaluate("localStorage.getItem('ferry.notifications')") == "off"
    quiet = create(daemon, [files.add("/notify/quiet.txt", b"shh\n" * 100, "text/plain")], session="cli")[0]["id"]
    wait_until(lambda: transfer(daemon, quiet)["state"] == "completed", message="the third download")
    page.wait_for_timeout(800)
    assert len(notes(page)) == 2
    page.reload()
    expect(toggle).not_to_be_checked()
