#!/bin/sh
# The manual pages render without a warning from groff (man --warnings:
# unknown macros, bad escapes, lines that cannot be broken).
. "$top_srcdir/tests/integration/lib.sh"

command -v man >/dev/null || skip "man is not installed (man-db)"
n=0
for page in "$top_srcdir"/doc/*.[1-8]; do
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>"$T/warn" >"$T/out" ||
		fail "$page does not render: $(cat "$T/warn")"
	[ -s "$T/warn" ] && fail "$page: $(head -5 "$T/warn")"
	[ -s "$T/out" ] || fail "$page rendered nothing"
	n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n pages"
ok "$n pages render without warnings"
