#!/bin/bash
# How often an idle kfixd wakes up: kfixd with an HTTP listener and
# nothing to do runs for SECONDS (default 120), and strace counts the
# returns of its event loop's epoll_wait, which is one wake-up each.  A
# second kfixd binary (KFIXD_B, e.g. an older build) is measured the same
# way, before and after, for a side-by-side figure.
# Run with `make bench` or alone with top_builddir set.
set -uo pipefail
top_builddir=${top_builddir:-.}
secs=${SECONDS_IDLE:-120}
command -v strace >/dev/null || { echo "SKIP: strace is not installed" >&2; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kfix-idle.XXXXXX")
trap 'rm -rf "$T"' EXIT

measure() { # KFIXD: prints wake-ups per minute
	local bin=$1 port pid n
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	rm -rf "$T/state"
	printf '[kfix]\n\tstate-dir = %s/state\n[http]\n\tlisten = 127.0.0.1:%s\n' "$T" "$port" > "$T/kfix.conf"
	"$bin" --config "$T/kfix.conf" > "$T/kfixd.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q started "$T/kfixd.log" && break; sleep 0.1; done
	sleep 2 # start-up work done
	timeout "$secs" strace -p "$pid" -e trace=epoll_wait -o "$T/trace" 2>/dev/null
	kill "$pid"; wait "$pid" 2>/dev/null
	# the loop's own epoll fd waits with no time-out (-1) or a timer's
	n=$(grep -c '^epoll_wait(3, .*) = [1-9]' "$T/trace")
	python3 -c "print(f'{$n * 60 / $secs:.1f}')"
}

a=$(measure "$top_builddir/kfixd")
printf 'idle kfixd, %ss: %s wake-ups per minute\n' "$secs" "$a"
if [ -n "${KFIXD_B:-}" ]; then
	b=$(measure "$KFIXD_B")
	printf 'idle kfixd (%s), %ss: %s wake-ups per minute\n' "$KFIXD_B" "$secs" "$b"
fi
