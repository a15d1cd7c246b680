"""Small steps the browser tests share."""

from __future__ import annotations

import time

from playwright.sync_api import Locator, Page, expect


def search_songs(page: Page, term: str) -> Locator:
    """Types a search and presses Enter; returns the result rows once they are there."""
    field = page.locator("#search-input")
    field.fill(term)
    field.press("Enter")
    rows = page.locator("li.track")
    expect(rows.first).to_be_visible()
    return rows


def track(page: Page, title: str) -> Locator:
    return page.locator("li.track").filter(has=page.locator(".track-title", has_text=title)).first


def episode(page: Page, title: str) -> Locator:
    return page.locator("li.episode").filter(has=page.locator(".episode-title", has_text=title)).first


def fraction_of(text: str) -> float:
    """'42.0% of 2.1 MB' → 0.42; 0 for a text without a percentage ('Waiting…')."""
    if "%" not in (text or ""):
        return 0.0
    percent = text.split("%")[0].split()[-1]
    return float(percent) / 100


def wait_until(condition, timeout: float = 20, interval: float = 0.1, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {message}")


def audio_state(page: Page) -> dict:
    return page.evaluate(
        """() => {
            const a = document.querySelector('#player-audio');
            return a ? {readyState: a.readyState, duration: a.duration, paused: a.paused, error: a.error && a.error.code,
                        src: a.currentSrc, transferId: a.dataset.transferId} : null;
        }"""
    )


def wait_for_playable(page: Page, timeout: float = 15) -> dict:
    """Waits until the page's <audio> has data to play (readyState ≥ 2) and knows its duration."""
    return wait_until(
        lambda: (s := audio_state(page)) and s["readyState"] >= 2 and (s["duration"] or 0) > 0 and s,
        timeout=timeout,
        message="the audio element to be able to play",
    )
