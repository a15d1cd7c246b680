#!/usr/bin/env python3
"""A misbehaving origin for the torture run: serves the files of a folder on 127.0.0.1 with
Range, If-Range, ETag and Last-Modified like nginx, except that at random it

  - drops the connection part-way through a body,
  - stalls for 1–3 s in the middle of a body, then goes on,
  - answers 503 with Retry-After: 1,
  - changes a file's ETag (same bytes: as if it were uploaded again), so the next If-Range fails
    and a resume gets the whole file with 200,
  - ignores Range and answers 200 with the whole file.

Nothing is ever wrong in the bytes themselves, so every download must still end with the right
SHA-256. Deterministic for a given --seed (up to thread scheduling).

    chaos_origin.py --root DIR --port PORT [--seed N] [--rate 0.3] [--log FILE]
"""

import argparse
import os
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from email.utils import formatdate

FAULTS = ("drop", "stall", "503", "etag", "ignore-range")


class State:
    def __init__(self, root, seed, rate, log_path):
        self.root = os.path.realpath(root)
        self.random = random.Random(seed)
        self.rate = rate
        self.lock = threading.Lock()
        self.generation = {}  # path → ETag generation
        self.counts = {fault: 0 for fault in FAULTS}
        self.counts["requests"] = 0
        self.log = open(log_path, "a", buffering=1) if log_path else None

    def pick_fault(self):
        with self.lock:
            self.counts["requests"] += 1
            if self.random.random() >= self.rate:
                return None, 0.0
            fault = self.random.choice(FAULTS)
            self.counts[fault] += 1
            return fault, self.random.random()

    def etag(self, path, stat):
        with self.lock:
            generation = self.generation.get(path, 0)
        return f'"{stat.st_ino:x}-{stat.st_size:x}-{generation}"'

    def bump(self, path):
        with self.lock:
            self.generation[path] = self.generation.get(path, 0) + 1


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "chaos"

    def log_message(self, format, *args):
        state = self.server.state
        if state.log:
            state.log.write(f"{time.time():.3f} {self.address_string()} {format % args}\n")

    def do_GET(self):
        state = self.server.state
        if self.path == "/__counts":
            body = repr(state.counts).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        path = os.path.realpath(os.path.join(state.root, self.path.split("?")[0].lstrip("/")))
        if not path.startswith(state.root + os.sep) or not os.path.isfile(path):
            return self.plain(404, b"not found\n")
        fault, where = state.pick_fault()
        if fault == "503":
            return self.plain(503, b"busy\n", {"Retry-After": "1"})
        if fault == "etag":
            state.bump(path)
        stat = os.stat(path)
        etag = state.etag(path, stat)
        size = stat.st_size
        start, status = 0, 200
        wanted = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if wanted and fault != "ignore-range" and (if_range is None or if_range == etag):
            spec = wanted.strip()
            if spec.startswith("bytes=") and spec.endswith("-") and spec[6:-1].isdigit():
                start = int(spec[6:-1])
                if start >= size:
                    return self.plain(416, b"", {"Content-Range": f"bytes */{size}"})
                status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size - start))
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", formatdate(stat.st_mtime, usegmt=True))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.end_headers()
        cut = start + int((size - start) * where) if fault in ("drop", "stall") else None
        with open(path, "rb") as f:
            f.seek(start)
            position = start
            while position < size:
                chunk = f.read(min(256 << 10, size - position, (cut - position) if cut and cut > position else 1 << 30))
                if not chunk:
                    break
                try:
                    self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    return
                position += len(chunk)
                if cut is not None and position >= cut:
                    if fault == "drop":
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    time.sleep(1 + 2 * where)
                    cut = None

    def plain(self, status, body, headers=None):
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Ferry is killed mid-request on purpose: a reset connection is the normal case here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=0.3, help="share of requests that misbehave")
    parser.add_argument("--log")
    args = parser.parse_args()
    server = Server(("127.0.0.1", args.port), Handler)
    server.state = State(args.root, args.seed, args.rate, args.log)
    server.serve_forever()


if __name__ == "__main__":
    main()
