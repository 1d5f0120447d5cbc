#!/bin/bash
# The shipped service unit stays sandboxed: systemd-analyze rates its
# exposure at 2.5 or lower, and it declares what the daemon relies on.
. "$(dirname "$0")/lib.sh"
command -v systemd-analyze >/dev/null || skip "systemd-analyze needed"
unit=$top_builddir/systemd/kfixd.service
[ -f "$unit" ] || fail "$unit not built"
systemd-analyze security --offline=true "$unit" > "$T/sec" 2>&1 || true
score=$(sed -n 's/.*Overall exposure level for kfixd.service: \([0-9.]*\).*/\1/p' "$T/sec")
[ -n "$score" ] || fail "no score: $(tail -5 "$T/sec")"
awk -v s="$score" 'BEGIN { exit !(s <= 2.5) }' || fail "exposure $score > 2.5"
for k in Type=notify WatchdogSec= StateDirectory= CacheDirectory= LogsDirectory= \
	LoadCredential= NoNewPrivileges=yes ProtectSystem=strict User=kfix MemoryMax= TasksMax=; do
	grep -q "^$k" "$unit" || fail "unit lacks $k"
done
grep -q "^ListenStream=127.0.0.1:" "$top_srcdir/systemd/kfixd.socket" || fail "socket not on loopback"
ok "exposure $score"
