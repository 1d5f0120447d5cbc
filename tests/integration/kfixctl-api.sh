#!/bin/sh
# kfixctl acts through a running daemon's REST API (retry, cancel, submit,
# approve, reject) when it knows the address and has the admin token, and
# on the store directly otherwise: daemon stopped, no token, or no address.
# Which way was taken is read from the daemon's request counters.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl sqlite3 python3
hooks_setup
hooks_write_config ""
T=$HOOKS_TMP
unset KFIX_ADMIN_TOKEN KFIX_API_TOKEN 2>/dev/null || true
k() { "$KFIXCTL" -c "$KFIX_CONF" "$@"; }
# requests the daemon answered on a route with a status
served() { # ROUTE CODE
	curl -fs "$KFIX_URL/metrics" |
		sed -n "s|^kfix_http_requests_total{route=\"$1\",code=\"$2\"} ||p" | grep . || echo 0
}
add_job() { # STATE -> id
	sql "insert into jobs (kind, state, max_attempts, created) values ('self-test', '$1', 3, 0); select last_insert_rowid();"
}
add_patch() { # BUG -> id
	sql "insert into patches (bug_id, version, state, subject, diff, created, updated)
	     values ($1, (select count(*) + 1 from patches where bug_id = $1), 'awaiting-approval',
	             'mm: fix it', 'diff --git a/x b/x', 0, 0); select last_insert_rowid();"
}
state_of() { sql "select state from $1 where id = $2"; }

hooks_start_kfixd
k pause >/dev/null || fail "pause"  # no job may start while the test looks
# through the daemon, which says so, with an event saying who
expect_eq "pause over the API" "$(served /api/v1/scheduler 200)" 1
grep -q "scheduler paused by kfixctl pause (uid $(id -u))" "$HOOKS_TMP/kfixd.log" ||
	fail "the pause is not in the daemon's log"
expect_eq "pause event" "$(sql "select json_extract(detail, '\$.mode') || ' ' || json_extract(detail, '\$.by') from events where kind = 'scheduler.mode'")" \
	"paused kfixctl pause (uid $(id -u))"
k status >"$T/status"
grep -q "^kfixd: *up" "$T/status" || fail "status: $(cat "$T/status")"
grep -q "^Scheduler: paused: no new job starts (kfixctl resume)" "$T/status" || fail "status: $(cat "$T/status")"
expect_eq "status --json" "$(k status --json | jq_get daemon) $(k status --json | jq_get scheduler)" "up paused"
printf 'BUG: KASAN: use-after-free in f\n' >"$T/report.txt"
printf 'int main(void) { return 0; }\n' >"$T/repro.c"

# ---- through the API ----
cd "$T"
out=$(k submit --title "KASAN: use-after-free in f" --id api-1 --tree linux \
	--report report.txt --repro ./repro.c) || fail "submit: $out"
expect_eq "submit output" "$out" "bug 1 added"
expect_eq "submitted over the API" "$(served /api/v1/bugs 201)" 1
# the files' content travels, not their paths: the daemon keeps its copy
expect_eq "texts sent" "$(cat "$(sql "select report from bugs where id = 1")")$(cat "$(sql "select repro_c from bugs where id = 1")")" \
	"$(cat "$T/report.txt")$(cat "$T/repro.c")"
case "$(sql "select report from bugs where id = 1")" in "$T"/state/submitted/*) ;; *) fail "report not kept by the daemon";; esac
expect_eq "submit again" "$(k submit --title "KASAN: use-after-free in f" --id api-1 --json | jq_get created)" false
expect_eq "again over the API" "$(served /api/v1/bugs 200)" 1
k submit --title t --id api-x --report missing.txt 2>"$T/err" && fail "missing report accepted"
grep -q "missing.txt" "$T/err" || fail "missing report message"
cd - >/dev/null

j1=$(add_job queued) j2=$(add_job failed)
expect_eq "cancel" "$(k cancel "$j1")" "job $j1: cancelled"
expect_eq "cancelled" "$(state_of jobs "$j1")" cancelled
expect_eq "retry" "$(k retry "$j2")" "job $j2: queued again"
expect_eq "queued" "$(state_of jobs "$j2")" queued
k retry "$j2" 2>"$T/err" && fail "retry of a queued job"
grep -q "retry: job $j2 is still queued or running (HTTP 409)" "$T/err" || fail "retry message: $(cat "$T/err")"
k cancel 999 2>"$T/err" && fail "cancel of no job"
grep -q "cancel: no job 999 (HTTP 404)" "$T/err" || fail "404 message: $(cat "$T/err")"
expect_eq "job actions over the API" "$(served /api/v1/jobs/ 200) $(served /api/v1/jobs/ 409) $(served /api/v1/jobs/ 404)" "2 1 1"

p1=$(add_patch 1) p2=$(add_patch 1)
k approve "$p1" 2>/dev/null && fail "approve without --by"
expect_eq "approve" "$(k approve --by 'Ann Admin <ann@example.org>' "$p1")" "patch $p1: approved"
expect_eq "approved" "$(sql "select state || ' ' || decided_by from patches where id = $p1")" \
	"approved Ann Admin <ann@example.org>"
expect_eq "publish queued" "$(sql "select count(*) from jobs where kind = 'publish' and args like '%\"upstream\"%'")" 1
# the daemon keeps the approver rule too, for callers other than kfixctl
expect_eq "approve over the API without a Name <address>" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "Authorization: Bearer $HOOKS_ADMIN_TOKEN" -H 'Content-Type: application/json' \
	-d '{"by": "ann"}' "$KFIX_URL/api/v1/patches/$p2/approve")" 400
expect_eq "reject" "$(USER=rob k reject --reason "wrong fix" "$p2")" "patch $p2: rejected"
expect_eq "rejected" "$(sql "select state || ' ' || decided_by || ' ' || reason from patches where id = $p2")" \
	"rejected rob wrong fix"
k reject "$p1" 2>"$T/err" && fail "reject of an approved patch"
grep -q "not awaiting approval (HTTP 409)" "$T/err" || fail "reject message: $(cat "$T/err")"
expect_eq "patch decisions over the API" "$(served /api/v1/patches/ 200) $(served /api/v1/patches/ 409) $(served /api/v1/patches/ 400)" "2 1 1"

# the token may come from the environment
sed '/admin-token/d; /api-token/d' "$KFIX_CONF" >"$T/notoken.conf"
j3=$(add_job failed)
expect_eq "retry with the token from the environment" \
	"$(KFIX_ADMIN_TOKEN=$HOOKS_ADMIN_TOKEN "$KFIXCTL" -c "$T/notoken.conf" retry "$j3")" "job $j3: queued again"
expect_eq "over the API" "$(served /api/v1/jobs/ 200)" 3

# ---- on the store ----
# no token at hand: the store, although the daemon listens
j4=$(add_job queued)
expect_eq "cancel without a token" "$("$KFIXCTL" -c "$T/notoken.conf" cancel "$j4")" "job $j4: cancelled"
expect_eq "cancelled in the store" "$(state_of jobs "$j4")" cancelled
expect_eq "not over the API" "$(served /api/v1/jobs/ 200)" 3

# no daemon: the store
hooks_stop_kfixd
k status >"$T/status"
grep -q "^kfixd: *not answering" "$T/status" || fail "status without a daemon: $(cat "$T/status")"
grep -q "^Scheduler: paused" "$T/status" || fail "status without a daemon: $(cat "$T/status")"
k drain | grep -q "scheduler: draining (no daemon answers" || fail "drain on the store"
expect_eq "drain event" "$(sql "select json_extract(detail, '\$.mode') from events where kind = 'scheduler.mode' order by id desc limit 1")" draining
# a daemon that starts paused says so (as after a drain) rather than
# taking no work in silence
k pause >/dev/null
hooks_start_kfixd
grep -q "the scheduler is paused: no new job starts until kfixctl resume" "$HOOKS_TMP/kfixd.log" ||
	fail "a daemon started paused says nothing"
hooks_stop_kfixd
j5=$(add_job failed) p3=$(add_patch 1) p4=$(add_patch 1)
expect_eq "retry on the store" "$(k retry "$j5")" "job $j5: queued again"
expect_eq "cancel on the store" "$(k cancel "$j5")" "job $j5: cancelled"
expect_eq "approve on the store" "$(k approve --by 'Ann Admin <ann@example.org>' "$p3")" "patch $p3: approved"
expect_eq "reject on the store" "$(k reject "$p4")" "patch $p4: rejected"
expect_eq "submit on the store" "$(k submit --title "WARNING in g" --id store-1 --report "$T/report.txt")" "bug 2 added"
expect_eq "store results" "$(state_of jobs "$j5") $(state_of patches "$p3") $(state_of patches "$p4") $(sql "select report from bugs where id = 2")" \
	"cancelled approved rejected $T/report.txt"
expect_eq "publish queued by the store path" "$(sql "select count(*) from jobs where kind = 'publish'")" 2
k retry "$j5" >/dev/null || fail "retry on the store"
k retry "$j5" 2>"$T/err" && fail "retry twice on the store"
grep -q "still queued or running" "$T/err" || fail "store message"

# --url names the daemon: no falling back
"$KFIXCTL" -c "$KFIX_CONF" --url "$KFIX_URL" cancel "$j5" 2>"$T/err" && fail "--url without a daemon"
grep -q "no daemon answers at $KFIX_URL" "$T/err" || fail "--url message: $(cat "$T/err")"
expect_eq "not cancelled" "$(state_of jobs "$j5")" queued
echo ok

# one view: kfixctl's JSON of a row (read from the store) is the API's
hooks_start_kfixd
same_view() { # WHAT KFIXCTL-ARGS API-PATH EXTRA-API-KEYS
	k $2 --json >"$T/ctl.json" || fail "kfixctl $2 --json"
	curl -fs -H "Authorization: Bearer $HOOKS_READ_TOKEN" "$KFIX_URL$3" >"$T/api.json" ||
		fail "GET $3"
	python3 - "$T/ctl.json" "$T/api.json" "$4" "$1" <<'PY' || fail "$1: kfixctl and the API differ"
import json, sys
c, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if isinstance(a, dict) and "items" in a:
    a = a["items"]
extra = set(sys.argv[3].split())
if isinstance(c, list):
    c = sorted(c, key=lambda x: x["id"])
    a = sorted(a, key=lambda x: x["id"])
    pairs = list(zip(c, a))
    assert len(c) == len(a), (sys.argv[4], len(c), len(a))
else:
    pairs = [(c, a)]
for x, y in pairs:
    for k in extra:
        x.pop(k, None); y.pop(k, None)
    assert x == y, (sys.argv[4], {k: (x.get(k), y.get(k)) for k in set(x) | set(y) if x.get(k) != y.get(k)})
PY
}
same_view bug "bug 1" /api/v1/bugs/1 "events"
same_view job "job $j5" "/api/v1/jobs/$j5" ""
same_view patch "patch $p3" "/api/v1/patches/$p3" "reviews"
same_view outbox "outbox" "/api/v1/outbox" ""
hooks_stop_kfixd
echo "ok: one JSON per entity for kfixctl and the API"
