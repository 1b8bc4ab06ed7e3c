#!/usr/bin/env bash
# difftest.sh record|quire [NAME...]: the differential programs of
# tests/diff (docs/difftest.md), each run on Quire and on Linux 6.12, whose
# output must be the same.
#
#   record  build the programs (make user), boot Linux 6.12 on the numa3
#           machine with every one of them under kselftest_run -o as /init
#           (scripts/linux-selftests.sh boot-linux: the image is fetched
#           once), take each program's output from the serial log (whole:
#           its line count and hash must match), and write it to
#           tests/diff/expected/NAME.out; says which changed, which are
#           new, and removes the outputs of programs that are gone. Exits 1,
#           writing nothing, when a program's output did not come whole or
#           it timed out. `make difftest-record`.
#   quire   boot Quire (direct, numa3) with the programs under kselftest_run
#           -d, differs.txt's too: each one's diff against its recorded
#           output, in KTAP (the plan job difftest-numa3 runs all but
#           differs.txt's, through the runner: `make difftest`).
#
# NAME...: only these programs (record: only their outputs are written).
# Environment: BUILD [build], DIFFTEST_TIMEOUT (seconds per program) [60].
# Logs: $BUILD/difftest/linux.log, $BUILD/difftest/quire.log.
#
# Copyright (c) the Quire authors. MIT licence (LICENSE).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
DIFFTEST_TIMEOUT=${DIFFTEST_TIMEOUT:-60}
out=$BUILD/difftest
expected=$root/tests/diff/expected

say() { echo "difftest: [${SECONDS} s] $*" >&2; }
die() {
    say "$*"
    exit 1
}

# The list kselftest_run reads: the named programs, or every one. Its
# names are relative to /diff, where the programs are in the initrd.
write_list() {
    local name
    mkdir -p "$out/root/diff"
    if [ $# -eq 0 ]; then
        cp "$BUILD/user/diff/all.list" "$out/root/diff/run.list"
        return
    fi
    : >"$out/root/diff/run.list"
    for name in "$@"; do
        [ -x "$BUILD/user/diff/$name" ] || die "no program $name in tests/diff"
        echo "$name" >>"$out/root/diff/run.list"
    done
}

record() {
    local n
    make -C "$root" --no-print-directory -s BUILD="$BUILD" user >&2
    write_list "$@"
    n=$(wc -l <"$out/root/diff/run.list")
    say "Linux 6.12: $n programs (log: $out/linux.log)"
    "$root/scripts/linux-selftests.sh" boot-linux "$out/linux.log" \
        $((n * DIFFTEST_TIMEOUT + 300)) "$out/linux-initrd.cpio" \
        "-N difftest -o -t $DIFFTEST_TIMEOUT -f /diff/run.list" "$out/root" >/dev/null
    python3 - "$out/linux.log" "$out/root/diff/run.list" "$expected" $# <<'PY'
import os, re, sys

log, listed, expected, some = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] != '0'
names = [l.strip() for l in open(listed) if l.strip()]
text = open(log, 'rb').read().decode('utf-8', 'replace')
lines = [l[:-1] if l.endswith('\r') else l for l in text.split('\n')]

def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h

# kselftest_run -o prints, for each program:
#     # ---- NAME
#     #| LINE                      (its whole output, a line each)
#     # NAME: N lines, fnv1a 0xHASH
#     ok K NAME                    (not ok: it timed out)
# Linux's own messages may come between the lines (the hash tells when one
# came inside a line).
got, problems, current = {}, [], None
summary_re = re.compile(r'    # (.+): (\d+) lines, fnv1a 0x([0-9a-f]{8})$')
result_re = re.compile(r'    (not ok|ok) \d+ (\S+)(?: # (.*))?$')
for line in lines:
    if line.startswith('    # ---- '):
        current, body = line[len('    # ---- '):], []
    elif current is not None and line.startswith('    #|'):
        body.append(line[7:] if line.startswith('    #| ') else line[6:])
    elif current is not None and summary_re.match(line):
        m = summary_re.match(line)
        data = ''.join(l + '\n' for l in body).encode()
        if m.group(1) != current or int(m.group(2)) != len(body) or int(m.group(3), 16) != fnv1a(data):
            problems.append(f'{current}: its output did not come whole through the console '
                            f'({len(body)} lines, hash {fnv1a(data):08x}; the runner counted '
                            f'{m.group(2)} lines, hash {m.group(3)}): run it again')
            current = None
        else:
            got[current] = data
    elif result_re.match(line):
        m = result_re.match(line)
        if m.group(1) == 'not ok':
            problems.append(f'{m.group(2)}: {m.group(3) or "not ok"}')
            got.pop(m.group(2), None)
        current = None
for name in names:
    if name not in got and not any(p.startswith(name + ':') for p in problems):
        problems.append(f'{name}: no output in the log (did Linux boot and run it?)')
if problems:
    for p in problems:
        print(f'difftest: not recorded: {p}', file=sys.stderr)
    print(f'difftest: nothing written; the log is {log}', file=sys.stderr)
    sys.exit(1)
os.makedirs(expected, exist_ok=True)
for name in names:
    path = os.path.join(expected, name.replace(' ', '_') + '.out')
    old = open(path, 'rb').read() if os.path.exists(path) else None
    if old != got[name]:
        with open(path, 'wb') as f:
            f.write(got[name])
    state = 'new' if old is None else 'same' if old == got[name] else 'changed'
    count = got[name].count(b'\n')
    print(f'{state}: {name} ({count} lines) -> {os.path.relpath(path)}')
if not some:
    for f in sorted(os.listdir(expected)):
        if f.endswith('.out') and f[:-4] not in [n.replace(' ', '_') for n in names]:
            os.remove(os.path.join(expected, f))
            print(f'removed: {f} (no such program)')
PY
}

quire() {
    local n
    make -C "$root" --no-print-directory -s BUILD="$BUILD" kernel user >&2
    write_list "$@"
    n=$(wc -l <"$out/root/diff/run.list")
    "$root/scripts/mkinitrd.sh" "$out/quire-initrd.cpio" "$BUILD/user" "$out/root"
    say "Quire: $n programs (log: $out/quire.log)"
    FIRMWARE=direct TOPOLOGY=numa3 KERNEL="$BUILD/quire.elf" INITRD="$out/quire-initrd.cpio" \
        CMDLINE="init=\"/bin/init /tests/kselftest_run -N difftest -t $DIFFTEST_TIMEOUT -d /diff/expected -f /diff/run.list\"" \
        TIMEOUT=$((n * DIFFTEST_TIMEOUT + 120)) "$root/scripts/run-qemu.sh" </dev/null | tee "$out/quire.log"
}

main() {
    local what=${1:-}
    [ $# -gt 0 ] && shift
    mkdir -p "$out"
    case $what in
    record) record "$@" ;;
    quire) quire "$@" ;;
    *)
        echo "usage: $0 record|quire [NAME...]" >&2
        exit 2
        ;;
    esac
}

main "$@"
exit $?
