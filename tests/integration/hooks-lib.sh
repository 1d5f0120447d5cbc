# Shared helpers of the hooks integration tests: a temp folder, a free
# loopback port, a kfixd with an [http] listener, signed deliveries.
# shellcheck shell=sh

hooks_need() {
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not installed"; exit 77; }
	done
}

hooks_cleanup() {
	if [ -n "${KFIXD_PID:-}" ]; then
		kill "$KFIXD_PID" 2>/dev/null || true
		wait "$KFIXD_PID" 2>/dev/null || true
	fi
	for p in ${HOOKS_EXTRA_PIDS:-}; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[ -n "${HOOKS_TMP:-}" ] && rm -rf "$HOOKS_TMP"
}

hooks_setup() {
	HOOKS_TMP=$(mktemp -d)
	trap hooks_cleanup EXIT
	trap 'exit 1' INT TERM
	KFIXD="$top_builddir/kfixd"
	KFIXCTL="$top_builddir/kfixctl"
	HOOKS_READ_TOKEN=read-token-$$
	HOOKS_ADMIN_TOKEN=admin-token-$$
	HOOKS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	KFIX_URL="http://127.0.0.1:$HOOKS_PORT"
	KFIX_CONF="$HOOKS_TMP/kfix.conf"
}

# hooks_write_config EXTRA: [kfix] + [http] and the given sections.
hooks_write_config() {
	cat >"$KFIX_CONF" <<EOC
[kfix]
	state-dir = $HOOKS_TMP/state
	cache-dir = $HOOKS_TMP/cache
	log-level = ${HOOKS_LOG_LEVEL:-debug}
[http]
	listen = 127.0.0.1:$HOOKS_PORT
	api-token = $HOOKS_READ_TOKEN
	admin-token = $HOOKS_ADMIN_TOKEN
	max-body = ${HOOKS_MAX_BODY:-64K}
	timeout = ${HOOKS_TIMEOUT:-30s}
$1
EOC
}

# Starts kfixd and waits until /healthz answers.
hooks_start_kfixd() {
	"$KFIXD" -c "$KFIX_CONF" --log-target stderr >>"$HOOKS_TMP/kfixd.log" 2>&1 &
	KFIXD_PID=$!
	i=0
	until curl -fs "$KFIX_URL/healthz" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$KFIXD_PID" 2>/dev/null; then
			echo "kfixd did not come up:"; cat "$HOOKS_TMP/kfixd.log"; exit 1
		fi
		sleep 0.1
	done
}

hooks_stop_kfixd() {
	kill "$KFIXD_PID"
	wait "$KFIXD_PID" || { echo "kfixd exited with $?"; cat "$HOOKS_TMP/kfixd.log"; exit 1; }
	KFIXD_PID=
}

hooks_kill9_kfixd() {
	kill -9 "$KFIXD_PID"
	wait "$KFIXD_PID" 2>/dev/null || true
	KFIXD_PID=
}

hmac_hex() { # SECRET, reads the message on stdin
	openssl dgst -sha256 -hmac "$1" -hex | sed 's/.* //'
}

fail() {
	echo "FAIL: $*"
	echo "--- kfixd log"; tail -n 50 "$HOOKS_TMP/kfixd.log" 2>/dev/null
	exit 1
}

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

sql() {
	sqlite3 -cmd ".timeout 5000" "$HOOKS_TMP/state/kfix.db" "$1"
}

# post PATH FILE [curl args...]: prints the HTTP status; the answer is in
# $HOOKS_TMP/resp.
post() {
	_p=$1 _f=$2
	shift 2
	curl -s -o "$HOOKS_TMP/resp" -w '%{http_code}' -X POST --data-binary "@$_f" "$@" \
		"$KFIX_URL$_p" || true
}

# post_github FILE SECRET EVENT DELIVERY
post_github() {
	_sig=$(hmac_hex "$2" <"$1")
	post /hooks/forge "$1" -H "X-GitHub-Event: $3" -H "X-GitHub-Delivery: $4" \
		-H "X-Hub-Signature-256: sha256=$_sig" -H "Content-Type: application/json"
}

# post_kfix PATH FILE SECRET DELIVERY [TIMESTAMP]: kfix's own scheme.
post_kfix() {
	_ts=${5:-$(date +%s)}
	_sig=$({ printf '%s.' "$_ts"; cat "$2"; } | hmac_hex "$3")
	post "$1" "$2" -H "X-Kfix-Timestamp: $_ts" -H "X-Kfix-Signature: sha256=$_sig" \
		-H "X-Kfix-Delivery: $4"
}

api_get() { # PATH [TOKEN]
	curl -s -H "Authorization: Bearer ${2:-$HOOKS_READ_TOKEN}" "$KFIX_URL$1"
}

jq_get() { # FILTER, JSON on stdin
	python3 -c 'import json,sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    if k == "": continue
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)' "$1"
}
