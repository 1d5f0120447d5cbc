#!/bin/bash
# The repair pipeline inside kfixd on a real kernel, nobody touching it: a
# bug of the msg-uaf scenario (Debian's linux-source-6.1 with an injected
# use-after-free in ipc/msg.c, KASAN) is submitted with local files; kfixd
# reproduces it on the base kernel (qemu on a VM host that is a real sshd
# on 127.0.0.1), repairs it with the scripted model speaking the OpenAI
# API on loopback, validates the fix and mails it to the moderation
# address (spool transport).  The tree is the prepared source folder (a
# plain folder: [tree] path, mail only, no branch).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_setup
S=$kt_here/scenarios/msg-uaf
top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}
KFIXD=${top_builddir:-.}/kfixd
[ -x "$KFIXD" ] || KFIXD=${top_builddir:-.}/daemon/kfixd
started=$(date +%s)
EXTID=0123456789abcdef0123

# the crash as syzbot reports it: freeque() is inlined into ksys_msgctl(),
# which syzkaller titles "msgctl"
cp "$S/report.txt" "$T/report"
"$KFIXCTL" report parse "$T/report" | grep -q '^title: *KASAN: use-after-free Read in msgctl$' ||
	kt_fail "the report's title: $("$KFIXCTL" report parse "$T/report" | head -1)"

# The model's script: locations, a probe, a hypothesis, the scenario's fix
# and the explanation.  The tree is a plain folder, which the exploration
# tools cannot read (they work on git history): none are offered.
python3 "$kt_here/repairmodel.py" script "$S" --flow fix --no-tools > "$T/script.json" || kt_fail "script"

PORT_FILE=$T/llm.port
python3 "$top_srcdir/tests/agent/llm-server.py" --script "$T/script.json" --log "$T/llm.log" \
	--port-file "$PORT_FILE" &
KT_PIDS+=($!)
for i in $(seq 100); do [ -s "$PORT_FILE" ] && break; sleep 0.1; done
[ -s "$PORT_FILE" ] || kt_fail "scripted model did not start"
cat >> "$T/kfix.conf" <<CFG
[kfix]
	log-level = debug
	job-attempts = 1
	job-timeout = 2h
[mail]
	# unsigned syzbot mails here: DKIM is tested in mail-auth.sh
	syzbot-auth = none
	transport = spool
	spool-dir = $T/spool
	from = kfix bot <kfix@kfix.example.org>
[tree "msg"]
	path = $KT_SRC
	config = $KT_CONFIG
	moderation-address = moderation@example.org
[llm "scripted"]
	provider = openai
	url = http://127.0.0.1:$(cat "$PORT_FILE")/v1
	model = scripted-msg-uaf
	retries = 1
	backoff = 100ms
	price-input = 3
	price-output = 15
[agent]
	llm = scripted
	prompts-dir = $top_srcdir/agent/prompts
	base-runs = 1
	validate-runs = 2
	locations = 2
	minimise = false
	record = yes
CFG
"$KFIXD" -c "$T/kfix.conf" --check-config || kt_fail "config"
"$KFIXCTL" -c "$T/kfix.conf" submit --source syzbot --id "$EXTID" \
	--title "KASAN: use-after-free Read in msgctl" --tree msg --report "$T/report" \
	--repro "$S/repro.c" > /dev/null || kt_fail "submit"
"$KFIXD" -c "$T/kfix.conf" --log-target stderr 2> "$T/kfixd.log" &
KFIXD_PID=$!
KT_PIDS+=("$KFIXD_PID")

# nobody touches it: wait for the patch mail (or a dead end)
state=
for i in $(seq 3600); do
	kt_kfixctl bug 1 && state=$(kt_json 'd["state"]')
	case "$state" in
	not-reproducible|gave-up|already-fixed) break ;;
	esac
	ls "$T"/spool/*.eml >/dev/null 2>&1 && break
	kill -0 "$KFIXD_PID" 2>/dev/null || break
	[ $((i % 60)) = 0 ] && kt_log "bug 1: $state ($(( $(date +%s) - started ))s)"
	sleep 1
done
kt_kfixctl jobs
python3 -c 'import json,sys; [print(j["id"], j["kind"], j["state"], j.get("error") or "") for j in json.load(open(sys.argv[1]))]' "$T/out.json" >&2
mail=$(ls "$T"/spool/*.eml 2>/dev/null | head -1)
[ -n "$mail" ] || { tail -40 "$T/kfixd.log" >&2; kt_fail "no patch mail (bug 1 is $state)"; }
kt_log "patch mailed for moderation after $(( $(date +%s) - started ))s"
# the jobs record their end just after what they queued
for i in $(seq 300); do
	[ "$(sqlite3 -cmd '.timeout 5000' "$T/state/kfix.db" "SELECT count(*) FROM jobs WHERE bug_id = 1 AND state != 'done'")" = 0 ] && break
	sleep 0.1
done

# the states the bug went through, the repair job's result: outputs in
# its folder, LLM usage, and the base kernel built and run once (by the
# reproduce job) for the whole pipeline
python3 - "$T/state/kfix.db" "$T/script.json" > "$T/repair-job" <<'PY' || kt_fail "bug history or repair job"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
# one model call per step of the script, 100 tokens in and 20 out each
n = len(json.load(open(sys.argv[2])))
state, = db.execute("SELECT state FROM bugs WHERE id = 1").fetchone()
assert state == "awaiting-approval", state
moves = [d for d, in db.execute("SELECT detail FROM events WHERE bug_id = 1 AND kind = 'bug.state' ORDER BY id")]
order = ["new -> reproducing", "reproducing -> repairing", "repairing -> validated",
         "validated -> awaiting-approval"]
seen = [next(i for i, m in enumerate(moves) if m.startswith(o)) for o in order]
assert seen == sorted(seen), moves
jobs = db.execute("SELECT id, kind, state, result FROM jobs WHERE bug_id = 1 ORDER BY id").fetchall()
assert [(k, s) for _, k, s, _ in jobs] == [("reproduce", "done"), ("repair", "done"), ("publish", "done")], jobs
rid, _, _, res = jobs[1]
r = json.loads(res)
assert r["result"] == "validated", r
assert r["llm"]["calls"] == n and r["llm"]["tokens_in"] == 100 * n and r["llm"]["tokens_out"] == 20 * n, r["llm"]
assert abs(r["llm"]["cost"] - (100 * n * 3 + 20 * n * 15) / 1e6) < 1e-9, r["llm"]
assert r["builds"] == 2 and r["runs"] == 2, r  # probe and patched
assert r["patch"] == 1, r
assert db.execute("SELECT count(*) FROM patches").fetchone()[0] == 1
# what /metrics shows: the jobs' builds, VM runs and model calls
m = {(n, l): (v, c) for n, l, v, c in db.execute("SELECT name, labels, value, count FROM metrics")}
def total(name, **labels):
    return sum(v for (n, l), (v, c) in m.items()
               if n == name and all(f'{k}="{x}"' in l for k, x in labels.items()))
# the base (reproduce job) and the patched kernel at least
assert total("kfix_builds_total", result="ok") >= 2, m
assert total("kfix_builds_total") == total("kfix_builds_total", result="ok"), m
assert total("kfix_vm_runs_total", outcome="crashed") >= 1, m      # base
assert total("kfix_vm_runs_total", outcome="no-crash") >= 1, m     # patched
assert total("kfix_llm_calls_total", result="ok") == n, m
assert total("kfix_llm_tokens_total") == 120 * n, m
print(rid)
PY
rj=$(cat "$T/repair-job")
# the crash the reproduce job saw, symbolised with the base's vmlinux
# (freeque() is inlined into ksys_msgctl()), kept with the bug
"$KFIXCTL" -c "$T/kfix.conf" bug 1 > "$T/bug.txt" || kt_fail "kfixctl bug 1"
grep -q '^Guilty file: *ipc/msg\.c$' "$T/bug.txt" || kt_fail "guilty file: $(cat "$T/bug.txt")"
grep -q '^Reproduced crash:$' "$T/bug.txt" || kt_fail "no reproduced crash: $(cat "$T/bug.txt")"
grep -Eq '^  .*freeque ipc/msg\.c:[0-9]+ \[inline\]' "$T/bug.txt" ||
	kt_fail "the reproduced crash is not symbolised: $(sed -n '/^Reproduced crash:/,$p' "$T/bug.txt")"
kt_kfixctl bug 1
[ -s "$(kt_json 'd["crash_report"]')" ] || kt_fail "crash_report: $(cat "$T/out.json")"
for f in trajectory.jsonl explanation.md fix.diff commit-message.txt outcome.json; do
	[ -s "$T/state/jobs/$rj/$f" ] || kt_fail "no $f in the repair job's folder"
done
"$KFIXCTL" -c "$T/kfix.conf" trace "$rj" > "$T/trace.txt" || kt_fail "kfixctl trace $rj"
# [agent] record: the job's exchanges with the model, which the demo
# replays (KFIX_RECORD_CASSETTE=1 refreshes the demo's copy)
[ "$(wc -l < "$T/state/jobs/$rj/cassette.jsonl")" = "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$T/script.json")" ] ||
	kt_fail "the job's cassette"
if [ "${KFIX_RECORD_CASSETTE:-0}" = 1 ]; then
	cp "$T/state/jobs/$rj/cassette.jsonl" "$S/pipeline-cassette.jsonl" || kt_fail "keeping the cassette"
	kt_log "recorded $S/pipeline-cassette.jsonl"
fi

# the moderation mail
python3 - "$mail" <<'PY' || kt_fail "headers: $(sed '/^$/q' "$mail")"
import email, re, sys
m = email.message_from_file(open(sys.argv[1]))
subject = " ".join(m["Subject"].split())
assert subject == "[PATCH RFC] ipc/msg: do not read a message after freeing it in freeque()", subject
assert m["To"] == "moderation@example.org", m["To"]
assert re.fullmatch(r"<kfix-1-v1-rfc\.[0-9a-f]{12}@kfix\.example\.org>", m["Message-ID"]), m["Message-ID"]
PY
grep -q '^-		msq->q_cbytes -= msg->m_ts;' "$mail" || kt_fail "the fix is not in the mail"
grep -q '^Reported-by: syzbot+0123456789abcdef0123@syzkaller.appspotmail.com$' "$mail" || kt_fail "Reported-by"
grep -q '^Assisted-by: kfix:scripted-msg-uaf$' "$mail" || kt_fail "Assisted-by"
grep -q 'crashed 1 of 1: KASAN: use-after-free Read in msgctl' "$mail" || kt_fail "base row"
grep -q 'survived 2 of 2' "$mail" || kt_fail "patched row"
grep -q 'Signed-off-by' "$mail" && kt_fail "the bot signed off"
kt_kfixctl patch 1
[ "$(kt_json 'd["state"]')" = awaiting-approval ] || kt_fail "patch state"
kt_log "moderation mail checked"

# "#kfix retest" from the moderator (as the mail intake records it): the
# patch is validated again and the verdict answered in its thread
python3 - "$T/state/kfix.db" <<'PY' || kt_fail "request event"
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO events (ts, bug_id, job_id, kind, detail) VALUES (?, 1, 0, 'request.retest', ?)",
           (int(time.time()), '{"by": "mod@example.org", "name": "Mod Erator <mod@example.org>", "via": "mail"}'))
db.commit()
PY
for i in $(seq 900); do
	[ -n "$(ls "$T"/spool/*retest*.eml 2>/dev/null)" ] && break
	kill -0 "$KFIXD_PID" 2>/dev/null || break
	sleep 1
done
reply=$(ls "$T"/spool/*retest*.eml 2>/dev/null | head -1)
[ -n "$reply" ] || { tail -20 "$T/kfixd.log" >&2; kt_fail "no retest reply"; }
python3 - "$T/state/kfix.db" "$reply" <<'PY' || kt_fail "retest"
import email, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
d, = db.execute("SELECT detail FROM events WHERE kind = 'retest.result'").fetchone()
d = json.loads(d)
assert d["result"] == "validated" and d["patch"] == 1, d
assert d["base_kernel"] == "crashed 1 of 1: KASAN: use-after-free Read in msgctl", d
assert d["patched_kernel"] == "survived 2 of 2", d
m = email.message_from_file(open(sys.argv[2]))
assert m["To"] == "Mod Erator <mod@example.org>", m["To"]
sid, = db.execute("SELECT value FROM kv WHERE key = 'store.id'").fetchone()
assert m["In-Reply-To"] == "<kfix-1-v1-rfc.%s@kfix.example.org>" % sid, m["In-Reply-To"]
assert "Result: validated" in m.get_payload(), m.get_payload()
PY
kt_log "retest answered"
kill "$KFIXD_PID"
wait "$KFIXD_PID" 2>/dev/null
kt_no_leaks
kt_log "PASS in $(( $(date +%s) - started ))s"
echo PASS
