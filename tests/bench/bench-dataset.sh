#!/bin/bash
# The benchmark runner on the shipped dataset (make bench): kfixctl bench
# over tests/kernel/scenarios/dataset.json, each bug replayed from its
# cassette on the real kernel, once one bug at a time (--jobs 1) and once
# two at a time (--jobs 2), on the same warm build folder.  Printed: each
# run's wall time and their ratio, each bug's outcome, and the runner's
# own time per bug: the bug's wall time less the span of its repair's
# trajectory (what kfixctl bench adds around a repair: starting it,
# comparing its patch, writing the results and the summary).  Both runs
# must give the same outcomes (kfixctl bench compare lists no bug).
# KFIX_BENCH_ONLY="ID ..." runs those bugs of the dataset only.
set -uo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/kernel/lib.sh"
kt_setup
kt_git_source
export KFIX_PROMPTS_DIR="$top_srcdir/agent/prompts"
kt_repair_settings

only=()
for id in ${KFIX_BENCH_ONLY:-}; do only+=(--only "$id"); done

run() { # JOBS: the whole dataset; prints the seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$KFIXCTL" -c "$T/kfix.conf" bench --out "$T/j$1" --src "$KT_SRC" --config "$KT_CONFIG" \
		--jobs "$1" "${only[@]}" "$kt_here/scenarios/dataset.json" > "$T/j$1.out" 2> "$T/j$1.err" ||
		kt_fail "bench --jobs $1: $(tail -5 "$T/j$1.err")"
	t1=$(date +%s.%N)
	python3 -c "print(f'{$t1 - $t0:.1f}')"
}

# warm: the base kernel's objects
"$KFIXCTL" -c "$T/kfix.conf" build --src "$KT_SRC" --config "$KT_CONFIG" > /dev/null 2>&1 ||
	kt_fail "warm build"
w1=$(run 1)
w2=$(run 2)
"$KFIXCTL" -c "$T/kfix.conf" bench compare "$T/j1" "$T/j2" > "$T/cmp" || kt_fail "compare"
grep -q '^| bug |' "$T/cmp" && kt_fail "the two runs differ: $(cat "$T/cmp")"
python3 - "$T/j1" "$w1" "$w2" <<'PY' || kt_fail "figures"
import json, os, statistics, sys
run, w1, w2 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
s = json.load(open(run + "/summary.json"))
over = []
print("kfixctl bench over %s: %d bugs, %d reproduced, %d plausible, %d solved, %d equivalent"
      % (s["dataset"], s["bugs"], s["reproduced"], s["plausible"], s["solved"], s["equivalent"]))
for b in s["results"]:
    ev = [json.loads(l) for l in open("%s/bugs/%s/repair/trajectory.jsonl" % (run, b["id"]))]
    span = (max(e["start_us"] + e["duration_ms"] * 1000 for e in ev) - min(e["start_us"] for e in ev)) / 1e6
    over.append(b["wall_seconds"] - span)
    print("  %-18s %-10s solved %-5s equivalent %-5s wall %6.1f s, outside the repair %.2f s"
          % (b["id"], b["result"], b["solved"], b["equivalent"], b["wall_seconds"], over[-1]))
print("runner's own time per bug: median %.2f s, max %.2f s" % (statistics.median(over), max(over)))
print("wall time of the dataset: --jobs 1 %.1f s, --jobs 2 %.1f s, ratio %.2f" % (w1, w2, w2 / w1))
PY
