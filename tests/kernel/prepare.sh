#!/bin/bash
# Prepares the kernel the kernel tests use: Debian's linux-source-6.1 with the
# scenario bugs applied, a tinyconfig+KASAN config, and a built O= directory.
#
# The result lives in a cache directory so that a second run (and CI after a
# development session) finds a warm build:
#   $KFIX_TEST_CACHE (default /var/cache/kfix-tests) when it exists or can be
#   created, else a temporary directory that the caller removes.
# Layout under CACHE/linux-6.1:
#   src/          the source tree (bugs applied), built with O=
#   build/src--kasan/   the O= directory; kfix names it <src>--<config>
#   kasan.config  the full config given to kfix
#   applied/      copies of the patches applied to src (to revert them later)
#   stamp         key of the tarball + fragment + patches that src/ matches
#
# A change of the bug patches or fragment is carried forward incrementally:
# the old patches are reverted and the new ones applied, so only the touched
# files rebuild.  If that fails the directory is wiped and rebuilt.
#
# Usage: prepare.sh [--no-build | --if-cold]   prints CACHE/linux-6.1 on the
# last line.  --if-cold builds only an O= directory that has never been
# built: for tests whose kfix builds the base itself (make's walk of a
# built tree alone takes a quarter of a minute here).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
scen="$here/scenarios"
tarball=${KFIX_LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
jobs=${KFIX_TEST_JOBS:-2}
build=1
case "${1:-}" in
--no-build) build=0 ;;
--if-cold) build=if-cold ;;
esac

log() { printf 'prepare: %s\n' "$*" >&2; }

[ -r "$tarball" ] || { log "no $tarball (install linux-source-6.1)"; exit 77; }

cache=${KFIX_TEST_CACHE:-/var/cache/kfix-tests}
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
	cache=${KFIX_TEST_TMP:?no writable cache and no KFIX_TEST_TMP}
	log "cache not writable, using $cache"
fi
top="$cache/linux-6.1"
mkdir -p "$top"

# One preparer at a time: CI and a developer may share the cache.
exec 9>"$top/.lock"
flock 9

bugs=$(ls "$scen"/*/bug.patch 2>/dev/null | sort || true)
tar_id=$(stat -c '%s %Y' "$tarball")
key=$( { echo "v1 $tar_id"; cat "$scen/kasan.fragment"; for p in $bugs; do echo "== $(basename "$(dirname "$p")")"; cat "$p"; done; } | sha256sum | cut -c1-32)

src="$top/src"
obj="$top/build/src--kasan"

wipe() {
	log "wiping $top"
	rm -rf "$src" "$top/build" "$top/applied" "$top/stamp" "$top/kasan.config"
}

# A killed kfix may leave patches applied in src: its journal (the
# folder .kfix-applied, one file per patch, applied in name order) names
# them.  Under kfix's lock on the source, so that a running build's
# patches are not taken for leftovers.
if [ -d "$src/.kfix-applied" ]; then
	exec 7>"$src/.kfix.lock"
	flock 7
	for p in $(ls "$src/.kfix-applied"/*.patch 2>/dev/null | sort -r); do
		log "reverting a patch left by an interrupted run"
		{ patch -s -p1 -R -d "$src" -i "$p" && rm -f "$p"; } || { wipe; break; }
	done
	[ ! -d "$src" ] || rmdir "$src/.kfix-applied" 2>/dev/null || true
	exec 7>&-
fi

if [ -f "$top/stamp" ] && [ "$(cat "$top/stamp")" = "$key" ]; then
	log "source up to date ($key)"
else
	if [ -d "$src" ]; then
		log "carrying the source forward to $key"
		rm -f "$top/stamp"
		for p in $(ls "$top/applied"/*.patch 2>/dev/null | sort -r); do
			patch -s -p1 -R -d "$src" -i "$p" || { wipe; break; }
			rm -f "$p"
		done
	fi
	if [ ! -d "$src" ]; then
		log "extracting $tarball"
		tmp="$top/src.tmp"
		rm -rf "$tmp" && mkdir -p "$tmp"
		tar -C "$tmp" -xf "$tarball" --strip-components=1
		mv "$tmp" "$src"
	fi
	mkdir -p "$top/applied"
	i=0
	for p in $bugs; do
		i=$((i + 1))
		name=$(basename "$(dirname "$p")")
		log "applying $name"
		patch -s -p1 -d "$src" -i "$p"
		cp "$p" "$top/applied/$(printf %02d "$i")-$name.patch"
	done
	# The config: tinyconfig plus the fragment, expanded by olddefconfig.
	cfgdir="$top/cfg.tmp"
	rm -rf "$cfgdir" && mkdir -p "$cfgdir"
	make -s -C "$src" O="$cfgdir" tinyconfig >/dev/null
	args=()
	while read -r what opt; do
		case "$what" in
		y) args+=(-e "$opt") ;;
		n) args+=(-d "$opt") ;;
		esac
	done < <(grep -v '^#' "$scen/kasan.fragment")
	"$src/scripts/config" --file "$cfgdir/.config" "${args[@]}"
	make -s -C "$src" O="$cfgdir" olddefconfig >/dev/null
	for opt in KASAN DEBUG_INFO DEBUG_KMEMLEAK KUNIT SYSCTL_KUNIT_TEST; do
		grep -q "^CONFIG_$opt=y" "$cfgdir/.config" || { log "$opt did not stick"; exit 1; }
	done
	if ! cmp -s "$cfgdir/.config" "$top/kasan.config"; then
		cp "$cfgdir/.config" "$top/kasan.config"
	fi
	rm -rf "$cfgdir"
	echo "$key" > "$top/stamp"
fi

if [ $build = if-cold ]; then
	build=1
	[ -e "$obj/vmlinux" ] && cmp -s "$top/kasan.config" "$obj/.config" && build=0
fi
if [ $build = 1 ]; then
	mkdir -p "$obj"
	# kfix's own locks on the slot and the source: never build the same
	# O= directory twice at once.
	exec 8>"$obj.lock" 7>"$src/.kfix.lock"
	flock 8
	flock 7
	cmp -s "$top/kasan.config" "$obj/.config" || cp "$top/kasan.config" "$obj/.config"
	log "building in $obj (make -j$jobs)"
	cold=0
	[ -e "$obj/vmlinux" ] || cold=1
	start=$(date +%s)
	make -C "$src" O="$obj" olddefconfig >"$obj/.prepare.log" 2>&1
	make -C "$src" O="$obj" -j"$jobs" bzImage >>"$obj/.prepare.log" 2>&1 \
		|| { tail -30 "$obj/.prepare.log" >&2; exit 1; }
	secs=$(( $(date +%s) - start ))
	log "build done in ${secs}s"
	# The bench reports the last cold build.
	[ $cold = 1 ] && echo "$secs" > "$top/full-build.seconds"
fi
echo "$top"
