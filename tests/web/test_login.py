"""The web app needs the session cookie from a one-time login link (`ferry open`)."""

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
