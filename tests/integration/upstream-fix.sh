#!/bin/bash
# Learning from the fixes that land: four syzbot bugs with kfix patches
# out on the real ipc/msg.c of Linux 6.1 (with the msg-uaf scenario's
# bug), then the tree moves on and the developers' fixes land.  Each way
# of hearing of a fix starts the comparison, once per bug:
#   a signed push webhook to the watched branch  (bugs A and B: their
#     syzbot ids are in the fix commits' trailers),
#   syzbot's list of fixed bugs naming the fix commit  (bug C, whose fix
#     names no id; bug E has no kfix patch and is not compared),
#   kfixctl compare  (bug D, whose fix has not landed: nothing found),
#   the periodic look at the watched branch, [kfix] upstream-check  (D
#     once its fix lands).
# Checked: the verdict of each (same, same-place, same-file), the event
# and the bug's state, a kill -9 of kfixd right after the push (nothing
# lost, nothing twice), the knowledge base (kfix's entry of bug A gets the
# real fix as its first lesson, C gets an entry of its own), the match
# rate in kfixctl status, /metrics and the dashboard.
. "$(dirname "$0")/lib.sh"
for t in git sqlite3 curl openssl python3 patch; do
	command -v "$t" >/dev/null || skip "$t is not installed"
done
tar=/usr/src/linux-source-6.1.tar.xz
[ -r "$tar" ] || skip "$tar missing (Debian package linux-source-6.1)"
SCEN=$top_srcdir/tests/kernel/scenarios/msg-uaf
DB=$T/state/kfix.db
q() { sqlite3 "$DB" "$1"; }
G() { git -C "$U" -c user.name="$1" -c user.email="$2" "${@:3}"; }

# ---- the upstream tree: ipc/msg.c with the scenario's bug ----
U=$T/upstream
mkdir -p "$U"
tar -xJf "$tar" -C "$U" --strip-components=1 linux-source-6.1/ipc/msg.c || skip "cannot extract ipc/msg.c"
patch -s -p1 -d "$U" < "$SCEN/bug.patch" || fail "bug.patch"
git -C "$U" init -q -b master
G Base base@example.org add -A
G Base base@example.org commit -qm "base"
BASE=$(git -C "$U" rev-parse HEAD)

# kfix's patches, against BASE: A the scenario's fix, B another repair of
# the same spot, C and D a change in another function (msgctl_down)
cp "$SCEN/fix.patch" "$T/kfix-A.diff"
cp "$SCEN/caller-breaking-fix.patch" "$T/kfix-B.diff"
rmid_check() { sed -i '0,/^\tcase IPC_RMID:$/s//\tcase IPC_RMID:\n\t\tif (!ipcp)\n\t\t\tbreak;/' "$U/ipc/msg.c"; }
rmid_check
grep -q 'if (!ipcp)' "$U/ipc/msg.c" || fail "the other-function patch did not apply"
git -C "$U" diff > "$T/kfix-C.diff"
git -C "$U" checkout -q .
cp "$T/kfix-C.diff" "$T/kfix-D.diff"

A=aaaa0000000000000a01 B=bbbb0000000000000b02 C=cccc0000000000000c03 D=dddd0000000000000d04
E=eeee0000000000000e05

port=$(free_port)
write_config
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
	upstream-check = 0
[tree "linux"]
	url = file://$U
[http]
	listen = 127.0.0.1:$port
	api-token = read-token-0123456789abcdef
[hook "gh"]
	type = forge
	provider = github
	secret = gh-secret
CONF
"$KFIXD" -c "$T/kfix.conf" --check-config >/dev/null || fail "config"
for ext in $A $B $C $D $E; do
	ctl submit --source syzbot --title "KASAN: use-after-free Read in msgctl ($ext)" --id "$ext" \
		--tree linux --commit "$BASE" >/dev/null || fail "submit $ext"
done
python3 - "$DB" "$T" "$BASE" "$(date +%s)" <<'PY'
import sqlite3, sys
db, t, base, now = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = sqlite3.connect(db)
for bug, ext, name in zip((1, 2, 3, 4), c.execute("SELECT source_id FROM bugs ORDER BY id"), "ABCD"):
    diff = open("%s/kfix-%s.diff" % (t, name)).read()
    c.execute("UPDATE bugs SET state = 'sent' WHERE id = ?", (bug,))
    c.execute("INSERT INTO patches (bug_id, version, state, subject, message, diff, explanation,"
              " evidence, base_commit, created, updated) VALUES (?, 1, 'sent', ?, ?, ?, ?, '{}', ?, ?, ?)",
              (bug, "ipc/msg: fix %s" % name, "ipc/msg: fix\n\nReported-by: syzbot+%s@x\n" % ext[0],
               diff, "Root cause.", base, now, now))
c.commit()
PY
# what kfix learnt from repairing A: an entry the real fix amends
mkdir -p "$T/state"
TITLE_A="KASAN: use-after-free Read in msgctl ($A)"
printf '{"lessons": ["kfix lesson"], "outcome": "validated", "subsystem": "ipc", "title": "%s", "type": "KASAN: use-after-free"}\n' \
	"$TITLE_A" > "$T/state/knowledge.jsonl"
printf '{"lessons": ["other"], "outcome": "validated", "subsystem": "mm", "title": "unrelated", "type": "x"}\n' \
	>> "$T/state/knowledge.jsonl"

start_kfixd
URL=http://127.0.0.1:$port
wait_for 20 curl -fs "$URL/healthz" || fail "kfixd did not come up: $(tail -5 "$T/kfixd.log")"

# ---- the tree moves on, then the developers' fixes land ----
{ printf '// SPDX-License-Identifier: GPL-2.0\n'; for i in $(seq 40); do printf '/* moved on %d */\n' "$i"; done
  tail -n +2 "$U/ipc/msg.c"; } > "$T/moved.c" && mv "$T/moved.c" "$U/ipc/msg.c"
G Other other@example.org commit -qam "ipc: unrelated change above everything"
patch -s -p1 -d "$U" < "$SCEN/fix.patch" || fail "the developers' fix"
G "Dev One" dev1@example.org commit -qam "ipc/msg: do not touch a freed message

freeque() read msg->m_ts after free_msg(msg).

Reported-by: syzbot+$A@syzkaller.appspotmail.com
Closes: https://syzkaller.appspot.com/bug?extid=$B"
DEV_AB=$(git -C "$U" rev-parse HEAD)
sed -i 's/^\tipc_update_pid(&msq->q_lspid, NULL);$/\tmsq->q_qnum = 0;\n&/' "$U/ipc/msg.c"
G "Dev Two" dev2@example.org commit -qam "ipc/msg: clear the queue count in freeque()"
DEV_C=$(git -C "$U" rev-parse HEAD)

# ---- a push to the watched branch (forge webhook), then kill -9 ----
REPO="$(basename "$T")/upstream"
push() { # REF DELIVERY: the HTTP status
	local body=$T/push-$2.json sig
	printf '{"ref":"%s","after":"%s","repository":{"full_name":"%s"},"sender":{"login":"dev"}}' \
		"$1" "$DEV_C" "$REPO" > "$body"
	sig=$(openssl dgst -sha256 -hmac gh-secret -hex < "$body" | sed 's/.* //')
	curl -s -o /dev/null -w '%{http_code}' --data-binary @"$body" -H "X-GitHub-Event: push" \
		-H "X-GitHub-Delivery: $2" -H "X-Hub-Signature-256: sha256=$sig" \
		-H "Content-Type: application/json" "$URL/hooks/forge"
}
[ "$(push refs/heads/other-branch p0)" = 200 ] || fail "push to another branch"
[ "$(q "SELECT count(*) FROM events WHERE kind = 'request.compare'")" = 0 ] ||
	fail "a push to an unwatched branch asked for comparisons"
[ "$(push refs/heads/master p1)" = 200 ] || fail "push webhook"
[ "$(q "SELECT count(*) FROM inbox WHERE detail = 'a push to a watched branch: 4 bug(s) to check'")" = 1 ] &&
	[ "$(q "SELECT count(*) FROM events WHERE kind = 'request.compare'")" = 4 ] ||
	fail "push detail: $(q "SELECT key, state, detail FROM inbox")"
kill -9 "$KFIXD_PID"; wait "$KFIXD_PID" 2>/dev/null || true
start_kfixd
fixed() { [ "$(q "SELECT count(*) FROM events WHERE kind = 'upstream.fix'")" = "$1" ]; }
wait_for 60 fixed 2 || fail "A and B not compared: $(q "SELECT id, kind, state, error FROM jobs") $(tail -5 "$T/kfixd.log")"
done_compares() { [ "$(q "SELECT count(*) FROM jobs WHERE kind = 'compare' AND state = 'done'")" = "$1" ]; }
wait_for 60 done_compares 4 || fail "compare jobs: $(q "SELECT id, bug_id, state, error FROM jobs")"
ev() { q "SELECT json_extract(detail, '$.$2') FROM events WHERE kind = 'upstream.fix' AND bug_id = $1"; }
[ "$(ev 1 verdict)" = same ] || fail "A: $(ev 1 verdict) ($(q "SELECT detail FROM events WHERE kind = 'upstream.fix' AND bug_id = 1"))"
[ "$(ev 1 matches)" = 1 ] && [ "$(ev 1 similarity)" = 1.0 ] && [ "$(ev 1 found_by)" = push ] &&
	[ "$(ev 1 commit)" = "$DEV_AB" ] && [ "$(ev 1 author)" = "Dev One <dev1@example.org>" ] ||
	fail "A: $(q "SELECT detail FROM events WHERE kind = 'upstream.fix' AND bug_id = 1")"
[ "$(ev 1 'functions.shared[0]')" = "ipc/msg.c:freeque" ] || fail "A's function: $(ev 1 functions)"
[ "$(ev 1 hunks.overlapping)" = 1 ] || fail "A's hunks: $(ev 1 hunks)"
[ "$(q "SELECT state FROM bugs WHERE id = 1")" = already-fixed ] || fail "A's state"
ok "push: A's fix found by its Reported-by, the same change (similarity 1.0, freeque)"
[ "$(ev 2 verdict)" = same-place ] && [ "$(ev 2 matches)" = 1 ] && [ "$(ev 2 commit)" = "$DEV_AB" ] ||
	fail "B: $(q "SELECT detail FROM events WHERE kind = 'upstream.fix' AND bug_id = 2")"
ok "push: B's fix found by its Closes: link, kfix changed the same place differently ($(ev 2 similarity))"
for b in 3 4; do
	[ "$(q "SELECT json_extract(result, '$.found') FROM jobs WHERE kind = 'compare' AND bug_id = $b")" = 0 ] ||
		fail "bug $b: $(q "SELECT result FROM jobs WHERE kind = 'compare' AND bug_id = $b")"
	[ "$(q "SELECT state FROM bugs WHERE id = $b")" = sent ] || fail "bug $b moved on without a fix"
done
[ "$(q "SELECT count(*) FROM jobs WHERE kind = 'compare'")" = 4 ] || fail "compare jobs after kill -9: $(q "SELECT id, bug_id FROM jobs")"
ok "kill -9 after the push: one comparison per bug; C and D: no fix in the branch yet"

# ---- the knowledge base ----
python3 - "$T/state/knowledge.jsonl" "$TITLE_A" "$DEV_AB" <<'PY' || fail "knowledge base"
import json, sys
path, title, dev = sys.argv[1:4]
es = [json.loads(l) for l in open(path)]
a = [e for e in es if e["title"] == title]
assert len(a) == 1, es
a = a[0]
assert a["lessons"][0].startswith("The fix that landed, %s (\"ipc/msg: do not touch a freed message\"), changes ipc/msg.c:freeque" % dev[:12]), a
assert "freeque() read msg->m_ts after free_msg(msg)." in a["lessons"][0], a
assert a["lessons"][1] == "kfix lesson", a
assert a["upstream"]["commit"] == dev and a["upstream"]["verdict"] == "same", a
assert a["outcome"] == "validated"
assert [e for e in es if e["title"] == "unrelated"][0]["lessons"] == ["other"]
PY
ok "knowledge base: A's entry has the real fix as its first lesson, the others are untouched"

# ---- syzbot says C and E are fixed, naming the commit ----
mkdir -p "$T/fx"
python3 - "$T/fx/list-1.json" "$C" "$E" "$DEV_C" <<'PY'
import json, sys
out, c, e, dev = sys.argv[1:5]
bugs = [{"title": "KASAN: use-after-free Read in msgctl (%s)" % x, "link": "/bug?extid=%s" % x,
         "last-updated": "2026-12-01T00:00:00Z",
         "fix-commits": [{"title": "ipc/msg: clear the queue count in freeque()", "hash": dev,
                          "repo": "git://example.org/linux.git", "branch": "master"}]} for x in (c, e)]
json.dump({"version": 1, "Bugs": bugs}, open(out, "w"))
PY
python3 "$top_srcdir/tests/fake-syzbot.py" "$T/fx" "$T/dash-port" &
PIDS="$PIDS $!"
wait_for 10 test -s "$T/dash-port" || fail "fake dashboard"
cat >> "$T/kfix.conf" <<CONF
[feed "syzbot"]
	url = http://127.0.0.1:$(cat "$T/dash-port")/
	namespace = upstream
	interval = 2s
CONF
kill -HUP "$KFIXD_PID"
wait_for 60 fixed 3 || fail "C not compared: $(q "SELECT id, kind, detail FROM events WHERE bug_id IN (3, 5)") $(tail -5 "$T/kfixd.log")"
[ "$(ev 3 verdict)" = same-file ] && [ "$(ev 3 matches)" = 0 ] && [ "$(ev 3 found_by)" = feed ] &&
	[ "$(ev 3 commit)" = "$DEV_C" ] || fail "C: $(q "SELECT detail FROM events WHERE kind = 'upstream.fix' AND bug_id = 3")"
[ "$(ev 3 'functions.developer[0]')" = "ipc/msg.c:freeque" ] && [ "$(ev 3 'functions.kfix[0]')" = "ipc/msg.c:msgctl_down" ] ||
	fail "C's functions: $(ev 3 functions)"
wait_for 10 sh -c "[ \$(sqlite3 '$DB' \"SELECT count(*) FROM events WHERE kind = 'feed.closed' AND bug_id = 5\") = 1 ]" ||
	fail "E not closed"
[ "$(q "SELECT count(*) FROM events WHERE bug_id = 5 AND kind LIKE 'request.%'")" = 0 ] || fail "E has no patch, yet was asked about"
grep -q '"title": "KASAN: use-after-free Read in msgctl ('"$C"')"' <(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("outcome") == "fixed-upstream":
        print(json.dumps({"title": e["title"]}))' "$T/state/knowledge.jsonl") || fail "C's own knowledge entry"
ok "feed: C compared with the commit syzbot named: another function of the same file; E (no patch) left alone"

# ---- kfixctl compare; then the periodic look finds D's fix ----
set +e
ctl compare 999 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "no bug 999" "$T/err" || fail "compare of a missing bug: $rc $(cat "$T/err")"
ctl compare 4 'HEAD;rm' 2>"$T/err"; rc=$?
[ $rc = 2 ] || fail "compare with a bad revision: $rc"
set -e
ctl compare 4 | grep -q "requested" || fail "kfixctl compare"
wait_for 30 done_compares 6 || fail "kfixctl compare did not run: $(q "SELECT id, bug_id, state FROM jobs")"
[ "$(q "SELECT state FROM bugs WHERE id = 4")" = sent ] || fail "D without a fix"
sed -i "s/^[[:space:]]*upstream-check = 0/\tupstream-check = 1s/" "$T/kfix.conf"
rmid_check
G "Dev Three" dev3@example.org commit -qam "ipc/msg: check ipcp in msgctl_down()

Reported-by: syzbot+$D@syzkaller.appspotmail.com"
kill -HUP "$KFIXD_PID"
wait_for 60 fixed 4 || fail "D not found by the periodic look: $(q "SELECT id, bug_id, state, result FROM jobs WHERE bug_id = 4")"
[ "$(ev 4 verdict)" = same ] && [ "$(ev 4 found_by)" = tree ] || fail "D: $(q "SELECT detail FROM events WHERE kind = 'upstream.fix' AND bug_id = 4")"
ok "kfixctl compare (nothing yet), then the periodic look: D's fix, the same change"

# ---- the rate: status, metrics, dashboard ----
ctl status | grep -q "Upstream: 4 real fixes landed; kfix's patch matched 3 (75%)" || fail "status: $(ctl status)"
m=$(curl -fs "$URL/metrics") || fail "metrics"
echo "$m" | grep -q '^kfix_upstream_fixes_compared 4$' && echo "$m" | grep -q '^kfix_upstream_fixes_matched 3$' &&
	echo "$m" | grep -q '^kfix_upstream_fix_match_ratio 0.75$' || fail "metrics: $(echo "$m" | grep upstream)"
cookie=$(curl -s -D - -o /dev/null --data-urlencode "token=read-token-0123456789abcdef" "$URL/ui/login" |
	tr -d '\r' | sed -n 's/^Set-Cookie: \([^;]*\).*/\1/Ip')
page=$(curl -fs -H "Cookie: $cookie" "$URL/ui/bugs/3") || fail "bug page"
echo "$page" | grep -q '<h2>The fix that landed</h2>' && echo "$page" | grep -q "<dd class=\"verdict\">same-file</dd>" &&
	echo "$page" | grep -q '<code>ipc/msg.c:msgctl_down</code>' || fail "bug page: $(echo "$page" | grep -A3 'fix that landed')"
hosts=$(curl -fs -H "Cookie: $cookie" "$URL/ui/hosts") || fail "hosts page"
echo "$hosts" | grep -q '<td id="match-rate">0.75</td>' || fail "hosts page rate"
ok "match rate 3 of 4 in kfixctl status, /metrics and the dashboard"
stop_kfixd
