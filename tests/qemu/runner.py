#!/usr/bin/env python3
"""Quire test runner: the engine of `make test`.

Runs the jobs of a plan file, each of which produces KTAP (Linux
Documentation/dev-tools/ktap.rst, version 1), and prints one summary.

Plan file: one job per line, '#' starts a comment, values may be quoted:
    <name> host <binary> [timeout=S]
        Host unit-test binary (path relative to the repo root); prints KTAP
        on stdout and exits 0 iff everything passed.
    <name> qemu firmware=bios|uefi|direct topology=T [cmdline="..."]
                [kernel=ELF] [initrd=CPIO] [timeout=S] [check=topology]
        Boots the kernel with scripts/run-qemu.sh (env FIRMWARE, TOPOLOGY,
        CMDLINE, TIMEOUT, INITRD (initrd=, else none), and KERNEL when
        kernel= is given: another build of the kernel, e.g. the clang one);
        the guest serial console is its stdout. Its exit
        status: 0 success, 1 test failures, 2 kernel panic, 3 no status
        reported (triple fault/reset), 4 qemu/tool error, 124 timeout;
        any other is the first program's own (128 + N: killed by signal
        N), and a failure.
        mce=inject: QEMU gets a monitor socket and a gdbstub socket, and each
        guest line "mce-inject: [when cpl=N|when rip=A-B|when sym=NAME|
        when after=NAME [REG=A-B]] mce CPU BANK
        STATUS MCGSTATUS ADDR MISC" is sent to it as that monitor command: a
        real machine check, when and where the guest asks (the job's log
        records each); sym=NAME is rip= over the kernel function NAME (its
        address and size from the kernel ELF's symbols, for a user program
        that cannot know them); after=NAME is exact: a breakpoint on that
        kernel instruction, which the CPU (with register REG, e.g. cr2 or
        rsi, in A-B if given) then
        executes alone, and the machine check arrives at the next one
        (class MceInjector).
        check=topology: after the boot, compare the kernel's "numa: node"
        summary in the log with the topology's QEMU options
        (tests/qemu/topology_check.py); this adds one test result to the
        job ("PASS  job: topology check", or FAIL with each mismatch).
    <name> cmd [timeout=S] -- <shell command>
        Runs any command (sh -c, repo root as cwd, env TIMEOUT) that behaves
        like run-qemu.sh: KTAP on stdout, exit status in its convention. Used
        by the runner's own tests; everything after " -- " is the command,
        verbatim (no comment stripping).
    Any job may add expect=panic|timeout|fail|fault|crash|killed|status|empty:
    a self-test of the harness, which passes (1 passed) only when the job
    ended exactly that way with the evidence in its log, and otherwise fails
    (1 failed).
    Any job may add suites=a,b (top-level KTAP suites it must report; for a
    qemu job with cmdline ktest=..., the suites that ktest= selects are
    expected anyway: for ktest=all, every KTEST_SUITE in tests/kernel/) and
    min_cases=N (at least N test cases reported). A suite that did not run,
    or fewer cases, is a failure: a test that silently stops running cannot
    pass.
timeout= defaults to 60 s. Each job's output goes to <log-dir>/<name>.log.

Whole-plan check (run before the jobs when no --only is given, and alone
with --check-plan, which prints it as KTAP): every tests/host/test_*.c has a
host job running build/tests/host/test_*, every ring-3 test program
user/tests/*.c (and user/dyn/*.c) is started by some job's cmdline, and
every differential program tests/diff/*.c has Linux's recorded output
(tests/diff/expected/NAME.out) and a job running their list
(/diff/quire.list: docs/difftest.md).

A job whose KTAP reports no test at all (plan 1..0, or no results) fails.

Output: per job, one line per top-level KTAP suite ("PASS  job: suite (3/3)",
"FAIL  job: suite (2/3; not ok: case)", "SKIP  ..."), a line for an abnormal
end (panic, timeout, ...), an indented evidence block for failures, and last
"N passed, N failed[, N skipped]" counting leaf test cases.
Exit status: 0 nothing failed, 1 something failed, 2 bad usage or plan,
130 interrupted.
"""
import argparse
import functools
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gdbstub  # noqa: E402
import topology_check  # noqa: E402
DEFAULT_TIMEOUT = 60.0
# run-qemu.sh enforces TIMEOUT itself (exit 124) but may first spend time
# building a per-run ISO, and gives QEMU 5 s after SIGTERM; we only step in
# (killing its whole process group) if it overruns by more than this.
QEMU_GRACE = 30.0
EXPECTS = ('panic', 'timeout', 'fail', 'fault', 'crash', 'killed', 'status', 'empty')
CHECKS = ('topology',)
COMMON_KEYS = {'timeout', 'expect', 'suites', 'min_cases'}
KEYS = {'host': COMMON_KEYS, 'cmd': COMMON_KEYS,
        'qemu': COMMON_KEYS | {'firmware', 'topology', 'cmdline', 'kernel', 'initrd', 'check', 'mce'}}
PANIC_MARK = 'Kernel panic - not syncing'
TRACE_MARK = 'Call Trace:'
INJECTED_MARK = '==== runner: injected'
# What the kernel prints when its own checks catch a bug that does not stop
# it (lock debugging, bad page state, mm_verify of a dying mm). ktest jobs
# provoke some on purpose and check them case by case; in any other boot
# (a user program under init), one is a failure of the job.
KERNEL_BUG_MARK = re.compile(r'\bBUG: |failed mm_verify')
MAX_DIAG = 40      # diagnostic lines kept per test case
TAIL = 20          # log lines shown for timeouts and other abnormal ends


# ----------------------------------------------------------------- plan ---
class PlanError(Exception):
    pass


@dataclass
class Job:
    name: str
    kind: str                       # host | qemu | cmd
    opts: dict                      # key=value options
    target: str = ''                # host: binary path; cmd: shell command
    timeout: float = DEFAULT_TIMEOUT
    expect: str = ''

    def describe(self):
        opts = ' '.join(f'{k}="{v}"' if k == 'cmdline' and '"' not in v else f'{k}={shlex.quote(v)}'
                        for k, v in self.opts.items())
        if self.kind == 'host':
            return f'host {self.target}' + (f' {opts}' if opts else '')
        if self.kind == 'cmd':
            return 'cmd ' + (f'{opts} ' if opts else '') + f'-- {self.target}'
        return f'qemu {opts}'


def parse_plan(text, origin='plan'):
    jobs, names = [], set()
    for n, raw in enumerate(text.splitlines(), 1):
        line, where = raw.strip(), f'{origin}:{n}'
        if not line or line.startswith('#'):
            continue
        head = line.split(None, 2)
        if len(head) < 2:
            raise PlanError(f'{where}: expected "<name> <kind> ..."')
        name, kind = head[:2]
        if not re.fullmatch(r'[A-Za-z0-9._-]+', name):
            raise PlanError(f'{where}: bad job name {name!r} (it names the log file)')
        if name in names:
            raise PlanError(f'{where}: duplicate job name {name!r}')
        if kind not in KEYS:
            raise PlanError(f'{where}: unknown kind {kind!r} (host, qemu or cmd)')
        command = ''
        if kind == 'cmd':
            line, sep, command = line.partition(' -- ')
            if not sep or not command.strip():
                raise PlanError(f'{where}: cmd jobs need " -- <shell command>"')
        try:
            words = shlex.split(line, comments=True)[2:]
        except ValueError as e:
            raise PlanError(f'{where}: {e}')
        job = Job(name, kind, {}, command.strip())
        for w in words:
            key, eq, value = w.partition('=')
            if not eq:
                if kind == 'host' and not job.target:
                    job.target = w
                    continue
                raise PlanError(f'{where}: unexpected word {w!r} (want key=value)')
            if key not in KEYS[kind]:
                raise PlanError(f'{where}: unknown key {key!r} for a {kind} job')
            job.opts[key] = value
        if kind == 'host' and not job.target:
            raise PlanError(f'{where}: host jobs need the test binary path')
        if kind == 'qemu':
            for key in ('firmware', 'topology'):
                if key not in job.opts:
                    raise PlanError(f'{where}: qemu jobs need {key}=')
            if job.opts['firmware'] not in ('bios', 'uefi', 'direct'):
                raise PlanError(f'{where}: firmware must be bios, uefi or direct')
        try:
            job.timeout = float(job.opts.get('timeout', DEFAULT_TIMEOUT))
            assert job.timeout > 0
        except (ValueError, AssertionError):
            raise PlanError(f'{where}: timeout must be a positive number of seconds')
        job.expect = job.opts.get('expect', '')
        if job.expect and job.expect not in EXPECTS:
            raise PlanError(f'{where}: expect must be one of {", ".join(EXPECTS)}')
        if 'min_cases' in job.opts and not re.fullmatch(r'\d+', job.opts['min_cases']):
            raise PlanError(f'{where}: min_cases must be a whole number')
        if 'check' in job.opts:
            if job.opts['check'] not in CHECKS:
                raise PlanError(f'{where}: check must be one of {", ".join(CHECKS)}')
            if job.expect:
                raise PlanError(f'{where}: check= and expect= do not go together')
        if job.opts.get('mce', 'inject') != 'inject':
            raise PlanError(f'{where}: mce= takes only "inject"')
        jobs.append(job)
        names.add(name)
    return jobs


# ----------------------------------------------------------------- KTAP ---
# Escape sequences (CSI, OSC, charset selection, 2-byte) and stray control
# characters, as emitted by GRUB, SeaBIOS and OVMF before the kernel starts.
ANSI_RE = re.compile(r'\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?'
                     r'|\x1b[()*+][0-9A-Za-z]|\x1b[@-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]')
HEADER_RE = re.compile(r'K?TAP version \d+')
SUBTEST_RE = re.compile(r'#\s*Subtest:\s*(.*)$')
PLAN_RE = re.compile(r'1\.\.(\d+)\s*(?:#\s*(.*))?$')
RESULT_RE = re.compile(r'(not ok|ok)\s+(\d+)\b\s*(?:-\s+)?(.*)$')
DIRECTIVE_RE = re.compile(r'\s*(SKIP|TODO)\b:?\s*(.*)$', re.I)
NAMED_DIAG_RE = re.compile(r'#\s*([^\s:]+):(\s|$)')
TIMESTAMP_RE = re.compile(r'\[\s*\d+\.\d+\]')


def clean_lines(text):
    """Split console output into lines without \\r, escapes or control chars."""
    out = []
    for line in text.split('\n'):
        line = line.rstrip('\r')
        if '\r' in line:   # a terminal shows only what follows the last \r
            line = [p for p in line.split('\r') if p][-1]
        out.append(ANSI_RE.sub('', line).expandtabs(8).rstrip())
    return out


@dataclass(eq=False)
class Node:
    """A KTAP test: a leaf case, or a suite (is_suite) with child tests."""
    name: str = ''
    number: int = 0
    indent: int = 0                 # indentation of this suite's own lines
    is_suite: bool = False
    result: str = ''                # 'ok', 'not ok', or '' if never reported
    directive: str = ''             # 'SKIP' or 'TODO'
    reason: str = ''
    plan: int = -1                  # -1: no plan line seen
    plan_skip: bool = False
    children: list = field(default_factory=list)
    diag: list = field(default_factory=list)
    pending: list = field(default_factory=list)   # unnamed diags for the next result
    named: dict = field(default_factory=dict)     # "# case: ..." seen before its result
    trailing: list = field(default_factory=list)  # unnamed diags left at the end


class KtapParser:
    """Builds the test tree from indentation. A suite's lines (header, plan,
    results of its children) sit at one indentation; its own result line sits
    at its parent's. Anything unrecognised (kernel log lines) is ignored."""

    def __init__(self):
        self.root, self.stack = None, []
        self.diag_list, self.diag_indent = None, 0   # where continuation lines go

    def feed(self, line):
        if self.root is None:      # tolerate junk (even on the same line) before it
            m = HEADER_RE.search(line)
            if m:
                prefix = line[:m.start()]
                self.root = Node(is_suite=True, indent=len(prefix) if not prefix.strip() else 0)
                self.stack = [self.root]
            return
        body = line.lstrip(' ')
        ind = len(line) - len(body)
        if not body or TIMESTAMP_RE.match(body):
            return
        if HEADER_RE.fullmatch(body) or SUBTEST_RE.match(body):
            node = self._start_suite(ind)
            m = SUBTEST_RE.match(body)
            if m and node is not None:
                node.name = m.group(1).strip()
        elif PLAN_RE.match(body):
            m = PLAN_RE.match(body)
            self._descend_to(ind)
            if self.top.plan < 0:
                self.top.plan = int(m.group(1))
                self.top.plan_skip = bool(m.group(2) and DIRECTIVE_RE.match(m.group(2)))
        elif RESULT_RE.match(body):
            self._descend_to(ind)
            self._add_result(*RESULT_RE.match(body).groups())
        elif body.startswith('#'):
            self._diag(ind, body)
            return
        elif self.diag_list is not None and ind >= self.diag_indent:
            if len(self.diag_list) < MAX_DIAG:   # e.g. "Expected x == y, but" lines
                self.diag_list.append(line[self.diag_indent:])
            return
        else:
            return
        self.diag_list = None

    @property
    def top(self):
        return self.stack[-1]

    def _open(self, indent):
        parent = self.top
        node = Node(is_suite=True, indent=indent, number=len(parent.children) + 1)
        parent.children.append(node)
        self.stack.append(node)
        return node

    def _pop(self):
        node = self.stack.pop()
        node.trailing, node.pending = node.pending, []

    def _descend_to(self, indent):
        """Make the suite whose lines sit at `indent` the top (plan/result lines)."""
        while len(self.stack) > 1 and self.top.indent > indent:
            self._pop()
        if self.top.indent < indent:     # subtest without a header: open it
            self._open(indent)

    def _start_suite(self, indent):
        """A header or '# Subtest:' line starts a suite at `indent`."""
        while len(self.stack) > 1 and self.top.indent > indent:
            self._pop()
        top = self.top
        if top.indent < indent:
            return self._open(indent)
        if top is self.root:
            return None                  # stray repeated top-level header
        if not top.children and top.plan < 0:
            return top                   # "KTAP version 1" then "# Subtest: x"
        self._pop()                      # sibling of an unfinished suite
        return self._open(indent)

    def _add_result(self, ok, number, rest):
        suite, number = self.top, int(number)
        name, _, tail = rest.partition('#')
        name = name.strip()
        last = suite.children[-1] if suite.children else None
        if last is not None and last.is_suite and not last.result and last.number == number:
            node = last                  # the result line of a finished subtest
            node.name = node.name or name
        else:
            node = Node(name=name, number=number, indent=suite.indent)
            suite.children.append(node)
        node.result = ok
        m = DIRECTIVE_RE.match(tail) if tail else None
        if m:
            node.directive, node.reason = m.group(1).upper(), m.group(2).strip()
        else:                            # e.g. "not ok 3 foo # no such suite"
            node.reason = tail.strip()
        earlier = suite.pending + suite.named.pop(node.name, []) + suite.named.pop(name, [])
        node.diag = earlier + node.diag
        suite.pending = []

    def _diag(self, ind, body):
        # The innermost open suite at or above this indentation owns the line.
        suite = next((s for s in reversed(self.stack) if s.indent <= ind), self.root)
        m = NAMED_DIAG_RE.match(body)
        target = suite.pending
        if m:    # "# name: ..." goes to test `name`, whether already reported or not
            name = m.group(1)
            target = next((c.diag for c in reversed(suite.children) if c.name == name), None)
            if target is None:
                target = next((s.diag for s in self.stack if s.name == name), None)
            if target is None:
                target = suite.named.setdefault(name, [])
        if len(target) < MAX_DIAG:
            target.append(body)
        self.diag_list, self.diag_indent = target, ind

    def finish(self):
        while len(self.stack) > 1:
            self._pop()
        if self.root is not None:
            self.root.trailing = self.root.pending
        return self.root


def parse_ktap(lines):
    """Parse cleaned lines; returns the root Node or None if there is no KTAP."""
    parser = KtapParser()
    for line in lines:
        parser.feed(line)
    return parser.finish()


# -------------------------------------------------------------- counting --
@dataclass
class Failure:
    path: list
    why: str
    diag: list
    explicit: bool        # a real "not ok" line, not a missing/unreported test


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list = field(default_factory=list)

    @property
    def total(self):
        return self.passed + self.failed + self.skipped

    def fail(self, path, why, diag=(), explicit=False):
        self.failed += 1
        self.failures.append(Failure(path, why, list(diag), explicit))

    def add(self, other):
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.failures += other.failures


def count_missing(node, path, t, died):
    """Cases the plan promised but never reported: each one is a failure."""
    seen = len(node.children)
    if node.plan > seen:
        last = node.children[-1] if node.children else None
        after = f'after case {last.number} ({last.name})' if last else 'before its first case'
        for k in range(seen + 1, node.plan + 1):
            t.fail(path + [f'#{k}'], f'missing: {died} {after}',
                   node.trailing if k == seen + 1 else ())


def tally(node, path, t, died):
    """Count leaf cases under `node` into `t`; a suite counts its cases."""
    total0, failed0 = t.total, t.failed
    for child in node.children:
        tally(child, path + [child.name or f'#{child.number}'], t, died)
    count_missing(node, path, t, died)
    if t.total == total0:           # nothing below: the node is the unit itself
        if node.directive or node.plan_skip:
            t.skipped += 1
        elif node.result == 'ok':
            t.passed += 1
        elif node.result == 'not ok':
            t.fail(path, node.reason, node.diag, explicit=True)
        else:
            t.fail(path, f'no result: {died}', node.diag + node.trailing)
    elif node.result == 'not ok' and not node.directive and t.failed == failed0:
        t.fail(path, 'reported not ok, though none of its cases failed', node.diag, True)


def summarize(root, died):
    """[(label, Tally)] per top-level suite; top-level leaves share label ''."""
    groups, leaves = [], Tally()
    for child in root.children:
        if child.is_suite:
            t = Tally()
            tally(child, [child.name or f'#{child.number}'], t, died)
            groups.append((child.name or f'#{child.number}', t))
        else:
            tally(child, [child.name or f'#{child.number}'], leaves, died)
    if leaves.total:
        groups.insert(0, ('', leaves))
    missing = Tally()
    count_missing(root, [], missing, died)
    if missing.total:
        groups.append(('missing tests', missing))
    return groups


# ------------------------------------------------- what a job must report --
SUITE_DEF_RE = re.compile(r'^\s*KTEST_SUITE(_EXPLICIT)?\(\s*(\w+)', re.M)
KTEST_ARG_RE = re.compile(r'(?:^|\s)ktest=(\S*)')


@functools.lru_cache(maxsize=None)
def registered_suites(root=ROOT):
    """{suite name: explicit_only} for every KTEST_SUITE in tests/kernel/*.c."""
    found = {}
    for path in sorted(Path(root, 'tests/kernel').glob('*.c')):
        for m in SUITE_DEF_RE.finditer(path.read_text(errors='replace')):
            found[m.group(2)] = bool(m.group(1))
    return found


def expected_suites(job):
    """Top-level suites the job must report: suites=, else what ktest= selects."""
    if 'suites' in job.opts:
        return [n for n in job.opts['suites'].split(',') if n]
    m = KTEST_ARG_RE.search(job.opts.get('cmdline', '')) if job.kind == 'qemu' else None
    if not m:
        return []
    if m.group(1) == 'all':
        return [n for n, explicit in registered_suites().items() if not explicit]
    return [n for n in m.group(1).split(',') if n]


def missing_suites(root, expected, died):
    """A failure for each expected suite that the KTAP output never started."""
    seen = {c.name for c in root.children} if root else set()
    t = Tally()
    for name in expected:
        if name not in seen:
            t.fail([name], f'expected suite did not run ({died} or it vanished)', explicit=True)
    return t


def plan_coverage(jobs, root=ROOT):
    """[(source, why-not or '')]: each test source and whether a job runs it.
    Host tests: tests/host/test_X.c needs a host job running
    build/tests/host/test_X. Ring-3 programs: user/tests/X.c and
    user/dyn/X.c (dynamically linked) need a job whose cmdline starts
    /tests/X. Differential programs: tests/diff/X.c needs its recorded
    output tests/diff/expected/X.out and a job whose cmdline runs
    /diff/quire.list (every program but those tests/diff/differs.txt
    leaves out, with its reason)."""
    host_targets = {j.target for j in jobs if j.kind == 'host'}
    cmdlines = ' '.join(j.opts.get('cmdline', '') for j in jobs)
    # A list of Linux selftests a job runs (-f /lselftests/NAME.list, made
    # from tests/lselftests/NAME.txt) may start Quire's own programs too.
    for name in re.findall(r'-f /lselftests/([\w-]+)\.list', cmdlines):
        txt = Path(root, 'tests/lselftests', f'{name}.txt')
        if txt.exists():   # its lines without their '#' comments
            cmdlines += ' ' + ' '.join(l.split('#')[0] for l in txt.read_text().splitlines())
    out = []
    for src in sorted(Path(root, 'tests/host').glob('test_*.c')):
        want = f'build/tests/host/{src.stem}'
        out.append((f'tests/host/{src.name}',
                    '' if want in host_targets else f'no host job runs {want}'))
    user_srcs = sorted(Path(root, 'user/tests').glob('*.c')) + \
        sorted(Path(root, 'user/dyn').glob('*.c'))
    for src in user_srcs:
        found = re.search(rf'/tests/{re.escape(src.stem)}(\s|"|,|$)', cmdlines)
        out.append((str(src.relative_to(root)),
                    '' if found else f'no job starts /tests/{src.stem}'))
    for src in sorted(Path(root, 'tests/diff').glob('*.c')):
        recorded = Path(root, 'tests/diff/expected', f'{src.stem}.out')
        if not recorded.exists():
            why = f'no recorded output tests/diff/expected/{recorded.name} (make difftest-record)'
        elif not re.search(r'/diff/quire\.list(\s|"|$)', cmdlines):
            why = 'no job runs /diff/quire.list'
        else:
            why = ''
        out.append((f'tests/diff/{src.name}', why))
    return out


def plan_check_outcome(jobs, root=ROOT):
    """The whole-plan check as an Outcome (one result per test source)."""
    rows = plan_coverage(jobs, root)
    if not rows:
        return Outcome('pass')
    missing = [(src, why) for src, why in rows if why]
    out = Outcome('fail' if missing else 'pass', len(rows) - len(missing), len(missing))
    word = 'FAIL' if missing else 'PASS'
    out.report.append(f'{word}  plan: every test source has a job ({len(rows) - len(missing)}/{len(rows)})')
    out.report += [f'    not ok {src}: {why}' for src, why in missing]
    return out


def print_plan_check_ktap(jobs, root=ROOT):
    """--check-plan: the whole-plan check as KTAP; returns the exit status."""
    rows = plan_coverage(jobs, root)
    print('KTAP version 1')
    print(f'1..{len(rows)}')
    for n, (src, why) in enumerate(rows, 1):
        print(f'ok {n} {src}' if not why else f'# {src}: {why}\nnot ok {n} {src}')
    return 1 if any(why for _, why in rows) else 0


# -------------------------------------------------------- classification --
def panic_excerpt(lines):
    """From 'Kernel panic' through the end of its Call Trace (<= 30 lines)."""
    p = next((i for i, l in enumerate(lines) if PANIC_MARK in l), None)
    if p is None:
        return []
    t = next((i for i in range(p, min(len(lines), p + 30)) if TRACE_MARK in lines[i]), None)
    if t is None:     # Linux oops style: the trace came before the panic line
        t = next((i for i in range(p - 1, max(-1, p - 30), -1) if TRACE_MARK in lines[i]), None)
        return lines[t:p + 1] if t is not None else lines[p:p + 10]
    end = t + 1
    while end < len(lines) and end - p < 30 and re.search(
            r'\[<[0-9a-fA-F]+>\]|<TASK>|</TASK>|<user space|\S\+0x[0-9a-f]+', lines[end]):
        end += 1
    return lines[p:end]


def tail(lines, n=TAIL):
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines[-n:]


DESCRIBE = {'pass': 'all tests passed', 'fail': 'test failures',
            'fault': 'test failures with a Call Trace', 'panic': 'a kernel panic',
            'timeout': 'a timeout', 'noreport': 'no status reported (exit 3)',
            'error': 'a qemu/tool error', 'crash': 'a crash', 'noktap': 'no KTAP output',
            'killed': 'a program killed by a signal', 'status': 'an unexpected exit status',
            'empty': 'no test run'}
KILLED_MARK = re.compile(r'killed by signal (\d+)')


@dataclass
class Outcome:
    cls: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    report: list = field(default_factory=list)


def evaluate(job, rc, timed_out, text, log_path='', error='', checks=()):
    """Classify a finished job from its exit status and output; pure function.
    rc is None when the job could not be started (error says why). checks:
    [(name, mismatch lines)] from post-boot checks (check=), one result each."""
    lines = clean_lines(text)
    root = parse_ktap(lines)
    guest = job.kind != 'host'
    died = 'guest died/timed out' if guest else 'output ended'
    has_panic = any(PANIC_MARK in l for l in lines)
    has_trace = any(TRACE_MARK in l for l in lines)
    groups = summarize(root, died) if root else []
    reported = sum(t.total for _, t in groups)
    vanished = missing_suites(root, expected_suites(job), died)
    if vanished.total:
        groups.append(('expected suites', vanished))
    ktap = Tally()
    for _, t in groups:
        ktap.add(t)
    explicit = sum(f.explicit for f in ktap.failures)
    killed = next((m for l in lines for m in [KILLED_MARK.search(l)] if m), None)

    # How did the job end? A problem is an abnormal end: it always costs at
    # least one failure, so a crash can never look like a pass.
    problem, evidence, disagree = '', [], ''
    if rc is None:
        cls, problem, evidence = 'error', f'could not run: {error}', []
    elif has_panic or (guest and rc == 2):
        cls, problem = 'panic', f'kernel panic (exit {rc})'
        evidence = panic_excerpt(lines) or ['no "Kernel panic" line in the log; last lines:'] + tail(lines)
    elif timed_out or (guest and rc == 124):
        cls, problem = 'timeout', f'timed out after {job.timeout:g} s'
        evidence = [f'last {TAIL} lines:'] + tail(lines)
    elif guest and rc == 3:
        cls, problem = 'noreport', 'guest ended without reporting a status (triple fault/reset?) (exit 3)'
        evidence = tail(lines)
    elif rc < 0:
        cls, problem, evidence = 'crash', f'killed by signal {-rc}', tail(lines)
    elif guest and rc == 4:
        cls, problem, evidence = 'error', f'qemu/tool error (exit {rc})', tail(lines)
    elif rc > 128 and killed and int(killed.group(1)) == rc - 128:
        cls, problem = 'killed', f'a program was killed by signal {rc - 128} (exit {rc})'
        evidence = tail(lines)
    elif rc not in (0, 1):
        cls, problem, evidence = 'status', f'unexpected exit status {rc}', tail(lines)
    elif root is None:
        cls, problem, evidence = 'noktap', f'no KTAP output (exit {rc})', tail(lines)
    elif reported == 0 and root.plan == 0:
        cls, problem, evidence = 'empty', f'no test ran: the KTAP plan is 1..0 (exit {rc})', tail(lines)
    elif reported == 0:
        cls, problem, evidence = 'noktap', f'KTAP output has no test results (exit {rc})', tail(lines)
    else:
        failing = ktap.failed > 0 or rc != 0
        cls = ('fault' if has_trace else 'fail') if failing else 'pass'
        if (ktap.failed - vanished.failed > 0) != (rc != 0):
            disagree = (f'exit status {rc} disagrees with KTAP '
                        f'({"all ok" if not ktap.failed else f"{ktap.failed} failed"})')
    bugs = [l for l in lines if KERNEL_BUG_MARK.search(l)] \
        if guest and 'ktest=' not in job.opts.get('cmdline', '') else []
    min_cases = int(job.opts.get('min_cases', 0))
    too_few = (f'{reported} test cases reported, the plan expects at least {min_cases}'
               if reported < min_cases and not problem else '')

    out = Outcome(cls, ktap.passed, ktap.failed, ktap.skipped)
    for label, t in groups:
        out.report.append(suite_line(job.name, label, t))
    if problem:
        out.report.append(f'FAIL  {job.name}: {problem}')
        out.failed += ktap.failed == 0
    if disagree:
        out.report.append(f'FAIL  {job.name}: {disagree}')
        out.failed += 1
    if too_few:
        out.report.append(f'FAIL  {job.name}: {too_few}')
        out.failed += 1
    if bugs:
        out.report.append(f'FAIL  {job.name}: the kernel reported {len(bugs)} bug(s): {bugs[0].strip()}')
        out.failed += 1
    for name, mismatches in checks:
        if mismatches:
            out.failed += 1
            out.report.append(f'FAIL  {job.name}: {name} check ({len(mismatches)} mismatches)')
        else:
            out.passed += 1
            out.report.append(f'PASS  {job.name}: {name} check')
    if out.failed:
        out.report.append(f'    --- {job.name}: evidence (log: {log_path})')
        for f in ktap.failures[:10]:
            out.report.append(f'    not ok {".".join(f.path)}' + (f': {f.why}' if f.why else ''))
            out.report += ['        ' + d for d in f.diag[:10]]
        if len(ktap.failures) > 10:
            out.report.append(f'    ... and {len(ktap.failures) - 10} more')
        if problem and evidence:
            out.report.append(f'    {problem}:')
            out.report += ['        ' + l for l in evidence]
        # How each machine-check injection went (MceInjector.record), for mce=inject jobs.
        out.report += ['    ' + l.strip('= ') for l in lines if l.startswith(INJECTED_MARK)][:MAX_DIAG]
        for name, mismatches in checks:
            if mismatches:
                out.report.append(f'    {name} check: the log disagrees with the topology:')
                out.report += ['        ' + l for l in mismatches[:MAX_DIAG]]

    if job.expect:   # self-test: only the exact expected ending, with evidence, passes
        ok, why = check_expect(job, cls, has_panic, has_trace, explicit, disagree, problem)
        if ok and not out.failed:   # the ending must also have counted as a failure
            ok, why = False, f'{why}, but it was not counted as a failure'
        details = ['    ' + l for l in out.report] if not ok else []
        out = Outcome(cls, int(ok), int(not ok), 0,
                      [f'{"PASS" if ok else "FAIL"}  {job.name}: expect={job.expect}: {why}'] + details)
    return out


def check_expect(job, cls, has_panic, has_trace, explicit, disagree, problem=''):
    got = f'got {DESCRIBE[cls]}'
    if job.expect == 'panic':
        if cls != 'panic':
            return False, got
        if not has_panic:
            return False, f'exit status 2 but no "{PANIC_MARK}" line in the log'
        if not has_trace:
            return False, f'kernel panic but no "{TRACE_MARK}" backtrace in the log'
        return True, 'kernel panic with Call Trace'
    if job.expect == 'timeout':
        return (cls == 'timeout'), (f'killed after {job.timeout:g} s' if cls == 'timeout' else got)
    if job.expect in ('crash', 'killed', 'status', 'empty'):
        return cls == job.expect, (problem if cls == job.expect else got)
    if cls not in ('fail', 'fault') or (job.expect == 'fault' and cls != 'fault'):
        return False, got
    if not explicit:
        return False, f'{got}, but no explicit "not ok" case'
    if disagree:
        return False, disagree
    return True, 'not ok case with Call Trace' if job.expect == 'fault' else 'not ok case reported'


def suite_line(job_name, label, t):
    word = 'FAIL' if t.failed else ('SKIP' if not t.passed and t.skipped else 'PASS')
    detail = f'{t.passed}/{t.total}'
    if t.failed:
        # Case names relative to the top-level suite (or full path for top-level leaves).
        names = ['.'.join(f.path[1:] if label and len(f.path) > 1 else f.path) for f in t.failures]
        detail += '; not ok: ' + ', '.join(names[:5]) + (f', ... (+{len(names) - 5})' if len(names) > 5 else '')
    if t.skipped:
        detail += f'; {t.skipped} skipped'
    return f'{word}  {job_name}{": " + label if label else ""} ({detail})'


# -------------------------------------------------------------- running ---
_live, _live_lock, _echo_lock = set(), threading.Lock(), threading.Lock()


def kill_group(proc):
    """SIGTERM the job's process group, then SIGKILL whatever is left."""
    for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            pass


MCE_REQUEST_RE = re.compile(
    r'mce-inject: (?:when (?P<cond>cpl=[0-3]|rip=0x[0-9a-fA-F]+-0x[0-9a-fA-F]+|sym=[A-Za-z_][A-Za-z0-9_]*'
    r'|after=[A-Za-z_][A-Za-z0-9_]*(?: [a-z][a-z0-9]*=0x[0-9a-fA-F]+-0x[0-9a-fA-F]+)?) )?'
    r'(?P<cmd>mce (?P<cpu>\d+) \d+ (?:0x[0-9a-fA-F]+|\d+)(?: (?:0x[0-9a-fA-F]+|\d+)){3})\s*$')
INFO_RIP_RE = re.compile(r'RIP=([0-9a-fA-F]+)')
INFO_CPL_RE = re.compile(r'CPL=(\d)')
BREAK_HITS = 100000     # "when after=": breakpoint hits before giving up
BREAK_WAIT = 90         # ... and seconds


class MceInjector:
    """Sends the guest's machine-check requests to QEMU's monitor socket.
    "when cpl=N" or "when rip=A-B": the VM is stopped and the CPU's
    registers read until it is there, so that the machine check arrives
    exactly in user mode, or inside a given function (up to 400 tries:
    sampling, so biased towards where TCG notices a stop request, e.g. the
    first instruction of an exception handler).
    "when after=SYM [REG=A-B]": exact, through QEMU's gdbstub: a breakpoint
    on the kernel instruction SYM; when the CPU stops there (and its
    register REG, as `info registers` names it: cr2 the last page-fault
    address, rsi a copy's source, is in A-B when asked), it executes that
    one instruction alone and the machine check is injected, so that it
    arrives at the instruction after SYM (up to BREAK_HITS hits of other
    CPUs or values, stepped over, in BREAK_WAIT seconds)."""

    def __init__(self, path, log, kernel, gdb_path=None):
        self.path, self.log, self.line, self.kernel = path, log, b'', kernel
        self.gdb_path = gdb_path

    def resolve(self, cond):
        """sym=NAME as rip=START-END, from the kernel ELF's symbol table."""
        if not cond or not cond.startswith('sym='):
            return cond
        start, size = self.symbol(cond[4:])
        return f'rip={start:#x}-{start + size:#x}'

    def symbol(self, name):
        """(address, size) of a kernel symbol (size 0 for a label)."""
        try:
            out = subprocess.run(['nm', '-S', '--defined-only', str(self.kernel)],
                                 capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise RuntimeError(f'cannot read the symbols of {self.kernel}: {e}')
        for line in out.splitlines():
            f = line.split()
            if len(f) in (3, 4) and f[-1] == name:
                return int(f[0], 16), int(f[1], 16) if len(f) == 4 else 0
        raise RuntimeError(f'no symbol {name} in {self.kernel}')

    def feed(self, data):
        *done, self.line = (self.line + data).split(b'\n')
        for raw in done:
            m = MCE_REQUEST_RE.search(clean_lines(raw.decode('utf-8', 'replace'))[0])
            if m:
                self.inject(m.group('cmd'), m.group('cpu'), m.group('cond'))

    def inject(self, command, cpu, cond):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                self.connect(sock)
                self.until_prompt(sock)                   # the banner
                if cond and cond.startswith('after='):
                    return self.inject_after(sock, command, cpu, cond)
                cond = self.resolve(cond)
                tries = self.wait_for(sock, cpu, cond) if cond else 0
                reply = self.command(sock, command)
                if cond:
                    self.command(sock, 'cont')
                what = (self.answer(reply) or 'done') + (f' (at {cond} after {tries} stops)' if cond else '')
        except (OSError, TimeoutError, RuntimeError) as e:
            what = f'failed: {e}'
        self.record(command, what)

    def record(self, command, what):
        self.log.write(f'\n{INJECTED_MARK} "{command}": {what}\n'.encode())
        self.log.flush()

    @staticmethod
    def answer(reply):
        """The monitor echoes the command with line-editing escapes: keep only its answer."""
        return '; '.join(l for l in clean_lines(ANSI_RE.sub('', reply))[1:] if l and '(qemu)' not in l)[:200]

    def inject_after(self, sock, command, cpu, cond):
        """ "when after=SYM [REG=A-B]" (see the class comment)."""
        name, _, want = cond[len('after='):].partition(' ')
        reg, _, span = want.partition('=')
        lo, hi = (int(x, 16) for x in span.split('-')) if span else (0, 1 << 64)
        reg_re = re.compile(rf'\b{reg.upper() or "RIP"}=([0-9a-fA-F]+)')
        addr, cpu = self.symbol(name)[0], int(cpu)
        try:
            gdb = gdbstub.GdbStub(self.gdb_path)        # the VM stops
        except (OSError, gdbstub.GdbError) as e:
            return self.record(command, f'failed: {e}')
        deadline, hits, what = time.monotonic() + BREAK_WAIT, 0, None
        try:
            gdb.insert_breakpoint(addr)
            while what is None:
                if hits >= BREAK_HITS or time.monotonic() > deadline:
                    raise gdbstub.GdbError(f'{hits} breakpoint hits in {BREAK_WAIT} s, none on CPU {cpu}'
                                           + (f' with {want}' if want else ''))
                stopped = gdb.cont(max(1, deadline - time.monotonic()))
                hits += 1
                self.command(sock, f'cpu {stopped}')
                regs = self.command(sock, 'info registers')
                m, at = reg_re.search(regs), INFO_RIP_RE.search(regs)
                if not at or int(at.group(1), 16) != addr:
                    raise gdbstub.GdbError(f'CPU {stopped} stopped at {at and at.group(1)}, not at {name} ({addr:#x})')
                hit = stopped == cpu and m and lo <= int(m.group(1), 16) < hi
                gdb.remove_breakpoint(addr)
                gdb.step(stopped)
                if not hit:
                    gdb.insert_breakpoint(addr)
                    continue
                rip = INFO_RIP_RE.search(self.command(sock, 'info registers'))
                what = (self.answer(self.command(sock, command)) or 'done') + \
                    f' (after {name}' + (f' with {reg}={m.group(1)}' if reg else '') + \
                    f', at RIP={rip and rip.group(1)}, breakpoint hit {hits} times)'
        except (OSError, TimeoutError, gdbstub.GdbError) as e:
            what = f'failed: {e}'
        finally:
            try:
                if what is None or what.startswith('failed'):
                    gdb.remove_breakpoint(addr)
                gdb.detach()                            # the VM runs again
            except (OSError, TimeoutError, gdbstub.GdbError):
                pass
        self.record(command, what)

    def connect(self, sock):
        for _ in range(50):
            try:
                return sock.connect(self.path)
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.1)
        raise RuntimeError(f'no monitor at {self.path}')

    def wait_for(self, sock, cpu, cond):
        """Stop the VM with the CPU where cond says; returns the stops taken."""
        key, _, want = cond.partition('=')
        for tries in range(1, 401):
            self.command(sock, 'stop')
            self.command(sock, f'cpu {cpu}')
            regs = self.command(sock, 'info registers')
            if key == 'cpl':
                m = INFO_CPL_RE.search(regs)
                ok = m and m.group(1) == want
            else:
                lo, hi = (int(x, 16) for x in want.split('-'))
                m = INFO_RIP_RE.search(regs)
                ok = m and lo <= int(m.group(1), 16) < hi
            if ok:
                return tries
            self.command(sock, 'cont')
            time.sleep(0.005)
        raise RuntimeError(f'the CPU never stopped at {cond}')

    def command(self, sock, line):
        sock.sendall(line.encode() + b'\n')
        return self.until_prompt(sock)

    @staticmethod
    def until_prompt(sock):
        got = b''
        while not got.rstrip().endswith(b'(qemu)'):
            data = sock.recv(4096)
            if not data:
                break
            got += data
        return got.decode('utf-8', 'replace')


def _pump(stream, chunks, log, echo_prefix, on_data=None):
    partial = b''
    while True:
        data = stream.read1(65536)
        if not data:
            break
        chunks.append(data)
        log.write(data)
        log.flush()
        if on_data:
            on_data(data)
        if echo_prefix is None:
            continue
        with _echo_lock:
            if echo_prefix == b'':           # one job at a time: echo verbatim
                sys.stdout.buffer.write(data)
            else:                            # parallel: whole lines, prefixed
                *done, partial = (partial + data).split(b'\n')
                for l in done:
                    sys.stdout.buffer.write(echo_prefix + l + b'\n')
            sys.stdout.flush()
    if partial and echo_prefix:
        with _echo_lock:
            sys.stdout.buffer.write(echo_prefix + partial + b'\n')
            sys.stdout.flush()


def topology_path(name):
    """Where run-qemu.sh finds a topology: a name in tests/qemu/topologies, or a path."""
    if '/' in name or name.endswith('.args'):
        path = Path(name)
        return path if path.is_absolute() else ROOT / path
    return ROOT / 'tests/qemu/topologies' / f'{name}.args'


def post_checks(job, text):
    """[(name, mismatch lines)] for the job's check= option."""
    if job.opts.get('check') != 'topology':
        return []
    path = topology_path(job.opts['topology'])
    try:
        mismatches = topology_check.check(path.read_text(), '\n'.join(clean_lines(text)))
    except (OSError, topology_check.TopologyError, KeyError, ValueError) as e:
        mismatches = [f'cannot check {path}: {e}']
    return [('topology', mismatches)]


def run_job(job, args):
    log_path = Path(args.log_dir) / f'{job.name}.log'
    shown = os.path.relpath(log_path)
    if shown.startswith('..'):
        shown = str(log_path.resolve())
    env = dict(os.environ, TIMEOUT=f'{job.timeout:g}')
    if job.kind == 'qemu':
        argv = ['bash', args.run_qemu]
        env.update(FIRMWARE=job.opts['firmware'], TOPOLOGY=job.opts['topology'],
                   CMDLINE=job.opts.get('cmdline', ''))
        if 'kernel' in job.opts:
            env['KERNEL'] = job.opts['kernel']
        env['INITRD'] = job.opts.get('initrd', '')
        if job.opts.get('mce') == 'inject':   # short: a socket path has at most 107 bytes
            sockets = tempfile.mkdtemp(prefix='quire-mon-')
            env['QEMU_MONITOR'] = os.path.join(sockets, 'monitor')
            env['QEMU_GDBSTUB'] = os.path.join(sockets, 'gdb')
        deadline = job.timeout + QEMU_GRACE
    elif job.kind == 'cmd':
        argv, deadline = ['/bin/sh', '-c', job.target], job.timeout
    else:
        argv, deadline = [str(ROOT / job.target)], job.timeout
    if args.verbose:
        echo = b'' if args.jobs == 1 else f'{job.name}| '.encode()
    else:
        echo = None
    with open(log_path, 'wb') as log:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True)   # own group: killable as a whole
        except OSError as e:
            log.write(f'runner: cannot run {argv[0]}: {e}\n'.encode())
            return evaluate(job, None, False, '', shown, f'{argv[0]}: {e.strerror}')
        with _live_lock:
            _live.add(proc)
        chunks = []
        kernel = env.get('KERNEL') or os.path.join(os.environ.get('BUILD', 'build'), 'quire.elf')
        injector = (MceInjector(env['QEMU_MONITOR'], log, ROOT / kernel, env['QEMU_GDBSTUB'])
                    if job.opts.get('mce') == 'inject' else None)
        reader = threading.Thread(target=_pump, args=(proc.stdout, chunks, log, echo,
                                                      injector.feed if injector else None),
                                  daemon=True)
        reader.start()
        timed_out = False
        try:
            rc = proc.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc)
            rc = proc.wait()
        reader.join(2)
        if reader.is_alive():      # a straggler in the group still holds the pipe
            kill_group(proc)
            reader.join(5)
        with _live_lock:
            _live.discard(proc)
        if injector:
            shutil.rmtree(os.path.dirname(env['QEMU_MONITOR']), ignore_errors=True)
        text = b''.join(chunks).decode('utf-8', 'replace')
        log.write(f'\n==== runner: {job.describe()}: exit status {rc}'
                  f'{" (killed by the runner: timeout)" if timed_out else ""}'
                  f' after {time.monotonic() - start:.1f} s\n'.encode())
    return evaluate(job, rc, timed_out, text, shown, checks=post_checks(job, text))


def safe_run(job, args):
    try:
        return run_job(job, args)
    except Exception as e:   # a runner bug must fail the job, not hide it
        return Outcome('error', 0, 1, 0, [f'FAIL  {job.name}: runner error: {e!r}'])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--plan', default=str(ROOT / 'tests/plan.txt'), help='plan file')
    ap.add_argument('--only', action='append', default=[], metavar='NAME[,NAME]',
                    help='run only these jobs (repeatable)')
    ap.add_argument('--list', action='store_true', help='list the jobs and exit')
    ap.add_argument('--sources', default=str(ROOT), metavar='DIR',
                    help='tree whose tests/host and user/tests the plan must cover')
    ap.add_argument('--check-plan', action='store_true',
                    help='only check that every test source has a job (KTAP); exit 1 if not')
    ap.add_argument('--jobs', '-j', type=int, default=1, metavar='J', help='jobs in parallel')
    ap.add_argument('-v', '--verbose', action='store_true', help='echo job output live')
    ap.add_argument('--log-dir', default=str(ROOT / 'build/test-logs'), help='where logs go')
    ap.add_argument('--run-qemu', default=str(ROOT / 'scripts/run-qemu.sh'),
                    help='script that qemu jobs run')
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error('--jobs must be at least 1')
    try:
        jobs = parse_plan(Path(args.plan).read_text(), args.plan)
    except (OSError, PlanError) as e:
        print(f'runner: {e}', file=sys.stderr)
        return 2
    if args.check_plan:
        return print_plan_check_ktap(jobs, args.sources)
    if args.only:
        wanted = [n for part in args.only for n in part.split(',') if n]
        unknown = sorted(set(wanted) - {j.name for j in jobs})
        if unknown:
            print(f'runner: no such job: {", ".join(unknown)} (see --list)', file=sys.stderr)
            return 2
        jobs = [j for j in jobs if j.name in wanted]
    if not jobs:
        print(f'runner: no jobs in {args.plan}', file=sys.stderr)
        return 2
    if args.list:
        width = max(len(j.name) for j in jobs)
        for j in jobs:
            print(f'{j.name:<{width}}  {j.describe()}')
        return 0

    Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    total = Outcome('')
    if not args.only:
        coverage = plan_check_outcome(jobs, args.sources)
        if coverage.report:
            print('\n'.join(coverage.report), flush=True)
        total.passed, total.failed = coverage.passed, coverage.failed
    pool = ThreadPoolExecutor(max_workers=args.jobs)
    try:
        # Results print in plan order, each as soon as it and those before it are done.
        for fut in [pool.submit(safe_run, j, args) for j in jobs]:
            out = fut.result()
            print('\n'.join(out.report), flush=True)
            total.passed += out.passed
            total.failed += out.failed
            total.skipped += out.skipped
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        with _live_lock:
            for proc in list(_live):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        print('runner: interrupted', file=sys.stderr)
        return 130
    pool.shutdown()
    print(f'{total.passed} passed, {total.failed} failed'
          + (f', {total.skipped} skipped' if total.skipped else ''))
    return 0 if total.failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
