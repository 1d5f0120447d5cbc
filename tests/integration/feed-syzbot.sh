#!/bin/sh
# The syzbot poller against a fake dashboard: exactly the right bugs are
# created (filters: C reproducer only, crash types, trees, fixed bugs,
# bugs per day), a 429 is honoured, slow/truncated/cut answers change
# nothing, requests are at least 1 s apart, bugs that change between polls
# are fetched again, unchanged ones are not, and a restart of kfixd
# resumes with a conditional request instead of fetching everything.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl sqlite3 python3
hooks_setup
python3 "$top_srcdir/tests/fake-syzbot.py" "$top_srcdir/tests/fixtures/syzbot" "$HOOKS_TMP/port" &
HOOKS_EXTRA_PIDS=$!
i=0
until [ -s "$HOOKS_TMP/port" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "fake dashboard did not start"; sleep 0.1
done
DASH="http://127.0.0.1:$(cat "$HOOKS_TMP/port")"
control() { curl -fs -X POST "$DASH/_control/$1" >/dev/null || fail "control $1"; }
log() { curl -fs "$DASH/_control/log"; }
bugs() { sql "select count(*) from bugs where source = 'syzbot'"; }
# wait_for WHAT SHELL-CONDITION [SECONDS]
wait_for() {
	i=0
	until eval "$2"; do
		i=$((i + 1))
		[ $i -lt $(( ${3:-30} * 10 )) ] || fail "timed out waiting for $1"
		sleep 0.1
	done
}

A=aaaa00000000000000a1 B=bbbb00000000000000b2 F=ffff00000000000000f6 G=1111000000000000aa77
hooks_write_config "[feed \"test\"]
	url = $DASH/
	namespace = upstream
	interval = 2s
	backoff = 1s
	timeout = 2s
	c-repro-only = true
	max-per-day = 3
	crash-types = KASAN:
	crash-types = WARNING
	crash-types = general protection fault
	trees = torvalds/linux.git"

# phase 1: the first list request is rate limited
control "fault?kind=429&count=1"
hooks_start_kfixd
wait_for "bug A" '[ "$(bugs)" = 1 ]'
wait_for "the end of round 1" 'log | grep -q eeee00000000000000e5'
sleep 1
expect_eq "phase 1 bugs" "$(sql "select source_id from bugs where source = 'syzbot'")" "$A"
expect_eq "links unescaped and absolute" \
	"$(sql "select repro_c || ' ' || report from bugs where source_id = '$A'")" \
	"$DASH/text?tag=ReproC&x=a2 $DASH/text?tag=CrashReport&x=a4"
expect_eq "base commit" "$(sql "select base_commit from bugs where source_id = '$A'")" \
	1234567890abcdef1234567890abcdef12345678
log >"$HOOKS_TMP/log1.json"
python3 - "$HOOKS_TMP/log1.json" <<'EOP' || fail "phase 1 requests"
import json, sys
log = json.load(open(sys.argv[1]))
assert log[0]["status"] == 429, log[0]
assert log[1]["path"].startswith("/upstream?json=1") and log[1]["status"] == 200, log[1]
assert log[1]["t"] - log[0]["t"] >= 0.9, "429 not honoured"
gaps = [b["t"] - a["t"] for a, b in zip(log, log[1:])]
# the poller waits 1 s after each answer; arrival times at the server
# jitter by connection set-up on a loaded machine
assert min(gaps) >= 0.9, "requests closer than 1 s: %s" % gaps
paths = [e["path"] for e in log]
assert not any("cccc" in p for p in paths), "a fixed bug was fetched"
EOP

# phase 2: B gains a C reproducer, F is new; A must not be fetched again
control "phase?n=2"
wait_for "bugs B and F" '[ "$(bugs)" = 3 ]'
expect_eq "phase 2 bugs" "$(sql "select group_concat(source_id, ' ') from (select source_id from bugs where source = 'syzbot' order by id)")" "$A $B $F"
expect_eq "F's crash with a C reproducer" "$(sql "select repro_c from bugs where source_id = '$F'")" "$DASH/text?tag=ReproC&x=g2"
expect_eq "A fetched once" "$(log | grep -o "extid=$A" | wc -l)" 1

# faults change nothing and the poller recovers
for k in truncated cut slow; do
	n=$(log | grep -o '"path"' | wc -l)
	control "fault?kind=$k&count=1"
	wait_for "a poll after the $k fault" '[ "$(log | grep -o "\"path\"" | wc -l)" -ge $((n + 2)) ]' 20
done
expect_eq "bugs after faults" "$(bugs)" 3
kill -0 "$KFIXD_PID" || fail "kfixd died"
m=$(curl -s "$KFIX_URL/metrics")
echo "$m" | grep -q '^kfix_feed_requests_total{feed="test",result="429"} 1' || fail "429 metric"
echo "$m" | grep -q '^kfix_feed_polls_total{feed="test",result="bad-json"} [1-9]' || fail "bad JSON not seen"
echo "$m" | grep -q '^kfix_feed_requests_total{feed="test",result="0"} [2-9]' || fail "cut and slow answers not seen"

# a restart resumes: conditional list request, no bug fetched again
wait_for "a 304" 'log | grep -q "\"status\": 304"'
hooks_stop_kfixd
n=$(log | grep -o '"path"' | wc -l)
hooks_start_kfixd
wait_for "a poll after the restart" '[ "$(log | grep -o "\"path\"" | wc -l)" -gt "$n" ]'
sleep 2.5
log >"$HOOKS_TMP/log2.json"
python3 - "$HOOKS_TMP/log2.json" "$n" <<'EOP' || fail "requests after the restart"
import json, sys
log = json.load(open(sys.argv[1]))[int(sys.argv[2]):]
assert log, "no request after restart"
for e in log:
    assert e["path"].startswith("/upstream?json=1"), "refetched %s" % e["path"]
    assert e["inm"] and e["status"] == 304, e
EOP
expect_eq "bugs after restart" "$(bugs)" 3

# phase 3: G is new but the day's limit (3) is reached
control "phase?n=3"
wait_for "G fetched or skipped" 'curl -s "$KFIX_URL/metrics" | grep -q "result=\"over-daily-limit\""'
expect_eq "limit per day" "$(bugs)" 3
curl -s "$KFIX_URL/metrics" | grep -q '^kfix_feed_polls_total{feed="test",result="not-modified"}' || fail "poll metrics"
hooks_stop_kfixd
echo ok
