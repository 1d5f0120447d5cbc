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
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
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

run --patch /nonexistent >/dev/null 2>&1 && fail "missing patch accepted"
[ $? -eq 1 ] || true
echo "PASS"
