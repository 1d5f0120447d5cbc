#!/bin/bash
# Cause bisection on a real kernel, inside kfixd: the prepared 6.1 source
# (a git work tree, [tree] path) gets a history of five commits above a
# good one (the msg-uaf scenario fixed):
#   a1  adds a document               (nothing to build)
#   a2  breaks the build               (kernel/time/posix-timers.c)
#   a3  mends it
#   a4  brings the use-after-free back (the culprit: author and two
#       Signed-off-by)
#   a5  removes the document           (the bug's base: the source as
#       prepared, so the warm build folder fits it)
# With [tree] bisect, kfixd reproduces the bug, bisects (kfixd is killed
# with SIGKILL after the first tested revision and the job resumes
# without testing them again), must skip a2, which does not build, name
# a4, put the folder back on its branch, then repair the bug with the
# scripted model: the patch's Fixes: is a4, the mail says it was found by
# bisection, and the upstream mail Cc's a4's author and Signed-off-by
# chain.  The figures of the bisection are logged on a "figures" line.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_setup
kt_git_source
S=$kt_here/scenarios/msg-uaf
top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}
KFIXD=${top_builddir:-.}/kfixd
[ -x "$KFIXD" ] || KFIXD=${top_builddir:-.}/daemon/kfixd
started=$(date +%s)
EXTID=b15ec7000000000000b1
G=(git --git-dir="$KT_GIT")

# The history, written with plumbing and a private index: the work tree
# (and so the build folder's view of it) is not touched.
bisect_reset() {
	# the prepared source as the other tests expect it
	"${G[@]}" update-ref refs/heads/master "$KT_BASE" 2>/dev/null
	"${G[@]}" symbolic-ref HEAD refs/heads/master 2>/dev/null
	"${G[@]}" --work-tree="$KT_SRC" checkout -q -f master -- . 2>/dev/null
	"${G[@]}" --work-tree="$KT_SRC" reset -q master 2>/dev/null
}
trap 'bisect_reset; kt_cleanup' EXIT
# branches of earlier runs go (another test's kfix/1/v1 is another commit)
"${G[@]}" for-each-ref --format='%(refname)' refs/heads/kfix refs/notes/kfix |
	while read -r ref; do "${G[@]}" update-ref -d "$ref"; done
export GIT_INDEX_FILE=$T/chain.index
"${G[@]}" read-tree "$KT_BASE" || kt_fail "read-tree"
n=0
commit() { # AUTHOR MESSAGE: the private index as a commit above $PARENT
	local tree
	n=$((n + 1))
	tree=$("${G[@]}" write-tree) || kt_fail "write-tree"
	PARENT=$(GIT_AUTHOR_NAME="${1% <*}" GIT_AUTHOR_EMAIL=$(echo "$1" | sed 's/.*<\(.*\)>/\1/') \
		GIT_AUTHOR_DATE="170000$n""000 +0000" GIT_COMMITTER_NAME=kfix-test \
		GIT_COMMITTER_EMAIL=test@kfix.invalid GIT_COMMITTER_DATE="170000$n""000 +0000" \
		"${G[@]}" commit-tree "$tree" ${PARENT:+-p "$PARENT"} -m "$2") || kt_fail "commit-tree"
}
put() { # PATH FILE: PATH's content in the index
	local blob
	blob=$("${G[@]}" hash-object -w "$2") || kt_fail "hash-object"
	"${G[@]}" update-index --add --cacheinfo "100644,$blob,$1" || kt_fail "update-index $1"
}
show() { "${G[@]}" show "$KT_BASE:$1"; }
show ipc/msg.c > "$T/msg-bug.c"
(cd "$T" && cp msg-bug.c msg-good.c && patch -s msg-good.c < "$S/fix.patch") || kt_fail "fix.patch"
show kernel/time/posix-timers.c > "$T/timers.c"
sed 's/^\tint error;$/\tint error = kfix_no_such_symbol;/' "$T/timers.c" > "$T/timers-broken.c"
cmp -s "$T/timers.c" "$T/timers-broken.c" && kt_fail "break-build did not apply"
echo "Notes kept while the queue code changed." > "$T/doc.txt"

PARENT=$KT_BASE
put ipc/msg.c "$T/msg-good.c"
commit "Good Dev <good@example.org>" "ipc/msg: the queue code before the change"
GOOD=$PARENT
put Documentation/kfix-bisect.txt "$T/doc.txt"
commit "Doc Writer <doc@example.org>" "Documentation: a note on message queues"
put kernel/time/posix-timers.c "$T/timers-broken.c"
commit "Build Breaker <breaker@example.org>" "posix-timers: an error that does not build"
UNBUILDABLE=$PARENT
put kernel/time/posix-timers.c "$T/timers.c"
commit "Build Mender <mender@example.org>" "posix-timers: build again"
put ipc/msg.c "$T/msg-bug.c"
commit "Cul Prit <culprit@example.org>" "ipc/msg: account the bytes of each freed message

Signed-off-by: Cul Prit <culprit@example.org>
Reviewed-by: Care Ful <careful@example.org>
Signed-off-by: Sub Maintainer <submaint@example.org>"
CULPRIT=$PARENT
"${G[@]}" update-index --force-remove Documentation/kfix-bisect.txt
commit "Doc Writer <doc@example.org>" "Documentation: drop the note again"
HEAD_C=$PARENT
unset GIT_INDEX_FILE
[ "$("${G[@]}" rev-parse "$HEAD_C^{tree}")" = "$("${G[@]}" rev-parse "$KT_BASE^{tree}")" ] ||
	kt_fail "the chain's head is not the prepared source"
"${G[@]}" update-ref refs/heads/master "$HEAD_C" || kt_fail "update-ref"
kt_log "history: good ${GOOD:0:12}, unbuildable ${UNBUILDABLE:0:12}, culprit ${CULPRIT:0:12}, head ${HEAD_C:0:12}"

python3 "$kt_here/repairmodel.py" script "$S" --flow fix > "$T/script.json" || kt_fail "script"
python3 "$top_srcdir/tests/agent/llm-server.py" --script "$T/script.json" --log "$T/llm.log" \
	--port-file "$T/llm.port" &
KT_PIDS+=($!)
for i in $(seq 100); do [ -s "$T/llm.port" ] && break; sleep 0.1; done
[ -s "$T/llm.port" ] || kt_fail "scripted model did not start"
cat >> "$T/kfix.conf" <<CFG
[kfix]
	log-level = debug
	job-attempts = 3
	job-timeout = 2h
[mail]
	syzbot-auth = none
	transport = spool
	spool-dir = $T/spool
	from = kfix bot <kfix@kfix.example.org>
[tree "msg"]
	path = $KT_SRC
	config = $KT_CONFIG
	moderation-address = moderation@example.org
	bisect = yes
	bisect-good = $GOOD
	bisect-runs = 2
[llm "scripted"]
	provider = openai
	url = http://127.0.0.1:$(cat "$T/llm.port")/v1
	model = scripted-msg-uaf
	retries = 1
	backoff = 100ms
[agent]
	llm = scripted
	prompts-dir = $top_srcdir/agent/prompts
	base-runs = 1
	validate-runs = 2
	locations = 2
	minimise = false
CFG
"$KFIXD" -c "$T/kfix.conf" --check-config || kt_fail "config"
"$KFIXCTL" -c "$T/kfix.conf" submit --source syzbot --id "$EXTID" \
	--title "KASAN: use-after-free Read in msgctl" --tree msg --report "$S/report.txt" \
	--repro "$S/repro.c" > /dev/null || kt_fail "submit"
db() { sqlite3 -cmd '.timeout 5000' "$T/state/kfix.db" "$1"; }
KFIXD_PID=
start_kfixd() {
	"$KFIXD" -c "$T/kfix.conf" --log-target stderr 2>> "$T/kfixd.log" &
	KFIXD_PID=$!
	KT_PIDS+=("$KFIXD_PID")
}
start_kfixd

# kill -9 once the bisection tested its good end (while the next one,
# which does not build, is cheap to redo); then wait for the
# moderation mail
killed=0
for i in $(seq 3600); do
	state=$(db "SELECT state FROM bugs WHERE id = 1")
	case "$state" in
	not-reproducible|gave-up|already-fixed) break ;;
	esac
	ls "$T"/spool/*.eml >/dev/null 2>&1 && break
	bj=$(db "SELECT id FROM jobs WHERE kind = 'bisect' LIMIT 1")
	if [ $killed = 0 ] && [ -n "$bj" ] &&
	   [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tests"]))' \
		"$T/state/jobs/$bj/bisect.json" 2>/dev/null)" = 1 ]; then
		kill -9 "$KFIXD_PID"; wait "$KFIXD_PID" 2>/dev/null
		killed=1
		kt_log "kill -9 of kfixd after the first tested revision"
		sleep 2
		start_kfixd
	fi
	[ $((i % 60)) = 0 ] && kt_log "bug 1: $state, $(db "SELECT kind || ' ' || state || ': ' || ifnull(progress, '') FROM jobs ORDER BY id DESC LIMIT 1")"
	sleep 1
done
db "SELECT id, kind, state, attempts, ifnull(error, '') FROM jobs" >&2
mail=$(ls "$T"/spool/*.eml 2>/dev/null | head -1)
[ -n "$mail" ] || { tail -40 "$T/kfixd.log" >&2; kt_fail "no patch mail (bug 1 is $state)"; }
[ $killed = 1 ] || kt_fail "the bisection ended before kfixd could be killed"
kt_log "patch mailed for moderation after $(( $(date +%s) - started ))s"

# the bisection: a4 found, a2 skipped as unbuildable, nothing tested twice
# across the kill, the folder back on master at the head, no marker left
python3 - "$T/state/kfix.db" "$GOOD" "$UNBUILDABLE" "$CULPRIT" "$HEAD_C" <<'PY' || kt_fail "bisection"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
good, unbuildable, culprit, head = sys.argv[2:6]
(res,), = db.execute("SELECT result FROM jobs WHERE kind = 'bisect' AND state = 'done'").fetchall()
r = json.loads(res)
assert r["result"] == "found" and r["culprit"] == culprit, r
assert r["subject"] == "ipc/msg: account the bytes of each freed message", r
assert r["author"] == "Cul Prit <culprit@example.org>", r
assert r["cc"] == ["Cul Prit <culprit@example.org>", "Sub Maintainer <submaint@example.org>"], r["cc"]
assert r["good"] == good and r["good_from"].startswith("[tree] bisect-good"), r
assert r["range"] == 5 and r["runs_per_revision"] == 2, r
tested = [t["commit"] for t in r["tests"]]
assert len(tested) == len(set(tested)), tested  # the kill redid nothing
v = {t["commit"]: (t["verdict"], t["why"]) for t in r["tests"]}
assert v[good][0] == "good", v
assert v[unbuildable] == ("skip", "does not build"), v
assert v[culprit][0] == "bad" and "crashed" in v[culprit][1], v
assert head not in v, v  # the base was reproduced already
# the event, once, and the repair queued after it
(d,), = db.execute("SELECT detail FROM events WHERE kind = 'bisect.done'").fetchall()
assert json.loads(d)["culprit"] == culprit
kinds = [k for k, in db.execute("SELECT kind FROM jobs ORDER BY id")]
assert kinds[:3] == ["reproduce", "bisect", "repair"], kinds
(attempts,), = db.execute("SELECT attempts FROM jobs WHERE kind = 'bisect'").fetchall()
assert attempts >= 2, attempts  # the killed one and the one that ended
print("figures bisect: %d commits in the range, %d revisions tested (%d skipped), %d builds "
      "(one more for the base), %d runs of %d, wall %ds" % (r["range"], len(tested),
      sum(t["verdict"] == "skip" for t in r["tests"]), r["builds"], r["runs"],
      r["runs_per_revision"], r["wall"]), file=sys.stderr)
PY
"$KFIXCTL" -c "$T/kfix.conf" bug 1 > "$T/bug.txt" || kt_fail "kfixctl bug 1"
grep -q "^Cause: *${CULPRIT:0:12} (\"ipc/msg: account the bytes of each freed message\") by Cul Prit <culprit@example.org>, bisected: 4 revisions tested, [0-9]* builds$" "$T/bug.txt" ||
	kt_fail "kfixctl bug: $(grep Cause "$T/bug.txt")"
[ "$("${G[@]}" symbolic-ref HEAD)" = refs/heads/master ] || kt_fail "HEAD is not on master"
[ "$("${G[@]}" rev-parse HEAD)" = "$HEAD_C" ] || kt_fail "HEAD moved"
"${G[@]}" --work-tree="$KT_SRC" diff --quiet HEAD -- ipc/msg.c kernel/time/posix-timers.c ||
	kt_fail "the work tree is not back at the head"
[ ! -e "$KT_SRC/Documentation/kfix-bisect.txt" ] || kt_fail "a1's document is still there"
[ ! -e "$T/state/trees/msg.checkout" ] || kt_fail "the restore marker is left"

# the moderation mail: Fixes: the culprit, and how it was found
grep -q "^Fixes: ${CULPRIT:0:12} (\"ipc/msg: account the bytes of each freed message\")$" "$mail" ||
	kt_fail "Fixes: $(grep '^Fixes:' "$mail")"
python3 - "$mail" <<'PY' || kt_fail "the mail does not say how Fixes: was found: $(sed -n '/^Tested/,/^Not tested/p' "$mail")"
import email, sys
body = " ".join(email.message_from_file(open(sys.argv[1])).get_payload(decode=True).decode().split())
tested = body[body.index("Tested:"):body.index("Not tested:")]
assert "- Fixes: found by bisection with the reproducer: the first commit that crashes, " \
       "between [tree] bisect-good" in tested, tested
assert "(5 commits); 4 revisions tested (1 skipped), each run 2 times" in tested, tested
assert "Fixes: not bisected" not in body
PY

# the moderator approves (as the mail intake records it): the upstream
# mail Cc's the culprit's author and Signed-off-by chain, not its reviewer
db "INSERT INTO events (ts, bug_id, job_id, kind, detail) VALUES (strftime('%s','now'), 1, 0, 'request.upstream', '{\"by\": \"mod@example.org\", \"name\": \"Mod Erator <mod@example.org>\", \"via\": \"mail\"}')"
up=
for i in $(seq 600); do
	up=$(grep -l '^To: .*linux-kernel@vger.kernel.org' "$T"/spool/*.eml 2>/dev/null | head -1)
	[ -n "$up" ] && break
	sleep 1
done
[ -n "$up" ] || { db "SELECT id, kind, state, ifnull(error, '') FROM jobs" >&2; kt_fail "no upstream mail"; }
python3 - "$up" "$CULPRIT" <<'PY' || kt_fail "upstream mail: $(sed '/^$/q' "$up")"
import email, email.utils, sys
m = email.message_from_file(open(sys.argv[1]))
cc = [a.lower() for _, a in email.utils.getaddresses(m.get_all("Cc", []))]
for a in ("culprit@example.org", "submaint@example.org"):
    assert a in cc, (a, cc)
assert "careful@example.org" not in cc, cc
body = m.get_payload(decode=True).decode()
assert "\nFixes: %s (" % sys.argv[2][:12] in body, body
PY
kt_log "upstream mail Cc's the culprit's author and Signed-off-by chain"
kill "$KFIXD_PID"
wait "$KFIXD_PID" 2>/dev/null
kt_no_leaks
kt_log "PASS in $(( $(date +%s) - started ))s"
