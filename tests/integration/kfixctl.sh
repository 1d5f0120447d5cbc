#!/bin/bash
# kfixctl against a store: tables, --json, errors and exit codes.
. "$(dirname "$0")/lib.sh"

write_config
ctl submit --title "KASAN: slab-use-after-free Read in foo" --id ext1 --tree linux \
	--commit v6.1 | grep -q "bug 1 added" || fail "submit"
ctl submit --title "KASAN: slab-use-after-free Read in foo" --id ext1 |
	grep -q "bug 1 already known" || fail "duplicate submit"
ctl submit --title $'evil\033[31m title\nInjected: x' --id ext2 >/dev/null
ctl bugs | grep -q "^1 *new .*linux *KASAN: slab-use-after-free Read in foo" || fail "bugs table: $(ctl bugs)"
ctl bugs | grep -q 'evil\\x1b\[31m title\\nInjected: x' || fail "untrusted title not escaped: $(ctl bugs | cat -A)"
[ "$(ctl bugs --json | json_field 'len(j)')" = 2 ] || fail "bugs --json"
[ "$(ctl --json bugs --state new | json_field 'j[-1]["source_id"]')" = ext1 ] || fail "--json before command"
[ "$(ctl bugs --state sent --json | json_field 'len(j)')" = 0 ] || fail "state filter"
# --limit N: the N newest, newest first (as journalctl and git log)
[ "$(ctl bugs --limit 1 --json | json_field 'j[0]["source_id"]')" = ext2 ] || fail "bugs --limit 1: $(ctl bugs --limit 1)"
ctl bugs | head -2 | tail -1 | grep -q "^2 " || fail "bugs not newest first: $(ctl bugs)"
ctl bug 1 | grep -q "^State: *new" || fail "bug 1"
[ "$(ctl bug 1 --json | json_field 'j["tree"]')" = linux ] || fail "bug --json"
ctl status | grep -q "new *2" || fail "status: $(ctl status)"
[ "$(ctl status --json | json_field 'j["bugs"]["new"]')" = 2 ] || fail "status --json"
# a job's result is JSON in the view, not a string holding JSON
sqlite3 "$T/state/kfix.db" "INSERT INTO jobs (id, bug_id, kind, state, max_attempts, result, created)
	VALUES (77, 1, 'repair', 'done', 3, '{\"result\": \"validated\", \"llm\": {\"calls\": 7}}', 0),
	       (78, 1, 'repair', 'failed', 3, 'not json', 0)"
[ "$(ctl job 77 --json | json_field 'j["result"]["llm"]["calls"]')" = 7 ] || fail "job result JSON: $(ctl job 77 --json)"
[ "$(ctl job 78 --json | json_field 'j["result"]')" = "not json" ] || fail "a result that is not JSON"
sqlite3 "$T/state/kfix.db" "DELETE FROM jobs WHERE id IN (77, 78)"
ok "bugs, bug, status"

set +e
ctl bug 99 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q "no such bug" "$T/err" || fail "missing bug: rc $rc $(cat "$T/err")"
ctl bug abc 2>"$T/err"; [ $? = 2 ] || fail "bad id must be a usage error"
ctl bugs --state bogus 2>"$T/err"; [ $? = 2 ] || fail "bad state"
ctl frobnicate 2>"$T/err"; [ $? = 2 ] && grep -q "unknown command" "$T/err" || fail "unknown command"
ctl retry 5 2>"$T/err"; [ $? = 1 ] && grep -q "no job 5" "$T/err" || fail "retry missing"
ctl submit --title x 2>"$T/err"; [ $? = 2 ] || fail "submit without id"
"$KFIXCTL" -c "$T/nope.conf" status 2>"$T/err"; [ $? = 1 ] && grep -q "nope.conf" "$T/err" || fail "missing config"
# a wrong count of operands is a usage error for every command that
# takes a fixed number, found before a config or a store is read
for a in "bug" "bug 1 2" "job" "patch 1 2" "publish" "retry" "cancel 1 2" "compare" \
	"compare 1 v6.1 x" "trace" "status x" "pause x" "resume x" "drain x"; do
	"$KFIXCTL" -c "$T/nope.conf" $a 2>"$T/err"; rc=$?
	[ $rc = 2 ] && grep -Eq "usage: kfixctl ${a%% *} |takes no arguments" "$T/err" ||
		fail "'$a': rc $rc, $(cat "$T/err")"
done
"$KFIXCTL" -c "$T/nope.conf" job 0 2>"$T/err"; [ $? = 2 ] && grep -q "'0' is not an id" "$T/err" ||
	fail "job 0: $(cat "$T/err")"
set -e
"$KFIXCTL" --help | grep -q "^  retry JOB" || fail "--help lists commands"
# COMMAND --help answers without a config, a store or the command's arguments
"$KFIXCTL" -c "$T/nope.conf" retry --help > "$T/help" || fail "retry --help failed"
[ "$(head -1 "$T/help")" = "Usage: kfixctl retry JOB" ] || fail "retry --help: $(cat "$T/help")"
"$KFIXCTL" -c "$T/nope.conf" approve --by x --help | grep -q "^approve a patch" || fail "approve --help"
# every command of the list: COMMAND --help, help COMMAND, and an entry
# of its own in kfixctl(1)
man1=$top_builddir/doc/kfixctl.1
cmds=$("$KFIXCTL" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ "$(echo "$cmds" | wc -l)" -ge 25 ] || fail "the command list: $cmds"
for cmd in $cmds; do
	"$KFIXCTL" -c "$T/nope.conf" "$cmd" --help > "$T/help" || fail "$cmd --help failed"
	[ "$(head -1 "$T/help" | cut -d' ' -f1-3)" = "Usage: kfixctl $cmd" ] || fail "$cmd --help: $(cat "$T/help")"
	"$KFIXCTL" -c "$T/nope.conf" help "$cmd" | cmp -s - "$T/help" || fail "help $cmd differs from $cmd --help"
	grep -q "^\.B $(printf '%s' "$cmd" | sed 's/-/\\\\-/g')\( \|\$\)" "$man1" || fail "$cmd has no entry in kfixctl(1)"
done
"$KFIXCTL" help | cmp -s - <("$KFIXCTL" --help) || fail "help differs from --help"
set +e
"$KFIXCTL" help frobnicate 2>"$T/err"; [ $? = 2 ] && grep -q "no command 'frobnicate'" "$T/err" || fail "help of an unknown command"
set -e
ok "errors and exit codes"

# jobs: queue one by hand through the daemon's scheduler, then cancel/retry
write_config "	self-test-jobs = yes" "	self-test-step = 30s"
start_kfixd
wait_for 20 sh -c "'$KFIXCTL' -c '$T/kfix.conf' jobs --json | grep -q running" || fail "no running job"
ctl jobs | grep -q "self-test *running" || fail "jobs table: $(ctl jobs)"
ctl cancel 1 | grep -q "job 1: cancelled" || fail "cancel"
set +e; ctl cancel 1 2>"$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q "already ended" "$T/err" || fail "double cancel"
# the worker kills it at its next lease renewal, or, cancelled before it
# got going, the job process finds its lease gone and stops by itself
wait_for 60 grep -qE "lease lost|job 1 is not leased to" "$T/kfixd.log" || fail "cancelled job not stopped: $(ctl jobs 2>&1; tail -20 "$T/kfixd.log")"
ctl retry 1 | grep -q "queued again" || fail "retry"
wait_for 20 sh -c "'$KFIXCTL' -c '$T/kfix.conf' job 1 --json | grep -q '\"running\"'" || fail "retried job not running"
[ "$(ctl job 1 --json | json_field 'j["kind"]')" = self-test ] || fail "job --json"
stop_kfixd
ok "jobs, cancel, retry"
