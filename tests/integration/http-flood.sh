#!/bin/sh
# Hostile clients against kfixd's HTTP front, on loopback, without any
# credential: /healthz must answer within a second during and after each
# attack.
#  1. More connections than [http] max-connections, then all closed: the
#     server used to stop accepting for good (MHD's listening socket left
#     out of its epoll set until a MHD_run that never came).
#  2. One address opening more than max-connections-per-ip: the extra
#     connections are refused, the total stays free for others.
#  3. A body trickled a byte at a time, each byte inside the idle
#     time-out: the request is dropped at request-timeout.
#  4. Unsigned bodies held open past the budget for unauthenticated bytes
#     (max-buffered): refused before kfixd grows.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl python3
hooks_setup
T=$HOOKS_TMP
HOOKS_TIMEOUT=5s
HOOKS_MAX_BODY=1M
hooks_write_config "	max-connections = 8
	max-connections-per-ip = ${PER_IP:-64}
	request-timeout = 3s
	max-buffered = 2M
	max-forge-body = 64K
[hook \"relay\"]
	type = syzbot
	secret = s3cret"
hooks_start_kfixd

healthz_fast() { # WHEN: /healthz within 1 s
	curl -fs -m 1 -o /dev/null "$KFIX_URL/healthz" || fail "$1: /healthz did not answer within 1s"
}

# attack.py MODE ARGS: opens the connections, reports on stdout, holds them
# for the given seconds, closes them.
cat >"$T/attack.py" <<'PY'
import socket, sys, time
mode, port, n, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
conns, refused = [], 0
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    if mode == "idle":
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # headers never end
    elif mode == "body":
        s.sendall(b"POST /hooks/relay HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
                  + b"x" * 500000)
    conns.append(s)
time.sleep(0.5)
for s in conns:  # a connection the server refused reads EOF or a reset
    s.settimeout(0.2)
    try:
        if s.recv(1) == b"":
            refused += 1
    except socket.timeout:
        pass
    except OSError:
        refused += 1
print(refused, flush=True)
time.sleep(hold)
for s in conns:
    s.close()
PY

# 1. the limit reached and released
python3 "$T/attack.py" idle "$HOOKS_PORT" 12 1 >"$T/a1" &
A=$!
sleep 0.3
wait "$A"
healthz_fast "after a flood past max-connections"
sleep 1
healthz_fast "a second after the flood"

# 3. a trickled body: each byte within the idle time-out (5s), the whole
#    request past request-timeout (3s)
cat >"$T/trickle.py" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"POST /hooks/relay HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
start = time.monotonic()
try:
    for _ in range(100):
        s.sendall(b"x")
        time.sleep(0.5)
        if time.monotonic() - start > 12:
            break
    print("held %.1f" % (time.monotonic() - start))
except OSError:
    print("dropped %.1f" % (time.monotonic() - start))
PY
python3 "$T/trickle.py" "$HOOKS_PORT" >"$T/t" &
A=$!
healthz_fast "while a body trickles"
wait "$A"
case $(cat "$T/t") in
dropped*) secs=$(cut -d' ' -f2 "$T/t" | cut -d. -f1)
	[ "$secs" -le 6 ] || fail "the trickled request was dropped only after ${secs}s" ;;
*) fail "a trickled body held its slot: $(cat "$T/t")" ;;
esac

# 4. bodies buffered before authentication: 6 x 500 KB against a 2 MB budget
python3 "$T/attack.py" body "$HOOKS_PORT" 6 1 >"$T/a4" &
A=$!
sleep 0.4
healthz_fast "while unsigned bodies are held"
wait "$A"
[ "$(cat "$T/a4")" -ge 2 ] || fail "the unauthenticated-bytes budget refused $(cat "$T/a4") of 6"
curl -fs "$KFIX_URL/metrics" -H "Authorization: Bearer $HOOKS_READ_TOKEN" >"$T/m" || fail "metrics"
grep -q 'kfix_http_dropped_total{reason="buffer-budget"}' "$T/m" || fail "no buffer-budget drops counted"
grep -q 'kfix_http_dropped_total{reason="request-timeout"}' "$T/m" || fail "no request-timeout drops counted"
healthz_fast "after the body flood"

# 5. forge events get a lower body limit than mail's max-body
head -c 100000 /dev/zero | tr '\0' x >"$T/100k"
expect_eq "a 100 KB forge event" "$(post /hooks/forge "$T/100k" -H 'X-GitHub-Event: push')" 413
expect_eq "a 100 KB syzbot delivery is read (then refused unsigned)" "$(post /hooks/syzbot "$T/100k")" 401

# 2. per-address limit: a new kfixd with 4 per address
hooks_stop_kfixd
sed -i 's/max-connections-per-ip = .*/max-connections-per-ip = 4/' "$KFIX_CONF"
hooks_start_kfixd
python3 "$T/attack.py" idle "$HOOKS_PORT" 6 2 >"$T/a2" &
A=$!
sleep 1
wait "$A"
[ "$(cat "$T/a2")" -ge 2 ] || fail "only $(cat "$T/a2") of 6 connections from one address refused at 4 per address"
healthz_fast "after the per-address flood"
echo PASS
