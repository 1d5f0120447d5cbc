#!/bin/sh
# Following a real public-inbox v2 archive made with Debian's public-inbox
# tools: new messages once each, in order, a stored position, a bounded
# batch, and the move to a new epoch.
. "$top_srcdir/tests/integration/mail-lib.sh"

for t in public-inbox-init public-inbox-mda git perl; do
	command -v "$t" >/dev/null || skip "$t is not installed (Debian package public-inbox)"
done
MDA=$(command -v public-inbox-mda)
FIX="$top_srcdir/tests/fixtures/mail"
export HOME="$T/home" PI_CONFIG="$T/pi-config"
mkdir -p "$HOME"
public-inbox-init -V2 test "$T/inbox" http://example.org/test test@example.org >"$T/init.log" 2>&1 \
	|| fail "public-inbox-init: $(cat "$T/init.log")"
git config -f "$PI_CONFIG" publicinboxmda.spamcheck none

deliver() { # deliver FILE [new-epoch]
	if [ $# -gt 1 ]; then
		# V2Writable starts a new epoch once an epoch is "full": make every
		# epoch full at once, as a 1 GB archive would be
		{ echo "To: test@example.org"; cat "$1"; } | ORIGINAL_RECIPIENT=test@example.org \
			perl -MPublicInbox::V2Writable -e '$PublicInbox::V2Writable::PACKING_FACTOR = 1e12;
				@ARGV = ("--no-precheck"); do $ENV{MDA}; die $@ if $@;' || fail "mda (epoch)"
	else
		{ echo "To: test@example.org"; cat "$1"; } | ORIGINAL_RECIPIENT=test@example.org \
			"$MDA" --no-precheck || fail "public-inbox-mda $1"
	fi
}
export MDA

poll() { # poll [MAX] -> stdout: lines "commit kind message-id"
	"$MAILTOOL" inbox "$T/inbox" "$T/cache" "$T/pos" "$@" 2>>"$T/poll.log"
}

deliver "$FIX/syzbot-report.eml"
deliver "$FIX/reply-test-attached.eml"
deliver "$FIX/syzbot-test-ok.eml"
poll >"$T/p1" || fail "poll 1: $(cat "$T/poll.log")"
awk '{print $2, $3}' "$T/p1" >"$T/got1"
cat >"$T/want1" <<EOW
syzbot-report 000000000000a1b2c3d4e5f60718@google.com
reply 20261118090000.1234-1-dev@example.org
syzbot-test-result 00000000000099887766554433@google.com
EOW
cmp "$T/want1" "$T/got1" || fail "first poll: $(cat "$T/got1")"
case "$(cat "$T/pos")" in 0:[0-9a-f]*) ;; *) fail "position $(cat "$T/pos")" ;; esac

poll >"$T/p2" || fail "poll 2"
[ ! -s "$T/p2" ] || fail "messages handed over twice: $(cat "$T/p2")"

# a bounded batch: two new messages, one per poll
deliver "$FIX/review-reply.eml"
deliver "$FIX/syzbot-repro.eml"
poll 1 >"$T/p3" || fail "poll 3"
poll 1 >>"$T/p3" || fail "poll 4"
poll >>"$T/p3" || fail "poll 5"
awk '{print $3}' "$T/p3" >"$T/got3"
printf '%s\n' Zr7abc.review@kernel.example.org 0000000000001122334455667788@google.com >"$T/want3"
cmp "$T/want3" "$T/got3" || fail "batches: $(cat "$T/got3")"

# the archive moves on to epoch 1
deliver "$FIX/malformed.eml" new-epoch
[ -d "$T/inbox/git/1.git" ] || skip "public-inbox did not start epoch 1 (its internals changed)"
poll >"$T/p4" || fail "poll 6"
[ "$(awk '{print $3}' "$T/p4")" = "broken@example.org" ] || fail "epoch 1: $(cat "$T/p4")"
case "$(cat "$T/pos")" in 1:[0-9a-f]*) ;; *) fail "position after the epoch $(cat "$T/pos")" ;; esac
poll >"$T/p5" && [ ! -s "$T/p5" ] || fail "epoch 1 again: $(cat "$T/p5")"

# a position from another archive is an error, not a silent restart
echo "0:0123456789012345678901234567890123456789" >"$T/pos"
poll >/dev/null 2>&1 && fail "a foreign position was accepted"
# an archive that is not there: an error
"$MAILTOOL" inbox "$T/nothing" "$T/cache2" "$T/pos2" >/dev/null 2>&1 && fail "a missing archive polled"
echo PASS
