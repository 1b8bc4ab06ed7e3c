#!/usr/bin/env bash
# linux-selftests.sh build|quire|compare|list: Linux 6.12's mm selftests
# (tools/testing/selftests/mm), built at test time and run on Quire, and on
# Linux itself for comparison (docs/linux-selftests.md).
#
#   build    fetch Debian's linux-source-6.12 with `apt-get download` into
#            $BUILD/lselftests/cache (kept: later runs reuse it), unpack from
#            its tarball only what the tests need, install Linux's uapi
#            headers (`make headers`), and build each test of the list below
#            as a static x86-64 binary with the host's gcc and glibc, as the
#            selftests' own Makefile does (vm_util.c, thp_settings.c,
#            uffd-common.c, -lnuma, -lcap). Output:
#              $BUILD/lselftests/root/lselftests/NAME   the binaries
#              $BUILD/lselftests/initrd.cpio            Quire's initrd ($BUILD/user)
#                                                       with them on top
#            The initrd is removed first, so a failed build leaves none, and
#            the plan job that boots it fails.
#   quire    build, then boot Quire (direct, numa3) with every case of the
#            list under user/tests/kselftest_run.c; the serial log (KTAP) on
#            stdout and in $BUILD/linux-selftests/quire.log; the exit status
#            is scripts/run-qemu.sh's
#   linux    the same on Linux 6.12 (Debian's linux-image-6.12-cloud-amd64,
#            fetched the same way, booted with -kernel on the same numa3
#            machine, kselftest_run as its /init): linux.log
#   table    the side-by-side table of the two logs: printed, and written to
#            $BUILD/linux-selftests/compare.md
#   compare  quire, linux, then table (`make linux-selftests`)
#   list     print the list of cases (PROG[,ARG...], kselftest_run's form)
#   boot-linux LOG TIMEOUT INITRD ARGS [DIR...]
#            for other scripts (scripts/difftest.sh): boot Linux 6.12 as
#            above, with INITRD made of $BUILD/user and the DIRs, and
#            kselftest_run as /init with -i and ARGS; the serial log on
#            stdout and in LOG. Builds nothing: $BUILD/user must be there.
#
# Environment: BUILD [build], LSELFTESTS_TIMEOUT (seconds per test) [300],
# LSELFTESTS="case case ..." (another list of cases, e.g. "cow mremap_test").
# Linux's sources are GPL: nothing of them is committed to Quire; they are
# fetched and built here, at test time.
#
# Copyright (c) the Quire authors. MIT licence (LICENSE).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
LSELFTESTS_TIMEOUT=${LSELFTESTS_TIMEOUT:-300}

top=$BUILD/lselftests
cache=$top/cache
src=$top/linux-6.12
bin=$top/root/lselftests
objs=$top/obj
logs=$top/logs
initrd=$top/initrd.cpio
source_pkg=linux-source-6.12
image_meta=linux-image-6.12-cloud-amd64
jobs=$(nproc 2>/dev/null || echo 2)

# The cases (PROG[,ARG...] a line, maybe "timeout=S" after it; '#'
# comments): every one; those that pass on Quire today are in
# tests/lselftests/quire*.txt (write_lists, the plan jobs).
all_list=$root/tests/lselftests/all.txt
read_cases() {
    sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' "$1" | grep -v '^$' || true
}
if [ -n "${LSELFTESTS:-}" ]; then
    read -r -a cases <<<"$LSELFTESTS"
else
    mapfile -t cases < <(read_cases "$all_list")
fi

say() { echo "linux-selftests: [${SECONDS} s] $*" >&2; }
die() {
    say "$*"
    exit 1
}

# The binaries the cases need, each once.
programs() {
    local c
    for c in "${cases[@]}"; do
        c=${c%%[[:space:]]*}
        echo "${c%%,*}"
    done | sort -u
}

# The cases without their options: PROG[,ARG...] only.
specs() {
    local c
    for c in "$@"; do
        echo "${c%%[[:space:]]*}"
    done
}

# apt-get download PACKAGE into the cache, unless a .deb of it is there.
fetch() {
    local pkg=$1 deb log
    mkdir -p "$cache"
    deb=$(find "$cache" -maxdepth 1 -name "${pkg}_*.deb" | sort | tail -n 1)
    if [ -z "$deb" ]; then
        say "fetching $pkg (apt-get download) into $cache"
        # As root, apt's sandbox user cannot write here; it warns and goes on.
        if ! log=$(cd "$cache" && apt-get download "$pkg" 2>&1); then
            echo "$log" >&2
            die "could not download $pkg: run 'apt-get update' and retry, or fetch it by hand: (cd $cache && apt-get download $pkg)"
        fi
        deb=$(find "$cache" -maxdepth 1 -name "${pkg}_*.deb" | sort | tail -n 1)
        [ -n "$deb" ] || die "apt-get download $pkg left no ${pkg}_*.deb in $cache"
    fi
    dpkg-deb --info "$deb" >/dev/null 2>&1 || die "$deb is not a whole .deb: remove it and retry"
    echo "$deb"
}

# Only these parts of the tree: `make headers` (the top Makefile, scripts/,
# the uapi directories, x86's syscall tables and the relocs tool it builds
# on the way), the selftests with kselftest*.h, and the headers the mm tests
# take from the tree (mm/gup_test.h, lib/test_hmm_uapi.h, include/vdso/).
extract_paths=(
    Makefile scripts include/uapi include/vdso
    'arch/x86/Makefile*' arch/x86/include/uapi arch/x86/entry/syscalls arch/x86/tools
    tools/include tools/testing/selftests/mm 'tools/testing/selftests/kselftest*'
    tools/testing/selftests/lib.mk mm/gup_test.h lib/test_hmm_uapi.h
)

unpack_source() {
    local deb=$1 stamp=$src/.unpacked-from p pats=()
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${deb##*/}" ]; then
        return
    fi
    say "unpacking the mm selftests and what make headers needs from ${deb##*/}"
    rm -rf "$src" "$src.tmp"
    mkdir -p "$src.tmp"
    for p in "${extract_paths[@]}"; do
        pats+=("linux-source-6.12/$p")
    done
    # The .deb holds usr/src/linux-source-6.12.tar.xz: the whole tree.
    dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-6.12.tar.xz |
        xz -dc | tar -x -C "$src.tmp" --wildcards "${pats[@]}" ||
        die "could not unpack ${pats[*]#linux-source-6.12/} from ${deb##*/}"
    mv "$src.tmp/linux-source-6.12" "$src"
    rmdir "$src.tmp"
    echo "${deb##*/}" >"$stamp"
}

install_headers() {
    [ -f "$src/.headers" ] && return
    say "make headers (Linux's uapi headers into $src/usr/include)"
    make -C "$src" -s -j"$jobs" headers >"$logs/headers.log" 2>&1 ||
        { tail -n 20 "$logs/headers.log" >&2; die "make headers failed (log: $logs/headers.log)"; }
    touch "$src/.headers"
}

# As tools/testing/selftests/mm/Makefile and lib.mk: -Wall -O2, the tree
# and its installed uapi headers, -U_FORTIFY_SOURCE, -no-pie, _GNU_SOURCE;
# -static here so the same binary runs on Quire and on Linux's initramfs.
# No liburing: Quire has no io_uring, and the tests then leave those cases
# out on both kernels.
cflags() {
    local t=$src
    echo "-Wall -O2 -I $t -isystem $t/usr/include -isystem $t/tools/include/uapi" \
        "-U_FORTIFY_SOURCE -no-pie -D_GNU_SOURCE= -static"
}

# One test's compile and link command (run in the mm directory).
build_command() {
    local name=$1 source=$1 extra='' libs='-lrt -lpthread -lm' flags
    flags=$(cflags)
    case $name in
    *_64) source=${name%_64}; flags+=" -m64 -mxsave"; libs+=" -ldl" ;;
    esac
    case $name in
    uffd-*) extra=$objs/uffd-common.o ;;
    migration | ksm_tests) libs+=" -lnuma" ;;
    mlock-random-test | memfd_secret) libs+=" -lcap" ;;
    # 6.12's khugepaged.c uses KSFT_SKIP without including kselftest.h.
    khugepaged) flags+=" -include ../kselftest.h" ;;
    esac
    echo "gcc $flags $source.c $objs/vm_util.o $objs/thp_settings.o $extra $libs -o $bin/$name"
}

compile_tests() {
    local mm=$src/tools/testing/selftests/mm flags name o cmds=() pending=()
    mkdir -p "$bin" "$objs"
    flags=$(cflags)
    # Rebuild everything when the flags (or the tree) change.
    if [ "$(cat "$objs/.flags" 2>/dev/null)" != "$flags $(cat "$src/.unpacked-from")" ]; then
        rm -f "$objs"/*.o "$bin"/*
        echo "$flags $(cat "$src/.unpacked-from")" >"$objs/.flags"
    fi
    echo '// No liburing support found' >"$mm/local_config.h"
    for o in vm_util thp_settings uffd-common; do
        [ -f "$objs/$o.o" ] && continue
        (cd "$mm" && gcc $flags -c "$o.c" -o "$objs/$o.o") >"$logs/$o.log" 2>&1 ||
            { cat "$logs/$o.log" >&2; die "could not build $o.o (log: $logs/$o.log)"; }
    done
    for name in $(programs); do
        [ -f "$mm/${name%_64}.c" ] || die "no such selftest: $name (tools/testing/selftests/mm/${name%_64}.c)"
        [ -x "$bin/$name" ] && continue
        pending+=("$name")
        cmds+=("cd '$mm' && $(build_command "$name") >'$logs/$name.log' 2>&1 || { echo '$name'; exit 1; }")
    done
    [ ${#pending[@]} -gt 0 ] || return 0
    say "building ${#pending[@]} selftests (-static, gcc $(gcc -dumpversion), $jobs at a time)"
    local failed
    failed=$(printf '%s\0' "${cmds[@]}" | xargs -0 -n 1 -P "$jobs" sh -c 2>/dev/null || true)
    if [ -n "$failed" ]; then
        for name in $failed; do
            say "$name did not build:"
            tail -n 15 "$logs/$name.log" >&2
        done
        die "build failed: $(echo $failed) (logs: $logs/)"
    fi
}

# compaction_test, hugetlb-soft-offline, thuge-gen, map_fixed_noreplace
# and mremap_dontunmap run shell pipelines (popen, system): `cat ... |
# grep`. Both kernels get the same tools: Quire's /bin/sh and /bin/cat
# (user/bin, in both initrds), and grep from Debian's busybox-static,
# fetched like the sources, as /bin/grep; and an /etc/passwd.
install_tools() {
    local deb dir=$top/busybox
    deb=$(fetch busybox-static)
    if [ ! -f "$dir/.from" ] || [ "$(cat "$dir/.from")" != "${deb##*/}" ]; then
        rm -rf "$dir"
        mkdir -p "$dir"
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" ./bin/busybox ||
            die "no bin/busybox in ${deb##*/}"
        echo "${deb##*/}" >"$dir/.from"
    fi
    mkdir -p "$top/root/bin" "$top/root/etc"
    cp "$dir/bin/busybox" "$top/root/bin/grep"
    # protection_keys opens /etc/passwd for a file descriptor to test with.
    echo "root:x:0:0:root:/:/bin/sh" >"$top/root/etc/passwd"
}

# The lists kselftest_run reads (-f): all.list, the cases of this run, and
# one list per tests/lselftests/quire*.txt (quire.list, quire-mthp.list),
# the cases a plan job expects to pass on Quire (each one must be in
# all.txt, so that it is built; a path, /tests/..., is one of Quire's own
# programs, which the initrd has too).
write_lists() {
    local c all txt list
    printf '%s\n' "${cases[@]}" >"$bin/all.list"
    mapfile -t all < <(read_cases "$all_list")
    for txt in "$root"/tests/lselftests/quire*.txt; do
        list=$bin/$(basename "$txt" .txt).list
        read_cases "$txt" >"$list"
        while read -r c; do
            c=${c%%[[:space:]]*}
            [ "${c#/}" = "$c" ] || continue # /tests/...: Quire's own program, in the initrd
            # Not grep -q: it stops reading at the match, and the SIGPIPE of
            # specs then fails the pipeline (pipefail) now and then.
            specs "${all[@]}" | grep -xF -- "$c" >/dev/null ||
                die "$txt: '$c' is not a case of $all_list"
            [ -n "${LSELFTESTS:-}" ] || continue
            specs "${cases[@]}" | grep -xF -- "$c" >/dev/null || die "LSELFTESTS leaves out '$c' of $txt"
        done <"$list"
    done
}

build() {
    local t0=$SECONDS deb
    rm -f "$initrd"
    "$root/scripts/deps.sh" --for lselftests
    mkdir -p "$logs"
    deb=$(fetch "$source_pkg")
    unpack_source "$deb"
    install_headers
    compile_tests
    install_tools
    write_lists
    make -C "$root" --no-print-directory -s BUILD="$BUILD" user >&2
    "$root/scripts/mkinitrd.sh" "$initrd" "$BUILD/user" "$top/root"
    say "built $(programs | wc -l) selftests into $bin and $initrd in $((SECONDS - t0)) s"
}

# kselftest_run's arguments for a run of all.list.
runner_args() {
    echo "-t $LSELFTESTS_TIMEOUT -H 128 -f /lselftests/all.list"
}

# Boots one kernel with the list; the serial log goes to $1.
boot_quire() {
    local log=$1 n=${#cases[@]}
    "$root/scripts/deps.sh" --for run
    make -C "$root" --no-print-directory -s -j"$jobs" BUILD="$BUILD" kernel >&2
    # hmm_dmirror_coherent devmem=32: hmm-tests' four devices and their memory.
    FIRMWARE=direct TOPOLOGY=numa3 KERNEL="$BUILD/quire.elf" INITRD="$initrd" \
        CMDLINE="hmm_dmirror_coherent devmem=32 init=\"/bin/init /tests/kselftest_run $(runner_args)\"" \
        TIMEOUT=$((n * LSELFTESTS_TIMEOUT + 120)) "$root/scripts/run-qemu.sh" </dev/null | tee "$log"
}

# Fetches Linux 6.12's image (once) and prints the path of its vmlinuz.
linux_kernel() {
    local deb kernel pkg dir=$top/linux-image
    pkg=$(apt-cache depends "$image_meta" 2>/dev/null | awk '/Depends: linux-image-6\.12/ { print $2; exit }')
    [ -n "$pkg" ] || die "cannot tell which package $image_meta stands for (apt-cache depends $image_meta; apt-get update?)"
    deb=$(fetch "$pkg")
    if [ ! -f "$dir/.from" ] || [ "$(cat "$dir/.from")" != "${deb##*/}" ]; then
        rm -rf "$dir"
        mkdir -p "$dir"
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --wildcards './boot/vmlinuz-*'
        echo "${deb##*/}" >"$dir/.from"
    fi
    kernel=$(find "$dir/boot" -name 'vmlinuz-*' | head -n 1)
    [ -n "$kernel" ] || die "no boot/vmlinuz-* in ${deb##*/}"
    echo "$kernel"
}

# linux_boot LOG TIMEOUT INITRD ARGS [DIR...]: Linux 6.12 on numa3, its
# initramfs INITRD made of what Quire's has ($BUILD/user: Quire's programs
# and tests) and the DIRs, with the runner as /init (it mounts /proc, /sys,
# debugfs, /dev and /tmp itself, then powers off) and ARGS after -i.
linux_boot() {
    local log=$1 timeout=$2 initrd=$3 args=$4 kernel
    shift 4
    "$root/scripts/deps.sh" --for run
    [ -x "$BUILD/user/tests/kselftest_run" ] || die "no $BUILD/user/tests/kselftest_run (make user)"
    kernel=$(linux_kernel)
    mkdir -p "$top/linux-init"
    cp "$BUILD/user/tests/kselftest_run" "$top/linux-init/init"
    "$root/scripts/mkinitrd.sh" "$initrd" "$BUILD/user" "$@" "$top/linux-init"
    say "booting ${kernel##*/} on numa3"
    # run-qemu.sh reports Linux's power-off as "no status" (3): the KTAP is
    # what counts here. Everything after -- goes to /init. loglevel=3: the
    # console shows errors only (uffd-unit-tests' poison case has Linux
    # print a line per poisoned page, minutes of serial output under TCG).
    FIRMWARE=direct TOPOLOGY=numa3 KERNEL="$kernel" INITRD="$initrd" \
        CMDLINE="console=ttyS0 loglevel=3 panic=-1 -- -i $args" \
        TIMEOUT="$timeout" "$root/scripts/run-qemu.sh" </dev/null | tee "$log" || true
}

# Every case of the list, with the tests and grep ($top/root) in the initramfs.
boot_linux() {
    linux_boot "$1" $((${#cases[@]} * LSELFTESTS_TIMEOUT + 300)) "$top/linux-initrd.cpio" \
        "$(runner_args)" "$top/root"
}

table() {
    local out=$BUILD/linux-selftests
    python3 "$root/scripts/lselftests-compare.py" --quire "$out/quire.log" --linux "$out/linux.log" \
        --linux-kernel "$(cat "$top/linux-image/.from" 2>/dev/null)" \
        --source "$(cat "$src/.unpacked-from" 2>/dev/null)" \
        --unistd "$src/usr/include/asm/unistd_64.h" \
        --out "$out/compare.md" $(specs "${cases[@]}")
}

# Everything runs from here, so that bash has read the whole file before
# it starts (an edit during a long run cannot change what runs).
main() {
    local out=$BUILD/linux-selftests rc
    case ${1:-} in
    build) build ;;
    quire)
        build
        mkdir -p "$out"
        say "Quire: every case of the list (log: $out/quire.log)"
        boot_quire "$out/quire.log"
        ;;
    linux)
        build
        mkdir -p "$out"
        say "Linux 6.12: every case of the list (log: $out/linux.log)"
        boot_linux "$out/linux.log"
        ;;
    table) table ;;
    compare)
        build
        mkdir -p "$out"
        "$root/scripts/deps.sh" --for run
        say "Quire: every case of the list (log: $out/quire.log)"
        rc=0
        boot_quire "$out/quire.log" >/dev/null || rc=$?
        say "Quire's boot ended with status $rc"
        say "Linux 6.12: every case of the list (log: $out/linux.log)"
        boot_linux "$out/linux.log" >/dev/null
        table
        ;;
    list) printf '%s\n' "${cases[@]}" ;;
    boot-linux)
        [ $# -ge 5 ] || die "usage: $0 boot-linux LOG TIMEOUT INITRD ARGS [DIR...]"
        shift
        linux_boot "$@"
        ;;
    *)
        echo "usage: $0 build|quire|linux|compare|table|list|boot-linux" >&2
        exit 2
        ;;
    esac
}

main "$@"
exit $?
