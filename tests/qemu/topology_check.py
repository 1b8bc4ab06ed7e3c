#!/usr/bin/env python3
"""Check Quire's NUMA boot summary against the QEMU topology it booted on.

    topology_check.py TOPOLOGY.args SERIAL.log [--mem-tolerance MIB]

Reads a topology .args file (the QEMU options of tests/qemu/topologies/:
-smp, -m, -object memory-backend-ram,size=, -numa node/dist/hmat-lb), works
out the node model Quire should find, and compares it with the kernel's
"numa: node ..." lines in the serial log (format: docs/numa.md). It boots
nothing. Checked: the set of nodes, CPUs per node, memory per node (the
kernel may see up to --mem-tolerance MiB less, for firmware holes; never
more), the distance rows, the fallback order, and that the tier is `slow`
exactly for CPU-less memory nodes farther (by HMAT latency when QEMU gives
it, else by distance) from every CPU node than that node's own memory.
Prints one line per mismatch; exit status 0 when there are none, 1 when
there are, 2 on bad usage.

tests/qemu/runner.py runs the same check for qemu jobs with check=topology.
"""
import argparse
import re
import sys
from dataclasses import dataclass, field

LOCAL, REMOTE = 10, 20
DEFAULT_MEM_TOLERANCE = 16      # MiB; OVMF's holes on numa3 cost 6
SUMMARY_RE = re.compile(r'numa: node (\d+) (cpus|distance|fallback) (.*?)\s*$')
CPUS_RE = re.compile(r'(none|[\d,-]+) mem (\d+) MiB tier (dram|slow)$')
SUFFIX = {'': 1, 'B': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}


class TopologyError(Exception):
    pass


def parse_size(text, default_unit=1):
    """QEMU size: a number with an optional K/M/G/T suffix (binary)."""
    m = re.fullmatch(r'(\d+(?:\.\d+)?)([KMGTB]?)', text.strip(), re.I)
    if not m:
        raise TopologyError(f'bad size {text!r}')
    unit = SUFFIX[m.group(2).upper()] if m.group(2) else default_unit
    return int(float(m.group(1)) * unit)


def parse_cpus(text):
    """'0-1' or '4' (QEMU repeats cpus= for more than one range)."""
    m = re.fullmatch(r'(\d+)(?:-(\d+))?', text)
    if not m:
        raise TopologyError(f'bad cpus= value {text!r}')
    lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
    return set(range(lo, hi + 1))


def options(text):
    """(option, value) pairs of an .args file: '#' comments, whitespace-separated."""
    words = []
    for line in text.splitlines():
        words += line.split('#', 1)[0].split()
    out, i = [], 0
    while i < len(words):
        opt = words[i]
        if i + 1 < len(words) and not words[i + 1].startswith('-'):
            out.append((opt, words[i + 1]))
            i += 2
        else:
            out.append((opt, ''))
            i += 1
    return out


def keyvals(value):
    """'node,nodeid=0,cpus=0-1,cpus=4' -> ('node', [('nodeid','0'), ...])."""
    parts = value.split(',')
    kind = parts[0] if '=' not in parts[0] else ''
    pairs = [tuple(p.split('=', 1)) for p in (parts[1:] if kind else parts) if '=' in p]
    return kind, pairs


@dataclass
class Expected:
    """The model Quire should build, by Quire node id."""
    cpus: dict = field(default_factory=dict)       # nid -> set of CPUs
    mem_mib: dict = field(default_factory=dict)    # nid -> MiB
    distance: dict = field(default_factory=dict)   # (a, b) -> distance
    tier: dict = field(default_factory=dict)       # nid -> 'dram' | 'slow'
    fallback: dict = field(default_factory=dict)   # nid -> [nid, ...]


def expected_model(args_text):
    smp, ram = 1, 128 << 20
    backends, nodes, dists, latency = {}, {}, {}, {}
    for opt, value in options(args_text):
        if opt == '-smp':
            kind, pairs = keyvals(value)
            d = dict(pairs)
            smp = int(d.get('cpus', kind or 1))
        elif opt == '-m':
            kind, pairs = keyvals(value)
            ram = parse_size(kind or dict(pairs).get('size', '128'), 1 << 20)
        elif opt == '-object':
            kind, pairs = keyvals(value)
            d = dict(pairs)
            if kind.startswith('memory-backend') and 'id' in d and 'size' in d:
                backends[d['id']] = parse_size(d['size'])
        elif opt == '-numa':
            kind, pairs = keyvals(value)
            d = dict(pairs)
            if kind == 'node':
                nid = int(d.get('nodeid', len(nodes)))
                cpus = set()
                for k, v in pairs:
                    if k == 'cpus':
                        cpus |= parse_cpus(v)
                mem = backends.get(d['memdev'], 0) if 'memdev' in d else (
                    parse_size(d['mem'], 1 << 20) if 'mem' in d else 0)
                if 'memdev' in d and d['memdev'] not in backends:
                    raise TopologyError(f'memdev {d["memdev"]}: no memory-backend object before it')
                nodes[nid] = {'cpus': cpus, 'mem': mem}
            elif kind == 'dist':
                dists[(int(d['src']), int(d['dst']))] = int(d['val'])
            elif kind == 'hmat-lb':
                if d.get('hierarchy', 'memory') == 'memory' and 'latency' in d and \
                        d.get('data-type') in ('access-latency', 'read-latency'):
                    latency[(int(d['initiator']), int(d['target']))] = int(d['latency'])
            else:
                raise TopologyError(f'-numa {kind} is not understood by this check')
    model = Expected()
    if not nodes:       # no NUMA description: Quire's one-node fallback
        model.cpus[0] = set(range(smp))
        model.mem_mib[0] = ram >> 20
        model.distance[(0, 0)] = LOCAL
        model.tier[0] = 'dram'
        model.fallback[0] = [0]
        return model
    for cpu in range(smp):      # QEMU puts CPUs no node names on node 0
        if not any(cpu in n['cpus'] for n in nodes.values()):
            nodes.setdefault(min(nodes), {'cpus': set(), 'mem': 0})['cpus'].add(cpu)
    # Quire numbers nodes in SRAT order: QEMU lists CPUs first (by CPU), then memory (by node).
    order = []
    for cpu in range(smp):
        q = next(q for q in sorted(nodes) if cpu in nodes[q]['cpus'])
        if q not in order:
            order.append(q)
    order += [q for q in sorted(nodes) if nodes[q]['mem'] and q not in order]
    qid = dict(enumerate(order))                    # Quire id -> QEMU id

    def qdist(a, b):
        if a == b:
            return LOCAL
        return dists.get((a, b), dists.get((b, a), REMOTE))

    for nid, q in qid.items():
        model.cpus[nid] = {c for c in nodes[q]['cpus'] if c < smp}
        model.mem_mib[nid] = nodes[q]['mem'] >> 20
    for a, qa in qid.items():
        for b, qb in qid.items():
            model.distance[(a, b)] = qdist(qa, qb)
    with_mem = [n for n in qid if model.mem_mib[n]]
    for nid in qid:
        rest = sorted((n for n in with_mem if n != nid),
                      key=lambda n: (model.distance[(nid, n)], n))
        model.fallback[nid] = ([nid] if nid in with_mem else []) + rest

    def farther(c, m):
        own = model.fallback[c][0] if model.fallback[c] else c
        lm, lo = latency.get((qid[c], qid[m])), latency.get((qid[c], qid[own]))
        if lm and lo:
            return lm > lo
        return model.distance[(c, m)] > model.distance[(c, own)]

    cpu_nodes = [n for n in qid if model.cpus[n]]
    for nid in qid:
        slow = (not model.cpus[nid] and model.mem_mib[nid] and cpu_nodes and
                all(farther(c, nid) for c in cpu_nodes))
        model.tier[nid] = 'slow' if slow else 'dram'
    return model


def cpu_list(text):
    if text == 'none':
        return set()
    out = set()
    for part in text.split(','):
        out |= parse_cpus(part)
    return out


def parse_summary(log_text):
    """{nid: {'cpus': ..., 'distance': ..., 'fallback': ...}} and problems."""
    seen, problems = {}, []
    for line in log_text.splitlines():
        m = SUMMARY_RE.search(line)
        if not m:
            continue
        nid, kind, rest = int(m.group(1)), m.group(2), m.group(3)
        prev = seen.setdefault(nid, {}).get(kind)
        if prev is not None and prev != rest:
            problems.append(f'node {nid}: two different "{kind}" lines: {prev!r} and {rest!r}')
        seen[nid].setdefault(kind, rest)
    return seen, problems


def check(args_text, log_text, mem_tolerance=DEFAULT_MEM_TOLERANCE):
    """The mismatches between the topology and the log, as readable lines."""
    model = expected_model(args_text)
    seen, bad = parse_summary(log_text)
    if not seen:
        return ['no "numa: node" summary lines in the log']
    want_nodes, got_nodes = set(model.cpus), set(seen)
    if want_nodes != got_nodes:
        bad.append(f'nodes: expected {sorted(want_nodes)}, the kernel printed {sorted(got_nodes)}')
    n_ids = max(want_nodes) + 1
    for nid in sorted(want_nodes & got_nodes):
        lines = seen[nid]
        for kind in ('cpus', 'distance', 'fallback'):
            if kind not in lines:
                bad.append(f'node {nid}: no "{kind}" line')
        if 'cpus' in lines:
            m = CPUS_RE.fullmatch(lines['cpus'])
            if not m:
                bad.append(f'node {nid}: cannot read "cpus {lines["cpus"]}"')
            else:
                cpus, mib, tier = cpu_list(m.group(1)), int(m.group(2)), m.group(3)
                if cpus != model.cpus[nid]:
                    bad.append(f'node {nid}: cpus {sorted(cpus)}, '
                               f'expected {sorted(model.cpus[nid])}')
                want = model.mem_mib[nid]
                if not want - mem_tolerance <= mib <= want:
                    bad.append(f'node {nid}: mem {mib} MiB, expected {want} MiB '
                               f'(up to {mem_tolerance} MiB less allowed)')
                if tier != model.tier[nid]:
                    bad.append(f'node {nid}: tier {tier}, expected {model.tier[nid]}')
        if 'distance' in lines:
            got = lines['distance'].split()
            want = [str(model.distance[(nid, j)]) for j in range(n_ids)]
            if got != want:
                bad.append(f'node {nid}: distance {" ".join(got)}, expected {" ".join(want)}')
        if 'fallback' in lines:
            got = lines['fallback'].split()
            want = [str(n) for n in model.fallback[nid]] or ['none']
            if got != want:
                bad.append(f'node {nid}: fallback {" ".join(got)}, expected {" ".join(want)}')
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('topology', help='QEMU topology .args file')
    ap.add_argument('log', help='serial log of a boot on it')
    ap.add_argument('--mem-tolerance', type=int, default=DEFAULT_MEM_TOLERANCE, metavar='MIB')
    args = ap.parse_args(argv)
    try:
        with open(args.topology) as f:
            topo = f.read()
        with open(args.log, errors='replace') as f:
            log = f.read()
        bad = check(topo, log, args.mem_tolerance)
    except (OSError, TopologyError, KeyError, ValueError) as e:
        print(f'topology_check: {e}', file=sys.stderr)
        return 2
    for line in bad:
        print(line)
    if not bad:
        print('topology matches')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
