#!/bin/bash
# The repair agent end to end on a real kernel: kfixctl repair on the
# msg-uaf scenario (Debian's linux-source-6.1 with an injected
# use-after-free in ipc/msg.c, KASAN, qemu on a VM host that is a real
# sshd on 127.0.0.1) with the scripted model speaking the OpenAI API on
# loopback.  The model asks for probes, states a hypothesis, proposes a
# cheating patch (rejected by a gate), a wrong patch (fails validation,
# reflection follows) and the right one (validated, minimised, explained).
# The run is recorded to a cassette.  (Replays on the real kernel are
# tested by demo.sh and e2e.sh: this flow's failed attempts quote console
# excerpts that differ from run to run, so it does not replay.)
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_setup
S=$kt_here/scenarios/msg-uaf
top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}
export KFIX_PROMPTS_DIR="$top_srcdir/agent/prompts"
started=$(date +%s)

# The report as syzbot mails it: freeque() and msgctl_down() are inlined
# into ksys_msgctl(), which gives the bug its title.
cp "$S/report.txt" "$T/report"

# The model's script: edits come from the scenario's own patches.
python3 - "$S" "$KT_SRC/ipc/msg.c" > "$T/script.json" <<'PY' || kt_fail "script"
import json, sys
scen, msg_c = sys.argv[1], sys.argv[2]
def edits(patch):
    out, before, after = [], [], []
    for l in open(patch).read().splitlines()[3:]:
        if l.startswith('@@'):
            continue
        if l[:1] in (' ', '-'):
            before.append(l[1:])
        if l[:1] in (' ', '+'):
            after.append(l[1:])
    return [{"file": "ipc/msg.c", "before": "\n".join(before) + "\n", "after": "\n".join(after) + "\n",
             "why": "scenario"}]
src = open(msg_c).read().splitlines()
# an edit the fix does not need: a comment line far from the bug
note = next(l for l in src[20:200] if l.startswith(" * ") and src.count(l) == 1 and len(l) < 60)
loop = "\tlist_for_each_entry_safe(msg, t, &msq->q_messages, m_list) {\n"
right = edits(scen + "/fix.patch") + [{"file": "ipc/msg.c", "before": note + "\n",
                                       "after": note + " (see freeque)\n", "why": "note"}]
steps = [
  {"tool": "propose_location", "args": {"file": "ipc/msg.c", "function": "freeque",
   "start_line": 275, "end_line": 300, "reason": "the queue's messages are freed here"}},
  {"tool": "no_more_locations", "args": {"reason": "the report points here"}},
  {"tool": "request_probes", "args": {"why": "which message is touched after free_msg()",
   "edits": [{"file": "ipc/msg.c",
              "before": "\t\tpercpu_counter_sub_local(&ns->percpu_msg_hdrs, 1);\n\t\tfree_msg(msg);\n",
              "after": "\t\tpercpu_counter_sub_local(&ns->percpu_msg_hdrs, 1);\n"
                       "\t\tpr_err(\"kfix-probe freeing msg=%px m_ts=%zu\\n\", msg, msg->m_ts);\n"
                       "\t\tfree_msg(msg);\n"}]}},
  {"tool": "state_hypotheses", "args": {"hypotheses": [{
   "root_cause": "freeque() reads msg->m_ts after free_msg(msg) has freed the message",
   "evidence": "KASAN use-after-free read in freeque; the probe shows the message freed just before",
   "fix_idea": "account q_cbytes before freeing, or not at all since the queue is destroyed"}]}},
  {"tool": "propose_patch", "args": {"patch_type": "workaround", "edits": [{"file": "ipc/msg.c",
   "before": loop, "after": "\treturn;\n" + loop}]}},
  {"tool": "reflect", "args": {"analysis": "returning early leaks the queue", "next": "new_patch",
   "lessons": ["the messages must still be freed"]}},
  {"tool": "propose_patch", "args": {"patch_type": "defensive check", "edits": edits(scen + "/wrong-fix.patch")}},
  {"tool": "reflect", "args": {"analysis": "msg is never NULL; the read still follows the free",
   "next": "new_patch", "lessons": ["do not read a message after free_msg()"]}},
  {"tool": "propose_patch", "args": {"patch_type": "root-cause fix", "edits": right}},
  {"tool": "write_explanation", "args": {"subject": "ipc/msg: do not read a message after freeing it in freeque()",
   "body": "freeque() subtracts msg->m_ts from q_cbytes after free_msg(msg) has freed the message, so KASAN reports a use-after-free read when a queue with pending messages is removed. The queue is being destroyed, so the byte count needs no update per message: drop the subtraction.",
   "root_cause": "read after free in freeque()"}},
]
print(json.dumps(steps))
PY

PORT_FILE=$T/llm.port
python3 "$top_srcdir/tests/agent/llm-server.py" --script "$T/script.json" --log "$T/llm.log" \
	--port-file "$PORT_FILE" &
KT_PIDS+=($!)
for i in $(seq 100); do [ -s "$PORT_FILE" ] && break; sleep 0.1; done
[ -s "$PORT_FILE" ] || kt_fail "scripted model did not start"
cat >> "$T/kfix.conf" <<CFG
[agent]
	base-runs = 1
	validate-runs = 2
	locations = 2
CFG
cat >> "$T/kfix.conf" <<CFG
[llm "scripted"]
	provider = openai
	url = http://127.0.0.1:$(cat "$PORT_FILE")/v1
	model = scripted-msg-uaf
	retries = 1
	backoff = 100ms
	price-input = 3
	price-output = 15
CFG

"$KFIXCTL" -c "$T/kfix.conf" repair --src "$KT_SRC" --config "$KT_CONFIG" --repro "$S/repro.c" \
	--report "$T/report" --llm scripted --record "$T/cassette" --out "$T/out" \
	--syzbot-id 0123456789abcdef0123 > "$T/repair.txt" 2> "$T/progress.txt"
rc=$?
cat "$T/progress.txt" >&2
[ $rc = 0 ] || { cat "$T/repair.txt" >&2; kt_fail "repair did not validate (exit $rc)"; }
kt_log "repair validated in $(( $(date +%s) - started ))s"

# verdicts and order in the trajectory
python3 - "$T/out/trajectory.jsonl" <<'PY' || kt_fail "trajectory"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
v = [(e["kind"], e.get("verdict")) for e in ev]
assert ("tool.probe", "crashed") in v, v
probe = [e for e in ev if e["kind"] == "tool.probe"][0]
assert "kfix-probe freeing msg=" in probe["output"]["probe_lines"], probe
gates = [e for e in ev if e["kind"] == "gate"]
assert gates[0]["verdict"] == "rejected", gates[0]
assert any(g["gate"] == "amputation" and g["verdict"] == "reject" for g in gates[0]["output"]["gates"])
obs = [e["verdict"] for e in ev if e["kind"] == "observation" and e.get("verdict")]
assert obs[:2] == ["same-crash", "validated"], obs
assert sum(1 for e in ev if e["kind"] == "reflection") == 2
assert ("plan", "hunk not needed") in v, v
assert v[-1] == ("run.end", "validated"), v[-1]
PY
diff=$(sed -n '/^---$/,$p' "$T/out/0001-fix.patch")
echo "$diff" | grep -q '^-		msq->q_cbytes -= msg->m_ts;' || kt_fail "the fix is not in the patch"
echo "$diff" | grep -q 'see freeque' && kt_fail "minimisation kept the unneeded hunk"
msg=$T/out/commit-message.txt
grep -q '^ipc/msg: do not read a message after freeing it in freeque()$' "$msg" || kt_fail "subject"
grep -q '^Reported-by: syzbot+0123456789abcdef0123@syzkaller.appspotmail.com$' "$msg" || kt_fail "Reported-by"
grep -q '^Closes: https://syzkaller.appspot.com/bug?extid=0123456789abcdef0123$' "$msg" || kt_fail "Closes"
grep -q '^Assisted-by: kfix:scripted-msg-uaf$' "$msg" || kt_fail "Assisted-by"
grep -q 'Signed-off-by' "$msg" && kt_fail "Signed-off-by added"
awk 'length > 75 { exit 1 }' "$msg" || kt_fail "a line over 75 columns"
grep -q '^| patched | 2 | 0 | 2 |' "$T/out/explanation.md" || kt_fail "reproduction table"
"$KFIXCTL" trace "$T/out" > "$T/trace.txt" || kt_fail "trace"
cat "$T/trace.txt" | tail -3 >&2
kt_no_leaks

# The run was recorded: one exchange per model call.
[ "$(wc -l < "$T/cassette")" = 10 ] || kt_fail "the cassette holds $(wc -l < "$T/cassette") exchanges, not 10"
kt_no_leaks
kt_log "PASS in $(( $(date +%s) - started ))s"
echo PASS
