"""An admin's Users page: add a user who can then sign in; change their password and role; see
their sessions and sign them out, one or everywhere; make and revoke API tokens; remove them.
A member sees neither Users nor Settings, and the API refuses them both."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

from playwright.sync_api import Page, expect

from conftest import PHONE, screenshot


def sign_in(pages, daemon, name: str, password: str, **options) -> Page:
    page = pages.new(daemon, login=False, path="#/search", **options)
    form = page.locator(".login-form")
    form.get_by_label("User name").fill(name)
    form.get_by_label("Password").fill(password)
    form.get_by_role("button", name="Sign in").click()
    expect(page.locator("#shell")).to_be_visible()
    return page


def user(page: Page, name: str):
    return page.locator(f'details.user[data-user="{name}"]')


def can_log_in(daemon, name: str, password: str) -> bool:
    request = urllib.request.Request(daemon.url + "/v1/session", data=json.dumps({"name": name, "password": password}).encode(), method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status == 204
    except urllib.error.HTTPError:
        return False


def test_an_admin_adds_a_user_who_signs_in_and_signs_them_out(daemon, pages):
    admin = pages.new(daemon, path="#/users")
    expect(admin.locator(".view-users h1")).to_have_text("Users")
    expect(admin.get_by_text("No users yet")).to_be_visible()
    form = admin.locator("form", has=admin.get_by_role("heading", name="Add a user"))

    # Too short a password: the daemon's sentence next to the field, nobody added.
    form.get_by_label("Name", exact=True).fill("bob")
    form.get_by_label("Password", exact=True).fill("short")
    form.get_by_role("button", name="Add user").click()
    expect(form.get_by_label("Password", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(form.locator(".error-box")).to_contain_text("password")
    assert daemon.api("GET", "/v1/users")["users"] == []

    form.get_by_label("Password", exact=True).fill("bob's password")
    form.get_by_label("Role", exact=True).select_option("member")
    form.get_by_role("button", name="Add user").click()
    expect(admin.get_by_text("Added bob.")).to_be_visible()
    expect(user(admin, "bob")).to_contain_text("Member · 0 sessions · 0 tokens")
    assert [(u["name"], u["role"]) for u in daemon.api("GET", "/v1/users")["users"]] == [("bob", "member")]

    # Bob signs in from his own browser.
    bob = sign_in(pages, daemon, "bob", "bob's password")
    assert bob.evaluate("fetch('/v1/me').then(r => r.json())")["user"] == "bob"

    # The admin sees his session, and signs it out.
    admin.reload()
    bob_row = user(admin, "bob")
    expect(bob_row).to_contain_text("1 session")
    bob_row.locator("summary").click()
    sessions = bob_row.locator("div", has=admin.get_by_role("heading", name="Sessions")).locator(".credential")
    expect(sessions).to_have_count(1)
    expect(sessions.first).to_contain_text("Chrome")
    sessions.first.get_by_role("button", name=re.compile(r"^Sign out .*Chrome")).click()
    sessions.first.get_by_role("button", name=re.compile(r"^Really sign out .*Chrome")).click()
    expect(admin.get_by_text("Signed out.")).to_be_visible()
    expect(bob_row.get_by_text("Not signed in anywhere.")).to_be_visible()
    expect(bob_row.locator("summary")).to_contain_text("0 sessions")
    screenshot(admin, "users-desktop")
    assert daemon.api("GET", "/v1/users/bob/sessions")["credentials"] == []
    assert bob.evaluate("fetch('/v1/me').then(r => r.status)") == 401


def test_password_role_tokens_and_removal(daemon, pages):
    daemon.api("POST", "/v1/users", {"name": "carol", "password": "carol's password"})
    sign_in(pages, daemon, "carol", "carol's password")
    sign_in(pages, daemon, "carol", "carol's password")
    admin = pages.new(daemon, path="#/users")
    row = user(admin, "carol")
    row.locator("summary").click()

    # A new password: the old one no longer works.
    row.get_by_label("New password").fill("carol's new password")
    row.get_by_role("button", name="Set password").click()
    expect(admin.get_by_text("New password set for carol.")).to_be_visible()
    assert not can_log_in(daemon, "carol", "carol's password") and can_log_in(daemon, "carol", "carol's new password")

    # Sign out everywhere.
    sessions = row.locator("div", has=admin.get_by_role("heading", name="Sessions"))
    sessions.get_by_role("button", name="Sign out everywhere").click()
    expect(admin.get_by_text("carol is signed out everywhere.")).to_be_visible()
    assert daemon.api("GET", "/v1/users/carol/sessions")["credentials"] == []

    # An API token, shown once; then revoked.
    tokens = row.locator("div", has=admin.get_by_role("heading", name="API tokens"))
    tokens.get_by_label("Token label").fill("backup script")
    tokens.get_by_role("button", name="Make token").click()
    secret = tokens.locator(".token-value").inner_text()
    assert len(secret) >= 32
    expect(tokens.locator(".credential")).to_have_count(1)
    expect(tokens.locator(".credential")).to_contain_text("backup script")
    me = urllib.request.Request(daemon.url + "/v1/me", headers={"Authorization": f"Bearer {secret}"})
    with urllib.request.urlopen(me, timeout=20) as response:
        assert json.loads(response.read())["user"] == "carol"
    tokens.get_by_role("button", name="Revoke backup script").click()
    tokens.get_by_role("button", name="Really revoke backup script").click()
    expect(admin.get_by_text("Token revoked.")).to_be_visible()
    assert daemon.api("GET", "/v1/users/carol/tokens")["credentials"] == []

    # Made an admin, then removed.
    row.get_by_role("button", name="Make admin").click()
    expect(admin.get_by_text("carol is now: Admin.")).to_be_visible()
    assert daemon.api("GET", "/v1/users")["users"][0]["role"] == "admin"
    row = user(admin, "carol")
    expect(row).to_contain_text("Admin ·")
    expect(row).to_have_attribute("open", "")  # unfolded still, after the list was read again
    row.get_by_role("button", name="Remove carol").click()
    row.get_by_role("button", name="Really remove carol").click()
    expect(admin.get_by_text("Removed carol.")).to_be_visible()
    expect(user(admin, "carol")).to_have_count(0)
    assert daemon.api("GET", "/v1/users")["users"] == []


def test_a_member_sees_no_admin_pages_and_the_api_refuses_them(daemon, pages):
    daemon.api("POST", "/v1/users", {"name": "dave", "password": "dave's password"})
    page = sign_in(pages, daemon, "dave", "dave's password")
    expect(page.locator(".nav-link[data-view='downloads']")).to_be_visible()
    expect(page.locator(".nav-link[data-view='settings']")).to_be_hidden()
    expect(page.locator(".nav-link[data-view='users']")).to_be_hidden()
    for path in ["#/settings", "#/users"]:
        page.goto(f"{daemon.url}/{path}")
        expect(page).to_have_url(f"{daemon.url}/#/search")
        expect(page.locator(".view-search")).to_be_visible()
    for method, path in [("GET", "/v1/config"), ("PATCH", "/v1/config"), ("GET", "/v1/users"), ("GET", "/v1/listener-settings"), ("PUT", "/v1/listener-settings")]:
        status = page.evaluate(
            "([method, path]) => fetch(path, {method, headers: {'Content-Type': 'application/json'}, body: method === 'GET' ? undefined : '{}'}).then(r => r.status)",
            [method, path],
        )
        assert status == 403, f"{method} {path}: {status}"
    # The New download dialog has no folder for a member: their downloads go to the library.
    page.locator(".nav-link[data-view='downloads']").click()
    page.get_by_role("button", name="New download").click()
    dialog = page.locator("dialog#new-download")
    expect(dialog.get_by_label("URLs", exact=True)).to_be_visible()
    expect(dialog.get_by_label("Folder", exact=True)).to_have_count(0)


def test_the_users_page_at_phone_width(daemon, pages):
    daemon.api("POST", "/v1/users", {"name": "erin-with-a-rather-long-name", "password": "erin's password"})
    page = pages.new(daemon, viewport=PHONE, path="#/users")
    row = user(page, "erin-with-a-rather-long-name")
    row.locator("summary").click()
    expect(row.get_by_role("button", name="Sign out everywhere")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(page, "users-phone")
