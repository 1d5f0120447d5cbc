#!/bin/sh
# A delivery that got its 2xx survives kill -9 of kfixd right after the
# answer: several clients deliver at once (group commit), kfixd is killed
# the moment a 200 arrives, and every acknowledged delivery is found after
# a restart.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl sqlite3 python3
hooks_setup
hooks_write_config '[hook "gh"]
	type = forge
	provider = github
	secret = k9-secret'
hooks_start_kfixd

python3 - "$HOOKS_PORT" "$KFIXD_PID" "$HOOKS_TMP/acked" <<'EOP' || fail "delivery client"
import hashlib, hmac, http.client, os, sys, threading
port, pid, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
acked, lock, killed = [], threading.Lock(), threading.Event()

def client(n):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for i in range(1000):
        if killed.is_set():
            return
        d = "c%d-%d" % (n, i)
        # a delivery is its signed body: each one its own
        body = ('{"ref":"refs/heads/main","after":"%s","repository":{"full_name":"kfix/linux"}}'
                % d).encode()
        sig = "sha256=" + hmac.new(b"k9-secret", body, hashlib.sha256).hexdigest()
        key = "forge:gh:body:" + hmac.new(b"kfix-delivery", body, hashlib.sha256).hexdigest()
        try:
            c.request("POST", "/hooks/forge", body, {"X-GitHub-Event": "push",
                      "X-GitHub-Delivery": d, "X-Hub-Signature-256": sig})
            r = c.getresponse(); r.read()
        except Exception:
            return
        if r.status != 200:
            continue
        with lock:
            acked.append(key)
            if len(acked) == 150 and not killed.is_set():
                os.kill(pid, 9)      # right after this answer
                killed.set()

ts = [threading.Thread(target=client, args=(n,)) for n in range(8)]
for t in ts: t.start()
for t in ts: t.join()
assert killed.is_set(), "never got 150 answers"
open(out, "w").write("\n".join(acked) + "\n")
EOP
wait "$KFIXD_PID" 2>/dev/null || true
KFIXD_PID=
hooks_start_kfixd
missing=0
while read -r d; do
	n=$(sql "select count(*) from inbox where key = '$d'")
	[ "$n" = 1 ] || { echo "acknowledged delivery $d lost"; missing=$((missing + 1)); }
done <"$HOOKS_TMP/acked"
expect_eq "lost acknowledged deliveries" "$missing" 0
acked=$(wc -l <"$HOOKS_TMP/acked")
[ "$acked" -ge 150 ] || fail "only $acked acknowledged"
# the API still serves them after the restart
api_get "/api/v1/inbox?limit=1" | grep -q '"type":"forge"' || fail "inbox API"
hooks_stop_kfixd
echo "ok: $acked acknowledged deliveries all stored"
