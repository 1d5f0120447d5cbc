# Shared helpers for integration tests (sourced).  Each test gets a fresh
# folder with its own config and state; everything started is stopped on
# exit.
set -eu

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
KFIXD=$top_builddir/kfixd
KFIXCTL=$top_builddir/kfixctl
T=$(mktemp -d "${TMPDIR:-/tmp}/kfix-it.XXXXXX")
PIDS=""

cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
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

ctl() { "$KFIXCTL" -c "$T/kfix.conf" "$@"; }

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

# wait_for SECONDS COMMAND...: polls every 0.1 s until COMMAND succeeds.
wait_for() {
	local n=$(($1 * 10)); shift
	while [ "$n" -gt 0 ]; do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on just now
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
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
