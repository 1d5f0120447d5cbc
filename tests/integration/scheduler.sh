#!/bin/bash
# kfixctl pause/resume/drain steer a running kfixd; patches can be listed,
# shown, approved and rejected along their life cycle.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"

# steps long enough for a slow kfixctl poll to see a job running
write_config "	self-test-jobs = yes" "	self-test-step = 1s"
ctl pause | grep -q "scheduler: paused" || fail "pause"
ctl submit --title "WARNING in a" --id a >/dev/null
start_kfixd
wait_for 10 sh -c "'$KFIXCTL' -c '$T/kfix.conf' jobs | grep -q queued" || fail "no job queued"
sleep 2
ctl jobs | grep -q "self-test *queued" || fail "a paused daemon took a job: $(ctl jobs)"
ctl resume >/dev/null
wait_for 20 sh -c "'$KFIXCTL' -c '$T/kfix.conf' job 1 | grep -q 'State: *done'" || fail "resume: $(ctl jobs)"
ok "pause and resume"

ctl submit --title "WARNING in b" --id b >/dev/null
wait_for 10 sh -c "'$KFIXCTL' -c '$T/kfix.conf' jobs | grep -q 'self-test *running'" || fail "second job not running"
ctl drain >/dev/null
ctl submit --title "WARNING in c" --id c >/dev/null
wait "$KFIXD_PID" || fail "drained kfixd exited with $?"
grep -q "drained: no job running" "$T/kfixd.log" || fail "no drain message"
ctl job 2 | grep -q "State: *done" || fail "running job not finished before the stop: $(ctl job 2)"
ctl bug 3 | grep -q "State: *new" || fail "the bug submitted during the drain was worked on"
[ "$(sqlite3 "$T/state/kfix.db" "SELECT value FROM kv WHERE key = 'scheduler.mode'")" = paused ] ||
	fail "not left paused after the drain"
ok "drain"

db=$T/state/kfix.db
now=$(date +%s)
sqlite3 "$db" "INSERT INTO patches (bug_id, version, state, subject, diff, evidence, created, updated)
	VALUES (1, 1, 'awaiting-approval', 'fs: fix a', 'diff --git a/f b/f', '{\"base\": {\"runs\": 3}}', $now, $now),
	       (2, 1, 'awaiting-approval', 'mm: fix b', 'diff --git a/m b/m', NULL, $now, $now)"
ctl patches | grep -q "^1 .*awaiting-approval .*fs: fix a" || fail "patches: $(ctl patches)"
[ "$(ctl patch 1 --json | json_field 'j["evidence"]["base"]["runs"]')" = 3 ] || fail "patch --json"
ctl patch 2 | grep -q "^diff --git a/m b/m" || fail "patch shows the diff"
ctl approve --by "Mod <moderator@example.org>" 1 | grep -q "patch 1: approved" || fail "approve"
ctl reject --reason "wrong fix" 2 | grep -q "patch 2: rejected" || fail "reject"
set +e
ctl approve --by "Mod <moderator@example.org>" 2 2>"$T/err"; rc=$?
set -e
[ $rc = 1 ] && grep -q "not awaiting approval" "$T/err" || fail "approving a rejected patch"
[ "$(ctl patch 1 --json | json_field 'j["decided_by"]')" = "Mod <moderator@example.org>" ] || fail "decided_by"
ctl jobs | grep -q "publish *queued" || fail "approval did not queue the upstream mail"
[ "$(ctl patches --state rejected --json | json_field 'j[0]["reason"]')" = "wrong fix" ] || fail "reason"
ok "patches"
