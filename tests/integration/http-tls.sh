#!/bin/sh
# [http] tls-cert/tls-key: the listener speaks HTTPS (and only HTTPS), and
# the dashboard's session cookie is Secure there; on an IPv6 listener
# without TLS the dashboard works with a cookie that is not.
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

# a dashboard session over HTTPS: its cookie is Secure, and it opens pages
login() { # URL [CURL OPTIONS]: the Set-Cookie of a login with the read token
	u=$1; shift
	curl -s -o /dev/null -D "$HOOKS_TMP/hdr" "$@" --data-urlencode "token=$HOOKS_READ_TOKEN" "$u/ui/login"
	tr -d '\r' < "$HOOKS_TMP/hdr" | sed -n 's/^Set-Cookie: //Ip'
}
cookie=$(login "https://localhost:$HOOKS_PORT" --cacert "$HOOKS_TMP/cert.pem" \
	--resolve "localhost:$HOOKS_PORT:127.0.0.1")
case "$cookie" in
kfix_session=*"; Secure"*) ;;
*) fail "dashboard cookie over HTTPS: $cookie" ;;
esac
page=$(curl -s --cacert "$HOOKS_TMP/cert.pem" --resolve "localhost:$HOOKS_PORT:127.0.0.1" \
	-b "${cookie%%;*}" "https://localhost:$HOOKS_PORT/ui/bugs")
echo "$page" | grep -q 'id="bugs"' || fail "bug list over HTTPS: $page"
hooks_stop_kfixd

# the dashboard on IPv6 loopback, plain HTTP: a cookie without Secure
if ! ip -6 addr show dev lo 2>/dev/null | grep -q 'inet6 ::1/128'; then
	echo "SKIP: no IPv6 loopback here; the dashboard over [::1] is not tested" >&2
	echo ok
	exit 0
fi
sed -i "s/^\tlisten = .*/\tlisten = [::1]:$HOOKS_PORT/; /tls-/d" "$KFIX_CONF"
"$KFIXD" -c "$KFIX_CONF" --log-target stderr >>"$HOOKS_TMP/kfixd.log" 2>&1 &
KFIXD_PID=$!
i=0
until curl -fsg "http://[::1]:$HOOKS_PORT/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no answer on [::1]: $(tail -3 "$HOOKS_TMP/kfixd.log")"; sleep 0.1
done
cookie=$(login "http://[::1]:$HOOKS_PORT" -g)
case "$cookie" in
*Secure*) fail "a Secure cookie over plain HTTP cannot come back: $cookie" ;;
kfix_session=*) ;;
*) fail "dashboard login on [::1]: $cookie" ;;
esac
page=$(curl -sg -b "${cookie%%;*}" "http://[::1]:$HOOKS_PORT/ui/bugs")
echo "$page" | grep -q 'id="bugs"' || fail "bug list on [::1]: $page"
hooks_stop_kfixd
echo ok
