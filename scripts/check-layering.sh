#!/usr/bin/env bash
# check-layering.sh: check that dependencies point one way (DESIGN.md,
# "Layers"): mm/ sits below fs/ and drivers/ and sees the machine only
# through the arch interface; fs/ and drivers/ use mm's public API only.
# Prints KTAP (one case per rule below, each offence as a "# file:line"
# line before its "not ok") and exits 1 if any rule is broken.
#
#   1. mm/*.c, mm/*.h include only include/quire/* (less the headers of
#      fs/, drivers/ and arch internals listed below), include/quire/uapi/*,
#      the asm/* headers that both arch/x86_64 and arch/host provide, and
#      mm's own "x.h" files.
#   2. no fs/ or drivers/ file includes quire/mm_internal.h or mm/*.h.
#   3. (needs a kernel build, BUILD=build) no symbol an mm/ object leaves
#      undefined is defined only by fs/ or drivers/ objects.
#   4. (needs the host build too) every symbol an mm/ object takes from
#      arch/x86_64 is also defined by arch/host, or in its asm/ headers:
#      mm calls the arch interface, never one arch's internals.
#   5. mm/ and include/quire/ name no page-table bit (_PAGE_*, PTE_PFN_MASK):
#      the entry format is the arch's, behind accessors (asm/pte_format.h).
#   6. mm/ and include/quire/ store to a page-table entry only through the
#      arch's accessors (set_pte, set_ptes, set_pmd, pte_clear,
#      ptep_get_and_clear, ptep_set_wrprotect, pmd_populate, ...:
#      asm/pgtable.h), never by a plain store, compound assignment, ++/--,
#      or a raw WRITE_ONCE/__atomic_*/memset/memcpy on it: an entry may be
#      live, and lockless readers and the MMU need every store to be one
#      marked store or one atomic instruction (docs/locking.md, "Stores to
#      live entries"). An entry pointer is any name declared `pte_t *` in
#      the file, a `->pte`/`->pmd` (or `.pte`/`.pmd`) member, or what
#      pte_offset, pte_lookup, pmd_lookup, pmd_alloc or pte_offset_map_lock
#      return.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
bad=0		# offences of the rule being checked
failed=0	# rules broken

offend() { echo "# $*"; bad=1; }
rule() {	# rule N NAME: report the rule just checked
	if [ $bad = 0 ]; then echo "ok $1 $2"; else echo "not ok $1 $2"; failed=1; fi
	bad=0
}
echo "KTAP version 1"
echo "1..6"

# Headers under include/quire/ that are the face of fs/, drivers/ or arch
# internals toward kernel/, not something mm/ may lean on.
PRIVATE_HEADERS="quire/acpi.h
quire/bootinfo.h
quire/console.h
quire/serial.h
quire/power.h
quire/initrd.h
quire/pseudofs.h"

# Known exceptions, as "file header" or "file symbol-glob" (a shell pattern).
# The VFS's file reference: a VMA holds one and drops it with fput when the
# VMA goes, as Linux's mm does (fput is the public face of struct file in
# quire/fs.h; get_file is inline there).
ALLOW="mm/mmap.c fput"

allowed() {	# allowed FILE WHAT
	local f p
	while read -r f p; do
		# shellcheck disable=SC2053  # p is a glob on purpose
		[[ $1 == "$f" && $2 == $p ]] && return 0
	done <<<"$ALLOW"
	return 1
}

# asm/* names both arches provide: the arch interface.
arch_asm=$(comm -12 <(ls arch/x86_64/include/asm) <(ls arch/host/include/asm) | sed 's|^|asm/|')

# 1. mm/'s includes.
while IFS=: read -r file line text; do
	hdr=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]*)[>"].*/\1/' <<<"$text")
	case $text in
	*\"*\"*)	# "x.h": only mm's own files
		[[ $hdr != */* && -f mm/$hdr ]] && continue ;;
	*)
		if [[ $hdr == quire/uapi/* ]] ||
		   { [[ $hdr == quire/* && -f include/$hdr ]] && ! grep -qxF "$hdr" <<<"$PRIVATE_HEADERS"; } ||
		   grep -qxF "$hdr" <<<"$arch_asm"; then
			continue
		fi ;;
	esac
	allowed "$file" "$hdr" || offend "$file:$line: mm includes $hdr"
done < <(grep -nE '^[[:space:]]*#[[:space:]]*include' mm/*.c mm/*.h)
rule 1 mm_includes_only_public_headers

# 2. fs/ and drivers/ stay out of mm's internals.
while IFS=: read -r file line text; do
	offend "$file:$line: includes an mm-internal header: $text"
done < <(grep -rnE --include='*.[ch]' \
	'^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]((\.\./)*mm/[^>"]*|quire/mm_internal\.h)[>"]' fs drivers)
rule 2 fs_and_drivers_use_mm_public_api

# 3. Symbols. Objects whose source is gone (a moved file) are stale: skipped.
live_objs() {	# live_objs DIR...: objects under BUILD/obj/DIR whose X.c/X.S exists
	local o
	for o in $(cd "$BUILD/obj" 2>/dev/null && find "$@" -name '*.o'); do
		o=${o#./}
		[ -f "${o%.o}" ] && echo "$BUILD/obj/$o"
	done
}
undefined() {	# symbols the objects in stdin leave undefined
	xargs -r nm -u 2>/dev/null | awk 'NF == 2 { print $2 }' | sort -u
}
defined() {	# global symbols the objects in stdin define
	xargs -r nm --defined-only 2>/dev/null | awk 'NF == 3 && $2 ~ /[A-Z]/ { print $3 }' | sort -u
}
mm_objs=$(live_objs mm)
if [ -z "$mm_objs" ]; then
	offend "no objects under $BUILD/obj/mm: build the kernel first"
fi
all_objs=$(live_objs .)
fsdrv_only=$(comm -23 <(grep -E "^$BUILD/obj/(fs|drivers)/" <<<"$all_objs" | defined) \
		      <(grep -vE "^$BUILD/obj/(fs|drivers)/" <<<"$all_objs" | defined))
for o in $mm_objs; do
	src=${o#"$BUILD"/obj/}
	src=${src%.o}
	for sym in $(nm -u "$o" | awk '{ print $2 }' | sort -u | comm -12 - <(echo "$fsdrv_only")); do
		allowed "$src" "$sym" || offend "$src: calls $sym, defined in fs/ or drivers/"
	done
done

rule 3 mm_calls_nothing_of_fs_or_drivers

# 4. Symbols mm takes from arch/x86_64 must be the arch interface: arch/host
#    defines them too.
host_arch=$(find "$BUILD/host/arch/host" -name '*.o' 2>/dev/null)
if [ -z "$host_arch" ]; then
	offend "no objects under $BUILD/host/arch/host: build the host tests first (make test-host)"
else
	x86_only=$(comm -23 <(grep -E "^$BUILD/obj/arch/x86_64/" <<<"$all_objs" | defined) \
			    <(defined <<<"$host_arch"))
	for sym in $(undefined <<<"$mm_objs" | comm -12 - <(echo "$x86_only")); do
		# An inline of arch/host's headers is the interface too.
		grep -qw "$sym" arch/host/include/asm/*.h && continue
		offend "mm/ calls $sym, which only arch/x86_64 defines (not part of the arch interface)"
	done
fi
rule 4 mm_calls_only_the_arch_interface

# 5. The page-table format is the arch's (asm/pte_format.h): mm/ and the
#    generic headers use its accessors and name none of its bits.
while IFS=: read -r file line text; do
	offend "$file:$line: names a page-table bit: $(sed -E 's/^[[:space:]]+//' <<<"$text")"
done < <(grep -nE '\b(_PAGE_(PRESENT|RW|USER|PWT|PCD|ACCESSED|DIRTY|PSE|PAT|GLOBAL|PROTNONE|NX)|PTE_PFN_MASK)\b' \
	mm/*.c mm/*.h include/quire/*.h)
rule 5 mm_names_no_page_table_bit

# 6. Stores to page-table entries go through the arch's accessors. Comments
#    are blanked first (lines kept); the names are collected per file. A
#    `TYPE *name = ...` declaration is not a store; `return *p = x` is.
read -r -d '' RULE6_SCAN <<'PERL'
my $ops = qr{(?:=(?!=)|[-+*/%&|^]=|<<=|>>=|\+\+|--)};
my $getters = qr{(?:pte_offset|pte_lookup|pmd_lookup|pmd_alloc|pte_offset_map_lock)};
my $prims = qr{(?:WRITE_ONCE|__atomic_\w+|__sync_\w+|memset|memcpy|memmove)};
for my $file (@ARGV) {
	open(my $fh, "<", $file) or die "$file: $!\n";
	my $src = do { local $/; <$fh> };
	close $fh;
	$src =~ s{/\*.*?\*/}{ (my $c = $&) =~ s/[^\n]//g; $c }gse;
	$src =~ s{//[^\n]*}{}g;
	my %names;
	$names{$1} = 1 while $src =~ /\bpte_t\s*\*\s*([A-Za-z_]\w*)/g;
	for my $decl ($src =~ /^[ \t]*(?:const\s+)?pte_t\b[^;{]*/mg) {
		$names{$1} = 1 while $decl =~ /,\s*\*\s*([A-Za-z_]\w*)/g;
	}
	my $alt = '\w+\s*(?:->|\.)\s*(?:pte|pmd)\b';
	$alt .= '|\b(?:' . join('|', map { quotemeta } sort keys %names) . ')\b' if %names;
	my $ptr = qr{(?:$alt)};
	my $lineno = 0;
	for my $line (split /\n/, $src, -1) {
		$lineno++;
		my $why;
		while ($line =~ /\*\s*\(?\s*$ptr\s*\)?\s*(?:\[[^\]]*\])?\s*$ops/g) {
			my $before = substr($line, 0, $-[0]);
			next if $before =~ /\b(\w+)\s*$/ && $1 !~ /^(?:return|else|do|case)$/;
			next if $before =~ /,\s*$/ && $line =~ /^\s*(?:const\s+)?pte_t\b/;
			$why = "stores to an entry directly";
			last;
		}
		$why //= "stores to an entry directly"
			if $line =~ /(?:\+\+|--)\s*\*\s*$ptr/ || $line =~ /$ptr\s*\[[^\]]*\]\s*$ops/;
		$why //= "stores through a page-table walker's result directly"
			if $line =~ /\*\s*$getters\s*\([^;]*\)\s*$ops/;
		$why //= "writes an entry with a raw primitive"
			if $line =~ /\b$prims\s*\(\s*&?\s*\*?\s*\(?\s*$ptr/;
		$why //= "sees a page table as u64 * (entries are pte_t, the names this rule knows)"
			if $line =~ /\bu64\s*\*\s*\w+\s*=\s*(?:\(\s*u64\s*\*\s*\)\s*)?(?:__va|page_address)\b/;
		next unless $why;
		(my $text = $line) =~ s/^\s+//;
		print "$file:$lineno: $why (use asm/pgtable.h's accessors): $text\n";
	}
}
PERL
if ! rule6_out=$(perl -e "$RULE6_SCAN" mm/*.c mm/*.h include/quire/*.h); then
	offend "the scan itself failed (perl)"
fi
while IFS= read -r offence; do
	[ -n "$offence" ] && offend "$offence"
done <<<"$rule6_out"
rule 6 mm_stores_entries_through_accessors

[ $failed = 0 ] && echo "# check-layering: OK"
exit $failed
