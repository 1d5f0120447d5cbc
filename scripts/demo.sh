#!/bin/sh
# The demo: runs kfixd in the foreground on a configuration in a
# temporary folder, with self-test jobs, submits a bug with kfixctl and
# shows it walk through its life cycle to a queued (spooled) mail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${KFIX_BIN:-$top}
dir=$(mktemp -d /tmp/kfix-demo.XXXXXX)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/kfix.conf" <<CONF
[kfix]
	state-dir = state
	self-test-jobs = yes
	self-test-step = 500ms
[mail]
	from = kfix demo <kfix@localhost>
	transport = spool
	spool-dir = spool
CONF
"$bin/kfixd" --check-config -c "$dir/kfix.conf"
"$bin/kfixd" -c "$dir/kfix.conf" --log-target stderr &
pid=$!
sleep 1
"$bin/kfixctl" -c "$dir/kfix.conf" submit --title "KASAN: slab-use-after-free Read in demo_fn" --id demo1
for _ in $(seq 1 40); do
	sleep 0.5
	[ -n "$(ls "$dir/spool" 2>/dev/null)" ] && break
done
"$bin/kfixctl" -c "$dir/kfix.conf" bug 1
"$bin/kfixctl" -c "$dir/kfix.conf" outbox
echo "--- spooled mail:"
cat "$dir"/spool/*.eml
