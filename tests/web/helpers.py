"""Small steps the browser tests share."""

from __future__ import annotations

import hashlib
import re
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


def episodes(daemon, podcast_id: int) -> list[dict]:
    """A podcast's episodes as the daemon lists them."""
    return daemon.api("GET", f"/v1/podcasts/{podcast_id}")["episodes"]


def playback(daemon, podcast_id: int, title: str) -> dict | None:
    """Where the daemon says the listener is in the episode of that title."""
    return next(e for e in episodes(daemon, podcast_id) if e["title"] == title).get("playback")


def audio(page: Page, script: str):
    """Evaluates `script` with `a` the player's <audio>."""
    return page.evaluate(f"(() => {{ const a = document.querySelector('#player-audio'); return {script}; }})()")


def wait_for_playable(page: Page, timeout: float = 15) -> dict:
    """Waits until the page's <audio> has data to play (readyState ≥ 2) and knows its duration."""
    return wait_until(
        lambda: (s := audio_state(page)) and s["readyState"] >= 2 and (s["duration"] or 0) > 0 and s,
        timeout=timeout,
        message="the audio element to be able to play",
    )


# What a message for people never contains: the program's insides instead of a sentence.
UNREADABLE = [
    (re.compile(r"^\s*at \S+.*:\d+(:\d+)?\)?\s*$", re.M), "a stack frame"),
    (re.compile(r"\.(m?js|swift|py):\d+"), "a source file and line"),
    (re.compile(r"Traceback|\b(TypeError|ReferenceError|SyntaxError|RangeError|Fatal error)\b"), "a program's error name"),
    (re.compile(r"\[object \w+\]|\bundefined\b|\bNaN\b|^null$"), "a JavaScript value"),
    (re.compile(r"[{\[]\s*\"|\"\w+\"\s*:"), "raw JSON"),
    (re.compile(r"Error Domain=|\b\w+Error\(|\b\w+Error\.\w+"), "a Swift error dump"),
    (re.compile(r"</\w+>|<!doctype|<\w+[^<>]*>\s*<", re.I), "raw HTML"),
]


def assert_readable(text: str, words: str) -> str:
    """`text` is a message for people: it says what `words` (a regular expression, any case)
    describes, in a few words, and nothing in it looks like a stack trace, raw JSON or HTML,
    or a program's own error value. Returns the text."""
    text = (text or "").strip()
    assert len(text.split()) >= 3, f"not a sentence: {text!r}"
    assert len(text) < 400, f"too long to read: {text!r}"
    assert re.search(words, text, re.I), f"{text!r} does not say /{words}/"
    for pattern, what in UNREADABLE:
        assert not pattern.search(text), f"{text!r} shows {what}"
    return text


def readable_message(message: Locator, words: str, *, within: Locator | None = None, timeout: float = 15_000) -> str:
    """Waits until `message` is visible and says `words` (a regular expression, any case), then
    checks that it reads as a sentence (assert_readable) and that none of it is cut off or
    sticks out of `within` (assert_not_clipped). Returns its text."""
    expect(message).to_be_visible(timeout=timeout)
    expect(message).to_contain_text(re.compile(words, re.I), timeout=timeout)
    text = assert_readable(message.inner_text(), words)
    message.scroll_into_view_if_needed()
    assert_not_clipped(message, within)
    return text


def assert_not_clipped(element: Locator, within: Locator | None = None):
    """Every line of `element`'s text is inside the page and inside `within` (default: each of
    its ancestors that hides what overflows), so nothing of it is cut off or drawn under
    something else."""
    problem = element.evaluate(
        """(el, within) => {
            const box = (node) => node.getBoundingClientRect();
            const inside = (inner, outer) => inner.left >= outer.left - 1 && inner.right <= outer.right + 1 && inner.top >= outer.top - 1 && inner.bottom <= outer.bottom + 1;
            const range = document.createRange();
            range.selectNodeContents(el);
            const lines = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
            if (!lines.length) return "no visible text";
            const view = {left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight};
            const limits = within ? [[within, "its container"]] : [];
            for (let node = el.parentElement; node && node !== document.body; node = node.parentElement) {
                const style = getComputedStyle(node);
                if (style.overflowX !== "visible" || style.overflowY !== "visible") limits.push([node, `<${node.tagName.toLowerCase()} class="${node.className}">`]);
            }
            for (const line of lines) {
                if (!inside(line, view)) return `a line sticks out of the window: ${JSON.stringify(line)}`;
                for (const [node, name] of limits) {
                    if (!inside(line, box(node))) return `a line sticks out of ${name}: ${JSON.stringify(line)} vs ${JSON.stringify(box(node))}`;
                }
            }
            return null;
        }""",
        within.element_handle() if within is not None else None,
    )
    assert problem is None, f"{element}: {problem}"


def held_downloads(files, name: str, count: int, *, size: int = 1_200_000, rate: int = 20_000) -> list[str]:
    """`count` files that the loopback file server sends slowly (a minute each by default, too
    small to be split over several connections), so their downloads stay running, paused or
    queued for as long as a test looks at them. Returns their URLs."""
    urls = []
    for n in range(count):
        data = hashlib.sha256(f"{name}-{n}".encode()).digest() * (size // 32)
        urls.append(files.add(f"/held/{name}-{n}.bin", data, "application/octet-stream", rate=rate))
    return urls


def download_row(page: Page, transfer_id: int) -> Locator:
    """The Downloads view's row of one transfer."""
    return page.locator(f'li.download[data-transfer-id="{transfer_id}"]')


def create(daemon, urls: list[str], session: str = "web", **extra) -> list[dict]:
    """Creates transfers through the API (test setup: what another client would do)."""
    return daemon.api("POST", "/v1/transfers", {"urls": urls, "session": session, **extra})["transfers"]


def transfer(daemon, transfer_id: int) -> dict:
    return daemon.api("GET", f"/v1/transfers/{transfer_id}")
