# The repair agent end to end on a real kernel, one scenario per test
# (repair-SCENARIO.sh), run as the benchmark runs it: kfixctl bench over
# the shipped dataset (scenarios/dataset.json) with --only the scenario,
# which runs kfixctl repair on Debian's linux-source-6.1 with
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
		model=(--live --llm scripted --record)
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
		model=()
	fi
	kt_repair_settings
	# a scenario that tries more fresh patches than the default allows
	# says so in its agent.conf (the dataset's agent_conf: [agent] keys)
	"$KFIXCTL" -c "$T/kfix.conf" bench --out "$T/bench" --src "$KT_SRC" --config "$KT_CONFIG" \
		--only "$name" "${model[@]}" "$kt_here/scenarios/dataset.json" > "$T/bench.txt" 2> "$T/bench.err"
	rc=$?
	ln -s "$T/bench/bugs/$name/repair" "$T/out"
	cp "$T/bench/bugs/$name/repair.log" "$T/progress.txt" 2>/dev/null
	cat "$T/bench.err" "$T/progress.txt" >&2
	[ $rc = 0 ] || kt_fail "$name: bench failed (exit $rc)"
	python3 - "$T/bench" "$name" "$S/fix.patch" <<'PY' || kt_fail "$name: the bench's result and summary"
import json, sys
run, name, fix = sys.argv[1:]
r = json.load(open("%s/bugs/%s/result.json" % (run, name)))
s = json.load(open(run + "/summary.json"))
rep = json.load(open("%s/bugs/%s/repair/summary.json" % (run, name)))
assert r["result"] == "validated" and r["reproduced"] and r["validated"], r
# the scripted model ends with the known fix, less what minimisation
# dropped: the developers' place, their file and function
assert r["solved"] and r["touches_dev_files"] and r["touches_dev_functions"], r
assert r["verdict"] in ("same", "same-place") and r["hunk_overlap"] > 0, r
assert r["turns"] == rep["llm_calls"] > 0 and r["tokens_in"] == rep["tokens_in"], (r, rep)
# equivalent exactly when the final diff changes the lines fix.patch does
def changed(text):
    return sorted(l.strip() for l in text.splitlines()
                  if l[:1] in "+-" and not l.startswith(("+++", "---")) and l[1:].strip())
same = changed(open("%s/bugs/%s/repair/0001-fix.patch" % (run, name)).read().split("\n---\n", 1)[1]) == \
    changed(open(fix).read())
assert r["equivalent"] == same, (r["equivalent"], same)
assert s["bugs"] == 1 and s["plausible"] == 1 and s["solved"] == 1 and s["rates"]["plausible"] == 1, s
assert s["equivalent"] == (1 if same else 0) and s["results"][0]["id"] == name, s
# the runner's own time: the bug's wall time less the repair's, from the
# first event of its trajectory to the end of its last
ev = [json.loads(l) for l in open("%s/bugs/%s/repair/trajectory.jsonl" % (run, name))]
first = min(e["start_us"] for e in ev)
last = max(e["start_us"] + e["duration_ms"] * 1000 for e in ev)
print("figures %s: bench: %s, similarity %.2f, equivalent %s, wall %.1fs, outside the repair %.2fs" %
      (name, r["verdict"], r["similarity"], r["equivalent"], r["wall_seconds"],
       r["wall_seconds"] - (last - first) / 1e6), file=sys.stderr)
PY
	kt_log "$name: repair validated in $(( $(date +%s) - started ))s"

	if [ $live = 1 ]; then
		# one exchange per model call
		steps=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$T/script.json")
		cassette=$T/bench/bugs/$name/cassette.jsonl
		[ "$(wc -l < "$cassette")" = "$steps" ] ||
			kt_fail "the cassette holds $(wc -l < "$cassette") exchanges, not $steps"
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
		cp "$cassette" "$S/repair-cassette.jsonl" || kt_fail "keeping the cassette"
		kt_log "recorded $S/repair-cassette.jsonl"
	fi
	kt_log "PASS in $(( $(date +%s) - started ))s"
	echo PASS
}
