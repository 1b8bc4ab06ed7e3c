#!/usr/bin/env bash
# Debian's own programs on Quire (docs/userspace.md, "Debian's busybox and
# numactl"): boots build/initrd-debian.cpio (make initrd-debian: Debian's
# busybox-static and numactl over Quire's programs) direct on numa3 with a
# scripted busybox session piped into the console, and checks the
# transcript: ls /proc, ps, free, pipelines, a sweep of busybox applets,
# `numactl --hardware` against Linux 6.12's lines on the same machine
# (tests/debian/numactl-hardware.linux: the free lines left out, the sizes
# within 64 MB, what each kernel reserves), `numactl --membind=2 memhog 32M`
# on node 2 (numastat -p while it runs), `migratepages PID 0 2` moving a
# running memhog's pages from node 0 to node 2 and `numastat -p PID`
# showing them before and after. Prints KTAP; exits 0 only if all passed.
#
#   debian_test.sh            the test (job debian-numa3 of tests/plan.txt)
#   debian_test.sh --record   boot Linux 6.12 with the same initrd and
#                             rewrite tests/debian/numactl-hardware.linux
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
log=$BUILD/test-logs/debian-transcript.log
mkdir -p "$(dirname "$log")"

if ! make --no-print-directory -s BUILD="$BUILD" initrd-debian >"$log.build" 2>&1; then
	cat "$log.build"
	echo "KTAP version 1"
	echo "1..1"
	echo "not ok 1 debian # cannot build $BUILD/initrd-debian.cpio (make initrd-debian; see above)"
	exit 1
fi

if [ "${1:-}" = --record ]; then
	rec=$BUILD/debian/rec
	mkdir -p "$rec/debian-diff"
	printf '#!/bin/sh\nexec /usr/bin/numactl --hardware\n' >"$rec/debian-diff/numactl_hardware"
	chmod +x "$rec/debian-diff/numactl_hardware"
	echo numactl_hardware >"$rec/debian-diff/record.list"
	scripts/linux-selftests.sh boot-linux "$BUILD/debian/linux.log" 300 \
		"$BUILD/debian/linux-initrd.cpio" "-o -N debian -f /debian-diff/record.list" \
		"$BUILD/debian/root" "$rec" >/dev/null
	out=tests/debian/numactl-hardware.linux
	{
		sed -n '1,3p' "$out"
		tr -d '\r' <"$BUILD/debian/linux.log" | sed -n 's/^    #| //p' |
			grep -v ' free: \|^\[exit status'
	} >"$out.new" && mv "$out.new" "$out"
	echo "recorded $out:"
	cat "$out"
	exit 0
fi

# The busybox applets the session runs, each "@@ok NAME" or "@@fail NAME":
# they must all work (docs/userspace.md lists those that do not, and why).
applets=(
	"cat /etc/passwd" "echo hi" "ls -l /" "ps" "free" "top -b -n 1" "uptime" "uname -a"
	"hostname" "date" "sleep 0" "id" "whoami" "env" "wc -l /etc/passwd" "head -1 /proc/stat"
	"tail -1 /proc/meminfo" "sort /etc/passwd" "uniq /etc/passwd" "cut -d: -f1 /etc/passwd"
	"grep root /etc/passwd" "sed s/root/x/ /etc/passwd" "awk -F: {print\$1} /etc/passwd"
	"tr a-z A-Z </etc/passwd" "seq 3" "expr 1 + 2" "test -d /proc" "printf %s\\n x"
	"find /etc" "du -s /bin" "df" "mount" "mkdir -p /tmp/d/e" "rmdir /tmp/d/e"
	"touch /tmp/f" "chmod 600 /tmp/f" "stat /tmp/f" "cp /etc/passwd /tmp/p" "rm /tmp/p"
	"ln -s /tmp/f /tmp/l" "readlink /tmp/l" "realpath /tmp/l" "basename /a/b" "dirname /a/b"
	"md5sum /etc/passwd" "sha256sum /etc/passwd" "od -c /etc/hostname" "hexdump -C /etc/hostname"
	"xargs echo </etc/hostname" "tee /tmp/t </etc/hostname" "cmp /etc/hostname /tmp/t"
	"diff /etc/hostname /tmp/t" "gzip -k /tmp/t" "gunzip -c /tmp/t.gz" "tar cf /tmp/a.tar /etc"
	"tar tf /tmp/a.tar" "nproc" "pidof init" "kill -0 1" "timeout 5 true"
	"yes | head -2" "dd if=/dev/zero of=/tmp/z bs=1k count=4"
	"ls /dev" "cat /proc/loadavg" "cat /proc/uptime" "head -4 /proc/cpuinfo" "vi --help"
	"which numactl" "time true"
)

# The console's input ring holds a few hundred bytes: each command waits
# until the transcript shows the one before it done (60 s at most).
waitfor() {	# waitfor N PATTERN: until PATTERN (grep -E) is on N lines of the transcript
	for _ in $(seq 600); do
		[ "$(tr -d '\r' <"$log" 2>/dev/null | grep -cE -- "$2")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
session() {
	waitfor 1 'built-in shell' || return
	# wide lines: the shell's line editor would wrap the commands' echo
	echo 'stty cols 1000 rows 100'
	echo 'echo @@ls; ls /proc; echo @@ps; ps; echo @@free; free; echo @@pipe'
	waitfor 1 '^@@pipe$' || return
	echo 'echo one two three | wc -w; echo abc | tr a-z A-Z | cat; seq 1 10 | grep 7; echo @@hw'
	waitfor 1 '^@@hw$' || return
	echo 'numactl --hardware; echo @@hwend'
	waitfor 1 '^@@hwend$' || return
	echo 'numactl --membind=2 memhog -r1000000 32M >/dev/null & hog=$!'
	echo 'sleep 3; echo @@hog; numastat -p $hog; echo @@hogend; kill $hog; wait $hog'
	waitfor 1 '^@@hogend$' || return
	echo 'numactl --cpunodebind=0 --preferred=0 memhog -r1000000 16M >/dev/null & pid=$!'
	echo 'sleep 3; echo @@before; numastat -p $pid; echo @@beforeend'
	waitfor 1 '^@@beforeend$' || return
	echo 'migratepages $pid 0 2; echo @@migrate $?'
	echo 'echo @@after; numastat -p $pid; echo @@afterend; kill $pid; wait $pid'
	waitfor 1 '^@@afterend$' || return
	local i=0
	for a in "${applets[@]}"; do
		echo "if $a >/dev/null 2>&1; then echo @@ok '${a//\'/}'; else echo @@fail '${a//\'/}' \$?; fi"
		i=$((i + 1))
		waitfor $i "^@@(ok|fail) [^']*\$" || return
	done
	echo 'echo @@done'
	echo 'exit 0'
}

rm -f "$log"
session | FIRMWARE=direct TOPOLOGY=numa3 INITRD=$BUILD/initrd-debian.cpio TIMEOUT=${TIMEOUT:-250} \
	KERNEL=$BUILD/quire.elf bash scripts/run-qemu.sh >"$log" 2>&1
status=$?
# The transcript without the kernel's log lines, which land anywhere, and
# without the echo of the commands (a prompt, then what was typed).
tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' |
	grep -v '^\[ *[0-9]*\.[0-9]*\] \|^/ # ' >"$log.txt"
t=$log.txt

# The lines of the transcript from the one after marker $1 up to marker $2.
between() { sed -n "/^$1\$/,/^$2/p" "$t" | sed '1d;$d'; }
has() { grep -q -- "$1" "$t"; }

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

ls_proc() {
	local l
	l=$(between @@ls @@ps)
	for w in 1 self loadavg cpuinfo meminfo stat uptime; do
		grep -qw -- "$w" <<<"$l" || { echo "    # ls /proc: no $w"; return 1; }
	done
}
ps_lists() {
	local l
	l=$(between @@ps @@free)
	grep -qE '^ +1 root +/bin/init' <<<"$l" && grep -qE '^ +[0-9]+ root +(/bin/)?sh' <<<"$l"
}
free_mem() {
	local total
	total=$(between @@free @@pipe | awk '/^Mem:/ { print $2 }')
	echo "    # free: total $total kB"
	[ -n "$total" ] && [ "$total" -gt 1900000 ] && [ "$total" -lt 2100000 ]
}
pipelines() {
	[ "$(between @@pipe @@hw)" = "$(printf '3\nABC\n7')" ]
}
# The same lines as Linux's, the sizes within 64 MB.
hardware() {
	local ours theirs ok=0
	ours=$(between @@hw @@hwend | grep -v ' free: ')
	theirs=$(grep -v '^#' tests/debian/numactl-hardware.linux)
	[ "$(grep -c . <<<"$ours")" = "$(grep -c . <<<"$theirs")" ] || ok=1
	paste -d'|' <(echo "$ours") <(echo "$theirs") | while IFS='|' read -r q l; do
		if [[ $q =~ ^node\ ([0-9]+)\ size:\ ([0-9]+)\ MB$ ]] &&
			[[ $l =~ ^node\ ${BASH_REMATCH[1]}\ size:\ ([0-9]+)\ MB$ ]]; then
			local a=${BASH_REMATCH[1]} b
			b=$(sed -E 's/.* ([0-9]+) MB/\1/' <<<"$q")
			echo "    # $q (Linux: $a MB)"
			[ $((b - a)) -le 64 ] && [ $((a - b)) -le 64 ] || { echo "    # size differs by more than 64 MB"; exit 1; }
		elif [ "$q" != "$l" ]; then
			echo "    # Quire: '$q'"
			echo "    # Linux: '$l'"
			exit 1
		fi
	done || ok=1
	return $ok
}
# numastat -p's Total line: MB on nodes 0, 1, 2.
totals() { between "$1" "$2" | awk '/^Total/ && NF == 4 { print $2, $3, $4; exit }'; }
memhog_node2() {
	local m
	read -r -a m <<<"$(totals @@hog @@hogend)"
	echo "    # memhog --membind=2 32M: ${m[*]:-none} MB on nodes 0 1 2"
	[ ${#m[@]} = 3 ] && awk -v n0="${m[0]}" -v n2="${m[2]}" 'BEGIN { exit !(n2 >= 32 && n0 < 1) }'
}
numastat_p() {
	between @@before @@beforeend | grep -q 'Per-node process memory usage (in MBs) for PID [0-9]* (exe)\|for PID [0-9]* (memhog)'
}
migrated() {
	local b a
	read -r -a b <<<"$(totals @@before @@beforeend)"
	read -r -a a <<<"$(totals @@after @@afterend)"
	echo "    # before: ${b[*]:-none} MB on nodes 0 1 2; after: ${a[*]:-none}"
	grep -q '^@@migrate 0$' "$t" || { echo "    # migratepages failed"; return 1; }
	[ ${#b[@]} = 3 ] && [ ${#a[@]} = 3 ] || return 1
	awk -v b0="${b[0]}" -v a0="${a[0]}" -v a2="${a[2]}" \
		'BEGIN { exit !(b0 >= 15 && a2 >= 15 && a0 < 1) }'
}
applets_work() {
	local bad
	bad=$(grep "^@@fail [^']*\$" "$t")
	[ -z "$bad" ] || { sed 's/^/    # /' <<<"$bad"; return 1; }
	[ "$(grep -c "^@@ok [^']*\$" "$t")" = "${#applets[@]}" ]
}

echo "KTAP version 1"
echo "1..1"
echo "    KTAP version 1"
echo "    # Subtest: debian"
echo "    1..10"
check busybox_shell has 'BusyBox v1.*built-in shell (ash)'
check ls_proc ls_proc
check ps ps_lists
check free free_mem
check pipelines pipelines
check numactl_hardware_as_linux hardware
check memhog_membind_node2 memhog_node2
check numastat_p numastat_p
check migratepages_0_to_2 migrated
check applets applets_work
if [ $failed = 0 ] && [ $status = 0 ] && has '^@@done$'; then
	echo "ok 1 debian"
	exit 0
fi
echo "    # guest status $status; transcript: $log.txt"
echo "not ok 1 debian"
exit 1
