#!/bin/bash
# The repair pipeline's scheduling and failure paths, without a kernel: new
# bugs of a configured tree with a C reproducer get a reproduce job (tree
# priority added), bugs without a reproducer are given up, bugs of an
# unknown tree wait; texts given as links are fetched from the hosts of
# [kfix] text-hosts (others refused, a failing server retried); inputs
# that are not local files, an unknown tree and a
# report without a crash fail the job for good with a message saying so; a
# tree without [build]/[vm] gives the bug up; #kfix retest queues a retest
# job for the awaiting patch.  A paused scheduler queues but starts nothing.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 CLI needed"
command -v git >/dev/null || skip "git needed"

mkdir -p "$T/src/ipc"
printf 'int x;\n' > "$T/src/ipc/msg.c"
printf 'CONFIG_KASAN=y\n' > "$T/kasan.config"
printf 'int main(void) { return 0; }\n' > "$T/repro.c"
cat > "$T/report" <<'R'
BUG: KASAN: use-after-free in ksys_msgctl+0x2c2/0x390 ipc/msg.c:624
Read of size 8 at addr ffff88800a1b2c40 by task repro/123

Call Trace:
 <TASK>
 dump_stack_lvl+0x48/0x5f lib/dump_stack.c:106
 print_report+0x170/0x473 mm/kasan/report.c:417
 kasan_report+0xad/0x130 mm/kasan/report.c:517
 ksys_msgctl+0x2c2/0x390 ipc/msg.c:624
 do_syscall_64+0x35/0x80 arch/x86/entry/common.c:80
 </TASK>
R
printf 'nothing crashed here\n' > "$T/quiet"

# texts given as links (a syzbot mail) are fetched from the listed hosts
mkdir -p "$T/www"
cp "$T/repro.c" "$T/www/repro.c"
WWW_PORT=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$T/www" "$WWW_PORT" >/dev/null 2>&1 &
PIDS="$PIDS $!"
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$WWW_PORT") 2>/dev/null && break; sleep 0.1; done
write_config "	retry-delay = 0" "	job-attempts = 2" "	text-hosts = 127.0.0.1"
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
[tree "local"]
	path = $T/src
	config = $T/kasan.config
	priority = 5
[tree "git"]
	url = file://$T/upstream
	config = $T/kasan.config
CONF
# a fetched tree: the bug's base is not the branch head
U=$T/upstream
mkdir -p "$U/ipc"
printf 'int base;\n' > "$U/ipc/msg.c"
git -C "$U" init -q -b master
git -C "$U" -c user.name=U -c user.email=u@example.org add -A
git -C "$U" -c user.name=U -c user.email=u@example.org commit -qm base
BASE=$(git -C "$U" rev-parse HEAD)
printf 'int head;\n' > "$U/ipc/msg.c"
git -C "$U" -c user.name=U -c user.email=u@example.org commit -qam head
db=$T/state/kfix.db
q() { sqlite3 "$db" "$1"; }
sub() { ctl submit --tree "${TREE:-local}" --report "$T/report" "$@" | sed 's/^bug \([0-9]*\).*/\1/'; }

ctl pause >/dev/null
ok_bug=$(sub --title "KASAN: use-after-free Read in ksys_msgctl" --id ok --repro "$T/repro.c")
norepro=$(sub --title "no repro" --id norepro)
syz=$(sub --title "syz only" --id syz)
q "UPDATE bugs SET repro_syz = '$T/repro.syz' WHERE id = $syz"
unknown=$(ctl submit --title "unknown tree" --id unknown --tree nope --repro "$T/repro.c" | cut -d' ' -f2)
url=$(sub --title "url repro" --id url --repro "https://syzkaller.appspot.com/text?tag=ReproC&x=1")
fetched=$(sub --title "KASAN: use-after-free Read in ksys_msgctl" --id fetched \
	--repro "http://127.0.0.1:$WWW_PORT/repro.c")
gone=$(sub --title "KASAN: use-after-free Read in ksys_msgctl" --id gone \
	--repro "http://127.0.0.1:$WWW_PORT/no-such.c")
# (kfixctl submit refuses missing files: these rows are made by hand)
missing=$(sub --title "missing repro" --id missing --repro "$T/repro.c")
q "UPDATE bugs SET repro_c = '$T/no-such-file.c' WHERE id = $missing"
quiet=$(ctl submit --title "no crash" --id quiet --tree local --report "$T/quiet" --repro "$T/repro.c" |
	cut -d' ' -f2)
bugconfig=$(sub --title "own config" --id bugconfig --repro "$T/repro.c" --config "$T/kasan.config")
q "UPDATE bugs SET kernel_config = '$T/missing.config' WHERE id = $bugconfig"
start_kfixd
wait_for 20 sh -c "[ \$(sqlite3 '$db' \"SELECT count(*) FROM jobs WHERE kind = 'reproduce'\") = 7 ]" ||
	fail "reproduce jobs not queued: $(ctl jobs)"
sleep 1.5
[ "$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE state != 'queued'")" = 0 ] ||
	fail "a paused scheduler started a job: $(ctl jobs)"
[ "$(sqlite3 "$db" "SELECT priority FROM jobs WHERE bug_id = $ok_bug")" = 105 ] ||
	fail "priority: C reproducer (100) plus the tree's 5"
ctl bug "$norepro" | grep -q "State: *gave-up" || fail "bug without reproducer: $(ctl bug "$norepro")"
ctl bug "$norepro" | grep -q "no reproducer" || fail "no reason given: $(ctl bug "$norepro")"
ctl bug "$syz" | grep -q "only a syz reproducer" || fail "syz-only bug: $(ctl bug "$syz")"
ctl bug "$unknown" | grep -q "State: *new" || fail "a bug of an unknown tree moved"
[ "$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE bug_id = $unknown")" = 0 ] ||
	fail "a bug of an unknown tree got a job"
ok "scheduling (paused: queued, not started)"

# a job for a tree that is gone from the configuration
q "INSERT INTO jobs (bug_id, kind, state, max_attempts, created) VALUES ($unknown, 'reproduce', 'queued', 3, 0)"
ctl resume >/dev/null
job_of() { sqlite3 "$db" "SELECT id FROM jobs WHERE bug_id = $1 AND kind = '${2:-reproduce}'"; }
final() { # BUG [KIND]: waits until the bug's job failed for good
	wait_for 30 sh -c "[ \"\$(sqlite3 '$db' \"SELECT state FROM jobs WHERE bug_id = $1 AND kind = '${2:-reproduce}'\")\" = failed ]" ||
		fail "job of bug $1: $(ctl job "$(job_of "$1" "${2:-}")")"
	[ "$(sqlite3 "$db" "SELECT attempts FROM jobs WHERE bug_id = $1 AND kind = '${2:-reproduce}'")" = 1 ] ||
		fail "a permanent failure was retried: $(ctl job "$(job_of "$1" "${2:-}")")"
}
error_of() { sqlite3 "$db" "SELECT error FROM jobs WHERE bug_id = $1 AND kind = '${2:-reproduce}'"; }
final "$url"
error_of "$url" | grep -q "repro_c: the link's host is not in \[kfix\] text-hosts" ||
	fail "url: $(error_of "$url")"
ctl bug "$url" | grep -q "State: *new" || fail "a bug with bad inputs moved"
# a link of a listed host is fetched and the bug then names the file
final "$fetched"
error_of "$fetched" | grep -q "no \[build\] and \[vm\]" || fail "fetched: $(error_of "$fetched")"
f=$(sqlite3 "$db" "SELECT repro_c FROM bugs WHERE id = $fetched")
[ "$f" = "$T/state/artifacts/bug-$fetched/repro.c" ] || fail "fetched text not recorded: $f"
cmp -s "$f" "$T/repro.c" || fail "fetched text differs"
# a server that fails is worth a retry, not a final verdict
wait_for 30 sh -c "[ \"\$(sqlite3 '$db' \"SELECT attempts FROM jobs WHERE bug_id = $gone\")\" = 2 ]" ||
	fail "a failed download was not retried: $(ctl job "$(job_of "$gone")")"
error_of "$gone" | grep -q "repro_c: refused (HTTP 404)" || fail "gone: $(error_of "$gone")"
final "$missing"
error_of "$missing" | grep -q "no-such-file.c' is not a readable local file" || fail "missing: $(error_of "$missing")"
final "$unknown"
error_of "$unknown" | grep -q "tree 'nope' is not configured" || fail "unknown tree: $(error_of "$unknown")"
final "$quiet"
error_of "$quiet" | grep -q "holds no crash report" || fail "no crash: $(error_of "$quiet")"
final "$bugconfig"
error_of "$bugconfig" | grep -q "kernel config '.*missing.config' is not a readable" ||
	fail "the bug's config comes first: $(error_of "$bugconfig")"
ok "bad inputs fail for good, saying which"

# good inputs, but no [build] and [vm] to test with
final "$ok_bug"
error_of "$ok_bug" | grep -q "no \[build\] and \[vm\]" || fail "no build: $(error_of "$ok_bug")"
ctl bug "$ok_bug" | grep -q "State: *gave-up" || fail "bug left reproducing: $(ctl bug "$ok_bug")"
j=$(job_of "$ok_bug")
[ -f "$T/state/jobs/$j/repro.c" ] || fail "no job folder with the reproducer"
ok "a permanent failure after the bug moved gives it up"

# #kfix retest: a retest job for the awaiting patch, or an answer that
# there is none
now=$(date +%s)
q "UPDATE bugs SET state = 'awaiting-approval' WHERE id = $bugconfig;
	UPDATE bugs SET kernel_config = NULL WHERE id = $bugconfig;
	INSERT INTO patches (bug_id, version, state, subject, diff, created, updated)
	VALUES ($bugconfig, 1, 'awaiting-approval', 'ipc/msg: fix', 'diff --git a/x b/x', $now, $now);
	INSERT INTO events (ts, bug_id, job_id, kind, detail) VALUES
	($now, $bugconfig, 0, 'request.retest', '{\"by\": \"mod@example.org\", \"name\": \"Mod <mod@example.org>\"}'),
	($now, $missing, 0, 'request.retest', '{\"via\": \"api\"}')"
wait_for 20 sh -c "[ -n \"\$(sqlite3 '$db' \"SELECT id FROM jobs WHERE kind = 'retest'\")\" ]" ||
	fail "no retest job: $(ctl jobs)"
[ "$(sqlite3 "$db" "SELECT args FROM jobs WHERE kind = 'retest'")" = '{"patch":1,"by":"Mod <mod@example.org>"}' ] ||
	fail "retest args: $(sqlite3 "$db" "SELECT args FROM jobs WHERE kind = 'retest'")"
wait_for 20 sh -c "sqlite3 '$db' \"SELECT detail FROM events WHERE kind = 'request.ignored' AND bug_id = $missing\" | grep -q 'no patch'" ||
	fail "retest without a patch not answered"
final "$bugconfig" retest
error_of "$bugconfig" retest | grep -q "no \[build\] and \[vm\]" || fail "retest: $(error_of "$bugconfig" retest)"
ctl bug "$bugconfig" | grep -q "State: *awaiting-approval" || fail "a failed retest moved the bug"
ok "retest requests"

# A repair job resumed after its "repaired" step (the engine's output is
# in its folder) records the patch without asking any model (none is
# configured) and queues the moderation mail; the plain source folder
# gets it by mail only.  Run again after "recorded" (a kill -9 between
# the commit and the job's end), it adds nothing.
cat >> "$T/kfix.conf" <<CONF
[mail]
	from = kfix bot <kfix@kfix.example.org>
[tree "local"]
	moderation-address = moderation@example.org
CONF
kill -HUP "$KFIXD_PID"
# the bug comes in for a tree kfixd does not know, so that no reproduce
# job is queued for it before it is moved, with job 100, to "local"
rb=$(TREE=elsewhere sub --title "KASAN: use-after-free Read in ksys_msgctl" --id resumed --repro "$T/repro.c" --source syzbot)
J=$T/state/jobs/100
mkdir -p "$J"
cat > "$J/fix.diff" <<'D'
diff --git a/ipc/msg.c b/ipc/msg.c
--- a/ipc/msg.c
+++ b/ipc/msg.c
@@ -1 +1 @@
-int x;
+int y;
D
printf 'ipc/msg: fix it\n\nBody of the fix.\n\nReported-by: syzbot+resumed@syzkaller.appspotmail.com\nAssisted-by: kfix:test\n' > "$J/commit-message.txt"
cat > "$J/explanation.md" <<'M'
# KASAN: use-after-free Read in ksys_msgctl

## Root cause

read after free in freeque()

## Evidence

the probe shows it

Probe output:

```
kfix-probe freeing msg=1
```

## Patch type

root-cause fix

## Reproduction

| kernel | runs | crashed | survived | title |
| --- | --- | --- | --- | --- |
| base  | 3 | 3 | 0 | KASAN: use-after-free Read in ksys_msgctl |
| patched | 5 | 0 | 5 | - |

## Not tested

other configurations
M
# what kfixd reads: the same as data (the model's texts may hold "|" or a
# line like a Markdown heading)
cat > "$J/explanation.json" <<'E'
{"title": "KASAN: use-after-free Read in ksys_msgctl",
 "root_cause": "read after free in freeque()\n",
 "evidence": "the probe shows it | (a pipe)\n## a line like a heading",
 "probe_output": "kfix-probe freeing msg=1",
 "patch_type": "root-cause fix",
 "reproduction": [
  {"kernel": "base ", "runs": 3, "crashed": 3, "survived": 0, "title": "KASAN: use-after-free Read in ksys_msgctl"},
  {"kernel": "patched", "runs": 5, "crashed": 0, "survived": 5}],
 "tested": "- reproducer: ...\n",
 "not_tested": "- other configurations\n"}
E
cat > "$J/outcome.json" <<'O'
{"result": "validated", "reason": "validated after 1 attempt(s)", "attempts": 1,
 "llm": {"model": "m", "calls": 7, "failures": 0, "retries": 0, "tokens_in": 700, "tokens_out": 140, "cost": 0.5},
 "builds": 2, "runs": 2}
O
q "UPDATE bugs SET state = 'repairing', tree = 'local' WHERE id = $rb;
	INSERT INTO jobs (id, bug_id, kind, state, max_attempts, checkpoint, args, created)
	VALUES (100, $rb, 'repair', 'queued', 3, 'repaired', '{\"reproduce-job\": 99}', 0)"
wait_for 30 sh -c "ls '$T'/spool/*rfc*.eml 2>/dev/null | grep -q ." || fail "no moderation mail: $(ctl jobs) $(tail -5 "$T/kfixd.log")"
# the job marks itself done after it queued the patch's publish job
wait_for 30 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$db' 'SELECT state FROM jobs WHERE id = 100')\" = done ]" ||
	fail "repair job: $(ctl job 100)"
[ "$(sqlite3 "$db" "SELECT json_extract(result, '\$.llm.calls') || ' ' || json_extract(result, '\$.patch') FROM jobs WHERE id = 100")" = "7 2" ] ||
	fail "result: $(sqlite3 "$db" "SELECT result FROM jobs WHERE id = 100")"
ctl bug "$rb" | grep -q "State: *awaiting-approval" || fail "bug: $(ctl bug "$rb")"
mail=$(ls "$T"/spool/*rfc*.eml)
grep -q "^Subject: \[PATCH RFC\] ipc/msg: fix it" "$mail" || fail "subject: $(grep ^Subject "$mail")"
grep -q "crashed 3 of 3: KASAN: use-after-free Read in ksys_msgctl" "$mail" || fail "base row"
grep -q "survived 5 of 5" "$mail" || fail "patched row"
grep -q '```' "$mail" && fail "markdown fences in the mail"
grep -q "^kfix-probe freeing msg=1" "$mail" || fail "probe output"
grep -q "^## a line like a heading" "$mail" || fail "the evidence was cut at a line like a heading"
grep -A2 "^Patch type" "$mail" | grep -q "^root-cause fix" || fail "the patch type is not in the mail"
grep -q "^base-commit:" "$mail" && fail "a plain folder has no base commit"
[ "$(sqlite3 "$db" "SELECT branch IS NULL FROM patches WHERE bug_id = $rb")" = 1 ] || fail "a branch for a plain folder"
ctl retry 100 >/dev/null
wait_for 30 sh -c "[ \"\$(sqlite3 '$db' \"SELECT state || attempts FROM jobs WHERE id = 100\")\" = done1 ]" ||
	fail "rerun: $(ctl job 100)"
sleep 1.5
[ "$(sqlite3 "$db" "SELECT count(*) FROM patches WHERE bug_id = $rb") $(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE bug_id = $rb AND kind = 'publish'") $(ls "$T"/spool/*rfc*.eml | wc -l)" = "1 1 1" ] ||
	fail "a rerun added a patch, publish job or mail"
# what the bug's jobs spent on the model (from the repair job's result)
ctl bug "$rb" | grep -q "^Model: *7 calls, 700+140 tokens, cost 0.5000" ||
	fail "the bug's model usage: $(ctl bug "$rb" | grep Model)"
[ "$(ctl --json bug "$rb" | python3 -c 'import json,sys; print(json.load(sys.stdin)["llm"]["tokens_in"])')" = 700 ] ||
	fail "the bug's model usage in JSON"
ok "resumed repair: one patch, one mail"

# a url tree: fetched into its mirror, the worktree checked out at the
# bug's base commit (then no [build]/[vm] to go on with)
gb=$(ctl submit --title "git tree" --id gitbug --tree git --commit "$BASE" --report "$T/report" \
	--repro "$T/repro.c" | cut -d' ' -f2)
final "$gb"
error_of "$gb" | grep -q "no \[build\] and \[vm\]" || fail "git tree: $(error_of "$gb")"
[ "$(cat "$T/cache/worktrees/git/ipc/msg.c")" = "int base;" ] || fail "worktree not at the base commit"
[ -d "$T/cache/trees/git.git" ] || fail "no mirror"
ok "a url tree is fetched and checked out at the base"
stop_kfixd
! grep -q "Sanitizer" "$T/kfixd.log" || fail "a job process tripped a sanitizer: $(grep -A5 Sanitizer "$T/kfixd.log")"
