# Shared helpers for integration tests (sourced).  Each test gets a fresh
# folder with its own config and state; everything started is stopped on
# exit.  What the kernel tests share with these is in tests/lib-common.sh.
set -eu

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
. "$top_srcdir/tests/lib-common.sh"
# a skip's reason goes to stderr here, to stdout in the kernel tests
TEST_SKIP_FD=2
KFIXD=$top_builddir/kfixd
KFIXCTL=$top_builddir/kfixctl
T=$(test_tmp_make kfix-it)
PIDS=""

# KEEP=1 keeps $T to look at after a failure.
cleanup() {
	# shellcheck disable=SC2086 # PIDS is a list of numbers
	test_cleanup KILL "${KEEP:-}" $PIDS
}
trap cleanup EXIT

fail() { test_fail "$@"; }
skip() { test_skip "$@"; }
ok() { echo "ok: $*"; }

# write_config [extra lines]: a config with state and spool under $T;
# the extra lines go into [kfix], and later appends land there too.
write_config() {
	cat > "$T/kfix.conf" <<CONF
[mail]
	transport = spool
	spool-dir = $T/spool
	# unsigned syzbot mails here: DKIM is tested in mail-auth.sh
	syzbot-auth = none
[kfix]
	state-dir = $T/state
	log-level = debug
	retry-delay = 0
CONF
	[ $# -eq 0 ] || printf '%s\n' "$@" >> "$T/kfix.conf"
}

# start_kfixd: runs kfixd in the background, log in $T/kfixd.log.
start_kfixd() {
	STARTS=$(grep -c "kfixd .* started" "$T/kfixd.log" 2>/dev/null || true)
	"$KFIXD" -c "$T/kfix.conf" --log-target stderr >>"$T/kfixd.log" 2>&1 &
	KFIXD_PID=$!
	PIDS="$PIDS $KFIXD_PID"
}

stop_kfixd() {
	# a SIGTERM before main() runs would kill it the default way
	wait_for 30 sh -c "[ \$(grep -c 'kfixd .* started' '$T/kfixd.log') -gt ${STARTS:-0} ]" || true
	kill -TERM "$KFIXD_PID"
	wait "$KFIXD_PID" || fail "kfixd exited with $? on SIGTERM"
}

# spooled PATTERN [N]: a mail (or exactly N) matching *PATTERN.eml is in
# the spool; a mail still being written is named ...eml.tmp.PID.
spooled() {
	local n
	n=$(find "$T/spool" -maxdepth 1 -name "*$1.eml" 2>/dev/null | wc -l)
	if [ $# -gt 1 ]; then [ "$n" = "$2" ]; else [ "$n" -ge 1 ]; fi
}

json_field() { # json_field EXPR: reads JSON on stdin, prints python expr on j
	python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"
}

# The upstream tree of the publishing tests, in $U: the kernel's
# MAINTAINERS and get_maintainer.pl (from Debian's linux-source-6.1, read
# at test time) and mm/slub.c; $BASE is its commit and $T/fix.diff a fix
# of it (a NULL check).  Skips when the source tarball is missing.
upstream_tree() {
	local tar=/usr/src/linux-source-6.1.tar.xz
	[ -r "$tar" ] || skip "$tar missing (Debian package linux-source-6.1)"
	U=$T/upstream
	mkdir -p "$U/mm"
	tar -xJf "$tar" -C "$U" --strip-components=1 linux-source-6.1/MAINTAINERS \
		linux-source-6.1/scripts/get_maintainer.pl || skip "cannot extract kernel scripts"
	printf 'void slab_free(struct kmem_cache *s, void *x)\n{\n\tdo_slab_free(s, x);\n}\n' > "$U/mm/slub.c"
	git -C "$U" init -q -b master
	git -C "$U" -c user.name=U -c user.email=u@example.org add -A
	git -C "$U" -c user.name=U -c user.email=u@example.org commit -qm "base"
	BASE=$(git -C "$U" rev-parse HEAD)
	sed -i 's/^\tdo_slab_free(s, x);/\tif (!x)\n\t\treturn;\n\tdo_slab_free(s, x);/' "$U/mm/slub.c"
	git -C "$U" diff > "$T/fix.diff"
	git -C "$U" checkout -q .
}

# Delivers FILE to the mail webhook of kfixd on 127.0.0.1:$port, signed as
# the MTA signs it (secret mail-secret); prints the HTTP status.
post_mail() { # FILE DELIVERY-ID
	local ts sig
	ts=$(date +%s)
	sig=$({ printf '%s.' "$ts"; cat "$1"; } | openssl dgst -sha256 -hmac mail-secret -hex | sed 's/.* //')
	curl -s -o /dev/null -w '%{http_code}' --data-binary @"$1" -H "X-Kfix-Timestamp: $ts" \
		-H "X-Kfix-Signature: sha256=$sig" -H "X-Kfix-Delivery: $2" "http://127.0.0.1:$port/hooks/mail"
}
