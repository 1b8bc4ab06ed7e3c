#!/usr/bin/env bash
# The shell end to end, the way a script uses Quire: commands piped into
# the serial console, as in `printf 'ls\nexit\n' | make run`. Boots once
# (direct, numa3, with the initrd) and checks the transcript; then boots
# through scripts/run four times: its exit status is the guest's (3, 200,
# 139 after a SIGSEGV), and input that ends without `exit` ends the session
# (the ^D run-qemu.sh sends at its end). Then job control through the
# console: ^C to a program that sleeps and to one reading the terminal, ^Z
# and fg, each byte sent once the transcript shows the program running.
# Prints KTAP; exits 0 only if all passed.
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

# scripts/run, the wrapper that exits with the guest's status (make run
# cannot): INPUT goes to the shell; the status and transcript are kept.
wrapped() {	# wrapped NAME INPUT
	printf '%s' "$2" | scripts/run FIRMWARE=direct TOPOLOGY=numa3 BUILD="$BUILD" \
		TIMEOUT="${TIMEOUT:-60}" >"$log.$1" 2>&1
	echo $? >"$log.$1.status"
	tr -d '\r' <"$log.$1" >"$log.$1.txt"
}
wrapped exit3 'exit 3
'
wrapped exit200 'exit 200
'
wrapped segv '/tests/harness_selftest segv
exit
'
wrapped eof 'echo hi
'	# no exit: end of input must end the session

# Job control: the input waits for the transcript before each ^C and ^Z
# (sent too early, they would reach the shell, not the program).
jobs_log=$log.jobs
waitfor() {	# waitfor N TEXT: until TEXT is in the transcript N times (60 s at most)
	for _ in $(seq 600); do
		[ "$(tr -d '\r' <"$jobs_log" 2>/dev/null | grep -cF -- "$2")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
feed_jobs() {
	printf '/tests/pgrp_ktap sleep\n'
	waitfor 1 'pgrp_ktap: sleeping' && printf '\003'
	waitfor 1 'killed by signal 2 (' && printf '/tests/pgrp_ktap read\n'
	waitfor 1 'pgrp_ktap: reading the terminal' && printf '\003'
	waitfor 2 'killed by signal 2 (' && printf '/tests/pgrp_ktap sleep\n'
	waitfor 2 'pgrp_ktap: sleeping' && printf '\032'
	waitfor 1 'stopped by signal 20' && printf 'fg\n'
	waitfor 1 'pgrp_ktap: continued' && printf '\003'
	waitfor 3 'killed by signal 2 (' && printf 'echo after\n'
	printf 'exit 5\n'
}
rm -f "$jobs_log"
feed_jobs | FIRMWARE=direct TOPOLOGY=numa3 INITRD=$BUILD/initrd.cpio TIMEOUT=${TIMEOUT:-60} \
	KERNEL=$BUILD/quire.elf bash scripts/run-qemu.sh >"$jobs_log" 2>&1
jobs_status=$?
tr -d '\r' <"$jobs_log" >"$jobs_log.txt"
count() { grep -cF -- "$1" "$jobs_log.txt"; }

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
status_of() { test "$(cat "$log.$1.status")" -eq "$2"; }

echo "KTAP version 1"
echo "1..1"
echo "    KTAP version 1"
echo "    # Subtest: shell"
echo "    1..14"
check pipeline_through_cat has "one two"
check sequence_with_semicolon eval 'has alpha && has beta'
check three_stage_pipeline eval 'has sh && has init && has meminfo'
check unknown_command_reported grep -q "nosuchprog: command not found" "$log.txt"
check musl_program_from_the_shell has "ok 1 hello"
check exit_code_is_guest_status test "$status" -eq 7
check run_wrapper_exit_3 status_of exit3 3
check run_wrapper_exit_200 status_of exit200 200
check run_wrapper_killed_by_sigsegv_139 eval 'status_of segv 139 &&
	grep -q "killed by signal 11" "$log.segv.txt"'
check end_of_input_ends_the_shell eval 'status_of eof 0 && grep -qx hi "$log.eof.txt"'
check ctrl_c_interrupts_the_foreground eval '[ "$(count "[/tests/pgrp_ktap: killed by signal 2 (")" -ge 1 ]'
check ctrl_c_ends_a_read_of_the_terminal eval 'grep -qF "pgrp_ktap: reading the terminal" "$jobs_log.txt" &&
	! grep -qF "pgrp_ktap: read returned" "$jobs_log.txt" &&
	[ "$(count "[/tests/pgrp_ktap: killed by signal 2 (")" -ge 2 ]'
check ctrl_z_stops_and_fg_continues eval 'grep -qF "[/tests/pgrp_ktap: stopped by signal 20" "$jobs_log.txt" &&
	grep -qF "[/tests/pgrp_ktap: continued]" "$jobs_log.txt" &&
	[ "$(count "[/tests/pgrp_ktap: killed by signal 2 (")" -ge 3 ]'
check shell_survives_its_jobs eval 'test "$jobs_status" -eq 5 && grep -qx after "$jobs_log.txt"'
echo "# shell: pass:$((n - failed)) fail:$failed skip:0 total:$n"
if [ $failed -eq 0 ]; then
	echo "ok 1 shell"
	exit 0
fi
echo "not ok 1 shell"
echo "# transcripts: $log, $log.{exit3,exit200,segv,eof,jobs}"
exit 1
