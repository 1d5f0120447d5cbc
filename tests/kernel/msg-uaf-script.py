#!/usr/bin/env python3
"""The scripted model's answers for a repair of the msg-uaf scenario inside
kfixd (tests/kernel/pipeline.sh, e2e.sh): locations, a probe, a
hypothesis, the scenario's own fix and the explanation.  With --v2, then
the answers of the new version a review asks for (e2e.sh): the same fix
with the comment the reviewer wanted, and the changelog.
Usage: msg-uaf-script.py SCENARIO-FOLDER [--v2] > script.json"""
import json, sys
scen = sys.argv[1]
def edits(patch):
    before, after = [], []
    for l in open(patch).read().splitlines()[3:]:
        if l.startswith('@@'):
            continue
        if l[:1] in (' ', '-'):
            before.append(l[1:])
        if l[:1] in (' ', '+'):
            after.append(l[1:])
    return [{"file": "ipc/msg.c", "before": "\n".join(before) + "\n",
             "after": "\n".join(after) + "\n", "why": "scenario"}]
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
   "fix_idea": "do not account q_cbytes per message: the queue is destroyed"}]}},
  {"tool": "propose_patch", "args": {"patch_type": "root-cause fix", "edits": edits(scen + "/fix.patch")}},
  {"tool": "write_explanation", "args": {"subject": "ipc/msg: do not read a message after freeing it in freeque()",
   "body": "freeque() subtracts msg->m_ts from q_cbytes after free_msg(msg) has freed the message, so KASAN reports a use-after-free read when a queue with pending messages is removed. The queue is being destroyed, so the byte count needs no update per message: drop the subtraction.",
   "root_cause": "read after free in freeque()"}},
]
v1 = steps
if "--v2" in sys.argv[2:]:
    v2_edits = [{"file": "ipc/msg.c",
                 "before": "\t\tfree_msg(msg);\n\t\tmsq->q_cbytes -= msg->m_ts;\n\t}\n"
                           "\tpercpu_counter_sub_local(&ns->percpu_msg_bytes, msq->q_cbytes);\n",
                 "after": "\t\tfree_msg(msg);\n\t}\n"
                          "\t/* the queue goes away: all of its bytes go at once */\n"
                          "\tpercpu_counter_sub_local(&ns->percpu_msg_bytes, msq->q_cbytes);\n",
                 "why": "the reviewer asked why no per-message update is needed"}]
    steps = v1 + v1[:4] + [
      {"tool": "propose_patch", "args": {"patch_type": "root-cause fix", "edits": v2_edits}},
      v1[5],
      {"text": "- Say in a comment why the queue's byte count needs no update per message, as Mod Erator asked."},
    ]
print(json.dumps(steps))
