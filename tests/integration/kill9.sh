#!/bin/bash
# kill -9 of kfixd at many points of the work: after each restart every
# bug and job is still there, leased jobs resume from their last step, and
# every mail is delivered exactly once.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"

BUGS=4
write_config "	self-test-jobs = yes" "	self-test-step = 150ms" "	workers = 2" \
	"	lease = 30s" "	job-attempts = 50"
for i in $(seq 1 $BUGS); do
	ctl submit --title "KASAN: use-after-free Read in f$i" --id "k$i" >/dev/null
done
db=$T/state/kfix.db
q() { sqlite3 "$db" "$1"; }

# kill points spread over the whole flow (about 2 s of work)
kills=0
for delay in 0.05 0.1 0.2 0.3 0.45 0.6 0.8 1.0 1.2 1.5 1.8 2.2; do
	start_kfixd
	sleep "$delay"
	kill -9 "$KFIXD_PID"
	wait "$KFIXD_PID" 2>/dev/null || true
	kills=$((kills + 1))
	# job processes die with their daemon (PR_SET_PDEATHSIG)
	wait_for 5 sh -c "! pgrep -f -- '[-]-config $T/kfix.conf --run-job' >/dev/null" || fail "orphaned job process"
	[ "$(q 'SELECT count(*) FROM bugs')" = $BUGS ] || fail "bugs lost after kill $kills"
	[ "$(q 'PRAGMA integrity_check')" = ok ] || fail "store damaged after kill $kills"
	if [ "$(q "SELECT count(*) FROM bugs WHERE state = 'awaiting-approval'")" = $BUGS ] &&
	   [ "$(q "SELECT count(*) FROM outbox WHERE state = 'sent'")" = $BUGS ]; then
		break
	fi
done
start_kfixd
wait_for 60 sh -c "[ \"\$(sqlite3 '$db' \"SELECT count(*) FROM outbox WHERE state = 'sent'\")\" = $BUGS ]" ||
	fail "work did not finish after $kills kills: $(ctl status)"
wait_for 20 sh -c "[ \"\$(sqlite3 '$db' \"SELECT count(*) FROM jobs WHERE state = 'done'\")\" = $BUGS ]" ||
	fail "jobs not done: $(ctl jobs)"
stop_kfixd

[ "$(q "SELECT count(*) FROM bugs WHERE state = 'awaiting-approval'")" = $BUGS ] || fail "states: $(ctl bugs)"
[ "$(q 'SELECT count(*) FROM jobs')" = $BUGS ] || fail "duplicate jobs: $(ctl jobs)"
[ "$(q 'SELECT count(*) FROM outbox')" = $BUGS ] || fail "duplicate outbox entries"
[ "$(ls "$T/spool"/*.eml | wc -l)" = $BUGS ] || fail "spool: $(ls "$T/spool")"
# each transition happened exactly once per bug: steps were not redone
dups=$(q "SELECT bug_id, detail, count(*) FROM events WHERE kind = 'bug.state'
          GROUP BY bug_id, detail HAVING count(*) > 1")
[ -z "$dups" ] || fail "transitions repeated: $dups"
[ "$(q "SELECT count(*) FROM events WHERE kind = 'bug.state'")" = $((BUGS * 4)) ] || fail "transitions missing"
resumed=$(q "SELECT count(*) FROM jobs WHERE attempts > 1")
grep -q "took back" "$T/kfixd.log" || fail "leases of the killed daemon were not taken back"
ok "$kills kills; $resumed job(s) resumed after a kill; every bug done once, every mail sent once"
