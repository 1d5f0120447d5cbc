#!/bin/sh
# kfixd --check-config: valid files pass, every kind of mistake is named
# with file, line and key, and the daemon refuses to start on them.
. "$(dirname "$0")/lib.sh"

write_config
"$KFIXD" -t -c "$T/kfix.conf" | grep -q "configuration is valid" || fail "valid config rejected"

# the shipped example: it needs the credentials the service loads, and
# its placeholders are named, as what to edit
if "$KFIXD" -t -c "$top_builddir/systemd/kfix.conf.example" >/dev/null 2>"$T/err"; then
	fail "the shipped example validates without its credentials"
fi
grep -q "key 'http.admin-token': a systemd credential, which needs \$CREDENTIALS_DIRECTORY" "$T/err" ||
	fail "the example's credentials: $(cat "$T/err")"
mkdir -p "$T/cred"
# as kfixd.service loads them: kfix_NAME, the files of one folder (and
# a credential of its own name)
for n in $(sed -n 's/.*= secret:\([a-z0-9-]*\)$/\1/p' "$top_builddir/systemd/kfix.conf.example"); do
	echo "value-of-$n" > "$T/cred/kfix_$n"
done
mv "$T/cred/kfix_api-token" "$T/cred/api-token"
grep -q '^LoadCredential=kfix:.*/kfix/credentials$' "$top_builddir/systemd/kfixd.service" ||
	fail "the unit does not load the credentials' folder"
CREDENTIALS_DIRECTORY=$T/cred "$KFIXD" -t -c "$top_builddir/systemd/kfix.conf.example" >/dev/null 2>"$T/err" ||
	fail "the shipped example does not validate with its credentials: $(cat "$T/err")"
grep -q "warning: key 'mail.from': 'kfix bot <kfix@example.org>' is a placeholder" "$T/err" ||
	fail "the example's placeholders are not named: $(cat "$T/err")"
grep -q "value-of" "$T/err" && fail "a secret echoed"
rm "$T/cred/api-token"
if CREDENTIALS_DIRECTORY=$T/cred "$KFIXD" -t -c "$top_builddir/systemd/kfix.conf.example" >/dev/null 2>"$T/err"; then
	fail "a missing credential passed"
fi
grep -q "key 'http.api-token': the secret cannot be read: No such file" "$T/err" || fail "missing credential: $(cat "$T/err")"
# what the HTTP server takes: no host names
printf '[http]\n\tlisten = localhost:8470\n' > "$T/host.conf"
if "$KFIXD" -t -c "$T/host.conf" 2>"$T/err"; then fail "a host name in listen passed"; fi
grep -q "key 'http.listen': 'localhost:8470' is not an IPv4 or \[IPv6\] address" "$T/err" ||
	fail "listen: $(cat "$T/err")"
printf '[http]\n\tlisten = [::1]:8470\n\tlisten = 127.0.0.1:8471\n' > "$T/good.conf"
"$KFIXD" -t -c "$T/good.conf" >/dev/null || fail "numeric listen addresses refused"

expect() { # expect "config text" "message fragment"
	printf '%s\n' "$1" > "$T/bad.conf"
	if "$KFIXD" -t -c "$T/bad.conf" 2>"$T/err"; then fail "accepted: $1"; fi
	grep -qF -- "$2" "$T/err" || fail "message '$(cat "$T/err")' lacks '$2'"
}
expect "[kfix]
	wrokers = 3" "bad.conf:2: unknown key 'kfix.wrokers'"
expect "[kfix]
	workers = 3
	lease = soon" "bad.conf:3: key 'kfix.lease': value 'soon' not a duration"
expect "[vm \"a\"]
	ssh-port = 70000" "bad.conf:2: key 'vm.a.ssh-port': value '70000' out of range 1..65535"
expect "[nonsense]
	a = b" "bad.conf:1: unknown section [nonsense]"
# a secret's value is never echoed, not even part of it
expect "[http]
	api-token = secret:dir/hunter2-secret" "key 'http.api-token': the value (not shown: a secret)"
grep -q "hunter2" "$T/err" && fail "a secret echoed: $(cat "$T/err")"
expect "[mail \"x\"]
	from = a" "section [mail \"x\"]: takes no name"
expect "[kfix
" "missing ']' in section header (in $T/bad.conf:1)"
expect "[tree \"t\"]
	allow-commands = a@b
	config = kernel.config
	priority = 99999" "bad.conf:4: key 'tree.t.priority'"

# a build host is checked when the config is read, not at the first build
expect "[build \"far\"]
	host = builder.example.org/x" "[build \"far\"] host = builder.example.org/x: not ssh://"
expect "[build \"far\"]
	host = ssh://me@builder:99999" "[build \"far\"] host = ssh://me@builder:99999: not ssh://"
expect "[build \"far\"]
	host = me@builder" "[build \"far\"] host = me@builder: not ssh://"
for h in local builder.example.org "ssh://me@builder:2222" "ssh://[::1]:22"; do
	printf '[build "far"]\n\thost = %s\n' "$h" > "$T/good.conf"
	"$KFIXD" -t -c "$T/good.conf" >/dev/null 2>"$T/err" || fail "build host $h refused: $(cat "$T/err")"
done

: > "$T/empty.conf"
"$KFIXD" -t -c "$T/empty.conf" >/dev/null || fail "an empty file (all defaults) is valid"
if "$KFIXD" -t -c "$T/missing.conf" 2>"$T/err"; then fail "missing file accepted"; fi
grep -q "missing.conf: cannot read: No such file" "$T/err" || fail "missing file: $(cat "$T/err")"

# the daemon itself refuses a bad file, saying why, and starts nothing
printf '[kfix]\n\tstate-dir = %s/state\n\tworkers = lots\n' "$T" > "$T/bad.conf"
if "$KFIXD" -c "$T/bad.conf" --log-target stderr 2>"$T/err"; then fail "kfixd started on a bad config"; fi
grep -q "bad.conf:3: key 'kfix.workers'" "$T/err" || fail "kfixd: $(cat "$T/err")"
[ ! -e "$T/state/kfix.db" ] || fail "kfixd created a store despite a bad config"
printf '[kfix]\n\tstate-dir = %s/state\n[build "far"]\n\thost = ssh://me@builder:0\n' "$T" > "$T/bad.conf"
if "$KFIXD" -c "$T/bad.conf" --log-target stderr 2>"$T/err"; then fail "kfixd started with a bad build host"; fi
grep -q 'host = ssh://me@builder:0: not ssh://' "$T/err" || fail "kfixd, bad build host: $(cat "$T/err")"
ok "check-config"
