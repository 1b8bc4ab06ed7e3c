#!/usr/bin/env python3
"""Measure Quire's boot times under QEMU, for docs/boot.md.

For each firmware path, boot the kernel N times with an empty command line
and the initrd (the ISO carries it; a direct boot gets build/initrd.cpio):
init starts the shell, which is sent "exit" once the kernel's banner is
out (OVMF would swallow earlier input). Reports, in host wall-clock seconds
from starting QEMU:
  first line  - the kernel's banner ("Quire ... booting") appears on serial
  power off   - QEMU exits after the shell ended and init powered off
Usage: scripts/boot-times.py [--runs N] [--topology numa3] [bios uefi direct]
Run `make iso` first.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

BANNER = b'booting'


def boot_once(firmware, topology):
    env = dict(os.environ, FIRMWARE=firmware, TOPOLOGY=topology, CMDLINE='', TIMEOUT='120',
               INITRD='build/initrd.cpio' if firmware == 'direct' else '')
    start = time.monotonic()
    proc = subprocess.Popen(['bash', 'scripts/run-qemu.sh'], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.PIPE, env=env)
    first = None
    for line in proc.stdout:
        if first is None and b'Quire' in line and BANNER in line:
            first = time.monotonic() - start
            proc.stdin.write(b'exit\n')
            proc.stdin.close()
    status = proc.wait()
    end = time.monotonic() - start
    if status != 0 or first is None:
        sys.exit(f'boot-times: {firmware} boot failed (status {status})')
    return first, end


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--topology', default='numa3')
    ap.add_argument('firmware', nargs='*', default=['direct', 'bios', 'uefi'])
    args = ap.parse_args()
    print(f'{"firmware":<8} {"first line (s)":>16} {"power off (s)":>16}   '
          f'(median of {args.runs}, min-max; topology {args.topology})')
    for fw in args.firmware:
        runs = [boot_once(fw, args.topology) for _ in range(args.runs)]
        firsts, ends = [r[0] for r in runs], [r[1] for r in runs]
        print(f'{fw:<8} {statistics.median(firsts):6.2f} ({min(firsts):.2f}-{max(firsts):.2f})'
              f' {statistics.median(ends):6.2f} ({min(ends):.2f}-{max(ends):.2f})')


if __name__ == '__main__':
    main()
