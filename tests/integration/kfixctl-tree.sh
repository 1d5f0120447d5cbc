#!/bin/sh
# kfixctl tree: mirror a local upstream over file://, resolve, show a file
# and a function, search the log.  The git program only builds the
# upstream repository; kfixctl itself uses libgit2.
set -eu

command -v git >/dev/null 2>&1 || { echo "git not installed"; exit 77; }
kfixctl="${top_builddir:-.}/kfixctl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

up="$tmp/up"
git init -q -b master "$up"
mkdir -p "$up/mm"
printf 'static int\nfoo(int x)\n{\n\treturn x;\n}\n' >"$up/mm/a.c"
git -C "$up" add mm/a.c
git -C "$up" -c user.name=Dev -c user.email=dev@example.org commit -q -m "mm: add foo"
printf 'static int\nfoo(int x)\n{\n\treturn !x;\n}\n' >"$up/mm/a.c"
git -C "$up" -c user.name=Dev -c user.email=dev@example.org commit -q -a \
	-m "mm: fix foo" -m "Reported-by: syzbot+feedf00d@syzkaller.appspotmail.com"
want=$(git -C "$up" rev-parse HEAD)

cat >"$tmp/kfix.conf" <<CONF
[kfix]
	state-dir = $tmp/state
	cache-dir = $tmp/cache
[tree "up"]
	url = file://$up
CONF
k() { "$kfixctl" -c "$tmp/kfix.conf" "$@"; }

k tree fetch up >"$tmp/out"
grep -q "HEAD $want" "$tmp/out" || { cat "$tmp/out"; echo "fetch: wrong HEAD"; exit 1; }
test -d "$tmp/cache/trees/up.git" || { echo "no mirror"; exit 1; }

test "$(k tree resolve up master)" = "$want" || { echo "resolve failed"; exit 1; }
test "$(k --json tree resolve up HEAD~1 | tr -d ' \n')" = "{\"commit\":\"$(git -C "$up" rev-parse HEAD~1)\"}" ||
	{ k --json tree resolve up HEAD~1; echo "json resolve failed"; exit 1; }
if k tree resolve up 0123456789abcdef 2>"$tmp/err"; then
	echo "unknown commit resolved"; exit 1
fi
grep -q "unknown commit '0123456789abcdef'" "$tmp/err" || { cat "$tmp/err"; exit 1; }

k tree show up HEAD~1 mm/a.c | grep -q "return x;" || { echo "show failed"; exit 1; }
k tree show up HEAD mm/a.c --function foo >"$tmp/fn"
printf 'static int\nfoo(int x)\n{\n\treturn !x;\n}\n' | cmp -s - "$tmp/fn" ||
	{ cat "$tmp/fn"; echo "function differs"; exit 1; }

test "$(k tree log-grep up 'Reported-by: syzbot+feedf00d')" = "$want" ||
	{ echo "log-grep failed"; exit 1; }
if k tree log-grep up 'syzbot+00000000' >/dev/null; then
	echo "log-grep found a missing needle"; exit 1
fi
if k tree fetch nosuchtree 2>/dev/null; then
	echo "unknown tree accepted"; exit 1
fi
exit 0
