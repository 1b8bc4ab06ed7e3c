"""Tests of scripts/bench_plot.py: python3 -m unittest tests/qemu/test_bench_plot.py

Small results files go through the series extraction (no gnuplot needed),
and the gnuplot script it writes is checked for the series and axes. The
results file's merge (scripts/bench.py: which rows a new run replaces) and
its options and revision columns are checked too.
"""
import csv
import io
import os
import shutil
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))
import bench_plot  # noqa: E402
import bench  # noqa: E402

CSV = textwrap.dedent('''\
    benchmark,case,folio_size,mode,metric,value,unit
    page_alloc,host,4K,per-page,throughput,44798.000,MiB/s
    page_alloc,host,4K,folio,throughput,44024.000,MiB/s
    page_alloc,host,2M,per-page,throughput,45288.000,MiB/s
    page_alloc,host,2M,folio,throughput,1140129.000,MiB/s
    page_alloc,host,4K,per-page,ns_per_page,87.100,ns
    page_alloc,host,2M,folio,buddy_splits,16.000,steps
    page_alloc,host,2M,per-page,buddy_splits,16368.000,steps
    page_alloc,host,4M,folio,buddy_splits,0.000,steps
    page_alloc,qemu-icount,64K,folio,tsc_ticks_per_page,90.140,ticks
    page_alloc,qemu-icount,64K,per-page,tsc_ticks_per_page,505.400,ticks
    page_alloc,linux,64K,vanilla,throughput,5.990,GB/s
    page_alloc,linux,2M,batched,throughput,900000.000,MiB/s
    page_alloc,linux,2M,linux,throughput,800000.000,MiB/s
    tlb_shootdown,qemu-tcg,16K,range,ns_per_call,80000.000,ns
    tlb_shootdown,qemu-tcg,16K,per-page,ns_per_call,320000.000,ns
    tlb_shootdown,qemu-tcg/x,16K,range,ns_per_call,1.000,ns
    rmap,host/munmap/pte,64K,per-page,time,3.370,ms
    rmap,host/munmap/pte,64K,batched,time,0.980,ms
    rmap,host/munmap/pte,4K,batched,time,6.390,ms
    rmap,host/fork/pmd,2M,batched,rmap_calls,128.000,calls
    rmap,host/munmap/pte,64K,batched,rmap_calls,4096.000,calls
    rmap,host/munmap/pte,64K,per-page,rmap_calls,65536.000,calls
    rmap,host/munmap/pte,64K,batched,rmap_walk_steps,0.000,steps
    rmap,host/munmap/pte,64K,per-page,rmap_walk_steps,0.000,steps
    rmap,host/munmap/pte,64K,batched,ns_per_page,15.000,ns
    rmap,linux/munmap/pte,64K,batched,time,2.000,ms
    ''')


def rows(text=CSV):
    r = bench_plot.parse_results(list(csv.reader(io.StringIO(text))))
    assert r is not None
    return r


def plot(plots, name):
    for p in plots:
        if p.name == name:
            return p
    raise AssertionError(f'no plot {name} in {[p.name for p in plots]}')


def series(panel):
    return {s.name: s.points for s in panel.series}


class Extract(unittest.TestCase):
    def setUp(self):
        self.plots, self.notes = bench_plot.extract(rows(), expected=['page_alloc', 'gone'])

    def test_one_plot_per_benchmark_and_case(self):
        self.assertEqual([p.name for p in self.plots],
                         ['page_alloc-host', 'page_alloc-qemu-icount', 'tlb_shootdown-qemu-tcg',
                          'tlb_shootdown-qemu-tcg-x', 'rmap-host'])
        self.assertEqual(plot(self.plots, 'rmap-host').kind, 'bars')
        self.assertEqual(plot(self.plots, 'page_alloc-host').kind, 'lines')

    def test_panels_are_the_benchmarks_metrics(self):
        # ns_per_page is not drawn for page_alloc (1/throughput); a metric
        # without rows has no panel.
        self.assertEqual([p.metric for p in plot(self.plots, 'page_alloc-host').panels],
                         ['throughput', 'buddy_splits'])
        self.assertEqual([p.metric for p in plot(self.plots, 'page_alloc-qemu-icount').panels],
                         ['tsc_ticks_per_page'])
        self.assertEqual([p.metric for p in plot(self.plots, 'rmap-host').panels],
                         ['time', 'rmap_calls', 'rmap_walk_steps'])
        # A benchmark named nowhere else gets every metric it has.
        self.assertEqual([p.metric for p in plot(self.plots, 'tlb_shootdown-qemu-tcg').panels],
                         ['ns_per_call'])

    def test_series_by_mode_and_folio_bytes(self):
        tp = plot(self.plots, 'page_alloc-host').panels[0]
        self.assertEqual(tp.unit, 'MiB/s')
        s = series(tp)
        self.assertEqual(s['per-page'], {4096: 44798.0, 2 << 20: 45288.0})
        self.assertEqual(s['folio'], {4096: 44024.0, 2 << 20: 1140129.0})
        # per-page first, Quire's modes, then Linux.
        self.assertEqual([x.name for x in tp.series][:2], ['per-page', 'folio'])
        self.assertEqual(series(plot(self.plots, 'page_alloc-host').panels[1])['folio'],
                         {2 << 20: 16.0, 4 << 20: 0.0})

    def test_linux_rows_join_every_environment(self):
        for name in ('page_alloc-host',):
            tp = plot(self.plots, name).panels[0]
            self.assertEqual([(x.name, x.linux) for x in tp.series],
                             [('per-page', False), ('folio', False),
                              ('linux batched', True), ('linux', True)])
            self.assertEqual(series(tp)['linux batched'], {2 << 20: 900000.0})
            # Another unit cannot share the axis: left out, and said so.
            self.assertEqual(tp.skipped, ['linux vanilla (GB/s)'])
        self.assertNotIn('page_alloc-linux', [p.name for p in self.plots])
        rt = plot(self.plots, 'rmap-host').panels[0]
        self.assertEqual(series(rt)['linux batched'], {('munmap', '64K', 'pte'): 2.0})

    def test_subcases_are_plots_of_their_own(self):
        self.assertEqual(series(plot(self.plots, 'tlb_shootdown-qemu-tcg').panels[0]),
                         {'per-page': {16384: 320000.0}, 'range': {16384: 80000.0}})
        self.assertEqual(series(plot(self.plots, 'tlb_shootdown-qemu-tcg-x').panels[0]),
                         {'range': {16384: 1.0}})

    def test_rmap_groups(self):
        rt = plot(self.plots, 'rmap-host').panels[0]
        self.assertEqual(rt.groups, [('munmap', '4K', 'pte'), ('munmap', '64K', 'pte')])
        self.assertEqual(series(rt)['per-page'], {('munmap', '64K', 'pte'): 3.37})
        self.assertEqual(series(rt)['batched'], {('munmap', '4K', 'pte'): 6.39,
                                                 ('munmap', '64K', 'pte'): 0.98})
        calls = plot(self.plots, 'rmap-host').panels[1]
        self.assertEqual(calls.groups, [('munmap', '64K', 'pte'), ('fork', '2M', 'pmd')])

    def test_missing_rows_are_reported(self):
        self.assertIn('gone on host: no rows, no plot', self.notes)
        self.assertIn('tlb_shootdown on host: no rows, no plot', self.notes)
        self.assertIn('rmap on qemu-icount: no rows, no plot', self.notes)
        self.assertNotIn('page_alloc on host: no rows, no plot', self.notes)

    def test_metrics_option(self):
        plots, notes = bench_plot.extract(rows(), metrics=['rmap_calls'])
        self.assertEqual([p.name for p in plots], ['rmap-host'])
        self.assertIn('page_alloc on host: none of the metrics rmap_calls has a value, no plot',
                      notes)

    def test_empty(self):
        self.assertEqual(bench_plot.extract([]), ([], []))
        plots, notes = bench_plot.extract([], expected=['page_alloc'])
        self.assertEqual(plots, [])

    def test_only_linux(self):
        plots, notes = bench_plot.extract(
            rows('benchmark,case,folio_size,mode,metric,value,unit\n'
                 'migrate,linux,64K,vanilla,throughput,5.99,GB/s\n'))
        self.assertEqual(plots, [])
        self.assertEqual(notes, ['migrate: only linux rows, no plot'])

    def test_sizes(self):
        self.assertEqual(bench_plot.size_bytes('64K'), 65536)
        self.assertEqual(bench_plot.size_bytes('1G'), 1 << 30)
        self.assertIsNone(bench_plot.size_bytes('-'))
        self.assertEqual([bench_plot.size_label(1 << n) for n in (12, 21, 30)], ['4K', '2M', '1G'])


def row(bench_name, case, options='', value='1.000', revision='r1'):
    return [bench_name, case, '16K', 'range', 'ns_per_call', value, 'ns', options, revision]


class KernelBoots(unittest.TestCase):
    """Kernel benchmarks with a topology of their own boot apart (bench.KERNEL_TOPOLOGY)."""

    def test_all_leaves_them_out_and_boots_them_apart(self):
        boots = bench.kernel_boots('all', 'numa3')
        self.assertEqual(boots[0], ('all' + ''.join(f',-{n}' for n in bench.KERNEL_TOPOLOGY),
                                    'numa3'))
        self.assertEqual(boots[1:], list(bench.KERNEL_TOPOLOGY.items()))

    def test_lists_are_split(self):
        self.assertEqual(bench.kernel_boots('rmap,copy_mc', 'numa3'),
                         [('rmap', 'numa3'), ('copy_mc', bench.KERNEL_TOPOLOGY['copy_mc'])])
        self.assertEqual(bench.kernel_boots('rmap', 'uma'), [('rmap', 'uma')])
        self.assertEqual(bench.kernel_boots(None, 'numa3'), [])


class Results(unittest.TestCase):
    def test_old_header_reads_with_empty_options(self):
        r = rows()
        self.assertTrue(all(len(x) == len(bench_plot.HEADER) for x in r))
        self.assertEqual(r[0][7:], ['', ''])
        self.assertIsNone(bench_plot.parse_results([['benchmark', 'other']]))

    def test_a_run_replaces_only_its_benchmark_case_and_options(self):
        old = [row('tlb', 'qemu-icount'), row('tlb', 'qemu-icount', 'rmap_batch=0'),
               row('tlb', 'qemu-tcg'), row('page_alloc', 'qemu-icount')]
        new = [row('tlb', 'qemu-icount', value='2.000', revision='r2')]
        merged, replaced = bench.merge_rows(old, new)
        self.assertEqual(replaced, 1)
        self.assertEqual(merged, old[1:] + new)
        # Other options: kept side by side, nothing replaced.
        new = [row('tlb', 'qemu-icount', 'rmap_batch=0 x=1')]
        merged, replaced = bench.merge_rows(old, new)
        self.assertEqual((merged, replaced), (old + new, 0))
        # The same options again: that run's rows only.
        new = [row('tlb', 'qemu-icount', 'rmap_batch=0', revision='r3')]
        merged, replaced = bench.merge_rows(old, new)
        self.assertEqual(replaced, 1)
        self.assertEqual(merged, [old[0]] + old[2:] + new)

    def test_write_csv_upgrades_an_older_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'results.csv')
            Path(path).write_text(CSV)
            self.assertEqual(bench.write_csv(path, [row('tlb_shootdown', 'qemu-tcg', 'a=1')]), 0)
            with open(path, newline='') as f:
                back = list(csv.reader(f))
            self.assertEqual(back[0], bench_plot.HEADER)
            self.assertEqual(back[1:-1], rows())
            self.assertEqual(back[-1], row('tlb_shootdown', 'qemu-tcg', 'a=1'))

    def test_options_are_tables_and_plots_of_their_own(self):
        r = rows() + [row('tlb_shootdown', 'qemu-tcg', 'rmap_batch=0'),
                      row('tlb_shootdown', 'qemu-tcg/x', 'init=/a b')]
        names = [p.name for p in bench_plot.extract(r)[0]]
        self.assertIn('tlb_shootdown-qemu-tcg', names)
        self.assertIn('tlb_shootdown-qemu-tcg[rmap_batch=0]', names)
        self.assertIn('tlb_shootdown-qemu-tcg[init=:a,b]-x', names)
        p = plot(bench_plot.extract(r)[0], 'tlb_shootdown-qemu-tcg[rmap_batch=0]')
        self.assertEqual(p.env, 'qemu-tcg')
        out = io.StringIO()
        bench.print_tables(r, ['ns_per_call'], False, out)
        self.assertIn('tlb_shootdown on qemu-tcg[rmap_batch=0]', out.getvalue())
        self.assertIn('tlb_shootdown on qemu-tcg (gain', out.getvalue())
        out = io.StringIO()
        bench.print_runs(r, out)
        self.assertIn('qemu-tcg[rmap_batch=0]: revision r1', out.getvalue())
        self.assertIn('host: revision not recorded', out.getvalue())


class Script(unittest.TestCase):
    def test_gnuplot_script(self):
        plots, _ = bench_plot.extract(rows())
        gp = bench_plot.gnuplot_script(plot(plots, 'page_alloc-host'), 'x.png')
        self.assertIn('set output "x.png"', gp)
        self.assertIn('set multiplot layout 2,1', gp)
        self.assertIn('set xtics ("4K" 4096, "2M" 2097152)', gp)
        self.assertIn('set logscale y 10', gp)	# 44024 .. 1140129
        self.assertIn('title "linux batched"', gp)
        self.assertIn('page_alloc on host: throughput (MiB/s), higher is better', gp)
        # The 0 of a log panel is not drawn, and the title says so.
        self.assertIn('4194304 ?', gp)
        self.assertIn('0 not drawn', gp)
        bars = bench_plot.gnuplot_script(plot(plots, 'rmap-host'), 'r.png')
        self.assertIn('set label "munmap"', bars)
        self.assertIn('set xtics ("4K pte" 0, "64K pte" 1) scale 0', bars)
        self.assertIn('set label "0" at first', bars)	# rmap_walk_steps 0, linear
        self.assertIn('boxxyerrorbars', bars)

    @unittest.skipUnless(shutil.which('gnuplot'), 'no gnuplot')
    def test_draws(self):
        with tempfile.TemporaryDirectory() as d:
            log = io.StringIO()
            self.assertEqual(bench_plot.write_plots(rows(), d, log=log), 0, log.getvalue())
            self.assertEqual(sorted(f for f in os.listdir(d) if f.endswith('.png')),
                             ['page_alloc-host.png', 'page_alloc-qemu-icount.png',
                              'rmap-host.png', 'tlb_shootdown-qemu-tcg-x.png',
                              'tlb_shootdown-qemu-tcg.png'])


if __name__ == '__main__':
    unittest.main()
