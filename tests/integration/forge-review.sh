#!/bin/bash
# Reviews on a forge: review comments on kfix's pull request (branch
# kfix/1/v1), delivered by a signed GitHub webhook, from a user the hook
# allows, are kept in the patch's review record like mail replies and
# start a new version; a stranger's comment is not kept, a replayed one
# counts once, and "#kfix repair" works from the forge too.  When v2 is
# published, its branch is pushed to the git remote and the pull request
# gets one comment linking it, posted through the forge's REST API (a
# scripted GitHub API on loopback) with the token from the hook's
# api-token, only after the push went out, and once across a kill -9
# that comes after the forge took the comment and before kfix heard back.
. "$(dirname "$0")/lib.sh"
for t in git sqlite3 curl openssl python3; do
	command -v "$t" >/dev/null || skip "$t is not installed"
done
DB=$T/state/kfix.db
q() { sqlite3 "$DB" "$1"; }

upstream_tree
git init -q --bare "$T/push.git"

# the forge's API: records each request as a JSON line; a POST adds a
# comment and answers 201, a GET lists the thread's comments.  The first
# POST is taken and then not answered for a while, as when kfix is killed
# before it hears back.
cat > "$T/api.py" <<'PY'
import json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
log, portfile = sys.argv[1], sys.argv[2]
comments, lock = {}, threading.Lock()
class H(BaseHTTPRequestHandler):
    def record(self, body):
        path, _, query = self.path.partition("?")
        with lock, open(log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": path, "query": query,
                                "auth": self.headers.get("Authorization"),
                                "accept": self.headers.get("Accept"), "body": body}) + "\n")
        return path
    def answer(self, code, data):
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client is gone
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        path = self.record(body)
        with lock:
            thread = comments.setdefault(path, [])
            thread.append({"id": len(thread) + 1, "body": body["body"]})
            first = len(thread) == 1
        if first:
            open(log + ".posted", "w").close()
            time.sleep(10)
        self.answer(201, b'{"id": 1}')
    def do_GET(self):
        path = self.record(None)
        with lock:
            data = json.dumps(comments.get(path, [])).encode()
        self.answer(200, data)
    def log_message(self, *a):
        pass
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
s.daemon_threads = True
open(portfile, "w").write(str(s.server_address[1]))
s.serve_forever()
PY
python3 "$T/api.py" "$T/api.log" "$T/api-port" &
PIDS="$PIDS $!"
wait_for 10 test -s "$T/api-port" || fail "the forge API did not start"
printf 'ghp-forge-token-0123456789' > "$T/api-token"

port=$(free_port)
write_config
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
[mail]
	from = kfix bot <kfix@kfix.example.org>
[http]
	listen = 127.0.0.1:$port
[hook "gh"]
	type = forge
	provider = github
	secret = gh-secret
	allow-users = alice
	api-url = http://127.0.0.1:$(cat "$T/api-port")
	api-token = file:$T/api-token
[tree "linux"]
	url = file://$U
	moderation-address = moderation@example.org
	push-remote = file://$T/push.git
CONF
"$KFIXD" -c "$T/kfix.conf" --check-config >/dev/null || fail "config"

ctl submit --source syzbot --title "KASAN: null-ptr-deref in slab_free" --id 00000000000000000aa1 \
	--tree linux --commit "$BASE" >/dev/null || fail "submit"
add_patch() { # VERSION: a validated patch version of bug 1
	python3 - "$DB" "$T/fix.diff" "$BASE" "$1" <<'PY'
import json, sqlite3, sys, time
db, diff, base, v = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[4])
if v > 1:
    diff = diff.replace("return;", "return; /* v%d */" % v)
c = sqlite3.connect(db)
now = int(time.time())
c.execute("UPDATE bugs SET state = 'validated' WHERE id = 1")
c.execute("INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation,"
          " evidence, base_commit, created, updated) VALUES (1, ?, 'validated', ?, ?, ?, ?, ?, ?, ?, ?)",
          (v, "mm/slub: ignore NULL in slab_free()",
           "mm/slub: ignore NULL in slab_free()\n\nslab_free() passes NULL on.\n", diff,
           "Root cause: NULL.", json.dumps({"table": []}), base, now, now))
c.commit()
PY
}
add_patch 1
ctl publish 1 >/dev/null || fail "publish v1"
start_kfixd
wait_for 20 curl -fs "http://127.0.0.1:$port/healthz" || fail "kfixd did not come up"
wait_for 60 git -C "$T/push.git" rev-parse -q --verify refs/heads/kfix/1/v1 ||
	fail "v1 not pushed: $(ctl outbox)"

# GitHub webhooks, signed with the hook's secret
gh() { # EVENT DELIVERY FILE: the HTTP status
	local sig
	sig=$(openssl dgst -sha256 -hmac gh-secret -hex < "$3" | sed 's/.* //')
	curl -s -o /dev/null -w '%{http_code}' --data-binary @"$3" -H "X-GitHub-Event: $1" \
		-H "X-GitHub-Delivery: $2" -H "X-Hub-Signature-256: sha256=$sig" \
		-H "Content-Type: application/json" "http://127.0.0.1:$port/hooks/forge"
}
review_comment() { # ID USER BODY -> file
	python3 - "$T/c-$1.json" "$1" "$2" "$3" <<'PY'
import json, sys
out, cid, user, body = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
json.dump({"action": "created",
           "comment": {"id": cid, "body": body, "user": {"login": user}},
           "pull_request": {"number": 5, "title": "mm/slub: ignore NULL in slab_free()",
                            "head": {"ref": "kfix/1/v1"}},
           "repository": {"full_name": "kfix/linux"}, "sender": {"login": user}}, open(out, "w"))
PY
	echo "$T/c-$1.json"
}
TEXT="Please also warn once when a NULL object gets here: callers should not pass one."
[ "$(gh pull_request_review_comment d1 "$(review_comment 777 bob "Looks wrong to me.")")" = 200 ] || fail "bob's comment"
[ "$(gh pull_request_review_comment d2 "$(review_comment 778 alice "$TEXT")")" = 200 ] || fail "alice's comment"
[ "$(gh pull_request_review_comment d3 "$T/c-778.json")" = 200 ] || fail "replayed comment"
[ "$(q "SELECT count(*) FROM reviews")" = 1 ] || fail "reviews: $(q "SELECT author, comments FROM reviews")"
[ "$(q "SELECT author || '|' || may_iterate || '|' || comments || '|' || message_id FROM reviews")" = "alice|1|$TEXT|forge:gh:778" ] ||
	fail "review record: $(q "SELECT * FROM reviews")"
[ "$(q "SELECT detail FROM inbox WHERE detail = 'the author may not review'")" = "the author may not review" ] ||
	fail "bob's comment: $(q "SELECT state, detail FROM inbox")"
[ "$(q "SELECT json_extract(detail, '$.forge.number') || json_extract(detail, '$.via') FROM events WHERE kind = 'review.received'")" = 5forge ] ||
	fail "review event: $(q "SELECT detail FROM events WHERE kind = 'review.received'")"
wait_for 60 sh -c "sqlite3 '$DB' \"SELECT args FROM jobs WHERE kind = 'iterate'\" | grep -q '\"reason\":\"review\"'" ||
	fail "no iterate job for the review: $(q "SELECT id, kind, state, args FROM jobs")"
ok "an allowed user's review comment is kept (once) and starts a new version; a stranger's is not"

python3 - "$T/repair.json" <<'PY'
import json, sys
json.dump({"action": "created", "comment": {"id": 779, "body": "#kfix repair\n", "user": {"login": "alice"}},
           "issue": {"number": 5, "title": "kfix/1/v1: mm/slub: ignore NULL in slab_free()",
                     "pull_request": {}},
           "repository": {"full_name": "kfix/linux"}, "sender": {"login": "alice"}}, open(sys.argv[1], "w"))
PY
[ "$(gh issue_comment d4 "$T/repair.json")" = 200 ] || fail "#kfix repair"
[ "$(q "SELECT count(*) FROM events WHERE kind = 'request.repair' AND json_extract(detail, '$.via') = 'forge'")" = 1 ] ||
	fail "#kfix repair from the forge: $(q "SELECT kind, detail FROM events WHERE kind LIKE 'request.%'")"
ok "#kfix repair from a forge comment"

# let the iterate jobs (no kernel here) end before v2 is made by hand
wait_for 60 sh -c "[ -z \"\$(sqlite3 '$DB' \"SELECT id FROM jobs WHERE state IN ('queued', 'running') AND kind = 'iterate'\")\" ]" ||
	fail "iterate jobs left"
[ ! -s "$T/api.log" ] || fail "the forge was answered before a new version: $(cat "$T/api.log")"

# v2, as an iterate job records it; kill -9 once the forge has taken the
# comment but before kfix heard back: the answer must not be posted twice
add_patch 2
ctl publish 2 >/dev/null || fail "publish v2"
wait_for 60 git -C "$T/push.git" rev-parse -q --verify refs/heads/kfix/1/v2 || fail "v2 not pushed: $(ctl outbox)"
wait_for 60 test -e "$T/api.log.posted" || fail "no answer on the forge: $(q "SELECT kind, idem_key, state, last_error FROM outbox")"
kill -9 "$KFIXD_PID"; wait "$KFIXD_PID" 2>/dev/null || true
[ "$(q "SELECT state FROM outbox WHERE kind = 'forge'")" = pending ] || fail "the answer was recorded before the kill"
start_kfixd
wait_for 60 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT state FROM outbox WHERE kind = 'forge'\")\" = sent ]" ||
	fail "the answer is not sent after the restart: $(ctl outbox)"
posts() { python3 -c 'import json, sys; print(sum(json.loads(l)["method"] == sys.argv[2] for l in open(sys.argv[1])))' "$T/api.log" "$1"; }
[ "$(posts POST)" = 1 ] || fail "answers: $(cat "$T/api.log")"
[ "$(posts GET)" -ge 2 ] || fail "kfix did not look for the answer before posting and after the restart: $(cat "$T/api.log")"
grep -q "was already on the forge" "$T/kfixd.log" || fail "no log of the answer found on the forge"
V2=$(git -C "$T/push.git" rev-parse refs/heads/kfix/1/v2)
python3 - "$T/api.log" "$V2" <<'PY' || fail "the answer: $(cat "$T/api.log")"
import json, re, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
for a in reqs:
    assert a["path"] == "/repos/kfix/linux/issues/5/comments", a
    assert a["auth"] == "Bearer ghp-forge-token-0123456789", a
    assert a["accept"] == "application/vnd.github+json", a
# looked for before the post, and for comments since about when it was queued
assert reqs[0]["method"] == "GET" and re.search(r"since=20\d\d-\d\d-\d\dT", reqs[0]["query"]), reqs[0]
b = [a for a in reqs if a["method"] == "POST"][0]["body"]["body"]
assert "version 2" in b and "`kfix/1/v2`" in b and sys.argv[2][:12] in b, b
assert re.search(r"\n\n<!-- kfix-answer [0-9a-f]+ -->$", b), b
PY
[ "$(q "SELECT state FROM outbox WHERE kind = 'forge'")" = sent ] || fail "outbox: $(ctl outbox)"
ok "v2 pushed, and the pull request answered once through the API with the hook's token (kill -9 while the forge took it)"
stop_kfixd
