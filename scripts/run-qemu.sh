#!/usr/bin/env bash
# run-qemu.sh: boot the Quire kernel in QEMU and return the guest's status.
#
# Environment (defaults in brackets):
#   FIRMWARE    bios | uefi | direct                                   [bios]
#               bios:   $ISO as a CD-ROM on SeaBIOS (GRUB, multiboot2)
#               uefi:   $ISO as a CD-ROM on OVMF (GRUB, multiboot2)
#               direct: qemu -kernel $KERNEL (PVH ELF note), no firmware boot loader
#   TOPOLOGY    name of tests/qemu/topologies/NAME.args, or a path to an .args file [numa3]
#   CMDLINE     kernel command line                                    [empty]
#               For bios/uefi an empty CMDLINE boots $ISO as built, with the
#               command line baked into it; a non-empty one (or INITRD) makes a
#               per-run ISO under $BUILD/run-iso/ whose command line is $CMDLINE.
#   INITRD      initrd file: -initrd for direct, multiboot2 module "initrd" otherwise [unset]
#   QEMU_EXTRA  extra QEMU arguments, appended as is (split on whitespace) [empty]
#               Without -accel or -icount there, -accel tcg,thread=multi is added.
#   BUILD       build directory                                        [build]
#   KERNEL      kernel ELF                                             [$BUILD/quire.elf]
#   ISO         boot ISO                                               [$BUILD/quire.iso]
#   TIMEOUT     seconds (may have a fraction) before QEMU is killed; unset, empty or 0: no limit [unset]
#   GDB         1: gdb stub on tcp::1234, guest paused at start (-s -S) [0]
#   QEMU        QEMU binary                                            [qemu-system-x86_64]
#   QEMU_MONITOR  a path: QEMU's monitor on that unix socket (the test runner
#               injects machine checks through it); unset: no extra monitor [unset]
#   QEMU_GDBSTUB  a path: QEMU's gdbstub on that unix socket, the guest running
#               (the runner stops a CPU at a kernel instruction through it) [unset]
#
# The serial console is this terminal (stdin/stdout), muxed with the QEMU
# monitor as with -nographic: Ctrl-A x quits QEMU, Ctrl-A c switches to the
# monitor and back, Ctrl-A h lists the keys; Ctrl-C goes to the guest.
# Input from a pipe or a file (a script, not a person) is followed by two
# ^D (VEOF) when it ends, as a terminal user would type them: the first
# ends an unfinished line, the next reads as end of file, so a shell fed
# `printf 'ls\n' | scripts/run-qemu.sh` exits on its own. Input from a
# terminal or /dev/null is passed as it is.
# A SIGTERM, SIGHUP or SIGINT sent to this script is passed on to QEMU.
#
# Exit status:
#   The guest reports status s (0..255) in two ways (include/quire/power.h):
#   it writes "exit-status s" to I/O port 0xe9 (isa-debugcon, into a file
#   here), then writes s, or 127 when s >= 128, to port 0xf4
#   (isa-debug-exit), where QEMU exits with (v << 1) | 1. This script exits
#   with s:
#     0    guest: success
#     1    guest: tests failed
#     2    guest: kernel panic
#     (any other s from 0 to 255 is passed through as it is: init passes
#     its program's exit status, or 128 + the signal that killed it)
#     3    the guest ended without reporting a status: triple fault or reset
#          (-no-reboot turns a reset into a QEMU exit with status 0), or the
#          user quit QEMU
#     4    QEMU or this script failed (bad arguments, missing file, QEMU error)
#     124  TIMEOUT expired; QEMU was killed
#     129, 130, 143  this script got SIGHUP, SIGINT, SIGTERM (QEMU was stopped)
#   Guest statuses 3, 4, 124, 129, 130 and 143 cannot be told from the
#   script's own; the runner reads the log to tell them apart.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
topodir="$root/tests/qemu/topologies"

FIRMWARE=${FIRMWARE:-bios}
TOPOLOGY=${TOPOLOGY:-numa3}
CMDLINE=${CMDLINE:-}
INITRD=${INITRD:-}
QEMU_EXTRA=${QEMU_EXTRA:-}
BUILD=${BUILD:-build}
KERNEL=${KERNEL:-$BUILD/quire.elf}
ISO=${ISO:-$BUILD/quire.iso}
TIMEOUT=${TIMEOUT:-}
GDB=${GDB:-0}
QEMU=${QEMU:-qemu-system-x86_64}
QEMU_MONITOR=${QEMU_MONITOR:-}
monitor=none
[ -z "$QEMU_MONITOR" ] || monitor="unix:$QEMU_MONITOR,server,nowait"
QEMU_GDBSTUB=${QEMU_GDBSTUB:-}

OVMF_CODE=/usr/share/OVMF/OVMF_CODE_4M.fd
OVMF_VARS=/usr/share/OVMF/OVMF_VARS_4M.fd

die() {
    echo "run-qemu: $*" >&2
    exit 4
}

tmpfiles=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [ ${#tmpfiles[@]} -gt 0 ]; then
        rm -f "${tmpfiles[@]}"
    fi
}
trap cleanup EXIT
# Until QEMU runs, a signal just ends the script (and the EXIT trap cleans up).
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

list_topologies() {
    local f names=()
    for f in "$topodir"/*.args; do
        [ -e "$f" ] || continue
        f=${f##*/}
        names+=("${f%.args}")
    done
    echo "${names[*]:-(none)}"
}

# --- topology -----------------------------------------------------------------
if [[ $TOPOLOGY == */* || $TOPOLOGY == *.args ]]; then
    topofile=$TOPOLOGY
else
    topofile="$topodir/$TOPOLOGY.args"
fi
if [ ! -f "$topofile" ]; then
    die "no topology '$TOPOLOGY' (looked for $topofile); available: $(list_topologies) (or give a path to an .args file)"
fi
topo_name=${topofile##*/}
topo_name=${topo_name%.args}

# An .args file: '#' starts a comment, arguments are separated by any
# whitespace, including newlines. No quoting: an argument cannot contain spaces.
topo_args=()
while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%#*}
    read -r -a words <<<"$line" || true
    topo_args+=(${words[@]+"${words[@]}"})
done <"$topofile"

extra_args=()
if [ -n "$QEMU_EXTRA" ]; then
    read -r -a extra_args <<<"$QEMU_EXTRA" || true
fi
# One host thread per guest CPU (multi-threaded TCG), unless the caller chose
# its own accelerator or icount (which needs single-threaded TCG).
case " ${topo_args[*]} ${extra_args[*]} " in
*" -accel "* | *" -icount "* | *" -enable-kvm "*) ;;
*) extra_args+=(-accel tcg,thread=multi) ;;
esac

[[ $TIMEOUT =~ ^([0-9]+(\.[0-9]*)?)?$ ]] || die "TIMEOUT must be a number of seconds, not '$TIMEOUT'"
[[ ! $TIMEOUT =~ ^0*(\.0*)?$ ]] || TIMEOUT="" # 0 means no limit, as for timeout(1)
if [ -n "$INITRD" ] && [ ! -f "$INITRD" ]; then
    die "INITRD '$INITRD' not found"
fi

# --- firmware and boot medium -------------------------------------------------
boot_args=()
case $FIRMWARE in
direct)
    [ -f "$KERNEL" ] || die "kernel '$KERNEL' not found (build it first: make)"
    boot_args=(-kernel "$KERNEL" -append "$CMDLINE")
    [ -z "$INITRD" ] || boot_args+=(-initrd "$INITRD")
    what="$KERNEL (PVH)"
    ;;
bios | uefi)
    iso=$ISO
    if [ -n "$CMDLINE" ] || [ -n "$INITRD" ]; then
        # The ISO's grub.cfg holds the command line, so a different one
        # needs its own ISO. Unique names let runs go in parallel.
        [ -f "$KERNEL" ] || die "kernel '$KERNEL' not found (build it first: make)"
        mkdir -p "$BUILD/run-iso"
        iso=$(mktemp "$BUILD/run-iso/quire.XXXXXX.iso")
        tmpfiles+=("$iso")
        "$root/scripts/mkiso.sh" "$iso" "$KERNEL" "$CMDLINE" ${INITRD:+"$INITRD"} ||
            die "could not build the per-run ISO"
    fi
    [ -f "$iso" ] || die "ISO '$iso' not found (build it first: make iso)"
    boot_args=(-cdrom "$iso")
    what="$iso"
    if [ "$FIRMWARE" = bios ]; then
        # Straight to the CD: skips SeaBIOS trying the disk and floppy first.
        boot_args+=(-boot order=d)
    else
        if [ ! -f "$OVMF_CODE" ] || [ ! -f "$OVMF_VARS" ]; then
            die "OVMF firmware not found ($OVMF_CODE, $OVMF_VARS); install package ovmf"
        fi
        mkdir -p "$BUILD"
        vars=$(mktemp "$BUILD/ovmf-vars.XXXXXX.fd")
        tmpfiles+=("$vars")
        cp "$OVMF_VARS" "$vars"
        boot_args=(
            -drive "if=pflash,format=raw,readonly=on,file=$OVMF_CODE"
            -drive "if=pflash,format=raw,file=$vars"
            "${boot_args[@]}"
        )
    fi
    ;;
*)
    die "FIRMWARE must be bios, uefi or direct, not '$FIRMWARE'"
    ;;
esac

command -v "$QEMU" >/dev/null 2>&1 || die "$QEMU not found (install package qemu-system-x86; see scripts/deps.sh)"

# --- command line ---------------------------------------------------------------
statusfile=$(mktemp "${TMPDIR:-/tmp}/run-qemu-status.XXXXXX")
tmpfiles+=("$statusfile")
# shellcheck disable=SC2054 # the commas belong to QEMU's option syntax
cmd=(
    "$QEMU"
    "${topo_args[@]}"
    # Serial console on the terminal, muxed with the monitor (Ctrl-A c).
    # Not -nographic: that also turns on SeaBIOS's serial console output.
    -display none -serial mon:stdio
    -monitor "$monitor"
    -no-reboot
    -device isa-debug-exit,iobase=0xf4,iosize=0x04
    # The whole exit status (0..255) comes through here first.
    -chardev "file,id=quire-status,path=$statusfile"
    -device isa-debugcon,iobase=0xe9,chardev=quire-status
    "${boot_args[@]}"
)
[ "$GDB" != 1 ] || cmd+=(-s -S)
[ -z "$QEMU_GDBSTUB" ] || cmd+=(-gdb "unix:$QEMU_GDBSTUB,server,nowait")
cmd+=(${extra_args[@]+"${extra_args[@]}"})

echo "run-qemu: booting $what: firmware=$FIRMWARE topology=$topo_name cmdline=\"$CMDLINE\"${INITRD:+ initrd=$INITRD}${TIMEOUT:+ timeout=${TIMEOUT}s}" >&2
# Shown so that it can be pasted into a shell: only words that need it are quoted.
shown=""
for a in "${cmd[@]}"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then
        shown+=" $a"
    else
        printf -v q '%q' "$a"
        shown+=" $q"
    fi
done
echo "run-qemu:${shown}" >&2
if [ "$GDB" = 1 ]; then
    echo "run-qemu: guest paused; gdb stub on :1234 (gdb $KERNEL -ex 'target remote :1234')" >&2
fi

# --- run ----------------------------------------------------------------------
# QEMU's stderr is copied to a log as well: a QEMU error exits 1, which is
# also what a guest status 0 gives, and only the message tells them apart.
# tee ignores Ctrl-C so that QEMU's last words still get through.
errlog=$(mktemp "${TMPDIR:-/tmp}/run-qemu.XXXXXX.log")
tmpfiles+=("$errlog")

exec {errfd}> >(trap '' INT; exec tee "$errlog" >&2)
teepid=$!

# QEMU puts the terminal in raw mode and normally restores it; if it gets
# killed (SIGKILL after a timeout) it cannot, so keep a copy here.
tty_state=""
if [ -t 0 ]; then
    tty_state=$(stty -g 2>/dev/null) || tty_state=""
fi

# QEMU runs in the background so that a SIGTERM/SIGHUP/SIGINT sent to this
# script reaches it (bash runs traps only between commands, not while it
# waits for a foreground one). Without job control it stays in the
# terminal's process group, and the explicit redirection keeps its stdin
# (the terminal, or the input with its ^Ds) instead of /dev/null.
got_signal=""
# shellcheck disable=SC2317 # called by the traps below
forward() {
    got_signal=$1
    kill -s "$1" "$qpid" 2>/dev/null || true
}
serial_in=0
if [ ! -t 0 ] && { [ -p /dev/stdin ] || [ -f /dev/stdin ]; }; then
    exec {serial_in}< <(cat; printf '\004\004')
fi
start=$SECONDS
if [ -n "$TIMEOUT" ]; then
    # --foreground: QEMU stays in this process group, so the serial console
    # stays usable; -k 5: SIGKILL if it ignores the SIGTERM.
    timeout --foreground -k 5 "$TIMEOUT" "${cmd[@]}" 0<&"$serial_in" 2>&"$errfd" &
else
    "${cmd[@]}" 0<&"$serial_in" 2>&"$errfd" &
fi
qpid=$!
[ "$serial_in" = 0 ] || exec {serial_in}<&-
trap 'forward TERM' TERM
trap 'forward HUP' HUP
trap 'forward INT' INT
status=0
wait "$qpid" || status=$?
# A trap interrupts wait: wait again until QEMU has really gone.
while [ -n "$got_signal" ] && kill -0 "$qpid" 2>/dev/null; do
    wait "$qpid" || true
done
exec {errfd}>&-
wait "$teepid" 2>/dev/null || true # tee has written the whole log
if [ -n "$tty_state" ]; then
    stty "$tty_state" 2>/dev/null || true
fi

if [ -n "$got_signal" ]; then
    echo "run-qemu: stopped by SIG$got_signal" >&2
    case $got_signal in
    HUP) exit 129 ;;
    INT) exit 130 ;;
    *) exit 143 ;;
    esac
fi
elapsed=$((SECONDS - start))

# 124: timeout(1) sent SIGTERM; 137: it had to use SIGKILL (also what an
# out-of-memory kill gives, hence the check of the time spent).
if [ -n "$TIMEOUT" ] && { [ $status -eq 124 ] || { [ $status -eq 137 ] && [ $elapsed -ge "${TIMEOUT%%.*}" ]; }; }; then
    echo "run-qemu: guest timed out after $TIMEOUT s" >&2
    exit 124
fi

qemu_base=${QEMU##*/}
qemu_error() {
    # Error lines, not warnings ("qemu: could not load kernel" uses the short prefix).
    grep -E "^(qemu|$qemu_base):" "$errlog" | grep -qv -E "^[^:]+: warning:"
}

if [ $status -eq 0 ]; then
    echo "run-qemu: guest ended without reporting a status (triple fault or quit)" >&2
    exit 3
fi
if [ $status -eq 1 ] && qemu_error; then
    echo "run-qemu: qemu failed (status $status)" >&2
    exit 4
fi
if [ $((status & 1)) -eq 1 ] && [ $status -lt 256 ]; then
    guest=$((status >> 1))
    # 127 may stand for a status of 128 or more: the status port has it.
    full=$(sed -n 's/^exit-status \([0-9]\{1,3\}\)$/\1/p' "$statusfile" | tail -n 1)
    if [ "$guest" -eq 127 ] && [ -n "$full" ] && [ "$full" -ge 128 ] && [ "$full" -le 255 ]; then
        guest=$full
    fi
    exit "$guest"
fi
echo "run-qemu: qemu failed (status $status)" >&2
exit 4
