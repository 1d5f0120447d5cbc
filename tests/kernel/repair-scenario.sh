# The repair agent end to end on a real kernel, one scenario per test
# (repair-SCENARIO.sh): kfixctl repair on Debian's linux-source-6.1 with
# the scenario's bug (KASAN, qemu on a VM host that is a real sshd on
# 127.0.0.1), the source a git checkout (base commit, blame), and the
# scripted model of repairmodel.py speaking the OpenAI API on loopback.
# The model asks for a probe, states a hypothesis citing it, proposes a
# cheating patch (a gate rejects it), the scenario's wrong fix (validation
# fails, reflection follows with the evidence), in timer-kclock a patch
# whose kernel does not boot (a failed attempt, its console shown), and
# the right fix with a hunk it does not need (validated, reviewed against
# its callers, minimised, reviewed again, explained).  repairmodel.py
# check asserts on the trajectory, the verdicts, the evidence the model
# was shown, the final diff and the commit message.
# The model is replayed from the scenario's repair-cassette.jsonl when
# there is one (a change of substance in any prompt fails the replay);
# without one, or with KFIX_RECORD_CASSETTE=1, the scripted model runs
# (KFIX_RECORD_CASSETTE=1 keeps its cassette in the scenario folder).
# The figures of the run (model calls, tokens, where the wall time went)
# are logged on a line starting with "figures".
# Sourced by repair-*.sh.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

kt_repair_scenario() {
	local name=$1 S=$kt_here/scenarios/$1 started rc cassette model live
	local top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}

	kt_setup
	kt_git_source
	export KFIX_PROMPTS_DIR="$top_srcdir/agent/prompts"
	started=$(date +%s)
	cp "$S/report.txt" "$T/report"
	cassette=$S/repair-cassette.jsonl
	live=0
	[ "${KFIX_RECORD_CASSETTE:-0}" = 1 ] || [ ! -s "$cassette" ] && live=1
	if [ $live = 1 ]; then
		python3 "$kt_here/repairmodel.py" script "$S" --flow repair > "$T/script.json" ||
			kt_fail "script"
		python3 "$top_srcdir/tests/agent/llm-server.py" --script "$T/script.json" \
			--log "$T/llm.log" --port-file "$T/llm.port" --estimate-usage &
		KT_PIDS+=($!)
		for i in $(seq 100); do [ -s "$T/llm.port" ] && break; sleep 0.1; done
		[ -s "$T/llm.port" ] || kt_fail "scripted model did not start"
		model=(--llm scripted --record "$T/cassette")
		cat >> "$T/kfix.conf" <<CFG
[llm "scripted"]
	provider = openai
	url = http://127.0.0.1:$(cat "$T/llm.port")/v1
	model = scripted-$name
	retries = 1
	backoff = 100ms
	price-input = 3
	price-output = 15
CFG
	else
		model=(--replay "$cassette")
	fi
	# the fewest runs that still count: one on the base, two per patch
	cat >> "$T/kfix.conf" <<CFG
[agent]
	base-runs = 1
	validate-runs = 2
	locations = 2
CFG
	# a scenario that tries more fresh patches than the default allows
	# says so in its agent.conf (keys of the [agent] section)
	[ -f "$S/agent.conf" ] && cat "$S/agent.conf" >> "$T/kfix.conf"
	"$KFIXCTL" -c "$T/kfix.conf" repair --src "$KT_SRC" --commit "$KT_BASE" --config "$KT_CONFIG" \
		--repro "$S/repro.c" --report "$T/report" "${model[@]}" \
		--out "$T/out" --syzbot-id 0123456789abcdef0123 > "$T/repair.txt" 2> "$T/progress.txt"
	rc=$?
	cat "$T/progress.txt" >&2
	[ $rc = 0 ] || { cat "$T/repair.txt" >&2; kt_fail "$name: repair did not validate (exit $rc)"; }
	kt_log "$name: repair validated in $(( $(date +%s) - started ))s"

	if [ $live = 1 ]; then
		# one exchange per model call
		steps=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$T/script.json")
		[ "$(wc -l < "$T/cassette")" = "$steps" ] ||
			kt_fail "the cassette holds $(wc -l < "$T/cassette") exchanges, not $steps"
		cassette=$T/cassette
	else
		grep -q "replaying the model from $cassette" "$T/progress.txt" ||
			kt_fail "the output does not say that the model is replayed"
	fi
	python3 "$kt_here/repairmodel.py" check "$S" "$T/out" "$cassette" "$KT_BASE" ||
		kt_fail "$name: check (KFIX_KEEP_TMP=1 keeps $T)"
	# a scenario that names kselftests: they ran on both kernels and the
	# explanation lists them
	if grep -q '^	selftests = ' "$S/agent.conf" 2>/dev/null; then
		grep -q '^- kselftests covering the change' "$T/out/explanation.md" &&
			grep -q '^  - .*: pass on the base, pass on the patch$' "$T/out/explanation.md" ||
			{ sed -n '/## Tested/,/## Commit/p' "$T/out/explanation.md" >&2
			  kt_fail "$name: the explanation does not list the kselftests"; }
	fi
	"$KFIXCTL" trace "$T/out" > "$T/trace.txt" || kt_fail "trace"
	"$KFIXCTL" --json trace "$T/out" | python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]; ms = s["ms"]; w = max(s["wall_ms"], 1)
print("figures %s: %d LLM calls, %d+%d tokens (estimated), wall %.1fs: build %.0f%%, vm %.0f%%, "
      "llm %.0f%%, agent/other %.0f%% (%.1fs)" % (sys.argv[1], s["llm_calls"], s["tokens_in"],
      s["tokens_out"], w / 1e3, 100 * ms["build"] / w, 100 * ms["vm"] / w, 100 * ms["llm"] / w,
      100 * ms["other"] / w, ms["other"] / 1e3))' "$name" >&2 || kt_fail "trace --json"
	# the tools the model called, and the model turns that called them
	python3 -c '
import json, sys
s = json.load(open(sys.argv[2] + "/summary.json"))
assert s["tool_calls"] == sum(s["tools"].values()) and s["tools"].get("read_file"), s
print("figures %s: %d turns, %d tool calls: %s" % (sys.argv[1], s["llm_calls"], s["tool_calls"],
      ", ".join("%s %d" % kv for kv in sorted(s["tools"].items()))))' "$name" "$T/out" >&2 ||
		kt_fail "the tool calls in summary.json"
	kt_no_leaks
	if [ "${KFIX_RECORD_CASSETTE:-0}" = 1 ]; then
		cp "$T/cassette" "$S/repair-cassette.jsonl" || kt_fail "keeping the cassette"
		kt_log "recorded $S/repair-cassette.jsonl"
	fi
	kt_log "PASS in $(( $(date +%s) - started ))s"
	echo PASS
}
