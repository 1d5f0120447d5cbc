#!/bin/sh
# Installs every Debian 12 package kfix needs to build, test and run its
# real-kernel tests.  Run as root.  Safe to run again.
set -eu

BUILD="build-essential autoconf automake libtool pkg-config autoconf-archive
  libgit2-dev libcurl4-openssl-dev libmicrohttpd-dev libjansson-dev
  libssh2-1-dev libsystemd-dev libsqlite3-dev libgmime-3.0-dev libpcre2-dev
  libdw-dev libelf-dev libssl-dev bubblewrap libopendkim-dev universal-ctags
  libiberty-dev libpq-dev"
TEST="libcmocka-dev clang libclang-rt-14-dev sqlite3 git curl jq
  openssh-server openssh-client python3 python3-aiosmtpd public-inbox
  systemd procps psmisc iproute2 wrk perl gdb strace man-db groff-base
  chromium b4 postgresql-15"
KERNEL="linux-source-6.1 bc bison flex libssl-dev cpio xz-utils
  qemu-system-x86 busybox-static dropbear-bin ccache"

case "${1:-all}" in
build) PKGS="$BUILD" ;;
all) PKGS="$BUILD $TEST $KERNEL" ;;
*) echo "usage: $0 [build|all]" >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (apt-get)" >&2
	exit 1
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# the browser tests' driver is Node.js's playwright-core (Debian's nodejs
# and npm where the machine has no Node.js of its own)
if [ "${1:-all}" = all ] && ! command -v npm >/dev/null; then
	missing="$missing nodejs npm"
fi

if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi

# playwright-core at the version tests/browser/package-lock.json pins; it
# drives Debian's chromium and downloads no browser of its own
if [ "${1:-all}" = all ]; then
	browser="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
	if [ ! -d "$browser/node_modules/playwright-core" ]; then
		npm ci --prefix "$browser" --no-audit --no-fund --loglevel=error
	fi
fi
