#!/bin/sh
# A From: line is only what the sender typed.  #kfix commands and syzbot
# reports arriving by the mail webhook act only when the mail proves its
# From: domain: a DKIM signature kfix verifies (keys from [mail] dkim-keys,
# signed here with libopendkim as a sender's MTA would), or the trusted
# MTA's Authentication-Results.  Forged From:, a foreign signature, two
# From: mailboxes, a foreign Sender:, a stranger's Authentication-Results
# and a fake syzbot are refused; the maintainer's signed mail and syzbot's
# signed report are honoured.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl sqlite3 python3 openssl
hooks_setup
T=$HOOKS_TMP
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
	command-auth = dkim authres"
hooks_start_kfixd
"$KFIXCTL" -c "$KFIX_CONF" submit --title "KASAN: test bug" --id manual-1 --tree linux >/dev/null

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
	expect_eq "$1 delivered" "$(post_kfix /hooks/mail "$T/$1.eml" mail-secret "$1-$n")" 200
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
	expect_eq "$1 delivered" "$(post_kfix /hooks/mail "$T/$1.eml" mail-secret "$1")" 200
}
bugs() { sql "select count(*) from bugs where source = 'syzbot'"; }
report fake_unsigned syzbot+aaaa0000aaaa0000aaaa@syzkaller.appspotmail.com no
expect_eq "an unsigned syzbot report" "$(bugs)" 0
report fake_domain syzbot+bbbb0000bbbb0000bbbb@evil.example no
expect_eq "syzbot+ at another domain" "$(bugs)" 0
report real_report syzbot+cccc0000cccc0000cccc@syzkaller.appspotmail.com sign
expect_eq "syzbot's signed report makes a bug" "$(bugs)" 1
hooks_stop_kfixd
echo PASS
