#!/bin/bash
# kfixctl reproduce with a syz reproducer: picked by the .syz extension or
# --repro-syz; refused clearly, before any build, without a syzkaller build
# or with repro options syz-execprog would not take; otherwise it goes on
# to the build and the VM (here make is a stand-in and the VM host a closed
# port, so the run ends as infra-error).  Running a real syz-execprog in a
# guest is tests/kernel/syz.sh.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/bin" "$T/src" "$T/syz/bin/linux_amd64"
ln -s "$top_srcdir/tests/integration/fake-make" "$T/bin/make"
export PATH="$T/bin:$PATH"
printf '# test\n' > "$T/test.config"
for o in BLK_DEV_INITRD SERIAL_8250_CONSOLE NET INET VIRTIO_NET VIRTIO_PCI PRINTK; do
	echo "CONFIG_$o=y" >> "$T/test.config"
done
port=$(free_port)
write_config
vm() { # name, extra lines
	printf '[vm "%s"]\n\tssh-host = 127.0.0.1\n\tssh-port = %s\n\tssh-user = nobody\n\timage = %s\n\tworkdir = %s\n' \
		"$1" "$port" "$T/none.cpio.gz" "$T/vmwork" >> "$T/kfix.conf"
	shift
	[ $# = 0 ] || printf '\t%s\n' "$@" >> "$T/kfix.conf"
}
cat >> "$T/kfix.conf" <<CONF
	cache-dir = $T/cache
[build "b"]
	dir = $T/builds
	jobs = 1
	# make is a stand-in script from this test's folder
	sandbox = none
CONF
vm nosyz
vm empty "syzkaller = $T/empty"
vm syz "syzkaller = $T/syz"
mkdir -p "$T/empty"
printf '#!/bin/sh\nexit 0\n' > "$T/syz/bin/linux_amd64/syz-execprog"
cp "$T/syz/bin/linux_amd64/syz-execprog" "$T/syz/bin/linux_amd64/syz-executor"

printf '# {"threaded":true,"repeat":true,"procs":1,"sandbox":"none"}\nr0 = msgget$private(0x0, 0x600)\nmsgctl$IPC_RMID(r0, 0x0)\n' > "$T/ok.syz"
printf '# {"sandbox":"none; reboot"}\nr0 = msgget$private(0x0, 0x600)\n' > "$T/bad.syz"
cp "$T/ok.syz" "$T/program.txt"
args=(--src "$T/src" --config "$T/test.config" --runs 1 --attempts 1)

kind() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("error", {}).get("kind", d.get("verdict")))' "$T/out.json"; }
expect() { # label, kind, kfixctl args...
	local label=$1 want=$2 got
	shift 2
	ctl --json reproduce "$@" >"$T/out.json" 2>"$T/err.txt" && fail "$label: succeeded"
	got=$(kind) || { cat "$T/out.json" "$T/err.txt"; fail "$label: no JSON"; }
	[ "$got" = "$want" ] || { cat "$T/out.json"; fail "$label: '$got', expected '$want'"; }
	ok "$label"
}

expect "no syzkaller configured" no-syzkaller "${args[@]}" --repro "$T/ok.syz" --vm nosyz
grep -q 'syzkaller = DIR' "$T/out.json" || fail "the message does not say what to configure"
[ ! -d "$T/builds" ] || fail "a build ran before the input was checked"
expect "syzkaller without its binaries" no-syzkaller "${args[@]}" --repro "$T/ok.syz" --vm empty
grep -q 'syz-execprog is missing' "$T/out.json" || fail "the message does not name the missing tool"
expect "options syz-execprog would not take" bad-repro-opts "${args[@]}" --repro "$T/bad.syz" --vm syz
expect "bad --repro-opts" bad-repro-opts "${args[@]}" --repro "$T/ok.syz" --vm syz \
	--repro-opts <(echo '{"procs": "many"}')
[ ! -d "$T/builds" ] || fail "a build ran before the options were checked"

# Good input goes on to the build and the VM: picked by the extension, or
# by --repro-syz whatever the file's name, with options from a file.
expect "a .syz reproducer runs" infra-error "${args[@]}" --repro "$T/ok.syz" --vm syz
grep -q 'Connection refused' "$T/out.json" || { cat "$T/out.json"; fail "did not reach the VM host"; }
expect "--repro-syz" infra-error "${args[@]}" --repro-syz "$T/program.txt" --vm syz \
	--repro-opts <(echo '{"threaded":true,"repeat":true,"procs":2,"sandbox":"setuid"}')
# Without --repro-syz the same file is a binary: no syzkaller needed.
expect "a binary reproducer needs no syzkaller" infra-error "${args[@]}" --repro "$T/program.txt" --vm nosyz
