#!/bin/sh
# kfixctl repair and trace without kernels: a repair that stops at the
# pre-checks still leaves its trajectory, which trace shows.
set -eu
: "${top_builddir:=.}"
kfixctl="$top_builddir/kfixctl"
dir=$(mktemp -d /tmp/kfix-repair-cli.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$dir/src/net/foo"
printf 'int foo_release(void)\n{\n\treturn 0;\n}\n' > "$dir/src/net/foo/foo.c"
cat > "$dir/report" <<'R'
BUG: KASAN: slab-use-after-free in foo_release+0x1a/0x80 net/foo/foo.c:3
Call Trace:
 foo_release+0x1a/0x80 net/foo/foo.c:3
R
: > "$dir/cassette"
printf '{"n":0,"provider":"openai","model":"m","request":{},"body":"{}"}\n' > "$dir/cassette"
export KFIX_PROMPTS_DIR="$top_srcdir/agent/prompts"

# no --repro: nothing to test a fix with
if "$kfixctl" -c "$dir/none.conf" repair --src "$dir/src" --report "$dir/report" \
	--replay "$dir/cassette" --out "$dir/out" > "$dir/stdout" 2> "$dir/stderr"; then
	fail "repair without reproducer succeeded"
fi
grep -q '^result:    no-reproducer' "$dir/stdout" || fail "wrong result: $(cat "$dir/stdout" "$dir/stderr")"
grep -q 'replaying the model' "$dir/stderr" || fail "replay not announced"
[ -s "$dir/out/trajectory.jsonl" ] || fail "no trajectory"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["result"]=="no-reproducer", s' \
	"$dir/out/summary.json" || fail "summary.json"

"$kfixctl" trace "$dir/out" > "$dir/trace" || fail "trace failed"
grep -q 'run.start' "$dir/trace" || fail "trace lacks run.start: $(cat "$dir/trace")"
grep -q 'no-reproducer' "$dir/trace" || fail "trace lacks the verdict"
"$kfixctl" trace --json "$dir/out/trajectory.jsonl" | python3 -c '
import json, sys
j = json.load(sys.stdin)
kinds = [e["kind"] for e in j["events"]]
assert kinds[0] == "run.start" and kinds[-1] == "run.end", kinds
assert j["summary"]["llm_calls"] == 0, j["summary"]
' || fail "trace --json"
"$kfixctl" trace "$dir/nothing" 2>/dev/null && fail "trace of nothing succeeded"
"$kfixctl" repair --src "$dir/src" 2>/dev/null && fail "usage error not reported"
# a rerun of the run above: from a step it reached, or refused
"$kfixctl" -c "$dir/none.conf" repair --src "$dir/src" --report "$dir/report" --replay "$dir/cassette" \
	--directive "x" --out "$dir/o2" 2>/dev/null && fail "--directive without --rerun accepted"
"$kfixctl" -c "$dir/none.conf" repair --src "$dir/src" --report "$dir/report" --replay "$dir/cassette" \
	--rerun "$dir/out" --from localise --out "$dir/o3" 2> "$dir/stderr" && fail "a step never reached accepted"
grep -q "never reached step localise" "$dir/stderr" || fail "rerun refusal: $(cat "$dir/stderr")"
"$kfixctl" -c "$dir/none.conf" repair --src "$dir/src" --report "$dir/report" --replay "$dir/cassette" \
	--rerun "$dir/out" --from run --directive "Look again." --out "$dir/o4" > "$dir/stdout" 2> "$dir/stderr" || true
grep -q '^result:    no-reproducer' "$dir/stdout" || fail "rerun from run: $(cat "$dir/stdout" "$dir/stderr")"
python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[0]["input"]["rerun"] == {"from": "run", "directive": "Look again."}, ev[0]
assert [e for e in ev if e["kind"] == "rerun.live"], ev
' "$dir/o4/trajectory.jsonl" || fail "the rerun is not in the trajectory"
echo PASS
