#!/bin/sh
# kfixctl mail parse: the documented JSON shape, stdin, the size limit and
# malformed input.
. "$top_srcdir/tests/integration/mail-lib.sh"
KFIXCTL="$top_builddir/kfixctl"
FIX="$top_srcdir/tests/fixtures/mail"
command -v python3 >/dev/null || skip "python3 is not installed"

"$KFIXCTL" mail parse --json "$FIX/syzbot-report.eml" >"$T/r.json" || fail "parse"
python3 - "$T/r.json" <<'EOPY' || fail "JSON shape"
import json, sys
j = json.load(open(sys.argv[1]))
assert sorted(j) == sorted(["message_id", "in_reply_to", "from", "subject", "kind", "syzbot",
                            "commands", "patch", "trailers"]), sorted(j)
assert sorted(j["syzbot"]) == sorted(["extid", "title", "head_commit", "git_tree", "git_branch",
    "console_log", "kernel_config", "dashboard", "syz_repro", "c_repro", "compiler"])
assert j["kind"] == "syzbot-report"
assert j["in_reply_to"] is None and j["patch"] is None and j["commands"] == []
assert j["syzbot"]["extid"] == "4f3a9c0de81b27a6e5d4"
assert j["syzbot"]["kernel_config"] == "https://syzkaller.appspot.com/x/.config?x=9bd4e0b4a13e7f22"
EOPY

# stdin, and --json before the command
"$KFIXCTL" --json mail parse - <"$FIX/reply-test-attached.eml" >"$T/s.json" || fail "stdin"
grep -q '"kind": "reply"' "$T/s.json" || fail "stdin kind"
grep -q '"name": "syz-test"' "$T/s.json" || fail "stdin command"

# human output escapes what it prints
printf 'From: a@example.org\nSubject: =?UTF-8?B?G1szMW1yZWQ=?=\n\nx\n' >"$T/esc.eml"
"$KFIXCTL" mail parse "$T/esc.eml" >"$T/esc.out" || fail "human"
grep -q "$(printf '\033')" "$T/esc.out" && fail "escape sequence printed raw"

# too large: a clear error, exit 1
head -c 20000000 /dev/zero | tr '\0' 'a' >"$T/big.eml"
rc=0; "$KFIXCTL" mail parse "$T/big.eml" 2>"$T/big.err" >/dev/null || rc=$?
[ "$rc" = 1 ] || fail "big mail: exit $rc"
grep -q 'size limit' "$T/big.err" || fail "big mail error: $(cat "$T/big.err")"

# usage
rc=0; "$KFIXCTL" mail frobnicate 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "usage exit $rc"
echo PASS
