#!/usr/bin/env bash
# The shell end to end, the way a script uses Quire: commands piped into
# the serial console, as in `printf 'ls\nexit\n' | make run`. Boots once
# (direct, numa3, with the initrd), then checks the transcript. Prints KTAP; exits 0 only if all passed.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
log=$BUILD/test-logs/shell-transcript.log
mkdir -p "$(dirname "$log")"

printf 'echo one two | cat\necho alpha; echo beta\nls /bin | cat | cat\nnosuchprog\n/tests/hello_ktap\nexit 7\n' |
	FIRMWARE=direct TOPOLOGY=numa3 INITRD=$BUILD/initrd.cpio TIMEOUT=${TIMEOUT:-60} \
	KERNEL=$BUILD/quire.elf bash scripts/run-qemu.sh >"$log" 2>&1
status=$?
tr -d '\r' <"$log" >"$log.txt"

n=0
failed=0
check() {	# check NAME COMMAND...
	n=$((n + 1))
	if "${@:2}"; then
		echo "    ok $n $1"
	else
		echo "    not ok $n $1"
		failed=$((failed + 1))
	fi
}
has() { grep -qx -- "$1" "$log.txt"; }

echo "KTAP version 1"
echo "1..1"
echo "    KTAP version 1"
echo "    # Subtest: shell"
echo "    1..6"
check pipeline_through_cat has "one two"
check sequence_with_semicolon eval 'has alpha && has beta'
check three_stage_pipeline eval 'has sh && has init && has meminfo'
check unknown_command_reported grep -q "nosuchprog: command not found" "$log.txt"
check musl_program_from_the_shell has "ok 1 hello"
check exit_code_is_guest_status test "$status" -eq 7
echo "# shell: pass:$((n - failed)) fail:$failed skip:0 total:$n"
if [ $failed -eq 0 ]; then
	echo "ok 1 shell"
	exit 0
fi
echo "not ok 1 shell"
echo "# transcript: $log"
exit 1
