#!/bin/bash
# The README's demo works: scripts/demo.sh runs kfixd on the real msg-uaf
# kernel with the model replayed from the committed cassette, says that it
# is a replay, and ends with a validated patch mailed for moderation.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
[ "${KFIX_SKIP_KERNEL:-0}" = 1 ] && kt_skip "KFIX_SKIP_KERNEL=1"
top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}
out=$(mktemp "${TMPDIR:-/tmp}/kfix-demo-out.XXXXXX")
trap 'rm -f "$out"' EXIT
KFIX_BIN=$(cd "${top_builddir:-.}" && pwd) bash "$top_srcdir/scripts/demo.sh" > "$out" 2>&1
rc=$?
if [ $rc = 77 ] || grep -q "^demo: cannot run" "$out"; then
	kt_skip "$(grep '^demo: cannot run' "$out" | head -1)"
fi
[ $rc = 0 ] || { tail -40 "$out" >&2; kt_fail "the demo failed (exit $rc)"; }
grep -q "REPLAY: the model's answers come from the recorded cassette" "$out" ||
	kt_fail "the demo does not say it replays"
grep -q "bug 1: reproducing" "$out" && grep -q "bug 1: awaiting-approval" "$out" ||
	kt_fail "the states were not shown"
grep -q '^Subject: \[PATCH RFC\] ipc/msg: do not read a message after freeing it' "$out" ||
	kt_fail "no moderation mail shown"
grep -q '^-		msq->q_cbytes -= msg->m_ts;' "$out" || kt_fail "the fix is not in the mail"
grep -q "a validated patch awaits the moderator" "$out" || kt_fail "no final word"
echo PASS
