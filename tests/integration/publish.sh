#!/bin/bash
# Publishing a validated patch through a running kfixd: the commit on the
# base as kfix/<bug>/v1 with its note pushed to a real git remote, the RFC
# mail to the moderation address (git am applies it), and after approval
# the upstream mail to get_maintainer.pl's recipients, signed off by the
# approver.  Re-publishing pushes and sends nothing new.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || skip "git needed"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"
command -v perl >/dev/null || skip "perl needed"
command -v curl >/dev/null || skip "curl needed"
command -v openssl >/dev/null || skip "openssl needed"

# the upstream tree: the kernel's MAINTAINERS and get_maintainer.pl (taken
# from Debian's tarball at test time) plus one source file
upstream_tree
git init -q --bare "$T/push.git"

write_config
port=$(free_port)
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
[mail]
	from = kfix bot <kfix@kfix.example.org>
[tree "linux"]
	url = file://$U
	moderation-address = moderation@example.org
	push-remote = file://$T/push.git
	allow-commands = mod@example.org
	# unsigned command mails here: DKIM is tested in mail-auth.sh
	command-auth = none
[http]
	listen = 127.0.0.1:$port
[hook "mta"]
	type = mail
	secret = mail-secret
CONF
ctl submit --title "KASAN: null-ptr-deref in slab_free" --id pub1 --tree linux --commit "$BASE" >/dev/null
now=$(date +%s)
python3 - "$T/state/kfix.db" "$T/fix.diff" "$BASE" "$now" <<'PY'
import json, sqlite3, sys
db, diff, base, now = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[4])
msg = ("mm/slub: ignore NULL in slab_free()\n\n"
       "slab_free() passes a NULL object on to do_slab_free(), which\n"
       "dereferences it.\n\n"
       "Reported-by: syzbot+pub1@syzkaller.appspotmail.com\n"
       "Assisted-by: kfix:test-model\n")
ev = {"table": [{"kernel": "base " + base[:12], "result": "crashed 3 of 3"},
                {"kernel": "patched", "result": "survived 3 of 3"}],
      "evidence": "probe: x == NULL at mm/slub.c:3", "not_tested": "other configs"}
c = sqlite3.connect(db)
c.execute("UPDATE bugs SET state = 'validated', report_message_id = 'report-pub1@google.com' WHERE id = 1")
c.execute("INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation,"
          " evidence, base_commit, created, updated) VALUES (1, 1, 'validated', ?, ?, ?, ?, ?, ?, ?, ?)",
          ("mm/slub: ignore NULL in slab_free()", msg, diff, "Root cause: NULL object.",
           json.dumps(ev), base, now, now))
c.commit()
PY
ctl publish 1 | grep -q "publishing queued" || fail "publish"
start_kfixd
wait_for 60 sh -c "[ \"\$(sqlite3 '$T/state/kfix.db' \"SELECT count(*) FROM outbox WHERE state = 'sent'\")\" = 2 ]" ||
	fail "push and mail not delivered: $(ctl outbox) $(tail -5 "$T/kfixd.log")"

# the branch and its note on the remote
oid=$(git -C "$T/push.git" rev-parse refs/heads/kfix/1/v1) || fail "no branch on the remote"
[ "$(git -C "$T/push.git" rev-parse "$oid^")" = "$BASE" ] || fail "branch not on the base"
git -C "$T/push.git" log -1 --format=%s "$oid" | grep -qx "mm/slub: ignore NULL in slab_free()" || fail "subject"
git -C "$T/push.git" log -1 --format=%an "$oid" | grep -qx "kfix bot" || fail "author"
git -C "$T/push.git" notes --ref=kfix show "$oid" | grep -q "Root cause: NULL object." || fail "note"
# forges show no notes: the commit itself tells the story, trailers last
git -C "$T/push.git" log -1 --format=%B "$oid" > "$T/commit.txt"
grep -A1 "^Root cause:$" "$T/commit.txt" | grep -q "^Root cause: NULL object.$" || fail "commit body: $(cat "$T/commit.txt")"
grep -q "^  base [0-9a-f]\{12\} *crashed 3 of 3$" "$T/commit.txt" || fail "no reproduction table in the commit"
git interpret-trailers --parse < "$T/commit.txt" > "$T/trailers"
grep -q "^Reported-by: syzbot+pub1@syzkaller.appspotmail.com$" "$T/trailers" || fail "trailers: $(cat "$T/trailers")"
ok "branch and note pushed"

# the moderation mail
mail=$(ls "$T"/spool/*.eml)
[ "$(echo "$mail" | wc -l)" = 1 ] || fail "spool: $mail"
grep -q "^Subject: \[PATCH RFC\] mm/slub: ignore NULL in slab_free()" "$mail" || fail "subject: $(grep ^Subject "$mail")"
grep -q "^To: moderation@example.org" "$mail" || fail "to"
# Message-IDs carry the store's random name: stable, and never another store's
SID=$(sqlite3 "$T/state/kfix.db" "SELECT value FROM kv WHERE key = 'store.id'")
case "$SID" in [0-9a-f][0-9a-f][0-9a-f][0-9a-f]*) ;; *) fail "store.id: '$SID'" ;; esac
grep -q "^Message-ID: <kfix-1-v1-rfc.$SID@kfix.example.org>" "$mail" || fail "message-id: $(grep ^Message-ID "$mail")"
grep -q "crashed 3 of 3" "$mail" || fail "no reproduction table"
grep -q "^Link: https://lore.kernel.org/r/report-pub1@google.com$" "$mail" || fail "no Link to the report"
sed -n '/^---$/,$p' "$mail" | grep -A3 "^How to answer:$" | grep -q "^    #kfix upstream " ||
	fail "the moderators are not told how to answer: $(sed -n '/^---$/,/^diff/p' "$mail")"
grep -q "^Branch: kfix/1/v1 on file://$T/push.git$" "$mail" || fail "the moderation mail does not name the branch"
grep -q "^Signed-off-by" "$mail" && fail "the bot signed off"
git clone -q "$U" "$T/am" && git -C "$T/am" checkout -q "$BASE"
git -C "$T/am" -c user.name=R -c user.email=r@example.org am -q "$mail" || fail "git am"
cmp -s "$T/am/mm/slub.c" <(git -C "$T/push.git" show "$oid:mm/slub.c") || fail "git am result differs"
ctl patch 1 | grep -q "State: *awaiting-approval" || fail "patch state: $(ctl patch 1 | head -3)"
# the evidence as a reader wants it, not as JSON
ctl patch 1 > "$T/patch.txt"
grep -q "^  base [0-9a-f]\{12\} *crashed 3 of 3$" "$T/patch.txt" || fail "reproduction table: $(cat "$T/patch.txt")"
grep -A1 "^Execution evidence:$" "$T/patch.txt" | grep -q "^probe: x == NULL at mm/slub.c:3$" || fail "evidence text"
grep -q '"table"' "$T/patch.txt" && fail "kfixctl patch printed the evidence as JSON"
ctl bug 1 | grep -q "State: *awaiting-approval" || fail "bug state"
ok "moderation mail"

# approval: the moderator answers the RFC mail with "#kfix upstream"
# (delivered by the MTA to the mail webhook); a stranger's is ignored
reply() { # FROM MESSAGE-ID
	printf 'From: %s\r\nTo: moderation@example.org\r\nSubject: Re: [PATCH RFC] mm/slub: ignore NULL in slab_free()\r\nMessage-ID: <%s>\r\nIn-Reply-To: <kfix-1-v1-rfc.'"$SID"'@kfix.example.org>\r\n\r\n> quoted\r\n\r\nLooks right.\r\n#kfix upstream\r\n' "$1" "$2"
}
reply "Eve <eve@example.net>" r0@example.net > "$T/r0"
[ "$(post_mail "$T/r0" d0)" = 200 ] || fail "webhook refused the mail"
reply "Mod Erator <mod@example.org>" r1@example.org > "$T/r1"
[ "$(post_mail "$T/r1" d1)" = 200 ] || fail "webhook refused the mail"
wait_for 60 spooled '*' 3 || fail "no upstream mail: $(ctl jobs) $(tail -5 "$T/kfixd.log")"
up=$(ls "$T"/spool/*.eml | grep -v "rfc\|refusal")
grep -q "^Subject: \[PATCH\] mm/slub: ignore NULL in slab_free()" "$up" || fail "upstream subject"
grep -q "^Signed-off-by: Mod Erator <mod@example.org>" "$up" || fail "no sign-off"
grep -q "^From: Mod Erator <mod@example.org>" "$up" || fail "no in-body From"
rcpts=$(python3 -c 'import email,sys; m=email.message_from_file(open(sys.argv[1])); print(" ".join(str(m.get(h, "")) for h in ("To", "Cc")))' "$up")
for a in linux-mm@kvack.org cl@linux.com; do
	echo "$rcpts" | grep -q "$a" || fail "get_maintainer recipient $a missing: $rcpts"
done
awk '/^Signed-off-by/ {s=NR} /^Reported-by/ {r=NR} END {exit !(r < s)}' "$up" || fail "trailer order"
wait_for 20 sh -c "'$KFIXCTL' -c '$T/kfix.conf' patch 1 | grep -q 'State: *sent'" || fail "patch not sent"
ctl bug 1 | grep -q "State: *sent" || fail "bug not sent"
[ "$(ctl patch 1 --json | json_field 'j["decided_by"]')" = "Mod Erator <mod@example.org>" ] ||
	fail "approved by the wrong person"
[ "$(sqlite3 "$T/state/kfix.db" "SELECT detail FROM inbox WHERE key LIKE '%r0@example.net%'")" = \
	"the sender may not send commands" ] || fail "a stranger's command was not refused"
refusal=$(grep -l "^To: .*eve@example.net" "$T"/spool/*.eml) || fail "no polite refusal to the stranger"
grep -q "^In-Reply-To: <r0@example.net>" "$refusal" || fail "refusal not threaded"
grep -q "not carried out" "$refusal" || fail "refusal text"
ok "a stranger's command: refused politely, once"
ok "upstream mail after approval"

# syzbot's answer to the "#syz test" in the upstream thread is recorded
# against the patch as independent evidence
upid=$(ctl patch 1 --json | json_field 'j["message_id"]')
sed -e "s/^In-Reply-To: .*/In-Reply-To: <$upid>/" \
    -e "s/4f3a9c0de81b27a6e5d4/pub1/g" "$top_srcdir/tests/fixtures/mail/syzbot-test-ok.eml" > "$T/t1"
[ "$(post_mail "$T/t1" t1)" = 200 ] || fail "webhook refused the test result"
wait_for 20 sh -c "'$KFIXCTL' -c '$T/kfix.conf' patch 1 | grep -q '^syzbot test: *ok'" ||
	fail "syzbot test result not recorded: $(ctl patch 1 | head -14)"
[ "$(ctl patch 1 --json | json_field 'j["syzbot_tests"][0]["result"]')" = ok ] || fail "test result JSON"
# one that answers no kfix mail is ignored
sed -e "s/^In-Reply-To: .*/In-Reply-To: <unrelated@example.org>/" -e "s/^Message-ID: .*/Message-ID: <t2@google.com>/" "$T/t1" > "$T/t2"
[ "$(post_mail "$T/t2" t2)" = 200 ] || fail "webhook refused the second test result"
wait_for 20 sh -c "[ \"\$(sqlite3 '$T/state/kfix.db' \"SELECT state FROM inbox WHERE key LIKE '%t2@google.com%'\")\" = ignored ]" ||
	fail "an unrelated test result was not ignored"
[ "$(ctl patch 1 --json | json_field 'len(j["syzbot_tests"])')" = 1 ] || fail "unrelated test result recorded"
ok "syzbot test result recorded"

# publishing again: the same branch, no new push or mail
ctl publish 1 >/dev/null
wait_for 60 sh -c "'$KFIXCTL' -c '$T/kfix.conf' jobs | grep -q '^3 .*done'" || fail "republish job: $(ctl jobs)"
# and the stranger, writing again, is not answered a second time
sed 's/<r0@example.net>/<r2@example.net>/' "$T/r0" > "$T/r2"
[ "$(post_mail "$T/r2" d2)" = 200 ] || fail "webhook refused the mail"
sleep 2
[ "$(ls "$T"/spool/*.eml | wc -l)" = 3 ] || fail "republishing or a second refusal sent mail again"
[ "$(sqlite3 "$T/state/kfix.db" 'SELECT count(*) FROM outbox')" = 4 ] || fail "outbox grew"
stop_kfixd
ok "idempotent"
