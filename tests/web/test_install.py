"""The web app is installable: Chromium itself reads the manifest and finds nothing missing, and
its icons load at the sizes it says, a maskable one among them."""

from __future__ import annotations

import json
import struct
import urllib.request


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_the_manifest_makes_the_app_installable(daemon, pages):
    page = pages.new(daemon)
    cdp = page.context.new_cdp_session(page)
    manifest = cdp.send("Page.getAppManifest")
    assert manifest["url"].endswith("/manifest.webmanifest") and manifest["errors"] == [], manifest
    # Playwright's contexts are private windows, where nothing installs; every other check passes.
    errors = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
    assert [e["errorId"] for e in errors] in ([], ["in-incognito"]), errors

    data = json.loads(urllib.request.urlopen(daemon.url + "/manifest.webmanifest").read())
    assert data["name"] == "Ferry" and data["display"] == "standalone" and data["start_url"].startswith("/")
    for icon in data["icons"]:
        with urllib.request.urlopen(daemon.url + icon["src"]) as response:
            body = response.read()
            assert response.headers["Content-Type"] == icon["type"], (icon, response.headers["Content-Type"])
        if icon["type"] == "image/png":
            width, height = png_size(body)
            assert icon["sizes"] == f"{width}x{height}", (icon, width, height)
    assert {"192x192", "512x512"} <= {icon["sizes"] for icon in data["icons"]}
    assert "maskable" in {icon["purpose"] for icon in data["icons"]}
