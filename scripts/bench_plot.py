#!/usr/bin/env python3
"""Plots of make bench's results, from results.csv alone (docs/bench.md, "Plots").

  scripts/bench_plot.py [--results build/bench/results.csv] [--out build/bench/plots]
                        [--metrics a,b]
  scripts/bench.py --plot                  the same, from bench.py

Writes one PNG per benchmark and environment (and per benchmark case, where a
benchmark has cases other than rmap's), each a column of panels, one per
metric: BENCH-ENV.png. Beside each PNG is the gnuplot script that drew it,
data included (BENCH-ENV.gp: `gnuplot BENCH-ENV.gp` draws it again).

- A benchmark by folio size (page_alloc, tlb_shootdown, any new one): x is the
  folio size on a log scale (4K, 8K, ... 2M), one line per mode.
- rmap: grouped bars, x is operation x folio layout, one bar per mode, log y.

A run with extra kernel options (the `options` column) is drawn apart, its
environment shown as ENV[OPTIONS] (BENCH-ENV[OPTIONS].png).

Rows measured on Linux are named like Quire's, with the environment `linux`:
case `linux` (or `linux/SUBCASE`; for rmap `linux/OP/MAP`) and mode the Linux
variant measured (`vanilla`, `batched`, ...). They are drawn, dashed, as series
`linux MODE` in every plot of the same benchmark (and subcase, folio size,
metric and unit); a row with mode `linux` in one of Quire's environments is
simply one more mode, its own series too.

gnuplot (Debian gnuplot-nox, scripts/deps.sh --for bench) does the drawing;
this file only extracts the series and writes the scripts.
"""
import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys

# A result; then the run's extra kernel options (make bench BENCH_CMDLINE=...)
# and the tree's `git describe --always --dirty`. Files written before those
# two columns existed read as having them empty.
FIELDS = ['benchmark', 'case', 'folio_size', 'mode', 'metric', 'value', 'unit']
HEADER = FIELDS + ['options', 'revision']
ENVS = ['host', 'qemu-tcg', 'qemu-icount']
LINUX = 'linux'
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The metrics drawn, in order, per benchmark (the others are the same
# information again: ns_per_page is 1/throughput, buddy_merges = buddy_splits).
# A benchmark not named here gets all of its metrics.
PLOT_METRICS = {
    'page_alloc': ['throughput', 'tsc_ticks_per_page', 'buddy_splits'],
    'rmap': ['time', 'rmap_calls', 'ptl_acquire', 'tlb_flushes', 'rmap_walk_steps'],
    'gup': ['get_insn_per_page', 'put_insn_per_page', 'get_us'],
    'hmm_migrate': ['throughput', 'ptl_acquire', 'rmap_walk_steps'],
}
GROUPED = {'rmap'}		# benchmarks drawn as bars by OP/MAP, not lines by size
RMAP_OPS = ['munmap', 'fork', 'cow', 'dontneed', 'pte-remap']
RMAP_LAYOUTS = [('4K', 'pte'), ('64K', 'pte'), ('2M', 'pte'), ('2M', 'pmd')]
XLABEL = {'tlb_shootdown': 'range flushed', 'hmm_migrate': 'range migrated'}
ENV_NOTE = {
    'host': 'mm/ built for the host on a simulated numa3 machine, -O2, wall time',
    'qemu-tcg': 'the kernel under QEMU TCG, numa3, wall time',
    'qemu-icount': 'the kernel under QEMU -icount shift=0, numa3: virtual time, '
                   '1 ns = 1 guest instruction',
}
METRIC_NOTE = {
    ('qemu-icount', 'tsc_ticks_per_page'): 'guest instructions',
}
# A log y axis when the positive values span more than this factor.
LOG_SPAN = 20
BASE_COLOR = '#0072b2'		# per-page: the baseline, always blue
COLORS = ['#d55e00', '#e69f00', '#56b4e9', '#000000']
LINUX_COLORS = ['#009e73', '#cc79a7', '#7f7f7f', '#f0e442']


class Series:
    def __init__(self, name, linux=False):
        self.name = name
        self.linux = linux
        self.points = {}	# x (folio bytes, or a group key) -> value

    def __repr__(self):
        return f'Series({self.name!r}, {self.points!r})'


class Panel:
    def __init__(self, metric, unit):
        self.metric = metric
        self.unit = unit
        self.series = []
        self.groups = []	# bars: the x groups (op, folio, map) in order
        self.skipped = []	# linux series left out: another unit

    def get(self, name, linux=False):
        for s in self.series:
            if s.name == name:
                return s
        s = Series(name, linux)
        self.series.append(s)
        return s


class Plot:
    def __init__(self, benchmark, case, kind):
        self.benchmark = benchmark
        self.case = case		# ENV or ENV/SUBCASE
        self.env = case.split('/')[0].split('[')[0]	# without its options
        self.kind = kind		# 'lines' or 'bars'
        self.panels = []
        self.name = f'{benchmark}-{case.replace("/", "-")}'

    def panel(self, metric):
        for p in self.panels:
            if p.metric == metric:
                return p
        return None


def size_bytes(label):
    """'64K' -> 65536; None for '-' and anything else that is not a size."""
    m = re.fullmatch(r'(\d+)([BKMGT]?)', label)
    if not m:
        return None
    return int(m.group(1)) << (10 * 'BKMGT'.index(m.group(2) or 'B'))


def size_label(n):
    for i, suffix in reversed(list(enumerate('BKMGT'))):
        if i and n % (1 << (10 * i)) == 0:
            return f'{n >> (10 * i)}{suffix}'
    return str(n)


def first_seen(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def parse_results(rows):
    """The rows (header first) of a results file, each of len(HEADER); None
    when the header is neither HEADER nor the older FIELDS."""
    if not rows or rows[0] not in (HEADER, FIELDS):
        return None
    extra = len(HEADER) - len(rows[0])
    return [r + [''] * extra for r in rows[1:] if len(r) == len(rows[0])]


def read_results(path):
    """Rows of a results file (without the header); [] when there is none."""
    if not os.path.exists(path):
        return []
    with open(path, newline='') as f:
        rows = list(csv.reader(f))
    parsed = parse_results(rows)
    if parsed is None:
        raise ValueError(f'{path}: not a results file (header {rows[0] if rows else None})')
    return parsed


def options_label(options):
    """The options as they show in a case: no '/' (it separates subcases)."""
    return ','.join(options.replace('/', ':').split())


def by_options(rows):
    """Rows with their options folded into the environment, ENV[OPTIONS], so
    that runs with other kernel options are tables and plots of their own."""
    out = []
    for r in rows:
        opts = options_label(r[7]) if len(r) > 7 else ''
        if opts:
            env, sep, rest = r[1].partition('/')
            r = [r[0], f'{env}[{opts}]{sep}{rest}'] + r[2:]
        out.append(r)
    return out


def series_name(mode, linux):
    if not linux:
        return mode
    return LINUX if mode in ('', '-', LINUX) else f'{LINUX} {mode}'


def order_series(panel):
    """per-page first (the baseline), the other Quire modes as seen, Linux last."""
    panel.series.sort(key=lambda s: (s.linux, s.name != 'per-page'))


def extract(rows, metrics=None, expected=()):
    """The plots that rows give, and a message for each plot left out.

    rows: results.csv rows; metrics: the metrics to draw (default
    PLOT_METRICS, else all); expected: benchmark names that should have rows
    (a benchmark without any in some environment that other rows use is
    reported as skipped)."""
    plots, notes = [], []
    by_bench = {}
    rows = by_options(rows)
    for r in rows:
        by_bench.setdefault(r[0], []).append(r)
    envs_seen = [e for e in ENVS if any(r[1].split('/')[0] == e for r in rows)]
    envs_seen += [e for e in first_seen(r[1].split('/')[0] for r in rows)
                  if e not in envs_seen and e != LINUX]
    for bench in first_seen(list(expected) + list(by_bench)):
        brows = by_bench.get(bench, [])
        grouped = bench in GROUPED
        want = metrics or PLOT_METRICS.get(bench) or first_seen(r[4] for r in brows)
        quire = [r for r in brows if r[1].split('/')[0] != LINUX]
        linux = [r for r in brows if r[1].split('/')[0] == LINUX]
        # One plot per case (ENV or ENV/SUBCASE); rmap's OP/MAP are groups.
        if grouped:
            cases = first_seen(r[1].split('/')[0] for r in quire)
        else:
            cases = first_seen(r[1] for r in quire)
        for env in envs_seen:
            if not any(c.split('/')[0] == env for c in cases):
                notes.append(f'{bench} on {env}: no rows, no plot')
        if linux and not quire:
            notes.append(f'{bench}: only {LINUX} rows, no plot')
        for case in cases:
            sub = case.split('/', 1)[1] if '/' in case else ''
            if grouped:
                mine = [r for r in quire if r[1].split('/')[0] == case]
                theirs = linux
            else:
                mine = [r for r in quire if r[1] == case]
                theirs = [r for r in linux if r[1] == (f'{LINUX}/{sub}' if sub else LINUX)]
            plot = build_plot(bench, case, grouped, want, mine, theirs)
            if plot.panels:
                plots.append(plot)
            else:
                notes.append(f'{bench} on {case}: none of the metrics '
                             f'{",".join(want)} has a value, no plot')
    return plots, notes


def group_key(case):
    """rmap's case ENV/OP/MAP -> (OP, MAP); None when it is not one."""
    parts = case.split('/')
    return (parts[1], parts[2]) if len(parts) == 3 else None


def build_plot(bench, case, grouped, metrics, rows, linux_rows):
    plot = Plot(bench, case, 'bars' if grouped else 'lines')
    for metric in metrics:
        mrows = [r for r in rows if r[4] == metric]
        if not mrows:
            continue
        panel = Panel(metric, mrows[0][6])
        for src, is_linux in ((mrows, False), ([r for r in linux_rows if r[4] == metric], True)):
            for r in src:
                if r[6] != panel.unit:
                    note = f'{series_name(r[3], is_linux)} ({r[6]})'
                    if note not in panel.skipped:
                        panel.skipped.append(note)
                    continue
                try:
                    value = float(r[5])
                except ValueError:
                    continue
                if grouped:
                    k = group_key(r[1])
                    if k is None:
                        continue
                    x = (k[0], r[2], k[1])
                else:
                    x = size_bytes(r[2])
                    if x is None:
                        continue
                panel.get(series_name(r[3], is_linux), is_linux).points[x] = value
        panel.series = [s for s in panel.series if s.points]
        if not any(not s.linux for s in panel.series):
            continue
        order_series(panel)
        if grouped:
            panel.groups = order_groups({x for s in panel.series for x in s.points})
        plot.panels.append(panel)
    return plot


def order_groups(keys):
    def key(g):
        op, size, mapping = g
        oi = RMAP_OPS.index(op) if op in RMAP_OPS else len(RMAP_OPS)
        li = (RMAP_LAYOUTS.index((size, mapping)) if (size, mapping) in RMAP_LAYOUTS
              else len(RMAP_LAYOUTS))
        return (oi, op, li, size_bytes(size) or 0, mapping)
    return sorted(keys, key=key)


# ---- gnuplot ----

def q(s):
    """A gnuplot double-quoted string."""
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def num(v):
    return f'{v:.6g}'


def yaxis(values):
    """(log, low, high) for the values of one panel."""
    pos = [v for v in values if v > 0]
    if not pos:
        return False, 0, 1
    lo, hi = min(pos), max(pos)
    if hi / lo > LOG_SPAN:
        # At least half a decade below the smallest value: its bar stays visible.
        return True, 10 ** math.floor(math.log10(lo / 3)), 10 ** math.ceil(math.log10(hi * 1.5))
    return False, 0, hi * 1.15 if hi > 0 else 1


def style(panel, s):
    quire = [x for x in panel.series if not x.linux]
    linux = [x for x in panel.series if x.linux]
    if s.linux:
        return LINUX_COLORS[linux.index(s) % len(LINUX_COLORS)], 2
    if s.name == 'per-page':
        return BASE_COLOR, 1
    others = [x for x in quire if x.name != 'per-page']
    return COLORS[others.index(s) % len(COLORS)], 1


def panel_title(plot, panel):
    better = 'higher is better' if panel.unit.endswith('/s') else 'lower is better'
    note = METRIC_NOTE.get((plot.env, panel.metric))
    t = f'{plot.benchmark} on {plot.case}: {panel.metric} ({panel.unit}'
    t += f' = {note})' if note else ')'
    t += f', {better}'
    values = [v for s in panel.series for v in s.points.values()]
    if not any(values):
        return t + '; all 0'
    zeros = any(v <= 0 for v in values)
    if zeros and yaxis(values)[0]:
        t += '; 0 not drawn (log scale)' if plot.kind == 'lines' else '; 0 marked "0"'
    if panel.skipped:
        t += '; left out, another unit: ' + ', '.join(panel.skipped)
    return t


def gnuplot_script(plot, png):
    lines_panels = plot.kind == 'lines'
    width = 1000 if lines_panels else 1400
    per = 330 if lines_panels else 340
    height = 80 + per * len(plot.panels)
    title = f'{plot.benchmark} on {plot.case}'
    if plot.env in ENV_NOTE:
        title += f': {ENV_NOTE[plot.env]}'
    out = [f'# {plot.name}: drawn by scripts/bench_plot.py from results.csv; '
           f'`gnuplot {plot.name}.gp` draws it again.',
           f'set terminal pngcairo noenhanced size {width},{height} font "sans,10"',
           f'set output {q(png)}',
           'set datafile missing "?"',
           'set grid ytics mytics lc rgb "#dddddd"',
           'set key outside right top vertical samplen 3',
           'set border 3', 'set tics nomirror', 'set format y "%g"',
           f'set multiplot layout {len(plot.panels)},1 title {q(title)} font "sans,12"']
    for i, panel in enumerate(plot.panels):
        values = [v for s in panel.series for v in s.points.values()]
        log, lo, hi = yaxis(values)
        out += ['', f'# panel {i + 1}: {panel.metric} ({panel.unit})', 'unset label; unset arrow; unset logscale',
                f'set title {q(panel_title(plot, panel))}',
                f'set ylabel {q(f"{panel.metric} ({panel.unit})")}',
                f'set yrange [{num(lo)}:{num(hi)}]']
        out.append('set logscale y 10' if log else 'unset logscale y')
        if lines_panels:
            out += lines_panel(plot, panel, i, log)
        else:
            out += bars_panel(plot, panel, i, log, lo)
    out += ['unset multiplot', '']
    return '\n'.join(out)


def lines_panel(plot, panel, i, log):
    xs = sorted({x for s in panel.series for x in s.points})
    out = ['set logscale x 2',
           f'set xrange [{num(xs[0] / 1.3)}:{num(xs[-1] * 1.3)}]',
           'set xtics (' + ', '.join(f'{q(size_label(x))} {x}' for x in xs) + ')',
           f'set xlabel {q(XLABEL.get(plot.benchmark, "folio size"))}',
           'set bmargin 4']
    cmds = []
    for j, s in enumerate(panel.series):
        block = f'$p{i}s{j}'
        color, dash = style(panel, s)
        if log and not any(v > 0 for v in s.points.values()):	# the key only
            cmds.append(f'keyentry with linespoints lw 2 pt {7 if not s.linux else 5} '
                        f'dt {dash} lc rgb {q(color)} title {q(s.name)}')
            continue
        out.append(f'{block} << EOD')
        for x in sorted(s.points):
            v = s.points[x]
            out.append(f'{x} {num(v) if v > 0 or not log else "?"}')
        out.append('EOD')
        cmds.append(f'{block} using 1:2 with linespoints lw 2 pt {7 if not s.linux else 5} '
                    f'ps 0.8 dt {dash} lc rgb {q(color)} title {q(s.name)}')
    if all(c.startswith('keyentry') for c in cmds):
        cmds.insert(0, 'NaN notitle')	# gnuplot needs something on the axes
    out.append('plot ' + ', \\\n     '.join(cmds))
    return out


def bars_panel(plot, panel, i, log, lo):
    groups = panel.groups
    n = len(panel.series)
    w = 0.8 / n
    out = ['set xrange [-0.6:' + num(len(groups) - 0.4) + ']',
           'set xtics (' + ', '.join(f'{q(f"{g[1]} {g[2]}")} {k}' for k, g in enumerate(groups))
           + ') scale 0',
           'set xlabel "operation and folio layout" offset 0,-1.2',
           'set bmargin 5.5',
           'set style fill solid 0.85 border -1']
    # Operation names under their groups, dotted lines between operations.
    ops = first_seen(g[0] for g in groups)
    for op in ops:
        ks = [k for k, g in enumerate(groups) if g[0] == op]
        out.append(f'set label {q(op)} at first {num((ks[0] + ks[-1]) / 2)}, graph 0 '
                   'center offset 0,-2.3 font "sans,10"')
        if ks[0]:
            out.append(f'set arrow from first {num(ks[0] - 0.5)}, graph 0 to first '
                       f'{num(ks[0] - 0.5)}, graph 1 nohead dt 3 lc rgb "#999999"')
    cmds, blocks = [], []
    for j, s in enumerate(panel.series):
        block = f'$p{i}s{j}'
        blocks.append(f'{block} << EOD')
        for k, g in enumerate(groups):
            if g not in s.points:
                continue
            x = k + (j - (n - 1) / 2) * w
            v = s.points[g]
            if v <= 0:
                # No bar to see: say 0 where it would stand.
                out.append(f'set label "0" at first {num(x)}, first {num(lo)} center '
                           'offset 0,0.6 font "sans,8"')
                continue
            blocks.append(f'{num(x)} {num(v)} {num(x - w * 0.45)} {num(x + w * 0.45)} '
                          f'{num(lo)} {num(v)}')
        blocks.append('EOD')
        color, _ = style(panel, s)
        pattern = ' fs pattern 4 border lc rgb ' + q(color) if s.linux else ''
        if blocks[-2] == f'{block} << EOD':	# nothing to draw (all 0): the key only
            del blocks[-2:]
            cmds.append(f'keyentry with boxes lc rgb {q(color)}{pattern} title {q(s.name)}')
            continue
        cmds.append(f'{block} using 1:2:3:4:5:6 with boxxyerrorbars lc rgb {q(color)}'
                    f'{pattern} title {q(s.name)}')
    out += blocks
    if all(c.startswith('keyentry') for c in cmds):
        cmds.insert(0, 'NaN notitle')	# gnuplot needs something on the axes
    out.append('plot ' + ', \\\n     '.join(cmds))
    return out


# ---- driver ----

def kbench_names(root=ROOT):
    """The benchmarks that tests/kernel/bench_*.c register (KBENCH(name, ...))."""
    names = []
    d = os.path.join(root, 'tests', 'kernel')
    if not os.path.isdir(d):
        return names
    for f in sorted(os.listdir(d)):
        if f.startswith('bench_') and f.endswith('.c'):
            with open(os.path.join(d, f), errors='replace') as fh:
                names += re.findall(r'^KBENCH\((\w+),', fh.read(), re.M)
    return names


def write_plots(rows, outdir, metrics=None, expected=(), log=sys.stdout):
    """Draw every plot into outdir; return the number of failures."""
    plots, notes = extract(rows, metrics, expected)
    for n in notes:
        print(f'bench-plot: {n}', file=log)
    if not plots:
        print('bench-plot: nothing to plot', file=log)
        return 0
    gnuplot = shutil.which('gnuplot')
    if not gnuplot:
        print('bench-plot: gnuplot is missing (scripts/deps.sh --for bench, or '
              'apt-get install gnuplot-nox); no plots', file=sys.stderr)
        return 1
    os.makedirs(outdir, exist_ok=True)
    # Everything here is ours: drop the plots of an earlier results file.
    for f in os.listdir(outdir):
        if f.endswith(('.png', '.gp')):
            os.remove(os.path.join(outdir, f))
    failed = 0
    for plot in plots:
        gp = os.path.join(outdir, plot.name + '.gp')
        with open(gp, 'w') as f:
            f.write(gnuplot_script(plot, plot.name + '.png'))
        p = subprocess.run([gnuplot, plot.name + '.gp'], cwd=outdir, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        msg = p.stdout.decode(errors='replace').strip()
        if p.returncode != 0 or not os.path.exists(os.path.join(outdir, plot.name + '.png')):
            print(f'bench-plot: gnuplot failed on {gp}:\n{msg}', file=sys.stderr)
            failed += 1
            continue
        if msg:
            print(f'bench-plot: {gp}: {msg}', file=sys.stderr)
        print(f'bench-plot: {os.path.join(outdir, plot.name + ".png")}', file=log)
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--results', default='build/bench/results.csv')
    ap.add_argument('--out', help='plot folder [the results file\'s folder/plots]')
    ap.add_argument('--metrics', help='metrics to draw (default: per benchmark, PLOT_METRICS)')
    args = ap.parse_args()
    out = args.out or os.path.join(os.path.dirname(args.results) or '.', 'plots')
    try:
        rows = read_results(args.results)
    except ValueError as e:
        sys.exit(f'bench-plot: {e}')
    if not rows:
        sys.exit(f'bench-plot: no results in {args.results} (run make bench)')
    metrics = [m for m in args.metrics.split(',') if m] if args.metrics else None
    return 1 if write_plots(rows, out, metrics, kbench_names()) else 0


if __name__ == '__main__':
    sys.exit(main())
