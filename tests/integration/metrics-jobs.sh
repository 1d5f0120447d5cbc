#!/bin/sh
# /metrics shows what job processes record in the store (builds, VM runs,
# LLM calls, tokens, cost), in the Prometheus text format, and the
# numbers survive a restart of kfixd.
set -eu
. "$top_srcdir/tests/integration/hooks-lib.sh"
hooks_need curl python3 sqlite3
hooks_setup
STATS="$top_builddir/tests/helpers/statstool"
DB="$HOOKS_TMP/state/kfix.db"
hooks_write_config "	llm-day-tokens = 10000
	llm-day-cost = 2.5"
# the budget lines belong to [kfix]: put them there
python3 - "$KFIX_CONF" <<'EOPY'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
budget = [l for l in lines if "llm-day-" in l]
rest = [l for l in lines if "llm-day-" not in l]
i = rest.index("[kfix]") + 1
open(p, "w").write("\n".join(rest[:i] + budget + rest[i:]))
EOPY
hooks_start_kfixd
start=$(date +%s)

m=$(curl -fs "$KFIX_URL/metrics") || fail "metrics"
echo "$m" | grep -q '^kfix_builds_total' && fail "builds before any"

# job processes write while kfixd serves
"$STATS" "$DB" build ok 420 || fail "record build"
"$STATS" "$DB" build build-error 35 || fail "record build"
"$STATS" "$DB" vm-run crashed 95 || fail "record run"
"$STATS" "$DB" vm-run no-crash 130 || fail "record run"
"$STATS" "$DB" llm qwen3-coder ok 4.5 1500 250 0.0125 || fail "record llm"
"$STATS" "$DB" llm qwen3-coder failed 60 900 0 0 || fail "record llm"

curl -fs "$KFIX_URL/metrics" >"$HOOKS_TMP/m1" || fail "metrics"
check() {
	grep -qxF "$1" "$HOOKS_TMP/m1" || fail "missing: $1"
}
check 'kfix_builds_total{result="ok"} 1'
check 'kfix_builds_total{result="build-error"} 1'
check 'kfix_build_duration_seconds_bucket{result="ok",le="300"} 0'
check 'kfix_build_duration_seconds_bucket{result="ok",le="600"} 1'
check 'kfix_build_duration_seconds_count{result="ok"} 1'
check 'kfix_build_duration_seconds_sum{result="ok"} 420.000000'
check 'kfix_vm_runs_total{outcome="crashed"} 1'
check 'kfix_vm_runs_total{outcome="no-crash"} 1'
check 'kfix_vm_run_duration_seconds_bucket{outcome="no-crash",le="120"} 0'
check 'kfix_vm_run_duration_seconds_bucket{outcome="no-crash",le="300"} 1'
check 'kfix_llm_calls_total{model="qwen3-coder",result="ok"} 1'
check 'kfix_llm_calls_total{model="qwen3-coder",result="failed"} 1'
check 'kfix_llm_call_duration_seconds_count{model="qwen3-coder"} 2'
check 'kfix_llm_tokens_total{model="qwen3-coder",direction="input"} 2400'
check 'kfix_llm_tokens_total{model="qwen3-coder",direction="output"} 250'
check 'kfix_llm_cost_dollars_total{model="qwen3-coder"} 0.0125'
# the daemon's own series are still there
grep -q '^kfix_jobs{state="queued"}' "$HOOKS_TMP/m1" || fail "daemon gauges gone"
check "kfix_build_info{version=\"$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")\"} 1"
t=$(sed -n 's/^process_start_time_seconds //p' "$HOOKS_TMP/m1" | cut -d. -f1)
[ -n "$t" ] && [ "$t" -ge $((start - 5)) ] && [ "$t" -le "$(date +%s)" ] ||
	fail "process_start_time_seconds: $t (started $start)"
check 'kfix_scheduler_paused 0'
check 'kfix_scheduler_draining 0'
# what the day's jobs spent (the budget's table): what is left of it
sqlite3 "$DB" "INSERT INTO llm_usage (ts, bug_id, job_id, model, tokens_in, tokens_out, cost)
	VALUES ($(date +%s), 1, 1, 'm', 3000, 500, 1.0)" || fail "usage row"
"$KFIXCTL" -c "$KFIX_CONF" pause >/dev/null || fail "pause"
curl -fs "$KFIX_URL/metrics" >"$HOOKS_TMP/m1" || fail "metrics"
check 'kfix_llm_budget_remaining_tokens 6500'
check 'kfix_llm_budget_remaining_dollars 1.5'
check 'kfix_scheduler_paused 1'
"$KFIXCTL" -c "$KFIX_CONF" resume >/dev/null || fail "resume"

# the whole page is valid text format: every family declared once, every
# sample of a declared family, histogram buckets cumulative
python3 - "$HOOKS_TMP/m1" <<'EOP' || fail "not valid Prometheus text"
import re, sys
types, seen_help = {}, set()
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*")*)?\})? (-?[0-9.e+-]+|\+Inf|NaN)$')
last = {}
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# HELP "):
        name = line.split()[2]
        assert name not in seen_help, "HELP twice: " + name
        seen_help.add(name)
        continue
    if line.startswith("# TYPE "):
        _, _, name, t = line.split()
        assert name not in types, "TYPE twice: " + name
        types[name] = t
        continue
    m = sample.match(line)
    assert m, "bad line: " + line
    name = m.group(1)
    base = re.sub(r'_(bucket|sum|count)$', '', name)
    assert name in types or (base in types and types[base] == "histogram"), "undeclared: " + line
    if name.endswith("_bucket"):
        key = re.sub(r',?le="[^"]*"', '', m.group(2) or "")
        v = float(m.group(7))
        assert v >= last.get((base, key), 0), "buckets not cumulative: " + line
        last[(base, key)] = v
EOP

# the numbers live in the store: a restart keeps them
hooks_stop_kfixd
hooks_start_kfixd
"$STATS" "$DB" build ok 100 || fail "record build"
curl -fs "$KFIX_URL/metrics" >"$HOOKS_TMP/m1" || fail "metrics"
check 'kfix_builds_total{result="ok"} 2'
check 'kfix_llm_tokens_total{model="qwen3-coder",direction="input"} 2400'
hooks_stop_kfixd
echo ok
