#!/usr/bin/env python3
"""A fake syzbot dashboard for tests, on loopback only.

Serves recorded JSON in the public schema from a fixture folder:
  GET /{ns}?json=1            list-<phase>.json (with an ETag; 304 on If-None-Match)
  GET /bug?extid=X&json=1     bug-X-<phase>.json if present, else bug-X.json
  GET /text?tag=T&x=X         the fixture file text-T-X when there is one
                              (a real report, reproducer, config), else a
                              text made from T and X (text_body below)
Test control:
  POST /_control/phase?n=N    switch the served data to phase N
  POST /_control/fault?kind=K&count=N   the next N data requests fail with
        K = 429 (Retry-After: 3), 429-date (Retry-After: an HTTP date 6 s ahead), slow (answer after 3 s), truncated (half
        the JSON, correct length), cut (connection closed mid-body)
  POST /_control/textfault?kinds=K1,K2,...   the next text requests, one
        kind each: pass (served normally), cut (connection closed
        mid-body), big (larger than 64 KiB, with Content-Length),
        bigstream (larger than 64 KiB, no Content-Length), 500
  GET  /_control/text?tag=T&x=X   the text as served, without logging it
  GET  /_control/log          every data request so far, as JSON
Usage: fake-syzbot.py FIXTURES PORTFILE
"""
import email.utils
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

FIXTURES, PORTFILE = sys.argv[1], sys.argv[2]
state = {"phase": 1, "faults": [], "textfaults": [], "log": []}
lock = threading.Lock()


def text_body(tag, x):
    """A deterministic text of a few KiB, with bytes a careless saver
    would mangle (CR, a NUL, non-ASCII, HTML-like entities)."""
    head = "// %s %s: &amp; <x> \u00e9\u4e2d\r\n" % (tag, x)
    lines = ["%s line %d of %s\n" % (tag, i, x) for i in range(200)]
    return (head + "".join(lines)).encode() + b"\x00\xff end\n"


def fixture(name):
    path = os.path.join(FIXTURES, name)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body=b"", headers=None, truncate=False):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body[: len(body) // 2] if truncate else body)
        except OSError:
            self.close_connection = True  # the client went away
        if truncate:
            self.close_connection = True

    def do_POST(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        with lock:
            if u.path == "/_control/phase":
                state["phase"] = int(q["n"][0])
            elif u.path == "/_control/fault":
                state["faults"] += [q["kind"][0]] * int(q.get("count", ["1"])[0])
            elif u.path == "/_control/textfault":
                state["textfaults"] += q["kinds"][0].split(",")
            else:
                return self.send(404)
        self.send(200, b"ok\n")

    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        if u.path == "/_control/log":
            with lock:
                body = json.dumps(state["log"]).encode()
            return self.send(200, body, {"Content-Type": "application/json"})
        if u.path == "/_control/text":
            return self.send(200, text_body(q["tag"][0], q["x"][0]))
        if u.path == "/text":
            return self.do_text(q)
        with lock:
            phase = state["phase"]
            fault = state["faults"].pop(0) if state["faults"] else None
            entry = {"path": self.path, "t": time.time(), "phase": phase,
                     "inm": self.headers.get("If-None-Match"), "status": None}
            state["log"].append(entry)
        if q.get("json") != ["1"]:
            entry["status"] = 400
            return self.send(400, b"json=1 missing\n")
        if fault in ("429", "429-date"):
            # longer than the poller's own 1 s gap, so that honouring it shows
            after = "3" if fault == "429" else email.utils.formatdate(time.time() + 6, usegmt=True)
            entry["status"] = 429
            return self.send(429, b"Too Many Requests\nAllowed rate is 1 requests per 1 seconds.",
                             {"Retry-After": after, "Content-Type": "text/plain"})
        if fault == "slow":
            time.sleep(3)
        if u.path.startswith("/bug"):
            extid = q.get("extid", [""])[0]
            body = fixture("bug-%s-%d.json" % (extid, phase)) or fixture("bug-%s.json" % extid)
            etag = None
        else:
            body = None
            for p in range(phase, 0, -1):
                body = fixture("list-%d.json" % p)
                if body:
                    break
            etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
            if self.headers.get("If-None-Match") == etag and fault not in ("truncated", "cut"):
                entry["status"] = 304
                return self.send(304, b"", {"ETag": etag})
        if body is None:
            entry["status"] = 404
            return self.send(404, b"no such bug\n")
        entry["status"] = 200
        headers = {"Content-Type": "application/json"}
        if etag:
            headers["ETag"] = etag
        if fault == "truncated":
            body = body[: len(body) // 2]  # valid HTTP, broken JSON
        self.send(200, body, headers, truncate=(fault == "cut"))


    def do_text(self, q):
        with lock:
            fault = state["textfaults"].pop(0) if state["textfaults"] else None
            entry = {"path": self.path, "t": time.time(), "phase": state["phase"],
                     "inm": None, "status": None, "fault": fault}
            state["log"].append(entry)
        tag, x = q.get("tag", [""])[0], q.get("x", [""])[0]
        real = fixture("text-%s-%s" % (tag, x)) if tag.isalnum() and x.isalnum() else None
        body = real if real is not None else text_body(tag, x)
        entry["status"] = 200
        headers = {"Content-Type": "text/plain; charset=utf-8"}
        if fault == "500":
            entry["status"] = 500
            return self.send(500, b"oops\n")
        if fault in ("big", "bigstream"):
            body = body * (70 * 1024 // len(body) + 1)
        if fault == "bigstream":
            # no length: the body ends when the connection closes
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:
                pass
            self.close_connection = True
            return
        self.send(200, body, headers, truncate=(fault == "cut"))


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
