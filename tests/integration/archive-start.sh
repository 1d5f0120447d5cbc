#!/bin/bash
# [archive] start: an archive added today is followed from its head (the
# default) -- the list's history, here two epochs of syzbot reports, makes
# no bug -- and the first message after the head is taken.  The archive is
# a public-inbox v2 layout written with git alone (git/0.git, git/1.git,
# one message per commit in the file "m"), so that it has two epochs.
. "$(dirname "$0")/lib.sh"
for t in git sqlite3; do
	command -v "$t" >/dev/null || skip "$t is not installed (Debian packages git, sqlite3)"
done
FIX="$top_srcdir/tests/fixtures/mail"
DB=$T/state/kfix.db
q() { sqlite3 -cmd ".timeout 5000" "$DB" "$1"; }
A=$T/inbox

# epoch N gets the report for EXTID as its newest message
add_report() { # EPOCH EXTID
	local w=$T/work-$1
	[ -d "$A/git/$1.git" ] || git init -q --bare -b master "$A/git/$1.git"
	[ -d "$w" ] || git clone -q "$A/git/$1.git" "$w" 2>/dev/null
	sed -e "s/4f3a9c0de81b27a6e5d4/$2/g" -e "s/^Message-ID: .*/Message-ID: <report-$2@google.com>/" \
		"$FIX/syzbot-report.eml" > "$w/m"
	git -C "$w" add m
	git -C "$w" -c user.name=pi -c user.email=pi@example.org commit -qm "report $2"
	git -C "$w" push -q origin HEAD:master || fail "push to epoch $1"
}
add_report 0 aaaa0000
add_report 0 bbbb0000
add_report 1 cccc1111
add_report 1 dddd1111

write_config "	cache-dir = $T/cache
[archive \"lists\"]
	url = $A
	poll-interval = 1s"
"$KFIXD" -c "$T/kfix.conf" --check-config >/dev/null || fail "config"
start_kfixd
head=$(git --git-dir="$A/git/1.git" rev-parse master)
wait_for 30 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT value FROM kv WHERE key = 'archive/lists/position'\")\" = '1:$head' ]" ||
	fail "not started at the head 1:$head: $(q "SELECT value FROM kv WHERE key LIKE 'archive/%'") $(tail -5 "$T/kfixd.log")"
grep -q "archive lists: followed from its head, position 1:$head" "$T/kfixd.log" || fail "head not logged"
# only the last epoch was fetched into the cache
[ -z "$(find "$T/cache/archives" -maxdepth 2 -name 0.git)" ] || fail "epoch 0 was fetched for the head"
# a few more polls: the history stays unread
wait_for 30 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM jobs WHERE kind = 'archive-poll' AND state = 'done'\")\" -ge 3 ]" ||
	fail "polls: $(ctl jobs)"
[ "$(q 'SELECT count(*) FROM bugs')" = 0 ] || fail "the history made bugs: $(q 'SELECT source_id FROM bugs')"
ok "a new archive starts at its head (two epochs, only the last fetched)"

add_report 1 eeee1111
wait_for 30 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$DB' 'SELECT count(*) FROM bugs')\" = 1 ]" ||
	fail "the new report was not taken: $(q 'SELECT source_id FROM bugs') $(tail -5 "$T/kfixd.log")"
[ "$(q 'SELECT source_id FROM bugs')" = eeee1111 ] || fail "bug: $(q 'SELECT source_id FROM bugs')"
ok "the first message after the head is taken"

# a restart keeps the position: the head is taken once, for a new archive
stop_kfixd
start_kfixd
add_report 1 ffff1111
wait_for 30 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$DB' 'SELECT count(*) FROM bugs')\" = 2 ]" ||
	fail "after a restart: $(q 'SELECT source_id FROM bugs')"
[ "$(grep -c 'followed from its head' "$T/kfixd.log")" = 1 ] || fail "the head was taken again after a restart"
stop_kfixd
ok "a restart continues from the stored position"
