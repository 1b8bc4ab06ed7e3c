"""Tests of tests/qemu/runner.py: python3 -m unittest tests/qemu/test_runner.py

Canned logs go through the parser and classifier (evaluate), and runner.py
runs end to end on temporary plans of `cmd` jobs (and a fake run-qemu.sh).
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import runner  # noqa: E402
import topology_check  # noqa: E402

QEMU = runner.Job('vm', 'qemu', {'firmware': 'direct', 'topology': 'numa3'})
HOST = runner.Job('host-lib', 'host', {}, 'build/tests/host/test_lib')


def log(s):
    return textwrap.dedent(s).lstrip('\n')


def expect_job(kind, timeout=60):
    return runner.Job('self', 'qemu', {'firmware': 'direct', 'topology': 'numa3'},
                      timeout=timeout, expect=kind)


ALL_PASS = log('''
    KTAP version 1
    1..2
        KTAP version 1
        # Subtest: boot
        1..3
        ok 1 cmdline_saved
        ok 2 mmap_present
        ok 3 - acpi_found
    # boot: pass:3 fail:0 skip:0 total:3
    ok 1 boot
        KTAP version 1
        # Subtest: traps
        1..2
        ok 1 breakpoint
        ok 2 divide_error
    ok 2 traps
    ''')

NOT_OK = log('''
    KTAP version 1
    1..2
        KTAP version 1
        # Subtest: boot
        1..3
        ok 1 cmdline_saved
        ok 2 mmap_present
        ok 3 acpi_found
    ok 1 boot
        KTAP version 1
        # Subtest: traps
        1..3
        ok 1 breakpoint
        not ok 2 divide_error
        # divide_error: EXPECTATION FAILED at kernel/traps.c:42
        Expected vector == 0, but
            vector == 14
    [    0.123456] traps: unrelated kernel log line
        ok 3 page_fault
    not ok 2 traps
    ''')

# Guest died (no panic message) after case 1 of 3 in the first of 2 suites.
TRUNCATED = log('''
    KTAP version 1
    1..2
        KTAP version 1
        # Subtest: boot
        1..3
        ok 1 cmdline_saved
    ''')

PANIC = log('''
    KTAP version 1
    1..1
        KTAP version 1
        # Subtest: boot
        1..2
        ok 1 cmdline_saved
    [    0.300000] Kernel panic - not syncing: selftest_panic requested
    [    0.300001] CPU: 0 RIP: 0010:ffffffff80001234
    [    0.300002] Call Trace:
    [    0.300003]  [<ffffffff80001234>] ktest_selftest_panic+0x14/0x20
    [    0.300004]  [<ffffffff80005678>] ktest_run+0x88/0x120
    [    0.300005]  [<ffffffff80000100>] kmain+0x40/0x60
    [    0.300006] ---[ end Kernel panic ]---
    ''')

FAULT = log('''
    KTAP version 1
    1..1
        KTAP version 1
        # Subtest: selftest
        1..1
        # selftest_fault: unexpected #PF at 0x0
    [    0.2] Call Trace:
    [    0.2]  [<ffffffff80001111>] selftest_fault+0x4/0x10
        not ok 1 selftest_fault
    not ok 1 selftest
    ''')


NUMA3_SUMMARY = log('''
    [    0.195317] numa: node 0 cpus 0-1 mem 767 MiB tier dram
    [    0.195677] numa: node 0 distance 10 21 30
    [    0.195770] numa: node 0 fallback 0 1 2
    [    0.195814] numa: node 1 cpus 2-3 mem 768 MiB tier dram
    [    0.195854] numa: node 1 distance 21 10 40
    [    0.195890] numa: node 1 fallback 1 0 2
    [    0.195951] numa: node 2 cpus none mem 511 MiB tier slow
    [    0.195989] numa: node 2 distance 30 40 10
    [    0.196023] numa: node 2 fallback 2 0 1
    ''')


def topology(name):
    return (HERE / 'topologies' / f'{name}.args').read_text()


class TopologyCheckTest(unittest.TestCase):
    def test_models_of_the_tree(self):
        m = topology_check.expected_model(topology('numa3'))
        self.assertEqual(m.cpus, {0: {0, 1}, 1: {2, 3}, 2: set()})
        self.assertEqual(m.mem_mib, {0: 768, 1: 768, 2: 512})
        self.assertEqual([m.distance[(2, j)] for j in range(3)], [30, 40, 10])
        self.assertEqual(m.tier, {0: 'dram', 1: 'dram', 2: 'slow'})
        self.assertEqual(m.fallback, {0: [0, 1, 2], 1: [1, 0, 2], 2: [2, 0, 1]})
        m = topology_check.expected_model(topology('memoryless'))
        self.assertEqual((m.cpus[1], m.mem_mib[1], m.tier[1]), ({2, 3}, 0, 'dram'))
        self.assertEqual((m.fallback[1], m.tier[2]), ([0, 2], 'slow'))
        m = topology_check.expected_model(topology('uma'))
        self.assertEqual((m.cpus, m.mem_mib, m.fallback), ({0: {0, 1}}, {0: 1024}, {0: [0]}))
        m = topology_check.expected_model(topology('numa3-8cpu'))
        self.assertEqual(m.cpus[1], set(range(4, 8)))
        # Every topology in the tree can be read.
        for f in sorted((HERE / 'topologies').glob('*.args')):
            topology_check.expected_model(f.read_text())

    def test_matching_log(self):
        self.assertEqual(topology_check.check(topology('numa3'), NUMA3_SUMMARY), [])
        # The summary printed twice (ktest=numa prints it again) is fine.
        self.assertEqual(topology_check.check(topology('numa3'), NUMA3_SUMMARY * 2), [])

    def test_mismatches(self):
        bad = (NUMA3_SUMMARY.replace('cpus 2-3 mem 768', 'cpus 2 mem 700')
               .replace('tier slow', 'tier dram').replace('distance 30 40 10', 'distance 30 20 10')
               .replace('fallback 1 0 2', 'fallback 1 2 0'))
        self.assertEqual(topology_check.check(topology('numa3'), bad), [
            'node 1: cpus [2], expected [2, 3]',
            'node 1: mem 700 MiB, expected 768 MiB (up to 16 MiB less allowed)',
            'node 1: fallback 1 2 0, expected 1 0 2',
            'node 2: tier dram, expected slow',
            'node 2: distance 30 20 10, expected 30 40 10'])
        self.assertEqual(topology_check.check(topology('numa3'), 'booting\n'),
                         ['no "numa: node" summary lines in the log'])
        missing = '\n'.join(l for l in NUMA3_SUMMARY.splitlines() if 'node 2' not in l)
        self.assertIn('nodes: expected [0, 1, 2], the kernel printed [0, 1]',
                      topology_check.check(topology('numa3'), missing))
        twice = NUMA3_SUMMARY + NUMA3_SUMMARY.replace('fallback 2 0 1', 'fallback 2 1 0')
        self.assertIn("node 2: two different \"fallback\" lines: '2 0 1' and '2 1 0'",
                      topology_check.check(topology('numa3'), twice))

    def test_memory_tolerance(self):
        for mib, ok in ((512, True), (496, True), (495, False), (513, False)):
            text = NUMA3_SUMMARY.replace('mem 511 MiB', f'mem {mib} MiB')
            self.assertEqual(topology_check.check(topology('numa3'), text) == [], ok, mib)

    def test_tier_by_latency_and_options(self):
        args = log('''
            -smp cpus=2 -m 1G   # comment
            -object memory-backend-ram,id=a,size=512M
            -object memory-backend-ram,id=b,size=512M
            -numa node,nodeid=0,cpus=0,cpus=1,memdev=a
            -numa node,nodeid=1,memdev=b
            -numa dist,src=0,dst=1,val=30
            -numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=80
            -numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=80
            ''')
        m = topology_check.expected_model(args)
        self.assertEqual((m.cpus[0], m.tier[1]), ({0, 1}, 'dram'))   # as fast as local
        slower = 'target=1,hierarchy=memory,data-type=access-latency,latency=90'
        m = topology_check.expected_model(args.replace(slower.replace('=90', '=80'), slower))
        self.assertEqual(m.tier[1], 'slow')
        self.assertEqual(topology_check.parse_size('1536M'), 1536 << 20)
        with self.assertRaises(topology_check.TopologyError):
            topology_check.expected_model('-numa cpu,node-id=0,socket-id=0')

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as d:
            logf = Path(d) / 'x.log'
            logf.write_text(NUMA3_SUMMARY)
            argsf = HERE / 'topologies/numa3.args'
            p = subprocess.run([sys.executable, str(HERE / 'topology_check.py'), str(argsf), str(logf)],
                               capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stdout), (0, 'topology matches\n'))
            p = subprocess.run([sys.executable, str(HERE / 'topology_check.py'),
                                str(HERE / 'topologies/uma.args'), str(logf)], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertIn('nodes: expected [0], the kernel printed [0, 1, 2]', p.stdout)


class ParserTest(unittest.TestCase):
    def groups(self, text, died='guest died/timed out'):
        return runner.summarize(runner.parse_ktap(runner.clean_lines(text)), died)

    def test_all_pass(self):
        g = self.groups(ALL_PASS)
        self.assertEqual([(l, t.passed, t.failed, t.skipped) for l, t in g],
                         [('boot', 3, 0, 0), ('traps', 2, 0, 0)])

    def test_not_ok_with_diagnostics(self):
        (_, boot), (_, traps) = self.groups(NOT_OK)
        self.assertEqual((traps.passed, traps.failed), (2, 1))
        f, = traps.failures
        self.assertEqual(f.path, ['traps', 'divide_error'])
        self.assertTrue(f.explicit)
        self.assertEqual(f.diag[0], '# divide_error: EXPECTATION FAILED at kernel/traps.c:42')
        self.assertEqual(f.diag[1:], ['Expected vector == 0, but', '    vector == 14'])

    def test_skip(self):
        g = self.groups(log('''
            KTAP version 1
            1..2
                KTAP version 1
                # Subtest: acpi
                1..2
                ok 1 madt # SKIP no ACPI
                not ok 2 srat # skip: no SRAT
            ok 1 acpi
            ok 2 whole_suite # SKIP not built
            '''))
        self.assertEqual([(l, t.passed, t.failed, t.skipped) for l, t in g],
                         [('', 0, 0, 1), ('acpi', 0, 0, 2)])
        self.assertTrue(runner.suite_line('j', 'acpi', g[1][1]).startswith('SKIP  j: acpi (0/2'))

    def test_nested_suites_count_leaves(self):
        (label, t), = self.groups(log('''
            KTAP version 1
            1..1
                KTAP version 1
                # Subtest: mm
                1..2
                    KTAP version 1
                    # Subtest: buddy
                    1..2
                    ok 1 alloc
                    not ok 2 free
                ok 1 buddy
                ok 2 - vmm_map
            not ok 1 mm
            '''))
        self.assertEqual((label, t.passed, t.failed), ('mm', 2, 1))
        self.assertEqual(t.failures[0].path, ['mm', 'buddy', 'free'])
        self.assertIn('not ok: buddy.free', runner.suite_line('j', label, t))

    def test_result_comment_is_the_reason(self):
        (_, t), = self.groups('KTAP version 1\n1..1\nnot ok 1 nosuch # no such suite\n')
        self.assertEqual((t.failed, t.failures[0].why), (1, 'no such suite'))

    def test_suite_not_ok_without_failing_case_counts(self):
        (_, t), = self.groups('KTAP version 1\n1..1\n    1..1\n    ok 1 a\nnot ok 1 s\n')
        self.assertEqual((t.passed, t.failed), (1, 1))

    def test_truncated_plan_counts_missing_cases(self):
        (_, boot), (label, missing) = self.groups(TRUNCATED)
        self.assertEqual((boot.passed, boot.failed), (1, 2))
        self.assertEqual([f.path for f in boot.failures], [['boot', '#2'], ['boot', '#3']])
        self.assertEqual(boot.failures[0].why,
                         'missing: guest died/timed out after case 1 (cmdline_saved)')
        self.assertEqual((label, missing.failed), ('missing tests', 1))   # suite 2 never started

    def test_headerless_kunit_style_and_pre_result_diag(self):
        (_, t), = self.groups(log('''
            TAP version 14
            1..1
                # Subtest: example
                1..2
                # simple: EXPECTATION FAILED at lib/example.c:29
                Expected 1 + 1 == 3, but
                not ok 1 simple
                ok 2 other
            not ok 1 example
            '''))
        self.assertEqual((t.passed, t.failed), (1, 1))
        self.assertEqual(t.failures[0].diag,
                         ['# simple: EXPECTATION FAILED at lib/example.c:29', 'Expected 1 + 1 == 3, but'])

    def test_junk_and_escapes_before_ktap(self):
        junk = ('\x1b[2J\x1b[01;01H\x1b[=3h\x1b[0m\x1b[37m\x1b[40mBdsDxe: loading Boot0001\r\n'
                'SeaBIOS (version 1.16)\r\n\x00\xff garbage 1..7 ok 3 nope\r\n'
                'Booting `Quire\'\r\n\x1b[0m\x1b[30m\x1b[40m\x1b[2J\x1b[01;01H')
        g = self.groups(junk + ALL_PASS.replace('\n', '\r\n'))
        self.assertEqual([(l, t.passed, t.failed) for l, t in g], [('boot', 3, 0), ('traps', 2, 0)])

    def test_crlf_and_stray_cr(self):
        text = NOT_OK.replace('\n', '\r\n').replace('    ok 1 breakpoint', 'junk\r    ok 1 breakpoint')
        (_, boot), (_, traps) = self.groups(text)
        self.assertEqual((boot.passed, traps.passed, traps.failed), (3, 2, 1))
        self.assertFalse(any(l.endswith('\r') for f in traps.failures for l in f.diag))

    def test_no_ktap(self):
        self.assertIsNone(runner.parse_ktap(runner.clean_lines('SeaBIOS\nno tests here\n')))


class EvaluateTest(unittest.TestCase):
    def test_pass(self):
        o = runner.evaluate(QEMU, 0, False, ALL_PASS)
        self.assertEqual((o.cls, o.passed, o.failed, o.skipped), ('pass', 5, 0, 0))
        self.assertEqual(o.report, ['PASS  vm: boot (3/3)', 'PASS  vm: traps (2/2)'])

    def test_fail_report(self):
        o = runner.evaluate(QEMU, 1, False, NOT_OK, 'build/test-logs/vm.log')
        self.assertEqual((o.cls, o.passed, o.failed), ('fail', 5, 1))
        self.assertEqual(o.report[:2], ['PASS  vm: boot (3/3)',
                                        'FAIL  vm: traps (2/3; not ok: divide_error)'])
        text = '\n'.join(o.report)
        self.assertIn('evidence (log: build/test-logs/vm.log)', text)
        self.assertIn('not ok traps.divide_error', text)
        self.assertIn('EXPECTATION FAILED at kernel/traps.c:42', text)

    def test_fail_report_shows_the_injections(self):
        text = NOT_OK + '\n==== runner: injected "mce 0 1 1 2 3 4": failed: no gdbstub at /x\n'
        o = runner.evaluate(QEMU, 1, False, text)
        self.assertIn('    runner: injected "mce 0 1 1 2 3 4": failed: no gdbstub at /x', o.report)
        self.assertNotIn('runner: injected', '\n'.join(runner.evaluate(QEMU, 0, False, ALL_PASS + text[len(NOT_OK):]).report))

    def test_panic_always_fails_and_shows_trace(self):
        o = runner.evaluate(QEMU, 2, False, PANIC)
        self.assertEqual((o.cls, o.passed, o.failed), ('panic', 1, 1))   # missing case 2
        text = '\n'.join(o.report)
        self.assertIn('FAIL  vm: kernel panic (exit 2)', text)
        self.assertIn('Kernel panic - not syncing: selftest_panic requested', text)
        self.assertIn('[<ffffffff80000100>] kmain', text)
        self.assertNotIn('end Kernel panic', text)        # excerpt stops after the trace

    def test_panic_with_clean_ktap_still_fails(self):
        o = runner.evaluate(QEMU, 2, False, ALL_PASS + 'Kernel panic - not syncing: late\n')
        self.assertEqual((o.cls, o.passed, o.failed), ('panic', 5, 1))
        # Even if the exit status claims success, a panic message is a panic.
        o = runner.evaluate(QEMU, 0, False, ALL_PASS + 'Kernel panic - not syncing: late\n')
        self.assertEqual((o.cls, o.failed), ('panic', 1))

    def test_truncated_run_keeps_failures(self):
        o = runner.evaluate(QEMU, 3, False, TRUNCATED)
        self.assertEqual((o.cls, o.passed, o.failed), ('noreport', 1, 3))
        self.assertIn('FAIL  vm: boot (1/3; not ok: #2, #3)', o.report)
        self.assertIn('missing: guest died/timed out after case 1', '\n'.join(o.report))

    def test_timeout(self):
        for rc, killed in ((124, False), (-9, True)):
            o = runner.evaluate(QEMU, rc, killed, ALL_PASS + 'spinning\n')
            self.assertEqual((o.cls, o.passed, o.failed), ('timeout', 5, 1))
            self.assertIn('FAIL  vm: timed out after 60 s', o.report)
            self.assertIn('        spinning', o.report)

    def test_abnormal_ends(self):
        for rc, cls, words in ((3, 'noreport', 'without reporting'), (4, 'error', 'qemu/tool error'),
                               (7, 'status', 'unexpected exit status 7')):
            o = runner.evaluate(QEMU, rc, False, ALL_PASS)
            self.assertEqual((o.cls, o.failed), (cls, 1))
            self.assertIn(words, '\n'.join(o.report))

    def test_no_ktap(self):
        for rc in (0, 1):
            o = runner.evaluate(QEMU, rc, False, 'SeaBIOS\nbooting\n')
            self.assertEqual((o.cls, o.passed, o.failed), ('noktap', 0, 1))
            self.assertIn(f'FAIL  vm: no KTAP output (exit {rc})', o.report)
        o = runner.evaluate(QEMU, 0, False, 'KTAP version 1\n')
        self.assertEqual((o.cls, o.failed), ('noktap', 1))

    def test_exit_status_disagrees(self):
        o = runner.evaluate(QEMU, 0, False, NOT_OK)
        self.assertEqual(o.failed, 2)
        self.assertIn('FAIL  vm: exit status 0 disagrees with KTAP (1 failed)', o.report)
        o = runner.evaluate(QEMU, 1, False, ALL_PASS)
        self.assertEqual((o.passed, o.failed), (5, 1))
        self.assertIn('FAIL  vm: exit status 1 disagrees with KTAP (all ok)', o.report)

    def test_host_jobs(self):
        flat = 'TAP version 14\n1..3\nok 1 a\nok 2 - b\nok 3 c # SKIP\n'
        o = runner.evaluate(HOST, 0, False, flat)
        self.assertEqual(o.report, ['PASS  host-lib (2/3; 1 skipped)'])
        o = runner.evaluate(HOST, 2, False, flat)
        self.assertEqual((o.cls, o.failed), ('status', 1))
        self.assertIn('FAIL  host-lib: unexpected exit status 2', o.report)
        o = runner.evaluate(HOST, 1, False, flat)
        self.assertEqual(o.failed, 1)
        self.assertIn('FAIL  host-lib: exit status 1 disagrees with KTAP (all ok)', o.report)
        o = runner.evaluate(HOST, -11, False, 'KTAP version 1\n1..3\nok 1 a\n')
        self.assertEqual((o.cls, o.passed, o.failed), ('crash', 1, 2))
        self.assertIn('missing: output ended after case 1 (a)', '\n'.join(o.report))
        o = runner.evaluate(HOST, None, False, '', error='test_lib: No such file')
        self.assertEqual((o.cls, o.failed), ('error', 1))


class HolesTest(unittest.TestCase):
    """Each way a failure once passed now fails (docs/testing.md)."""

    def job(self, **opts):
        return runner.Job('vm', 'qemu', dict({'firmware': 'direct', 'topology': 'numa3'}, **opts))

    def test_killed_program_fails(self):
        text = 'KTAP version 1\n1..1\nok 1 a\ninit: /tests/x killed by signal 11 (Segmentation fault)\n'
        o = runner.evaluate(self.job(), 139, False, text)
        self.assertEqual((o.cls, o.failed), ('killed', 1))
        self.assertIn('FAIL  vm: a program was killed by signal 11 (exit 139)', o.report)

    def test_kernel_bug_report_fails_a_program_job(self):
        bug = '[ 1.0] BUG: lock not held: spinlock &sh->siglock at kernel/signal.c:77\n'
        o = runner.evaluate(self.job(cmdline='init=/tests/x'), 0, False, ALL_PASS + bug)
        self.assertEqual(o.failed, 1)
        self.assertIn('the kernel reported 1 bug(s)', '\n'.join(o.report))
        o = runner.evaluate(self.job(cmdline='init=/tests/x'), 0, False,
                            ALL_PASS + 'process: mm 0xffff failed mm_verify at exit\n')
        self.assertEqual(o.failed, 1)
        # ktest suites provoke reports on purpose and judge them themselves.
        o = runner.evaluate(self.job(cmdline='ktest=boot,traps'), 0, False, ALL_PASS + bug)
        self.assertEqual(o.failed, 0)

    def test_high_status_fails(self):
        for rc in (128, 200, 255):
            o = runner.evaluate(self.job(), rc, False, ALL_PASS)
            self.assertEqual((o.cls, o.failed), ('status', 1))
            self.assertIn(f'FAIL  vm: unexpected exit status {rc}', o.report)

    def test_empty_plan_fails(self):
        o = runner.evaluate(self.job(), 0, False, 'KTAP version 1\n1..0\n')
        self.assertEqual((o.cls, o.passed, o.failed), ('empty', 0, 1))
        o = runner.evaluate(self.job(), 1, False, 'KTAP version 1\n1..0\n# ktest: no suite selected\n')
        self.assertEqual((o.cls, o.failed), ('empty', 1))

    def test_vanished_suite_fails(self):
        o = runner.evaluate(self.job(cmdline='ktest=boot,traps,numa'), 0, False, ALL_PASS)
        self.assertEqual((o.cls, o.passed, o.failed), ('fail', 5, 1))
        self.assertIn('not ok numa: expected suite did not run', '\n'.join(o.report))
        o = runner.evaluate(self.job(cmdline='ktest=boot', suites='boot,traps'), 0, False, ALL_PASS)
        self.assertEqual(o.failed, 0)

    def test_ktest_all_expects_every_registered_suite(self):
        suites = runner.expected_suites(self.job(cmdline='x ktest=all'))
        self.assertIn('boot', suites)
        self.assertNotIn('selftest_panic', suites)      # KTEST_SUITE_EXPLICIT
        o = runner.evaluate(self.job(cmdline='ktest=all'), 0, False, ALL_PASS)
        self.assertEqual(o.failed, len(set(suites) - {'boot', 'traps'}))

    def test_min_cases(self):
        o = runner.evaluate(self.job(min_cases='6'), 0, False, ALL_PASS)
        self.assertIn('FAIL  vm: 5 test cases reported, the plan expects at least 6', o.report)
        self.assertEqual((o.passed, o.failed), (5, 1))
        self.assertEqual(runner.evaluate(self.job(min_cases='5'), 0, False, ALL_PASS).failed, 0)

    def test_expect_new_endings(self):
        for expect, rc, text in (('crash', -11, ALL_PASS), ('status', 200, ALL_PASS),
                                 ('empty', 0, 'KTAP version 1\n1..0\n'),
                                 ('killed', 137, 'init: x killed by signal 9\n')):
            job = runner.Job('self', 'qemu', {'firmware': 'direct', 'topology': 'numa3'}, expect=expect)
            o = runner.evaluate(job, rc, False, text)
            self.assertEqual((o.passed, o.failed), (1, 0), (expect, o.report))
            o = runner.evaluate(job, 0, False, ALL_PASS)
            self.assertEqual((o.passed, o.failed), (0, 1), expect)

    def test_plan_coverage(self):
        with tempfile.TemporaryDirectory() as d:
            for f in ('tests/host/test_a.c', 'tests/host/test_b.c', 'user/tests/prog.c'):
                Path(d, f).parent.mkdir(parents=True, exist_ok=True)
                Path(d, f).write_text('')
            jobs = runner.parse_plan('a host build/tests/host/test_a\n'
                                     'p qemu firmware=direct topology=numa3 cmdline="init=/tests/prog"\n')
            rows = dict(runner.plan_coverage(jobs, d))
            self.assertEqual(rows['tests/host/test_a.c'], '')
            self.assertEqual(rows['user/tests/prog.c'], '')
            self.assertIn('no host job runs build/tests/host/test_b', rows['tests/host/test_b.c'])
            o = runner.plan_check_outcome(jobs, d)
            self.assertEqual((o.passed, o.failed), (2, 1))

    def test_plan_coverage_through_a_selftests_list(self):
        with tempfile.TemporaryDirectory() as d:
            for f, text in (('user/tests/check.c', ''), ('user/tests/other.c', ''),
                            ('tests/lselftests/mine.txt',
                             'gup_longterm\n/tests/check,16,32\n# not /tests/other\n')):
                Path(d, f).parent.mkdir(parents=True, exist_ok=True)
                Path(d, f).write_text(text)
            jobs = runner.parse_plan('l qemu firmware=direct topology=numa3 '
                                     'cmdline=\'init="/bin/init /tests/r -f /lselftests/mine.list"\'\n')
            rows = dict(runner.plan_coverage(jobs, d))
            self.assertEqual(rows['user/tests/check.c'], '')
            self.assertEqual(rows['user/tests/other.c'], 'no job starts /tests/other')

    def test_plan_coverage_of_differential_programs(self):
        with tempfile.TemporaryDirectory() as d:
            for f in ('tests/diff/a.c', 'tests/diff/b.c', 'tests/diff/expected/a.out'):
                Path(d, f).parent.mkdir(parents=True, exist_ok=True)
                Path(d, f).write_text('')
            with_job = runner.parse_plan('d qemu firmware=direct topology=numa3 '
                                         'cmdline=\'init="/bin/init /tests/r -f /diff/quire.list"\'\n')
            rows = dict(runner.plan_coverage(with_job, d))
            self.assertEqual(rows['tests/diff/a.c'], '')
            self.assertIn('no recorded output tests/diff/expected/b.out', rows['tests/diff/b.c'])
            rows = dict(runner.plan_coverage(runner.parse_plan('h host build/x\n'), d))
            self.assertEqual(rows['tests/diff/a.c'], 'no job runs /diff/quire.list')


class MceInjectTest(unittest.TestCase):
    def test_requests(self):
        injected = []
        inj = runner.MceInjector('/nonexistent', None, '/nonexistent.elf')
        inj.inject = lambda cmd, cpu, cond: injected.append((cmd, cpu, cond))
        inj.feed(b'[    1.0] boot\r\nmce-inject: when cpl=3 mce 0 1 0xbd80000000000000 7 0x1000 0x86\r\n')
        inj.feed(b'mce-inject: mce 2 1 5 7 0x2000 ')
        inj.feed(b'0x86\nmce-inject: mce 1; quit\nmce-inject: when rip=0x10-0x20 mce 3 1 1 2 3 4\n')
        inj.feed(b'mce-inject: when sym=__copy_mc_movsq mce 0 1 1 2 3 4\n')
        self.assertEqual(injected, [
            ('mce 0 1 0xbd80000000000000 7 0x1000 0x86', '0', 'cpl=3'),
            ('mce 2 1 5 7 0x2000 0x86', '2', None),
            ('mce 3 1 1 2 3 4', '3', 'rip=0x10-0x20'),
            ('mce 0 1 1 2 3 4', '0', 'sym=__copy_mc_movsq')])
        inj.feed(b'mce-inject: when after=f cr2=0x1000-0x3000 mce 1 1 1 2 3 4\n'
                 b'mce-inject: when after=g mce 0 1 1 2 3 4\nmce-inject: when after=g cr2=1-2 mce 0 1 1 2 3 4\n'
                 b'mce-inject: when after=h rsi=0x7f00-0x8000 mce 0 1 1 2 3 4\n')
        self.assertEqual(injected[4:], [('mce 1 1 1 2 3 4', '1', 'after=f cr2=0x1000-0x3000'),
                                        ('mce 0 1 1 2 3 4', '0', 'after=g'),
                                        ('mce 0 1 1 2 3 4', '0', 'after=h rsi=0x7f00-0x8000')])

    def test_symbol_resolved_from_the_kernel(self):
        with tempfile.TemporaryDirectory() as d:
            src, elf = Path(d, 'k.S'), Path(d, 'k.o')
            src.write_text('.text\n.globl f\n.type f,@function\nf: nop\nnop\nret\n.size f, . - f\n')
            if subprocess.run(['cc', '-c', str(src), '-o', str(elf)]).returncode:
                self.skipTest('no assembler')
            inj = runner.MceInjector('/nonexistent', None, elf)
            self.assertEqual(inj.resolve('sym=f'), 'rip=0x0-0x3')
            self.assertEqual(inj.resolve('cpl=3'), 'cpl=3')
            with self.assertRaises(RuntimeError):
                inj.resolve('sym=nothere')

    def test_gdbstub_exchange(self):
        """GdbStub against a fake stub: acks, checksums, the connect-time stop
        report, breakpoints, continue and step replies naming a CPU."""
        import socket
        import threading
        import gdbstub
        replies = {'Z0,ffffffff80000010,1': 'OK', 'z0,ffffffff80000010,1': 'OK',
                   'c': 'T05thread:02;', 'vCont;s:2': 'T05thread:02;', 'D': 'OK'}
        seen = []
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'gdb')
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(path)
            server.listen(1)

            def packet(data):
                return f'${data}#{gdbstub.checksum(data):02x}'.encode()

            def serve():
                conn, _ = server.accept()
                conn.sendall(packet('T02thread:01;'))     # QEMU stops the VM on connect
                buf = b''
                while True:
                    data = conn.recv(4096)
                    if not data:
                        break
                    buf += data
                    while b'#' in buf and len(buf) >= buf.index(b'#') + 3:
                        start, end = buf.index(b'$') if b'$' in buf else -1, buf.index(b'#')
                        if start < 0:
                            buf = b''
                            break
                        body = buf[start + 1:end].decode()
                        self.assertEqual(buf[end + 1:end + 3].decode(), f'{gdbstub.checksum(body):02x}')
                        buf = buf[end + 3:]
                        seen.append(body)
                        conn.sendall(b'+' + packet(replies.get(body, '')))
                conn.close()

            t = threading.Thread(target=serve)
            t.start()
            gdb = gdbstub.GdbStub(path)
            gdb.insert_breakpoint(0xffffffff80000010)
            self.assertEqual(gdb.cont(5), 1)
            gdb.remove_breakpoint(0xffffffff80000010)
            gdb.step(1)
            with self.assertRaises(gdbstub.GdbError):
                gdb.expect_ok('Z1,0,1')                     # not supported: empty reply
            gdb.detach()
            t.join(5)
            server.close()
        self.assertEqual(seen, ['Z0,ffffffff80000010,1', 'c', 'z0,ffffffff80000010,1',
                                'vCont;s:2', 'Z1,0,1', 'D'])
        self.assertEqual(gdbstub.GdbStub.stopped_cpu('T05thread:p01.0a;'), 9)
        self.assertIsNone(gdbstub.GdbStub.stopped_cpu('W00'))

    def test_plan_option(self):
        job = runner.parse_plan('m qemu firmware=direct topology=numa3 mce=inject\n')[0]
        self.assertEqual(job.opts['mce'], 'inject')
        with self.assertRaises(runner.PlanError):
            runner.parse_plan('m qemu firmware=direct topology=numa3 mce=yes\n')


class CheckTest(unittest.TestCase):
    JOB = runner.Job('vm', 'qemu', {'firmware': 'direct', 'topology': 'numa3', 'check': 'topology'})

    def test_check_adds_one_result(self):
        o = runner.evaluate(self.JOB, 0, False, ALL_PASS, checks=[('topology', [])])
        self.assertEqual((o.cls, o.passed, o.failed), ('pass', 6, 0))
        self.assertIn('PASS  vm: topology check', o.report)
        o = runner.evaluate(self.JOB, 0, False, ALL_PASS,
                            checks=[('topology', ['node 2: tier dram, expected slow'])], log_path='l.log')
        self.assertEqual((o.passed, o.failed), (5, 1))
        self.assertIn('FAIL  vm: topology check (1 mismatches)', o.report)
        self.assertIn('        node 2: tier dram, expected slow', o.report)
        self.assertIn('    --- vm: evidence (log: l.log)', o.report)

    def test_post_checks(self):
        text = 'KTAP version 1\n1..0\n' + NUMA3_SUMMARY
        self.assertEqual(runner.post_checks(self.JOB, text), [('topology', [])])
        self.assertEqual(runner.post_checks(QEMU, text), [])
        job = runner.Job('vm', 'qemu', {'firmware': 'direct', 'topology': 'memoryless', 'check': 'topology'})
        name, bad = runner.post_checks(job, text)[0]
        self.assertIn('node 1: mem 768 MiB, expected 0 MiB (up to 16 MiB less allowed)', bad)
        job.opts['topology'] = 'no-such-topology'
        self.assertIn('cannot check', runner.post_checks(job, text)[0][1][0])
        self.assertEqual(runner.topology_path('tests/qemu/topologies/uma.args'),
                         HERE / 'topologies/uma.args')


class ExpectTest(unittest.TestCase):
    def check(self, expect, rc, text, timed_out=False, passes=True):
        o = runner.evaluate(expect_job(expect, 15), rc, timed_out, text)
        self.assertEqual((o.passed, o.failed, o.skipped), (int(passes), int(not passes), 0), o.report)
        self.assertTrue(o.report[0].startswith(('PASS' if passes else 'FAIL') + '  self: expect='))
        return o

    def test_panic(self):
        self.check('panic', 2, PANIC)
        o = self.check('panic', 2, PANIC.replace('Call Trace:', 'trace:'), passes=False)
        self.assertIn('no "Call Trace:"', o.report[0])
        o = self.check('panic', 2, ALL_PASS, passes=False)
        self.assertIn('no "Kernel panic', o.report[0])
        self.check('panic', 0, ALL_PASS, passes=False)
        self.check('panic', 124, TRUNCATED, timed_out=True, passes=False)

    def test_fault(self):
        self.check('fault', 1, FAULT)
        self.check('fault', 0, FAULT, passes=False)                  # status disagrees
        self.check('fault', 1, FAULT.replace('Call Trace', 'Trace'), passes=False)
        self.check('fault', 2, PANIC, passes=False)
        self.check('fault', 1, TRUNCATED + '[ 1.0] Call Trace:\n', passes=False)  # no real not ok

    def test_fail(self):
        self.check('fail', 1, NOT_OK)
        self.check('fail', 1, FAULT)
        self.check('fail', 0, ALL_PASS, passes=False)
        o = self.check('fail', 1, ALL_PASS, passes=False)
        self.assertIn('disagrees', '\n'.join(o.report))

    def test_timeout(self):
        o = self.check('timeout', 124, TRUNCATED)
        self.assertIn('killed after 15 s', o.report[0])
        self.check('timeout', -15, 'booting\n', timed_out=True)
        self.check('timeout', 0, ALL_PASS, passes=False)
        self.check('timeout', 2, PANIC, timed_out=True, passes=False)  # a panic is no hang


class PlanTest(unittest.TestCase):
    def test_syntax(self):
        jobs = runner.parse_plan(log('''
            # comment
            h   host build/t/x timeout=5   # trailing comment
            q   qemu firmware=uefi topology=numa3 cmdline="ktest=all mem=64M" expect=panic
            c   cmd timeout=2 expect=fail -- printf 'KTAP version 1 # not a comment\\n'; exit 1
            '''))
        self.assertEqual([(j.name, j.kind, j.timeout, j.expect) for j in jobs],
                         [('h', 'host', 5, ''), ('q', 'qemu', 60, 'panic'), ('c', 'cmd', 2, 'fail')])
        self.assertEqual(jobs[0].target, 'build/t/x')
        self.assertEqual(jobs[1].opts['cmdline'], 'ktest=all mem=64M')
        self.assertEqual(jobs[2].target, "printf 'KTAP version 1 # not a comment\\n'; exit 1")

    def test_errors(self):
        for bad in ('x', 'x vm', 'x qemu topology=a firmware=floppy', 'x qemu firmware=bios',
                    'x host', 'x host a b', 'x qemu firmware=bios topology=a colour=red',
                    'x qemu firmware=bios topology=a expect=maybe', 'x cmd true',
                    'x host a timeout=-1', 'a/b host a', 'x host a\nx host b',
                    'x qemu firmware=bios topology=a cmdline="unterminated',
                    'x qemu firmware=bios topology=a check=everything',
                    'x qemu firmware=bios topology=a check=topology expect=panic',
                    'x host a check=topology'):
            with self.assertRaises(runner.PlanError, msg=bad):
                runner.parse_plan(bad)

    def test_real_plan(self):
        jobs = {j.name: j for j in runner.parse_plan((HERE.parent / 'plan.txt').read_text())}
        self.assertEqual(jobs['host-lib'].target, 'build/tests/host/test_lib')
        self.assertEqual(jobs['uefi-numa3'].timeout, 120)
        self.assertEqual(jobs['selftest-hang'].expect, 'timeout')
        self.assertEqual(jobs['selftest-hang'].timeout, 15)
        self.assertEqual(jobs['selftest-panic'].opts['cmdline'], 'ktest=selftest_panic')
        # Every self-test kind the harness relies on is in the plan.
        self.assertLessEqual({'', 'fault', 'panic', 'timeout', 'fail'},
                             {j.expect for j in jobs.values()})
        self.assertEqual(jobs['clang-direct-numa3'].opts['kernel'], 'build/clang/quire.elf')
        # The node model is checked against the topology on every machine and boot path.
        checked = {(j.opts['firmware'], j.opts['topology']) for j in jobs.values()
                   if j.opts.get('check') == 'topology'}
        for topo in ('numa3', 'uma', 'numa2', 'memoryless', 'numa3-8cpu'):
            self.assertIn(('direct', topo), checked)
        self.assertLessEqual({('bios', 'numa3'), ('uefi', 'numa3')}, checked)
        # ... and each of those boots runs every in-kernel suite.
        for topo in ('numa3', 'uma', 'numa2', 'memoryless', 'numa3-8cpu', 'numa2-6g'):
            self.assertEqual(jobs[f'direct-{topo}'].opts['cmdline'], 'ktest=all')


class EndToEndTest(unittest.TestCase):
    """runner.py as `make test` runs it, on plans of fake jobs."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def run_plan(self, plan, *opts):
        (self.dir / 'plan.txt').write_text(log(plan))
        p = subprocess.run([sys.executable, str(HERE / 'runner.py'), '--plan', str(self.dir / 'plan.txt'),
                            '--log-dir', str(self.dir / 'logs'), '--sources', str(self.dir), *opts],
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def ktap_file(self, name, text):
        path = self.dir / name
        path.write_text(text)
        return path

    def test_mixed_plan(self):
        ok, bad, panic = (self.ktap_file('ok', ALL_PASS), self.ktap_file('bad', NOT_OK),
                          self.ktap_file('panic', PANIC))
        pidfile = self.dir / 'pid'
        rc, out, err = self.run_plan(f'''
            good      cmd -- cat {ok}
            bad       cmd -- cat {bad}; exit 1
            died      cmd -- cat {panic}; exit 2
            silent    cmd -- echo just noise
            want-pan  cmd expect=panic -- cat {panic}; exit 2
            want-hang cmd timeout=1 expect=timeout -- echo KTAP version 1; sleep 300 & echo $! > {pidfile}; wait
            ''')
        self.assertEqual(rc, 1, out + err)
        lines = out.splitlines()
        # passed: 5 + 5 cases, 1 before the panic, 2 self-tests; failed: divide_error,
        # the case the panic cut off (the panic itself adds none on top), no KTAP.
        self.assertEqual(lines[-1], '13 passed, 3 failed')
        for want in ('PASS  good: boot (3/3)', 'FAIL  bad: traps (2/3; not ok: divide_error)',
                     'FAIL  died: kernel panic (exit 2)', 'FAIL  silent: no KTAP output (exit 0)',
                     'PASS  want-pan: expect=panic: kernel panic with Call Trace',
                     'PASS  want-hang: expect=timeout: killed after 1 s'):
            self.assertIn(want, lines)
        self.assertLess(lines.index('PASS  good: boot (3/3)'), lines.index('FAIL  died: kernel panic (exit 2)'))
        self.assertEqual((self.dir / 'logs/bad.log').read_text().split('\n====')[0], NOT_OK)
        # The runner killed the whole process group, including the background sleep.
        pid = int(pidfile.read_text())
        time.sleep(0.2)
        stat = Path(f'/proc/{pid}/stat')
        self.assertTrue(not stat.exists() or stat.read_text().split(') ')[1][0] == 'Z')

    def test_all_pass_skip_and_parallel(self):
        ok = self.ktap_file('ok', ALL_PASS)
        skip = self.ktap_file('skip', 'KTAP version 1\n1..2\nok 1 a\nok 2 b # SKIP no hw\n')
        rc, out, _ = self.run_plan(f'''
            a cmd -- sleep 0.5; cat {ok}
            b cmd -- cat {skip}
            ''', '--jobs', '2')
        self.assertEqual(rc, 0)
        self.assertEqual(out.splitlines(), ['PASS  a: boot (3/3)', 'PASS  a: traps (2/2)',
                                            'PASS  b (1/2; 1 skipped)', '6 passed, 0 failed, 1 skipped'])

    def test_only_list_and_usage_errors(self):
        plan = 'a cmd -- exit 0\nb cmd -- cat /nonexistent; exit 1\nc cmd -- exit 3\n'
        rc, out, _ = self.run_plan(plan, '--list')
        self.assertEqual((rc, [l.split()[0] for l in out.splitlines()]), (0, ['a', 'b', 'c']))
        rc, out, _ = self.run_plan(plan, '--only', 'b,c')
        self.assertEqual((rc, out.splitlines()[-1]), (1, '0 passed, 2 failed'))
        self.assertFalse((self.dir / 'logs/a.log').exists())
        rc, _, err = self.run_plan(plan, '--only', 'zz')
        self.assertEqual(rc, 2)
        self.assertIn('no such job: zz', err)
        rc, _, err = self.run_plan('a bogus\n')
        self.assertEqual(rc, 2)
        self.assertIn('plan.txt:1: unknown kind', err)

    def test_topology_check_end_to_end(self):
        fake = self.dir / 'run-qemu.sh'
        summary = self.ktap_file('summary', NUMA3_SUMMARY)
        fake.write_text(f'printf "KTAP version 1\\n1..1\\nok 1 numa\\n"; cat {summary}; exit 0\n')
        rc, out, _ = self.run_plan('''
            good qemu firmware=direct topology=numa3 check=topology
            bad  qemu firmware=direct topology=numa2 check=topology
            ''', '--run-qemu', str(fake))
        lines = out.splitlines()
        self.assertIn('PASS  good: topology check', lines)
        self.assertIn('FAIL  bad: topology check (7 mismatches)', lines)
        self.assertIn('        nodes: expected [0, 1], the kernel printed [0, 1, 2]', lines)
        self.assertEqual((rc, lines[-1]), (1, '3 passed, 1 failed'))

    def test_qemu_job_environment_and_verbose(self):
        fake = self.dir / 'run-qemu.sh'
        fake.write_text(log('''
            printf 'SeaBIOS\\r\\n\\033[2JKTAP version 1\\r\\n1..1\\r\\n'
            printf '# env %s|%s|%s|%s\\r\\n' "$FIRMWARE" "$TOPOLOGY" "$CMDLINE" "$TIMEOUT"
            echo "run-qemu: some stderr" >&2
            [ "$CMDLINE" = "ktest=all x=1" ] && { echo "ok 1 env"; exit 0; }
            echo "not ok 1 env"; exit 1
            '''))
        rc, out, _ = self.run_plan('''
            vm qemu firmware=bios topology=uma cmdline="ktest=all x=1" timeout=7 suites=env
            host host build/does/not/exist
            ''', '--run-qemu', str(fake), '-v')
        self.assertIn('# env bios|uma|ktest=all x=1|7', out)       # echoed live by -v
        self.assertIn('PASS  vm (1/1)', out)
        self.assertIn('FAIL  host: could not run:', out)
        self.assertEqual((rc, out.splitlines()[-1]), (1, '1 passed, 1 failed'))
        self.assertIn('run-qemu: some stderr', (self.dir / 'logs/vm.log').read_text())


if __name__ == '__main__':
    unittest.main()
