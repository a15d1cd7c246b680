"""Segmented downloads in the Downloads view: a download fetched over several connections shows
a thin strip of its ranges under the bar and says how many connections fetch it; one connection,
or a file too small to split, shows no strip."""

from __future__ import annotations

import hashlib
import random
import re

from playwright.sync_api import Page, expect

from helpers import wait_until

# 16 MB at 500 kB/s per response: four connections take about 8 s, one would take 32 s.
BIG = 16_000_000
SMALL = 1_500_000  # under the 2 MiB a download needs left to be split
RATE = 500_000

# Every row of the list as the page draws it: its strip (shown or not, its pieces' custom
# properties) and its status line.
ROWS_JS = """() => [...document.querySelectorAll('li.download[data-transfer-id]')].map((li) => {
    const strip = li.querySelector('.download-ranges');
    const pieces = strip ? [...strip.querySelectorAll(':scope > span.range')] : [];
    const number = (el, name) => parseFloat(el.style.getPropertyValue(name));
    return {
        id: Number(li.dataset.transferId),
        state: li.dataset.state,
        stripShown: Boolean(strip) && !strip.hidden && getComputedStyle(strip).display !== 'none' && strip.getBoundingClientRect().height > 0,
        ariaHidden: strip ? strip.getAttribute('aria-hidden') : null,
        pieces: pieces.map((p) => ({start: number(p, '--start'), width: number(p, '--width'), fill: number(p, '--fill')})),
        status: li.querySelector('.download-status').textContent,
    };
})"""

# Records, on every change of the list, what each row showed: whether its strip was ever shown,
# its most pieces, and every status line (a strip that flashes between two samples counts too).
WATCH_JS = """() => {
    window.__rows = {};
    const look = () => {
        for (const li of document.querySelectorAll('li.download[data-transfer-id]')) {
            const strip = li.querySelector('.download-ranges');
            const seen = (window.__rows[li.dataset.transferId] ||= {shown: false, pieces: 0, states: [], statuses: []});
            if (strip && !strip.hidden && getComputedStyle(strip).display !== 'none') seen.shown = true;
            seen.pieces = Math.max(seen.pieces, strip ? strip.querySelectorAll(':scope > span.range').length : 0);
            if (!seen.states.includes(li.dataset.state)) seen.states.push(li.dataset.state);
            const status = li.querySelector('.download-status').textContent;
            if (seen.statuses[seen.statuses.length - 1] !== status) seen.statuses.push(status);
        }
    };
    new MutationObserver(look).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
    look();
}"""


def rows(page: Page) -> dict[int, dict]:
    return {row["id"]: row for row in page.evaluate(ROWS_JS)}


def assert_pieces_add_up(pieces: list[dict]):
    """The pieces are the file's ranges in order: from 0 to 1, each starting where the one
    before ends, each filled between 0 and 1."""
    assert len(pieces) >= 2, pieces
    for piece in pieces:
        assert all(value == value for value in piece.values()), f"a custom property is not a number: {pieces}"
        assert 0 <= piece["start"] < 1 and 0 < piece["width"] <= 1 and piece["start"] + piece["width"] <= 1 + 1e-9, pieces
        assert 0 <= piece["fill"] <= 1, pieces
    starts = [p["start"] for p in pieces]
    assert starts == sorted(starts) and len(set(starts)) == len(starts), f"starts do not increase: {pieces}"
    assert pieces[0]["start"] == 0, pieces
    for before, after in zip(pieces, pieces[1:]):
        assert abs(before["start"] + before["width"] - after["start"]) < 1e-6, f"a gap or an overlap: {pieces}"
    assert abs(pieces[-1]["start"] + pieces[-1]["width"] - 1) < 1e-6, f"the ranges do not reach the end: {pieces}"


def covered(pieces: list[dict]) -> float:
    """The fraction of the file the strip shows filled."""
    return sum(p["width"] * p["fill"] for p in pieces)


def test_a_segmented_download_shows_its_ranges_and_connections(daemon, pages, files):
    data = random.Random(7).randbytes(BIG)
    files.add("/segments/four.bin", data, "application/octet-stream", rate=RATE)
    files.add("/segments/one.bin", data, "application/octet-stream", rate=RATE)
    files.add("/segments/small.bin", data[:SMALL], "application/octet-stream", rate=RATE)
    page = pages.new(daemon, path="#/downloads")
    expect(page.get_by_text("Nothing downloading")).to_be_visible()
    page.evaluate(WATCH_JS)

    def start(path: str, connections: int) -> int:
        created = daemon.api("POST", "/v1/transfers", {"urls": [files.url(path)], "session": "web", "options": {"connections": connections}})
        return created["transfers"][0]["id"]

    four = start("/segments/four.bin", 4)
    one = start("/segments/one.bin", 1)
    small = start("/segments/small.bin", 4)
    row = page.locator(f'li.download[data-transfer-id="{four}"]')
    strip = row.locator(".download-ranges")
    status = row.locator(".download-status")

    # Four connections, each with its range: the strip shows under the bar, the status says so.
    expect(status).to_have_text(re.compile(r"^[\d.]+ (kB|MB) of 16\.0 MB · \d+\.\d% · [\d.]+ (kB|MB)/s · 4 connections( · \d+ s left)?$"), timeout=10_000)
    expect(strip).to_be_visible()
    expect(strip).to_have_attribute("aria-hidden", "true")
    wait_until(lambda: len(rows(page)[four]["pieces"]) >= 2, message="the strip to have two pieces or more")

    # The pieces fill as their bytes arrive (a range's bytes count as they reach the file).
    samples = []

    def growing():
        sample = rows(page)[four]
        assert sample["state"] == "running", f"the download stopped before its strip filled: {sample}"
        if sample["stripShown"] and len(sample["pieces"]) >= 2:
            assert_pieces_add_up(sample["pieces"])
            samples.append(sample)
        return len({round(covered(s["pieces"]), 6) for s in samples}) >= 3

    wait_until(growing, timeout=15, interval=0.2, message="the strip's pieces to fill (three different fills)")
    # A piece per range being fetched, and one for the bytes nobody fetches yet.
    assert 2 <= max(len(s["pieces"]) for s in samples) <= 4 + 1
    for before, after in zip(samples, samples[1:]):
        assert covered(after["pieces"]) >= covered(before["pieces"]) - 1e-9, f"the strip emptied: {before['pieces']} then {after['pieces']}"
        if [(p["start"], p["width"]) for p in before["pieces"]] == [(p["start"], p["width"]) for p in after["pieces"]]:
            for b, a in zip(before["pieces"], after["pieces"]):
                assert a["fill"] >= b["fill"] - 1e-9, f"a piece emptied: {before['pieces']} then {after['pieces']}"
    assert covered(samples[-1]["pieces"]) > covered(samples[0]["pieces"])

    # The strip shows what the API says: the same ranges, in the same order (read again if a
    # range was split between the two readings).
    def agree():
        listed = daemon.api("GET", f"/v1/transfers/{four}")
        assert listed["connections"] > 1 and len(listed["ranges"]) >= 2, listed
        return [p["start"] for p in rows(page)[four]["pieces"]] == [r["start"] / BIG for r in listed["ranges"]]

    wait_until(agree, timeout=5, interval=0.2, message="the strip's pieces to be the API's ranges")

    # Paused: no connection, but the journaled ranges still show how far each one is.
    row.get_by_role("button", name="Pause download").click()
    expect(status).to_have_text(re.compile(r"^Paused · \d+\.\d% of 16\.0 MB$"))
    expect(strip).to_be_visible()
    paused = rows(page)[four]
    assert_pieces_add_up(paused["pieces"])
    assert covered(paused["pieces"]) > 0
    row.get_by_role("button", name="Resume download").click()
    expect(status).to_contain_text(re.compile(r" · [2-4] connections\b"), timeout=10_000)
    expect(strip).to_be_visible()

    # Done: the row leaves the list in progress for the finished tab, without a strip, with the
    # file's SHA-256.
    expect(row).to_have_count(0, timeout=30_000)
    assert next(t for t in daemon.transfers() if t["id"] == four)["state"] == "completed"
    page.get_by_role("tab", name=re.compile("Finished")).click()
    done = page.locator(f'li.download[data-transfer-id="{four}"]')
    expect(done.locator(".download-status")).to_have_text(re.compile(r"^16\.0 MB · "))
    expect(done.locator(".download-ranges")).to_be_hidden()
    expect(done.locator(".download-ranges > span.range")).to_have_count(0)
    expect(done.locator(".download-bar")).to_be_hidden()
    expect(done.locator(".sha")).to_have_text(hashlib.sha256(data).hexdigest())
    assert (daemon.library / "Downloads" / "four.bin").read_bytes() == data

    # One connection, and a file too small to split (though it asked for four): never a strip,
    # never "connections", all the while they ran.
    wait_until(lambda: any(t["id"] == small and t["state"] == "completed" for t in daemon.transfers()), timeout=15, message="the small download to complete")
    watched = page.evaluate("() => window.__rows")
    for transfer_id, name in ((one, "one connection"), (small, "the small file")):
        seen = watched[str(transfer_id)]
        assert "running" in seen["states"], f"{name} was never seen running: {seen}"
        assert any(re.search(r"\d+\.\d% · ", s) for s in seen["statuses"]), f"{name} never showed progress: {seen}"
        assert not seen["shown"] and seen["pieces"] == 0, f"{name} showed a strip of ranges: {seen}"
        assert not any("connection" in s for s in seen["statuses"]), f"{name} said connections: {seen['statuses']}"
    assert watched[str(four)]["shown"] and watched[str(four)]["pieces"] >= 2
    page.get_by_role("tab", name=re.compile("In progress")).click()
    single = rows(page)[one]
    assert single["state"] == "running" and not single["stripShown"] and single["pieces"] == [], single
    daemon.api("POST", f"/v1/transfers/{one}/cancel")

    # On the wire: after the first request, every request of the segmented download asked for a
    # bounded range, on condition that the file is still the same (If-Range: its ETag).
    etag = files.files["/segments/four.bin"].etag
    requests = files.headers_for("/segments/four.bin")
    assert requests[0][1].get("range") is None
    later = requests[1:]
    assert len(later) >= 3, requests
    for method, headers in later:
        assert method == "GET"
        bounds = re.fullmatch(r"bytes=(\d+)-(\d+)", headers.get("range", ""))
        assert bounds, f"not a bounded range: {headers}"
        first, last = int(bounds[1]), int(bounds[2])
        assert first <= last < BIG, headers
        assert headers.get("if-range") == etag, f"no If-Range with the ETag: {headers}"
    # The others were fetched in one piece.
    for path in ("/segments/one.bin", "/segments/small.bin"):
        assert [h.get("range") for (_, h) in files.headers_for(path)] == [None], files.headers_for(path)
