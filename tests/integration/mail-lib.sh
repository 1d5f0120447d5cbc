# Shared helpers of the mail integration tests (sourced).
set -eu
: "${top_builddir:=.}" "${top_srcdir:=.}"
MAILTOOL="$top_builddir/tests/helpers/mailtool"
OUTBOXTOOL="$top_builddir/tests/helpers/outboxtool"
T=$(mktemp -d "${TMPDIR:-/tmp}/kfix-mail-test.XXXXXX")
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# A python3 that has aiosmtpd (Debian: python3-aiosmtpd).
find_aiosmtpd_python() {
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import aiosmtpd' 2>/dev/null; then
			echo "$py"; return 0
		fi
	done
	return 1
}

# start_smtp DIR: starts the loopback server, sets SMTP_PORT.
start_smtp() {
	py=$(find_aiosmtpd_python) || skip "python3-aiosmtpd is not installed"
	mkdir -p "$1"
	"$py" "$top_srcdir/tests/integration/smtp-server.py" "$1" >"$1/log" 2>&1 &
	PIDS="$PIDS $!"
	for _ in $(seq 100); do [ -s "$1/port" ] && break; sleep 0.1; done
	[ -s "$1/port" ] || fail "SMTP server did not start: $(cat "$1/log")"
	SMTP_PORT=$(cat "$1/port")
}

# Extracts files of the Debian kernel source tarball into DIR (skip if absent).
KSRC_TAR=/usr/src/linux-source-6.1.tar.xz
extract_kernel_scripts() {
	[ -r "$KSRC_TAR" ] || skip "$KSRC_TAR is missing (Debian package linux-source-6.1)"
	mkdir -p "$1"
	tar -xJf "$KSRC_TAR" -C "$1" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/get_maintainer.pl \
		linux-source-6.1/scripts/spelling.txt linux-source-6.1/scripts/const_structs.checkpatch \
		linux-source-6.1/MAINTAINERS || skip "cannot extract the kernel scripts"
}
