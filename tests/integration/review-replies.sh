#!/bin/bash
# Review replies on kfix's patch threads: a reply whose In-Reply-To or
# References name one of kfix's patch mails is kept against the patch
# with the trailers its sender gave for themselves (a tag in someone
# else's name is dropped) and its comments with the quoted lines they
# answer.  A reply delivered by the mail webhook and by the archive counts
# once.  The trailers go onto the upstream mail.  Comments ask for a new
# version only from an allowed sender or someone the answered mail went
# to, and not when the reply approves (Reviewed-by, Acked-by, Tested-by).
# Long comments are cut; replies on other threads are ignored.
. "$(dirname "$0")/lib.sh"
for t in public-inbox-init public-inbox-mda git perl sqlite3 curl openssl python3; do
	command -v "$t" >/dev/null || skip "$t is not installed (Debian packages public-inbox, git, sqlite3, curl, openssl)"
done
FIX="$top_srcdir/tests/fixtures/mail"
DB=$T/state/kfix.db
q() { sqlite3 -cmd ".timeout 5000" "$DB" "$1"; }

upstream_tree
git init -q --bare "$T/push.git"

export HOME="$T/home" PI_CONFIG="$T/pi-config"
mkdir -p "$HOME"
public-inbox-init -V2 lists "$T/inbox" http://example.org/lists lists@example.org >"$T/init.log" 2>&1 ||
	fail "public-inbox-init: $(cat "$T/init.log")"
git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
deliver() { # FILE
	{ echo "X-Original-To: lists@example.org"; cat "$1"; } | ORIGINAL_RECIPIENT=lists@example.org \
		public-inbox-mda --no-precheck || fail "public-inbox-mda $1"
}
PORT=$(free_port)
post() { # FILE DELIVERY
	local ts sig
	ts=$(date +%s)
	sig=$({ printf '%s.' "$ts"; cat "$1"; } | openssl dgst -sha256 -hmac mail-secret -hex | sed 's/.* //')
	curl -s -o /dev/null -w '%{http_code}' --data-binary @"$1" -H "X-Kfix-Timestamp: $ts" \
		-H "X-Kfix-Signature: sha256=$sig" -H "X-Kfix-Delivery: $2" "http://127.0.0.1:$PORT/hooks/mail"
}
reply() { # FROM MSGID IN-REPLY-TO BODY
	printf 'From: %s\nTo: moderation@example.org\nSubject: Re: [PATCH RFC] mm/slub: ignore NULL in slab_free()\nMessage-ID: <%s>\nIn-Reply-To: <%s>\nReferences: <report-1@google.com> <%s>\nDate: Tue, 17 Nov 2026 10:00:00 +0000\n\n%b' \
		"$1" "$2" "$3" "$3" "$4" > "$T/reply-$2"
	echo "$T/reply-$2"
}

write_config
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
[mail]
	from = kfix bot <kfix@kfix.example.org>
[http]
	listen = 127.0.0.1:$PORT
[hook "mta"]
	type = mail
	secret = mail-secret
[tree "upstream"]
	url = file://$U
	moderation-address = moderation@example.org
	allow-commands = mod@example.org
	# unsigned command mails here: DKIM is tested in mail-auth.sh
	command-auth = none
	push-remote = file://$T/push.git
[archive "lists"]
	url = $T/inbox
	poll-interval = 1s
	# the messages below are delivered before kfixd first looks
	start = beginning
CONF

sed -e "s/^Message-ID: .*/Message-ID: <report-1@google.com>/" "$FIX/syzbot-report.eml" > "$T/report"
deliver "$T/report"
start_kfixd
wait_for 60 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM bugs')\" = 1 ]" || fail "report not taken"
now=$(date +%s)
python3 - "$DB" "$T/fix.diff" "$BASE" "$now" <<'PY'
import json, sqlite3, sys
db, diff, base, now = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[4])
c = sqlite3.connect(db)
bug, extid = c.execute("SELECT id, source_id FROM bugs").fetchone()
msg = ("mm/slub: ignore NULL in slab_free()\n\nslab_free() passes a NULL object on.\n\n"
       "Reported-by: syzbot+%s@syzkaller.appspotmail.com\nAssisted-by: kfix:test-model\n" % extid)
c.execute("UPDATE bugs SET state = 'validated' WHERE id = ?", (bug,))
c.execute("INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation,"
          " evidence, base_commit, created, updated) VALUES (?, 1, 'validated', ?, ?, ?, ?, ?, ?, ?, ?)",
          (bug, "mm/slub: ignore NULL in slab_free()", msg, diff, "Root cause: NULL object.",
           json.dumps({"table": []}), base, now, now))
c.commit()
PY
ctl publish 1 >/dev/null || fail "publish"
wait_for 60 spooled 'kfix-1-v1-rfc.*' || fail "no moderation mail: $(ctl jobs)"
SID=$(q "SELECT value FROM kv WHERE key = 'store.id'")
RFC=kfix-1-v1-rfc.$SID@kfix.example.org
[ "$(q "SELECT recipients FROM patch_mails WHERE message_id = '$RFC'")" = '["moderation@example.org"]' ] ||
	fail "moderation mail recipients: $(q 'SELECT * FROM patch_mails')"

# an approval with a tag, by the webhook and by the archive: once
r1=$(reply "Rev Iewer <rev@example.org>" r1@example.org "$RFC" \
	'Looks good to me.\n\nReviewed-by: Rev Iewer <rev@example.org>\n')
[ "$(post "$r1" d-1)" = 200 ] || fail "webhook"
deliver "$r1"
# a stranger's comments and a tag given in someone else's name
r2=$(reply "Stran Ger <stranger@example.net>" r2@example.org "$RFC" \
	'Why not fix the caller?\n\nAcked-by: Big Boss <boss@example.org>\n')
deliver "$r2"
# the moderator asks for changes, quoting the line they answer
r3=$(reply "Mod Erator <mod@example.org>" r3@example.org "$RFC" \
	'On Tue, kfix wrote:\n> +\tif (!x)\n> +\t\treturn;\n\nA NULL object is the caller'"'"'s bug: warn once here.\n\nThanks\n')
[ "$(post "$r3" d-3)" = 200 ] || fail "webhook r3"
# a reply to some other thread: ignored
printf 'From: A <a@example.org>\nTo: lists@example.org\nSubject: Re: other\nMessage-ID: <o1@example.org>\nIn-Reply-To: <other@example.org>\nDate: Tue, 17 Nov 2026 10:00:00 +0000\n\nI agree.\nReviewed-by: A <a@example.org>\n' > "$T/o1"
[ "$(post "$T/o1" d-o)" = 200 ] || fail "webhook o1"
# a very long reply: cut
{ for i in $(seq 1500); do echo "Comment line $i about the patch."; done; } > "$T/long.txt"
r4=$(reply "Mod Erator <mod@example.org>" r4@example.org "$RFC" "$(cat "$T/long.txt")\n")
deliver "$r4"
wait_for 30 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT count(*) FROM reviews')\" = 4 ]" ||
	fail "reviews: $(q 'SELECT id, message_id FROM reviews') $(tail -5 "$T/kfixd.log")"
sleep 3 # the archive's copy of r1 and r3's second delivery had their chance
[ "$(q 'SELECT count(*) FROM reviews')" = 4 ] || fail "a reply counted twice"
[ "$(q "SELECT count(*) FROM events WHERE kind = 'review.received'")" = 4 ] || fail "review events"
[ "$(q "SELECT state FROM inbox WHERE key = 'mail:o1@example.org'")" = ignored ] || fail "other thread taken"
[ "$(q "SELECT trailers FROM reviews WHERE message_id = 'r1@example.org'")" = \
	'[{"key":"Reviewed-by","value":"Rev Iewer <rev@example.org>"}]' ] || fail "r1 trailers"
[ "$(q "SELECT trailers FROM reviews WHERE message_id = 'r2@example.org'")" = '[]' ] || fail "forged tag kept"
q "SELECT message_id, may_iterate FROM reviews ORDER BY message_id" > "$T/mi"
printf 'r1@example.org|0\nr2@example.org|0\nr3@example.org|1\nr4@example.org|1\n' | diff - "$T/mi" ||
	fail "who may ask for a new version"
c3=$(q "SELECT comments FROM reviews WHERE message_id = 'r3@example.org'")
printf '> +\tif (!x)\n> +\t\treturn;\nA NULL object is the caller'"'"'s bug: warn once here.\n\nThanks\n' | diff - <(echo "$c3") ||
	fail "r3 comments: $c3"
len=$(q "SELECT length(comments) FROM reviews WHERE message_id = 'r4@example.org'")
[ "$len" -le 16384 ] && [ "$len" -gt 15000 ] || fail "long comments not cut: $len"
q "SELECT comments FROM reviews WHERE message_id = 'r4@example.org'" | grep -v '^$' | tail -1 | grep -q 'cut by kfix' ||
	fail "cut not said"
ctl patch 1 | grep -qF 'Review:        Mod Erator <mod@example.org> (r3@example.org), asks for a new version' ||
	fail "kfixctl patch: $(ctl patch 1 | grep -A1 Review)"
ctl patch 1 | grep -qF 'trailer:     Reviewed-by: Rev Iewer <rev@example.org>' || fail "kfixctl patch trailer"
ok "replies kept once each, own tags only, comments with their context, long ones cut"

# r3's comments start a new version; here the tree has no [build] or
# [vm], so the job fails and the bug keeps its published patch
wait_for 60 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT count(*) FROM jobs WHERE kind = 'iterate' AND state = 'failed'\")\" -ge 1 ]" ||
	fail "no iterate job: $(ctl jobs | tail -3)"
j=$(q "SELECT min(id) FROM jobs WHERE kind = 'iterate'")
q "SELECT args FROM jobs WHERE id = $j" | grep -q '"reason":"review"' || fail "iterate args"
[ "$(q "SELECT job_id FROM reviews WHERE message_id = 'r3@example.org'")" = "$j" ] || fail "r3 not given to the job"
[ -z "$(q "SELECT job_id FROM reviews WHERE message_id IN ('r1@example.org', 'r2@example.org')")" ] ||
	fail "approvals and strangers' comments given to a job"
wait_for 30 sh -c "ctl() { '$KFIXCTL' -c '$T/kfix.conf' \"\$@\"; }; [ \"\$(sqlite3 '$DB' 'SELECT state FROM bugs WHERE id = 1')\" = awaiting-approval ]" ||
	fail "bug not back to awaiting-approval: $(q "SELECT state FROM bugs") $(q "SELECT id, kind, state, attempts, error FROM jobs WHERE kind = 'iterate'") $(grep -i iterat "$T/kfixd.log" | tail -5)"
q "SELECT why FROM bugs" >/dev/null 2>&1 || true
wait_for 30 sh -c "[ -z \"\$(sqlite3 '$DB' \"SELECT id FROM jobs WHERE state IN ('queued', 'running') AND kind = 'iterate'\")\" ]" ||
	fail "iterate jobs left"
[ "$(q "SELECT state FROM patches WHERE id = 1")" = awaiting-approval ] || fail "v1 touched"
ok "comments from an allowed sender start an iterate job; a failed one leaves v1 as it was"

# the tags go onto the upstream mail
printf 'From: Mod Erator <mod@example.org>\nTo: moderation@example.org\nSubject: Re: [PATCH RFC] x\nMessage-ID: <up@example.org>\nIn-Reply-To: <%s>\nDate: Tue, 17 Nov 2026 10:00:00 +0000\n\n#kfix upstream\n' "$RFC" > "$T/up"
[ "$(post "$T/up" d-up)" = 200 ] || fail "webhook up"
wait_for 60 spooled "kfix-1-v1.$SID@*" || fail "no upstream mail: $(ctl jobs | tail -3)"
up=$(ls "$T"/spool/*kfix-1-v1."$SID"@*.eml)
grep -q '^Reviewed-by: Rev Iewer <rev@example.org>$' "$up" || fail "Reviewed-by not on the upstream mail"
grep -q 'boss@example.org' "$up" && fail "a forged tag reached the upstream mail"
[ "$(grep -c '^Reviewed-by:' "$up")" = 1 ] || fail "Reviewed-by twice"
ok "collected trailers on the upstream mail"

# a maintainer the upstream mail went to may ask for a new version
maint=$(q "SELECT recipients FROM patch_mails WHERE message_id = 'kfix-1-v1.$SID@kfix.example.org'" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)[0])')
[ -n "$maint" ] || fail "upstream recipients not recorded"
printf 'From: M <%s>\nTo: lists@example.org\nSubject: Re: [PATCH] x\nMessage-ID: <r5@example.org>\nIn-Reply-To: <kfix-1-v1.%s@kfix.example.org>\nDate: Tue, 17 Nov 2026 10:00:00 +0000\n\nPlease warn here.\n' "$maint" "$SID" > "$T/r5"
deliver "$T/r5"
wait_for 30 sh -c "[ \"\$(sqlite3 '$DB' \"SELECT may_iterate FROM reviews WHERE message_id = 'r5@example.org'\")\" = 1 ]" ||
	fail "maintainer's reply: $(q 'SELECT message_id, may_iterate FROM reviews')"
ok "a recipient of the upstream mail may ask for a new version"
# r4 may have started an iterate job of its own (when it came after r3's
# job ended), so the job to wait for is the one r5 was given
r5_job_done() {
	local j
	j=$(q "SELECT job_id FROM reviews WHERE message_id = 'r5@example.org'")
	[ -n "$j" ] && [ -n "$(q "SELECT id FROM jobs WHERE id = $j AND state IN ('failed', 'done')")" ]
}
wait_for 60 r5_job_done || fail "no iterate job for r5: $(ctl jobs | tail -3)"
wait_for 30 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT state FROM bugs WHERE id = 1')\" = sent ]" ||
	fail "bug not back to sent: $(q 'SELECT state FROM bugs')"

# #kfix repair from the moderator asks for a new version too
printf 'From: Mod Erator <mod@example.org>\nTo: moderation@example.org\nSubject: Re: [PATCH] x\nMessage-ID: <rep@example.org>\nIn-Reply-To: <kfix-1-v1.%s@kfix.example.org>\nDate: Tue, 17 Nov 2026 10:00:00 +0000\n\n#kfix repair\n' "$SID" > "$T/rep"
[ "$(post "$T/rep" d-rep)" = 200 ] || fail "webhook rep"
wait_for 60 sh -c "sqlite3 '$DB' \"SELECT args FROM jobs WHERE kind = 'iterate'\" | grep -q '\"reason\":\"request\"'" ||
	fail "#kfix repair: $(q "SELECT kind, detail FROM events WHERE kind LIKE 'request.%'")"
wait_for 60 sh -c "[ \"\$(sqlite3 '$DB' 'SELECT state FROM bugs WHERE id = 1')\" = sent ]" || fail "bug after the request"
ok "#kfix repair starts a new version"

# v2 (made here by hand, as an iterate job records it): branch kfix/1/v2
# beside v1, [PATCH RFC v2] answering v1's moderation mail, with the
# changes since v1 and the tags collected on v1
v1=$(git -C "$T/push.git" rev-parse refs/heads/kfix/1/v1) || fail "no v1 branch"
python3 - "$DB" "$T/fix.diff" "$BASE" <<'PY'
import json, sqlite3, sys, time
db, diff, base = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3]
diff = diff.replace("return;", "return; /* v2 */")
c = sqlite3.connect(db)
msg = c.execute("SELECT message FROM patches WHERE id = 1").fetchone()[0]
c.execute("UPDATE bugs SET state = 'validated' WHERE id = 1")
now = int(time.time())
c.execute("INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation,"
          " evidence, base_commit, created, updated) VALUES (1, 2, 'validated', ?, ?, ?, ?, ?, ?, ?, ?)",
          ("mm/slub: ignore NULL in slab_free()", msg, diff, "Root cause: NULL object.",
           json.dumps({"table": [], "changes": "- Warn once about the NULL object (Mod Erator).\n",
                       "previous": 1}), base, now, now))
c.commit()
PY
ctl publish 2 >/dev/null || fail "publish v2"
wait_for 60 spooled "kfix-1-v2-rfc.$SID@*" || fail "no v2 mail: $(ctl jobs | tail -3)"
v2m=$(ls "$T"/spool/*kfix-1-v2-rfc."$SID"@*.eml)
grep -q '^Subject: \[PATCH RFC v2\] mm/slub' "$v2m" || fail "v2 subject: $(grep ^Subject "$v2m")"
grep -q "^In-Reply-To: <kfix-1-v1-rfc.$SID@kfix.example.org>" "$v2m" || fail "v2 not threaded under v1"
python3 - "$v2m" <<'PY' || fail "v2 body: $(cat "$v2m")"
import sys
body = open(sys.argv[1]).read().split("\n\n", 1)[1]
head, rest = body.split("\n---\n", 1)
assert "Reviewed-by: Rev Iewer <rev@example.org>" in head, head
# b4's order: the review follows the sign-off it reviewed, links last
trailers = [l.split(":")[0] for l in head.splitlines() if l and l.split(":")[0] in
            ("Reported-by", "Signed-off-by", "Reviewed-by", "Link")]
assert trailers.index("Reviewed-by") > max([i for i, t in enumerate(trailers) if t != "Reviewed-by" and t != "Link"] + [-1]), trailers
# the moderators are told how to answer, then what changed since v1 and where v1 is
assert rest.startswith("How to answer:\nReply to this mail with a command on a line of its own:\n"), rest[:300]
assert "#kfix upstream " in rest and "#kfix reject REASON" in rest, rest[:600]
assert "\n#kfix" not in rest, "a command at the start of a line of kfix's own mail"
assert "Branch: kfix/1/v2 on " in rest, rest[:600]
changes = rest.split("\n\n", 1)[1]
assert changes.startswith("Changes since v1:\n- Warn once about the NULL object (Mod Erator).\n"), changes[:200]
# v1 went upstream: its link is that mail's
assert "\nLink to v1: https://lore.kernel.org/r/kfix-1-v1." in changes, changes[:400]
PY
wait_for 30 git -C "$T/push.git" rev-parse -q --verify refs/heads/kfix/1/v2 || fail "no v2 branch"
[ "$(git -C "$T/push.git" rev-parse refs/heads/kfix/1/v1)" = "$v1" ] || fail "v1 branch rewritten"
git -C "$T/push.git" show refs/heads/kfix/1/v2 | grep -q 'v2 \*/' || fail "v2 branch content"
ok "v2: its own mail, threaded under v1, with the changes and the collected tags"
stop_kfixd
grep "exited with status" "$T/kfixd.log" && fail "a job process failed"

# the thread as a maintainer takes it: b4 picks v2 out of the v1/v2
# thread, keeps its trailers in kfix's order, and git am applies it
command -v b4 >/dev/null || skip "b4 not installed (Debian package b4; scripts/install-deps.sh all)"
for f in "$T"/spool/*kfix-1-v1-rfc."$SID"@*.eml "$v2m"; do
	printf 'From kfix@kfix.example.org Thu Jan  1 00:00:00 1970\n'
	sed 's/^From />From /' "$f"
	echo
done > "$T/thread.mbox"
mkdir -p "$T/home" "$T/b4"
HOME=$T/home git config --global user.name R
HOME=$T/home git config --global user.email r@example.org
(cd "$T" && HOME=$T/home timeout 120 b4 --offline-mode am -m thread.mbox -o b4) > "$T/b4.log" 2>&1 ||
	fail "b4 am: $(cat "$T/b4.log")"
mbx=$(ls "$T"/b4/v2_*.mbx) || fail "b4 wrote no v2 series: $(cat "$T/b4.log")"
grep -q "^Reviewed-by: Rev Iewer <rev@example.org>$" "$mbx" || fail "b4 lost the Reviewed-by"
[ "$(sed -n 's/^\(Reported-by\|Assisted-by\|Reviewed-by\|Link\):.*/\1/p' "$mbx" | tr '\n' ' ')" = \
	"$(sed -n '1,/^---$/s/^\(Reported-by\|Assisted-by\|Reviewed-by\|Link\):.*/\1/p' "$v2m" | tr '\n' ' ')" ] ||
	fail "b4 reordered kfix's trailers: $(grep -E '^[A-Z][a-z-]+-by:|^Link:' "$mbx")"
git clone -q "$U" "$T/am-b4" && git -C "$T/am-b4" checkout -q "$BASE"
HOME=$T/home git -C "$T/am-b4" am -q "$mbx" || fail "git am of b4's output"
git -C "$T/push.git" show refs/heads/kfix/1/v2:mm/slub.c | cmp -s - "$T/am-b4/mm/slub.c" ||
	fail "b4 + git am give another tree than the v2 branch"
ok "b4 am takes v2 from the thread with its trailers; git am applies it"
echo PASS
