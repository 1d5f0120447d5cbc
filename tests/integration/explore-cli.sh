#!/bin/sh
# kfixctl explore end to end on a git repository: answers with line
# numbers, JSON output, an index made on first use and then reused, the
# tree's confinement as answers starting with "error:", usage errors
# (exit 2) and kfix's own failures (exit 1) told apart.
set -eu
: "${top_builddir:=.}"
KFIXCTL="$top_builddir/kfixctl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v git >/dev/null 2>&1 || { echo "SKIP: git is not installed"; exit 77; }

r=$tmp/tree
mkdir -p "$r/ipc"
printf 'struct q {\n\tint n;\n};\n\nstatic void freeque(struct q *q)\n{\n\tq->n = 0;\n}\n' > "$r/ipc/msg.c"
git -C "$r" init -q
git -C "$r" -c user.name=T -c user.email=t@example.org add -A
git -C "$r" -c user.name=T -c user.email=t@example.org commit -qm "ipc: add msg"

out=$("$KFIXCTL" explore --src "$r" read_file '{"path": "ipc/msg.c", "start": 5, "end": 6}') ||
	fail "read_file"
[ "$out" = "$(printf 'ipc/msg.c, lines 5-6 of 8:\n     5\tstatic void freeque(struct q *q)\n     6\t{')" ] ||
	fail "read_file: $out"
"$KFIXCTL" --json explore --src "$r" grep '{"pattern": "q->n"}' > "$tmp/grep.json" || fail "grep --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["tool"] == "grep" and d["answer"].startswith("ipc/msg.c:7: "), d' \
	"$tmp/grep.json" || fail "grep JSON: $(cat "$tmp/grep.json")"

# confinement and mistakes are answers, not failures
for a in '{"path": "../etc/passwd"}' '{"path": "/etc/passwd"}' '{"path": ".git/config"}'; do
	out=$("$KFIXCTL" explore --src "$r" read_file "$a") || fail "read_file $a failed"
	case $out in error:*) ;; *) fail "read_file $a: $out" ;; esac
done

# usage errors and kfix's failures
set +e
"$KFIXCTL" explore read_file '{}' >/dev/null 2>&1; [ $? -eq 2 ] || fail "no --src: not a usage error"
"$KFIXCTL" explore --src "$r" read_file 'not json' >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad JSON: not a usage error"
"$KFIXCTL" explore --src "$r" run_shell '{}' >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "no tool run_shell" "$tmp/err" || fail "unknown tool: exit $rc, $(cat "$tmp/err")"

# --help lists every tool the model is given, with its parameters
"$KFIXCTL" explore --help > "$tmp/help" || fail "explore --help"
for t in read_file list_dir grep find_definition find_references struct_layout symbolize \
	disassemble git_log git_blame git_show; do
	grep -q "^  $t\$" "$tmp/help" || fail "explore --help does not list $t"
done
grep -q "^      start (integer): " "$tmp/help" || fail "explore --help: no parameters"

if ctags --version 2>/dev/null | grep -q Universal; then
	"$KFIXCTL" explore --src "$r" --index "$tmp/tags" find_definition '{"symbol": "freeque"}' \
		> "$tmp/def1" 2> "$tmp/made" || fail "index: $(cat "$tmp/made")"
	grep -q "^indexed " "$tmp/made" || fail "the index was not made: $(cat "$tmp/made")"
	"$KFIXCTL" explore --src "$r" --index "$tmp/tags" find_definition '{"symbol": "freeque"}' \
		> "$tmp/def2" 2> "$tmp/made2" || fail "index reuse"
	[ ! -s "$tmp/made2" ] || fail "the index was made again"
	grep -q '^ipc/msg.c:5: definition of freeque:$' "$tmp/def2" || fail "indexed definition: $(cat "$tmp/def2")"
	"$KFIXCTL" explore --src "$r" find_definition '{"symbol": "freeque"}' > "$tmp/def3" || fail "search"
	cmp -s "$tmp/def2" "$tmp/def3" || fail "the index and the search differ"
else
	echo "SKIP part: Universal Ctags is not installed"
fi
echo PASS
