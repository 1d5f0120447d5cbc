#!/bin/sh
# kfixd's HTTP front under hostile clients on loopback, with the shipped
# [http] limits: per attack, kfixd's peak RSS, /healthz p50/p99/max and
# failures, and the signed webhooks per second an honest client still
# gets answered (tests/bench/attacks.py).  DURATION: seconds per attack
# (default 10).  Run with `make bench`.
set -eu
: "${top_builddir:=.}" "${top_srcdir:=.}"
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl python3
hooks_setup
HOOKS_LOG_LEVEL=${HOOKS_LOG_LEVEL:-info}
HOOKS_MAX_BODY=10M
hooks_write_config "	listen = [::1]:$HOOKS_PORT
[hook \"gh\"]
	type = forge
	provider = github
	secret = bench-forge
[hook \"mta\"]
	type = mail
	secret = bench-mail"
hooks_start_kfixd
echo "kfixd $(awk '/^VmRSS/ {print "idle RSS " $2 " kB"}' "/proc/$KFIXD_PID/status"); limits as shipped (max-connections 256, per IP 32, request-timeout 2min, max-buffered 64M, max-body 10M, max-forge-body 1M)"
python3 "$top_srcdir/tests/bench/attacks.py" "$HOOKS_PORT" "$KFIXD_PID" bench-forge bench-mail \
	"${DURATION:-10}"
kill -0 "$KFIXD_PID" || { echo "kfixd died"; cat "$HOOKS_TMP/kfixd.log"; exit 1; }
hooks_stop_kfixd
