#!/usr/bin/env python3
"""kfixd's HTTP front under hostile clients, measured: for each attack, run
for DURATION seconds beside an honest client and a prober, the peak RSS
of kfixd during the attack, the /healthz latency (p50, p99, max, failures)
and the signed webhooks per second the honest client still got answered
with 200.

  attacks.py PORT KFIXD-PID FORGE-SECRET MAIL-SECRET [DURATION]

The attacks are the ones kfix's front must survive without credentials
(and one with them): more connections than max-connections held open, a
slow client trickling bodies a byte a second, unsigned 10 MB bodies from
many connections, and a signed mail of 1.5 million empty MIME parts.
"""
import hashlib
import hmac
import http.client
import json
import socket
import sys
import threading
import time

PORT, PID = int(sys.argv[1]), int(sys.argv[2])
# The attacker is 127.0.0.1; the prober and the honest client come from
# ::1, another client address for the per-address limits.
HONEST = "::1"
FORGE_SECRET, MAIL_SECRET = sys.argv[3].encode(), sys.argv[4].encode()
DURATION = float(sys.argv[5]) if len(sys.argv) > 5 else 10.0


def rss_kb(field):
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak():
    # writing 5 resets VmHWM to the current RSS (Linux >= 4.0)
    with open("/proc/%d/clear_refs" % PID, "w") as f:
        f.write("5")


def prober(stop, lat, failed):
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            c = http.client.HTTPConnection(HONEST, PORT, timeout=5)
            c.request("GET", "/healthz")
            ok = c.getresponse().status == 200
            c.close()
        except OSError:
            ok = False
        dt = time.monotonic() - t0
        if ok:
            lat.append(dt)
        else:
            failed.append(dt)
        time.sleep(0.05)


def honest(stop, counts, tag):
    n = 0
    while not stop.is_set():
        n += 1
        body = json.dumps({"ref": "refs/heads/kfix/1/v1", "after": hashlib.sha1(b"%s-%d" % (tag.encode(), n)).hexdigest(),
                           "repository": {"full_name": "kfix/linux"}, "sender": {"login": "bench"}}).encode()
        sig = hmac.new(FORGE_SECRET, body, hashlib.sha256).hexdigest()
        try:
            c = http.client.HTTPConnection(HONEST, PORT, timeout=5)
            c.request("POST", "/hooks/forge", body, {"X-GitHub-Event": "push",
                      "X-GitHub-Delivery": "%s-%d" % (tag, n),
                      "X-Hub-Signature-256": "sha256=" + sig, "Content-Type": "application/json"})
            st = c.getresponse().status
            c.close()
        except OSError:
            st = 0
        counts[st == 200] += 1


def hold_idle(stop, n):
    """More connections than max-connections, headers never finished; the
    ones the server closes are opened again."""
    conns = []
    while not stop.is_set():
        while len(conns) < n and not stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", PORT), timeout=1)
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                conns.append(s)
            except OSError:
                time.sleep(0.05)
                break
        time.sleep(0.2)
        alive = []
        for s in conns:
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    s.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                s.close()
                continue
            alive.append(s)
        conns = alive
    for s in conns:
        s.close()


def trickle(stop, n):
    """Bodies sent a byte a second, inside any idle time-out."""
    conns = []
    for _ in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", PORT), timeout=1)
            s.sendall(b"POST /hooks/mail HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
            conns.append(s)
        except OSError:
            pass
    while not stop.is_set():
        for s in list(conns):
            try:
                s.sendall(b"x")
            except OSError:
                conns.remove(s)
                s.close()
        stop.wait(1)
    for s in conns:
        s.close()


def big_bodies(stop, n):
    """Unsigned 10 MB bodies, n connections at a time."""
    chunk = b"x" * (1 << 20)

    def one():
        while not stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
                s.sendall(b"POST /hooks/mail HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (10 << 20))
                for _ in range(10):
                    s.sendall(chunk)
                s.settimeout(5)
                s.recv(4096)
                s.close()
            except OSError:
                time.sleep(0.05)
    ts = [threading.Thread(target=one, daemon=True) for _ in range(n)]
    for t in ts:
        t.start()
    stop.wait()


def part_bomb(stop, _n):
    """A signed 10 MB mail of about 1.5 million empty MIME parts, sent
    again as soon as it is answered."""
    head = (b"From: a@example.org\r\nTo: b@example.org\r\nSubject: parts\r\n"
            b"Message-ID: <bomb@example.org>\r\nMIME-Version: 1.0\r\n"
            b"Content-Type: multipart/mixed; boundary=b\r\n\r\n")
    body = head + b"--b\r\n\r\n" * 1500000 + b"--b--\r\n"
    body = body[:10 << 20]
    while not stop.is_set():
        ts = str(int(time.time())).encode()
        sig = hmac.new(MAIL_SECRET, ts + b"." + body, hashlib.sha256).hexdigest()
        try:
            c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
            c.request("POST", "/hooks/mail", body, {"X-Kfix-Timestamp": ts.decode(),
                      "X-Kfix-Signature": "sha256=" + sig, "X-Kfix-Delivery": "bomb"})
            c.getresponse().read()
            c.close()
        except OSError:
            time.sleep(0.1)


ATTACKS = [("none", None, 0), ("connections past the limit (400 idle)", hold_idle, 400),
           ("trickled bodies (60 at 1 B/s)", trickle, 60),
           ("unsigned 10 MB bodies (250 connections)", big_bodies, 250),
           ("signed mail of 1.5M empty parts", part_bomb, 1)]


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))] if v else float("nan")


def main():
    print("%-42s %10s %9s %9s %9s %6s %12s" % ("attack", "RSS peak", "p50 ms", "p99 ms",
                                              "max ms", "fail", "webhooks/s"))
    for i, (name, fn, n) in enumerate(ATTACKS):
        stop = threading.Event()
        lat, failed, counts = [], [], [0, 0]
        reset_peak()
        ts = [threading.Thread(target=prober, args=(stop, lat, failed), daemon=True),
              threading.Thread(target=honest, args=(stop, counts, "a%d" % i), daemon=True)]
        if fn:
            ts.append(threading.Thread(target=fn, args=(stop, n), daemon=True))
        for t in ts:
            t.start()
        time.sleep(DURATION)
        peak = rss_kb("VmHWM")
        stop.set()
        for t in ts[:2]:
            t.join(10)
        ms = [x * 1000 for x in lat]
        print("%-42s %7d kB %9.1f %9.1f %9.1f %6d %12.1f" % (
            name, peak, pct(ms, 50), pct(ms, 99), max(ms) if ms else float("nan"), len(failed),
            counts[1] / DURATION), flush=True)
        time.sleep(2)  # the attack's connections go before the next
    print("RSS at the end: %d kB" % rss_kb("VmRSS"))


main()
