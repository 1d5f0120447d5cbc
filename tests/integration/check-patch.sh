#!/bin/sh
# kfixctl check-patch on a small tree with the kernel's real
# scripts/checkpatch.pl, taken from Debian's linux-source package.
set -eu
: "${top_builddir:=.}"
kfixctl="$top_builddir/kfixctl"
tarball=${KFIX_LINUX_SOURCE:-$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | head -n1)}
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
	echo "SKIP: no /usr/src/linux-source-*.tar.xz (apt-get install linux-source)"
	exit 77
fi
command -v perl >/dev/null || { echo "SKIP: perl is needed for checkpatch.pl"; exit 77; }
dir=$(mktemp -d /tmp/kfix-check-patch.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# Extracting from the tarball takes half a minute: cache it per build.
cache="$top_builddir/tests/cache/checkpatch"
if [ ! -f "$cache/scripts/checkpatch.pl" ]; then
	mkdir -p "$cache.tmp"
	tar -xJf "$tarball" -C "$cache.tmp" --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch' \
		'*/kernel/sys.c'
	rm -rf "$cache" && mv "$cache.tmp" "$cache"
fi
mkdir -p "$dir/src/net/foo"
cp -r "$cache/scripts" "$dir/src/"
cat > "$dir/src/net/foo/foo.c" <<'C'
// SPDX-License-Identifier: GPL-2.0
#include <linux/slab.h>

int foo_release(struct foo *f)
{
	struct foo_item *it = f->items;

	WARN_ON(!f->owner);
	while (it) {
		struct foo_item *next = it->next;

		kfree(it);
		it = next;
	}
	return 0;
}
C
cat > "$dir/report" <<'R'
TITLE: KASAN: slab-use-after-free Read in foo_release

BUG: KASAN: slab-use-after-free in foo_release+0x1a/0x80 net/foo/foo.c:11
Call Trace:
 foo_release+0x1a/0x80 net/foo/foo.c:11
 foo_put+0x10/0x20 net/foo/foo.c:30
R
mk_patch() { # name, then the new foo.c on stdin
	mkdir -p "$dir/g/a/net/foo" "$dir/g/b/net/foo"
	cp "$dir/src/net/foo/foo.c" "$dir/g/a/net/foo/foo.c"
	cat > "$dir/g/b/net/foo/foo.c"
	# the a/ and b/ folders give git's usual path prefixes
	(cd "$dir/g" && git diff --no-index --no-prefix a/net/foo/foo.c b/net/foo/foo.c) \
		> "$dir/$1.patch" || true
}
fail() { echo "FAIL: $*"; exit 1; }

sed 's/^\treturn 0;/\tf->items = NULL;\n\treturn 0;/' "$dir/src/net/foo/foo.c" | mk_patch good
sed 's/^\treturn 0;/\tif(f->items)\n\t\tf->items = NULL;\n\treturn 0;/' "$dir/src/net/foo/foo.c" | mk_patch style
sed '/WARN_ON/d' "$dir/src/net/foo/foo.c" | mk_patch cheat
grep -q '^+	f->items = NULL;' "$dir/good.patch" || fail "good patch not made: $(cat "$dir/good.patch")"

run() { "$kfixctl" -c "$dir/none.conf" check-patch --src "$dir/src" --report "$dir/report" "$@"; }

out=$(run --patch "$dir/good.patch") || fail "good patch rejected: $out"
echo "$out" | grep -q '^checkpatch  pass' || fail "checkpatch did not run: $out"

if out=$(run --patch "$dir/style.patch"); then fail "style error accepted: $out"; fi
echo "$out" | grep -q '^checkpatch  reject.*SPACING' || fail "no checkpatch rejection: $out"

if out=$(run --patch "$dir/cheat.patch" --json); then fail "cheat accepted: $out"; fi
echo "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["accepted"] is False, j
bad = [g for g in j["gates"] if g["verdict"] == "reject"]
assert bad[0]["gate"] == "checks" and "WARN_ON" in bad[0]["reason"], bad
' || fail "cheat verdict wrong: $out"

# A crash reached through a syscall, on the kernel's own kernel/sys.c: the
# frames name the wrappers, the tree SYSCALL_DEFINE2(sethostname, ...).
mkdir -p "$dir/src/kernel"
cp "$cache/kernel/sys.c" "$dir/src/kernel/sys.c"
def=$(grep -n '^SYSCALL_DEFINE2(sethostname' "$dir/src/kernel/sys.c" | cut -d: -f1)
copy=$(awk -v d="$def" 'NR > d && /memcpy\(u->nodename, tmp, len\)/ { print NR; exit }' "$dir/src/kernel/sys.c")
[ -n "$def" ] && [ -n "$copy" ] || fail "kernel/sys.c has no sethostname() of the expected shape"
cat > "$dir/sys-report" <<R
BUG: KASAN: slab-out-of-bounds in __do_sys_sethostname kernel/sys.c:$copy [inline]
Write of size 64 at addr ffff888012345678 by task repro/812
Call Trace:
 <TASK>
 kasan_report+0xad/0x130 mm/kasan/report.c:495
 __do_sys_sethostname kernel/sys.c:$copy [inline]
 __se_sys_sethostname kernel/sys.c:$def [inline]
 __x64_sys_sethostname+0x1a4/0x230 kernel/sys.c:$def
 do_syscall_64+0x3b/0x90 arch/x86/entry/common.c:80
 </TASK>
R
sys_patch() { # name, then a sed script for kernel/sys.c
	mkdir -p "$dir/g/a/kernel" "$dir/g/b/kernel"
	cp "$dir/src/kernel/sys.c" "$dir/g/a/kernel/sys.c"
	sed "$2" "$dir/src/kernel/sys.c" > "$dir/g/b/kernel/sys.c"
	(cd "$dir/g" && git diff --no-index --no-prefix a/kernel/sys.c b/kernel/sys.c) \
		> "$dir/$1.patch" || true
	[ -s "$dir/$1.patch" ] || fail "$1: the sed script changed nothing"
}
# the unconditional early return, the release dropped, and a real check
sys_patch early "${def},${copy}s/^\(.*errno = -EFAULT;\)/\treturn -EINVAL;\n\1/"
sys_patch unlock "$((copy + 1)),$((copy + 6)){/up_write(&uts_sem);/d}"
sys_patch valid "${def},${copy}s/^\(.*errno = -EFAULT;\)/\tif (len == 0)\n\t\treturn -EINVAL;\n\1/"
srun() { "$kfixctl" -c "$dir/none.conf" check-patch --no-checkpatch --src "$dir/src" \
	--report "$dir/sys-report" --json --patch "$dir/$1.patch"; }
gate_of() { python3 -c '
import json, sys
j = json.load(sys.stdin)
bad = [g["gate"] for g in j["gates"] if g["verdict"] == "reject"]
print(bad[0] if bad else "accepted")'; }
for want in early:amputation unlock:resources valid:accepted; do
	got=$(srun "${want%%:*}" | gate_of) || true
	[ "$got" = "${want#*:}" ] || fail "sethostname ${want%%:*}: want ${want#*:}, got $got: $(srun "${want%%:*}")"
done

run --patch /nonexistent >/dev/null 2>&1 && fail "missing patch accepted"
[ $? -eq 1 ] || true
echo "PASS"
