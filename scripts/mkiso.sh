#!/usr/bin/env bash
# mkiso.sh OUT.iso KERNEL.elf "CMDLINE" [INITRD]
#
# Builds a hybrid GRUB ISO (boots on BIOS and on UEFI, as a CD-ROM or as a
# raw disk) that loads KERNEL.elf with multiboot2 and the given command line.
# With INITRD, the file is added as a multiboot2 module named "initrd".
# Quiet on success; on failure shows grub-mkrescue's output.
#
# The command line is split into words at whitespace; GRUB joins them again
# with single spaces, and puts a backslash before any ' " or \ in them, so
# the kernel sees those characters escaped (direct boot passes them as is).
set -euo pipefail

usage() {
    echo "usage: $0 OUT.iso KERNEL.elf \"CMDLINE\" [INITRD]" >&2
    exit 2
}

if [ $# -lt 3 ] || [ $# -gt 4 ]; then usage; fi
out=$1
kernel=$2
cmdline=$3
initrd=${4:-}

[ -f "$kernel" ] || { echo "mkiso: kernel '$kernel' not found" >&2; exit 1; }
if [ -n "$initrd" ] && [ ! -f "$initrd" ]; then
    echo "mkiso: initrd '$initrd' not found" >&2
    exit 1
fi

# Quote each word of the command line for GRUB's script parser: a word is
# wrapped in single quotes, and a single quote inside it becomes '\''.
# Words are kept separate because GRUB puts double quotes around any
# argument that contains a space when it builds the kernel's command line.
grub_words=""
read -r -a words <<<"$cmdline" || true
for w in ${words[@]+"${words[@]}"}; do
    grub_words+=" '${w//\'/\'\\\'\'}'"
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/quire-iso.XXXXXX")
log="$stage.log"
trap 'rm -rf "$stage" "$log"' EXIT

mkdir -p "$stage/boot/grub"
cp "$kernel" "$stage/boot/quire.elf"
module_line=""
if [ -n "$initrd" ]; then
    cp "$initrd" "$stage/boot/initrd.cpio"
    module_line="    module2 /boot/initrd.cpio initrd"
fi

# GRUB stays off the serial port: it would swallow input typed (or piped)
# before the kernel starts, which the kernel keeps for the shell.
cat >"$stage/boot/grub/grub.cfg" <<EOF
set timeout=0
set default=0

menuentry "Quire" {
    multiboot2 /boot/quire.elf${grub_words}
${module_line}
    boot
}
EOF

mkdir -p "$(dirname "$out")"
# Write to a temporary name first so that a failed build never leaves a
# half-written ISO where a previous good one was.
tmp_out="$out.tmp.$$"
if ! grub-mkrescue -o "$tmp_out" "$stage" >"$log" 2>&1; then
    echo "mkiso: grub-mkrescue failed:" >&2
    cat "$log" >&2
    rm -f "$tmp_out"
    exit 1
fi
mv -f "$tmp_out" "$out"
