#!/usr/bin/env bash
# gup-bench.sh: Linux 6.12's gup_test binary as the GUP benchmark (issue 15,
# docs/bench.md "gup"): `gup_test -L -m 256 -n 65536 -r 16` (PIN_LONGTERM_BENCHMARK,
# pin_user_pages with FOLL_LONGTERM) and the same with -a (PIN_FAST_BENCHMARK,
# pin_user_pages_fast) on a 256 MiB range, one Quire boot per mapping and
# gup_batch setting:
#   64K   MADV_HUGEPAGE with only the 64 KiB mTHP size on (thp_anon=64K:always,
#         transparent_hugepage=never: 2 MiB off)
#   2M    MADV_HUGEPAGE with the default THP (2 MiB PMD mappings)
#   4K    MADV_NOHUGEPAGE (-T)
# under QEMU -icount shift=0 (one nanosecond per guest instruction, so the
# microseconds gup_test prints are thousands of instructions; divided by the
# 65536 pages: instructions per page). Needs the kernel (KERNEL=, default
# build/quire.elf; docs/bench.md measures the non-debug one:
# KERNEL=build-nd/quire.elf after make BUILD=build-nd DEBUG_LOCKS=0
# DEBUG_MM=0) and build/lselftests/initrd.cpio (scripts/linux-selftests.sh
# build). Prints
# the median get and put of the 16 repetitions of each, as CSV on stdout:
#   command,mapping,gup_batch,get_us,put_us,get_insn_per_page,put_insn_per_page
# The serial logs, gup.csv and a plot (gup-qemu-icount.png: instructions
# per page to pin, per-page against batched) go to build/bench/gup/. Not
# part of make bench (yet).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/bench/gup
mkdir -p "$out"
args="-m,256,-n,65536,-r,16"
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
csv=$out/gup.csv
# "gup-bench.sh plot": only the plot, of the gup.csv there.
if [ "${1:-}" != plot ]; then
echo "command,mapping,gup_batch,get_us,put_us,get_insn_per_page,put_insn_per_page" | tee "$csv"
for mapping in 64K 2M 4K; do
    case $mapping in
        64K) thp=-t; opts="transparent_hugepage=never thp_anon=64K:always" ;;
        2M) thp=-t; opts="" ;;
        4K) thp=-T; opts="" ;;
    esac
    for batch in 1 0; do
        log=$out/$mapping-batch$batch.log
        init="/tests/kselftest_run -t 900 /lselftests/gup_test,-L,$args,$thp /lselftests/gup_test,-a,$args,$thp"
        FIRMWARE=direct TOPOLOGY=numa3 INITRD=build/lselftests/initrd.cpio TIMEOUT=1000 \
            QEMU_EXTRA="-icount shift=0" \
            CMDLINE="init=\"/bin/init $init\" gup_batch=$batch debug_pagealloc=0 $opts" \
            nice -n 10 scripts/run-qemu.sh </dev/null >"$log" 2>&1 || {
            echo "gup-bench: $mapping gup_batch=$batch failed (log: $log)" >&2
            continue
        }
        for cmd in PIN_LONGTERM_BENCHMARK PIN_FAST_BENCHMARK; do
            get=$(grep -o "$cmd: Time: get:[0-9]*" "$log" | sed 's/.*get://' | median)
            put=$(grep -o "$cmd: Time: get:[0-9]* put:[0-9]*" "$log" | sed 's/.*put://' | median)
            echo "$cmd,$mapping,$batch,$get,$put,$((get * 1000 / 65536)),$((put * 1000 / 65536))" | tee -a "$csv"
        done
    done
done
fi

# The plot: get instructions per page, gup_batch=0 against 1, for each command and mapping.
if command -v gnuplot >/dev/null; then
    awk -F, 'NR > 1 { key = ($1 == "PIN_FAST_BENCHMARK" ? "PIN_FAST" : "PIN_LONGTERM") " " $2
                      v[key, $3] = $6; if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
             END { for (i = 1; i <= n; i++) print "\"" order[i] "\"", v[order[i], 0], v[order[i], 1] }' \
        "$csv" >"$out/gup.dat"
    gnuplot <<GP
set terminal png size 900,450 noenhanced
set output "$out/gup-qemu-icount.png"
set title "gup_test -m 256 -n 65536: instructions per page pinned (QEMU -icount shift=0)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "instructions / page (log)"
set xtics rotate by -20
set key top right
plot "$out/gup.dat" using 2:xtic(1) title "gup_batch=0 (per page)", "" using 3 title "gup_batch=1 (batched)"
GP
fi
