#!/bin/bash
# A followed public-inbox archive feeds kfixd: syzbot reports become bugs
# (their Message-ID kept), a moderator's "#kfix upstream" in the archive
# sends the patch upstream threaded under the report with syzbot and its
# list in Cc, and the pre-send checks hold a patch (with a note to the
# moderators in the RFC thread) when the bug was closed upstream, a fix
# with its Reported-by landed in the tree, or someone else posted a patch
# for it meanwhile.  Approving a held patch again sends it anyway.
. "$(dirname "$0")/lib.sh"
for t in public-inbox-init public-inbox-mda git perl sqlite3; do
	command -v "$t" >/dev/null || skip "$t is not installed (Debian packages public-inbox, git, sqlite3)"
done
FIX="$top_srcdir/tests/fixtures/mail"
DB=$T/state/kfix.db
q() { sqlite3 -cmd ".timeout 5000" "$DB" "$1"; }
# what went wrong: the jobs but the (many) polls, and kfixd's last lines
why() { q "SELECT id, bug_id, kind, state, attempts, error FROM jobs WHERE kind != 'archive-poll'"; tail -5 "$T/kfixd.log"; }

# the upstream tree, as in publish.sh
upstream_tree

# the archive
export HOME="$T/home" PI_CONFIG="$T/pi-config"
mkdir -p "$HOME"
public-inbox-init -V2 lists "$T/inbox" http://example.org/lists lists@example.org >"$T/init.log" 2>&1 ||
	fail "public-inbox-init: $(cat "$T/init.log")"
git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
deliver() { # FILE
	{ echo "X-Original-To: lists@example.org"; cat "$1"; } | ORIGINAL_RECIPIENT=lists@example.org \
		public-inbox-mda --no-precheck || fail "public-inbox-mda $1"
}
report() { # EXTID N: a syzbot report for bug EXTID, Message-ID <report-N@google.com>
	sed -e "s/4f3a9c0de81b27a6e5d4/$1/g" -e "s/^Message-ID: .*/Message-ID: <report-$2@google.com>/" \
		"$FIX/syzbot-report.eml" > "$T/report-$2.eml"
	deliver "$T/report-$2.eml"
}
command_mail() { # FROM BUG ID CMD
	printf 'From: %s\nTo: moderation@example.org\nSubject: Re: [PATCH RFC] mm/slub: ignore NULL in slab_free()\nMessage-ID: <%s>\nIn-Reply-To: <kfix-%s-v1-rfc.%s@kfix.example.org>\nDate: Tue, 17 Nov 2026 10:00:00 +0000\n\nLooks right.\n#kfix %s\n' \
		"$1" "$3" "$2" "$(sqlite3 -cmd '.timeout 5000' "$DB" "SELECT value FROM kv WHERE key = 'store.id'")" "$4" > "$T/cmd-$3"
	deliver "$T/cmd-$3"
}

write_config
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
[mail]
	from = kfix bot <kfix@kfix.example.org>
[tree "upstream"]
	url = file://$U
	moderation-address = moderation@example.org
	allow-commands = mod@example.org
	# unsigned command mails here: DKIM is tested in mail-auth.sh
	command-auth = none
[archive "lists"]
	url = $T/inbox
	poll-interval = 1s
	# the messages below are delivered before kfixd first looks
	start = beginning
	max-messages = 2
CONF

# ---- the archive feeds the intake ----
report aaaa1111 1
report bbbb2222 2
printf 'From: A <a@example.org>\nTo: lists@example.org\nSubject: hello\nMessage-ID: <hello@example.org>\nDate: Tue, 17 Nov 2026 10:00:00 +0000\n\nNothing for kfix here.\n' > "$T/hello"
deliver "$T/hello" # nothing for kfix: not stored
report cccc3333 3
report dddd4444 4
start_kfixd
wait_for 60 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM bugs')\" = 4 ]" ||
	fail "reports not taken: $(q 'SELECT id, source_id FROM bugs') $(ctl jobs) $(tail -5 "$T/kfixd.log")"
[ "$(q "SELECT report_message_id FROM bugs WHERE source_id = 'bbbb2222'")" = report-2@google.com ] ||
	fail "report Message-ID not kept: $(q 'SELECT id, report_message_id FROM bugs')"
[ "$(q "SELECT count(*) FROM inbox WHERE hook = 'lists'")" = 4 ] || fail "inbox: $(q 'SELECT key FROM inbox')"
# max-messages = 2: five messages need three polls, one job at a time
# (the last report is stored before its poll job is marked done)
wait_for 30 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM jobs WHERE kind = 'archive-poll' AND state = 'done'\")\" -ge 3 ]" ||
	fail "polls: $(ctl jobs)"
[ "$(q "SELECT count(*) FROM jobs WHERE kind = 'archive-poll' AND state IN ('queued', 'running')")" -le 1 ] ||
	fail "two polls of one archive at once"
ok "reports from the archive, a bounded batch per poll"

# the same report again (new Message-ID, same bug): a known bug
report aaaa1111 5
wait_for 60 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT detail FROM inbox WHERE key = 'mail:report-5@google.com'\")\" = 'known bug' ]" ||
	fail "second report"
[ "$(q "SELECT report_message_id FROM bugs WHERE source_id = 'aaaa1111'")" = report-1@google.com ] ||
	fail "the first report's thread was replaced"

# kill -9 in the middle of a stream of messages: nothing lost, nothing twice
for i in 1 2 3 4 5 6; do
	printf 'From: Dev <dev%s@example.org>\nTo: lists@example.org\nSubject: [PATCH] net: fix %s\nMessage-ID: <other-%s@example.org>\nDate: Tue, 17 Nov 2026 10:00:00 +0000\n\nReported-by: syzbot+eeee5555@syzkaller.appspotmail.com\n---\ndiff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n' \
		"$i" "$i" "$i" > "$T/other-$i"
done
report eeee5555 6
for i in 1 2 3 4 5 6; do deliver "$T/other-$i"; done
wait_for 60 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT count(*) FROM inbox WHERE key LIKE 'mail:other-%'\")\" -ge 1 ]" ||
	fail "no other patch taken"
kill -9 "$KFIXD_PID"; wait "$KFIXD_PID" 2>/dev/null || true
start_kfixd
wait_for 60 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT count(*) FROM events WHERE kind = 'archive.other-patch'\")\" = 6 ]" ||
	fail "other patches after kill -9: $(q "SELECT count(*) FROM events WHERE kind = 'archive.other-patch'")"
sleep 2
[ "$(q "SELECT count(*) FROM events WHERE kind = 'archive.other-patch'")" = 6 ] || fail "a message taken twice"
ok "kill -9 during a poll: every message once"

# ---- patches for bugs 1-4, sent for moderation ----
now=$(date +%s)
python3 - "$DB" "$T/fix.diff" "$BASE" "$now" <<'PY'
import json, sqlite3, sys
db, diff, base, now = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[4])
c = sqlite3.connect(db)
for bug, extid in c.execute("SELECT id, source_id FROM bugs WHERE id <= 4").fetchall():
    msg = ("mm/slub: ignore NULL in slab_free()\n\n"
           "slab_free() passes a NULL object on to do_slab_free().\n\n"
           "Reported-by: syzbot+%s@syzkaller.appspotmail.com\n"
           "Assisted-by: kfix:test-model\n" % extid)
    c.execute("UPDATE bugs SET state = 'validated' WHERE id = ?", (bug,))
    c.execute("INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation,"
              " evidence, base_commit, created, updated) VALUES (?, 1, 'validated', ?, ?, ?, ?, ?, ?, ?, ?)",
              (bug, "mm/slub: ignore NULL in slab_free()", msg, diff, "Root cause: NULL object.",
               json.dumps({"table": []}), base, now, now))
c.commit()
PY
for p in 1 2 3 4; do ctl publish $p >/dev/null || fail "publish $p"; done
wait_for 60 spooled '*' 4 || fail "moderation mails: $(ls "$T/spool") $(why)"

# ---- 1: approved in the archive, sent upstream under the report ----
command_mail "Mod Erator <mod@example.org>" 1 up-1@example.org upstream
wait_for 120 sh -c "'$KFIXCTL' -c '$T/kfix.conf' patch 1 | grep -q 'State: *sent'" ||
	fail "patch 1 not sent: $(ctl patch 1 | head -3) $(why)"
wait_for 60 spooled 'kfix-1-v1.*' || fail "no upstream mail: $(ls "$T/spool")"
up=$(ls "$T"/spool/*kfix-1-v1.[0-9a-f]*@*.eml)
python3 - "$up" <<'PY' || fail "upstream mail headers: $(grep -E '^(To|Cc|In-Reply-To|References):' -A3 "$up")"
import email, sys
m = email.message_from_file(open(sys.argv[1]))
assert m["In-Reply-To"].strip() == "<report-1@google.com>", m["In-Reply-To"]
assert "<report-1@google.com>" in m["References"], m["References"]
cc = " ".join(str(m.get_all("Cc", [])).split())
for a in ("syzbot+aaaa1111@syzkaller.appspotmail.com", "syzkaller-bugs@googlegroups.com",
          "netdev@vger.kernel.org"):
    assert a in cc, (a, cc)
PY
ok "upstream mail threaded under the syzbot report, syzbot and its lists in Cc"

# ---- 2: the feed says syzbot closed the bug ----
q "INSERT INTO events (ts, bug_id, kind, detail) VALUES (strftime('%s'), 2, 'feed.closed', '{\"feed\": \"syzbot\", \"why\": \"fix commits\"}')"
ctl approve --by "Mod Erator <mod@example.org>" 2 >/dev/null || fail "approve 2"
# ---- 3: a fix with its Reported-by landed in the tree ----
git -C "$U" -c user.name=U -c user.email=u@example.org commit -q --allow-empty \
	-m "mm: fix it" -m "Reported-by: syzbot+cccc3333@syzkaller.appspotmail.com"
ctl approve --by "Mod Erator <mod@example.org>" 3 >/dev/null || fail "approve 3"
# ---- 4: someone else posted a patch for the bug ----
sed -e 's/eeee5555/dddd4444/' -e 's/other-1@/other-d@/' -e 's/fix 1/fix it too/' "$T/other-1" > "$T/other-d"
deliver "$T/other-d"
wait_for 60 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT count(*) FROM events WHERE kind = 'archive.other-patch' AND bug_id = 4\")\" = 1 ]" ||
	fail "other patch for bug 4 not recorded"
ctl approve --by "Mod Erator <mod@example.org>" 4 >/dev/null || fail "approve 4"
for p in 2 3 4; do
	wait_for 120 sh -c "'$KFIXCTL' -c '$T/kfix.conf' patch $p | grep -q 'State: *held'" ||
		fail "patch $p not held: $(ctl patch $p | head -3) $(why)"
done
for p in 2:'no longer lists the bug as open' 3:'a fix for the bug is already in master' \
	4:"another patch for the bug was posted ([PATCH] net: fix it too, dev1@example.org)"; do
	reason=$(q "SELECT detail FROM events WHERE kind = 'publish.held' AND bug_id = ${p%%:*}")
	echo "$reason" | grep -qF "${p#*:}" || fail "hold reason of ${p%%:*}: $reason"
	wait_for 60 sh -c "grep -q '^Message-ID: <kfix-${p%%:*}-v1-held\.' '$T'/spool/*.eml" || fail "no note for ${p%%:*}"
	note=$(grep -l "^Message-ID: <kfix-${p%%:*}-v1-held\." "$T"/spool/*.eml)
	grep -q "^In-Reply-To: <kfix-${p%%:*}-v1-rfc.$(q "SELECT value FROM kv WHERE key = 'store.id'")@kfix.example.org>" "$note" || fail "note not threaded"
	grep -q "^To: moderation@example.org" "$note" || fail "note recipient"
	grep -qF "${p#*:}" "$note" || fail "note text: $(cat "$note")"
done
ls "$T"/spool | grep -qE 'kfix-[234]-v1\.[0-9a-f]+@.*\.eml$' && fail "a held patch was sent"
ok "pre-send checks: closed upstream, fix landed, another patch: held, moderators told"

# approving a held patch again (here in the archive) sends it anyway
command_mail "Mod Erator <mod@example.org>" 4 up-4@example.org upstream
wait_for 120 sh -c "'$KFIXCTL' -c '$T/kfix.conf' patch 4 | grep -q 'State: *sent'" ||
	fail "patch 4 not sent after the second approval: $(ctl patch 4 | head -3) $(why)"
ok "a held patch approved again is sent"
stop_kfixd
# no job process ended badly (under ASan: no leak in a job either)
grep "exited with status" "$T/kfixd.log" && fail "a job process failed"
echo PASS
