#!/bin/bash
# The README's demo works: scripts/demo.sh runs kfixd's whole flow on the
# real msg-uaf kernel with the model replayed from the committed
# cassettes, says that it is a replay, and shows each step's result: the
# bug's states, the branch and note on the git remote, the moderation
# mail, the upstream mail after "#kfix upstream", and v2 after review.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
[ "${KFIX_SKIP_KERNEL:-0}" = 1 ] && kt_skip "KFIX_SKIP_KERNEL=1"
top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}
out=$(mktemp "${TMPDIR:-/tmp}/kfix-demo-out.XXXXXX")
trap 'rm -f "$out"' EXIT
KFIX_BIN=$(cd "${top_builddir:-.}" && pwd) bash "$top_srcdir/scripts/demo.sh" > "$out" 2>&1
rc=$?
if grep -q "^demo: cannot run" "$out"; then
	kt_skip "$(grep '^demo: cannot run' "$out" | head -1)"
fi
[ $rc = 0 ] || { tail -60 "$out" >&2; kt_fail "the demo failed (exit $rc)"; }
# the output without the bold markers of "demo:"
sed -i 's/\x1b\[[0-9;]*m//g' "$out"
want() { # PATTERN WHY
	grep -q -- "$1" "$out" || { cat "$out" >&2; kt_fail "$2"; }
}
want "^demo: REPLAY: the model's answers come from the recorded cassettes" "the demo does not say it replays"
for s in reproducing repairing awaiting-approval sent; do
	want "^demo:   [0-9:]*  bug 1: $s\$" "state $s was not shown"
done
want "^demo:   [0-9:]*  delivered: push linux:kfix/1/v1\$" "the v1 push was not shown"
want "^demo:   [0-9:]*  delivered: mail <kfix-1-v1-rfc\.[0-9a-f]*@kfix.example.org>\$" "the moderation mail's delivery was not shown"
want "^    ipc/msg: do not read a message after freeing it in freeque()" "the branch's commit was not shown"
want '^Subject: \[PATCH RFC\] ipc/msg: do not read a message after freeing it' "no moderation mail shown"
want '^-		msq->q_cbytes -= msg->m_ts;' "the fix is not in the mail"
want '^Subject: \[PATCH\] ipc/msg: do not read a message after freeing it' "no upstream mail shown"
want '^\(To\|Cc\): .*linux-kernel@vger.kernel.org' "the upstream mail's recipients were not shown"
want "^kfix/1/v1 [0-9a-f]* ipc/msg" "no v1 branch on the remote"
want "^kfix/1/v2 [0-9a-f]* ipc/msg" "no v2 branch on the remote"
want '^Subject: \[PATCH RFC v2\] ipc/msg' "no v2 mail shown"
want '^Reviewed-by: Rev Iewer <rev@example.org>' "the v2 mail lacks the Reviewed-by"
want '^Changes since v1:' "the v2 mail lacks its changelog"
want '^Signed-off-by: Mod Erator <mod@example.org>' "the moderator's sign-off was not shown"
want "^demo:   [0-9:]*  job: iterate \$" "the v2 job was not shown"
want "done: v2 awaits the moderator's #kfix upstream" "no final word"
echo PASS
