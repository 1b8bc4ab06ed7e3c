#!/usr/bin/env bash
# deps.sh [--for build|user|iso|run|test|bench|lselftests]: check that the host tools are there.
#
#   build  gcc, make, ld (binutils)
#   user   build + musl-gcc (musl-tools) and python3: user/ programs, the initrd
#   iso    user + grub-mkrescue, GRUB's BIOS and UEFI modules, xorriso, mformat
#   run    iso + qemu-system-x86_64, OVMF firmware                  (the default)
#   test   run + python3, clang, ld.lld, gnuplot (the plot script's own test draws)
#   bench  run + gnuplot (gnuplot-nox): make bench's plots
#   lselftests  user + xz, glibc's static libraries, libnuma's and libcap's:
#          scripts/linux-selftests.sh (Linux's mm selftests, static, with gcc)
#   debian run + dpkg-deb, ldd, libnuma1 (installed), and Debian's
#          busybox-static and numactl packages downloaded (apt-get download,
#          not installed) into $DEB_CACHE (build/debian/debs): make run
#          USERLAND=debian (scripts/debian-userland.sh)
#
# Silent with exit 0 when all is there (only shell builtins run, so it is
# cheap enough for every make run/test). Otherwise, as root with apt-get, it
# installs the missing Debian packages and checks again; without root it
# prints the apt-get command to run and exits 1.
set -euo pipefail

usage() {
    echo "usage: $0 [--for build|user|iso|run|test|bench|lselftests]" >&2
    exit 2
}

want=run
while [ $# -gt 0 ]; do
    case $1 in
    --for) [ $# -ge 2 ] || usage; want=$2; shift 2 ;;
    --for=*) want=${1#--for=}; shift ;;
    -h | --help) usage ;;
    *) usage ;;
    esac
done

# Each check: "kind:thing:package". kind is cmd (a program in PATH),
# dir or file (a path that must exist).
checks=(
    "cmd:gcc:gcc"
    "cmd:make:make"
    "cmd:ld:binutils"
)
user_checks=(
    "cmd:musl-gcc:musl-tools"
    "cmd:python3:python3"
)
iso_checks=(
    "cmd:grub-mkrescue:grub-common"
    "dir:/usr/lib/grub/i386-pc:grub-pc-bin"
    "dir:/usr/lib/grub/x86_64-efi:grub-efi-amd64-bin"
    "cmd:xorriso:xorriso"
    "cmd:mformat:mtools"
)
run_checks=(
    "cmd:qemu-system-x86_64:qemu-system-x86"
    "file:/usr/share/OVMF/OVMF_CODE_4M.fd:ovmf"
    "file:/usr/share/OVMF/OVMF_VARS_4M.fd:ovmf"
)
test_checks=(
    "cmd:python3:python3"
    "cmd:clang:clang"
    "cmd:ld.lld:lld"
    "cmd:gnuplot:gnuplot-nox"
)
bench_checks=(
    "cmd:gnuplot:gnuplot-nox"
)
# Linux's mm selftests (scripts/linux-selftests.sh): the source package's
# tarball is .tar.xz; the tests link statically against glibc, and
# migration/ksm_tests against libnuma, mlock-random-test/memfd_secret
# against libcap.
lselftests_checks=(
    "cmd:xz:xz-utils"
    "cmd:dpkg-deb:dpkg"
    "file:/usr/lib/x86_64-linux-gnu/libc.a:libc6-dev"
    "file:/usr/lib/x86_64-linux-gnu/libnuma.a:libnuma-dev"
    "file:/usr/lib/x86_64-linux-gnu/libcap.a:libcap-dev"
)
# Debian packages fetched, not installed, for USERLAND=debian: "deb:PACKAGE"
# is there when $DEB_CACHE holds its .deb.
DEB_CACHE=${DEB_CACHE:-build/debian/debs}
debian_checks=(
    "cmd:dpkg-deb:dpkg"
    "cmd:ldd:libc-bin"
    "file:/usr/lib/x86_64-linux-gnu/libnuma.so.1:libnuma1"
)
debian_debs=(busybox-static numactl)
case $want in
build) ;;
user) checks+=("${user_checks[@]}") ;;
iso) checks+=("${user_checks[@]}" "${iso_checks[@]}") ;;
run) checks+=("${user_checks[@]}" "${iso_checks[@]}" "${run_checks[@]}") ;;
test) checks+=("${user_checks[@]}" "${iso_checks[@]}" "${run_checks[@]}" "${test_checks[@]}") ;;
bench) checks+=("${user_checks[@]}" "${iso_checks[@]}" "${run_checks[@]}" "${bench_checks[@]}") ;;
lselftests) checks+=("${user_checks[@]}" "${lselftests_checks[@]}") ;;
debian) checks+=("${user_checks[@]}" "${iso_checks[@]}" "${run_checks[@]}" "${debian_checks[@]}") ;;
*) usage ;;
esac

missing=()
packages=()
check() {
    local c kind thing pkg p seen
    missing=()
    packages=()
    for c in "${checks[@]}"; do
        kind=${c%%:*}
        pkg=${c##*:}
        thing=${c#*:}
        thing=${thing%:*}
        case $kind in
        cmd) command -v "$thing" >/dev/null 2>&1 && continue ;;
        dir) [ -d "$thing" ] && continue ;;
        file) [ -f "$thing" ] && continue ;;
        esac
        missing+=("$thing")
        seen=0
        for p in ${packages[@]+"${packages[@]}"}; do
            [ "$p" != "$pkg" ] || seen=1
        done
        [ $seen = 1 ] || packages+=("$pkg")
    done
}

# The .debs USERLAND=debian unpacks: downloaded once (no root needed).
fetch_debs() {
    local pkg
    [ "$want" = debian ] || return 0
    mkdir -p "$DEB_CACHE"
    for pkg in "${debian_debs[@]}"; do
        ls "$DEB_CACHE/${pkg}"_*.deb >/dev/null 2>&1 && continue
        echo "deps: downloading $pkg into $DEB_CACHE" >&2
        if ! (cd "$DEB_CACHE" && apt-get download -qq "$pkg"); then
            echo "deps: cannot download $pkg; try: apt-get update, then (cd $DEB_CACHE && apt-get download $pkg)" >&2
            exit 1
        fi
    done
}

check
if [ ${#missing[@]} -eq 0 ]; then
    fetch_debs
    exit 0
fi

if [ "$EUID" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing ${packages[*]} (missing: ${missing[*]})" >&2
    export DEBIAN_FRONTEND=noninteractive
    # A failed update may still leave usable (older) package lists.
    apt-get update -qq || echo "deps: apt-get update failed; trying the old package lists" >&2
    if ! apt-get install -y -qq --no-install-recommends "${packages[@]}"; then
        echo "deps: apt-get install failed; install by hand: sudo apt-get install ${packages[*]}" >&2
        exit 1
    fi
    # A program installed just now may be hidden by a stale PATH hash.
    hash -r
    check
    if [ ${#missing[@]} -eq 0 ]; then
        fetch_debs
        exit 0
    fi
    echo "deps: still missing ${missing[*]} after installing ${packages[*]}" >&2
    exit 1
fi

echo "deps: missing ${missing[*]}; install with: sudo apt-get install ${packages[*]}" >&2
exit 1
