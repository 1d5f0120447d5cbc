#!/bin/bash
# kfixctl diagnose and bundle.  diagnose reads a job's trajectory; bundle
# puts the trajectory, report and manifest in a folder to share, with
# nothing secret or personal left in it: the config's own
# secrets (a literal and one read from a file), the API tokens of the
# environment, credentials of every form the model or a tool could have
# echoed, and people's addresses, wherever in an event they stand.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"

printf 'feed-token-from-a-file-77\n' > "$T/feed.token"
write_config "[http]" "	api-token = literal-api-token-XYZ123" \
	"[feed \"syz\"]" "	token = file:$T/feed.token"
cat > "$T/report" <<'REP'
BUG: KASAN: use-after-free in msg_rcv+0x1a2/0x3c0 ipc/msg.c:1123
Reported-by: syzbot+0123abcd@syzkaller.appspotmail.com
Cc: Maintainer Person <maintainer@kernel.example>
REP
ctl submit --title "KASAN: use-after-free in msg_rcv" --id b1 --report "$T/report" >/dev/null ||
	fail "submit"
sqlite3 "$T/state/kfix.db" "INSERT INTO jobs (id, bug_id, kind, state, attempts, max_attempts, error, created)
	VALUES (5, 1, 'repair', 'failed', 1, 3,
	        'push to https://bot:push-pass-5150@git.example.org/x.git failed', 0)"
mkdir -p "$T/state/jobs/5"
KFIX_API_TOKEN=env-admin-token-31337 python3 - "$T/state/jobs/5/trajectory.jsonl" <<'PY'
import json, sys
ev = [
 {"id": 1, "step": "run", "kind": "run.start", "input": {"model": "m", "api_key": "opaque-key-value-1"}},
 {"id": 2, "parent": 1, "step": "localise", "kind": "llm.call",
  "input": {"messages": [{"role": "user", "content": "Authorization: Bearer abc.def-ghi_0123456789"}]},
  "output": {"text": "use sk-ant-api03-ZYXWVUTSRQPONMLKJIHG0123 and mail alice@example.org"},
  "tokens": {"in": 120, "out": 30}, "cost": 0.01},
 {"id": 3, "parent": 1, "step": "patch", "kind": "tool.build",
  "input": {"cmd": "git clone https://alice:literal-api-token-XYZ123@h/x"},
  "output": {"log": "feed-token-from-a-file-77 in the log; ALICE@example.org again"},
  "error": "password=hunter22 refused", "verdict": "failed"},
 {"id": 4, "parent": 1, "step": "run", "kind": "run.end", "verdict": "failed",
  "output": {"alice@example.org": "a key that is an address",
             "env": "token env-admin-token-31337"}},
]
with open(sys.argv[1], "w") as f:
    for e in ev:
        f.write(json.dumps(e) + "\n")
PY

KFIX_API_TOKEN=env-admin-token-31337 ctl bundle --output "$T/b" 5 > "$T/out" ||
	fail "bundle: $(cat "$T/out")"
grep -q "job 5, 4 events" "$T/out" || fail "summary line: $(cat "$T/out")"
for f in manifest.json trajectory.jsonl report.txt; do
	[ -s "$T/b/$f" ] || fail "$f missing"
done
for s in opaque-key-value-1 abc.def-ghi_0123456789 sk-ant-api03 alice@ ALICE@ literal-api-token-XYZ123 \
	feed-token-from-a-file-77 hunter22 env-admin-token-31337 push-pass-5150 syzbot+0123abcd \
	maintainer@kernel.example; do
	! grep -rqF -- "$s" "$T/b" || fail "'$s' left in the bundle: $(grep -rF -- "$s" "$T/b")"
done
# still a bundle: valid JSON, the story kept, one person one placeholder
python3 - "$T/b" <<'PY' || fail "bundle content"
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
ev = [json.loads(l) for l in open(d + "/trajectory.jsonl")]
assert m["schema"] == 1 and m["scrubbed"] is True, m
assert m["job"] == {"id": 5, "kind": "repair", "state": "failed", "attempts": 1,
                    "error": m["job"]["error"]}, m["job"]
assert "git.example.org/x.git failed" in m["job"]["error"], m["job"]
assert m["bug"]["title"] == "KASAN: use-after-free in msg_rcv", m["bug"]
assert m["counts"]["events"] == 4 and m["counts"]["summary"]["llm_calls"] == 1, m["counts"]
assert m["redactions"] >= 12, m["redactions"]
assert m["diagnosis"]["family"] == "localisation" and m["diagnosis"]["event"] == 2, m["diagnosis"]
assert sorted(m["files"]) == ["manifest.json", "report.txt", "trajectory.jsonl"], m["files"]
assert [e["kind"] for e in ev] == ["run.start", "llm.call", "tool.build", "run.end"]
assert ev[1]["tokens"] == {"in": 120, "out": 30}
a = ev[1]["output"]["text"].split("mail ")[1]
assert a in ev[2]["output"]["log"] and a in ev[3]["output"], (a, ev)
rep = open(d + "/report.txt").read()
assert "ipc/msg.c:1123" in rep, rep
PY
ok "a bundle keeps the story and none of the secrets or addresses"

set +e
ctl bundle --output "$T/b" 5 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "cannot create" "$T/err" || fail "an existing folder: rc $rc $(cat "$T/err")"
ctl bundle --output "$T/c" 99 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "no job 99" "$T/err" && [ ! -e "$T/c" ] || fail "a missing job: rc $rc $(cat "$T/err")"
ctl bundle 2>"$T/err"; [ $? = 2 ] || fail "no job: not a usage error"
ctl bundle x 2>"$T/err"; [ $? = 2 ] || fail "a bad id: not a usage error"
set -e
# a job that left no trajectory still gives a bundle
sqlite3 "$T/state/kfix.db" "INSERT INTO jobs (id, bug_id, kind, state, attempts, max_attempts, created)
	VALUES (6, 1, 'reproduce', 'done', 1, 3, 0)"
ctl bundle --output "$T/d" 6 >/dev/null || fail "bundle of a job without trajectory"
[ ! -s "$T/d/trajectory.jsonl" ] && [ -s "$T/d/manifest.json" ] || fail "empty trajectory"
ok "refusals: an existing folder, a missing job, bad operands"

# diagnose: the run asked the model for locations and got none
ctl diagnose 5 > "$T/diag" || fail "diagnose: $(cat "$T/diag")"
grep -q "^Failure: *localisation" "$T/diag" && grep -q "^Step: *localise (event 2)" "$T/diag" &&
	grep -q "^Rerun from: *localise" "$T/diag" || fail "diagnose: $(cat "$T/diag")"
printf 'diff --git a/ipc/msg.c b/ipc/msg.c\n--- a/ipc/msg.c\n+++ b/ipc/msg.c\n@@ -1 +1 @@\n-a\n+b\n' > "$T/fix"
[ "$(ctl diagnose --fix "$T/fix" --json 5 | json_field 'j["recovery"]["directive"]')" != "" ] ||
	fail "diagnose --json"
ctl diagnose --fix "$T/fix" --json 5 | json_field 'j["recovery"]["directive"]' | grep -q "ipc/msg.c" ||
	fail "the directive does not name the fixed file"
set +e
ctl diagnose 6 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "left no trajectory" "$T/err" || fail "no trajectory: rc $rc $(cat "$T/err")"
ctl diagnose --fix "$T/nothing" 5 2>"$T/err"; [ $? = 2 ] || fail "a missing fix file: $(cat "$T/err")"
ctl diagnose --fix "$T/report" 5 2>"$T/err"; [ $? = 2 ] && grep -q "changes no file" "$T/err" ||
	fail "a fix that is no diff: $(cat "$T/err")"
set -e
ok "diagnose: the family, step, event and recovery; bad input refused"

# diagnose --llm: a scripted model on loopback.  Its first answer quotes
# event 2 word for word and stands; its second quotes what event 2 never
# said and is refused, the rules' diagnosis kept
cat > "$T/script.json" <<'J'
[{"tool": "attribute_failure", "args": {"family": "localisation", "event": 2,
  "evidence": "and mail person1@redacted.invalid", "why": "the model never named a place",
  "directive": "Start from msg_rcv() in ipc/msg.c.", "from": "localise"}},
 {"tool": "attribute_failure", "args": {"family": "gates", "event": 2,
  "evidence": "the silence gate rejected every patch", "why": "gates",
  "directive": "Do not silence the report.", "from": "patch"}}]
J
python3 "$top_srcdir/tests/agent/llm-server.py" --script "$T/script.json" --log "$T/llm.log" \
	--port-file "$T/llm.port" &
PIDS="$PIDS $!"
wait_for 10 test -s "$T/llm.port" || fail "the scripted model did not start"
printf '[llm "judge"]\n\tprovider = openai\n\turl = http://127.0.0.1:%s/v1\n\tmodel = m\n\tretries = 0\n' \
	"$(cat "$T/llm.port")" >> "$T/kfix.conf"
ctl diagnose --llm judge 5 > "$T/diag" || fail "diagnose --llm: $(cat "$T/diag")"
grep -q "^Directive: *Start from msg_rcv() in ipc/msg.c." "$T/diag" &&
	grep -q "^Model: *its diagnosis, checked" "$T/diag" || fail "the model's diagnosis: $(cat "$T/diag")"
# what the model was shown: every event's line, scrubbed as a bundle is,
# and the rules' diagnosis
for s in sk-ant-api03 alice@ literal-api-token-XYZ123 feed-token-from-a-file-77 hunter22; do
	! grep -qF -- "$s" "$T/llm.log" || fail "'$s' was shown to the model"
done
python3 - "$T/llm.log" <<'PY' || fail "the model's request"
import json, sys
req = json.loads(open(sys.argv[1]).readline())["body"]
user = req["messages"][-1]["content"]
assert "#2 localise llm.call" in user and "and mail person1@redacted.invalid" in user, user
assert "Rules over these events say: localisation at event 2" in user, user
PY
ctl --json diagnose --llm judge 5 > "$T/diag.json" || fail "diagnose --llm --json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["model"] == {"accepted": False, "refusal": "the quote is not in event 2'"'"'s text"}, d["model"]
assert d["family"] == "localisation" and "Start from" not in d["recovery"]["directive"], d
' "$T/diag.json" || fail "a made-up quote: $(cat "$T/diag.json")"
set +e
ctl diagnose --llm nosuch 5 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "the model" "$T/err" || fail "an unknown model: rc $rc $(cat "$T/err")"
set -e
ok "diagnose --llm: a model's diagnosis stands only when its quote is in the event it names"

# rerun: the diagnosis's recovery as a new repair job for the bug
set +e
ctl rerun --from nowhere 5 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "never reached step nowhere" "$T/err" || fail "unknown step: rc $rc $(cat "$T/err")"
ctl rerun --from 77 5 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "has no event 77" "$T/err" || fail "unknown event: rc $rc $(cat "$T/err")"
ctl rerun 6 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "is a reproduce job" "$T/err" || fail "a reproduce job rerun: rc $rc $(cat "$T/err")"
ctl rerun 99 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "no such job" "$T/err" || fail "a missing job: rc $rc $(cat "$T/err")"
ctl rerun 2>"$T/err"; [ $? = 2 ] || fail "rerun without a job: not a usage error"
set -e
[ "$(sqlite3 "$T/state/kfix.db" "SELECT count(*) FROM jobs WHERE kind = 'repair'")" = 1 ] ||
	fail "a refused rerun queued a job"
set +e
ctl rerun 5 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "cannot go back to repairing" "$T/err" || fail "a new bug rerun: rc $rc $(cat "$T/err")"
set -e
sqlite3 "$T/state/kfix.db" "UPDATE bugs SET state = 'gave-up' WHERE id = 1"
ctl --json rerun 5 > "$T/rerun" || fail "rerun: $(cat "$T/rerun")"
python3 - "$T/rerun" "$T/state/kfix.db" <<'PY' || fail "the rerun job"
import json, sqlite3, sys
r = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
kind, state, args = db.execute("SELECT kind, state, args FROM jobs WHERE id = ?", (r["job"],)).fetchone()
a = json.loads(args)
assert r["rerun_of"] == 5 and r["from"] == "localise", r
assert kind == "repair" and state == "queued" and a["rerun_of"] == 5 and a["from"] == "localise", (kind, state, a)
# no --from: the diagnosis's recovery, its directive included
assert a["directive"] == r["directive"] and "function" in a["directive"], a
assert db.execute("SELECT state FROM bugs WHERE id = 1").fetchone()[0] == "repairing"
PY
set +e
ctl rerun --from 2 5 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "already working on bug 1" "$T/err" || fail "a second rerun while one is queued: rc $rc $(cat "$T/err")"
set -e
sqlite3 "$T/state/kfix.db" "UPDATE jobs SET state = 'cancelled' WHERE kind = 'repair' AND id != 5;
	UPDATE bugs SET state = 'gave-up' WHERE id = 1"
ctl --json rerun --from 2 --directive 'Read ipc/util.c first.' 5 | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["from"] == "localise" and r["directive"] == "Read ipc/util.c first.", r' ||
	fail "rerun --from an event id with a directive"
ok "rerun: a repair job for the bug, live from the diagnosed step or the one named, refusals"
echo PASS
