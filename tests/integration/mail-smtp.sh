#!/bin/sh
# SMTP through libcurl against a real server on loopback (aiosmtpd): the
# exact bytes received, 4xx retry, 5xx park, AUTH, and the outbox across
# an outage in the middle of a transaction (no loss, no duplicates).
. "$top_srcdir/tests/integration/mail-lib.sh"

start_smtp "$T/srv"
URL="smtp://127.0.0.1:$SMTP_PORT"

msg() { # msg ID SUBJECT
	printf 'From: kfix <kfix@kfix.example.org>\nTo: Maint <maint@example.org>,\n list@example.org\nCc: cc@example.org\nSubject: %s\nMessage-ID: <%s>\n\nbody line\n.leading dot\n..two dots\n.\nlast\n' "$2" "$1"
}

# 1. exact bytes: CRLF line ends, dots unstuffed by the server
msg one@kfix "exact bytes" >"$T/one.eml"
out=$("$MAILTOOL" send "$URL" kfix@kfix.example.org maint@example.org list@example.org <"$T/one.eml") \
	|| fail "send: $out"
sed 's/$/\r/' "$T/one.eml" >"$T/one.crlf"
cmp "$T/one.crlf" "$T/srv/msg-1.eml" || fail "received bytes differ"
grep -qx 'from kfix@kfix.example.org' "$T/srv/msg-1.env" || fail "envelope sender"
[ "$(grep -c '^to ' "$T/srv/msg-1.env")" = 2 ] || fail "envelope recipients"

# 2. 4xx: retry (exit 75), nothing stored
echo tempfail >"$T/srv/mode"
rc=0; out=$("$MAILTOOL" send "$URL" kfix@kfix.example.org maint@example.org <"$T/one.eml") || rc=$?
[ "$rc" = 75 ] || fail "4xx gave exit $rc ($out), not retry"
case "$out" in *451*) ;; *) fail "4xx error text lacks the reply: $out" ;; esac

# 3. 5xx: park
echo permfail >"$T/srv/mode"
rc=0; out=$("$MAILTOOL" send "$URL" kfix@kfix.example.org maint@example.org <"$T/one.eml") || rc=$?
[ "$rc" = 1 ] || fail "5xx gave exit $rc ($out), not park"
case "$out" in park*550*) ;; *) fail "5xx error text: $out" ;; esac

# 4. connection refused: retry
rc=0; out=$("$MAILTOOL" send "smtp://127.0.0.1:1" kfix@kfix.example.org maint@example.org <"$T/one.eml") || rc=$?
[ "$rc" = 75 ] || fail "no server gave exit $rc ($out)"
[ ! -e "$T/srv/msg-2.eml" ] || fail "a failed send was stored"

# 5. the outbox: an outage mid-DATA, then recovery, then 5xx park
echo ok >"$T/srv/mode"
cat >"$T/kfix.conf" <<EOC
[kfix]
	state-dir = $T/state
[mail]
	from = kfix <kfix@kfix.example.org>
	transport = smtp
	smtp-url = $URL
EOC
DB="$T/outbox.db"
msg a@kfix "first" >"$T/a.eml"; msg b@kfix "second" >"$T/b.eml"
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" add a@kfix "$T/a.eml"
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" add b@kfix "$T/b.eml"
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" add a@kfix "$T/a.eml" # same key: not twice
echo drop >"$T/srv/mode"
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" run >"$T/run1"
grep -qx 'sent 0' "$T/run1" || fail "sent during the outage: $(cat "$T/run1")"
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" list >"$T/list1"
[ "$(grep -c ' pending 1 ' "$T/list1")" = 2 ] || fail "outage: $(cat "$T/list1")"
[ ! -e "$T/srv/msg-2.eml" ] || fail "the server kept a dropped message"
echo ok >"$T/srv/mode"
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" due
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" run >"$T/run2"
grep -qx 'sent 2' "$T/run2" || fail "after recovery: $(cat "$T/run2")"
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" due
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" run >"$T/run3"
grep -qx 'sent 0' "$T/run3" || fail "sent again: $(cat "$T/run3")"
n=$(grep -l '^Message-ID: <a@kfix>' "$T"/srv/msg-*.eml | wc -l)
[ "$n" = 1 ] || fail "message a received $n times"
n=$(grep -l '^Message-ID: <b@kfix>' "$T"/srv/msg-*.eml | wc -l)
[ "$n" = 1 ] || fail "message b received $n times"
echo permfail >"$T/srv/mode"
msg c@kfix "third" >"$T/c.eml"
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" add c@kfix "$T/c.eml"
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" run >/dev/null
"$OUTBOXTOOL" "$T/kfix.conf" "$DB" list >"$T/list2"
grep -q '^c@kfix parked [0-9]* .*550' "$T/list2" || fail "5xx not parked: $(cat "$T/list2")"

# 6. AUTH from a secret
SMTP_AUTH=kfix:s3cret start_smtp "$T/auth"
AURL="smtp://127.0.0.1:$SMTP_PORT"
out=$(SMTP_USER=kfix SMTP_PASSWORD=s3cret "$MAILTOOL" send "$AURL" kfix@kfix.example.org maint@example.org <"$T/one.eml") \
	|| fail "AUTH send: $out"
[ -e "$T/auth/msg-1.eml" ] || fail "AUTH: nothing received"
rc=0; out=$(SMTP_USER=kfix SMTP_PASSWORD=wrong "$MAILTOOL" send "$AURL" kfix@kfix.example.org maint@example.org <"$T/one.eml") || rc=$?
[ "$rc" = 1 ] || fail "a wrong password gave exit $rc ($out), not park"
printf 's3cret\n' >"$T/pw"
cat >"$T/auth.conf" <<EOC
[kfix]
	state-dir = $T/state
[mail]
	from = kfix <kfix@kfix.example.org>
	smtp-url = $AURL
	smtp-user = kfix
	smtp-password = file:$T/pw
EOC
"$OUTBOXTOOL" "$T/auth.conf" "$T/auth.db" add d@kfix "$T/one.eml"
"$OUTBOXTOOL" "$T/auth.conf" "$T/auth.db" run | grep -qx 'sent 1' || fail "outbox AUTH"
echo "PASS"
