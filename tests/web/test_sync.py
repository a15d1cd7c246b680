"""Sync with a phone, end to end: gPodder's own client library (mygpoclient, from PyPI) speaks
the gpodder.net API to the real daemon's sync listener, as gPodder does. Alice's subscriptions go
both ways between her phone and her web app, her phone's position is where her web app resumes,
and her web app's is her phone's; this machine's own user has places of its own. A phone on
Nextcloud's GPodderSync dialect (a client written from AntennaPod's and Kasts' sync code, signing
in by Login Flow v2 in the browser) and a laptop on gpodder.net's (mygpoclient) see each other's
subscriptions and places."""

from __future__ import annotations

import base64
import datetime
import json
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request

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


class NextcloudPhone:
    """A phone syncing through Nextcloud's GPodderSync API, written from AntennaPod's
    NextcloudLoginFlow and NextcloudSyncService (and Kasts' sync requests): Login Flow v2, then
    HTTP Basic with the app password; every answer but 200 is a failure; action times are UTC
    without a zone; `since` is the last answer's timestamp."""

    def __init__(self, base: str, agent: str = "AntennaPod/3.6.0"):
        self.base = base.rstrip("/")
        self.agent = agent
        self.user = self.password = None

    def _request(self, method: str, url: str, body: bytes | None = None, content_type: str | None = None, auth: bool = True):
        request = urllib.request.Request(url, data=body, method=method)
        request.add_header("User-Agent", self.agent)
        request.add_header("Accept", "application/json")
        if content_type:
            request.add_header("Content-Type", content_type)
        if auth:
            request.add_header("Authorization", "Basic " + base64.b64encode(f"{self.user}:{self.password}".encode("latin-1")).decode())
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def start_login(self) -> tuple[str, str, str]:
        status, body = self._request("POST", f"{self.base}/index.php/login/v2", b"", "application/x-www-form-urlencoded; charset=utf-8", auth=False)
        assert status == 200, (status, body)
        answer = json.loads(body)
        return answer["login"], answer["poll"]["token"], answer["poll"]["endpoint"]

    def poll(self, endpoint: str, token: str) -> dict | None:
        status, body = self._request("POST", endpoint, urllib.parse.urlencode({"token": token}).encode(), "application/x-www-form-urlencoded", auth=False)
        return json.loads(body) if status == 200 else None

    def sign_in(self, granted: dict):
        self.base, self.user, self.password = granted["server"].rstrip("/"), granted["loginName"], granted["appPassword"]

    def _api(self, method: str, path: str, value=None):
        body = json.dumps(value).encode() if value is not None else None
        status, answer = self._request(method, f"{self.base}/index.php/apps/gpoddersync/{path}", body, "application/json; charset=utf-8" if body else None)
        if status != 200:
            raise PermissionError(f"{method} {path}: {status} {answer[:200]!r}")
        return json.loads(answer)

    def subscriptions(self, since: int) -> dict:
        return self._api("GET", f"subscriptions?since={since}")

    def change_subscriptions(self, add=(), remove=()) -> dict:
        return self._api("POST", "subscription_change/create", {"add": list(add), "remove": list(remove)})

    def actions(self, since: int) -> dict:
        return self._api("GET", f"episode_action?since={since}")

    def upload(self, actions: list[dict]) -> dict:
        return self._api("POST", "episode_action/create", actions)


def test_a_nextcloud_phone_and_a_gpodder_laptop_see_each_others_changes(synced, files, browser):
    daemon, url = synced
    phone_feed, phone_media = feed(files, "nc-phone", "Nextcloud Phone Show")
    laptop_feed, laptop_media = feed(files, "nc-laptop", "Laptop Show")
    alice = daemon.run("user", "token", "alice").strip()
    phone = NextcloudPhone(url)

    # Login Flow v2, as AntennaPod does it: the login page opens in the phone's browser.
    login, token, endpoint = phone.start_login()
    assert endpoint == f"{url}/index.php/login/v2/poll" and login.startswith(f"{url}/index.php/login/v2/flow/")
    assert phone.poll(endpoint, token) is None, "nothing to give before the user signs in"
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US")
    try:
        page = context.new_page()
        page.goto(login)
        expect(page.get_by_text("AntennaPod/3.6.0")).to_be_visible()
        page.get_by_label("User name").fill("alice")
        page.get_by_label("Password").fill("not the password")
        page.get_by_role("button", name="Allow").click()
        expect(page.get_by_role("alert")).to_have_text("Wrong user name or password.")
        assert phone.poll(endpoint, token) is None
        page.get_by_label("User name").fill("alice")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Allow").click()
        expect(page.get_by_role("heading", name="Signed in")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "fits a phone's width"
    finally:
        context.close()
    granted = phone.poll(endpoint, token)
    assert granted and granted["server"] == url and granted["loginName"] == "alice", granted
    assert granted["appPassword"] != PASSWORD and PASSWORD not in json.dumps(granted)
    assert phone.poll(endpoint, token) is None, "a flow gives its app password once"
    phone.sign_in(granted)
    tokens = daemon.api("GET", "/v1/users/alice/tokens", token=alice)["credentials"]
    app_token = [t for t in tokens if "AntennaPod/3.6.0" in (t.get("label") or "")]
    assert len(app_token) == 1, tokens

    # The phone subscribes through Nextcloud's dialect; the laptop (gPodder's client) sees it.
    first = phone.subscriptions(0)
    assert first["add"] == [] and first["remove"] == [] and isinstance(first["timestamp"], int)
    assert isinstance(phone.change_subscriptions(add=[phone_feed])["timestamp"], int)
    laptop = MygPodderClient("alice", PASSWORD, url)
    wait_until(lambda: phone_feed in laptop.pull_subscriptions("laptop").add, message="the laptop to see the phone's subscription")
    wait_until(lambda: phone_feed in podcasts(daemon, alice), message="Ferry to subscribe alice")

    # The laptop subscribes through gpodder.net's: the phone's next pull has it.
    laptop.update_subscriptions("laptop", add_urls=[laptop_feed])
    changes = phone.subscriptions(first["timestamp"])
    assert laptop_feed in changes["add"] and changes["remove"] == []

    # Positions cross both ways: the phone's play (zone-less UTC, lower-case, as AntennaPod sends it)…
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    before = phone.actions(0)["timestamp"]
    phone.upload([{"podcast": phone_feed, "episode": phone_media[0], "guid": "nc-phone-1", "action": "play", "timestamp": stamp,
                   "started": 0, "position": 47, "total": SECONDS}])
    laptop_actions = laptop.download_episode_actions(since=0).actions
    assert [(a.episode, a.position) for a in laptop_actions if a.action == "play"] == [(phone_media[0], 47)], [vars(a) for a in laptop_actions]
    # …and the laptop's, as the phone reads it (Kasts-style: a number for timestamp, a zone-less time).
    laptop.upload_episode_actions([EpisodeAction(laptop_feed, laptop_media[0], "play", device="laptop", timestamp=stamp, started=0, position=60, total=SECONDS)])
    answer = phone.actions(before)
    plays = {a["episode"]: a for a in answer["actions"] if a["action"].lower() == "play"}
    assert plays[laptop_media[0]]["position"] == 60 and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", plays[laptop_media[0]]["timestamp"]), plays
    assert isinstance(answer["timestamp"], int)

    # Kasts: Basic with the password itself, guid and device empty, Nextcloud's own `+00:00` time.
    kasts = NextcloudPhone(url, agent="Kasts/24.12 Syndication")
    kasts.user, kasts.password = "alice", PASSWORD
    kasts.upload([{"podcast": laptop_feed, "episode": laptop_media[1], "guid": "", "device": "", "action": "download", "timestamp": stamp + "+00:00"}])
    downloads = [a for a in kasts.actions(0)["actions"] if a["action"] == "download"]
    assert [(a["episode"], a.get("guid")) for a in downloads] == [(laptop_media[1], None)], downloads

    # From the attacker's side: wrong passwords, another user's name, a hostile app name, a made-up flow.
    intruder = NextcloudPhone(url)
    intruder.user, intruder.password = "alice", "not the password"
    with pytest.raises(PermissionError, match="401"):
        intruder.subscriptions(0)
    intruder.user, intruder.password = "mallory", granted["appPassword"]
    with pytest.raises(PermissionError, match="401"):
        intruder.subscriptions(0)
    hostile = NextcloudPhone(url, agent='<script>alert("x")</script>')
    hostile_login, _, _ = hostile.start_login()
    status, body = hostile._request("GET", hostile_login, auth=False)
    assert status == 200 and b"<script>alert" not in body and b"&lt;script&gt;" in body
    status, _ = hostile._request("GET", f"{url}/index.php/login/v2/flow/{'0' * 64}", auth=False)
    assert status == 404
    assert phone.poll(endpoint, "0" * 64) is None

    # The sign-in page speaks the browser's language (the web app's four).
    russian_login, _, _ = NextcloudPhone(url).start_login()
    context = browser.new_context(locale="ru-RU")
    try:
        page = context.new_page()
        page.goto(russian_login)
        expect(page.get_by_role("heading")).to_have_text("Вход в Ferry")
        expect(page.get_by_role("button", name="Разрешить")).to_be_visible()
        assert page.evaluate("document.documentElement.lang") == "ru"
    finally:
        context.close()

    # Revoked in Ferry (the user's tokens), the app password stops working at once.
    daemon.api("DELETE", f"/v1/users/alice/tokens/{app_token[0]['id']}", token=alice)
    with pytest.raises(PermissionError, match="401"):
        phone.subscriptions(0)
