#!/bin/bash
# The store under faults: a corrupt file, a lock held by someone else, a
# full disk (during migration and during work).  Each gives a clear error,
# and nothing half-written is left behind.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"

write_config
mkdir -p "$T/state"
head -c 8192 /dev/urandom > "$T/state/kfix.db"
set +e
"$KFIXD" -c "$T/kfix.conf" --log-target stderr 2>"$T/err"; rc=$?
set -e
[ $rc = 1 ] || fail "kfixd started on a corrupt store (rc $rc)"
grep -q "kfix.db.*corrupt or not a SQLite database" "$T/err" || fail "message: $(cat "$T/err")"
ok "corrupt store refused"

rm -f "$T/state/kfix.db"
ctl submit --title t0 --id a0 >/dev/null
python3 - "$T/state/kfix.db" <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open(sys.argv[1] + ".locked", "w").close()
time.sleep(60) # well past kfixctl's 10 s busy timeout, however slow it starts
PY
locker=$!
PIDS="$PIDS $locker"
wait_for 10 test -e "$T/state/kfix.db.locked" || fail "locker did not start"
set +e
ctl submit --title t1 --id a1 2>"$T/err"; rc=$?
set -e
[ $rc = 1 ] && grep -q "locked" "$T/err" || fail "locked store: rc $rc $(cat "$T/err")"
kill "$locker"; wait "$locker" 2>/dev/null || true
ctl submit --title t1 --id a1 | grep -q added || fail "store unusable after the lock"
ok "locked store: clear error, then recovers"

if ! mkdir -p "$T/small" || ! mount -t tmpfs -o size=512k tmpfs "$T/small" 2>/dev/null; then
	skip "cannot mount a small tmpfs (needs root) for the full-disk cases"
fi
trap 'umount "$T/small" 2>/dev/null; cleanup' EXIT
# full disk during the first open: the migration is all or nothing
# a few KiB left: the migrations start and cannot finish
head -c "$(($(df --output=avail -k "$T/small" | tail -1) - 6))k" /dev/zero > "$T/small/filler" 2>/dev/null || true
sed -i "s|state-dir = .*|state-dir = $T/small/state|" "$T/kfix.conf"
set +e
ctl submit --title t --id full0 2>"$T/err"; rc=$?
set -e
[ $rc = 1 ] || fail "migration on a full disk reported success"
if [ -s "$T/small/state/kfix.db" ]; then
	v=$(sqlite3 "$T/small/state/kfix.db" 'PRAGMA user_version')
	n=$(sqlite3 "$T/small/state/kfix.db" "SELECT count(*) FROM sqlite_master WHERE type='table'")
	[ "$v" = 0 ] && [ "$n" = 0 ] || [ "$v" = 1 ] || fail "half-migrated store: version $v, $n tables"
fi
ok "full disk during migration: nothing half-done"

# full disk during work: earlier bugs intact, later ones refused, then ok
rm -rf "$T/small/filler" "$T/small/state"
ctl submit --title first --id f1 >/dev/null
# leave 40 KiB, whatever the size of the schema: the bugs below fill it
avail=$(df --output=avail -k "$T/small" | tail -1)
head -c "$((avail - 40))k" /dev/zero > "$T/small/filler" 2>/dev/null || true
big=$(head -c 500 /dev/zero | tr '\0' x)
set +e
for i in $(seq 1 400); do
	ctl submit --title "$big" --id "x$i" >/dev/null 2>"$T/err" || break
done
set -e
grep -qi "full" "$T/err" || fail "no disk-full error: $(cat "$T/err")"
rm -f "$T/small/filler"
[ "$(sqlite3 "$T/small/state/kfix.db" 'PRAGMA integrity_check')" = ok ] || fail "store damaged"
ctl bug 1 | grep -q "Title: *first" || fail "earlier bug lost"
ctl submit --title after --id after1 | grep -q added || fail "store unusable after space returned"
ok "full disk during work"
