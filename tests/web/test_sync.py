"""Sync with a phone, end to end: gPodder's own client library (mygpoclient, from PyPI) speaks
the gpodder.net API to the real daemon's sync listener, as gPodder does. Alice's subscriptions go
both ways between her phone and her web app, her phone's position is where her web app resumes,
and her web app's is her phone's; this machine's own user has places of its own."""

from __future__ import annotations

import datetime
import json
import re
import subprocess

import pytest
from playwright.sync_api import expect

from helpers import audio, episode, wait_for_playable, wait_until
from servers import rss, wav

mygpoclient = pytest.importorskip("mygpoclient.api", reason="mygpoclient is not installed (tests/web/run installs it)")
from mygpoclient.api import EpisodeAction, MygPodderClient  # noqa: E402
from mygpoclient.http import Unauthorized  # noqa: E402

SECONDS = 90
PASSWORD = "correct horse battery"


def feed(files, name: str, title: str) -> tuple[str, list[str]]:
    audio = wav(SECONDS, rate=8000, seed=len(name))
    now = datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.timezone.utc)
    items, media = [], []
    for n in (1, 2):
        url = files.add(f"/sync/{name}-{n}.wav", audio, "audio/wav")
        media.append(url)
        items.append({"guid": f"{name}-{n}", "title": f"{title} {n}", "date": now - datetime.timedelta(days=n), "url": url, "length": len(audio), "duration": f"1:{SECONDS - 60:02d}"})
    return files.add(f"/feeds/sync-{name}.xml", rss(title, items, author="Sync"), "application/rss+xml"), media


@pytest.fixture
def synced(start_daemon):
    """A daemon with a sync listener on loopback and the sync user alice → (daemon, its sync URL)."""
    daemon = start_daemon(args=("--sync-listen", "0"))
    done = subprocess.run([str(daemon.binary), "sync", "user", "add", "alice", "--password-stdin"], input=PASSWORD + "\n", env=daemon.env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    url = json.loads(daemon.run("sync", "user", "ls", "--json"))["url"]
    assert url.startswith("http://127.0.0.1:"), url
    return daemon, url


def podcasts(daemon, token: str | None = None) -> dict[str, dict]:
    return {p["feedURL"]: p for p in daemon.api("GET", "/v1/podcasts", token=token)["podcasts"]}


def test_a_phone_and_the_web_app_share_subscriptions_and_positions(synced, files, pages):
    daemon, url = synced
    phone_feed, phone_media = feed(files, "phone", "Phone Show")
    web_feed, _ = feed(files, "web", "Web Show")
    phone = MygPodderClient("alice", PASSWORD, url)
    alice = daemon.run("user", "token", "alice").strip()  # her web app's places, by the API

    # The phone registers and subscribes: Ferry subscribes too.
    assert phone.update_device_settings("pixel", caption="Alice's phone", type="mobile")
    assert [(d.device_id, d.type) for d in phone.get_devices()] == [("pixel", "mobile")]
    first = phone.pull_subscriptions("pixel")
    assert first.add == [] and first.remove == []
    result = phone.update_subscriptions("pixel", add_urls=[phone_feed])
    assert result.update_urls == []
    wait_until(lambda: phone_feed in podcasts(daemon, alice), message="Ferry to subscribe alice to what her phone added")
    assert podcasts(daemon) == {}, "this machine's own user subscribed to nothing"

    # Subscribed in her web app: the phone's next pull has it.
    daemon.api("POST", "/v1/podcasts", {"url": web_feed}, token=alice)
    changes = phone.pull_subscriptions("pixel", since=first.since)
    assert set(changes.add) == {phone_feed, web_feed} and changes.remove == []
    assert sorted(phone.get_subscriptions("pixel")) == sorted([phone_feed, web_feed])

    # The phone stopped at 0:47 of the first episode; the web app plays on from there.
    podcast_id = podcasts(daemon, alice)[phone_feed]["id"]
    detail = daemon.api("GET", f"/v1/podcasts/{podcast_id}", token=alice)
    first_episode = next(e for e in detail["episodes"] if e["enclosureURL"] == phone_media[0])
    daemon.api("POST", f"/v1/episodes/{first_episode['id']}/download", {"session": "web"})
    wait_until(lambda: next(e for e in daemon.api("GET", f"/v1/podcasts/{podcast_id}", token=alice)["episodes"] if e["id"] == first_episode["id"])["state"] == "downloaded", message="the download")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    since = phone.upload_episode_actions([EpisodeAction(phone_feed, phone_media[0], "play", device="pixel", timestamp=stamp, started=0, position=47, total=SECONDS)])
    assert isinstance(since, int)

    page = pages.new(daemon, path=f"#/podcasts/{podcast_id}", user="alice")
    title = first_episode["title"]
    expect(episode(page, title).locator(".episode-progress")).to_have_text(re.compile(r"s left$|min left$"))
    episode(page, title).get_by_role("button", name=re.compile(f"^Play {title}")).click()
    wait_for_playable(page)
    wait_until(lambda: audio(page, "!a.paused && !a.seeking && a.currentTime > 0"), timeout=10, message="the episode to play")
    start = audio(page, "a.currentTime")
    assert 46 <= start <= 52, f"started at {start} s, not where the phone stopped"

    # The web app goes to 1:05 and pauses: the phone's next download of actions says so.
    audio(page, "a.currentTime = 65")
    wait_until(lambda: audio(page, "a.currentTime >= 65 && !a.seeking"), timeout=10, message="the seek")
    page.locator("#player .player-toggle").click()
    wait_until(lambda: audio(page, "a.paused"), timeout=5, message="the pause")

    def from_ferry():
        actions = phone.download_episode_actions(since=since, podcast=phone_feed).actions
        return [a for a in actions if a.device == "ferry" and a.episode == phone_media[0] and a.action == "play" and a.position >= 64]

    actions = wait_until(from_ferry, timeout=10, message="the web app's position to reach the phone")
    assert actions[-1].position <= 70 and actions[-1].total == SECONDS, vars(actions[-1])

    # The phone unsubscribes from the web's show: Ferry follows (the files stay).
    phone.update_subscriptions("pixel", remove_urls=[web_feed])
    wait_until(lambda: web_feed not in podcasts(daemon, alice), message="Ferry to unsubscribe")
    assert phone_feed in podcasts(daemon, alice)

    # Wrong password: refused, nothing changed.
    with pytest.raises(Unauthorized):
        MygPodderClient("alice", "not the password", url).update_subscriptions("pixel", add_urls=[web_feed])
    assert web_feed not in podcasts(daemon, alice) and web_feed not in phone.get_subscriptions("pixel")
