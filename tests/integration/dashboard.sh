#!/bin/bash
# The dashboard after a real flow: a validated patch published by kfixd (a
# branch pushed to a git remote, the RFC mail spooled) on a bug whose title
# and patch subject carry <script>, and a self-test job walking a second
# bug through its life cycle.  HTTP-level checks with curl (redirects,
# cookie flags, security headers, CSRF, sessions ending with a token
# change), then the reviewer's path in headless Chromium driven by
# Playwright (tests/browser/dashboard.mjs); its screenshots are kept in
# tests/browser-artifacts/ of the build folder.
. "$(dirname "$0")/lib.sh"
for t in git sqlite3 curl node; do
	command -v "$t" >/dev/null || skip "$t needed (scripts/install-deps.sh all)"
done
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip "$CHROMIUM missing: Debian's chromium (scripts/install-deps.sh all)"
[ -d "$top_srcdir/tests/browser/node_modules/playwright-core" ] ||
	skip "playwright-core missing: npm ci --prefix tests/browser (scripts/install-deps.sh all)"

U=$T/upstream
mkdir -p "$U/mm"
printf 'void slab_free(struct kmem_cache *s, void *x)\n{\n\tdo_slab_free(s, x);\n}\n' > "$U/mm/slub.c"
git -C "$U" init -q -b master
git -C "$U" -c user.name=U -c user.email=u@example.org add -A
git -C "$U" -c user.name=U -c user.email=u@example.org commit -qm base
BASE=$(git -C "$U" rev-parse HEAD)
sed -i 's/^\tdo_slab_free(s, x);/\tif (!x)\n\t\treturn;\n\tdo_slab_free(s, x);/' "$U/mm/slub.c"
git -C "$U" diff > "$T/fix.diff"
git -C "$U" checkout -q .
git init -q --bare "$T/push.git"

READ=read-$$-$RANDOM ADMIN=admin-$$-$RANDOM
port=$(free_port)
URL=http://127.0.0.1:$port
write_config "	cache-dir = $T/cache"
cat >> "$T/kfix.conf" <<CONF
[mail]
	from = kfix bot <kfix@kfix.example.org>
[tree "linux"]
	url = file://$U
	moderation-address = moderation@example.org
	push-remote = file://$T/push.git
[http]
	listen = 127.0.0.1:$port
	api-token = $READ
	admin-token = $ADMIN
CONF
SUBJECT="mm/slub: <script>alert('subject')</script> ignore NULL in slab_free()"
ctl submit --title "KASAN: <script>alert('title')</script> null-ptr-deref in slab_free" \
	--id dash1 --tree linux --commit "$BASE" >/dev/null
python3 - "$T/state/kfix.db" "$T/fix.diff" "$BASE" "$SUBJECT" <<'PY'
import json, sqlite3, sys, time
db, diff, base, subject = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3], sys.argv[4]
now = int(time.time())
msg = (subject + "\n\nslab_free() passes a NULL object on to do_slab_free(), which\n"
       "dereferences it.\n\nReported-by: syzbot+dash1@syzkaller.appspotmail.com\n")
ev = {"table": [{"kernel": "base " + base[:12], "result": "crashed 3 of 3"},
                {"kernel": "patched", "result": "survived 3 of 3"}],
      "evidence": "probe: x == NULL at mm/slub.c:3 <img src=x onerror=alert(2)>",
      "patch_type": "root-cause fix"}
c = sqlite3.connect(db)
c.execute("UPDATE bugs SET state = 'validated' WHERE id = 1")
c.execute("INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation,"
          " evidence, base_commit, created, updated) VALUES (1, 1, 'validated', ?, ?, ?, ?, ?, ?, ?, ?)",
          (subject, msg, diff, "Root cause: a NULL object.", json.dumps(ev), base, now, now))
# a review reply with its trailers, one of them hostile
c.execute("INSERT INTO reviews (bug_id, patch_id, message_id, author, trailers, comments, created)"
          " VALUES (1, 1, 'rv1@example.org', 'Rev <rev@example.org>', ?, 'Fine.', ?)",
          (json.dumps([{"key": "Reviewed-by", "value": "Rev <rev@example.org>"},
                       {"key": "Tested-by", "value": "<script>alert('trailer')</script>"}]), now))
c.commit()
PY
ctl publish 1 | grep -q "publishing queued" || fail "publish"
start_kfixd
wait_for 20 curl -fs "$URL/healthz" || fail "kfixd did not come up: $(tail -5 "$T/kfixd.log")"
wait_for 60 sh -c "[ \"\$(sqlite3 '$T/state/kfix.db' \"SELECT count(*) FROM outbox WHERE state = 'sent'\")\" = 2 ]" ||
	fail "push and mail not delivered: $(ctl outbox) $(tail -5 "$T/kfixd.log")"
grep -q "^Subject: \[PATCH RFC\] mm/slub: <script>" "$T"/spool/*.eml || fail "the RFC mail's subject"
ok "patch published (branch pushed, RFC mail sent)"

# the self-test flow on a second bug, slow enough to be watched (it is
# started just before the browser, which looks at it first)
printf '[kfix]\n\tself-test-jobs = yes\n\tself-test-step = 6s\n' >> "$T/kfix.conf"
kill -HUP "$KFIXD_PID"
wait_for 10 grep -q "configuration reloaded" "$T/kfixd.log" || fail "reload"

# ---- HTTP: what no browser shows ----
code() { curl -s -D "$T/hdr" -o "$T/body" -w '%{http_code}' "$@"; }
header() { tr -d '\r' < "$T/hdr" | sed -n "s/^$1: //Ip" | head -1; }
[ "$(code "$URL/")" = 303 ] && [ "$(header Location)" = /ui/bugs ] || fail "/ does not lead to the bugs"
[ "$(code "$URL/ui/bugs")" = 303 ] && [ "$(header Location)" = /ui/login ] ||
	fail "a page without a session does not lead to the login"
[ "$(code -H "Authorization: Bearer $READ" "$URL/ui/bugs")" = 303 ] ||
	fail "a bearer token opened a page: the dashboard takes sessions only"
[ "$(code --data-urlencode "token=wrong" "$URL/ui/login")" = 401 ] || fail "wrong token not refused"
[ "$(code --data-urlencode "token=$READ" "$URL/ui/login")" = 303 ] || fail "login refused"
cookie=$(header Set-Cookie)
case "$cookie" in
*HttpOnly*SameSite=Strict*) ;;
*) fail "cookie flags: $cookie" ;;
esac
case "$cookie" in *"$READ"*) fail "the token is in the cookie" ;; esac
session=${cookie%%;*}
[ "$(code -b "$session" "$URL/ui/bugs")" = 200 ] || fail "session refused"
csp=$(header Content-Security-Policy)
case "$csp" in
*"default-src 'none'"*"script-src 'self'"*) ;;
*) fail "no strict CSP: $csp" ;;
esac
[ "$(header X-Content-Type-Options)" = nosniff ] || fail "nosniff"
grep -q "&lt;script&gt;alert(&#39;title&#39;)" "$T/body" || fail "title not escaped"
grep -q "<script>alert" "$T/body" && fail "raw <script> from a title in the page"
[ "$(code -b "$session" "$URL/ui/bugs?state=bogus")" = 400 ] || fail "unknown state filter"
[ "$(code -b "$session" "$URL/ui/jobs/1/files/..%2Fkfix.db")" = 404 ] || fail "a path out of the job folder"
[ "$(code -b "$session" "$URL/ui/bugs/999")" = 404 ] || fail "unknown bug"
# a reply's trailers read as trailers, not as JSON, and escaped
code -b "$session" "$URL/ui/bugs/1" >/dev/null
grep -q "^Reviewed-by: Rev &lt;rev@example.org&gt;$" "$T/body" || fail "the reply's trailers: $(grep -A2 'trailers' "$T/body")"
grep -q "^Tested-by: &lt;script&gt;alert(&#39;trailer&#39;)&lt;/script&gt;" "$T/body" || fail "a trailer not escaped"
# a read session cannot moderate, whatever the form says
csrf=$(code -b "$session" "$URL/ui/bugs/1" >/dev/null; sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -1)
[ -z "$csrf" ] || fail "a read session got a moderation form"
[ "$(code -b "$session" -d "by=X <x@example.org>" "$URL/ui/patches/1/approve")" = 403 ] ||
	fail "a read session approved"
ok "redirects, cookie flags, CSP, escaping, scopes"

# a failed repair's page says why it failed: the gate that rejected
# every candidate, its hostile reason escaped
sqlite3 "$T/state/kfix.db" "INSERT INTO jobs (id, bug_id, kind, state, attempts,
	max_attempts, created) VALUES (900, 1, 'repair', 'failed', 1, 1, 0)"
mkdir -p "$T/state/jobs/900"
python3 - "$T/state/jobs/900/trajectory.jsonl" <<'PY'
import json, sys
diff = "diff --git a/mm/slub.c b/mm/slub.c\n--- a/mm/slub.c\n+++ b/mm/slub.c\n@@ -1 +1 @@\n-a\n+b\n"
gate = {"accepted": False, "gates": [{"gate": "no-bypass", "verdict": "reject",
                                      "reason": "<script>alert('gate')</script> removes the check"}]}
ev = [{"id": 1, "step": "run", "kind": "run.start"},
      {"id": 2, "step": "localise", "kind": "plan", "verdict": "new location", "input": {"file": "mm/slub.c"}},
      {"id": 3, "step": "patch", "kind": "gate", "verdict": "rejected", "input": {"diff": diff}, "output": gate},
      {"id": 4, "step": "patch", "kind": "observation", "verdict": "rejected", "output": {"result": "rejected"}},
      {"id": 5, "step": "run", "kind": "run.end", "verdict": "gave-up"}]
open(sys.argv[1], "w").write("".join(json.dumps(e) + "\n" for e in ev))
PY
[ "$(code -b "$session" "$URL/ui/jobs/900")" = 200 ] || fail "the failed job's page"
grep -q 'id="diagnosis"' "$T/body" && grep -q "gates: every candidate was rejected by a gate" "$T/body" &&
	grep -q "patch (event 3)" "$T/body" || fail "no diagnosis on the failed job's page"
grep -q "&lt;script&gt;alert(&#39;gate&#39;)" "$T/body" && ! grep -q "<script>alert('gate')" "$T/body" ||
	fail "the gate's reason not escaped"
ok "a failed repair's page shows its diagnosis"

# an admin session: the form token is needed, and must be this session's
[ "$(code --data-urlencode "token=$ADMIN" "$URL/ui/login")" = 303 ] || fail "admin login"
admin=$(header Set-Cookie); admin=${admin%%;*}
[ "$(code -b "$admin" -d "reason=forged" "$URL/ui/patches/1/reject")" = 403 ] ||
	fail "a POST without the form token was taken"
[ "$(code -b "$admin" -d "reason=forged&csrf=$(printf '%064d' 0)" "$URL/ui/patches/1/reject")" = 403 ] ||
	fail "a wrong form token was taken"
code -b "$admin" "$URL/ui/bugs/1" >/dev/null
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -1)
[ -n "$csrf" ] || fail "no form token on the admin's bug page"
[ "$(code -b "$admin" -H "Origin: http://evil.example" -d "reason=x&csrf=$csrf" "$URL/ui/patches/1/reject")" = 403 ] ||
	fail "a cross-origin POST was taken"
[ "$(sqlite3 "$T/state/kfix.db" 'SELECT state FROM patches WHERE id = 1')" = awaiting-approval ] ||
	fail "a refused POST changed the patch"
ok "CSRF: form token and origin checked"

# ---- the browser ----
ctl submit --title "WARNING in dash_selftest" --id dash2 >/dev/null
jobs_sql="SELECT id FROM jobs WHERE kind = 'self-test' AND state = 'running'"
wait_for 30 sh -c "[ -n \"\$(sqlite3 -cmd '.timeout 5000' '$T/state/kfix.db' \"$jobs_sql\")\" ]" ||
	fail "no running self-test job: $(ctl jobs)"
LIVE_JOB=$(sqlite3 "$T/state/kfix.db" "$jobs_sql")
ART=$top_builddir/tests/browser-artifacts
rm -rf "$ART"
KFIX_URL=$URL KFIX_ARTIFACTS=$ART KFIX_READ_TOKEN=$READ KFIX_ADMIN_TOKEN=$ADMIN \
	KFIX_PATCH_BUG=1 KFIX_PATCH_ID=1 KFIX_LIVE_JOB=$LIVE_JOB CHROMIUM=$CHROMIUM \
	timeout 300 node "$top_srcdir/tests/browser/dashboard.mjs" || fail "browser test (screenshots in $ART)"
for s in bugs bug job approve approved hosts; do
	[ -s "$ART/$s.png" ] || fail "no screenshot $s"
done
[ "$(sqlite3 "$T/state/kfix.db" "SELECT decided_by FROM patches WHERE id = 1")" = "Mod Erator <mod@example.org>" ] ||
	fail "the approval through the page was not recorded"
grep -q "dashboard: patch 1 approved by Mod Erator" "$T/kfixd.log" || fail "approval not logged"
ok "browser: login, list, bug, live job, approval (screenshots in $ART)"

# a changed token ends the sessions made with the old one
sed -i "s/admin-token = $ADMIN/admin-token = $ADMIN-new/" "$T/kfix.conf"
kill -HUP "$KFIXD_PID"
wait_for 10 sh -c "[ \$(grep -c 'configuration reloaded' '$T/kfixd.log') -ge 2 ]" || fail "second reload"
[ "$(code -b "$admin" "$URL/ui/bugs")" = 303 ] || fail "a session outlived its token"
ok "sessions end when the tokens change"
