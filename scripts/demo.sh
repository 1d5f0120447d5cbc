#!/bin/bash
# The demo: kfixd fixes a real kernel bug from the syzbot announcement to
# a second version after review, with nobody touching it but the people
# in the story, on one machine, everything real on loopback.
#
# A fake syzbot dashboard announces a use-after-free in Debian's
# linux-source-6.1 (ipc/msg.c, tests/kernel/scenarios/msg-uaf).  kfixd
# picks it up, reproduces it in qemu on a VM host that is an OpenSSH
# server on 127.0.0.1, lets the repair agent probe it and write a fix,
# validates the fix on the kernel, pushes branch kfix/1/v1 with its
# explanation as a git note over SSH to a git remote, and mails it through
# an SMTP server to the moderator.  The moderator's "#kfix upstream" reply
# (through the mail webhook) sends it to the maintainers that
# get_maintainer.pl names.  A reviewer's Reviewed-by and the moderator's
# comment arrive on the mailing list (a public-inbox archive kfixd
# follows), and kfixd writes, validates, pushes and mails v2.
#
# The model's answers are REPLAYED from recorded cassettes unless a real
# endpoint is given (KFIX_DEMO_LLM_URL, KFIX_DEMO_LLM_MODEL, optional
# KFIX_DEMO_LLM_PROVIDER=openai|anthropic and KFIX_DEMO_LLM_KEY_FILE).
# The first run builds the kernel (minutes; cached in
# ${KFIX_TEST_CACHE:-/var/cache/kfix-tests} for the next ones).
#
#   scripts/demo.sh              the whole flow on the real kernel
#   scripts/demo.sh --self-test  kfixd walking a bug to a spooled mail
#                                with self-test jobs (seconds, no kernel)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${KFIX_BIN:-$top}

self_test() {
	local dir pid
	dir=$(mktemp -d /tmp/kfix-demo.XXXXXX)
	trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
	cat > "$dir/kfix.conf" <<CONF
[kfix]
	state-dir = $dir/state
	self-test-jobs = yes
	self-test-step = 500ms
[mail]
	from = kfix demo <kfix@localhost>
	transport = spool
	spool-dir = $dir/spool
CONF
	"$bin/kfixd" --check-config -c "$dir/kfix.conf" || exit 1
	"$bin/kfixd" -c "$dir/kfix.conf" --log-target stderr &
	pid=$!
	sleep 1
	"$bin/kfixctl" -c "$dir/kfix.conf" submit --title "KASAN: slab-use-after-free Read in demo_fn" --id demo1
	for _ in $(seq 1 40); do
		sleep 0.5
		ls "$dir"/spool/*.eml >/dev/null 2>&1 && break
	done
	"$bin/kfixctl" -c "$dir/kfix.conf" bug 1
	"$bin/kfixctl" -c "$dir/kfix.conf" outbox
	echo "--- spooled mail:"
	cat "$dir"/spool/*.eml
}

if [ "${1:-}" = --self-test ]; then
	self_test
	exit 0
elif [ $# -gt 0 ]; then
	echo "usage: scripts/demo.sh [--self-test]" >&2
	exit 2
fi

# The kernel harness of the tests (sshd, initramfs, the cached kernel)
# and the world of the end-to-end test (tests/kernel/flow.sh).
top_builddir=$bin
top_srcdir=$top
. "$top/tests/kernel/lib.sh"
kt_skip() { echo "demo: cannot run: $*" >&2; echo "demo: run ./scripts/install-deps.sh all first" >&2; exit 1; }
kt_setup_tmp
kt_require
. "$top/tests/kernel/flow.sh"
flow_require
S=$top/tests/kernel/scenarios/msg-uaf
KFIXD=$bin/kfixd
[ -x "$KFIXD" ] || KFIXD=$bin/daemon/kfixd
say() { printf '\033[1mdemo:\033[0m %s\n' "$*"; }
ctl() { "$KFIXCTL" -c "$T/kfix.conf" "$@"; }
say "preparing the kernel (the first run builds it: allow 15-60 minutes on 2 cores)"
kt_start_sshd
kt_make_initramfs
kt_prepare_kernel --if-cold # kfixd builds the base itself
kt_write_config
flow_setup

if [ -n "${KFIX_DEMO_LLM_URL:-}" ]; then
	flow_write_config "[llm \"demo\"]
	provider = ${KFIX_DEMO_LLM_PROVIDER:-openai}
	url = $KFIX_DEMO_LLM_URL
	model = ${KFIX_DEMO_LLM_MODEL:?KFIX_DEMO_LLM_MODEL is needed with KFIX_DEMO_LLM_URL}
${KFIX_DEMO_LLM_KEY_FILE:+	api-key = file:$KFIX_DEMO_LLM_KEY_FILE}" demo demo yes
	say "the model is $KFIX_DEMO_LLM_MODEL at $KFIX_DEMO_LLM_URL (live)"
else
	# the settings the cassettes were recorded with (tests/kernel/e2e.sh)
	flow_write_config "[llm \"replayed\"]
	url = http://127.0.0.1:9/v1
	model = scripted-msg-uaf
	replay = $S/e2e-cassette.jsonl
[llm \"iterate\"]
	url = http://127.0.0.1:9/v1
	model = scripted-msg-uaf
	replay = $S/e2e-iterate-cassette.jsonl" replayed iterate no
	say "REPLAY: the model's answers come from the recorded cassettes"
	say "  $S/e2e-cassette.jsonl (the repair)"
	say "  $S/e2e-iterate-cassette.jsonl (v2)"
	say "  (no model is called, no network is used; every build, VM run, push and mail is real)."
	say "  Set KFIX_DEMO_LLM_URL and KFIX_DEMO_LLM_MODEL to use a real model."
fi
"$KFIXD" -c "$T/kfix.conf" --check-config || exit 1
"$KFIXD" -c "$T/kfix.conf" --log-target stderr 2> "$T/kfixd.log" &
KT_PIDS+=($!)
say "kfixd is running (log: $T/kfixd.log)"
say "  the syzbot dashboard at http://127.0.0.1:$(cat "$T/dash.port")/ announces \"$FLOW_TITLE\""
say "  VM host and git remote: OpenSSH on 127.0.0.1:$SSHD_PORT; SMTP: 127.0.0.1:$(cat "$T/smtp/port")"
say "  mailing-list archive: $T/inbox (public-inbox)"

# Shows the bug's states, the running jobs and each delivery until
# CONDITION holds; fails on an end state or after SECONDS.
LAST_STATE= LAST_JOBS= LAST_SENT=0
show_progress() { # what changed since the last look; sets state
	state=$(db "SELECT state FROM bugs WHERE id = 1")
	if [ "$state" != "$LAST_STATE" ]; then
		say "  $(date +%T)  bug 1: ${state:-?}"
		LAST_STATE=$state
	fi
	# the bug's jobs, not the pollers'
	jobs=$(db "SELECT kind FROM jobs WHERE state = 'running' AND bug_id = 1" | grep . | sort | tr '\n' ' ')
	if [ "$jobs" != "$LAST_JOBS" ]; then
		[ -n "$jobs" ] && say "  $(date +%T)  job: $jobs"
		LAST_JOBS=$jobs
	fi
	while IFS='|' read -r id kind key; do
		[ -n "$id" ] || continue
		key=${key#"$kind":}
		[ "$kind" = push ] && key=${key%:*}
		say "  $(date +%T)  delivered: $kind $key"
		LAST_SENT=$id
	done < <(db "SELECT id, kind, idem_key FROM outbox WHERE state = 'sent' AND id > $LAST_SENT ORDER BY id")
}
watch_until() { # CONDITION SECONDS
	local end=$(($(date +%s) + $2)) state jobs
	while :; do
		show_progress
		# the state CONDITION saw may be newer than the one shown above
		"$1" && { show_progress; return 0; }
		case "$state" in
		not-reproducible|gave-up|already-fixed|rejected) break ;;
		esac
		[ "$(db "SELECT count(*) FROM jobs WHERE state IN ('failed', 'cancelled')")" = 0 ] || break
		[ "$(date +%s)" -lt "$end" ] || break
		sleep 1
	done
	tail -30 "$T/kfixd.log" >&2
	ctl jobs >&2
	say "stopped waiting: bug 1 is ${state:-?}; see the log above"
	exit 1
}
show_headers() { # FILE: the headers that matter, unfolded
	python3 -c 'import email,sys
m = email.message_from_binary_file(open(sys.argv[1], "rb"))
for h in ("From", "To", "Cc", "Subject", "Message-ID", "In-Reply-To"):
	for v in m.get_all(h, []):
		print("%s: %s" % (h, " ".join(str(v).split())))' "$1"
}
show_mail() { # FILE: the headers that matter, then the body
	show_headers "$1"
	echo
	sed '1,/^\r*$/d' "$1" | tr -d '\r'
}

say "the bug goes through its states:"
watch_until flow_v1_published 7200
rfc=$(mail_of kfix-1-v1-rfc)
echo
say "=== branch kfix/1/v1 on the git remote, with the explanation as a git note"
git --git-dir="$T/remote.git" log -1 --stat kfix/1/v1
git --git-dir="$T/remote.git" notes --ref=kfix show kfix/1/v1 | head -20
echo
say "=== the mail to the moderator (received by the SMTP server)"
show_mail "$rfc"

echo
say "the moderator answers \"#kfix upstream\"; the MTA hands the reply to kfixd's webhook"
flow_write_approval "$(mail_subject "$rfc")"
post_until_taken "$T/approve.eml" approve-1
upstream_sent() {
	[ "$(db "SELECT state FROM bugs WHERE id = 1")" = sent ] && [ -n "$(mail_of kfix-1-v1)" ] &&
		[ "$(sent mail)" -ge 2 ]
}
watch_until upstream_sent 600
up=$(mail_of kfix-1-v1)
echo
say "=== the mail upstream: to whom get_maintainer.pl names and syzbot, signed off by the moderator"
show_headers "$up"
grep -a '^Signed-off-by:' "$up" | tr -d '\r'
echo
say "a reviewer sends Reviewed-by and the moderator asks for a comment, on the mailing list"
flow_write_reviews "$(mail_subject "$up")"
archive "$T/review-1.eml"
archive "$T/review-2.eml"
sed '1,/^$/d; s/^/    /' "$T/review-2.eml"
watch_until flow_v2_published 3600
echo
say "=== the branches on the git remote (v1 untouched)"
git --git-dir="$T/remote.git" for-each-ref --format='%(refname:short) %(objectname:short) %(subject)' refs/heads/kfix
echo
say "=== the v2 mail to the moderator, answering v1's"
show_mail "$(mail_of kfix-1-v2-rfc)"
echo
ctl patches
rj=$(db "SELECT id FROM jobs WHERE kind = 'repair'")
echo
say "=== the repair's trajectory (kfixctl trace $rj)"
ctl trace "$rj"
kt_no_leaks
say "done: v2 awaits the moderator's #kfix upstream, with the reviewer's Reviewed-by"
