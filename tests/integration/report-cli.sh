#!/bin/sh
# kfixctl report parse/symbolize end to end: a crash log in, the JSON keys
# and values out; a small ELF with an inlined function is symbolised with
# file:line and [inline] frames.
set -eu
: "${top_builddir:=.}"
KFIXCTL="$top_builddir/kfixctl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed to check JSON"; exit 77; }

cat >"$tmp/log" <<'LOG'
[   10.000000][ T100] random line before
[   10.100000][ T100] ==================================================================
[   10.100001][ T100] BUG: KASAN: use-after-free in ip6_send_skb+0x2f5/0x330
[   10.100002][ T100] Read of size 8 at addr ffff88004fab1858 by task syz-executor0/30168
[   10.100003][ T100]
[   10.100004][ T100] CPU: 0 PID: 30168 Comm: syz.2.77 Not tainted 4.12.0-rc3+ #3
[   10.100005][ T100] Call Trace:
[   10.100006][ T100]  dump_stack+0x292/0x395 lib/dump_stack.c:52
[   10.100007][ T100]  kasan_report+0x230/0x340 mm/kasan/report.c:408
[   10.100008][ T100]  ip6_send_skb+0x2f5/0x330 net/ipv6/ip6_output.c:1748
[   10.100009][ T100]  ip6_push_pending_frames+0xb8/0xe0 net/ipv6/ip6_output.c:1763
[   10.100010][ T100]  rawv6_sendmsg+0x2ede/0x4400 net/ipv6/raw.c:932
[   10.100011][ T100]  entry_SYSCALL_64_fastpath+0x1f/0xbe
LOG

"$KFIXCTL" report parse --json "$tmp/log" >"$tmp/out.json" || fail "report parse --json failed"
python3 - "$tmp/out.json" <<'PY' || fail "unexpected JSON"
import json, sys
j = json.load(open(sys.argv[1]))
keys = {"title", "alt_titles", "type", "frame", "frames", "guilty_file", "corrupted",
        "suppressed", "panicked", "report"}
assert set(j) == keys, sorted(j)
assert j["title"] == "KASAN: use-after-free Read in ip6_send_skb", j["title"]
assert j["type"] == "KASAN-USE-AFTER-FREE-READ", j["type"]
assert j["frame"] == "ip6_send_skb", j["frame"]
assert j["guilty_file"] == "net/ipv6/ip6_output.c", j["guilty_file"]
assert "bad-access in ip6_send_skb" in j["alt_titles"]
assert j["frames"][0] == "ip6_send_skb", j["frames"]
assert j["corrupted"] is False and j["panicked"] is False and j["suppressed"] is False
assert j["report"].startswith("random line before\n"), j["report"][:80]
PY

# no crash: title null, report null
printf 'just a boot log\nnothing to see\n' | "$KFIXCTL" report parse --json - >"$tmp/none.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["title"] is None and j["report"] is None and j["alt_titles"] == []' "$tmp/none.json" \
	|| fail "no-crash log should give a null title"
"$KFIXCTL" report parse - </dev/null | grep -q 'no crash' || fail "empty input"
# binary garbage with invalid UTF-8 still yields valid JSON
head -c 65536 /dev/urandom >"$tmp/garbage"
printf '\nBUG: KASAN: \377\376 in \300\n' >>"$tmp/garbage"
"$KFIXCTL" report parse --json "$tmp/garbage" >"$tmp/g.json" || fail "garbage input"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/g.json" || fail "garbage gave invalid JSON"
# usage errors exit 2
set +e
"$KFIXCTL" report parse >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing file should be a usage error"
"$KFIXCTL" report symbolize "$tmp/log" >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing --vmlinux should be a usage error"
"$KFIXCTL" report parse "$tmp/does-not-exist" >/dev/null 2>&1; [ $? -eq 1 ] || fail "missing file should fail"
set -e

# Symbolisation against a small ELF with an inlined helper.
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "SKIP: no C compiler for the symbolizer test"; exit 77; }
cat >"$tmp/prog.c" <<'C'
volatile int sink;
static inline __attribute__((always_inline)) int helper(int x)
{
	sink = x * 7; /* HELPER_LINE */
	return sink + 1;
}
__attribute__((noinline)) int outer(int x)
{
	int y = helper(x); /* CALL_LINE */
	return y * 3;
}
int main(int argc, char **argv)
{
	(void)argv;
	return outer(argc);
}
C
(cd "$tmp" && "$CC" -g -O1 -fno-sanitize=all -o prog prog.c) || { echo "SKIP: cannot build a test ELF"; exit 77; }
helper_line=$(grep -n HELPER_LINE "$tmp/prog.c" | cut -d: -f1)
call_line=$(grep -n CALL_LINE "$tmp/prog.c" | cut -d: -f1)
i=0
: >"$tmp/frames"
while [ $i -lt 24 ]; do
	printf '[   10.0][ T1]  outer+0x%x/0x80\n' $i >>"$tmp/frames"
	i=$((i + 1))
done
printf 'RIP: 0010:outer+0x4/0x80\n unrelated line\n' >>"$tmp/frames"
"$KFIXCTL" report symbolize --vmlinux "$tmp/prog" "$tmp/frames" >"$tmp/sym" || fail "symbolize failed"
grep -q "helper prog.c:$helper_line \[inline\]" "$tmp/sym" || { cat "$tmp/sym"; fail "no inlined helper frame at line $helper_line"; }
grep -q "outer+0x[0-9a-f]*/0x80 prog.c:$call_line\$" "$tmp/sym" || { cat "$tmp/sym"; fail "no caller frame at line $call_line"; }
grep -q '^ unrelated line$' "$tmp/sym" || fail "other lines must pass through"
# the inlined frame comes first, then its caller
awk -v h="helper prog.c:$helper_line" '$0 ~ h { getline n; if (n !~ /outer\+0x/) bad=1; found=1 } END { exit !(found && !bad) }' "$tmp/sym" \
	|| fail "inline frame not followed by its caller"
set +e
"$KFIXCTL" report symbolize --vmlinux "$tmp/prog.c" "$tmp/frames" >/dev/null 2>&1; [ $? -eq 1 ] || fail "a non-ELF vmlinux should fail"
set -e
echo "PASS"
