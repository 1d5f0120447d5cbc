#!/bin/sh
# Deliveries run in their own process: an SMTP server that accepts the
# connection and then says nothing must not stall kfixd's event loop (the
# HTTP front door keeps answering), and stopping kfixd ends the stuck
# delivery process too.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl python3
hooks_setup
T=$HOOKS_TMP
SILENT_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)   # never a greeting
' "$SILENT_PORT" &
HOOKS_EXTRA_PIDS=$!
# listening before kfixd tries it (python starts slowly on a loaded machine)
i=0
until python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$SILENT_PORT" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the silent server did not start"
	sleep 0.1
done
cat >"$KFIX_CONF" <<EOC
[kfix]
	state-dir = $T/state
	self-test-jobs = yes
	self-test-step = 100ms
[http]
	listen = 127.0.0.1:$HOOKS_PORT
[mail]
	from = kfix <kfix@kfix.example.org>
	transport = smtp
	smtp-url = smtp://127.0.0.1:$SILENT_PORT
EOC
hooks_start_kfixd
"$KFIXCTL" -c "$KFIX_CONF" submit --title "WARNING in stall_fn" --id stall-1 >/dev/null

# wait until a delivery process is talking to the silent server
i=0
until pgrep -f -- "--config $KFIX_CONF --run-outbox" >/dev/null; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "no delivery process started: $(tail -5 "$T/kfixd.log")"
	sleep 0.1
done
sleep 1
for n in 1 2 3 4 5; do
	t0=$(date +%s%N)
	curl -fs -m 5 "$KFIX_URL/healthz" >/dev/null || fail "healthz did not answer during a stalled delivery"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	# curl's own start on a loaded machine included; a blocked loop waits
	# for the silent server as long as the delivery does
	[ "$ms" -lt 3000 ] || fail "healthz took $ms ms during a stalled delivery"
	sleep 0.2
done
pgrep -f -- "--config $KFIX_CONF --run-outbox" >/dev/null || fail "the delivery process is gone already"
hooks_stop_kfixd
sleep 0.5
! pgrep -f -- "--config $KFIX_CONF --run-outbox" >/dev/null || fail "the delivery process outlived kfixd"
echo PASS
