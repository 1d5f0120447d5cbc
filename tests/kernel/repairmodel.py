#!/usr/bin/env python3
"""The scripted model of the kernel tests, one script per scenario, and the
checks of what a repair driven by it must produce.

  repairmodel.py script SCENARIO-FOLDER [--flow fix|repair|v2] [--no-tools] > script.json
  repairmodel.py check SCENARIO-FOLDER OUT-FOLDER CASSETTE BASE-COMMIT

The "fix" flow answers a repair inside kfixd (pipeline.sh, e2e.sh):
locations, a probe, a hypothesis, the scenario's own fix, the explanation.
The "repair" flow (repair-*.sh) is the whole search: after the probe and
the hypothesis the model first cheats (a gate must reject it), then
proposes the scenario's wrong fix (validation must fail, reflection
follows), in timer-kclock a patch whose kernel does not boot (a failed
attempt; reflection on its console), then the right fix with one hunk it
does not need (validated, reviewed against the callers it looks up,
minimised, reviewed again, explained).  The "v2" flow (e2e.sh, msg-uaf) is the "fix" flow
followed by the new version a review asks for: the same fix with the
comment the reviewer wanted, and the changelog.  Edits of the fixes come from the scenario's own
patches, one search/replace edit per hunk."""
import json
import os
import re
import sys


def edits(patch, why="scenario"):
    """Search/replace edits, one per hunk, of a unified diff."""
    out, path, before, after = [], None, None, None

    def flush():
        if before is not None:
            out.append({"file": path, "before": "\n".join(before) + "\n",
                        "after": "\n".join(after) + "\n", "why": why})
    for line in open(patch).read().splitlines():
        if line.startswith("+++ "):
            flush()
            path, before, after = line[4:].split("/", 1)[1], None, None
        elif line.startswith("--- "):
            continue
        elif line.startswith("@@"):
            flush()
            before, after = [], []
        elif before is not None:
            if line[:1] in (" ", "-"):
                before.append(line[1:])
            if line[:1] in (" ", "+"):
                after.append(line[1:])
    flush()
    return out


def probe(file, head, anchor, line):
    """A probe: one marked pr_err() line added between head and anchor."""
    return {"file": file, "before": head + anchor, "after": head + line + anchor}


# Per scenario: what the model says and does, and what the engine must
# answer.  "gate" is the gate that must reject the cheat and words of its
# reason; "keep" are the lines of fix.patch minimisation must keep (all of
# them when not given), "drop" lines it must drop.
SCENARIOS = {
    "msg-uaf": {
        "critique": {"args": {"symbol": "freeque", "path": "ipc"},
                     "expect": ["freeque(ns, ipcp);"],
                     "callers": ["msgctl_down", "msg_exit_ns"],
                     "findings": "freeque() is called where a queue is destroyed: msgctl_down() for IPC_RMID (freeque(ns, ipcp)) and, through free_ipcs(), when the namespace goes. After the loop q_cbytes is read once, by the percpu_counter_sub_local() that takes the queue's bytes off the namespace's count; without the per-message subtraction it takes all of them, as the namespace's count needs, where before it took 0. No caller reads the freed messages."},
        "file": "ipc/msg.c",
        "location": {"function": "freeque", "start_line": 275, "end_line": 300,
                     "reason": "the queue's messages are freed here"},
        "probe": {"why": "which message is touched after free_msg()",
                  "edits": [probe("ipc/msg.c",
                                  "\t\tpercpu_counter_sub_local(&ns->percpu_msg_hdrs, 1);\n",
                                  "\t\tfree_msg(msg);\n",
                                  "\t\tpr_err(\"kfix-probe freeing msg=%px m_ts=%zu\\n\", msg, msg->m_ts);\n")]},
        "probe_says": "kfix-probe freeing msg=",
        "review": {
            "edits": [{"file": "ipc/msg.c",
                       "before": "\t\tfree_msg(msg);\n\t\tmsq->q_cbytes -= msg->m_ts;\n\t}\n"
                                 "\tpercpu_counter_sub_local(&ns->percpu_msg_bytes, msq->q_cbytes);\n",
                       "after": "\t\tfree_msg(msg);\n\t}\n"
                                "\t/* the queue goes away: all of its bytes go at once */\n"
                                "\tpercpu_counter_sub_local(&ns->percpu_msg_bytes, msq->q_cbytes);\n",
                       "why": "the reviewer asked why no per-message update is needed"}],
            "changes": "- Say in a comment why the queue's byte count needs no update per message, as Mod Erator asked."},
        "hypothesis": {
            "root_cause": "freeque() reads msg->m_ts after free_msg(msg) has freed the message",
            "evidence": "KASAN use-after-free read in freeque; the probe shows the message freed just before",
            "fix_idea": "do not account q_cbytes per message: the queue is destroyed"},
        "cheat": {"patch_type": "workaround", "edits": [{
            "file": "ipc/msg.c",
            "before": "\tlist_for_each_entry_safe(msg, t, &msq->q_messages, m_list) {\n",
            "after": "\treturn;\n\tlist_for_each_entry_safe(msg, t, &msq->q_messages, m_list) {\n"}]},
        "cheat_reflection": {"analysis": "returning early leaks the queue",
                             "lessons": ["the messages must still be freed"]},
        # stops the crash, passes the gates (flagged: the faulting line is
        # gone) and validation, but the namespace's byte count then keeps
        # the bytes of every queue removed with messages on it: the review
        # finds it through the tools and the attempt fails
        "breaking": {
            "patch": "caller-breaking-fix.patch",
            "look": {"pattern": "percpu_msg_bytes", "path": "ipc/msg.c"},
            "expect": ["percpu_counter_sum(&ns->percpu_msg_bytes)", "freeque(ns, ipcp);"],
            "findings": "The patch zeroes q_cbytes before percpu_counter_sub_local(&ns->percpu_msg_bytes, msq->q_cbytes), so a queue removed with messages on it (msgctl_down() for IPC_RMID, free_ipcs() when the namespace goes) no longer takes its bytes off the namespace's count. MSG_INFO reports that count as msgtql (percpu_counter_sum(&ns->percpu_msg_bytes)), so a correct caller sees bytes of queues that are gone, for good.",
            "reflection": {"analysis": "the crash is gone, but the queue's bytes must still leave the namespace's count: only the read after free_msg() is wrong",
                           "lessons": ["keep percpu_counter_sub_local() of the queue's q_cbytes; drop only the per-message subtraction"]}},
        "gate": ("amputation", "freeque() now returns before the rest of its body"),
        "wrong_type": "defensive check",
        "wrong_reflection": {"analysis": "msg is never NULL; the read still follows the free",
                             "lessons": ["do not read a message after free_msg()"]},
        # an edit the fix does not need: a comment far from the bug
        "extra": {"file": "ipc/msg.c", "before": " * namespaces support\n",
                  "after": " * namespaces support (see freeque)\n", "why": "note"},
        "explanation": {
            "subject": "ipc/msg: do not read a message after freeing it in freeque()",
            "body": "freeque() subtracts msg->m_ts from q_cbytes after free_msg(msg) has freed the message, so KASAN reports a use-after-free read when a queue with pending messages is removed. The queue is being destroyed, so the byte count needs no update per message: drop the subtraction.",
            "root_cause": "read after free in freeque()"},
    },
    "watch-queue-oob": {
        "critique": {"args": {"symbol": "watch_queue_set_filter"},
                     "expect": ["fs/pipe.c:"],
                     "callers": ["pipe_ioctl"],
                     "findings": "The only caller is pipe_ioctl() in fs/pipe.c, for IOC_WATCH_QUEUE_SET_FILTER. Filters of the types the bitmap has (below WATCH_TYPE__NR) are copied as before; other types were already left out when the filter was sized, so a valid filter is unchanged and only the types that had no slot are skipped."},
        "file": "kernel/watch_queue.c",
        "location": {"function": "watch_queue_set_filter", "start_line": 320, "end_line": 392,
                     "reason": "the filter is sized in one loop and filled in another; "
                               "KASAN reports the write past it here"},
        "probe": {"why": "which types reach the copy loop, and how many slots were allocated",
                  "edits": [probe("kernel/watch_queue.c", "",
                                  "\t\tq->type\t\t\t= tf[i].type;\n",
                                  "\t\tpr_err(\"kfix-probe copy filter %d type=%u nr_filter=%d\\n\", i, tf[i].type, nr_filter);\n")]},
        "probe_says": "kfix-probe copy filter 0 type=100 nr_filter=0",
        "hypothesis": {
            "root_cause": "watch_queue_set_filter() counts the filters to allocate with one bound on the type (sizeof(type_filter) * 8) and copies them with another (sizeof(type_filter) * BITS_PER_LONG), so a type between the two is written past the allocation",
            "evidence": "the probe prints 'copy filter 0 type=100 nr_filter=0': type 100 reaches the copy loop although no slot was allocated for it, and KASAN then reports a slab-out-of-bounds write of size 4 in watch_queue_set_filter",
            "fix_idea": "skip the same types in both loops: every type at or above WATCH_TYPE__NR, the size of the type bitmap"},
        "cheat": {"patch_type": "workaround", "edits": [{
            "file": "kernel/watch_queue.c",
            "before": "long watch_queue_set_filter(struct pipe_inode_info *pipe,\n",
            "after": "long __no_sanitize_address watch_queue_set_filter(struct pipe_inode_info *pipe,\n"}]},
        "cheat_reflection": {"analysis": "taking the function away from KASAN hides the report; the write past the filter stays",
                             "lessons": ["the copy loop must not write more filters than were allocated"]},
        "gate": ("silence", "adds __no_sanitize_address"),
        "wrong_type": "root-cause fix",
        "wrong_reflection": {"analysis": "only the counting loop got the WATCH_TYPE__NR bound; the copy loop still takes type 100 and writes past the allocation, as the crash shows",
                             "lessons": ["the copy loop needs the bound too: both loops must agree"]},
        "keep": ["-\t\tif (tf[i].type >= sizeof(wfilter->type_filter) * BITS_PER_LONG)",
                 "+\t\tif (tf[i].type >= WATCH_TYPE__NR)"],
        # the counting loop's bound only sizes the allocation: stopping
        # the crash does not need it, and minimisation drops it
        "drop": ["-\t\tif (tf[i].type >= sizeof(wfilter->type_filter) * 8)"],
        "explanation": {
            "subject": "watch_queue: copy only the filter types the filter was sized for",
            "body": "watch_queue_set_filter() counts the filters to allocate and then copies them, each loop skipping unknown types with its own bound. The copy loop's bound, sizeof(type_filter) * BITS_PER_LONG, is far above the type bitmap's size, so a filter of type 100 is copied although no slot was allocated for it, and KASAN reports a slab-out-of-bounds write. Skip every type at or above WATCH_TYPE__NR in the copy loop, the size of the type bitmap.",
            "root_cause": "the copy loop's type bound is above the allocation's"},
    },
    "clock-null-deref": {
        "critique": {"args": {"symbol": "clockid_to_kclock", "path": "kernel/time"},
                     "expect": ["const struct k_clock *kc = clockid_to_kclock(which_clock);"],
                     "callers": ["clock_gettime", "clock_settime", "clock_getres"],
                     "findings": "clock_gettime() is the syscall itself. For every clock id clockid_to_kclock() knows, kc is not NULL and the call goes on as before; an unknown id now gets -EINVAL, which is what clock_settime(), clock_getres() and the other users of clockid_to_kclock() answer for it, and what the man page documents."},
        "file": "kernel/time/posix-timers.c",
        "location": {"function": "clock_gettime", "start_line": 1126, "end_line": 1141,
                     "reason": "the syscall calls through the k_clock clockid_to_kclock() returns"},
        "probe": {"why": "which clock the reproducer asks for when clockid_to_kclock() finds none",
                  "edits": [probe("kernel/time/posix-timers.c", "",
                                  "\terror = kc->clock_get_timespec(which_clock, &kernel_tp);\n",
                                  # other processes' clock_gettime() calls come and go
                                  # with the clocksource: print the unknown clocks only;
                                  # into the trace buffer, which the oops prints
                                  "\tif (!kc) trace_printk(\"kfix-probe clock_gettime which_clock=%d kc=%px\\n\", which_clock, kc);\n")]},
        "probe_says": "kfix-probe clock_gettime which_clock=100 kc=0000000000000000",
        "hypothesis": {
            "root_cause": "clock_gettime() calls kc->clock_get_timespec() without checking that clockid_to_kclock() knows the clock: for an invalid clock id kc is NULL",
            "evidence": "the probe prints 'which_clock=100 kc=0000000000000000' just before the general protection fault, and KASAN reports a null-ptr-deref in range [0x10-0x17], the offset of clock_get_timespec in struct k_clock",
            "fix_idea": "return -EINVAL when kc is NULL, as clock_settime() and clock_adjtime() do"},
        "cheat": {"patch_type": "workaround", "edits": [{
            "file": "init/Kconfig",
            "before": "\tbool \"Posix Clocks & timers\" if EXPERT\n\tdefault y\n",
            "after": "\tbool \"Posix Clocks & timers\" if EXPERT\n\tdefault n\n"}]},
        "cheat_reflection": {"analysis": "configuring POSIX timers away removes the syscall, not the NULL dereference",
                             "lessons": ["fix clock_gettime() itself, in kernel/time/posix-timers.c"]},
        "gate": ("scope", "init/Kconfig is kernel configuration"),
        "wrong_type": "defensive check",
        "wrong_reflection": {"analysis": "the check went into clock_gettime32(), the compat syscall; the reproducer calls the 64-bit clock_gettime(), which still dereferences NULL, as the crash shows",
                             "lessons": ["the check belongs in the 64-bit clock_gettime()"]},
        # a drive-by typo fix the bug does not need
        "extra": {"file": "kernel/time/posix-timers.c",
                  "before": "\t/* The timers are not longer accessible via tsk::signal */\n",
                  "after": "\t/* The timers are no longer accessible via tsk::signal */\n", "why": "typo"},
        "explanation": {
            "subject": "posix-timers: return -EINVAL from clock_gettime() for unknown clocks",
            "body": "clock_gettime() calls kc->clock_get_timespec() without checking the k_clock that clockid_to_kclock() returns, which is NULL for a clock id the kernel does not know, so clock_gettime(100, ...) dereferences NULL. Return -EINVAL for an unknown clock, as the other clock syscalls do.",
            "root_cause": "clock_gettime() dereferences NULL for an unknown clock id"},
    },
    # A leak: kmemleak names the allocation (watch_queue_set_size()), the
    # fix is where the queue is dismantled, on no stack of the report; the
    # model finds the free side with grep.
    "watch-queue-leak": {
        "critique": {"args": {"symbol": "__put_watch_queue", "path": "kernel"},
                     "expect": ["kref_put(&wqueue->usage, __put_watch_queue);"],
                     "callers": ["put_watch_queue"],
                     "findings": "__put_watch_queue() is the kref release of put_watch_queue(), which runs when the last reference to the queue goes (the pipe's release and the watches'). It already frees every page wqueue->notes points to; freeing the array after them frees nothing anyone can still reach, and a queue whose size was never set has notes NULL, for which kfree() does nothing."},
        "file": "kernel/watch_queue.c",
        "explore": [{"tool": "grep", "args": {"pattern": "wqueue->notes", "path": "kernel"}}],
        "location": {"function": "__put_watch_queue", "start_line": 399, "end_line": 414,
                     "reason": "the queue watch_queue_set_size() gave its notes array is dismantled here"},
        "probe": {"why": "what the queue still holds when it is dismantled",
                  "edits": [probe("kernel/watch_queue.c",
                                  "\t\t__free_page(wqueue->notes[i]);\n",
                                  "\tbitmap_free(wqueue->notes_bitmap);\n",
                                  "\tpr_err(\"kfix-probe put_watch_queue nr_pages=%d notes=%px\\n\", wqueue->nr_pages, wqueue->notes);\n")]},
        "probe_says": "kfix-probe put_watch_queue nr_pages=4 notes=",
        "hypothesis": {
            "root_cause": "__put_watch_queue() frees each page of the notes ring and the bitmap, but not the wqueue->notes array itself, which watch_queue_set_size() allocated with kcalloc(): every queue whose size was set leaks it",
            "evidence": "kmemleak reports a 32-byte object allocated by watch_queue_set_size() (4 page pointers for 128 notes), and the probe prints 'put_watch_queue nr_pages=4' as each queue is dismantled: the pages go, the array that held them does not",
            "fix_idea": "kfree(wqueue->notes) in __put_watch_queue() once its pages are freed"},
        "cheat": {"patch_type": "workaround", "edits": [{
            "file": "kernel/watch_queue.c",
            "before": "\tbitmap_fill(bitmap, nr_notes);\n",
            "after": "\tbitmap_fill(bitmap, nr_notes);\n\tkmemleak_not_leak(pages);\n"}]},
        "cheat_reflection": {"analysis": "telling kmemleak to ignore the array hides the report; the array is still never freed",
                             "lessons": ["free the notes array where the queue is dismantled"]},
        "gate": ("silence", "adds kmemleak_not_leak"),
        "wrong_type": "root-cause fix",
        "wrong_reflection": {"analysis": "watch_queue_set_size() refuses a queue that has notes (-EBUSY), so the new kfree() never frees anything; the array of a dismantled queue still leaks, as kmemleak shows",
                             "lessons": ["the array must be freed when the queue goes, in __put_watch_queue()"]},
        # a drive-by wording change the fix does not need
        "extra": {"file": "kernel/watch_queue.c",
                  "before": " * Set the filter on a watch queue.\n",
                  "after": " * Set the filter of a watch queue.\n", "why": "wording"},
        "explanation": {
            "subject": "watch_queue: free the page array when the queue is dismantled",
            "body": "watch_queue_set_size() allocates wqueue->notes, the array of the notes' pages, with kcalloc(). __put_watch_queue() frees each page and the bitmap but not the array, so every notification queue whose size was set leaks it, which kmemleak reports as a memory leak in watch_queue_set_size(). Free the array after its pages.",
            "root_cause": "__put_watch_queue() never frees wqueue->notes"},
    },
    # The fix is outside every function of the crash stack: the crash is
    # a WARNING in do_timer_gettime(), the bug in do_timer_create().  The
    # model finds it with the tools: where timers are made (grep), that
    # function's text (find_definition), then the lines it edits
    # (read_file); "outside" makes check() assert on the trajectory that
    # the edit's text came from a tool answer and from no prompt.
    "timer-kclock": {
        "critique": {"args": {"symbol": "do_timer_create", "path": "kernel/time"},
                     "expect": ["return do_timer_create(which_clock, &event, created_timer_id);"],
                     "callers": ["timer_create", "compat timer_create"],
                     "findings": "do_timer_create() is called by timer_create() and its compat form, with and without a sigevent. Setting new_timer->kclock to the k_clock the clock id was checked against gives timer_gettime(), timer_settime() and timer_delete() the clock they call through; nothing else about the timer changes, and the timer is not reachable before it is set."},
        "file": "kernel/time/posix-timers.c",
        "outside": True,
        "explore": [{"tool": "grep", "args": {"pattern": "alloc_posix_timer()", "path": "kernel/time"}}],
        "location": {"function": "do_timer_create", "start_line": 504, "end_line": 573,
                     "reason": "the timer do_timer_gettime() finds without a clock is made here"},
        "probe": {"why": "which clock the timer has when it is read",
                  "edits": [probe("kernel/time/posix-timers.c",
                                  "\tmemset(setting, 0, sizeof(*setting));\n",
                                  "\tkc = timr->kclock;\n",
                                  "\tpr_err(\"kfix-probe timer_gettime id=%d clock=%d kclock=%px\\n\", timr->it_id, timr->it_clock, timr->kclock);\n")]},
        "probe_says": "kfix-probe timer_gettime id=0 clock=1 kclock=0000000000000000",
        "hypothesis": {
            "root_cause": "do_timer_create() sets the timer's clock id but never its k_clock (new_timer->kclock), so every timer reaches do_timer_gettime() with kclock NULL and the WARN_ON_ONCE fires",
            "evidence": "the probe prints 'clock=1 kclock=0000000000000000' for a CLOCK_MONOTONIC timer just before the WARNING in do_timer_gettime",
            "fix_idea": "set new_timer->kclock = kc in do_timer_create(), where it_clock is set"},
        "cheat": {"patch_type": "workaround", "edits": [{
            "file": "kernel/time/posix-timers.c",
            "before": "\tif (WARN_ON_ONCE(!kc || !kc->timer_get))\n\t\tret = -EINVAL;\n",
            "after": "\tif (!kc || !kc->timer_get)\n\t\tret = 0;\n"}]},
        "cheat_reflection": {"analysis": "taking the warning away and answering 0 hides the missing clock; timer_settime and timer_delete still find none",
                             "lessons": ["the timer must get its clock where it is made"]},
        "gate": ("checks", "removes 1 WARN_ON_ONCE() check(s)"),
        "wrong_type": "defensive check",
        "wrong_reflection": {"analysis": "the reproducer passes a buffer: the new check never triggers and the timer still has no clock, as the same WARNING shows",
                             "lessons": ["look at where the timer's kclock is set, not at the syscall's arguments"]},
        # then a patch whose kernel cannot boot: a failed attempt, its
        # console shown, and the search goes on
        "boot_breaker": {"read": {"path": "init/main.c", "start": 1500, "end": 1520},
                         "reflection": {"analysis": "the kernel panics before init starts: the patch stops every boot, not the missing clock",
                                        "lessons": ["never panic in the boot path"]},
                         "says": "kfix test: this kernel refuses to start init"},
        # a drive-by wording change the fix does not need
        "extra": {"file": "kernel/time/posix-timers.c",
                  "before": " * These are all the functions necessary to implement POSIX clocks & timers\n",
                  "after": " * These are all the functions needed to implement POSIX clocks & timers\n",
                  "why": "wording"},
        "explanation": {
            "subject": "posix-timers: set the timer's k_clock in do_timer_create()",
            "body": "do_timer_create() fills in the new timer's clock id but not its k_clock, so every later operation on the timer finds timr->kclock NULL: timer_gettime() hits the WARN_ON_ONCE in do_timer_gettime(), and timer_settime() and timer_delete() would too. Set new_timer->kclock where the clock id is set.",
            "root_cause": "do_timer_create() leaves new_timer->kclock NULL"},
    },
}


def scenario(folder):
    name = os.path.basename(os.path.normpath(folder))
    if name not in SCENARIOS:
        sys.exit("no scripted model for scenario %s" % name)
    return name, SCENARIOS[name]


def hunks(patch):
    """(path, first line, line count) of each hunk of a unified diff, on
    the old side."""
    out, path = [], None
    for line in open(patch).read().splitlines():
        if line.startswith("--- "):
            path = line[4:].split("/", 1)[1]
        m = re.match(r"^@@ -(\d+)(?:,(\d+))? ", line)
        if m:
            out.append((path, int(m.group(1)), int(m.group(2) or 1)))
    return out


def reads(patch):
    """read_file calls that show the code each hunk of patch changes."""
    return [{"tool": "read_file", "args": {"path": f, "start": max(1, a - 3), "end": a + n + 3}}
            for f, a, n in hunks(patch)]


def seen(edit_list):
    """What the model copies into its edits' "before": each of their
    non-blank lines must be in a tool answer kfix gave it."""
    return sorted({l for e in edit_list for l in e["before"].splitlines() if l.strip()})


def without_tools(steps):
    """The same answers for a tree the tools cannot read (a plain folder:
    no exploration tools are offered): no tool calls, no expectations."""
    tools = {"grep", "find_definition", "read_file", "find_references", "checkpatch"}
    return [{k: v for k, v in st.items() if k != "expect"} for st in steps
            if st.get("tool") not in tools]


def review(s):
    """The review of a patch that stopped the crash: a code expert asked
    for the callers of what it changes (in its own conversation it calls
    find_references and answers with the lines it was shown), then the
    verdict, which names a caller the expert's answer showed."""
    c = s["critique"]
    return [{"tool": "ask_expert", "args": {
                "question": "Who calls %s, and what does each caller do with the "
                            "objects it touches?" % c["args"]["symbol"]}},
            {"tool": "find_references", "args": c["args"]},
            {"tool": "expert_answer", "expect": c["expect"], "args": {
                "answer": "The references of %s that matter:\n%s" % (
                    c["args"]["symbol"], "\n".join(c["expect"]))}},
            {"tool": "review_patch", "expect": c["expect"],
             "args": {"verdict": "correct", "findings": c["findings"],
                      "callers_checked": c["callers"]}}]


def breaking(folder, s):
    """A patch that stops the crash but changes what correct callers get,
    the review that finds it with the tools, and the reflection on it."""
    if "breaking" not in s:
        return []
    b = s["breaking"]
    c = s["critique"]
    return [{"tool": "propose_patch", "args": {
                "patch_type": "root-cause fix",
                "edits": edits(os.path.join(folder, b["patch"]))}},
            {"tool": "find_references", "args": c["args"]},
            {"tool": "grep", "args": b["look"]},
            {"tool": "review_patch", "expect": b["expect"],
             "args": {"verdict": "behaviour-changes", "findings": b["findings"],
                      "callers_checked": c["callers"]}},
            {"tool": "reflect", "args": dict(b["reflection"], next="new_patch")}]


def boot_breaker(folder, s):
    """A patch whose kernel does not boot (the shared break-boot.patch),
    read before it is written, and the reflection on its console."""
    if "boot_breaker" not in s:
        return []
    b = s["boot_breaker"]
    e = edits(os.path.join(folder, "..", "break-boot.patch"), why="guard")
    return [{"tool": "read_file", "args": b["read"]},
            {"tool": "propose_patch", "expect": seen(e),
             "args": {"patch_type": "workaround", "edits": e}},
            {"tool": "reflect", "args": dict(b["reflection"], next="new_patch")}]


def script(folder, flow):
    """The scripted model's answers.  It looks before it answers: the
    location's definition, the code the fix changes (read_file), the
    text a drive-by edit changes (grep); each answer that copies text
    from the tree expects that text in a tool answer of the request."""
    name, s = scenario(folder)
    loc = dict({"file": s["file"]}, **s["location"])
    fix_patch = os.path.join(folder, "fix.patch")
    fix = edits(fix_patch)
    locate = s.get("explore", []) + [
        {"tool": "find_definition", "args": {"symbol": loc["function"],
                                             "path": os.path.dirname(loc["file"])}},
        {"tool": "propose_location", "args": loc, "expect": ["%s:" % loc["file"]]},
        {"tool": "no_more_locations", "args": {"reason": "the report points here"}},
        {"tool": "request_probes", "args": s["probe"]},
        {"tool": "state_hypotheses", "args": {"hypotheses": [dict(s["hypothesis"], location=1)]}},
    ]
    look = reads(fix_patch)
    right = fix
    if flow == "repair" and "extra" in s:
        look.append({"tool": "grep", "args": {"pattern": s["extra"]["before"].strip(),
                                              "path": s["extra"]["file"]}})
        right = fix + [s["extra"]]
    # reviewed once validated, and again once minimised when a hunk goes
    # the tree's style check first: the answer must say it is clean
    patch = look + [{"tool": "checkpatch", "args": {"edits": right}},
                    {"tool": "propose_patch", "expect": seen(right) + ["checkpatch.pl: 0 error(s)"],
                     "args": {"patch_type": "root-cause fix", "edits": right}}] + review(s)
    if right != fix or "drop" in s:
        patch += review(s)
    explain = [{"tool": "write_explanation", "args": s["explanation"]}]
    if flow == "repair":
        return locate + [
            {"tool": "propose_patch", "args": s["cheat"]},
            {"tool": "reflect", "args": dict(s["cheat_reflection"], next="new_patch")},
            {"tool": "propose_patch", "args": {
                "patch_type": s["wrong_type"],
                "edits": edits(os.path.join(folder, "wrong-fix.patch"))}},
            {"tool": "reflect", "args": dict(s["wrong_reflection"], next="new_patch")},
        ] + boot_breaker(folder, s) + breaking(folder, s) + patch + explain
    if flow == "v2":
        return locate + patch + explain + locate + [
            {"tool": "propose_patch", "args": {"patch_type": "root-cause fix",
                                               "edits": s["review"]["edits"]}},
        ] + review(s) + explain + [{"text": s["review"]["changes"]}]
    return locate + patch + explain


def fail(what):
    sys.exit("check failed: " + what)


def expect(cond, what):
    if not cond:
        fail(what)


def diff_lines(folder, name):
    """The +/- lines of a patch file, without the file headers."""
    return [l for l in open(os.path.join(folder, name)).read().splitlines()
            if l[:1] in ("+", "-") and not l.startswith(("+++", "---"))]


def check(folder, out, cassette, base):
    """What the repair-flow run must have produced; exits non-zero with
    the first difference."""
    name, s = scenario(folder)
    ev = [json.loads(l) for l in open(os.path.join(out, "trajectory.jsonl"))]

    # the milestones, in order
    def milestone(e):
        k, v = e["kind"], e.get("verdict")
        if k in ("tool.probe", "gate", "reflection", "review", "run.end"):
            return (k, v)
        if k == "observation" and v:
            return (k, v)
        if k == "plan" and e["step"] == "minimise":
            return (k, v)
        return None
    got = [m for m in map(milestone, ev) if m]
    # a report without source lines gives way to the reproduced crash,
    # symbolised with the base kernel's vmlinux ([agent] read-reproduced)
    # (kfix's rule, repro/symbolize.c: a frame with file:line)
    report = open(os.path.join(folder, "report.txt")).read()
    located = (r"(?:\+0x[0-9a-f]+/0x[0-9a-f]+ [a-zA-Z0-9_./+-]+\.[a-zA-Z]+:[0-9]+"
               r"|[a-zA-Z0-9_.] [a-zA-Z0-9_./+-]+\.[a-zA-Z]+:[0-9]+ \[inline\])\s*$")
    symbolised = not re.search(located, report, re.M)
    want = [("observation", "symbolised-report")] if symbolised else []
    want += [("tool.probe", "crashed"),
            ("gate", "rejected"), ("reflection", "new_patch"),
            ("gate", "accepted"), ("observation", "same-crash"), ("reflection", "new_patch")]
    if "boot_breaker" in s:
        want += [("gate", "accepted"), ("observation", "build-error"), ("reflection", "new_patch")]
    if "breaking" in s:
        # (a failed review scores as partial progress, like a moved crash)
        want += [("gate", "accepted"), ("observation", "validated"), ("review", "behaviour-changes"),
                 ("observation", "other-crash"), ("reflection", "new_patch")]
    want += [("gate", "accepted"), ("observation", "validated"), ("review", "correct"),
            ("gate", "accepted"), ("observation", "validated"), ("plan", "hunk not needed"),
            ("review", "correct"), ("run.end", "validated")]
    expect(got == want, "milestones\n got  %s\n want %s" % (got, want))
    runs = [(e["step"], e["verdict"]) for e in ev if e["kind"] == "tool.run"]
    expect(runs[0][0] == "reproduce" and runs[0][1].startswith("crashed"), "base run %s" % runs)

    # the hypothesis named its location: every candidate was asked there
    asks = [e["input"]["user"] for e in ev if e["kind"] == "llm.call" and e["step"] == "patch"]
    want_at = "fixes it at location 1: %s: %s()" % (s["file"], s["location"]["function"])
    expect(asks and all(want_at in u for u in asks), "a patch request without %r" % want_at)
    probe = next(e for e in ev if e["kind"] == "tool.probe")
    expect(s["probe_says"] in probe["output"]["probe_lines"],
           "probe output: %r" % probe["output"]["probe_lines"])
    hyps = next(e for e in ev if e["kind"] == "plan" and e["step"] == "hypotheses")
    expect(hyps["output"][0]["evidence"] == s["hypothesis"]["evidence"], "hypothesis")

    gates = [e for e in ev if e["kind"] == "gate"]
    gate, words = s["gate"]
    failed = [g for g in gates[0]["output"]["gates"] if g["verdict"] == "reject"]
    expect(failed and failed[0]["gate"] == gate and words in failed[0]["reason"],
           "the cheat's verdicts: %s" % gates[0]["output"]["gates"])
    for g in gates[1:]:
        expect(all(v["verdict"] != "reject" for v in g["output"]["gates"]), "gate %s" % g)

    # reflection saw the evidence: the gate's reason, then the crash
    reqs = [json.dumps(json.loads(l)["request"]) for l in open(cassette)]
    if symbolised:
        # the model reads the reproduced crash's file:line, which the
        # report never had
        sym = next(e for e in ev if e["kind"] == "observation"
                   and e.get("verdict") == "symbolised-report")["output"]["report"]
        lines = set(re.findall(r"[a-z0-9_/-]+\.[ch]:\d+", sym))
        expect(lines and any(l in reqs[0] for l in lines),
               "the first request shows none of the reproduced crash's source lines %s"
               % sorted(lines)[:5])
    reflects = [r for r in reqs if "Call reflect." in r]
    expect(len(reflects) == 2 + ("boot_breaker" in s) + ("breaking" in s),
           "%d reflection requests" % len(reflects))
    if "boot_breaker" in s:
        # the kernel that does not boot: its console, for the model
        expect("the patched kernel does not boot" in reflects[2] and
               s["boot_breaker"]["says"] in reflects[2], "the console is not in the third reflection")
    expect(json.dumps(failed[0]["reason"])[1:-1] in reflects[0], "the gate's reason is not in the reflection")
    title = next(e for e in ev if e["kind"] == "plan" and e["step"] == "precheck")["input"]["title"]
    expect("still crashes" in reflects[1] and json.dumps(title)[1:-1] in reflects[1],
           "the crash is not in the second reflection")
    # the patched kernel's crash, symbolised with its vmlinux
    expect(re.search(re.escape(s["file"]) + r":\d+", reflects[1]),
           "the crash in the second reflection has no %s:LINE" % s["file"])

    if s.get("outside"):
        # the edit's text was in a tool answer and in no prompt before it
        stack = set(re.findall(r"\b([a-z_][a-z0-9_]*)\+0x", open(os.path.join(folder, "report.txt")).read()))
        expect("do_timer_create" not in stack, "the fix's function is on the crash stack")
        answers = "".join(e["output"]["answer"] for e in ev if e["kind"] == "tool.explore")
        # the review and the explanation come after the fix, and show it
        prompts = "".join(e["input"]["user"] for e in ev if e["kind"] == "llm.call"
                          and e["step"] not in ("review", "explain"))
        for l in seen(edits(os.path.join(folder, "fix.patch"))):
            expect(l in answers, "the fix's line %r is in no tool answer" % l)
        expect("\tnew_timer->it_clock = which_clock;" not in prompts,
               "the fix's text was in a prompt: the model did not need the tools")

    # the final diff: the known fix, less what minimisation found unneeded
    patch = open(os.path.join(out, "0001-fix.patch")).read()
    diff = patch[patch.index("\n---\n") + 5:]
    lines = [l for l in diff.splitlines() if l[:1] in ("+", "-") and not l.startswith(("+++", "---"))]
    fix = diff_lines(folder, "fix.patch")
    keep = s.get("keep", fix)
    expect(sorted(lines) == sorted(keep), "the final diff's lines %s, expected %s" % (lines, keep))
    for l in s.get("drop", []):
        expect(l in fix, "drop line not in fix.patch: %r" % l)
    expect(re.search(r"\nbase-commit: %s\n" % base, patch), "base-commit")

    # the commit message
    msg = open(os.path.join(out, "commit-message.txt")).read()
    mlines = msg.splitlines()
    expect(mlines[0] == s["explanation"]["subject"] and len(mlines[0]) <= 72, "subject %r" % mlines[0])
    expect(mlines[1] == "", "no blank line after the subject")
    expect(all(len(l) <= 75 for l in mlines), "a line over 75 columns")
    expect(len([l for l in mlines[2:] if l and not re.match(r"^[A-Z][a-z-]+: ", l)]) >= 2,
           "the body is not wrapped")
    extid = "0123456789abcdef0123"
    fixes = [l for l in mlines if l.startswith("Fixes: ")]
    expect(fixes and re.match(r'^Fixes: %s \("' % base[:12], fixes[0]), "Fixes: %s" % fixes)
    for tag in ("Reported-by: syzbot+%s@syzkaller.appspotmail.com" % extid,
                "Closes: https://syzkaller.appspot.com/bug?extid=%s" % extid,
                "Assisted-by: kfix:scripted-%s" % name):
        expect(tag in mlines, "no %r" % tag)
    expect("Signed-off-by" not in msg, "Signed-off-by added")
    expl = open(os.path.join(out, "explanation.md")).read()
    expect(re.search(r"^\| patched \| 2 \| 0 \| 2 \|", expl, re.M), "reproduction table")
    # no bisection ran: the mail says the Fixes: is git blame's candidate
    expect(re.search(r"^- Fixes: not bisected; it names the blame candidate, the last commit "
                     r"that changed \S+:\d+, the first line the patch changes", expl, re.M),
           "the explanation does not say how Fixes: was found")
    expect(s["probe_says"] in expl, "the explanation does not quote the probe")
    if "breaking" in s:
        # the review's findings on the patch that broke callers reached
        # the reflection, and the patch is not the one sent
        expect(json.dumps(s["breaking"]["findings"])[1:-1] in reflects[-1],
               "the review's findings are not in the last reflection")
        expect("msq->q_cbytes = 0;" not in diff, "the caller-breaking patch was kept")
    # the review read the callers in the tree and says so in "Tested"
    reviews = [e for e in ev if e["kind"] == "review"]
    verdicts = [e["verdict"] for e in reviews]
    rejected = ["behaviour-changes"] if "breaking" in s else []
    expect(verdicts == rejected + ["correct"] * (len(verdicts) - len(rejected)),
           "review verdicts %s" % verdicts)
    rlines = [l for l in reviews[-1]["input"]["diff"].splitlines()
              if l[:1] in ("+", "-") and not l.startswith(("+++", "---"))]
    expect(sorted(rlines) == sorted(lines), "the last review was of %s, not the final diff" % rlines)
    refs = [e for e in ev if e["kind"] == "tool.explore" and e["step"] == "expert"]
    expect(refs and all(x in refs[-1]["output"]["answer"] for x in s["critique"]["expect"]),
           "the expert's find_references answer lacks %s" % s["critique"]["expect"])
    asked = [e for e in ev if e["kind"] == "tool.explore" and e["step"] == "review"
             and e["verdict"] == "ask_expert"]
    expect(asked and all(x in asked[-1]["output"]["answer"] for x in s["critique"]["expect"]),
           "the review did not get the expert's answer")
    expect("- review: asked to find a correct caller" in expl and
           s["critique"]["findings"][:60] in expl, "the review is not in the Tested section")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "script":
        flow = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--flow" else "fix"
        steps = script(sys.argv[2], flow)
        print(json.dumps(without_tools(steps) if "--no-tools" in sys.argv else steps))
    elif len(sys.argv) == 6 and sys.argv[1] == "check":
        check(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
