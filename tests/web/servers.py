"""Loopback stand-ins for the outside world the web app's tests need.

- FileServer: serves bytes with ETag, Last-Modified and Range/If-Range (what Ferry's resume
  protocol and segmented downloads rely on: `bytes=a-`, bounded `bytes=a-b`, `bytes=-n`), at a
  configurable speed per response so that progress is visible, and logs requests.
- CatalogServer: Apple's iTunes Search and Lookup API, answering with the recorded responses in
  Tests/Fixtures/itunes/ (previews, artwork and feeds rewritten to the file server), plus a few
  podcasts of its own (one with a hostile title); a term starting with "throttle" gets a 403,
  as Apple sends when it limits a client, and one starting with "toomany" a 429 Too Many
  Requests with Retry-After.
- Media: a real WAV preview (so <audio> can play it), PNG artwork and podcast feeds.

Nothing here talks to anything but 127.0.0.1.
"""

from __future__ import annotations

import base64
import copy
import email.utils
import hashlib
import http.server
import json
import math
import os
import struct
import threading
import time
import unicodedata
import urllib.parse
import zlib
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "Tests" / "Fixtures" / "itunes"


# MARK: Media


def wav(seconds: float, rate: int = 44100, seed: int = 0) -> bytes:
    """A mono 16-bit WAV of a soft pentatonic melody (real audio that a browser can decode)."""
    notes = [261.63, 293.66, 329.63, 392.00, 440.00, 523.25, 587.33, 659.25]
    note_len = int(rate * 0.25)
    buffers = []
    for freq in notes:
        samples = bytearray()
        for i in range(note_len):
            t = i / rate
            envelope = min(1.0, i / 400) * math.exp(-3.0 * t)
            value = 0.35 * envelope * (math.sin(2 * math.pi * freq * t) + 0.3 * math.sin(4 * math.pi * freq * t))
            samples += struct.pack("<h", int(max(-1.0, min(1.0, value)) * 32767))
        buffers.append(bytes(samples))
    pattern = [0, 2, 4, 5, 4, 2, 3, 1, 0, 4, 6, 7, 6, 4, 5, 3]
    count = int(seconds / 0.25)
    body = b"".join(buffers[(pattern[(i + seed) % len(pattern)])] for i in range(count))
    header = b"RIFF" + struct.pack("<I", 36 + len(body)) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
    header += b"data" + struct.pack("<I", len(body))
    return header + body


PALETTES = [
    ((255, 94, 98), (255, 153, 102)),
    ((67, 97, 238), (76, 201, 240)),
    ((114, 9, 183), (247, 37, 133)),
    ((6, 214, 160), (17, 138, 178)),
    ((255, 190, 11), (251, 86, 7)),
    ((58, 12, 163), (67, 97, 238)),
    ((239, 71, 111), (255, 209, 102)),
    ((38, 70, 83), (42, 157, 143)),
    ((131, 56, 236), (58, 134, 255)),
    ((230, 57, 70), (29, 53, 87)),
]


def png(index: int, size: int = 160) -> bytes:
    """Square artwork: a diagonal gradient with a record-like ring."""
    (r1, g1, b1), (r2, g2, b2) = PALETTES[index % len(PALETTES)]
    rows = bytearray()
    c = size / 2
    for y in range(size):
        rows.append(0)
        for x in range(size):
            t = (x + y) / (2 * size - 2)
            r, g, b = r1 + (r2 - r1) * t, g1 + (g2 - g1) * t, b1 + (b2 - b1) * t
            d = math.hypot(x - c, y - c) / c
            if 0.28 < d < 0.62:
                shade = 0.82 if int(d * 40) % 2 == 0 else 0.9
                r, g, b = r * shade, g * shade, b * shade
            elif d <= 0.1:
                r, g, b = 250, 250, 250
            rows += bytes((int(r), int(g), int(b)))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(bytes(rows), 6)) + chunk(b"IEND", b"")


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def rss(title: str, items: list[dict], *, author: str = "", description: str = "", image: str = "", link: str = "https://example.com/") -> bytes:
    """An RSS 2.0 podcast feed. Item keys: guid, title, date (datetime), url (none: an item without
    media), length, duration, description, chapters and transcript (URLs: Podcasting 2.0 tags)."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:podcast="https://podcastindex.org/namespace/1.0">',
        "<channel>",
        f"<title>{xml_escape(title)}</title>",
        f"<link>{xml_escape(link)}</link>",
        f"<itunes:author>{xml_escape(author)}</itunes:author>" if author else "",
        f"<description><![CDATA[{description}]]></description>" if description else "",
        f'<itunes:image href="{xml_escape(image)}"/>' if image else "",
    ]
    for item in items:
        parts += [
            "<item>",
            f'<guid isPermaLink="false">{xml_escape(item["guid"])}</guid>',
            f"<title>{xml_escape(item['title'])}</title>",
            f"<pubDate>{email.utils.format_datetime(item['date'])}</pubDate>",
            f'<enclosure url="{xml_escape(item["url"])}" length="{item.get("length", 0)}" type="{item.get("type", "audio/wav")}"/>' if item.get("url") else "",
            f'<podcast:chapters url="{xml_escape(item["chapters"])}" type="application/json+chapters"/>' if item.get("chapters") else "",
            f'<podcast:transcript url="{xml_escape(item["transcript"])}" type="{item.get("transcript_type", "text/vtt")}"/>' if item.get("transcript") else "",
            f"<itunes:duration>{item['duration']}</itunes:duration>" if item.get("duration") else "",
            f"<description><![CDATA[{item['description']}]]></description>" if item.get("description") else "",
            "</item>",
        ]
    parts += ["</channel>", "</rss>"]
    return "\n".join(p for p in parts if p).encode()


# MARK: File server


@dataclass
class Served:
    data: bytes
    content_type: str
    rate: int | None = None  # bytes per second; None: as fast as possible
    etag: str = ""
    last_modified: str = ""


class _Quiet(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep pytest's output clean
        if os.environ.get("FERRY_TEST_LOG"):
            super().log_message(*args)


def _serve_gets(server, name: str) -> http.server.ThreadingHTTPServer:
    """A loopback HTTP server on a free port whose GETs go to `server.handle(request)`, running."""

    class Handler(_Quiet):
        def do_GET(self):
            server.handle(self)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, name=name, daemon=True).start()
    return httpd


class FileServer:
    """Bytes by path, with ETag / Last-Modified / Range / If-Range and an optional speed limit."""

    def __init__(self):
        self.files: dict[str, Served] = {}
        self.logins: dict[str, str] = {}  # path → the Authorization header it requires
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path, Range)
        self.request_headers: list[tuple[str, str, dict[str, str]]] = []  # (method, path, headers by lower-case name)
        self.lock = threading.Lock()
        server = self

        class Handler(_Quiet):
            def do_HEAD(self):
                server.handle(self, head=True)

            def do_GET(self):
                server.handle(self, head=False)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="file-server", daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def add(self, path: str, data: bytes, content_type: str, *, rate: int | None = None) -> str:
        etag = '"' + hashlib.sha256(data).hexdigest()[:20] + '"'
        modified = email.utils.formatdate(time.time() - 86400, usegmt=True)
        with self.lock:
            self.files[path] = Served(data, content_type, rate, etag, modified)
        return self.url(path)

    def protect(self, path: str, user: str, password: str):
        """Answers `path` only with HTTP Basic credentials (else 401)."""
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        with self.lock:
            self.logins[path] = f"Basic {token}"

    def set_rate(self, path: str, rate: int | None):
        with self.lock:
            self.files[path].rate = rate

    def requests_for(self, path: str) -> list[tuple[str, str, str | None]]:
        with self.lock:
            return [r for r in self.requests if r[1] == path]

    def headers_for(self, path: str) -> list[tuple[str, dict[str, str]]]:
        """(method, headers by lower-case name: "range", "if-range"...) of every request for `path`, in order."""
        with self.lock:
            return [(method, dict(headers)) for (method, p, headers) in self.request_headers if p == path]

    def handle(self, h: http.server.BaseHTTPRequestHandler, head: bool):
        path = urllib.parse.urlsplit(h.path).path
        with self.lock:
            self.requests.append((h.command, path, h.headers.get("Range")))
            self.request_headers.append((h.command, path, {name.lower(): value for name, value in h.headers.items()}))
            served = self.files.get(path)
            login = self.logins.get(path)
        if login is not None and h.headers.get("Authorization") != login:
            body = b"login required\n"
            h.send_response(401)
            h.send_header("WWW-Authenticate", 'Basic realm="private"')
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            if not head:
                h.wfile.write(body)
            return
        if served is None:
            body = f"404 for {path}\n".encode()
            h.send_response(404)
            h.send_header("Content-Type", "text/plain")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            if not head:
                h.wfile.write(body)
            return
        data = served.data
        start, end = 0, len(data) - 1
        status = 200
        range_header = h.headers.get("Range")
        if_range = h.headers.get("If-Range")
        if range_header and (not if_range or if_range in (served.etag, served.last_modified)):
            spec = range_header.replace("bytes=", "", 1).split(",")[0].strip()
            first, _, last = spec.partition("-")
            if first:
                start = int(first)
                end = min(int(last), len(data) - 1) if last else len(data) - 1
            elif last:
                start, end = max(0, len(data) - int(last)), len(data) - 1
            if last and first and int(last) < int(first):
                start, end = 0, len(data) - 1  # not a valid range: ignored, the whole file (RFC 9110 14.1.1)
            elif start >= len(data):
                h.send_response(416)
                h.send_header("Content-Range", f"bytes */{len(data)}")
                h.send_header("Content-Length", "0")
                h.end_headers()
                return
            else:
                status = 206
        h.send_response(status)
        h.send_header("Content-Type", served.content_type)
        h.send_header("Content-Length", str(end - start + 1))
        h.send_header("ETag", served.etag)
        h.send_header("Last-Modified", served.last_modified)
        h.send_header("Accept-Ranges", "bytes")
        if status == 206:
            h.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        h.end_headers()
        if head:
            return
        chunk = 16 * 1024
        position = start
        began = time.monotonic()
        sent = 0
        try:
            while position <= end:
                piece = data[position : min(end + 1, position + chunk)]
                h.wfile.write(piece)
                position += len(piece)
                sent += len(piece)
                if served.rate:
                    ahead = sent / served.rate - (time.monotonic() - began)
                    if ahead > 0:
                        time.sleep(ahead)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon paused, cancelled or stopped: normal

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class CookieOrigin:
    """A site that hands out a login cookie with its page and serves its files only to requests
    that carry it (403 otherwise), logging every request's cookie, user agent, referrer and
    whether a browser sent it (Sec-Fetch-Mode): the browser extension's tests check at the origin
    what Ferry sent. Paths: `/page` (sets `sid`, HttpOnly, and links to the files), `/files/NAME`."""

    COOKIE = "sid"

    def __init__(self):
        self.secret = "s3cr3t-" + hashlib.sha256(os.urandom(16)).hexdigest()[:16]
        self.files: dict[str, bytes] = {}
        self.log: list[dict] = []
        self.lock = threading.Lock()
        self.httpd = _serve_gets(self, "cookie-origin")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def add(self, name: str, data: bytes) -> str:
        with self.lock:
            self.files[name] = data
        return f"{self.base}/files/{name}"

    def requests_for(self, name: str) -> list[dict]:
        with self.lock:
            return [entry for entry in self.log if entry["path"] == f"/files/{name}"]

    def page_html(self) -> bytes:
        links = "".join(
            f'<p><a id="dl-{n.split(".")[0]}" href="/files/{n}" download>{n}</a> <a id="link-{n.split(".")[0]}" href="/files/{n}">{n} (link)</a></p>'
            for n in sorted(self.files)
        )
        return f"<!doctype html><title>Files</title><h1>Members' files</h1>{links}".encode()

    def handle(self, h: http.server.BaseHTTPRequestHandler):
        path = urllib.parse.urlsplit(h.path).path
        cookies = h.headers.get("Cookie") or ""
        entry = {
            "path": path,
            "cookie": cookies,
            "user_agent": h.headers.get("User-Agent"),
            "referer": h.headers.get("Referer"),
            "browser": h.headers.get("Sec-Fetch-Mode") is not None,
        }
        with self.lock:
            self.log.append(entry)
            data = self.files.get(path.removeprefix("/files/")) if path.startswith("/files/") else None
        if path == "/page":
            body = self.page_html()
            h.send_response(200)
            h.send_header("Content-Type", "text/html; charset=utf-8")
            h.send_header("Set-Cookie", f"{self.COOKIE}={self.secret}; Path=/; HttpOnly; SameSite=Lax")
        elif data is None:
            body = b"not found\n"
            h.send_response(404)
        elif f"{self.COOKIE}={self.secret}" not in [c.strip() for c in cookies.split(";")]:
            body = b"members only: log in first\n"
            h.send_response(403)
        else:
            body = data
            h.send_response(200)
            h.send_header("Content-Type", "application/zip")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        try:
            h.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser's own download, cancelled when Ferry took it over

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# MARK: Catalog server


def fold(text: str) -> str:
    """Lower case without accents, as Apple matches: "José" finds "jose"."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def _load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


@dataclass
class CatalogServer:
    """Apple's catalog on loopback: /search and /lookup, answered from the recorded fixtures."""

    files: FileServer
    requests: list[dict] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)  # search terms, once their answer is sent
    songs: list[dict] = field(default_factory=list)
    podcasts: list[dict] = field(default_factory=list)

    XSS_TITLE = "<img src=x onerror=alert(1)>"

    def __post_init__(self):
        self.lock = threading.Lock()
        self.preview_path = "/previews/track.wav"
        for index, song in enumerate(copy.deepcopy(_load("search-music-jose-james.json")["results"])):
            self._rewrite(song, index)
            self.songs.append(song)
        sistak = copy.deepcopy(_load("search-podcast-beyondjazz.json")["results"][0])
        self._rewrite(sistak, 3)
        sistak["feedUrl"] = self.files.url("/feeds/sistak.xml")
        radio = dict(sistak, collectionId=900001, trackId=900001, collectionName="Ferry Test Radio", trackName="Ferry Test Radio", artistName="The Ferry Crew", primaryGenreName="Music")
        radio["feedUrl"] = self.files.url("/feeds/radio.xml")
        self._rewrite(radio, 1)
        hostile = dict(sistak, collectionId=900002, trackId=900002, collectionName=self.XSS_TITLE, trackName=self.XSS_TITLE, artistName="<b>bold</b> \"quoted\" & more", primaryGenreName="<script>alert(2)</script>")
        hostile["feedUrl"] = self.files.url("/feeds/xss.xml")
        self._rewrite(hostile, 2)
        self.podcasts = [radio, sistak, hostile]
        self.httpd = _serve_gets(self, "catalog-server")

    def _rewrite(self, item: dict, index: int):
        """Every URL Apple gave points at the loopback file server instead."""
        art = self.files.url(f"/art/{index % len(PALETTES)}.png")
        for key in ("artworkUrl30", "artworkUrl60", "artworkUrl100", "artworkUrl600"):
            if key in item or key == "artworkUrl100":
                item[key] = art
        if item.get("kind") == "song":
            item["previewUrl"] = self.files.url(self.preview_path)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def handle(self, h):
        parts = urllib.parse.urlsplit(h.path)
        query = dict(urllib.parse.parse_qsl(parts.query))
        with self.lock:
            self.requests.append({"path": parts.path, **query})
        term = query.get("term", "").lower()
        if parts.path == "/search" and term.startswith("throttle"):
            return self.reply(h, 403, b"")
        if parts.path == "/search" and term.startswith("toomany"):
            page = b"<html><body><h1>429 Too Many Requests</h1></body></html>"
            return self.reply(h, 429, page, content_type="text/html", headers={"Retry-After": "60"})
        if parts.path == "/search":
            if term.startswith("slow"):
                time.sleep(1.5)
            pool = self.podcasts if query.get("media") == "podcast" else self.songs
            words = [w for w in fold(term).split() if w]
            if term.startswith("nothing"):
                results = []
            else:
                matching = [r for r in pool if all(w in fold(" ".join(str(r.get(k, "")) for k in ("trackName", "artistName", "collectionName"))) for w in words)]
                results = matching or pool
            results = results[: int(query.get("limit", "50"))]
        elif parts.path == "/lookup":
            ids = {int(i) for i in query.get("id", "0").split(",") if i.isdigit()}
            results = [r for r in self.songs + self.podcasts if r.get("trackId") in ids or r.get("collectionId") in ids][:1]
        else:
            return self.reply(h, 404, b'{"errorMessage":"unknown path"}')
        body = json.dumps({"resultCount": len(results), "results": results}).encode()
        self.reply(h, 200, body)
        with self.lock:
            self.answered.append(query.get("term", ""))

    def reply(self, h, status: int, body: bytes, *, content_type: str = "text/javascript; charset=utf-8", headers: dict[str, str] | None = None):
        try:
            h.send_response(status)
            h.send_header("Content-Type", content_type)
            h.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                h.send_header(name, value)
            h.end_headers()
            h.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon gave up on this search (a newer one replaced it)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
