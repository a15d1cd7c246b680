"""Every device in the house: Ferry on a server namespace (the lab's O, 10.213.1.1) with a
listener beyond loopback, a phone in another (the lab's C, 10.213.1.2) and a laptop in a third
(10.213.4.2, on a link of its own to the server).

- Chromium in the phone namespace, with Ferry's CA in its NSS database as a phone that installed
  it would have, opens https://10.213.1.1:8443 at phone size, signs in as alice and reaches the app;
  alice subscribes, plays at 1.5x, keeps the episode on the phone, goes offline, plays it from
  the phone and comes back: the position made offline is on the server. Bob, in a browser of his
  own, has none of her places.
- From the phone: plain HTTP to the TLS port, a foreign Host, the daemon's token and the one-time
  login link are refused; a client that does not trust the CA is refused by its own TLS.
- mygpoclient (the gpodder.net client library) syncs as alice from the phone, and aria2p drives
  /jsonrpc with the secret from the laptop, both over TLS with the CA.
- nginx in front (`--trusted-proxy`): the daemon logs the phone's address for its login.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ferry import ferry_binary
from lab import Lab

SERVER = "10.213.1.1"
PHONE = "10.213.1.2"
PORT = 8443


class Server:
    """`ferry serve` in the server namespace with a listener beyond loopback."""

    def __init__(self, lab: Lab, home: Path, *listen_options: str, aria2: bool = False):
        self.lab, self.home, self.binary = lab, home, ferry_binary()
        home.mkdir(parents=True, exist_ok=True)
        self.log = home / "daemon.log"
        extra = ["--aria2-rpc", "--aria2-port", "0"] if aria2 else []
        self.process = lab.exec_in(
            lab.origin, ["env", f"FERRY_HOME={home}", self.binary, "serve", "--port", "0", *listen_options, *extra],
            stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            status = self.cli("remote", "--json", check=False)
            if status.returncode == 0 and json.loads(status.stdout)["urls"]:
                return
            time.sleep(0.2)
        raise AssertionError(f"the listener did not come up:\n{self.log.read_text(errors='replace')[-3000:]}")

    def cli(self, *args: str, check: bool = True, input: str | None = None):
        stdin = {} if input is None else {"input": input, "stdin": None}
        return self.lab.run_in(self.lab.origin, ["env", f"FERRY_HOME={self.home}", "TERM=dumb", self.binary, *args], check=check, **stdin)

    @property
    def ca(self) -> Path:
        return self.home / "state/tls/ca.pem"

    @property
    def token(self) -> str:
        return (self.home / "state/token").read_text().strip()

    def stop(self):
        self.cli("stop", check=False)


def phone(lab: Lab, *argv: str, check: bool = False, **kwargs) -> subprocess.CompletedProcess:
    return lab.run_in(lab.client, list(argv), check=check, **kwargs)


def phone_home(tmp_path: Path, ca: Path) -> Path:
    """The phone browser's HOME: its certificate store, an NSS database holding Ferry's CA, as
    after installing it."""
    home = tmp_path / "phone-home"
    nssdb = home / ".pki/nssdb"
    nssdb.mkdir(parents=True)
    subprocess.run(["certutil", "-N", "-d", f"sql:{nssdb}", "--empty-password"], check=True, capture_output=True)
    subprocess.run(["certutil", "-A", "-d", f"sql:{nssdb}", "-n", "Ferry", "-t", "C,,", "-i", str(ca)], check=True, capture_output=True)
    return home


@pytest.fixture
def house(lab, tmp_path):
    lab.laptop = lab.add_laptop()
    server = Server(lab, tmp_path / "server", "--listen", f"0.0.0.0:{PORT}", aria2=True)
    server.cli("user", "add", "alice", "--password-stdin", input="alice's password\n")
    server.cli("user", "add", "bob", "--password-stdin", input="bob's password\n")
    yield server
    server.stop()


def test_ferry_remote_names_the_lan_address(house):
    status = json.loads(house.cli("remote", "--json").stdout)
    assert f"https://{SERVER}:{PORT}" in status["urls"], status
    assert status["caFingerprint"] and status["certificateFingerprint"]
    text = house.cli("remote").stdout
    assert f"https://{SERVER}:{PORT}" in text and "█" in text, "a QR code of the URL"


def test_from_the_phone_what_must_be_refused_is(lab, house):
    url = f"https://{SERVER}:{PORT}"
    curl = ["curl", "-sS", "--max-time", "10", "--cacert", str(house.ca)]
    page = phone(lab, *curl, "-o", "/dev/null", "-w", "%{http_code} %{ssl_verify_result}", url + "/")
    assert page.stdout == "200 0", page.stdout + page.stderr
    untrusted = phone(lab, "curl", "-sS", "--max-time", "10", url + "/")
    assert untrusted.returncode == 60, "curl refuses a certificate it cannot verify"
    plain = phone(lab, "curl", "-sS", "--max-time", "10", f"http://{SERVER}:{PORT}/")
    assert f"This port speaks HTTPS only: open https://{SERVER}:{PORT}/" in plain.stdout, plain
    foreign = phone(lab, *curl, "-H", "Host: evil.example", url + "/v1/status")
    assert '"forbidden_host"' in foreign.stdout, foreign.stdout
    token = phone(lab, *curl, "-H", f"Authorization: Bearer {house.token}", url + "/v1/status")
    assert "this machine only" in token.stdout, token.stdout
    # A real one-time link, printed on the server, used from the phone.
    code = house.cli("open", "--print-only").stdout.strip().rsplit("code=", 1)[-1]
    link = phone(lab, *curl, "-i", f"{url}/login?code={code}")
    assert " 403 " in link.stdout.splitlines()[0] and "server's own screen" in link.stdout, link.stdout
    wrong = phone(lab, *curl, "-i", "-H", "Content-Type: application/json", "--data", '{"name": "alice", "password": "guess"}', url + "/v1/session")
    assert " 401 " in wrong.stdout.splitlines()[0] and "set-cookie" not in wrong.stdout.lower(), wrong.stdout
    # The failure is logged with the phone's address.
    assert f"login.address={PHONE}" in house.log.read_text(errors="replace")


def test_a_phone_browser_trusting_ferrys_ca_signs_in(lab, house, tmp_path):
    home = phone_home(tmp_path, house.ca)
    script = tmp_path / "phone.py"
    script.write_text(textwrap.dedent(f"""
        import json, sys
        from playwright.sync_api import sync_playwright
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            context = browser.new_context(viewport={{"width": 390, "height": 844}}, is_mobile=True, has_touch=True, locale="en-US")
            page = context.new_page()
            page.goto("https://{SERVER}:{PORT}/#/podcasts", wait_until="domcontentloaded")
            form = page.locator(".login-form")
            form.get_by_label("User name").fill("alice")
            form.get_by_label("Password").fill("alice's password")
            form.get_by_role("button", name="Sign in").click()
            page.wait_for_selector("#shell:not([hidden])", timeout=20000)
            me = page.evaluate("fetch('/v1/me').then(r => r.json())")
            cookie = next(c for c in context.cookies() if c["name"] == "ferry_user")
            print(json.dumps({{"me": me, "secure": cookie["secure"], "width": page.evaluate("document.documentElement.scrollWidth")}}))
            browser.close()
    """))
    # Chromium is sandboxed by nothing but the namespace here (it runs as root); its store is the NSS database in HOME.
    result = phone(lab, "env", f"HOME={home}", sys.executable, str(script), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["me"]["user"] == "alice" and seen["me"]["role"] == "member"
    assert seen["secure"], "the session cookie is Secure over HTTPS"
    assert seen["width"] <= 390, "nothing wider than the phone"
    sessions = json.loads(house.cli("user", "sessions", "alice", "--json").stdout)["credentials"]
    assert [s["address"] for s in sessions] == [PHONE]


def serve_feed(lab, folder: Path, port: int = 8085) -> str:
    """A podcast in the server namespace, on its loopback (the daemon fetches it there): one
    minute of audio, as a phone would stream or keep it. -> the feed's URL."""
    import io
    import wave

    folder.mkdir(parents=True, exist_ok=True)
    sound = io.BytesIO()
    with wave.open(sound, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(bytes((128 + (i * 7 % 64) - 32) & 0xFF for i in range(8000 * 60)))
    (folder / "harbour.wav").write_bytes(sound.getvalue())
    base = f"http://127.0.0.1:{port}"
    (folder / "feed.xml").write_text(textwrap.dedent(f"""\
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0"><channel><title>Harbour Radio</title><link>{base}/</link><description>Lab</description>
        <item><guid>harbour-1</guid><title>Harbour Nights</title><pubDate>Fri, 20 Nov 2026 09:00:00 GMT</pubDate>
        <enclosure url="{base}/harbour.wav" length="{len(sound.getvalue())}" type="audio/wav"/></item>
        </channel></rss>
        """))
    process = lab.exec_in(lab.origin, [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while lab.run_in(lab.origin, ["curl", "-sf", "-o", "/dev/null", f"{base}/feed.xml"], check=False).returncode != 0:
        assert time.time() < deadline and process.poll() is None, "the feed's server did not start"
        time.sleep(0.2)
    return f"{base}/feed.xml"


def test_alice_listens_keeps_an_episode_for_the_road_and_bob_has_his_own_places(lab, house, tmp_path):
    feed = serve_feed(lab, tmp_path / "feed")
    home = phone_home(tmp_path, house.ca)
    script = tmp_path / "listen.py"
    script.write_text(textwrap.dedent(f"""
        import json, re, time
        from playwright.sync_api import sync_playwright, expect
        URL, TITLE = "https://{SERVER}:{PORT}", "Harbour Nights"

        def until(check, what, timeout=30):
            deadline = time.time() + timeout
            while time.time() < deadline:
                value = check()
                if value:
                    return value
                time.sleep(0.2)
            raise AssertionError("timed out waiting for " + what)

        def sign_in(context, name):
            page = context.new_page()
            page.goto(URL + "/#/podcasts", wait_until="domcontentloaded")
            form = page.locator(".login-form")
            form.get_by_label("User name").fill(name)
            form.get_by_label("Password").fill(name + "'s password")
            form.get_by_role("button", name="Sign in").click()
            page.wait_for_selector("#shell:not([hidden])", timeout=20000)
            return page

        def api(page, method, path, body=None):
            return page.evaluate(
                "([m, p, b]) => fetch(p, {{method: m, headers: {{'Content-Type': 'application/json'}}, body: b && JSON.stringify(b)}})"
                + ".then(async (r) => ({{status: r.status, body: await r.text()}}))", [method, path, body])

        def audio(page, script):
            return page.evaluate("(() => {{ const a = document.querySelector('#player-audio'); return " + script + "; }})()")

        seen = {{}}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"])
            phone = dict(viewport={{"width": 390, "height": 844}}, is_mobile=True, has_touch=True, locale="en-US")
            alices = browser.new_context(**phone)
            page = sign_in(alices, "alice")
            page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=20000)

            # Alice subscribes in the app.
            page.locator("#podcast-input").fill("{feed}")
            page.locator("#podcast-input").press("Enter")
            expect(page.locator("h1.podcast-title")).to_have_text("Harbour Radio", timeout=20000)
            podcast = int(page.url.rsplit("/", 1)[-1])
            detail = json.loads(api(page, "GET", f"/v1/podcasts/{{podcast}}")["body"])
            episode = detail["episodes"][0]["id"]
            row = page.locator("li.episode").filter(has=page.locator(".episode-title", has_text=TITLE)).first

            # She plays it at 1.5x: her speed for this podcast, kept by the server.
            row.get_by_role("button", name="Stream " + TITLE).click()  # not downloaded on the server: streamed through it
            until(lambda: audio(page, "a.readyState >= 2 && !a.paused && a.currentTime > 0"), "the episode to play")
            page.get_by_role("combobox", name="Playback speed").select_option("1.5")
            until(lambda: audio(page, "a.playbackRate") == 1.5, "the player at 1.5x")
            until(lambda: json.loads(api(page, "GET", f"/v1/podcasts/{{podcast}}")["body"])["podcast"].get("playbackSpeed") == 1.5, "her speed on the server")
            page.locator("#player .player-toggle").click()
            until(lambda: audio(page, "a.paused"), "the pause")
            assert api(page, "PUT", "/v1/up-next", {{"items": [{{"kind": "episode", "id": episode}}]}})["status"] == 200

            # Kept on the phone for the road.
            row.locator(".episode-open").click()
            row.get_by_role("button", name="Keep " + TITLE + " on this device").click()
            expect(row.locator(".keep")).to_have_attribute("data-state", "done", timeout=60000)

            # No network: the app and the episode come from the phone; a position is made there.
            alices.set_offline(True)
            page.goto(URL + "/#/device")
            page.reload()
            item = page.locator("li.kept-item").filter(has_text=TITLE)
            item.get_by_role("button", name="Play " + TITLE).click()
            until(lambda: audio(page, "a.readyState >= 2 && a.duration > 0"), "the kept episode to load")
            seen["source"] = audio(page, "a.dataset.source")
            audio(page, "a.currentTime = 30")
            until(lambda: audio(page, "!a.paused && !a.seeking && a.currentTime > 30.5"), "the kept episode to play on from 30 s")
            page.locator("#player .player-toggle").click()
            until(lambda: audio(page, "a.paused"), "the pause offline")
            seen["offline_at"] = audio(page, "a.currentTime")
            seen["offline_api"] = page.evaluate("fetch('/v1/status').then(() => 'answered', () => 'failed')")

            # Back: the position made offline reaches the server.
            alices.set_offline(False)
            def saved():
                answer = api(page, "GET", f"/v1/episodes/{{episode}}/playback")
                position = json.loads(answer["body"])["positionSeconds"] if answer["status"] == 200 else None
                return position if position is not None and abs(position - seen["offline_at"]) < 0.5 else None
            try:
                seen["alice_saved"] = until(saved, "the offline position on the server", timeout=20)
            except AssertionError:
                seen["alice_saved"] = json.loads(api(page, "GET", f"/v1/episodes/{{episode}}/playback")["body"] or "null")
            seen["width"] = page.evaluate("document.documentElement.scrollWidth")

            # Bob, in a browser of his own: the same library, none of Alice's places.
            bobs = browser.new_context(**phone)
            bob = sign_in(bobs, "bob")
            seen["bob_podcasts"] = json.loads(api(bob, "GET", "/v1/podcasts")["body"])["podcasts"]
            seen["bob_up_next"] = json.loads(api(bob, "GET", "/v1/up-next")["body"])["items"]
            his = json.loads(api(bob, "POST", "/v1/podcasts", {{"url": "{feed}"}})["body"])
            seen["bob_same_podcast"] = his["podcast"]["id"] == podcast
            seen["bob_speed"] = his["podcast"].get("playbackSpeed")
            seen["bob_playback"] = his["episodes"][0].get("playback")
            seen["alice_up_next"] = [i["id"] for i in json.loads(api(page, "GET", "/v1/up-next")["body"])["items"]]
            seen["episode"] = episode
            browser.close()
        print(json.dumps(seen))
    """))
    result = phone(lab, "env", f"HOME={home}", sys.executable, str(script), timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["source"] == "device", seen
    assert seen["offline_api"] == "failed", "the phone really was offline"
    assert seen["offline_at"] > 30 and isinstance(seen["alice_saved"], (int, float)) and abs(seen["alice_saved"] - seen["offline_at"]) < 0.5, seen
    assert seen["width"] <= 390, "nothing wider than the phone"
    assert seen["alice_up_next"] == [seen["episode"]]
    assert seen["bob_podcasts"] == [] and seen["bob_up_next"] == [], seen
    assert seen["bob_same_podcast"] and seen["bob_speed"] is None and seen["bob_playback"] is None, seen


def test_sync_clients_and_aria2p_work_over_tls(lab, house, tmp_path):
    secret = (house.home / "state/aria2-secret").read_text().strip()
    env = ["env", f"SSL_CERT_FILE={house.ca}", f"REQUESTS_CA_BUNDLE={house.ca}"]
    on_phone = tmp_path / "phone-sync.py"
    on_phone.write_text(textwrap.dedent(f"""
        import json
        from mygpoclient import api
        client = api.MygPodderClient("alice", "alice's password", "https://{SERVER}:{PORT}")
        client.update_device_settings("phone", "Alice's phone", "mobile")
        print(json.dumps([d.device_id for d in client.get_devices()]))
    """))
    result = phone(lab, *env, sys.executable, str(on_phone), timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == ["phone"]

    on_laptop = tmp_path / "laptop-aria2.py"
    on_laptop.write_text(textwrap.dedent(f"""
        import json
        import aria2p
        rpc = aria2p.API(aria2p.Client(host="https://{SERVER}", port={PORT}, secret="{secret}"))
        print(json.dumps(rpc.client.get_version()["version"]))
    """))
    result = lab.run_in(lab.laptop, [*env, sys.executable, str(on_laptop)], check=False, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1])


def test_behind_nginx_the_client_is_the_phone(lab, tmp_path):
    """nginx in the server namespace terminates HTTP for the phone and forwards to Ferry's plain
    listener on loopback, which trusts it; Ferry sees (and logs) the phone's address."""
    server = Server(lab, tmp_path / "server", "--listen", "http://127.0.0.1:8081", "--trusted-proxy", "127.0.0.1",
                    "--server-name", "ferry.lab")
    try:
        server.cli("user", "add", "alice", "--password-stdin", input="alice's password\n")
        conf = tmp_path / "nginx.conf"
        conf.write_text(textwrap.dedent(f"""
            worker_processes 1;
            pid {tmp_path}/nginx.pid;
            error_log {tmp_path}/nginx-error.log;
            events {{ worker_connections 64; }}
            http {{
                access_log off;
                server {{
                    listen {SERVER}:9080;
                    server_name ferry.lab;
                    location / {{
                        proxy_pass http://127.0.0.1:8081;
                        proxy_set_header Host $host;
                        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        proxy_set_header X-Forwarded-Proto $scheme;
                        proxy_set_header X-Forwarded-Host $host;
                        proxy_http_version 1.1;
                        proxy_buffering off;
                    }}
                }}
            }}
        """))
        nginx = lab.exec_in(lab.origin, ["nginx", "-c", str(conf), "-g", "daemon off;"])
        deadline = time.time() + 10
        while time.time() < deadline and phone(lab, "curl", "-s", "-o", "/dev/null", f"http://{SERVER}:9080/").returncode != 0:
            time.sleep(0.1)
        login = phone(lab, "curl", "-sS", "-i", "-H", "Host: ferry.lab", "-H", "Content-Type: application/json",
                      "--data", '{"name": "alice", "password": "alice\'s password"}', f"http://{SERVER}:9080/v1/session")
        assert " 204 " in login.stdout.splitlines()[0], login.stdout + login.stderr
        assert f"login.address={PHONE}" in server.log.read_text(errors="replace"), "the phone's address, not nginx's"
        sessions = json.loads(server.cli("user", "sessions", "alice", "--json").stdout)["credentials"]
        assert [s["address"] for s in sessions] == [PHONE]
        foreign = phone(lab, "curl", "-sS", "-H", "Host: evil.example", f"http://{SERVER}:9080/v1/me")
        assert '"forbidden_host"' in foreign.stdout, foreign.stdout
        lab.stop_process(nginx)
    finally:
        server.stop()
