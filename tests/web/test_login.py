"""The web app needs a session cookie: from a user's name and password, or on the server's own
screen from a one-time login link (`ferry open`)."""

from __future__ import annotations

import re

from playwright.sync_api import expect


def test_without_a_session_the_page_asks_for_the_login_link(daemon, pages):
    page = pages.new(daemon, login=False, path="#/downloads")
    login = page.locator("#login")
    expect(login).to_be_visible()
    expect(login.get_by_role("heading", name="Sign in to Ferry")).to_be_visible()
    expect(login.locator("code")).to_have_text("ferry open")
    expect(page.locator("#shell")).to_be_hidden()
    expect(page).to_have_title("Sign in · Ferry")
    # The API refuses the page without the cookie.
    assert page.evaluate("fetch('/v1/transfers').then(r => r.status)") == 401

    # The link `ferry open` prints logs in (HttpOnly, SameSite=Strict cookie) and works once.
    link = daemon.login_url()
    page.goto(link)
    expect(page.locator("#shell")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/(#/search)?$"))
    cookie = next(c for c in page.context.cookies() if c["name"] == "ferry_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""
    expect(page.locator(".sidebar .connection")).to_have_text("Connected")

    other = pages.new(daemon, login=False, path=None)
    other.goto(link)
    expect(other.get_by_text("This login link has expired or was already used")).to_be_visible()

    # Signing out returns to the login screen; the cookie is gone.
    page.get_by_role("button", name="Sign out").click()
    expect(page.locator("#login")).to_be_visible()
    page.reload()
    expect(page.locator("#login")).to_be_visible()
    assert page.evaluate("fetch('/v1/status').then(r => r.status)") == 401


def test_a_user_signs_in_with_a_password(daemon, pages):
    daemon.api("POST", "/v1/users", {"name": "alice", "password": "alice's password"})
    page = pages.new(daemon, login=False, path="#/podcasts")
    form = page.locator(".login-form")
    expect(form.get_by_label("User name")).to_be_focused()

    # A wrong password: said in the form, nothing signed in, the password field emptied.
    form.get_by_label("User name").fill("alice")
    form.get_by_label("Password").fill("not the password")
    form.get_by_role("button", name="Sign in").click()
    expect(form.get_by_role("alert")).to_have_text("Wrong user name or password.")
    expect(form.get_by_label("Password")).to_have_value("")
    assert not [c for c in page.context.cookies() if c["name"] == "ferry_user"]

    form.get_by_label("Password").fill("alice's password")
    form.get_by_label("Password").press("Enter")
    expect(page.locator("#shell")).to_be_visible()
    cookie = next(c for c in page.context.cookies() if c["name"] == "ferry_user")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("fetch('/v1/me').then(r => r.json())")["user"] == "alice"
    sessions = daemon.api("GET", "/v1/users/alice/sessions")["credentials"]
    assert len(sessions) == 1 and "Chrome" in (sessions[0].get("label") or "")

    # Signing out ends the session on the server too.
    page.get_by_role("button", name="Sign out").click()
    expect(page.locator("#login")).to_be_visible()
    assert daemon.api("GET", "/v1/users/alice/sessions")["credentials"] == []
