# The repair agent end to end on a real kernel, one scenario per test
# (repair-SCENARIO.sh): kfixctl repair on Debian's linux-source-6.1 with
# the scenario's bug (KASAN, qemu on a VM host that is a real sshd on
# 127.0.0.1), the source a git checkout (base commit, blame), and the
# scripted model of repairmodel.py speaking the OpenAI API on loopback.
# The model asks for a probe, states a hypothesis citing it, proposes a
# cheating patch (a gate rejects it), the scenario's wrong fix (validation
# fails, reflection follows with the evidence) and the right fix with a
# hunk it does not need (validated, minimised, explained).  repairmodel.py
# check asserts on the trajectory, the verdicts, the final diff and the
# commit message.  The run is recorded to a cassette; it is not replayed
# here: the failed attempts quote console excerpts that differ from run
# to run (replays on the kernel are tested by demo.sh and e2e.sh).
# The figures of the run (model calls, tokens, where the wall time went)
# are logged on a line starting with "figures".
# Sourced by repair-*.sh.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

kt_repair_scenario() {
	local name=$1 S=$kt_here/scenarios/$1 started port rc
	local top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}

	kt_setup
	kt_git_source
	export KFIX_PROMPTS_DIR="$top_srcdir/agent/prompts"
	started=$(date +%s)
	cp "$S/report.txt" "$T/report"
	python3 "$kt_here/repairmodel.py" script "$S" --flow repair > "$T/script.json" ||
		kt_fail "script"
	python3 "$top_srcdir/tests/agent/llm-server.py" --script "$T/script.json" --log "$T/llm.log" \
		--port-file "$T/llm.port" --estimate-usage &
	KT_PIDS+=($!)
	for i in $(seq 100); do [ -s "$T/llm.port" ] && break; sleep 0.1; done
	[ -s "$T/llm.port" ] || kt_fail "scripted model did not start"
	port=$(cat "$T/llm.port")
	# the fewest runs that still count: one on the base, two per patch
	cat >> "$T/kfix.conf" <<CFG
[agent]
	base-runs = 1
	validate-runs = 2
	locations = 2
[llm "scripted"]
	provider = openai
	url = http://127.0.0.1:$port/v1
	model = scripted-$name
	retries = 1
	backoff = 100ms
	price-input = 3
	price-output = 15
CFG
	"$KFIXCTL" -c "$T/kfix.conf" repair --src "$KT_SRC" --commit "$KT_BASE" --config "$KT_CONFIG" \
		--repro "$S/repro.c" --report "$T/report" --llm scripted --record "$T/cassette" \
		--out "$T/out" --syzbot-id 0123456789abcdef0123 > "$T/repair.txt" 2> "$T/progress.txt"
	rc=$?
	cat "$T/progress.txt" >&2
	[ $rc = 0 ] || { cat "$T/repair.txt" >&2; kt_fail "$name: repair did not validate (exit $rc)"; }
	kt_log "$name: repair validated in $(( $(date +%s) - started ))s"

	python3 "$kt_here/repairmodel.py" check "$S" "$T/out" "$T/llm.log" "$KT_BASE" ||
		kt_fail "$name: check (KFIX_KEEP_TMP=1 keeps $T)"
	"$KFIXCTL" trace "$T/out" > "$T/trace.txt" || kt_fail "trace"
	# one exchange per model call
	[ "$(wc -l < "$T/cassette")" = 10 ] ||
		kt_fail "the cassette holds $(wc -l < "$T/cassette") exchanges, not 10"
	"$KFIXCTL" --json trace "$T/out" | python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]; ms = s["ms"]; w = max(s["wall_ms"], 1)
print("figures %s: %d LLM calls, %d+%d tokens (estimated), wall %.1fs: build %.0f%%, vm %.0f%%, "
      "llm %.0f%%, agent/other %.0f%% (%.1fs)" % (sys.argv[1], s["llm_calls"], s["tokens_in"],
      s["tokens_out"], w / 1e3, 100 * ms["build"] / w, 100 * ms["vm"] / w, 100 * ms["llm"] / w,
      100 * ms["other"] / w, ms["other"] / 1e3))' "$name" >&2 || kt_fail "trace --json"
	kt_no_leaks
	kt_log "PASS in $(( $(date +%s) - started ))s"
	echo PASS
}
