#!/usr/bin/env bash
# make gdb: boot Quire paused with QEMU's gdb stub (localhost:1234) and
# attach gdb with the kernel's symbols, in one step. The guest's serial
# output goes to $BUILD/gdb-serial.log (tail -f it in another terminal).
# Extra arguments go to gdb, e.g. scripts/gdb.sh -batch -ex 'break start_kernel'.
# FIRMWARE, TOPOLOGY, CMDLINE and QEMU_EXTRA work as for make run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
KERNEL=${KERNEL:-$BUILD/quire.elf}
export BUILD KERNEL
log=$BUILD/gdb-serial.log

if ! command -v gdb >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "gdb.sh: installing gdb"
		apt-get install -y -qq gdb >/dev/null
	else
		echo "gdb.sh: gdb is missing; install with: sudo apt-get install gdb" >&2
		exit 1
	fi
fi

# The stub listens on port 1234 (QEMU -s); refuse to start a second one.
listening() { grep -q ':04D2 00000000:0000 0A' /proc/net/tcp 2>/dev/null; }
if listening; then
	echo "gdb.sh: something already listens on port 1234 (another make gdb?)" >&2
	exit 1
fi

GDB=1 scripts/run-qemu.sh > "$log" 2>&1 < /dev/null &
qemu_pid=$!
trap 'kill $qemu_pid 2>/dev/null || true; wait $qemu_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	listening && break
	kill -0 $qemu_pid 2>/dev/null || { cat "$log" >&2; exit 1; }
	sleep 0.1
done
echo "gdb.sh: guest paused at reset; serial output in $log"
gdb -q "$KERNEL" \
	-ex "set architecture i386:x86-64" \
	-ex "target remote localhost:1234" \
	"$@"
