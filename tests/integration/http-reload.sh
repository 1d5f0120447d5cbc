#!/bin/sh
# SIGHUP applies a changed [http] listen address, API tokens, webhook
# secrets and feed list without a restart: the old port is closed, the
# new one serves, the old secret and token are refused, the new ones
# work, the removed feed stops polling and the added one creates bugs.  A
# reload that cannot be applied (the new port is taken) keeps everything
# as it was.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl sqlite3 python3 openssl
hooks_setup
T=$HOOKS_TMP
python3 "$top_srcdir/tests/fake-syzbot.py" "$top_srcdir/tests/fixtures/syzbot" "$T/port" &
HOOKS_EXTRA_PIDS=$!
i=0
until [ -s "$T/port" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "fake dashboard did not start"; sleep 0.1
done
DASH_PORT=$(cat "$T/port")
DASH="http://127.0.0.1:$DASH_PORT"
log() { curl -fs "$DASH/_control/log"; }
polls() { log | grep -o "\"/$1?json=1\"" | wc -l; }
wait_until() { # WHAT CONDITION [SECONDS]
	i=0
	until eval "$2"; do
		i=$((i + 1))
		[ $i -lt $(( ${3:-20} * 10 )) ] || fail "timed out waiting for $1"
		sleep 0.1
	done
}
bug_json() { # EXTID
	printf '{"version": 1, "title": "WARNING in reload_%s", "id": "x", "extid": "%s", "crashes": []}' "$1" "$1"
}
A=aaaa00000000000000a1
PORT1=$HOOKS_PORT
PORT2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# config 1: port 1, secret one, feed "one" (a namespace with nothing taken)
config() { # PORT ADMIN-TOKEN SECRET FEED NAMESPACE TYPES
	cat >"$KFIX_CONF" <<EOC
[kfix]
	state-dir = $T/state
	log-level = debug
[http]
	listen = 127.0.0.1:$1
	api-token = $HOOKS_READ_TOKEN
	admin-token = $2
[hook "relay"]
	type = syzbot
	secret = $3
[feed "$4"]
	url = $DASH
	namespace = $5
	interval = 1s
	crash-types = $6
EOC
}
config "$PORT1" admin-one secret-one one ns-one NOTHING
hooks_start_kfixd
bug_json 1111111111111111aaaa >"$T/b1.json"
expect_eq "secret one" "$(post_kfix /hooks/syzbot "$T/b1.json" secret-one d-1)" 200
expect_eq "admin token one" "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer admin-one' "$KFIX_URL/api/v1/jobs/1/retry")" 404
wait_until "feed one polls" '[ "$(polls ns-one)" -ge 1 ]'

# config 2: port 2, secret two, token two, feed "two" on the namespace with bugs
config "$PORT2" admin-two secret-two two upstream KASAN:
kill -HUP "$KFIXD_PID"
OLD_URL=$KFIX_URL
KFIX_URL="http://127.0.0.1:$PORT2"
wait_until "the new port" 'curl -fs "$KFIX_URL/healthz" >/dev/null 2>&1'
rc=0; curl -s -o /dev/null "$OLD_URL/healthz" || rc=$?
expect_eq "old port closed (curl: connection refused)" "$rc" 7
kill -0 "$KFIXD_PID" || fail "kfixd died"
grep -q "configuration reloaded" "$T/kfixd.log" || fail "no reload logged"

bug_json 2222222222222222bbbb >"$T/b2.json"
expect_eq "old secret refused" "$(post_kfix /hooks/syzbot "$T/b2.json" secret-one d-2)" 401
expect_eq "new secret taken" "$(post_kfix /hooks/syzbot "$T/b2.json" secret-two d-3)" 200
expect_eq "relayed bugs" "$(sql "select group_concat(source_id, ' ') from bugs where title like 'WARNING in reload_%'")" \
	"1111111111111111aaaa 2222222222222222bbbb"
tok() { curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $1" "$KFIX_URL/api/v1/jobs/1/retry"; }
expect_eq "old admin token refused" "$(tok admin-one)" 401
expect_eq "new admin token taken" "$(tok admin-two)" 404

# the feed "two" polls and creates bug A with its texts; "one" is gone
wait_until "bug A from feed two" '[ "$(sql "select count(*) from bugs where source_id = '"'$A'"'")" = 1 ]' 40
expect_eq "A's report saved under feed two" "$(sql "select report from bugs where source_id = '$A'")" \
	"$T/state/artifacts/two/$A/report.txt"
n=$(polls ns-one)
sleep 2.5
expect_eq "feed one stopped" "$(polls ns-one)" "$n"

# a reload that cannot be applied changes nothing: the new port is taken
config "$DASH_PORT" admin-three secret-three three upstream KASAN:
kill -HUP "$KFIXD_PID"
wait_until "the failed reload" 'grep -q "reload failed" "$T/kfixd.log"'
kill -0 "$KFIXD_PID" || fail "kfixd died"
curl -fs "$KFIX_URL/healthz" >/dev/null || fail "port two closed by a failed reload"
bug_json 3333333333333333cccc >"$T/b3.json"
expect_eq "secret two still taken" "$(post_kfix /hooks/syzbot "$T/b3.json" secret-two d-4)" 200
expect_eq "secret three not taken" "$(post_kfix /hooks/syzbot "$T/b3.json" secret-three d-5)" 401
expect_eq "token two still taken" "$(tok admin-two)" 404
expect_eq "token three not taken" "$(tok admin-three)" 401
hooks_stop_kfixd
echo ok
