#!/bin/bash
# [tree] ask-syzbot-test: after a moderator approves a patch of a syzbot
# bug, kfixd mails "#syz test" with the patch inline to syzbot in the
# report's thread (once per version, also across a kill -9 after the
# approval, after the request and after syzbot's answer) and the
# upstream mail waits.  syzbot's answers come back through the mail
# webhook and are matched by their thread: "no issue" sends the upstream
# mail with syzbot's Tested-by; a crash holds the patch (the moderators
# are told) and starts a new version with syzbot's report; past
# syzbot-tests-per-day, or without an answer within syzbot-test-timeout,
# a patch goes upstream untested.  A tree with a network URL (git daemon
# on loopback) is named in the request with the base commit.  Mail leaves
# through SMTP to a real server on loopback (aiosmtpd), whose envelopes
# and bytes are checked.  Later mails quote syzbot's answers.
. "$(dirname "$0")/lib.sh"
for t in git sqlite3 perl curl openssl python3; do
	command -v "$t" >/dev/null || skip "$t is not installed"
done
# a python3 with aiosmtpd (Debian's python3-aiosmtpd)
SMTP_PY=
for p in python3 /usr/bin/python3; do
	"$p" -c 'import aiosmtpd' 2>/dev/null && { SMTP_PY=$p; break; }
done
[ -n "$SMTP_PY" ] || skip "python3-aiosmtpd is not installed"
FIX=$top_srcdir/tests/fixtures/mail
DB=$T/state/kfix.db
q() { sqlite3 -cmd ".timeout 5000" "$DB" "$1"; }
# body_has FILE TEXT: the mail's body holds TEXT (lines joined as read)
body_has() {
	python3 -c 'import email, sys
b = email.message_from_file(open(sys.argv[1])).get_payload(decode=True).decode()
sys.exit(0 if " ".join(sys.argv[2].split()) in " ".join(b.split()) else 1)' "$1" "$2"
}

# the upstream tree: MAINTAINERS, get_maintainer.pl and one source file
upstream_tree
# the same tree served over git:// (git daemon on loopback): a network URL
# that syzbot could fetch, so the request names it with the base commit
GIT_PORT=$(free_port)
git daemon --export-all --base-path="$T" --listen=127.0.0.1 --port="$GIT_PORT" --reuseaddr \
	> "$T/git-daemon.log" 2>&1 &
PIDS="$PIDS $!"
wait_for 10 git ls-remote "git://127.0.0.1:$GIT_PORT/upstream" || fail "git daemon: $(cat "$T/git-daemon.log")"

# the SMTP server; what it received is filed under $T/spool by Message-ID
# (<MID>.wire as received, <MID>.eml with LF lines, envelopes <MID>.env)
mkdir -p "$T/smtp" "$T/spool"
"$SMTP_PY" "$top_srcdir/tests/integration/smtp-server.py" "$T/smtp" > "$T/smtp.log" 2>&1 &
PIDS="$PIDS $!"
wait_for 10 test -s "$T/smtp/port" || fail "SMTP server did not start: $(cat "$T/smtp.log")"
smtp_sync() {
	local f mid
	for f in "$T"/smtp/msg-*.eml; do
		[ -e "$f" ] || continue
		mid=$(sed -n 's/^Message-ID: <\(.*\)>\r\{0,1\}$/\1/p' "$f" | head -1)
		[ -n "$mid" ] && [ ! -e "$T/spool/$mid.eml" ] || continue
		# SMTP's CRLF lines as the local files the checks read
		sed 's/\r$//' "$f" > "$T/spool/$mid.eml.tmp" && cp "${f%.eml}.env" "$T/spool/$mid.env" &&
			cp "$f" "$T/spool/$mid.wire" &&
			mv "$T/spool/$mid.eml.tmp" "$T/spool/$mid.eml"
	done
}
spooled() { smtp_sync; find "$T/spool" -maxdepth 1 -name "*$1.eml" | grep -q . &&
	{ [ $# -lt 2 ] || [ "$(find "$T/spool" -maxdepth 1 -name "*$1.eml" | wc -l)" = "$2" ]; }; }
mails() { smtp_sync; ls "$T"/spool/$1 2>/dev/null || true; }

write_config
port=$(free_port)
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
[mail]
	from = kfix bot <kfix@kfix.example.org>
	transport = smtp
	smtp-url = smtp://127.0.0.1:$(cat "$T/smtp/port")
[tree "linux"]
	url = file://$U
	moderation-address = moderation@example.org
	ask-syzbot-test = yes
	syzbot-tests-per-day = 2
[tree "net"]
	url = git://127.0.0.1:$GIT_PORT/upstream
	moderation-address = moderation@example.org
	ask-syzbot-test = yes
[http]
	listen = 127.0.0.1:$port
[hook "mta"]
	type = mail
	secret = mail-secret
CONF
"$KFIXD" -c "$T/kfix.conf" --check-config >/dev/null || fail "config"

# three syzbot bugs, each with a validated patch (v1)
EXT1=00000000000000000aa1 EXT2=00000000000000000bb2 EXT3=00000000000000000cc3
n=0
for ext in $EXT1 $EXT2 $EXT3; do
	n=$((n + 1))
	ctl submit --source syzbot --title "KASAN: null-ptr-deref in slab_free $n" --id "$ext" \
		--tree linux --commit "$BASE" >/dev/null || fail "submit"
done
python3 - "$DB" "$T/fix.diff" "$BASE" "$(date +%s)" <<'PY'
import json, sqlite3, sys
db, diff, base, now = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[4])
c = sqlite3.connect(db)
for bug, ext in c.execute("SELECT id, source_id FROM bugs ORDER BY id").fetchall():
    msg = ("mm/slub: ignore NULL in slab_free()\n\nslab_free() passes a NULL object on.\n\n"
           "Reported-by: syzbot+%s@syzkaller.appspotmail.com\n" % ext)
    c.execute("UPDATE bugs SET state = 'validated', report_message_id = ? WHERE id = ?",
              ("report-%s@google.com" % ext, bug))
    c.execute("INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation,"
              " evidence, base_commit, created, updated) VALUES (?, 1, 'validated', ?, ?, ?, ?, ?, ?, ?, ?)",
              (bug, "mm/slub: ignore NULL in slab_free()", msg, diff, "Root cause: NULL.",
               json.dumps({"table": [{"kernel": "base", "result": "crashed 3 of 3"}]}), base, now, now))
c.commit()
PY
# a request made two days ago does not count against today's limit
q "INSERT INTO events (ts, bug_id, kind, detail) VALUES ((strftime('%s') - 2 * 86400) * 1000000, 3,
   'patch.syzbot-test-asked', '{\"patch\": 99, \"version\": 1, \"tree\": \"linux\"}')"
for b in 1 2 3; do ctl publish "$b" >/dev/null || fail "publish $b"; done
start_kfixd
wait_for 60 spooled "rfc.*" 3 || fail "moderation mails: $(mails '*') $(tail -5 "$T/kfixd.log")"
SID=$(q "SELECT value FROM kv WHERE key = 'store.id'")
[ -z "$(mails "*syztest*")" ] || fail "syzbot asked before the approval"

# syzbot's answer (RESULT ok or crash) to the request of patch version 1 of bug B
answer() { # B EXTID RESULT
	local f=$T/answer-$1-$3
	sed -e "s/^In-Reply-To: .*/In-Reply-To: <kfix-$1-v1-syztest.$SID@kfix.example.org>/" \
		-e "s/^Message-ID: .*/Message-ID: <answer-$1-$3@google.com>/" \
		-e "s/4f3a9c0de81b27a6e5d4/$2/g" "$FIX/syzbot-test-ok.eml" > "$f"
	if [ "$3" = crash ]; then
		python3 - "$f" <<'PY'
import sys
p = sys.argv[1]
head, body = open(p).read().split("\n\n", 1)
body = ("Hello,\n\nsyzbot has tested the proposed patch but the reproducer is still "
        "triggering an issue:\nKASAN: use-after-free Read in slab_free\n\n"
        "==================================================================\n"
        "BUG: KASAN: use-after-free in slab_free+0x42/0x90 mm/slub.c:3\n"
        "Read of size 8 at addr ffff888012345678 by task syz-executor/5012\n\n"
        "Tested on:\n\ncommit:         8a9b0c1d Linux 6.13-rc2\n")
open(p, "w").write(head + "\n\n" + body)
PY
	fi
	[ "$(post_mail "$f" "d-$1-$3")" = 200 ] || fail "webhook refused syzbot's answer"
}

# ---- approval: the request, once, and the upstream mail waits ----
ctl approve --by "Mod Erator <mod@example.org>" 1 >/dev/null || fail "approve 1"
wait_for 60 spooled "kfix-1-v1-syztest.$SID@*" || fail "no #syz test mail: $(ctl jobs) $(tail -5 "$T/kfixd.log")"
# a kill -9 and a second publish of the same stage ask nothing twice
kill -9 "$KFIXD_PID"; wait "$KFIXD_PID" 2>/dev/null || true
start_kfixd
q "INSERT INTO jobs (bug_id, kind, args, state, max_attempts, created)
   SELECT 1, 'publish', '{\"patch\": 1, \"stage\": \"upstream\", \"by\": \"Mod Erator <mod@example.org>\"}',
   'queued', 3, strftime('%s')" || fail "second publish job"
wait_for 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM jobs WHERE bug_id = 1 AND kind = 'publish' AND state = 'done'\")\" -ge 3 ]" ||
	fail "publish jobs: $(ctl jobs)"
req=$(mails "*kfix-1-v1-syztest.$SID@*.eml")
[ "$(echo "$req" | wc -l)" = 1 ] || fail "the request was mailed more than once: $req"
[ "$(q "SELECT count(*) FROM outbox WHERE idem_key LIKE '%syztest%' AND bug_id = 1")" = 1 ] || fail "outbox"
python3 - "$req" "$EXT1" "$T/fix.diff" "$SID" <<'PY' || fail "the request mail: $(cat "$req")"
import email, sys
raw = open(sys.argv[1], "rb").read().decode()
ext, diff, sid = sys.argv[2], open(sys.argv[3]).read(), sys.argv[4]
m = email.message_from_string(raw)
assert m["To"] == "syzbot+%s@syzkaller.appspotmail.com" % ext, m["To"]
assert m["Cc"] == "syzkaller-bugs@googlegroups.com", m["Cc"]
assert m["Subject"] == "Re: [syzbot] KASAN: null-ptr-deref in slab_free 1", m["Subject"]
assert m["In-Reply-To"] == "<report-%s@google.com>" % ext, m["In-Reply-To"]
assert m["References"] == "<report-%s@google.com>" % ext, m["References"]
assert m["Message-ID"] == "<kfix-1-v1-syztest.%s@kfix.example.org>" % sid, m["Message-ID"]
# syzbot's parser: the command starts the body's first line; the tree is a
# local one, so a bare "#syz test" (the bug's own tree); the patch as is
body = raw.split("\n\n", 1)[1]
assert body == "#syz test\n\n" + diff, repr(body[:200])
PY
# through SMTP: the envelope is syzbot's and the list's, and the bytes
# received are those kfix queued (SMTP's CRLF line ends aside)
python3 - "${req%.eml}" "$EXT1" "$DB" <<'PY' || fail "the request over SMTP: $(cat "${req%.eml}.env")"
import sqlite3, sys
base, ext, db = sys.argv[1:4]
env = open(base + ".env").read().split("\n")
assert env[0] == "from kfix@kfix.example.org", env
assert sorted(env[1:-1]) == sorted(["to syzbot+%s@syzkaller.appspotmail.com" % ext,
                                    "to syzkaller-bugs@googlegroups.com"]), env
wire = open(base + ".wire", "rb").read()
(queued,), = sqlite3.connect(db).execute(
    "SELECT payload FROM outbox WHERE idem_key LIKE '%syztest%' AND bug_id = 1").fetchall()
assert b"\r\n" in wire and b"\n" not in wire.replace(b"\r\n", b""), "not CRLF on the wire"
assert wire.replace(b"\r\n", b"\n") == queued.encode().replace(b"\r\n", b"\n"), "bytes differ"
PY
[ -z "$(mails "*kfix-1-v1.$SID@*.eml")" ] || fail "the upstream mail did not wait"
[ "$(q 'SELECT state FROM patches WHERE id = 1')" = approved ] || fail "patch 1: $(q 'SELECT state FROM patches WHERE id = 1')"
ctl patch 1 | grep -q "^syzbot test: *asked" || fail "kfixctl patch: $(ctl patch 1 | grep syzbot)"
ok "approved: one #syz test mail in the report's thread (also after kill -9), upstream waits"

# ---- syzbot: no issue -> upstream, with syzbot's Tested-by ----
answer 1 "$EXT1" ok
# killed just after the answer was taken: the upstream mail still goes, once
kill -9 "$KFIXD_PID"; wait "$KFIXD_PID" 2>/dev/null || true
start_kfixd
wait_for 60 spooled "kfix-1-v1.$SID@*" || fail "no upstream mail after syzbot's OK: $(ctl jobs | tail -3)"
sleep 2
spooled "kfix-1-v1.$SID@*" 1 || fail "the upstream mail went more than once: $(mails "*kfix-1-v1.$SID@*.eml")"
[ "$(q "SELECT count(*) FROM events WHERE kind = 'patch.syzbot-test' AND bug_id = 1")" = 1 ] ||
	fail "syzbot's answer was recorded twice"
up=$(mails "*kfix-1-v1.$SID@*.eml")
grep -q "^Tested-by: syzbot+$EXT1@syzkaller.appspotmail.com$" "$up" || fail "no Tested-by: $(grep -- '-by:' "$up")"
grep -q "^Signed-off-by: Mod Erator <mod@example.org>$" "$up" || fail "no sign-off"
ctl patch 1 | grep -q "^syzbot test: *ok" || fail "the answer is not shown: $(ctl patch 1 | grep syzbot)"
[ "$(ctl patch 1 --json | json_field '[t["result"] for t in j["syzbot_tests"]]')" = "['asked', 'ok']" ] ||
	fail "syzbot_tests: $(ctl patch 1 --json | json_field 'j["syzbot_tests"]')"
body_has "$up" "- syzbot tested v1 on its own VMs: OK, the reproducer did not trigger any issue" ||
	fail "the upstream mail does not quote syzbot's answer: $(sed -n '/^Tested:/,/^Not tested:/p' "$up")"
ok "syzbot's OK: the upstream mail went with syzbot's Tested-by"

# ---- syzbot: a crash -> held, the moderators told, a new version asked ----
ctl approve --by "Mod Erator <mod@example.org>" 2 >/dev/null || fail "approve 2"
# killed just after the approval: the request still goes, once
kill -9 "$KFIXD_PID"; wait "$KFIXD_PID" 2>/dev/null || true
start_kfixd
wait_for 60 spooled "kfix-2-v1-syztest.$SID@*" || fail "no #syz test mail for bug 2"
sleep 2
spooled "kfix-2-v1-syztest.$SID@*" 1 || fail "the request for bug 2 went more than once"
answer 2 "$EXT2" crash
wait_for 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$DB' 'SELECT state FROM patches WHERE id = 2')\" = held ]" ||
	fail "patch 2 not held: $(q 'SELECT state, reason FROM patches WHERE id = 2') $(ctl jobs | tail -3)"
q 'SELECT reason FROM patches WHERE id = 2' | grep -q "still crashed: KASAN: use-after-free Read in slab_free" ||
	fail "hold reason: $(q 'SELECT reason FROM patches WHERE id = 2')"
wait_for 30 spooled "kfix-2-v1-held.$SID@*" || fail "the moderators were not told"
[ -z "$(mails "*kfix-2-v1.$SID@*.eml")" ] || fail "a crashing patch went upstream"
[ "$(q "SELECT author FROM reviews WHERE bug_id = 2")" = syzbot ] || fail "no review from syzbot"
q "SELECT comments FROM reviews WHERE bug_id = 2" | grep -q "BUG: KASAN: use-after-free in slab_free" ||
	fail "syzbot's report is not given to the new version"
wait_for 30 sh -c "[ -n \"\$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT id FROM jobs WHERE bug_id = 2 AND kind = 'iterate'\")\" ]" ||
	fail "no new version started: $(ctl jobs | tail -3)"
ok "syzbot's crash: patch held, moderators told, a new version started with syzbot's report"

# ---- the day's limit: the third goes upstream untested ----
ctl approve --by "Mod Erator <mod@example.org>" 3 >/dev/null || fail "approve 3"
wait_for 60 spooled "kfix-3-v1.$SID@*" || fail "no upstream mail for bug 3: $(ctl jobs | tail -3)"
[ -z "$(mails "*kfix-3-v1-syztest*")" ] || fail "asked past syzbot-tests-per-day"
grep -q "^Tested-by: syzbot" $(mails "*kfix-3-v1.$SID@*.eml") && fail "Tested-by without a test"
ctl patch 3 | grep -q "^syzbot test: *not-asked" || fail "kfixctl patch 3: $(ctl patch 3 | grep syzbot)"
body_has "$(mails "*kfix-3-v1.$SID@*.eml")" \
	"- syzbot did not test v1: the tree's requests for the day were used up" ||
	fail "the mail does not say syzbot did not test it"
ok "past syzbot-tests-per-day: upstream untested, and said so"

# ---- no answer within syzbot-test-timeout: upstream, untested ----
EXT4=00000000000000000dd4
ctl submit --source syzbot --title "KASAN: null-ptr-deref in slab_free 4" --id "$EXT4" \
	--tree linux --commit "$BASE" >/dev/null || fail "submit 4"
q "INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation, evidence,
   base_commit, created, updated) SELECT 4, 1, 'validated', subject, replace(message, '$EXT1', '$EXT4'),
   diff, explanation, evidence, base_commit, created, updated FROM patches WHERE id = 1"
q "UPDATE bugs SET state = 'validated', report_message_id = 'report-$EXT4@google.com' WHERE id = 4"
sed -i 's/^\tsyzbot-tests-per-day = 2$/\tsyzbot-tests-per-day = 10\n\tsyzbot-test-timeout = 3s/' "$T/kfix.conf"
kill -HUP "$KFIXD_PID"
wait_for 10 grep -q "configuration reloaded" "$T/kfixd.log" || fail "reload"
ctl publish 4 >/dev/null || fail "publish 4"
wait_for 60 spooled "kfix-4-v1-rfc.$SID@*" || fail "no moderation mail for bug 4"
ctl approve --by "Mod Erator <mod@example.org>" 4 >/dev/null || fail "approve 4"
wait_for 60 spooled "kfix-4-v1-syztest.$SID@*" || fail "no #syz test mail for bug 4"
[ -z "$(mails "*kfix-4-v1.$SID@*.eml")" ] || fail "bug 4 did not wait for syzbot"
wait_for 60 spooled "kfix-4-v1.$SID@*" || fail "no upstream mail after the time-out: $(ctl patch 4 | grep syzbot)"
grep -q "^Tested-by: syzbot" $(mails "*kfix-4-v1.$SID@*.eml") && fail "Tested-by without an answer"
ctl patch 4 | grep -q "^syzbot test: *no-answer" || fail "kfixctl patch 4: $(ctl patch 4 | grep syzbot)"
[ "$(q "SELECT count(*) FROM events WHERE kind = 'patch.syzbot-test-timeout'")" = 1 ] || fail "time-out events"
body_has "$(mails "*kfix-4-v1.$SID@*.eml")" \
	"- syzbot was asked to test v1 and did not answer in time" ||
	fail "the mail does not say syzbot did not answer"
ok "no answer within syzbot-test-timeout: upstream untested, and said so"

# ---- a tree with a network URL: "#syz test: URL BASE" ----
EXT5=00000000000000000ee5
ctl submit --source syzbot --title "KASAN: null-ptr-deref in slab_free 5" --id "$EXT5" \
	--tree net --commit "$BASE" >/dev/null || fail "submit 5"
q "INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation, evidence,
   base_commit, created, updated) SELECT 5, 1, 'validated', subject, replace(message, '$EXT1', '$EXT5'),
   diff, explanation, evidence, base_commit, created, updated FROM patches WHERE id = 1"
q "UPDATE bugs SET state = 'validated', report_message_id = 'report-$EXT5@google.com' WHERE id = 5"
ctl publish 5 >/dev/null || fail "publish 5"
wait_for 60 spooled "kfix-5-v1-rfc.$SID@*" || fail "no moderation mail for bug 5: $(ctl jobs | tail -3)"
ctl approve --by "Mod Erator <mod@example.org>" 5 >/dev/null || fail "approve 5"
wait_for 60 spooled "kfix-5-v1-syztest.$SID@*" || fail "no #syz test mail for bug 5"
python3 - "$(mails "*kfix-5-v1-syztest.$SID@*.eml")" "git://127.0.0.1:$GIT_PORT/upstream" "$BASE" <<'PY' ||
import email, sys
m = email.message_from_file(open(sys.argv[1]))
body = m.get_payload(decode=True).decode()
first = body.split("\n", 1)[0]
assert first == "#syz test: %s %s" % (sys.argv[2], sys.argv[3]), first
assert "\ndiff --git " in body
PY
	fail "the request for a network tree: $(sed -n '/^$/,/^diff/p' "$(mails "*kfix-5-v1-syztest.$SID@*.eml")")"
ok "a network tree: #syz test names its URL and the base commit"
stop_kfixd
