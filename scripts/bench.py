#!/usr/bin/env python3
"""Run Quire's benchmarks and collect their results (make bench; docs/bench.md).

Builds nothing: `make bench` builds the kernel and the host benchmarks first.
Runs, in this order,
  host         each host benchmark program given on the command line
  qemu-tcg     the kernel under QEMU (TCG, wall time), FIRMWARE=direct,
               TOPOLOGY=numa3, CMDLINE="bench=all"
  qemu-icount  the same with -icount shift=0: one TSC tick per guest
               instruction, deterministic (and single-threaded TCG)
and, in both QEMU environments, the ring-3 benchmarks (user/bench/*.c,
USER_BENCHES) as init= programs of Quire, booted with debug_pagealloc=0
(and what USER_BENCH_CMDLINE adds),
and `gup`: Linux 6.12's own gup_test binary (from the selftests initrd,
scripts/linux-selftests.sh build) pinning 256 MiB, one boot per mapping
(64K mTHP, 2M THP, 4K) and gup_batch (1, 0), its microseconds made into
rows (and, under -icount, instructions per page);
  linux        the same ring-3 programs (but QUIRE_ONLY's) on Linux 6.12 (Debian's cloud
               kernel, scripts/linux-selftests.sh boot-linux: fetched once),
               on the same QEMU machine with -icount shift=0
collects every "bench-csv: benchmark,case,folio_size,mode,metric,value,unit"
line, puts the environment into `case` (an empty case becomes the
environment, any other becomes ENV/case), adds the run's extra kernel
options (--cmdline, appended to bench=...; empty for host runs) and the
tree's `git describe --always --dirty`, and writes them to
BUILD/bench/results.csv. A new run replaces the rows of the same benchmark,
case and options and keeps everything else, so runs with other options stay
side by side (shown as ENV[OPTIONS]). Then it prints one table per benchmark
and environment: rows = folio size, columns = per mode, and the gain. The
rmap benchmark gets a table of its own: rows = operation and folio layout,
columns = per-page, batched and their ratio for each metric.

  scripts/bench.py [--only host,qemu-tcg,qemu-icount] [--bench all] [--cmdline OPTS] HOSTBIN...
  scripts/bench.py --show [--markdown]     tables from results.csv, no runs
  scripts/bench.py --plot                  plots from results.csv, no runs

After a run, it draws the plots of the whole results file into
BUILD/bench/plots (scripts/bench_plot.py; --no-plot leaves them alone).
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_plot  # noqa: E402

FIELDS = bench_plot.FIELDS		# what a bench-csv line holds
HEADER = bench_plot.HEADER		# and the run's options and revision
OPTIONS, REVISION = HEADER.index('options'), HEADER.index('revision')
ENVS = ['host', 'qemu-tcg', 'qemu-icount', 'linux']
# The ring-3 benchmarks: name -> the program in the initrd and its arguments
# (the same binary on Quire and on Linux; docs/bench.md, "migrate").
USER_BENCHES = {'move_pages': ('/bench/move_pages_bench', ['64']),
                'hmm_migrate': ('/bench/hmm_migrate_bench', ['2', '8', '256'])}
# Kernel options a ring-3 benchmark's boot needs (hmm_migrate: device memory
# for 256 MiB, docs/bench.md "hmm_migrate").
USER_BENCH_CMDLINE = {'hmm_migrate': 'devmem=288'}
# Ring-3 benchmarks Linux cannot run: Debian's cloud kernel has no test_hmm.
QUIRE_ONLY = {'hmm_migrate'}
# Kernel benchmarks booted apart, on a topology of their own: copy_mc copies
# 1 GiB folios, and numa3's 768 MiB nodes hold none (docs/bench.md, "copy_mc").
KERNEL_TOPOLOGY = {'copy_mc': 'numa2-6g'}
ICOUNT_ARGS = '-icount shift=0'
TABLE_METRICS = 'throughput,tsc_ticks_per_page,buddy_splits'
# Benchmarks whose tables show other metrics than TABLE_METRICS.
BENCH_TABLE_METRICS = {'gup': ['get_insn_per_page', 'put_insn_per_page', 'get_us', 'put_us'],
                       'hmm_migrate': ['throughput', 'ns_per_page', 'ptl_acquire',
                                       'rmap_walk_steps', 'tlb_flushes']}
# gup (docs/bench.md "gup"): mapping -> gup_test's THP flag and the boot's THP options;
# command -> its gup_test flag (-L: PIN_LONGTERM_BENCHMARK, -a: PIN_FAST_BENCHMARK).
GUP_MAPPINGS = {'64K': ('-t', 'transparent_hugepage=never thp_anon=64K:always'),
                '2M': ('-t', ''), '4K': ('-T', '')}
GUP_COMMANDS = {'PIN_LONGTERM': '-L', 'PIN_FAST': '-a'}
GUP_PAGES = 65536
GUP_ARGS = f'-m,256,-n,{GUP_PAGES},-r,16'
GUP_LINE = re.compile(r'([A-Z_]+)_BENCHMARK: Time: get:(\d+) put:(\d+) us')
# The rmap table's columns unless --metrics names some of its metrics.
RMAP_METRICS = ['time', 'rmap_calls', 'ptl_acquire', 'tlb_flushes', 'rmap_walk_steps']
RMAP_OPS = ['munmap', 'fork', 'cow', 'dontneed', 'pte-remap']
RMAP_LAYOUTS = [('4K', 'pte'), ('64K', 'pte'), ('2M', 'pte'), ('2M', 'pmd')]
CSV_LINE = re.compile(r'bench-csv: (.*?)\s*$')
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_rows(text, env, source):
    rows = []
    for line in text.splitlines():
        m = CSV_LINE.search(line)
        if not m:
            continue
        fields = m.group(1).split(',')
        if len(fields) != len(FIELDS):
            print(f'bench: {source}: ignoring a malformed line: {line.strip()}', file=sys.stderr)
            continue
        fields[1] = env if not fields[1] else f'{env}/{fields[1]}'
        rows.append(fields)
    return rows


def run_logged(name, cmd, env, timeout, logdir):
    """Run cmd, keep its output in logdir/name.log; return (status, output)."""
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout + 30, cwd=ROOT)
        status, out = p.returncode, p.stdout.decode(errors='replace')
    except subprocess.TimeoutExpired as e:
        status, out = 124, (e.stdout or b'').decode(errors='replace')
    with open(os.path.join(logdir, f'{name}.log'), 'w') as f:
        f.write(out)
    print(f'bench: {name}: status {status} in {time.monotonic() - start:.1f} s '
          f'(log: {os.path.join(logdir, name + ".log")})', flush=True)
    return status, out


def run_host(binary, spec, timeout, logdir):
    name = 'host-' + os.path.basename(binary)
    return run_logged(name, [os.path.abspath(binary), spec], os.environ.copy(), timeout, logdir)


def run_qemu(env_name, args, extra):
    cmdline = f'bench={args.bench} {args.cmdline}'.strip()
    env = dict(os.environ, FIRMWARE='direct', TOPOLOGY=args.topology,
               CMDLINE=cmdline, KERNEL=args.kernel, BUILD=args.build,
               QEMU_EXTRA=extra, TIMEOUT=str(args.timeout))
    # A benchmark booted apart (KERNEL_TOPOLOGY) keeps a log of its own: ENV-NAME.log.
    name = f'{env_name}-{args.bench}' if args.bench in KERNEL_TOPOLOGY else env_name
    return run_logged(name, ['bash', 'scripts/run-qemu.sh'], env, args.timeout, args.logdir)


def user_bench_names(spec):
    return [n for n in USER_BENCHES if spec == 'all' or n in spec.split(',')]


def kernel_spec(spec):
    """What bench= gets: 'all', the kernel's names of a list, or None (only ring-3 ones)."""
    if spec == 'all':
        return spec
    names = [n for n in spec.split(',') if n not in USER_BENCHES and n != 'gup']
    return ','.join(names) if names else None


def median(values):
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def run_gup_qemu(env_name, args, extra):
    """The gup benchmark: six Quire boots, gup_test -L and -a in each; bench-csv lines out."""
    initrd = os.path.join(args.build, 'lselftests', 'initrd.cpio')
    if not os.path.exists(initrd):
        return 1, f'bench: {initrd} is missing (make lselftests builds it)'
    lines, status = [], 0
    for mapping, (thp, opts) in GUP_MAPPINGS.items():
        for batch, mode in (('0', 'per-page'), ('1', 'batched')):
            progs = ' '.join(f'/lselftests/gup_test,{flag},{GUP_ARGS},{thp}'
                             for flag in GUP_COMMANDS.values())
            cmdline = (f'init="/bin/init /tests/kselftest_run -t {args.timeout} {progs}" '
                       f'gup_batch={batch} debug_pagealloc=0 {opts} {args.cmdline}').strip()
            env = dict(os.environ, FIRMWARE='direct', TOPOLOGY=args.topology, CMDLINE=cmdline,
                       KERNEL=args.kernel, BUILD=args.build, INITRD=initrd, QEMU_EXTRA=extra,
                       TIMEOUT=str(args.timeout + 60))
            name = f'{env_name}-gup-{mapping}-batch{batch}'
            st, out = run_logged(name, ['bash', 'scripts/run-qemu.sh'], env, args.timeout + 120,
                                 args.logdir)
            status = status or st
            times = {}
            for m in GUP_LINE.finditer(out):
                times.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3))))
            for cmd in GUP_COMMANDS:
                if not times.get(cmd):
                    print(f'bench: {name}: no {cmd}_BENCHMARK line (log: {args.logdir}/{name}.log)',
                          file=sys.stderr)
                    status = status or st or 1
                    continue
                get = median(t[0] for t in times[cmd])
                put = median(t[1] for t in times[cmd])
                lines.append(f'bench-csv: gup,{cmd},{mapping},{mode},get_us,{get:g},us')
                lines.append(f'bench-csv: gup,{cmd},{mapping},{mode},put_us,{put:g},us')
                if extra == ICOUNT_ARGS:	# one guest instruction a nanosecond
                    for metric, us in (('get', get), ('put', put)):
                        lines.append(f'bench-csv: gup,{cmd},{mapping},{mode},'
                                     f'{metric}_insn_per_page,{us * 1000 / GUP_PAGES:.1f},insn/page')
    return status, '\n'.join(lines)


def kernel_boots(kspec, topology):
    """The kernel boots for kspec: [(bench=..., topology)], KERNEL_TOPOLOGY's apart."""
    if not kspec:
        return []
    if kspec == 'all':
        rest = 'all' + ''.join(f',-{n}' for n in KERNEL_TOPOLOGY)
        return [(rest, topology)] + [(n, t) for n, t in KERNEL_TOPOLOGY.items()]
    names = kspec.split(',')
    rest = [n for n in names if n not in KERNEL_TOPOLOGY]
    boots = [(','.join(rest), topology)] if rest else []
    return boots + [(n, KERNEL_TOPOLOGY[n]) for n in names if n in KERNEL_TOPOLOGY]


def run_user_qemu(env_name, name, args, extra):
    """A ring-3 benchmark as Quire's init= program (debug_pagealloc off, as the kernel's benchmarks)."""
    prog, pargs = USER_BENCHES[name]
    cmdline = (f'init="/bin/init {prog} {" ".join(pargs)}" debug_pagealloc=0 '
               f'{USER_BENCH_CMDLINE.get(name, "")} {args.cmdline}').strip()
    env = dict(os.environ, FIRMWARE='direct', TOPOLOGY=args.topology, CMDLINE=cmdline,
               KERNEL=args.kernel, BUILD=args.build, INITRD=os.path.join(args.build, 'initrd.cpio'),
               QEMU_EXTRA=extra, TIMEOUT=str(args.timeout))
    return run_logged(f'{env_name}-{name}', ['bash', 'scripts/run-qemu.sh'], env, args.timeout,
                      args.logdir)


def run_user_linux(name, args):
    """A ring-3 benchmark on Linux 6.12 under -icount shift=0, through kselftest_run -o."""
    prog, pargs = USER_BENCHES[name]
    root = os.path.abspath(os.path.join(args.build, 'bench', 'linux-root'))
    os.makedirs(os.path.join(root, 'bench'), exist_ok=True)
    with open(os.path.join(root, 'bench', 'run.list'), 'w') as f:
        f.write(','.join([prog] + pargs) + f' timeout={args.timeout}\n')
    env = dict(os.environ, BUILD=args.build, QEMU_EXTRA=ICOUNT_ARGS)
    cmd = ['bash', 'scripts/linux-selftests.sh', 'boot-linux',
           os.path.join(args.logdir, f'linux-{name}.serial'), str(args.timeout + 600),
           os.path.join(args.build, 'bench', 'linux-initrd.cpio'),
           f'-N bench -o -t {args.timeout} -f /bench/run.list', root]
    return run_logged(f'linux-{name}', cmd, env, args.timeout + 900, args.logdir)


def git_revision():
    """`git describe --always --dirty` of the tree, or 'unknown'."""
    try:
        p = subprocess.run(['git', 'describe', '--always', '--dirty'], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 'unknown'
    return p.stdout.decode().strip() if p.returncode == 0 else 'unknown'


def read_csv(path):
    """The rows of an existing results file (older ones without options and
    revision read with them empty), or None when it has no valid header."""
    if not os.path.exists(path):
        return []
    with open(path, newline='') as f:
        return bench_plot.parse_results(list(csv.reader(f)))


def run_key(row):
    return (row[0], row[1], row[OPTIONS])


def merge_rows(old, new):
    """old without the rows a new run replaces (same benchmark, case and
    options), then new; and how many were replaced."""
    replaced = {run_key(r) for r in new}
    kept = [r for r in old if run_key(r) not in replaced]
    return kept + new, len(old) - len(kept)


def write_csv(path, new_rows):
    old = read_csv(path)
    if old is None:
        aside = path + '.old'
        os.replace(path, aside)
        print(f'bench: {path} had another header; moved it to {aside}', file=sys.stderr)
        old = []
    rows, dropped = merge_rows(old, new_rows)
    tmp = path + '.tmp'
    with open(tmp, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(HEADER)
        w.writerows(rows)
    os.replace(tmp, path)
    return dropped


# ---- tables ----

def size_bytes(label):
    m = re.fullmatch(r'(\d+)([BKMGT]?)', label)
    if not m:
        return float('inf')	# "-" and the like last
    return int(m.group(1)) << (10 * 'BKMGT'.index(m.group(2) or 'B'))


def fmt(v):
    if v is None:
        return '-'
    if abs(v) >= 1000 or v == int(v):
        return f'{v:.0f}'
    return f'{v:.1f}' if abs(v) >= 100 else f'{v:.2f}'


def gain(metric_unit, base, new):
    """How much better `new` is than `base`: >1 is better, whatever the direction."""
    if base is None or new is None:
        return '-'
    higher_better = metric_unit.endswith('/s')
    num, den = (new, base) if higher_better else (base, new)
    if den == 0:
        return '-' if num else '1.00x'
    return f'{num / den:.2f}x'


first_seen = bench_plot.first_seen	# values in their first order, once each


def print_table(bench, case, rows, metrics, markdown, out):
    metrics = metrics or BENCH_TABLE_METRICS.get(bench) or TABLE_METRICS.split(',')
    metrics = [m for m in metrics if any(r[4] == m for r in rows)]
    if not metrics:
        return
    modes = first_seen(r[3] for r in rows)
    units = {r[4]: r[6] for r in rows}
    val = {(r[2], r[3], r[4]): float(r[5]) for r in rows}
    sizes = sorted(first_seen(r[2] for r in rows), key=size_bytes)
    two = len(modes) == 2

    heads = []	# (metric heading, column heading) per column
    for m in metrics:
        for mode in modes:
            heads.append((f'{m} ({units[m]})', mode))
        if two:
            heads.append((f'{m} ({units[m]})', 'gain'))
    body = []
    for s in sizes:
        line = [s]
        for m in metrics:
            vs = [val.get((s, mode, m)) for mode in modes]
            line += [fmt(v) for v in vs]
            if two:
                line.append(gain(units[m], vs[0], vs[1]))
        body.append(line)

    note = f' (gain: {modes[1]} over {modes[0]}, >1 is better)' if two else ''
    if markdown:
        cols = ['folio'] + [f'{mh.split(" (")[0]} {ch}' if ch != 'gain' else 'gain'
                            for mh, ch in heads]
        print(f'\n{bench} on {case}{note}; units: ' +
              ', '.join(f'{m} {units[m]}' for m in metrics) + '\n', file=out)
        print('| ' + ' | '.join(cols) + ' |', file=out)
        print('|' + '|'.join('---' for _ in cols) + '|', file=out)
        for line in body:
            print('| ' + ' | '.join(line) + ' |', file=out)
        return
    width = [max(6, len(ch), *(len(line[i + 1]) for line in body))
             for i, (_, ch) in enumerate(heads)]
    per = len(modes) + (1 if two else 0)
    top = ' ' * 6
    for g, m in enumerate(metrics):
        cols = range(g * per, (g + 1) * per)
        title = f'{m} ({units[m]})'
        # Widen the group's last column until its title fits over it.
        width[cols[-1]] += max(0, len(title) - sum(width[c] + 2 for c in cols) + 2)
        top += '  ' + title.center(sum(width[c] + 2 for c in cols) - 2)
    print(f'\n{bench} on {case}{note}', file=out)
    print(top.rstrip(), file=out)
    print('folio ' + ''.join('  ' + ch.rjust(w) for (_, ch), w in zip(heads, width)), file=out)
    for line in body:
        print(line[0].ljust(6) + ''.join('  ' + c.rjust(w) for c, w in zip(line[1:], width)),
              file=out)


def env_key(env):
    base = env.split('[')[0]	# ENV[OPTIONS] after ENV
    return (ENVS.index(base) if base in ENVS else len(ENVS), env)


def ratio(base, new):
    """new / base: below 1, the batched path does less (whatever the metric)."""
    if base is None or new is None:
        return '-'
    if base == 0:
        return '-' if new else '='
    r = new / base
    return f'{r:.3f}' if r < 0.1 else f'{r:.2f}'


def print_rmap_table(env, rows, metrics, markdown, out):
    """rmap rows of one environment: case is ENV/OP/MAP, mode per-page or batched."""
    val, units = {}, {}
    for r in rows:
        op, _, mapping = r[1].split('/', 1)[1].partition('/')
        val[(op, r[2], mapping, r[3], r[4])] = float(r[5])
        units[r[4]] = r[6]
    metrics = [m for m in metrics or RMAP_METRICS if m in units]
    if not metrics:
        return
    ops = [o for o in RMAP_OPS if any(k[0] == o for k in val)]
    ops += [o for o in first_seen(k[0] for k in val) if o not in ops]
    layouts = RMAP_LAYOUTS + [l for l in first_seen((k[1], k[2]) for k in val)
                              if l not in RMAP_LAYOUTS]
    body = []
    for op in ops:
        for size, mapping in layouts:
            if not any(k[:3] == (op, size, mapping) for k in val):
                if any(k[0] == op for k in val) and (size, mapping) in RMAP_LAYOUTS:
                    body.append([op, f'{size} {mapping}'] + ['n/a', '', ''] * len(metrics))
                continue
            line = [op, f'{size} {mapping}']
            for m in metrics:
                pp = val.get((op, size, mapping, 'per-page', m))
                b = val.get((op, size, mapping, 'batched', m))
                line += [fmt(pp), fmt(b), ratio(pp, b)]
            body.append(line)
    heads = [f'{m} ({units[m]})' for m in metrics]
    note = 'ratio: batched / per-page, below 1 is less'
    if markdown:
        cols = ['op', 'folio'] + [c for m in metrics for c in
                                  (f'{m} per-page', f'{m} batched', 'ratio')]
        print(f'\nrmap on {env} ({note}); units: ' +
              ', '.join(f'{m} {units[m]}' for m in metrics) + '\n', file=out)
        print('| ' + ' | '.join(cols) + ' |', file=out)
        print('|' + '|'.join('---' for _ in cols) + '|', file=out)
        for line in body:
            print('| ' + ' | '.join(line) + ' |', file=out)
        return
    sub = ['per-page', 'batched', 'ratio']
    width = [max(len(sub[i % 3]), *(len(line[i + 2]) for line in body))
             for i in range(3 * len(metrics))]
    for g, h in enumerate(heads):
        # Widen the group's last column until its title fits over it.
        cols = range(3 * g, 3 * g + 3)
        width[cols[-1]] += max(0, len(h) - sum(width[c] + 2 for c in cols) + 2)
    w0 = max(len('pte-remap'), *(len(l[0]) for l in body))
    w1 = max(len('folio'), *(len(l[1]) for l in body))
    print(f'\nrmap on {env} ({note})', file=out)
    print(' ' * (w0 + 2 + w1) + ''.join(
        '  ' + h.center(sum(width[c] + 2 for c in range(3 * g, 3 * g + 3)) - 2)
        for g, h in enumerate(heads)).rstrip(), file=out)
    print('op'.ljust(w0) + '  ' + 'folio'.ljust(w1) +
          ''.join('  ' + sub[i % 3].rjust(w) for i, w in enumerate(width)), file=out)
    last = None
    for line in body:
        op = line[0] if line[0] != last else ''
        last = line[0]
        print((op.ljust(w0) + '  ' + line[1].ljust(w1) +
               ''.join('  ' + c.rjust(w) for c, w in zip(line[2:], width))).rstrip(), file=out)


def print_tables(rows, metrics, markdown, out=sys.stdout):
    rows = bench_plot.by_options(rows)
    for bench in first_seen(r[0] for r in rows):
        brows = [r for r in rows if r[0] == bench]
        if bench == 'rmap':
            envs = sorted(first_seen(r[1].split('/')[0] for r in brows), key=env_key)
            for env in envs:
                print_rmap_table(env, [r for r in brows if r[1].split('/')[0] == env
                                       and r[1].count('/') == 2], metrics, markdown, out)
            continue
        cases = sorted(first_seen(r[1] for r in brows),
                       key=lambda c: (env_key(c.split('/')[0]), c))
        for case in cases:
            print_table(bench, case, [r for r in brows if r[1] == case], metrics, markdown, out)


def print_runs(rows, out=sys.stdout):
    """One line per environment (with its options) and revision the rows come from."""
    runs = first_seen((r[1].split('/')[0], r[REVISION]) for r in bench_plot.by_options(rows))
    for env, rev in sorted(runs, key=lambda x: env_key(x[0])):
        print(f'{env}: revision {rev or "not recorded"}', file=out)


def main():
    sys.stdout.reconfigure(line_buffering=True)	# in order with the messages on stderr
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('hostbins', nargs='*', help='host benchmark programs')
    ap.add_argument('--build', default='build')
    ap.add_argument('--kernel', help='kernel ELF [BUILD/quire.elf]')
    ap.add_argument('--out', help='results file [BUILD/bench/results.csv]')
    ap.add_argument('--only', default=','.join(ENVS), help='environments to run')
    ap.add_argument('--bench', default='all', help="benchmarks: 'all' or a,b")
    ap.add_argument('--cmdline', default='',
                    help='more kernel options for the qemu runs, after bench=... '
                    '(kept in the options column)')
    ap.add_argument('--topology', default='numa3')
    ap.add_argument('--timeout', type=int, default=300, help='seconds per run')
    ap.add_argument('--metrics', help=f'metrics in the tables [{TABLE_METRICS}; rmap: '
                    f'{", ".join(RMAP_METRICS)}]')
    ap.add_argument('--markdown', action='store_true', help='print the tables as Markdown')
    ap.add_argument('--show', action='store_true', help='print tables from the results file only')
    ap.add_argument('--plot', action='store_true',
                    help='draw the plots from the results file only (BUILD/bench/plots)')
    ap.add_argument('--no-plot', action='store_true', help='no plots after a run')
    args = ap.parse_args()
    args.kernel = args.kernel or os.path.join(args.build, 'quire.elf')
    args.out = args.out or os.path.join(args.build, 'bench', 'results.csv')
    args.logdir = os.path.join(args.build, 'bench', 'logs')
    plotdir = os.path.join(os.path.dirname(args.out), 'plots')
    metrics = [m for m in args.metrics.split(',') if m] if args.metrics else None

    if args.show:
        rows = read_csv(args.out)
        if not rows:
            sys.exit(f'bench: no results in {args.out} (run make bench)')
        print_runs(rows)
        print_tables(rows, metrics, args.markdown)
        return 0
    if args.plot:
        rows = read_csv(args.out)
        if not rows:
            sys.exit(f'bench: no results in {args.out} (run make bench)')
        return 1 if bench_plot.write_plots(rows, plotdir, metrics, bench_plot.kbench_names()) else 0

    envs = [e for e in args.only.split(',') if e]
    unknown = [e for e in envs if e not in ENVS]
    if unknown:
        sys.exit(f'bench: unknown environment {unknown[0]} (known: {", ".join(ENVS)})')
    os.makedirs(args.logdir, exist_ok=True)

    new_rows, failed = [], []
    runs = []
    if 'host' in envs:
        # A host program holds one benchmark, bench_NAME: run those --bench names.
        names = args.bench.split(',')
        for b in args.hostbins:
            if args.bench != 'all' and os.path.basename(b).removeprefix('bench_') not in names:
                continue
            runs.append(('host', lambda b=b: run_host(b, args.bench, args.timeout, args.logdir)))
    kspec, user = kernel_spec(args.bench), user_bench_names(args.bench)
    for env, extra in (('qemu-tcg', ''), ('qemu-icount', ICOUNT_ARGS)):
        if env not in envs:
            continue
        for spec, topology in kernel_boots(kspec, args.topology):
            kargs = argparse.Namespace(**{**vars(args), 'bench': spec, 'topology': topology})
            runs.append((env, lambda env=env, extra=extra, kargs=kargs:
                         run_qemu(env, kargs, extra)))
        for name in user:
            runs.append((env, lambda env=env, extra=extra, name=name:
                         run_user_qemu(env, name, args, extra)))
        if args.bench == 'all' or 'gup' in args.bench.split(','):
            runs.append((env, lambda env=env, extra=extra: run_gup_qemu(env, args, extra)))
    if 'linux' in envs:
        for name in user:
            if name in QUIRE_ONLY:
                continue
            runs.append(('linux', lambda name=name: run_user_linux(name, args)))
    revision = git_revision()
    for env, run in runs:
        status, out = run()
        options = args.cmdline.strip() if env not in ('host', 'linux') else ''
        rows = [r + [options, revision] for r in parse_rows(out, env, env)]
        if status != 0 or not rows:
            # A failed run keeps the previous results of its environment.
            tail = '\n'.join(out.splitlines()[-15:])
            print(f'bench: {env} failed (status {status}, {len(rows)} rows); last lines:\n{tail}',
                  file=sys.stderr)
            failed.append(env)
            continue
        new_rows += rows

    if new_rows:
        dropped = write_csv(args.out, new_rows)
        print(f'bench: {len(new_rows)} rows to {args.out}'
              + (f' (replacing {dropped} of earlier runs)' if dropped else ''))
        print_tables(new_rows, metrics, args.markdown)
    if not args.no_plot and os.path.exists(args.out):
        # The plots show the whole file, earlier runs' rows included.
        print()
        if bench_plot.write_plots(read_csv(args.out) or [], plotdir, metrics,
                                  bench_plot.kbench_names()):
            failed.append('plots')
    if failed:
        print(f'bench: failed: {", ".join(failed)}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
