#!/bin/bash
# The demo: one whole repair on a real kernel.  Debian's linux-source-6.1
# with an injected use-after-free in ipc/msg.c (tests/kernel/scenarios/
# msg-uaf) is built with KASAN, booted in qemu on a VM host that is an
# OpenSSH server on 127.0.0.1, and kfixctl repair reproduces the crash,
# probes it, rejects a cheating patch, learns from a wrong one, validates
# the right one, minimises and explains it.
#
# The model's answers are REPLAYED from a recorded cassette unless a real
# endpoint is given (KFIX_DEMO_LLM_URL, KFIX_DEMO_LLM_MODEL, optional
# KFIX_DEMO_LLM_PROVIDER=openai|anthropic and KFIX_DEMO_LLM_KEY_FILE).
# The first run builds the kernel (minutes; cached in
# ${KFIX_TEST_CACHE:-/var/cache/kfix-tests} for the next ones).
#
#   scripts/demo.sh              the real-kernel repair
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
export KFIX_PROMPTS_DIR=$top/agent/prompts
echo "demo: preparing the kernel (the first run builds it: allow 15-60 minutes on 2 cores)"
kt_start_sshd
kt_make_initramfs
kt_prepare_kernel
kt_write_config
# the settings the cassette was recorded with (tests/kernel/repair.sh)
cat >> "$T/kfix.conf" <<CFG
[agent]
	base-runs = 1
	validate-runs = 2
	locations = 2
CFG

llm=(--replay "$S/cassette.jsonl")
if [ -n "${KFIX_DEMO_LLM_URL:-}" ]; then
	cat >> "$T/kfix.conf" <<CFG
[llm "demo"]
	provider = ${KFIX_DEMO_LLM_PROVIDER:-openai}
	url = $KFIX_DEMO_LLM_URL
	model = ${KFIX_DEMO_LLM_MODEL:?KFIX_DEMO_LLM_MODEL is needed with KFIX_DEMO_LLM_URL}
${KFIX_DEMO_LLM_KEY_FILE:+	key = file:$KFIX_DEMO_LLM_KEY_FILE}
CFG
	llm=(--llm demo --record "$T/cassette.jsonl")
	echo "demo: the model is $KFIX_DEMO_LLM_MODEL at $KFIX_DEMO_LLM_URL (live)"
else
	echo "demo: REPLAY: the model's answers come from the recorded cassette"
	echo "demo:   $S/cassette.jsonl (no model is called, no network is used);"
	echo "demo:   set KFIX_DEMO_LLM_URL and KFIX_DEMO_LLM_MODEL to use a real model"
fi
out=${KFIX_DEMO_OUT:-$PWD/kfix-demo-out}
rm -rf "$out"
"$KFIXCTL" -c "$T/kfix.conf" repair --src "$KT_SRC" --config "$KT_CONFIG" --repro "$S/repro.c" \
	--report "$S/report.txt" --syzbot-id 0123456789abcdef0123 --out "$out" "${llm[@]}"
rc=$?
echo
echo "=== the patch ($out/0001-fix.patch)"
cat "$out/0001-fix.patch" 2>/dev/null
echo "=== the explanation ($out/explanation.md)"
cat "$out/explanation.md" 2>/dev/null
echo "=== the trajectory (kfixctl trace $out)"
"$KFIXCTL" trace "$out"
kt_no_leaks
exit $rc
