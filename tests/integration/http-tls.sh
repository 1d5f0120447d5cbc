#!/bin/sh
# [http] tls-cert/tls-key: the listener speaks HTTPS (and only HTTPS).
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl openssl python3
hooks_setup
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$HOOKS_TMP/key.pem" \
	-out "$HOOKS_TMP/cert.pem" -days 1 -subj /CN=localhost 2>/dev/null || fail "openssl req"
hooks_write_config "	tls-cert = $HOOKS_TMP/cert.pem
	tls-key = $HOOKS_TMP/key.pem"
"$KFIXD" -c "$KFIX_CONF" --log-target stderr >>"$HOOKS_TMP/kfixd.log" 2>&1 &
KFIXD_PID=$!
i=0
until curl -fsk "https://127.0.0.1:$HOOKS_PORT/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no HTTPS answer"; sleep 0.1
done
out=$(curl -s --cacert "$HOOKS_TMP/cert.pem" --resolve "localhost:$HOOKS_PORT:127.0.0.1" \
	-H "Authorization: Bearer $HOOKS_READ_TOKEN" "https://localhost:$HOOKS_PORT/api/v1/status")
echo "$out" | grep -q '"bugs"' || fail "API over HTTPS: $out"
if curl -fs "http://127.0.0.1:$HOOKS_PORT/healthz" >/dev/null 2>&1; then
	fail "plain HTTP answered on the TLS listener"
fi
hooks_stop_kfixd
echo ok
