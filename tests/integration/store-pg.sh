#!/bin/bash
# The store on PostgreSQL: a real server on loopback (tests/integration/
# lib-pg.sh), and the unit tests of the store and of its users run on it
# unchanged, each test in a database of its own (tests/unit/store-fixture.h).
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/integration/lib-pg.sh"

pg_start
ok "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT"

for t in test-store test-stats test-sched test-budget test-publish test-intake-review; do
	KFIX_TEST_STORE_URL=$PG_SERVER "$top_builddir/tests/unit/$t" > "$T/$t.log" 2>&1 ||
		{ cat "$T/$t.log"; fail "$t failed on PostgreSQL"; }
	grep -q 'PASSED' "$T/$t.log" || { cat "$T/$t.log"; fail "$t ran no test"; }
	ok "$t on PostgreSQL: $(grep -c '^\[       OK \]' "$T/$t.log") tests passed"
done

# ---- kfixd and kfixctl on the shared store ----
printf '%s\n' "$PG_PASSWORD" > "$T/pg-password"
write_config "	self-test-jobs = yes" "	self-test-step = 50ms" "	workers = 2"
cat >> "$T/kfix.conf" <<CONF
[store]
	url = postgresql://kfix@127.0.0.1:$PG_PORT/kfix
	password = file:$T/pg-password
CONF
q() { psql -qtA "$PG_URL" -c "$1"; }
BUGS=4
for i in $(seq $BUGS); do
	ctl submit --title "KASAN: use-after-free Read in pg$i" --id "pg$i" > /dev/null ||
		fail "kfixctl submit on PostgreSQL"
done
[ "$(q 'SELECT count(*) FROM bugs')" = $BUGS ] || fail "the bugs are not in PostgreSQL"
start_kfixd
# the server restarts under the running work: kfixd and its job
# processes connect again and the work goes on
sleep 0.5
pg_restart
wait_for 60 sh -c "[ \"\$(psql -qtA '$PG_URL' -c \"SELECT count(*) FROM outbox WHERE state = 'sent'\")\" = $BUGS ]" ||
	fail "self-test work did not finish on PostgreSQL: $(ctl status)"
# (stop_kfixd fails unless kfixd was still running)
stop_kfixd
[ "$(q "SELECT count(*) FROM jobs WHERE state = 'done'")" = $BUGS ] || fail "jobs: $(ctl jobs)"
[ "$(q "SELECT count(*) FROM bugs WHERE state = 'awaiting-approval'")" = $BUGS ] || fail "bugs: $(ctl bugs)"
[ "$(ls "$T/spool"/*.eml | wc -l)" = $BUGS ] || fail "spool: $(ls "$T/spool")"
[ ! -e "$T/state/kfix.db" ] || fail "an SQLite store was made beside the shared one"
ctl bugs | grep -q 'pg3' || fail "kfixctl bugs does not list the shared store's bugs"
ok "kfixd ran $BUGS self-test bugs on PostgreSQL through a restart of the server, kfixctl sees them"

# a wrong password: a clear error that does not show it
printf 'not-the-password\n' > "$T/pg-password"
if ctl bugs > "$T/out" 2> "$T/err"; then fail "kfixctl opened the store with a wrong password"; fi
grep -q "cannot open the store: .*password authentication failed" "$T/err" ||
	fail "message: $(cat "$T/err")"
! grep -q "not-the-password\|$PG_PASSWORD" "$T/err" || fail "the message shows a password"
# a URL that is not PostgreSQL's
sed -i "s|url = postgresql://|url = mysql://|" "$T/kfix.conf"
if ctl bugs > "$T/out" 2> "$T/err"; then fail "kfixctl took a mysql:// store"; fi
grep -q "postgresql:// URI" "$T/err" || fail "message: $(cat "$T/err")"
ok "a wrong password and a foreign URL are refused with a clear message"
