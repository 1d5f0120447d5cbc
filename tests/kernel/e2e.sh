#!/bin/bash
# kfixd end to end on a real kernel, everything real on loopback: a fake
# syzbot dashboard (tests/fake-syzbot.py) announces the msg-uaf bug with
# its report, C reproducer and config; kfixd picks it up, reproduces it in
# qemu on a VM host that is an OpenSSH server, repairs it (the model
# replayed from the scenario's cassette), validates the fix, commits it as
# kfix/1/v1 with a note, pushes branch and note over SSH to a bare git
# remote, and mails the moderation address through an SMTP server
# (aiosmtpd).  A "#kfix upstream" reply from the moderator, delivered to
# the mail webhook, sends the patch to the get_maintainer.pl recipients.
# Then review replies arrive through a public-inbox archive (a v2 inbox
# made with public-inbox-mda, followed by the [archive] poller): a
# reviewer's Reviewed-by and the moderator's comments, which start a new
# version: kfix/1/v2 on the remote beside v1, and a [PATCH RFC v2] mail
# answering v1's, with "Changes since v1:" and the Reviewed-by.
#
# With KFIX_E2E_KILLS (default 10) kfixd is killed with SIGKILL that many
# times along the way to the upstream mail, at moments spread over every
# state, and KFIX_E2E_V2_KILLS (default 3) times on the way to v2; the
# outcome must be the same: one bug, two patches, one push per branch,
# one moderation mail per version and one upstream mail.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_setup
. "$kt_here/flow.sh"
S=$kt_here/scenarios/msg-uaf
top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}
KFIXD=${top_builddir:-.}/kfixd
[ -x "$KFIXD" ] || KFIXD=${top_builddir:-.}/daemon/kfixd
flow_require
started=$(date +%s)
EXTID=$FLOW_EXTID
flow_setup

# The model: replayed from the cassette this test records with the
# scripted model (KFIX_RECORD_CASSETTE=1: then without kills, since a
# repair run again after a kill would find the script moved on).
RECORD=no
LLM_SECTION="[llm \"replayed\"]
	url = http://127.0.0.1:9/v1
	model = scripted-msg-uaf
	replay = $S/e2e-cassette.jsonl
[llm \"iterate\"]
	url = http://127.0.0.1:9/v1
	model = scripted-msg-uaf
	replay = $S/e2e-iterate-cassette.jsonl"
if [ "${KFIX_RECORD_CASSETTE:-0}" = 1 ]; then
	python3 "$kt_here/repairmodel.py" script "$S" --flow v2 > "$T/script.json" || kt_fail "script"
	python3 "$top_srcdir/tests/agent/llm-server.py" --script "$T/script.json" --log "$T/llm.log" \
		--port-file "$T/llm.port" &
	KT_PIDS+=($!)
	for i in $(seq 100); do [ -s "$T/llm.port" ] && break; sleep 0.1; done
	[ -s "$T/llm.port" ] || kt_fail "scripted model did not start"
	LLM_SECTION="[llm \"replayed\"]
	url = http://127.0.0.1:$(cat "$T/llm.port")/v1
	model = scripted-msg-uaf
	retries = 1
	backoff = 100ms
[llm \"iterate\"]
	url = http://127.0.0.1:$(cat "$T/llm.port")/v1
	model = scripted-msg-uaf
	retries = 1
	backoff = 100ms"
	RECORD=yes
	KFIX_E2E_KILLS=0
	KFIX_E2E_V2_KILLS=0
fi

flow_write_config "$LLM_SECTION" replayed iterate "$RECORD"
"$KFIXD" -c "$T/kfix.conf" --check-config || kt_fail "config"

KFIXD_PID=
start_kfixd() {
	"$KFIXD" -c "$T/kfix.conf" --log-target stderr 2>> "$T/kfixd.log" &
	KFIXD_PID=$!
	STARTED_AT=$(date +%s)
	KT_PIDS+=("$KFIXD_PID")
}
kill9_kfixd() { # WHY
	[ -n "$KFIXD_PID" ] || return 0
	kill -9 "$KFIXD_PID" 2>/dev/null
	wait "$KFIXD_PID" 2>/dev/null
	KFIXD_PID=
	KILLS=$((KILLS + 1))
	kt_log "kill -9 #$KILLS: $1"
	start_kfixd
}

# kill points: a bug state reached, a job started, a mail or push done
KILLS=0
MAX_KILLS=${KFIX_E2E_KILLS:-10}
declare -A killed=()
maybe_kill() { # KEY WHY: once per key, while kills are left
	[ "$KILLS" -lt "$MAX_KILLS" ] || return 0
	[ -z "${killed[$1]:-}" ] || return 0
	# a daemon killed again at once proves little: let it work first
	[ $(( $(date +%s) - STARTED_AT )) -ge 3 ] || return 0
	killed[$1]=1
	kill9_kfixd "$2"
}
# at a moment the test itself chooses (the daemon at rest, or a delivery
# just recorded), then a pause in which anything redone would show
force_kill() { # KEY WHY
	[ "$MAX_KILLS" -gt 0 ] && [ -z "${killed[$1]:-}" ] || return 0
	killed[$1]=1
	kill9_kfixd "$2"
	sleep 3
}

# just before a delivery (queued, not yet done) and just after it (recorded)
outbox_kill_points() {
	local q
	q=$(db "SELECT kind || '-' || id FROM outbox WHERE state = 'pending' ORDER BY id LIMIT 1")
	[ -n "$q" ] && maybe_kill "queued-$q" "$q queued, not yet delivered"
	q=$(db "SELECT kind || '-' || id FROM outbox WHERE state = 'sent' ORDER BY id DESC LIMIT 1")
	[ -n "$q" ] && maybe_kill "sent-$q" "just after $q was delivered"
}

start_kfixd
phase=moderation
for i in $(seq 2400); do
	state=$(db "SELECT state FROM bugs WHERE source_id = '$EXTID'")
	running=$(db "SELECT kind FROM jobs WHERE state = 'running'" | grep . | sort | tr '\n' ,)
	case "$state" in
	not-reproducible|gave-up|already-fixed|rejected) break ;;
	esac
	# kill points, each taken once, as the flow reaches it
	[ -n "$state" ] && maybe_kill "bug-$state" "bug is $state"
	[ -n "$running" ] && maybe_kill "jobs-$running" "running $running"
	outbox_kill_points
	if [ "$phase" = moderation ] && flow_v1_published; then
		phase=approval
		kt_log "moderation mail and push done after $(( $(date +%s) - started ))s"
		break
	fi
	[ $((i % 60)) = 0 ] && kt_log "bug: ${state:-none}, running: ${running:-nothing}"
	sleep 0.5
done
[ "$phase" = approval ] || { tail -40 "$T/kfixd.log" >&2; kt_fail "no moderation mail (bug ${state:-none})"; }
force_kill after-moderation "the push and the moderation mail are recorded as delivered"

# the branch and its note on the remote, the commit on the base
c=$(git --git-dir="$T/remote.git" rev-parse refs/heads/kfix/1/v1) || kt_fail "no branch on the remote"
[ "$(git --git-dir="$T/remote.git" rev-parse "$c^")" = "$BASE" ] || kt_fail "the commit is not on the base"
git --git-dir="$T/remote.git" show "$c" -- ipc/msg.c | grep -q '^-		msq->q_cbytes -= msg->m_ts;' ||
	kt_fail "the commit does not hold the fix"
git --git-dir="$T/remote.git" log -1 --format=%B "$c" | grep -q "^Reported-by: syzbot+$EXTID@syzkaller.appspotmail.com$" ||
	kt_fail "the commit's trailers"
git --git-dir="$T/remote.git" notes --ref=kfix show "$c" | grep -q "use-after-free" || kt_fail "no note"
kt_log "branch kfix/1/v1 and its note are on the remote"

# the moderation mail: headers, trailers, table; it applies with git am
m=$(ls "$T"/smtp/msg-*.eml | head -1)
python3 - "$m" "$EXTID" <<'PY' || kt_fail "moderation mail: $(sed '/^\r*$/q' "$m")"
import email, re, sys
m = email.message_from_binary_file(open(sys.argv[1], "rb"))
subject = " ".join(m["Subject"].split())
assert subject == "[PATCH RFC] ipc/msg: do not read a message after freeing it in freeque()", subject
assert m["To"] == "moderation@example.org", m["To"]
assert re.fullmatch(r"<kfix-1-v1-rfc\.[0-9a-f]{12}@kfix\.example\.org>", m["Message-ID"]), m["Message-ID"]
body = m.get_payload(decode=True).decode()
assert "Reported-by: syzbot+%s@syzkaller.appspotmail.com" % sys.argv[2] in body
assert "Assisted-by: kfix:scripted-msg-uaf" in body
assert "Signed-off-by" not in body
assert "crashed 1 of 1: KASAN: use-after-free Read in msgctl" in body, body
PY
git --git-dir="$T/remote.git" worktree add -q --detach "$T/am" "$BASE" 2>/dev/null ||
	git clone -q --shared "$T/remote.git" "$T/am"
git -C "$T/am" checkout -q --detach "$BASE"
tr -d '\r' < "$m" | git -C "$T/am" -c user.name=t -c user.email=t@example.org am -q ||
	kt_fail "the moderation mail does not apply with git am"
git -C "$T/am" diff --quiet "$c" -- ipc/msg.c || kt_fail "git am gave another tree than the branch"
kt_log "moderation mail checked (applies with git am)"

# "#kfix upstream" from the moderator, delivered by the MTA to the webhook
force_kill before-approval "awaiting approval, nothing running"
flow_write_approval "[PATCH RFC] ipc/msg: do not read a message after freeing it in freeque()"
post_until_taken "$T/approve.eml" approve-1
maybe_kill "after-approval" "just after the approval reached the webhook"
for i in $(seq 600); do
	[ "$(mails)" -ge 2 ] && [ "$(db "SELECT state FROM bugs WHERE id = 1")" = sent ] && break
	maybe_kill "upstream-$(db "SELECT state FROM patches WHERE id = 1")" "patch $(db "SELECT state FROM patches WHERE id = 1")"
	outbox_kill_points
	sleep 0.5
done
[ "$(mails)" -ge 2 ] || { tail -30 "$T/kfixd.log" >&2; kt_fail "no upstream mail"; }
for i in $(seq 40); do [ "$(sent mail)" -ge 2 ] && break; sleep 0.5; done
force_kill after-upstream "the upstream mail is recorded as delivered"
sleep 3 # anything sent twice would show now
up=$(grep -l '^Subject: \[PATCH\]' "$T"/smtp/msg-*.eml | head -1)
[ -n "$up" ] || kt_fail "no [PATCH] mail"
grep -q "^Signed-off-by: Mod Erator <mod@example.org>" "$up" || kt_fail "no sign-off of the approver"
git --git-dir="$G" show "$c" --format= > "$T/fix.diff"
want=$(cd "$KT_SRC" && perl scripts/get_maintainer.pl --no-rolestats --no-git --no-git-fallback --no-tree \
	"$T/fix.diff" 2>/dev/null | grep -o '[^<> ]*@[^<> ]*' | sort -u)
[ -n "$want" ] || kt_fail "get_maintainer.pl named nobody"
got=$(python3 -c 'import email,sys; from email.utils import getaddresses; m=email.message_from_binary_file(open(sys.argv[1],"rb")); print("\n".join(sorted({a for _, a in getaddresses(m.get_all("To", []) + m.get_all("Cc", []))})))' "$up")
for a in $want; do
	echo "$got" | grep -qx "$a" || kt_fail "get_maintainer.pl recipient $a missing: $got"
done
kt_log "upstream mail sent to: $(echo $got)"

# ---- review replies in the list's archive lead to v2 ----
[ "$KILLS" -ge "$MAX_KILLS" ] || kt_fail "only $KILLS kill points were reached (wanted $MAX_KILLS)"
# the v2 flow has its own kills (the forced ones above count too)
MAX_KILLS=$((KILLS + ${KFIX_E2E_V2_KILLS:-3}))
flow_write_reviews "[PATCH] ipc/msg: do not read a message after freeing it in freeque()"
archive "$T/review-1.eml"
archive "$T/review-2.eml"
# the first one also through the webhook: it counts once
post_until_taken "$T/review-1.eml" review-1
v2=
for i in $(seq 2400); do
	state=$(db "SELECT state FROM bugs WHERE id = 1")
	running=$(db "SELECT kind FROM jobs WHERE state = 'running'" | grep . | sort | tr '\n' ,)
	[ -n "$state" ] && maybe_kill "v2-bug-$state" "v2: bug is $state"
	[ -n "$running" ] && maybe_kill "v2-jobs-$running" "v2: running $running"
	outbox_kill_points
	if flow_v2_published; then
		v2=yes
		break
	fi
	case "$(db "SELECT state FROM jobs WHERE kind = 'iterate' ORDER BY id DESC LIMIT 1")" in
	failed|cancelled) break ;;
	esac
	[ $((i % 60)) = 0 ] && kt_log "v2: bug ${state:-none}, running: ${running:-nothing}"
	sleep 0.5
done
[ -n "$v2" ] || { tail -40 "$T/kfixd.log" >&2; kt_fail "no v2 (bug $state): $(db "SELECT id, kind, state, error FROM jobs WHERE kind = 'iterate'")"; }
kt_log "v2 mail and push done after $(( $(date +%s) - started ))s"
force_kill after-v2 "the v2 push and mail are recorded as delivered"
[ "$(db "SELECT count(*) FROM reviews")" = 2 ] || kt_fail "reviews: $(db 'SELECT message_id FROM reviews')"
c2=$(git --git-dir="$T/remote.git" rev-parse refs/heads/kfix/1/v2) || kt_fail "no v2 branch on the remote"
[ "$(git --git-dir="$T/remote.git" rev-parse refs/heads/kfix/1/v1)" = "$c" ] || kt_fail "v1 branch rewritten"
[ "$(git --git-dir="$T/remote.git" rev-parse "$c2^")" = "$BASE" ] || kt_fail "v2 is not on the base"
git --git-dir="$T/remote.git" show "$c2" -- ipc/msg.c | grep -q '^+	/\* the queue goes away' ||
	kt_fail "the v2 commit does not hold the reviewed fix"
git --git-dir="$T/remote.git" notes --ref=kfix show "$c2" >/dev/null || kt_fail "no note on v2"
m2=$(mail_of kfix-1-v2-rfc)
[ -n "$m2" ] || kt_fail "no v2 mail"
python3 - "$m2" <<'PY' || kt_fail "v2 mail: $(cat "$m2")"
import email, re, sys
m = email.message_from_binary_file(open(sys.argv[1], "rb"))
subject = " ".join(m["Subject"].split())
assert subject == "[PATCH RFC v2] ipc/msg: do not read a message after freeing it in freeque()", subject
assert re.fullmatch(r"<kfix-1-v1-rfc\.[0-9a-f]{12}@kfix\.example\.org>", m["In-Reply-To"].strip()), m["In-Reply-To"]
body = m.get_payload(decode=True).decode()
head, rest = body.split("\n---\n", 1)
assert "Reviewed-by: Rev Iewer <rev@example.org>" in head, head
assert rest.startswith("How to answer:\n"), rest[:300]
changes = rest.split("\n\n", 1)[1]
assert changes.startswith("Changes since v1:\n- Say in a comment why"), changes[:300]
assert "\nLink to v1: https://lore.kernel.org/r/kfix-1-v1" in changes, changes[:600]
PY
kt_log "kfix/1/v2 on the remote, v2 mail with the changes since v1 and the Reviewed-by"

# the same outcome whatever was killed: nothing lost, nothing twice
[ "$(db "SELECT count(*) FROM bugs")" = 1 ] || kt_fail "bugs: $(db 'SELECT id, state FROM bugs')"
[ "$(db "SELECT count(*) FROM patches")" = 2 ] || kt_fail "patches: $(db 'SELECT id, state FROM patches')"
[ "$(db "SELECT state FROM patches WHERE id = 1")" = sent ] || kt_fail "patch state"
[ "$(mails)" = 3 ] || kt_fail "$(mails) mails received, not 3: $(grep -h '^Subject' "$T"/smtp/msg-*.eml)"
[ "$(grep -l "kfix-1-v1-rfc.$(store_id)@" "$T"/smtp/msg-*.eml | wc -l)" -ge 1 ] || kt_fail "RFC mail"
[ "$(git --git-dir="$T/remote.git" for-each-ref refs/heads/kfix | wc -l)" = 2 ] || kt_fail "branches on the remote"
[ "$(db "SELECT count(*) FROM outbox WHERE kind = 'push'")" = 2 ] || kt_fail "pushes: $(db "SELECT idem_key, state FROM outbox WHERE kind = 'push'")"
[ "$(db "SELECT count(*) FROM outbox WHERE state != 'sent'")" = 0 ] || kt_fail "outbox left: $(db "SELECT idem_key, state FROM outbox")"
[ "$(db "SELECT count(*) FROM jobs WHERE kind = 'repair' AND state = 'done'")" = 1 ] || kt_fail "repair jobs"
# the repair job's last step, as kfixctl job shows it
rj=$(db "SELECT id FROM jobs WHERE kind = 'repair'")
"$KFIXCTL" -c "$T/kfix.conf" job "$rj" | grep -q "^Last step: *done: validated" ||
	kt_fail "repair job's last step: $("$KFIXCTL" -c "$T/kfix.conf" job "$rj")"
[ "$(db "SELECT count(*) FROM jobs WHERE kind = 'iterate'")" = 1 ] || kt_fail "iterate jobs: $(db "SELECT id, state FROM jobs WHERE kind = 'iterate'")"
transitions=$(db "SELECT detail FROM events WHERE kind = 'bug.state' ORDER BY id" | cut -d: -f1)
for t in "new -> reproducing:1" "reproducing -> repairing:1" "repairing -> validated:2" \
	"validated -> awaiting-approval:2" "awaiting-approval -> sent:1" "sent -> repairing:1"; do
	[ "$(echo "$transitions" | grep -cx "${t%:*}")" = "${t##*:}" ] ||
		kt_fail "transition '${t%:*}' not ${t##*:} time(s): $transitions"
done
# every model call of both jobs counted for the budgets, against the bug
[ "$(db "SELECT count(*) FROM llm_usage WHERE bug_id = 1 AND tokens_in > 0")" -ge 13 ] ||
	kt_fail "LLM usage: $(db 'SELECT bug_id, job_id, tokens_in, tokens_out FROM llm_usage')"
[ "$KILLS" -ge "$MAX_KILLS" ] || kt_fail "only $KILLS kill points were reached (wanted $MAX_KILLS)"
if [ "$RECORD" = yes ]; then
	cp "$T/state/jobs/$(db "SELECT id FROM jobs WHERE kind = 'repair'")/cassette.jsonl" "$S/e2e-cassette.jsonl" ||
		kt_fail "keeping the cassette"
	cp "$T/state/jobs/$(db "SELECT id FROM jobs WHERE kind = 'iterate'")/cassette.jsonl" \
		"$S/e2e-iterate-cassette.jsonl" || kt_fail "keeping the v2 cassette"
	kt_log "recorded $S/e2e-cassette.jsonl and $S/e2e-iterate-cassette.jsonl"
fi
# what a reviewer reads of it on the dashboard, in a real browser
if command -v node >/dev/null && [ -x "${CHROMIUM:=/usr/bin/chromium}" ] &&
	[ -d "$top_srcdir/tests/browser/node_modules/playwright-core" ]; then
	ART=${top_builddir:-.}/tests/browser-artifacts
	KFIX_URL=http://127.0.0.1:$HTTP_PORT KFIX_ARTIFACTS=$ART KFIX_READ_TOKEN=$FLOW_READ_TOKEN \
		KFIX_BUG=1 KFIX_SUBJECT="ipc/msg: do not read a message after freeing it in freeque()" \
		KFIX_REPAIR_JOB="$rj" KFIX_REVIEWER="Rev Iewer <rev@example.org>" CHROMIUM=$CHROMIUM \
		timeout 300 node "$top_srcdir/tests/browser/flow.mjs" >> "$T/browser.log" 2>&1 ||
		kt_fail "browser: $(cat "$T/browser.log") (screenshots in $ART)"
	kt_log "dashboard in the browser: $(grep -c '^ok:' "$T/browser.log") checks (screenshots in $ART)"
else
	kt_log "SKIP the browser part: node, $CHROMIUM or playwright-core missing (scripts/install-deps.sh all)"
fi
kt_no_leaks
kt_log "PASS in $(( $(date +%s) - started ))s with $KILLS kill -9 of kfixd"
echo PASS
