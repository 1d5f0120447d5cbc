#!/bin/sh
# Webhook and API throughput of kfixd on loopback, with wrk:
#  - authenticated, durably committed webhook deliveries/s with p50/p99 at
#    1, 16 and 64 connections (every delivery has a new id, so each is a
#    new row committed before its 200);
#  - GET /metrics and GET /api/v1/bugs requests/s;
#  - RSS idle and after the load.
# Run with `make bench`; DURATION (seconds per run) defaults to 5.
set -eu
: "${top_builddir:=.}" "${top_srcdir:=.}"
. "$top_srcdir/tests/integration/hooks-lib.sh"
command -v wrk >/dev/null || { echo "wrk not installed (Debian package wrk)"; exit 77; }
hooks_need curl openssl sqlite3
DURATION=${DURATION:-5}

hooks_setup
HOOKS_LOG_LEVEL=${HOOKS_LOG_LEVEL:-info}
hooks_write_config "[hook \"gh\"]
	type = forge
	provider = github
	secret = bench-secret"
hooks_start_kfixd
rss() { awk '/^VmRSS/ {print $2 " kB"}' "/proc/$KFIXD_PID/status"; }
echo "idle RSS: $(rss)"

KFIX_BENCH_BODY='{"ref":"refs/heads/kfix/1/v1","after":"0123456789abcdef0123456789abcdef01234567","repository":{"full_name":"kfix/linux"},"sender":{"login":"bench"}}'
KFIX_BENCH_SIG=$(printf '%s' "$KFIX_BENCH_BODY" | openssl dgst -sha256 -hmac bench-secret -hex | sed 's/.* //')
export KFIX_BENCH_BODY KFIX_BENCH_SIG
total=0
for c in 1 16 64; do
	t=$(( c < 2 ? 1 : 2 ))
	KFIX_BENCH_RUN="c$c-$$" wrk -t"$t" -c"$c" -d"${DURATION}s" --latency \
		-s "$top_srcdir/tests/bench/webhook.lua" "$KFIX_URL" >"$HOOKS_TMP/wrk.out"
	rps=$(awk '/^Requests\/sec/ {print $2}' "$HOOKS_TMP/wrk.out")
	p50=$(awk '$1 == "50%" {print $2}' "$HOOKS_TMP/wrk.out")
	p99=$(awk '$1 == "99%" {print $2}' "$HOOKS_TMP/wrk.out")
	bad=$(awk '/Non-2xx/ {print $NF}' "$HOOKS_TMP/wrk.out")
	n=$(awk '/requests in/ {print $1}' "$HOOKS_TMP/wrk.out")
	echo "webhooks c=$c: $rps deliveries/s, p50 $p50, p99 $p99, non-2xx ${bad:-0}, requests $n"
	total=$((total + n))
done
stored=$(sqlite3 "$HOOKS_TMP/state/kfix.db" "select count(*) from inbox")
echo "rows in inbox: $stored (requests answered: <= $total; in-flight ones at the end of a run are not counted by wrk)"
echo "RSS after webhook load: $(rss), peak $(awk '/^VmHWM/ {print $2 " kB"}' "/proc/$KFIXD_PID/status")"

for path in /metrics /api/v1/bugs; do
	wrk -t2 -c16 -d"${DURATION}s" -H "Authorization: Bearer $HOOKS_READ_TOKEN" \
		"$KFIX_URL$path" >"$HOOKS_TMP/wrk.out"
	echo "GET $path c=16: $(awk '/^Requests\/sec/ {print $2}' "$HOOKS_TMP/wrk.out") req/s"
done
echo "RSS after all: $(rss)"
hooks_stop_kfixd
