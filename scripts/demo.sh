#!/bin/bash
# The demo: kfixd repairs a real kernel bug with nobody touching it.
# Debian's linux-source-6.1 with an injected use-after-free in ipc/msg.c
# (tests/kernel/scenarios/msg-uaf) is built with KASAN; kfixd takes the
# submitted bug, reproduces it in qemu on a VM host that is an OpenSSH
# server on 127.0.0.1, lets the repair agent probe it and write a fix,
# validates the fix on the kernel and mails it (to a spool folder) for
# moderation, with the explanation and the reproduction table.
#
# The model's answers are REPLAYED from a recorded cassette unless a real
# endpoint is given (KFIX_DEMO_LLM_URL, KFIX_DEMO_LLM_MODEL, optional
# KFIX_DEMO_LLM_PROVIDER=openai|anthropic and KFIX_DEMO_LLM_KEY_FILE).
# The first run builds the kernel (minutes; cached in
# ${KFIX_TEST_CACHE:-/var/cache/kfix-tests} for the next ones).
#
#   scripts/demo.sh              the real-kernel repair inside kfixd
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
		[ -n "$(ls "$dir/spool" 2>/dev/null)" ] && break
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

# The kernel harness of the tests: sshd, initramfs, the cached kernel.
top_builddir=$bin
. "$top/tests/kernel/lib.sh"
kt_skip() { echo "demo: cannot run: $*" >&2; echo "demo: run ./scripts/install-deps.sh all first" >&2; exit 1; }
kt_setup_tmp
kt_require
S=$top/tests/kernel/scenarios/msg-uaf
KFIXD=$bin/kfixd
[ -x "$KFIXD" ] || KFIXD=$bin/daemon/kfixd
say() { printf '\033[1mdemo:\033[0m %s\n' "$*"; }
say "preparing the kernel (the first run builds it: allow 15-60 minutes on 2 cores)"
kt_start_sshd
kt_make_initramfs
kt_prepare_kernel
kt_write_config

# The settings the cassette was recorded with (tests/kernel/pipeline.sh).
cat >> "$T/kfix.conf" <<CFG
[kfix]
	job-attempts = 1
	job-timeout = 2h
[mail]
	transport = spool
	spool-dir = $T/spool
	from = kfix bot <kfix@kfix.example.org>
[tree "msg"]
	path = $KT_SRC
	config = $KT_CONFIG
	moderation-address = moderation@example.org
[agent]
	llm = demo
	prompts-dir = $top/agent/prompts
	base-runs = 1
	validate-runs = 2
	locations = 2
	minimise = false
CFG
if [ -n "${KFIX_DEMO_LLM_URL:-}" ]; then
	cat >> "$T/kfix.conf" <<CFG
	record = yes
[llm "demo"]
	provider = ${KFIX_DEMO_LLM_PROVIDER:-openai}
	url = $KFIX_DEMO_LLM_URL
	model = ${KFIX_DEMO_LLM_MODEL:?KFIX_DEMO_LLM_MODEL is needed with KFIX_DEMO_LLM_URL}
${KFIX_DEMO_LLM_KEY_FILE:+	api-key = file:$KFIX_DEMO_LLM_KEY_FILE}
CFG
	say "the model is $KFIX_DEMO_LLM_MODEL at $KFIX_DEMO_LLM_URL (live)"
else
	cat >> "$T/kfix.conf" <<CFG
[llm "demo"]
	url = http://127.0.0.1:9/v1
	model = scripted-msg-uaf
	replay = $S/pipeline-cassette.jsonl
CFG
	say "REPLAY: the model's answers come from the recorded cassette"
	say "  $S/pipeline-cassette.jsonl"
	say "  (no model is called, no network is used; every build and VM run is real)."
	say "  Set KFIX_DEMO_LLM_URL and KFIX_DEMO_LLM_MODEL to use a real model."
fi
"$KFIXD" -c "$T/kfix.conf" --check-config || exit 1
"$KFIXCTL" -c "$T/kfix.conf" submit --source syzbot --id 0123456789abcdef0123 \
	--title "KASAN: use-after-free Read in ksys_msgctl" --tree msg --report "$S/report.txt" \
	--repro "$S/repro.c" || exit 1
"$KFIXD" -c "$T/kfix.conf" --log-target stderr 2> "$T/kfixd.log" &
KT_PIDS+=($!)
say "kfixd is running (log: $T/kfixd.log); the bug goes through its states:"

last= rc=1
for _ in $(seq 7200); do
	"$KFIXCTL" -c "$T/kfix.conf" --json bug 1 > "$T/bug.json" 2>/dev/null &&
		state=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["state"])' "$T/bug.json")
	if [ "${state:-}" != "$last" ]; then
		say "  $(date +%T)  bug 1: ${state:-?}"
		last=$state
	fi
	case "${state:-}" in
	awaiting-approval) ls "$T"/spool/*.eml >/dev/null 2>&1 && { rc=0; break; } ;;
	not-reproducible|gave-up|already-fixed) break ;;
	esac
	sleep 1
done
echo
"$KFIXCTL" -c "$T/kfix.conf" jobs
if [ $rc = 0 ]; then
	echo
	say "=== the moderation mail (spooled)"
	cat "$T"/spool/*.eml
	rj=$(sqlite3 "$T/state/kfix.db" "SELECT id FROM jobs WHERE kind = 'repair'" 2>/dev/null ||
		python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT id FROM jobs WHERE kind = \"repair\"").fetchone()[0])' "$T/state/kfix.db")
	echo
	say "=== the repair's trajectory (kfixctl trace $rj)"
	"$KFIXCTL" -c "$T/kfix.conf" trace "$rj"
	say "done: a validated patch awaits the moderator's #kfix upstream"
else
	tail -30 "$T/kfixd.log" >&2
	say "the bug ended as ${state:-?}: see the log above"
fi
kt_no_leaks
exit $rc
