#!/usr/bin/env bash
# Generate the kernel symbol table (an assembly file for the .ksyms section)
# from a linked kernel: every text symbol, sorted by address.
#   gen-ksyms.sh NM KERNEL.elf > ksyms.S      (KERNEL may be "-" for an empty table)
set -euo pipefail
nm_cmd=$1
elf=$2

emit() {
	# stdin: "address name" lines, sorted by address
	awk '
	{ addr[NR] = $1; name[NR] = $2 }
	END {
		print "\t.section .ksyms, \"a\""
		print "\t.globl ksyms_count, ksyms_addrs, ksyms_name_offsets, ksyms_names"
		print "\t.balign 8"
		print "ksyms_count:\t.quad " NR
		print "ksyms_addrs:"
		for (i = 1; i <= NR; i++) print "\t.quad 0x" addr[i]
		print "ksyms_name_offsets:"
		off = 0
		for (i = 1; i <= NR; i++) { print "\t.long " off; off += length(name[i]) + 1 }
		print "ksyms_names:"
		for (i = 1; i <= NR; i++) print "\t.asciz \"" name[i] "\""
	}'
}

if [ "$elf" = "-" ]; then
	emit < /dev/null
	exit 0
fi
# Text symbols only (t/T, w/W for weak functions); one name per address,
# preferring a global name over a local alias; skip compiler-local labels.
$nm_cmd -n --defined-only "$elf" |
	awk '$2 ~ /^[tTwW]$/ && $3 !~ /^\.L/ && $1 ~ /^ffffffff8/ { print $1, $3, ($2 ~ /[TW]/) }' |
	awk '{
		if ($1 == last) { if ($3 && !lastg) { name = $2; lastg = 1 } ; next }
		if (NR > 1) print last, name
		last = $1; name = $2; lastg = $3
	}
	END { if (NR) print last, name }' |
	emit
