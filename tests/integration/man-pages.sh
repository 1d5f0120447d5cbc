#!/bin/sh
# The manual pages render without a warning from groff (man --warnings:
# unknown macros, bad escapes, lines that cannot be broken).
. "$top_srcdir/tests/integration/lib.sh"

command -v man >/dev/null || skip "man is not installed (man-db)"
n=0
for page in "$top_builddir"/doc/*.[1-8]; do
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>"$T/warn" >"$T/out" ||
		fail "$page does not render: $(cat "$T/warn")"
	[ -s "$T/warn" ] && fail "$page: $(head -5 "$T/warn")"
	[ -s "$T/out" ] || fail "$page rendered nothing"
	n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n pages"
ok "$n pages render without warnings"

# one default configuration path, the same in the binaries, the unit,
# tmpfiles, the man pages and the example
conf=$("$KFIXD" --help | sed -n 's/.*(default \(.*kfix\.conf\)).*/\1/p')
etc=${conf%/kfix.conf}
[ -n "$conf" ] || fail "kfixd --help names no default configuration"
"$KFIXCTL" --help | grep -qF "(default $conf)" || fail "kfixctl's default differs from kfixd's ($conf)"
grep -qF -- "--config $conf" "$top_builddir/systemd/kfixd.service" || fail "the unit does not use $conf"
grep -qF "LoadCredential=kfix:$etc/credentials" "$top_builddir/systemd/kfixd.service" ||
	fail "the unit's credentials are not in $etc"
grep -q "^d $etc 0750" "$top_builddir/systemd/kfix.tmpfiles" || fail "tmpfiles does not make $etc"
for page in kfixd.8 kfixctl.1 kfix.conf.5; do
	grep -qF "$conf" "$top_builddir/doc/$page" || fail "$page does not name $conf"
done
grep -rhoE "/[a-z/]*etc/kfix" "$top_builddir/systemd/kfix.conf.example" "$top_builddir/systemd/kfixd.service" \
	"$top_builddir/systemd/kfix.tmpfiles" "$top_builddir"/doc/*.[1-8] | sort -u | grep -vxF "$etc" &&
	fail "a file names another configuration folder than $etc"
# the example's prompts are where kfix.conf(5) says they are installed
prompts=$(sed -n 's/^[[:space:]]*prompts-dir = //p' "$top_builddir/systemd/kfix.conf.example")
case "$prompts" in /*/kfix/prompts) ;; *) fail "the example's prompts-dir: $prompts" ;; esac
grep -qF "$prompts" "$top_builddir/doc/kfix.conf.5" || fail "kfix.conf(5) does not name $prompts"
ok "one configuration folder everywhere: $etc"
