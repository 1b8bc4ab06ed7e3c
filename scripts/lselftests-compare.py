#!/usr/bin/env python3
"""lselftests-compare.py: the side-by-side table of `make linux-selftests`.

Reads the serial logs of two boots that ran user/tests/kselftest_run.c
(suite linux_mm_selftests) with the same list of cases, one on Quire and
one on Linux, and prints a Markdown table: each case, Quire's result and
Linux's (ok, not ok with the reason, SKIP with the reason, or "no result"
when the boot ended before the case). For Quire it adds the system calls
the kernel logged as not implemented while the case ran (Quire logs each
number once a boot: only the first case to make the call shows it). Writes the same
text to --out. Exit status: 0 when both logs had the suite, 1 otherwise.

Copyright (c) the Quire authors. MIT licence (LICENSE).
"""
import argparse
import datetime
import re
import sys
from pathlib import Path

RESULT_RE = re.compile(r'^ {4}(not ok|ok) (\d+) (.*?)(?: # (.*))?$')
START_RE = re.compile(r'^ {4}# ---- (.*)$')
COUNTS_RE = re.compile(r'^ {4}# (.*): kselftest counted pass:(\d+) fail:(\d+) xfail:\d+ xpass:\d+ skip:(\d+) error:(\d+)$')
ENOSYS_RE = re.compile(r'syscall: pid \d+ \(([^)]*)\): system call (\d+) is not implemented')
# Not the test's: kselftest_run's own setpgid (Quire has no process groups),
# and glibc's start-up calls that go on without (rseq, readlink).
NOT_THE_TESTS = {'kselftest_run'}
HARMLESS = {334, 89}
ANSI_RE = re.compile(r'\x1b\[[0-?]*[ -/]*[@-~]')


def syscall_names(unistd):
    names = {}
    try:
        for m in re.finditer(r'#define __NR_(\w+)\s+(\d+)', Path(unistd).read_text()):
            names[int(m.group(2))] = m.group(1)
    except OSError:
        pass
    return names


def read_log(path):
    """{case name: (word, detail, enosys numbers)} and whether the suite began."""
    results, current, enosys, counts = {}, None, [], {}
    try:
        text = Path(path).read_text(errors='replace')
    except OSError:
        return results, False
    began = '# Subtest: linux_mm_selftests' in text
    for raw in text.splitlines():
        line = ANSI_RE.sub('', raw.rstrip('\r'))
        m = START_RE.match(line)
        if m:
            current, enosys = m.group(1), []
            continue
        m = ENOSYS_RE.search(line)
        if m and current:
            if m.group(1) not in NOT_THE_TESTS and int(m.group(2)) not in HARMLESS:
                enosys.append(int(m.group(2)))
            continue
        m = COUNTS_RE.match(line)
        if m:
            counts[m.group(1)] = tuple(int(x) for x in m.group(2, 3, 4, 5))
            continue
        m = RESULT_RE.match(line)
        if m:
            ok, _, name, tail = m.groups()
            tail = tail or ''
            if tail.startswith('SKIP'):
                word, detail = 'SKIP', tail[4:].strip()
            elif ok == 'ok':
                word, detail = 'ok', ''
            else:
                word, detail = 'not ok', tail
            c = counts.get(name)
            if c and word == 'ok' and (c[2] or c[1]):
                detail = f'{c[0]} passed, {c[2]} skipped'
            results[name] = (word, detail, enosys)
            current, enosys = None, []
    return results, began


def case_name(case):
    """The name kselftest_run gives a case: file name, then the arguments."""
    prog, *args = case.split(',')
    return ' '.join([prog.rsplit('/', 1)[-1]] + args)


def cell(result, names=None):
    if result is None:
        return 'no result (the boot ended first)'
    word, detail, enosys = result
    text = f'**{word}**' if word == 'not ok' else word
    if detail:
        text += ': ' + detail.replace('|', '\\|')
    if names is not None and enosys:
        calls = ', '.join(dict.fromkeys(names.get(n, str(n)) for n in enosys))
        text += f' (ENOSYS: {calls})'
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--quire', required=True, help="Quire's serial log")
    ap.add_argument('--linux', required=True, help="Linux's serial log")
    ap.add_argument('--linux-kernel', default='', help='the .deb Linux came from')
    ap.add_argument('--source', default='', help='the .deb the tests were built from')
    ap.add_argument('--unistd', default='', help='asm/unistd_64.h, for system call names')
    ap.add_argument('--out', required=True, help='where the Markdown goes')
    ap.add_argument('cases', nargs='+', help='the cases, as kselftest_run took them')
    args = ap.parse_args()

    names = syscall_names(args.unistd)
    quire, quire_began = read_log(args.quire)
    linux, linux_began = read_log(args.linux)
    rows = [(case_name(c), quire.get(case_name(c)), linux.get(case_name(c))) for c in args.cases]

    def tally(col):
        words = [r[col][0] if r[col] else 'no result' for r in rows]
        return ', '.join(f'{words.count(w)} {w}' for w in ('ok', 'not ok', 'SKIP', 'no result')
                         if words.count(w))

    out = [f'# Linux 6.12 mm selftests: Quire and Linux ({datetime.date.today()})', '',
           f'Tests built from {args.source or "linux-source-6.12"}; Linux booted from '
           f'{args.linux_kernel or "linux-image-6.12-cloud-amd64"}; both on QEMU numa3 (TCG), '
           'run by user/tests/kselftest_run.c (`make linux-selftests`). "ENOSYS:" lists the '
           'system calls Quire logged as not implemented while the case ran (once a boot each: '
           'only the first case to make one shows it).', '',
           f'- Quire: {tally(1)}' + ('' if quire_began else ' (the suite never started)'),
           f'- Linux: {tally(2)}' + ('' if linux_began else ' (the suite never started)'), '',
           '| test | Quire | Linux 6.12 |', '|---|---|---|']
    out += [f'| {name} | {cell(q, names)} | {cell(l)} |' for name, q, l in rows]
    text = '\n'.join(out) + '\n'
    Path(args.out).write_text(text)
    print(text, end='')
    print(f'(written to {args.out})')
    return 0 if quire_began and linux_began else 1


if __name__ == '__main__':
    sys.exit(main())
