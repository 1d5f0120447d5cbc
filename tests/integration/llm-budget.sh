#!/bin/bash
# The LLM budget.  Usage rows are what jobs record per model call.  When
# the day's budget (tokens or cost) is spent, queued repair and iterate
# jobs wait for the next UTC day while other jobs go on; STATUS= and
# kfixctl status say until when; raising the limit lets them go.  A bug
# whose own budget is spent has its queued repair cancelled and is given
# up with a budget.bug-spent event.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"
DB=$T/state/kfix.db
# kfixd writes meanwhile: wait for its locks
q() { sqlite3 -cmd ".timeout 5000" "$DB" "$1"; }

printf 'int x;\n' > "$T/report"
write_config "	llm-day-tokens = 1000" "	llm-bug-cost = 0.50"
ctl pause >/dev/null
for i in 1 2 3; do ctl submit --title "bug $i" --id "b$i" --report "$T/report" >/dev/null; done
now=$(date +%s)
# bug 1 spent 600 tokens today, bug 2 400 (the day's 1000 are used up)
# and, yesterday, bug 3 cost 0.75 (over its own budget)
q "INSERT INTO llm_usage (ts, bug_id, job_id, model, tokens_in, tokens_out, cost) VALUES
	($now, 1, NULL, 'm', 500, 100, 0.01), ($now, 2, NULL, 'm', 300, 100, 0.01),
	($((now - 86400)), 3, NULL, 'm', 10, 10, 0.75)"
for b in 1 2 3; do
	q "UPDATE bugs SET state = 'repairing' WHERE id = $b"
	q "INSERT INTO jobs (bug_id, kind, state, max_attempts, created) VALUES ($b, 'repair', 'queued', 3, $now)"
done
q "INSERT INTO jobs (bug_id, kind, state, max_attempts, created) VALUES (0, 'self-test', 'queued', 1, $now)"
[ "$(q "SELECT count(*) FROM jobs WHERE kind = 'repair'")" = 3 ] || fail "setup: $(q 'SELECT * FROM jobs')"
start_kfixd
ctl resume >/dev/null
midnight=$(( (now / 86400 + 1) * 86400 ))
wait_for 30 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT count(*) FROM jobs WHERE kind = 'repair' AND state = 'queued' AND not_before = ${midnight}000000\")\" = 2 ]" ||
	fail "repairs not deferred: $(q 'SELECT id, kind, state, not_before FROM jobs')"
wait_for 30 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT state FROM bugs WHERE id = 3')\" = gave-up ]" ||
	fail "bug 3: $(q 'SELECT id, state FROM bugs')"
[ "$(q "SELECT state FROM jobs WHERE bug_id = 3")" = cancelled ] || fail "bug 3's job not cancelled"
q "SELECT detail FROM events WHERE kind = 'budget.bug-spent' AND bug_id = 3" |
	grep -q "the bug's LLM budget is spent: cost 0.7500 of 0.5000" || fail "bug-spent event: $(q "SELECT * FROM events WHERE kind LIKE 'budget%'")"
ok "a bug over its own budget is given up, its job cancelled"
sleep 2
[ "$(q "SELECT count(*) FROM jobs WHERE kind = 'repair' AND state = 'queued'")" = 2 ] ||
	fail "a repair started: $(q 'SELECT id, kind, state FROM jobs')"
[ "$(q "SELECT state FROM jobs WHERE kind = 'self-test'")" != queued ] || fail "other jobs held back too"
[ "$(q "SELECT count(*) FROM events WHERE kind = 'budget.day-spent'")" = 1 ] || fail "day-spent event not once"
q "SELECT detail FROM events WHERE kind = 'budget.day-spent'" | grep -q "1000 tokens of 1000" || fail "day-spent why"
ctl status > "$T/status"
when=$(date -u -d "@$midnight" '+%Y-%m-%d %H:%M UTC')
grep -qxF "LLM:    the day's budget is spent; repairs wait until $when" "$T/status" ||
	fail "kfixctl status: $(cat "$T/status")"
[ "$(ctl --json status | json_field 'j["llm"]["wait_until"]')" = "$midnight" ] || fail "status --json"
ok "the day's budget spent: repairs wait for the next day, kfixctl status says so"

# raising the day's limit lets them go (here they fail: no tree to work on)
sed -i 's/llm-day-tokens = 1000/llm-day-tokens = 5000/' "$T/kfix.conf"
kill -HUP "$KFIXD_PID"
wait_for 30 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT count(*) FROM jobs WHERE kind = 'repair' AND state != 'queued'\")\" -ge 3 ]" ||
	fail "repairs still waiting: $(q 'SELECT id, kind, state, not_before FROM jobs')"
ctl status | grep -q '^LLM:' && fail "status still says waiting"
ok "a raised limit lets them go"
stop_kfixd
echo PASS
