#!/bin/sh
# The syzbot poller against a fake dashboard: exactly the right bugs are
# created (filters: C reproducer only, crash types, trees, fixed bugs,
# bugs per day), a 429 is honoured, slow/truncated/cut answers change
# nothing, requests are at least 1 s apart, bugs that change between polls
# are fetched again, unchanged ones are not, and a restart of kfixd
# resumes with a conditional request instead of fetching everything.
# Each bug's report, reproducers and config are saved byte for byte under
# the state folder and the bug holds those paths; a text cut short or over
# its size limit is refused and the bug waits for the next round, which
# downloads only the texts still missing.  A bug that leaves the open
# list or gets a fix commit is recorded as closed, once.
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
ART="$HOOKS_TMP/state/artifacts/test"
# the number of requests for one text (x=...)
text_requests() { log | grep -o "/text?tag=[A-Za-z]*&x=$1\"" | wc -l; }
# expect_text EXTID FILE TAG X: the bug's field holds the saved file and
# the file holds exactly what the dashboard served
expect_text() {
	_f="$ART/$1/$2"
	curl -fs "$DASH/_control/text?tag=$3&x=$4" >"$HOOKS_TMP/served" || fail "served text"
	cmp -s "$_f" "$HOOKS_TMP/served" || fail "$1/$2 differs from the served text"
}
expect_fields() { # EXTID: the four fields are the saved files
	expect_eq "$1 paths" "$(sql "select report || ' ' || repro_c || ' ' || repro_syz || ' ' || kernel_config from bugs where source_id = '$1'")" \
		"$ART/$1/report.txt $ART/$1/repro.c $ART/$1/repro.syz $ART/$1/kernel.config"
	expect_eq "$1 files only" "$(LC_ALL=C ls -A "$ART/$1" | tr '\n' ' ')" "kernel.config report.txt repro.c repro.syz "
}
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
	max-text-size = 64K
	max-repro-size = 64K
	crash-types = KASAN:
	crash-types = WARNING
	crash-types = general protection fault
	trees = torvalds/linux.git"

# phase 1: the first two list requests are rate limited, with Retry-After
# in seconds and as an HTTP date
control "fault?kind=429&count=1"
control "fault?kind=429-date&count=1"
hooks_start_kfixd
wait_for "bug A" '[ "$(bugs)" = 1 ]'
wait_for "the end of round 1" 'log | grep -q eeee00000000000000e5'
sleep 1
expect_eq "phase 1 bugs" "$(sql "select source_id from bugs where source = 'syzbot'")" "$A"
expect_fields "$A"
expect_text "$A" report.txt CrashReport a4
expect_text "$A" repro.c ReproC a2
expect_text "$A" repro.syz ReproSyz a1
expect_text "$A" kernel.config KernelConfig a3
log | grep -q '"/text?tag=ReproC&x=a2"' || fail "links not unescaped"
[ ! -e "$ART/$B" ] || fail "texts of a filtered bug were fetched"
expect_eq "base commit" "$(sql "select base_commit from bugs where source_id = '$A'")" \
	1234567890abcdef1234567890abcdef12345678
log >"$HOOKS_TMP/log1.json"
python3 - "$HOOKS_TMP/log1.json" <<'EOP' || fail "phase 1 requests"
import json, sys
log = json.load(open(sys.argv[1]))
assert log[0]["status"] == 429 and log[1]["status"] == 429, log[:2]
assert log[2]["path"].startswith("/upstream?json=1") and log[2]["status"] == 200, log[2]
assert log[1]["t"] - log[0]["t"] >= 2.5, "Retry-After in seconds not honoured"
# an HTTP date has whole seconds: 5 to 6 s ahead when it arrives, more
# than the 2 s of the poller's own second back-off
assert log[2]["t"] - log[1]["t"] >= 4.5, "Retry-After as an HTTP date not honoured"
gaps = [b["t"] - a["t"] for a, b in zip(log, log[1:])]
# the poller waits 1 s after each answer; arrival times at the server
# jitter by connection set-up on a loaded machine
assert min(gaps) >= 0.9, "requests closer than 1 s: %s" % gaps
paths = [e["path"] for e in log]
assert not any("cccc" in p for p in paths), "a fixed bug was fetched"
EOP

# phase 2: B gains a C reproducer, F is new; A must not be fetched again.
# B's syz reproducer is cut short, then too large without a length; F's
# report is too large: each time the bug waits for the next round, which
# fetches only the texts still missing.
control "textfault?kinds=pass,pass,cut,big,bigstream"
control "phase?n=2"
wait_for "bug F" '[ "$(sql "select count(*) from bugs where source_id = '"'$F'"'")" = 1 ]' 60
expect_eq "no half bug B" "$(sql "select count(*) from bugs where source_id = '$B'")" 0
wait_for "bug B" '[ "$(bugs)" = 3 ]' 60
expect_eq "phase 2 bugs" "$(sql "select group_concat(source_id, ' ') from (select source_id from bugs where source = 'syzbot' order by id)")" "$A $F $B"
expect_fields "$F"
expect_text "$F" repro.c ReproC g2
expect_text "$F" report.txt CrashReport g4
expect_fields "$B"
expect_text "$B" report.txt CrashReport b94
expect_text "$B" repro.c ReproC b92
expect_text "$B" repro.syz ReproSyz b91
expect_text "$B" kernel.config KernelConfig b93
expect_eq "B's report fetched once" "$(text_requests b94)" 1
expect_eq "B's C reproducer fetched once" "$(text_requests b92)" 1
expect_eq "B's syz reproducer fetched three times" "$(text_requests b91)" 3
expect_eq "F's report fetched twice" "$(text_requests g4)" 2
expect_eq "F's first crash not used" "$(text_requests f4)" 0
m=$(curl -s "$KFIX_URL/metrics")
echo "$m" | grep -q '^kfix_feed_texts_total{feed="test",result="too-large"} 2$' || fail "too-large texts not counted"
echo "$m" | grep -q '^kfix_feed_texts_total{feed="test",result="error"} 1$' || fail "cut text not counted"
echo "$m" | grep -q '^kfix_feed_texts_total{feed="test",result="reused"} [2-9]' || fail "saved texts not reused"
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
echo "$m" | grep -q '^kfix_feed_requests_total{feed="test",result="429"} 2' || fail "429 metric"
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

# phase 4: A left the open list (invalid or a duplicate), B got a fix
# commit: both are closed for the pre-send check, once each
control "phase?n=4"
closed() { sql "select json_extract(detail, '$.why') from events where kind = 'feed.closed' and bug_id = (select id from bugs where source_id = '$1')"; }
wait_for "A closed" '[ -n "$(closed $A)" ]' 20
wait_for "B closed" '[ -n "$(closed $B)" ]' 20
expect_eq "A's reason" "$(closed $A)" "no longer on the open list"
expect_eq "B's reason" "$(closed $B)" "fix commits"
expect_eq "F still open" "$(closed $F)" ""
n=$(log | grep -o '"path"' | wc -l)
wait_for "another poll" '[ "$(log | grep -o "\"path\"" | wc -l)" -gt "$n" ]'
expect_eq "closed once" "$(sql "select count(*) from events where kind = 'feed.closed'")" 2
hooks_stop_kfixd
echo ok
