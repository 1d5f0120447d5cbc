# Helpers shared by the integration tests (tests/integration/lib.sh) and
# the real-kernel tests (tests/kernel/lib.sh); sourced by those two only.
# Where their callers expect different behaviour, the difference is a
# parameter or a variable that the sourcing library sets:
#   TEST_LOG_TIME=1  messages on stderr start with the time (the kernel
#                    tests run for minutes; the integration tests for
#                    seconds and print no time)
#   TEST_SKIP_FD     where "SKIP: ..." goes: 1 (the kernel tests, and the
#                    default) or 2 (the integration tests)
# Nothing here calls `set`: the integration tests run under `set -eu`, the
# kernel tests under `set -uo pipefail`, so every command here that may
# fail is tested.

# Exit statuses that automake's test driver reads.
TEST_EXIT_FAIL=1
TEST_EXIT_SKIP=77

test_log() {
	if [ "${TEST_LOG_TIME:-0}" = 1 ]; then
		printf '%s %s\n' "$(date +%T)" "$*" >&2
	else
		printf '%s\n' "$*" >&2
	fi
}

test_fail() {
	test_log "FAIL: $*"
	exit "$TEST_EXIT_FAIL"
}

test_skip() {
	printf 'SKIP: %s\n' "$*" >&"${TEST_SKIP_FD:-1}"
	exit "$TEST_EXIT_SKIP"
}

# test_tmp_make NAME: a new private folder for one test run
test_tmp_make() {
	mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX"
}

# test_cleanup SIGNAL KEEP PID...: stops the processes a test started,
# one after the other, then removes $T unless KEEP is non-empty (the
# libraries read KEEP from different variables, KEEP and KFIX_KEEP_TMP,
# which their users already set).  The integration tests send KILL: their
# daemons' graceful stops are tested where they matter; the kernel tests
# send TERM so that kfixd stops its VMs.  A process that is gone already
# is not waited for; its status never counts.
test_cleanup() {
	local sig=$1 keep=$2 p
	shift 2
	for p in "$@"; do
		if kill -s "$sig" "$p" 2>/dev/null; then
			wait "$p" 2>/dev/null || true
		fi
	done
	[ -n "$keep" ] || rm -rf "$T"
}

# wait_for SECONDS COMMAND...: polls every 0.1 s until COMMAND succeeds.
wait_for() {
	local n=$(($1 * 10))
	shift
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

# ctl ARGS...: kfixctl ($KFIXCTL, which each library finds) with the
# test's config
ctl() {
	"$KFIXCTL" -c "$T/kfix.conf" "$@"
}

# sqlite3 ARGS...: the sqlite3 shell, waiting up to 10 s for a lock the
# daemon holds instead of failing at once with "database is locked" (a
# test reads the store while kfixd writes it).  Commands run by `sh -c`
# (in wait_for) call the plain shell; they are retried anyway.
sqlite3() {
	command sqlite3 -cmd '.timeout 10000' "$@"
}
