#!/bin/sh
# The REST API: token scopes, bug submission with precise 400s, paging,
# bug and job actions, trajectories, /healthz and /metrics; kfixctl status
# over the API and its fallback to the store.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl sqlite3 python3
hooks_setup
hooks_write_config ""
hooks_start_kfixd
T=$HOOKS_TMP
code() { # METHOD PATH TOKEN [BODY]; the response's headers in $T/hdr
	curl -s -D "$T/hdr" -o "$T/resp" -w '%{http_code}' -X "$1" ${3:+-H "Authorization: Bearer $3"} \
		${4:+--data-binary "$4"} "$KFIX_URL$2"
}
header() { # NAME: its value in the last response
	tr -d '\r' <"$T/hdr" | sed -n "s/^$1: //Ip" | head -1
}
R=$HOOKS_READ_TOKEN A=$HOOKS_ADMIN_TOKEN
echo "BUG: a crash report" >"$T/r.txt"

expect_eq "no token" "$(code GET /api/v1/bugs "")" 401
expect_eq "wrong token" "$(code GET /api/v1/bugs nope)" 401
expect_eq "read token" "$(code GET /api/v1/bugs "$R")" 200
expect_eq "read token cannot submit" "$(code POST /api/v1/bugs "$R" '{}')" 403
expect_eq "unknown path" "$(code GET /api/v1/nothing "$R")" 404
# RFC 6750's challenge on a 401 and the scope on a 403; a 405 says what is allowed
code GET /api/v1/bugs "" >/dev/null
expect_eq "401 challenge" "$(header WWW-Authenticate)" 'Bearer realm="kfix"'
code POST /api/v1/bugs "$R" '{}' >/dev/null
expect_eq "403 scope" "$(header WWW-Authenticate)" 'Bearer realm="kfix", error="insufficient_scope"'
expect_eq "method not allowed" "$(code DELETE /api/v1/bugs "$A")" 405
expect_eq "405 Allow" "$(header Allow)" "GET, POST"
# an unknown state is a mistake, not an empty page
expect_eq "unknown bug state" "$(code GET '/api/v1/bugs?state=bogus' "$R")" 400
jq_get error <"$T/resp" | grep -q "unknown state 'bogus': one of new, " || fail "state message: $(cat "$T/resp")"
expect_eq "unknown job state" "$(code GET '/api/v1/jobs?state=new' "$R")" 400
expect_eq "known job state" "$(code GET '/api/v1/jobs?state=failed' "$R")" 200
expect_eq "unknown patch state" "$(code GET '/api/v1/patches?state=x' "$R")" 400
expect_eq "unknown outbox state" "$(code GET '/api/v1/outbox?state=done' "$R")" 400

expect_eq "submit" "$(code POST /api/v1/bugs "$A" '{"id":"m-1","title":"KASAN: x","report":"BUG: a crash report\n","tree":"linux","commit":"abc"}')" 201
expect_eq "submitted id" "$(jq_get id <"$T/resp")" 1
expect_eq "submit again" "$(code POST /api/v1/bugs "$A" '{"id":"m-1","title":"KASAN: x","report":"BUG: a crash report\n"}')" 200
expect_eq "not created twice" "$(jq_get created <"$T/resp")" false
expect_eq "missing title" "$(code POST /api/v1/bugs "$A" '{"id":"m-2","report":"r"}')" 400
expect_eq "precise message" "$(jq_get error <"$T/resp")" '"title" is required'
expect_eq "wrong type" "$(code POST /api/v1/bugs "$A" '{"id":"m-2","title":5,"report":"r"}')" 400
expect_eq "type message" "$(jq_get error <"$T/resp")" '"title" must be a string'
expect_eq "unknown member" "$(code POST /api/v1/bugs "$A" '{"id":"m-2","title":"t","report":"r","x":1}')" 400
expect_eq "not JSON" "$(code POST /api/v1/bugs "$A" '{"id":')" 400
# the texts are their content: a host path is a text, never a file the
# daemon reads (nor a way to learn which files exist)
expect_eq "bad source" "$(code POST /api/v1/bugs "$A" '{"id":"m-2","title":"t","source":"Sy z"}')" 400
expect_eq "no bug from refused submissions" "$(sql "select count(*) from bugs")" 1
expect_eq "a path is content" "$(code POST /api/v1/bugs "$A" '{"id":"m-2","title":"WARNING in f2","report":"/etc/shadow","repro_c":"'"$T/none.c"'"}')" 201
kept=$(sql "select report from bugs where source_id = 'm-2'")
case "$kept" in "$T"/state/submitted/*/report.txt) ;; *) fail "report kept at $kept";; esac
expect_eq "the path is what was kept" "$(cat "$kept")" "/etc/shadow"
expect_eq "a link stays a link" "$(code POST /api/v1/bugs "$A" '{"id":"m-3","title":"WARNING in f3","report":"https://syzkaller.appspot.com/x/report.txt?x=1"}')" 201
expect_eq "link kept" "$(sql "select report from bugs where source_id = 'm-3'")" "https://syzkaller.appspot.com/x/report.txt?x=1"
for i in 4 5; do
	expect_eq "submit $i" "$(code POST /api/v1/bugs "$A" "{\"id\":\"m-$i\",\"title\":\"WARNING in f$i\",\"report\":\"BUG: $i\"}")" 201
done
expect_eq "five bugs" "$(sql "select count(*) from bugs")" 5

# paging
expect_eq "page 1" "$(code GET '/api/v1/bugs?limit=2' "$R")" 200
expect_eq "page 1 ids" "$(jq_get items.1.id <"$T/resp") $(jq_get next <"$T/resp")" "2 2"
code GET '/api/v1/bugs?limit=2&after=4' "$R" >/dev/null
expect_eq "last page" "$(jq_get items.0.id <"$T/resp") $(jq_get next <"$T/resp")" "5 null"
code GET '/api/v1/bugs?state=new&source=manual' "$R" >/dev/null
expect_eq "filtered" "$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))' <"$T/resp")" 5
# the newest first: the cursor goes down
code GET '/api/v1/bugs?limit=2&order=newest' "$R" >/dev/null
expect_eq "newest page 1" "$(jq_get items.0.id <"$T/resp") $(jq_get items.1.id <"$T/resp") $(jq_get next <"$T/resp")" "5 4 4"
code GET '/api/v1/bugs?limit=2&order=newest&after=2' "$R" >/dev/null
expect_eq "newest last page" "$(jq_get items.0.id <"$T/resp") $(jq_get next <"$T/resp")" "1 null"
expect_eq "bad order" "$(code GET '/api/v1/bugs?order=up' "$R")" 400
expect_eq "bad limit" "$(code GET '/api/v1/bugs?limit=0' "$R")" 400
expect_eq "bad after" "$(code GET '/api/v1/bugs?after=x' "$R")" 400

# one bug, its events, actions
expect_eq "bug" "$(code GET /api/v1/bugs/1 "$R")" 200
expect_eq "bug events" "$(jq_get events.0.kind <"$T/resp")" bug.new
expect_eq "no bug" "$(code GET /api/v1/bugs/99 "$R")" 404
expect_eq "approve" "$(code POST /api/v1/bugs/1/approve "$A")" 202
expect_eq "reject" "$(code POST /api/v1/bugs/2/reject "$A")" 202
expect_eq "approval recorded" "$(sql "select count(*) from events where bug_id = 1 and kind = 'request.upstream'")" 1
expect_eq "read token cannot approve" "$(code POST /api/v1/bugs/1/approve "$R")" 403
expect_eq "unknown action" "$(code POST /api/v1/bugs/1/explode "$A")" 404

# jobs: one parked far in the future so that no worker takes it
sql "insert into jobs (bug_id, kind, state, max_attempts, not_before, created) values (1, 'api-test', 'queued', 3, 9000000000000000000, 1)"
expect_eq "job" "$(code GET /api/v1/jobs/1 "$R")" 200
expect_eq "job kind" "$(jq_get kind <"$T/resp")" api-test
expect_eq "cancel" "$(code POST /api/v1/jobs/1/cancel "$A")" 200
expect_eq "cancel again" "$(code POST /api/v1/jobs/1/cancel "$A")" 409
code GET '/api/v1/jobs?state=cancelled' "$R" >/dev/null
expect_eq "cancelled list" "$(jq_get items.0.id <"$T/resp")" 1
expect_eq "no trajectory" "$(code GET /api/v1/jobs/1/trajectory "$R")" 404
mkdir -p "$T/state/jobs/1"
printf '{"step":"build"}\n' >"$T/state/jobs/1/trajectory.jsonl"
expect_eq "trajectory" "$(code GET /api/v1/jobs/1/trajectory "$R")" 200
expect_eq "trajectory body" "$(cat "$T/resp")" '{"step":"build"}'
expect_eq "no job" "$(code POST /api/v1/jobs/77/retry "$A")" 404
for p in outbox events inbox status; do
	expect_eq "$p" "$(code GET "/api/v1/$p" "$R")" 200
done

# health and metrics
expect_eq "healthz" "$(code GET /healthz "")" 200
curl -s -D "$T/hdr" "$KFIX_URL/metrics" >"$T/metrics"
grep -qi '^content-type: text/plain; version=0.0.4' "$T/hdr" || fail "metrics content type"
grep -q '^kfix_bugs{state="new"} 5$' "$T/metrics" || fail "bugs gauge"
grep -q '^kfix_jobs{state="cancelled"} 1$' "$T/metrics" || fail "jobs gauge"
grep -q '^kfix_http_auth_failures_total [1-9]' "$T/metrics" || fail "auth failures"
grep -q '^kfix_http_request_duration_seconds_bucket{route="/api/v1/bugs",le="+Inf"}' "$T/metrics" || fail "histogram"

# kfixctl status goes through the API while the daemon runs
before=$(curl -s "$KFIX_URL/metrics" | awk -F' ' '/^kfix_http_requests_total\{route="\/api\/v1\/status",code="200"\}/ {print $2}')
"$KFIXCTL" -c "$KFIX_CONF" status --json >"$T/status.json" || fail "kfixctl status"
expect_eq "status via the API" "$(jq_get bugs.new <"$T/status.json")" 5
after=$(curl -s "$KFIX_URL/metrics" | awk -F' ' '/^kfix_http_requests_total\{route="\/api\/v1\/status",code="200"\}/ {print $2}')
expect_eq "API used" "$after" "$(( ${before:-0} + 1 ))"
"$KFIXCTL" -c "$KFIX_CONF" --url "$KFIX_URL" status >/dev/null || fail "kfixctl --url"
hooks_stop_kfixd
"$KFIXCTL" -c "$KFIX_CONF" status --json >"$T/status.json" || fail "kfixctl status without a daemon"
expect_eq "status from the store" "$(jq_get bugs.new <"$T/status.json")" 5
if "$KFIXCTL" -c "$KFIX_CONF" status --url "$KFIX_URL" >/dev/null 2>&1; then
	fail "an explicit --url without a daemon must fail"
fi
echo ok
