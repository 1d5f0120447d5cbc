#!/bin/bash
# The agent's exploration tools on the prepared 6.1 kernel, through
# kfixctl explore: a static function's definition, a SYSCALL_DEFINEd
# syscall found from its wrapper's name, the references to a function,
# a struct's layout from the built vmlinux compared member by member with
# gdb's ptype /o on the same file, symbolize and disassemble of a
# function of the crash stack; definitions from the ctags index of the
# base (made once into the shared cache) and by searching the tree give
# the same answers.  How long each took is logged on a line starting with
# "figures".
set -uo pipefail
. "$(dirname "$0")/lib.sh"
kt_setup_tmp
kt_require
command -v gdb >/dev/null || kt_skip "gdb is not installed"
kt_prepare_kernel
kt_git_source
V=$KT_TOP/build/src--kasan/vmlinux
[ -s "$V" ] || kt_fail "no vmlinux in the prepared build"
now() { date +%s.%N; }
declare -A took
INDEX=$KT_TOP/index/$KT_BASE.tags
mkdir -p "$KT_TOP/index"
explore() {
	local t0 tool=$1
	t0=$(now)
	"$KFIXCTL" explore --src "$KT_SRC" --commit "$KT_BASE" --vmlinux "$V" ${IDX:+--index "$INDEX"} "$@" \
		> "$T/$tool.txt" 2> "$T/err.txt" || kt_fail "explore $*: $(cat "$T/$tool.txt" "$T/err.txt")"
	took[$tool]=$(python3 -c "print(f'{$(now) - $t0:.2f}')")
}

# the index: made (or found in the cache), then loaded for each call
IDX=1
t0=$(now)
[ -s "$INDEX" ] || "$KFIXCTL" explore --src "$KT_SRC" --commit "$KT_BASE" --index "$INDEX" list_dir '{"path": "ipc"}' \
	> /dev/null 2> "$T/index.txt" || kt_fail "index: $(cat "$T/index.txt")"
index_secs=$(grep -o 'in [0-9.]*s' "$T/index.txt" | tr -dc '0-9.')
explore find_definition '{"symbol": "freeque"}'
cp "$T/find_definition.txt" "$T/indexed-freeque.txt"
indexed_secs=${took[find_definition]}
explore find_definition '{"symbol": "__x64_sys_clock_gettime"}'
cp "$T/find_definition.txt" "$T/indexed-clock.txt"
IDX=

explore find_definition '{"symbol": "freeque", "path": "ipc"}'
grep -q '^ipc/msg.c:[0-9]*: definition of freeque:$' "$T/find_definition.txt" ||
	kt_fail "freeque: $(head -3 "$T/find_definition.txt")"
grep -qP '^ *\d+\t\t\tfree_msg\(msg\);$' "$T/find_definition.txt" || kt_fail "freeque's body is not shown numbered"
explore find_definition '{"symbol": "__x64_sys_clock_gettime"}'
grep -q '^kernel/time/posix-timers.c:[0-9]*: definition of __x64_sys_clock_gettime:$' "$T/find_definition.txt" &&
	grep -q 'SYSCALL_DEFINE2(clock_gettime, ' "$T/find_definition.txt" ||
	kt_fail "clock_gettime: $(head -3 "$T/find_definition.txt")"
def_secs=${took[find_definition]}
# the index finds what the search of the tree finds
explore find_definition '{"symbol": "freeque"}'
cmp -s "$T/find_definition.txt" "$T/indexed-freeque.txt" || kt_fail "freeque: index and search differ"
grep -q '^kernel/time/posix-timers.c:[0-9]*: definition of __x64_sys_clock_gettime:$' "$T/indexed-clock.txt" ||
	kt_fail "clock_gettime from the index: $(head -3 "$T/indexed-clock.txt")"
explore find_references '{"symbol": "freeque", "path": "ipc"}'
[ "$(grep -c '^ipc/msg.c:[0-9]*: ' "$T/find_references.txt")" -ge 2 ] ||
	kt_fail "references: $(cat "$T/find_references.txt")"

# the layout, member by member, as gdb reads the same DWARF
explore struct_layout '{"type": "struct msg_queue"}'
gdb -batch -ex 'ptype /o struct msg_queue' "$V" > "$T/gdb.txt" 2>&1 || kt_fail "gdb: $(tail -3 "$T/gdb.txt")"
python3 - "$T/struct_layout.txt" "$T/gdb.txt" <<'PY' || kt_fail "struct msg_queue: $(cat "$T/struct_layout.txt")"
import re, sys
ours, gdb = {}, {}
for l in open(sys.argv[1]):
    m = re.match(r"^\s*(\d+)(?::\d+)?\s+(\d+)b?\s+(.*);$", l)
    if m and not m.group(3).endswith("{"):
        name = re.sub(r"(\[\d+\])+$|:\d+$", "", m.group(3)).split()[-1].lstrip("*")
        ours[name] = (int(m.group(1)), int(m.group(2)))
# gdb expands nested structs: only the top level's members count
depth, opened = 0, []
for l in open(sys.argv[2]):
    m = re.match(r"^/\*\s+(\d+)(?::\s*\d+)?\s+\|\s+(\d+) \*/\s+(.*?)\s*$", l)
    end = re.match(r"^\s*\}\s*(\w*)(?:\[\d+\])*;\s*$", l)
    if "type = struct msg_queue {" in l:
        depth = 1
    elif m and m.group(3).endswith("{"):
        opened.append((depth, int(m.group(1)), int(m.group(2))))
        depth += 1
    elif end and opened:
        depth -= 1
        d, off, size = opened.pop()
        if d == 1 and end.group(1):
            gdb[end.group(1)] = (off, size)
    elif m and depth == 1 and m.group(3).endswith(";"):
        name = re.sub(r"(\[\d+\])+;$|\s*:\s*\d+;$|;$", "", m.group(3)).split()[-1].lstrip("*")
        gdb[name] = (int(m.group(1)), int(m.group(2)))
assert len(gdb) >= 8, gdb
for name, (off, size) in gdb.items():
    assert name in ours, (name, ours)
    assert ours[name] == (off, size), (name, ours[name], (off, size))
total = re.findall(r"total size \(bytes\):\s+(\d+)", open(sys.argv[2]).read())[-1]
assert "/* size %s */" % total in open(sys.argv[1]).read(), total
print("struct msg_queue: %d members agree with gdb" % len(gdb))
PY

addr=$(awk '$3 == "__x64_sys_msgctl" {print $1}' "$KT_TOP/build/src--kasan/System.map")
[ -n "$addr" ] || kt_fail "no __x64_sys_msgctl in System.map"
explore symbolize "{\"address\": \"$(printf '%x' $((0x$addr + 0x10)))\"}"
grep -q '^__x64_sys_msgctl+0x10/0x[0-9a-f]* ipc/msg.c:[0-9]*$' "$T/symbolize.txt" ||
	kt_fail "symbolize: $(cat "$T/symbolize.txt")"
explore disassemble '{"function": "__x64_sys_msgctl"}'
grep -q "^$addr <__x64_sys_msgctl>:$" "$T/disassemble.txt" || kt_fail "disassemble: $(head -3 "$T/disassemble.txt")"

kt_log "figures explore: index ${index_secs:-cached}s to make, find_definition ${indexed_secs}s with it," \
	"${def_secs}s by searching the tree, find_references ${took[find_references]}s," \
	"struct_layout ${took[struct_layout]}s, symbolize ${took[symbolize]}s," \
	"disassemble ${took[disassemble]}s"
echo PASS
