#!/bin/sh
# Mail delivered by webhook is parsed and applied by a helper process
# ("kfixd --run-mailq"), not by the event loop: the sender is answered
# with what became of the mail once the helper is done; a mail that
# exhausts the helper's memory limit ends "failed" while kfixd and its
# front answer on; a mail that killed its helper is retried once and then
# given up; mail stored before a crash is processed after the restart.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl sqlite3 python3 openssl
hooks_setup
T=$HOOKS_TMP

HOOKS_MAX_BODY=12M hooks_write_config "[hook \"m\"]
	type = mail
	secret = mail-secret
[mail]
	parse-memory-max = 4M
[tree \"linux\"]
	url = https://git.kernel.org/linux.git
	allow-commands = dev@example.org
	command-auth = none"
hooks_start_kfixd
"$KFIXCTL" -c "$KFIX_CONF" submit --title "KASAN: test bug" --id manual-1 --tree linux >/dev/null

command_mail() { # MESSAGE-ID: a #kfix retest reply to bug 1's patch
	printf 'From: Dev <dev@example.org>\nTo: kfix@example.org\n'
	printf 'Subject: Re: [PATCH RFC kfix/1/v1] fix\nMessage-ID: <%s>\n\n#kfix retest\n' "$1"
}
retests() { sql "select count(*) from events where kind = 'request.retest'"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$KFIXD_PID/status"; }

# 1. answered with the outcome: the helper applied it before the answer
command_mail m1@example.org >"$T/m1"
expect_eq "command mail" "$(post_kfix /hooks/mail "$T/m1" mail-secret d1)" 200
expect_eq "answered when applied" "$(jq_get state <"$T/resp")" done
expect_eq "the retest is recorded" "$(retests)" 1
expect_eq "the kind of mail, found by the parser" \
	"$(sql "select event from inbox where key = 'mail:m1@example.org'")" reply

# 2. a mail larger than the helper may parse: failed, the daemon unmoved
if nm -D "$KFIXD" 2>/dev/null | grep -q __asan_init; then
	echo "SKIP part: AddressSanitizer reserves address space; no memory limit is set under it"
else
	rss0=$(rss_kb)
	python3 - "$T/big" <<'EOP'
import sys
with open(sys.argv[1], "w") as f:
    f.write("From: Dev <dev@example.org>\nTo: kfix@example.org\n"
            "Subject: Re: [PATCH RFC kfix/1/v1] a big one\nMessage-ID: <big@example.org>\n"
            "Content-Type: text/plain\n\n#kfix retest\n")
    line = "x" * 76 + "\n"
    f.write(line * (9 * 1024 * 1024 // len(line)))
EOP
	code=$(post_kfix /hooks/mail "$T/big" mail-secret d2)
	[ "$code" = 200 ] || [ "$code" = 202 ] || fail "big mail: HTTP $code"
	curl -fs -m 1 "$KFIX_URL/healthz" >/dev/null || fail "healthz after the big mail"
	i=0
	until [ "$(sql "select state from inbox where key = 'mail:big@example.org'")" = failed ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "big mail not failed: $(sql "select state, detail from inbox where key = 'mail:big@example.org'")"
		sleep 0.2
	done
	expect_eq "nothing commanded by the big mail" "$(retests)" 1
	kill -0 "$KFIXD_PID" || fail "kfixd died"
	rss1=$(rss_kb)
	# the daemon holds the body (9 MB) until it is stored; it never parses it
	[ $((rss1 - rss0)) -lt 40000 ] || fail "kfixd grew from $rss0 to $rss1 kB"
	echo "ok: big mail failed in the helper; kfixd RSS $rss0 -> $rss1 kB"
fi

# 3. stored before a crash: processed after the restart; a mail whose
# parse was interrupted twice is given up
hooks_kill9_kfixd
command_mail m3@example.org >"$T/m3"
sql "insert into inbox (key, type, hook, provider, event, received, payload, state)
     values ('mail:m3@example.org', 'mail', 'm', 'kfix', 'mail', strftime('%s'),
             readfile('$T/m3'), 'pending')"
command_mail m4@example.org >"$T/m4"
sql "insert into inbox (key, type, hook, provider, event, received, payload, state, detail)
     values ('mail:m4@example.org', 'mail', 'm', 'kfix', 'mail', strftime('%s'),
             readfile('$T/m4'), 'parsing', NULL)"
command_mail m5@example.org >"$T/m5"
sql "insert into inbox (key, type, hook, provider, event, received, payload, state, detail)
     values ('mail:m5@example.org', 'mail', 'm', 'kfix', 'mail', strftime('%s'),
             readfile('$T/m5'), 'parsing', 'interrupted')"
hooks_start_kfixd
i=0
until [ "$(sql "select count(*) from inbox where type = 'mail' and state in ('pending', 'parsing')")" = 0 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "mail left pending after the restart"
	sleep 0.2
done
expect_eq "pending mail processed after the restart" \
	"$(sql "select state from inbox where key = 'mail:m3@example.org'")" done
expect_eq "interrupted once: tried again" \
	"$(sql "select state from inbox where key = 'mail:m4@example.org'")" done
expect_eq "interrupted twice: given up" \
	"$(sql "select state from inbox where key = 'mail:m5@example.org'")" failed
expect_eq "the reason is kept" \
	"$(sql "select detail like '%interrupted twice%' from inbox where key = 'mail:m5@example.org'")" 1
expect_eq "two more retests" "$(retests)" 3
hooks_stop_kfixd
echo "ok: mail queue"
