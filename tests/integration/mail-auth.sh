#!/bin/sh
# A From: line is only what the sender typed.  #kfix commands and syzbot
# reports arriving by the mail webhook act only when the mail proves its
# From: domain: a DKIM signature kfix verifies (keys from [mail] dkim-keys,
# signed here with libopendkim as a sender's MTA would), or the trusted
# MTA's Authentication-Results.  Forged From:, a foreign signature, two
# From: mailboxes, a foreign Sender:, a stranger's Authentication-Results
# and a fake syzbot are refused; the maintainer's signed mail and syzbot's
# signed report are honoured.  The same again through a followed
# public-inbox archive.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl sqlite3 python3 openssl public-inbox-init public-inbox-mda git
hooks_setup
T=$HOOKS_TMP
export HOME="$T/home" PI_CONFIG="$T/pi-config"
mkdir -p "$HOME"
public-inbox-init -V2 lists "$T/inbox" http://example.org/lists lists@example.org >"$T/init.log" 2>&1 ||
	fail "public-inbox-init: $(cat "$T/init.log")"
git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
MAILTOOL="$top_builddir/tests/helpers/mailtool"

key() { # NAME DOMAIN SELECTOR: a key pair, its record in the key file
	openssl genrsa -out "$T/$1.pem" 2048 2>/dev/null
	printf '%s._domainkey.%s v=DKIM1; k=rsa; p=%s\n' "$3" "$2" \
		"$(openssl rsa -in "$T/$1.pem" -pubout -outform DER 2>/dev/null | base64 -w0)" >>"$T/keys"
}
key maint example.org k1
key evil evil.example k1
key syz syzkaller.appspotmail.com s1

hooks_write_config "[hook \"m\"]
	type = mail
	secret = mail-secret
[mail]
	dkim-keys = $T/keys
	trusted-authserv-id = mx.kfix.test
[tree \"linux\"]
	url = https://git.kernel.org/linux.git
	allow-commands = maint@example.org
	command-auth = dkim authres
[archive \"lists\"]
	url = $T/inbox
	poll-interval = 1s"
hooks_start_kfixd
"$KFIXCTL" -c "$KFIX_CONF" submit --title "KASAN: test bug" --id manual-1 --tree linux >/dev/null

# deliver FILE NAME MESSAGE-ID: by the webhook, or with VIA=archive into
# the followed archive, waiting until kfixd has taken it from there
deliver() {
	if [ "${VIA:-webhook}" = archive ]; then
		{ echo "X-Original-To: lists@example.org"; cat "$1"; } |
			ORIGINAL_RECIPIENT=lists@example.org public-inbox-mda --no-precheck ||
			fail "public-inbox-mda $1"
		_i=0
		until [ "$(sql "select count(*) from inbox where key = 'mail:$3' and hook = 'lists'")" = 1 ]; do
			_i=$((_i + 1)); [ $_i -lt 150 ] || fail "$2: not taken from the archive"
			sleep 0.2
		done
	else
		expect_eq "$2 delivered" "$(post_kfix /hooks/mail "$1" mail-secret "$2-$n")" 200
	fi
}

n=0
mail() { # NAME SIGN-AS [EXTRA HEADERS]: a #kfix retest reply; SIGN-AS maint|evil|-
	n=$((n + 1))
	{ printf 'From: %s\n' "${FROM:-Maint <maint@example.org>}"
	  [ -z "${3:-}" ] || printf '%s\n' "$3"
	  printf 'To: kfix@example.org\nSubject: Re: [PATCH RFC kfix/1/v1] fix\n'
	  printf 'Message-ID: <%s-%s@example.org>\n\nLooks right.\n#kfix retest\n' "$1" "$n"; } >"$T/$1.raw"
	case $2 in
	maint) "$MAILTOOL" dkim-sign "$T/maint.pem" k1 example.org <"$T/$1.raw" >"$T/$1.eml" ;;
	evil) "$MAILTOOL" dkim-sign "$T/evil.pem" k1 evil.example <"$T/$1.raw" >"$T/$1.eml" ;;
	*) cp "$T/$1.raw" "$T/$1.eml" ;;
	esac
	deliver "$T/$1.eml" "$1" "$1-$n@example.org"
}
retests() { sql "select count(*) from events where kind = 'request.retest'"; }
refused() { sql "select count(*) from events where kind = 'request.refused' and detail like '%$1%'"; }

mail forged -
expect_eq "an unsigned From: commands nothing" "$(retests)" 0
expect_eq "the refusal is recorded for the moderator" "$(refused 'no DKIM signature')" 1
expect_eq "the claimed sender is named" "$(refused 'maint@example.org')" 1

mail foreign evil
expect_eq "a signature of another domain does not vouch for example.org" "$(retests)" 0

FROM='Maint <maint@example.org>, Eve <eve@evil.example>' mail twofrom maint
expect_eq "two From: mailboxes" "$(retests)" 0
expect_eq "two From: mailboxes named" "$(refused 'several From:')" 1

mail sender maint "Sender: eve@evil.example"
expect_eq "a foreign Sender:" "$(retests)" 0
expect_eq "a foreign Sender: named" "$(refused 'Sender:')" 1

mail strangerar - "Authentication-Results: mx.evil.example; dkim=pass header.d=example.org"
expect_eq "a stranger's Authentication-Results" "$(retests)" 0

mail signed maint
expect_eq "the maintainer's signed mail commands" "$(retests)" 1
expect_eq "by the maintainer" "$(sql "select count(*) from events where kind = 'request.retest' and detail like '%maint@example.org%'")" 1

mail trustedar - "Authentication-Results: mx.kfix.test; spf=pass smtp.mailfrom=example.org; dkim=pass header.d=example.org header.s=k1"
expect_eq "the trusted MTA's result" "$(retests)" 2

# a signed body changed on the way no longer verifies
"$MAILTOOL" dkim-sign "$T/maint.pem" k1 example.org <"$T/signed.raw" |
	sed 's/^Message-ID: <signed-/Message-ID: <tampered-/; s/Looks right/Looks wrong/' >"$T/tampered.eml"
expect_eq "tampered delivered" "$(post_kfix /hooks/mail "$T/tampered.eml" mail-secret tampered)" 200
expect_eq "a tampered mail" "$(retests)" 2

# syzbot: only its domain, only with its signature
report() { # NAME FROM SIGN
	{ printf 'From: syzbot <%s>\nTo: linux-kernel@vger.kernel.org\n' "$2"
	  printf 'Subject: [syzbot] KASAN: use-after-free Read in %s\n' "$1"
	  printf 'Message-ID: <%s@google.com>\n\nHello,\n\nsyzbot found the following issue on:\n\n' "$1"
	  printf 'HEAD commit:    0123456789ab Linux 6.1\ngit tree:       upstream\n\n'
	  printf 'IMPORTANT: if you fix the issue, please add the following tag to the commit:\n'
	  printf 'Reported-by: %s\n\n' "$2"
	  printf 'BUG: KASAN: use-after-free Read in %s+0x10/0x20\n' "$1"; } >"$T/$1.raw"
	if [ "$3" = sign ]; then
		"$MAILTOOL" dkim-sign "$T/syz.pem" s1 syzkaller.appspotmail.com <"$T/$1.raw" >"$T/$1.eml"
	else
		cp "$T/$1.raw" "$T/$1.eml"
	fi
	deliver "$T/$1.eml" "$1" "$1@google.com"
}
bugs() { sql "select count(*) from bugs where source = 'syzbot'"; }
report fake_unsigned syzbot+aaaa0000aaaa0000aaaa@syzkaller.appspotmail.com no
expect_eq "an unsigned syzbot report" "$(bugs)" 0
report fake_domain syzbot+bbbb0000bbbb0000bbbb@evil.example no
expect_eq "syzbot+ at another domain" "$(bugs)" 0
report real_report syzbot+cccc0000cccc0000cccc@syzkaller.appspotmail.com sign
expect_eq "syzbot's signed report makes a bug" "$(bugs)" 1

# the same through the archive: anyone on the internet can post to a list
VIA=archive
mail aforged -
expect_eq "archive: an unsigned From: commands nothing" "$(retests)" 2
FROM='Maint <maint@example.org>, Eve <eve@evil.example>' mail atwofrom maint
expect_eq "archive: two From: mailboxes" "$(retests)" 2
mail asender maint "Sender: eve@evil.example"
expect_eq "archive: a foreign Sender:" "$(retests)" 2
mail astrangerar - "Authentication-Results: mx.evil.example; dkim=pass header.d=example.org"
expect_eq "archive: a stranger's Authentication-Results" "$(retests)" 2
report afake_unsigned syzbot+dddd0000dddd0000dddd@syzkaller.appspotmail.com no
report afake_domain syzbot+eeee0000eeee0000eeee@evil.example no
expect_eq "archive: fake syzbot reports" "$(bugs)" 1
mail asigned maint
expect_eq "archive: the maintainer's signed mail commands" "$(retests)" 3
report areal syzbot+ffff0000ffff0000ffff@syzkaller.appspotmail.com sign
expect_eq "archive: syzbot's signed report makes a bug" "$(bugs)" 2
hooks_stop_kfixd
echo PASS
