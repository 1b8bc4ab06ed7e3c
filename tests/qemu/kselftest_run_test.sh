#!/usr/bin/env bash
# kselftest_run_test.sh: checks user/tests/kselftest_run.c on the host (it is
# a static musl program: the same binary runs here) against small shell
# scripts that end each way a selftest can: every verdict of its table, and
# that a skip is never a pass; and `sh -c` of Quire's shell (user/bin/sh.c),
# which the selftests' popen() and system() run. Prints KTAP, one case per
# check; exit status 0 when all passed (a `cmd` job of tests/plan.txt).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1

runner=${BUILD:-build}/user/tests/kselftest_run
quire_sh=${BUILD:-build}/user/bin/sh
work=$(mktemp -d "${TMPDIR:-/tmp}/kselftest-run-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

checks=(
    "exit 0: ok"
    "exit 1: not ok with the status"
    "exit 4 with a reason: SKIP with it"
    "exit 0, kselftest counted only skips: SKIP"
    "exit 0, kselftest counted nothing: SKIP"
    "exit 0, kselftest counted a failure: not ok"
    "exit 4 after a Fail line: not ok"
    "killed by a signal: not ok with it"
    "runs past -t: killed, not ok"
    "-S: a skip is not ok"
    "arguments after commas reach the program"
    "-f: a list with comments, names in its directory, timeout="
    "the program's output only as # lines"
    "exit status: 0 with oks and skips, 1 with a failure"
    "sh -c: a pipeline's output, and its status with nothing added"
    "-d: stdout the same as DIR/NAME.out, with its status line: ok; stderr left out"
    "-d: a different output: not ok, with the lines that differ"
    "-d: no recorded output: not ok, with the whole output"
    "-d: a program killed by a signal: its status line differs"
    "-o: the whole output as #| lines, counted and hashed; -N names the suite"
)
echo "KTAP version 1"
echo "1..${#checks[@]}"
if [ ! -x "$runner" ] || [ ! -x "$quire_sh" ]; then
    for i in "${!checks[@]}"; do
        echo "not ok $((i + 1)) ${checks[$i]} # $runner or $quire_sh not built (make initrd)"
    done
    exit 1
fi

prog() { # prog NAME BODY: a shell script in $work
    printf '#!/bin/sh\n%s\n' "$2" >"$work/$1"
    chmod +x "$work/$1"
}
prog pass 'echo "ok 1 fine"; exit 0'
prog fail 'exit 1'
prog skip 'echo "ok 1 # SKIP no widget here"; exit 4'
prog allskip 'echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:2 error:0"; exit 0'
prog nothing 'echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0"; exit 0'
prog liar 'echo "# Totals: pass:3 fail:1 xfail:0 xpass:0 skip:0 error:0"; exit 0'
prog count4 'printf "Swapout one page... \033[31mFail\033[0m\n"; echo "Restore settings... OK"; exit 4'
prog segv 'kill -SEGV $$'
prog sleeper 'sleep 30'
prog args 'echo "got [$1] [$2]"; [ "$1" = a ] && [ "$2" = b ]'
printf '# a comment\n  pass   # and another\n\nskip\nsleeper timeout=1\n' >"$work/cases.list"
prog same 'echo "one: 1"; echo "noise" >&2; echo two'
prog other 'echo "one: 1"; echo three; exit 3'
prog norecord 'echo "only here"'
mkdir -p "$work/expected"
printf 'one: 1\ntwo\n[exit status 0]\n' >"$work/expected/same.out"
printf 'one: 1\ntwo\n[exit status 0]\n' >"$work/expected/other.out"
printf '[exit status 0]\n' >"$work/expected/segv.out"

out=$("$runner" -t 2 "$work/pass" "$work/fail" "$work/skip" "$work/allskip" \
    "$work/nothing" "$work/liar" "$work/count4" "$work/segv" "$work/sleeper" \
    "$work/args,a,b" 2>&1)
status=$?
strict=$("$runner" -S "$work/skip" 2>&1)
listed=$("$runner" -f "$work/cases.list" 2>&1)
good=$("$runner" "$work/pass" "$work/skip" "$work/allskip" 2>&1)
good_status=$?
piped=$("$quire_sh" -c "echo one two | $runner -f $work/none.list" 2>&1; echo "status $?")
differs=$("$runner" -N difftest -d "$work/expected" "$work/same" "$work/other" "$work/norecord" \
    "$work/segv" 2>/dev/null)
recorded=$("$runner" -N difftest -o "$work/same" 2>/dev/null)

n=0 failed=0
check() { # check DESCRIPTION-INDEX CONDITION...
    local i=$1
    shift
    n=$((n + 1))
    if "$@"; then
        echo "ok $n ${checks[$i]}"
    else
        echo "# ${checks[$i]}: the runner printed:"
        sed 's/^/#   /' <<<"$out$strict$listed" | head -n 60
        echo "not ok $n ${checks[$i]}"
        failed=1
    fi
}
has() { grep -qxF -- "$2" <<<"$1"; }

check 0 has "$out" "    ok 1 pass"
check 1 has "$out" "    not ok 2 fail # exit status 1"
check 2 has "$out" "    ok 3 skip # SKIP no widget here"
check 3 has "$out" "    ok 4 allskip # SKIP no subcase passed, 2 skipped"
check 4 has "$out" "    ok 5 nothing # SKIP no subcase ran"
check 5 has "$out" "    not ok 6 liar # exit status 0, but 1 subcases failed, 0 errors"
check 6 has "$out" "    not ok 7 count4 # exit status 4 (KSFT_SKIP) after it reported failures"
check 7 has "$out" "    not ok 8 segv # killed by signal 11 (Segmentation fault)"
check 8 has "$out" "    not ok 9 sleeper # timed out after 2 s"
check 9 has "$strict" "    not ok 1 skip # skipped, expected to pass: no widget here"
check 10 has "$out" "    ok 10 args a b"
check 11 eval 'has "$listed" "    1..3" && has "$listed" "    ok 1 pass" && has "$listed" "    ok 2 skip # SKIP no widget here" && has "$listed" "    not ok 3 sleeper # timed out after 1 s"'
check 12 eval '! grep -q "^ok 1 fine" <<<"$out" && has "$out" "    # ok 1 fine" && has "$out" "    # got [a] [b]"'
check 13 eval '[ $status = 1 ] && [ $good_status = 0 ] && has "$good" "ok 1 linux_mm_selftests"'
check 14 eval 'has "$piped" "# kselftest_run: $work/none.list: No such file or directory" && has "$piped" "status 1" && ! grep -q "exit status" <<<"$piped"'
check 15 eval 'has "$differs" "    ok 1 same" && ! grep -q noise <<<"$differs" && has "$differs" "    # Subtest: difftest"'
check 16 eval 'has "$differs" "    not ok 2 other # output differs from $work/expected/other.out: 4 lines" && has "$differs" "    # -    2| two" && has "$differs" "    # -    3| [exit status 0]" && has "$differs" "    # +    2| three" && has "$differs" "    # +    3| [exit status 3]" && ! grep -q "one: 1" <<<"$differs"'
check 17 eval 'grep -q "^    not ok 3 norecord # no recorded output: $work/expected/norecord.out: No such file or directory" <<<"$differs" && has "$differs" "    #| only here" && has "$differs" "    #| [exit status 0]"'
check 18 eval 'has "$differs" "    # +    1| [killed by signal 11]" && has "$differs" "not ok 1 difftest"'
check 19 eval 'has "$recorded" "    #| one: 1" && has "$recorded" "    #| two" && has "$recorded" "    #| [exit status 0]" && has "$recorded" "    # same: 3 lines, fnv1a 0x$(printf "one: 1\ntwo\n[exit status 0]\n" | python3 -c "import sys; h = 2166136261
for b in sys.stdin.buffer.read(): h = ((h ^ b) * 16777619) & 0xffffffff
print(f\"{h:08x}\")")" && has "$recorded" "    ok 1 same" && has "$recorded" "ok 1 difftest" && ! grep -q noise <<<"$recorded"'
exit $failed
