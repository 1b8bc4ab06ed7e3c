#!/usr/bin/env bash
# mkinitrd.sh OUT.cpio DIR...
#
# Packs the contents of each DIR into one cpio "newc" archive (magic
# 070701), the initrd's format: DIR/bin/sh becomes /bin/sh. A later DIR
# overlays an earlier one (EXTRA_INITRD comes last). Regular files,
# directories and symlinks are packed; anything else is skipped with a
# warning. The archive is deterministic: entries sorted by path, parents
# before children, owner 0:0, mtime 0 (or $SOURCE_DATE_EPOCH), inode
# numbers in order, padded to 512 bytes after TRAILER!!!. OUT is only
# rewritten when its content changes, so make does not rebuild what
# depends on it.
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 OUT.cpio DIR..." >&2
    exit 2
fi
out=$1
shift
for d in "$@"; do
    [ -d "$d" ] || { echo "mkinitrd: '$d' is not a directory" >&2; exit 1; }
done

tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
mkdir -p "$(dirname "$out")"
python3 - "$tmp" "$@" <<'PY'
import os, stat, sys

out, dirs = sys.argv[1], sys.argv[2:]
mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
entries = {}        # archive path -> (mode, data)
for top in dirs:
    for root, subdirs, files in os.walk(top, followlinks=False):
        subdirs.sort()
        for name in subdirs + sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, top)
            st = os.lstat(path)
            perm = stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                entries[rel] = (stat.S_IFDIR | perm, b"")
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    entries[rel] = (stat.S_IFREG | perm, f.read())
            elif stat.S_ISLNK(st.st_mode):
                entries[rel] = (stat.S_IFLNK | 0o777, os.readlink(path).encode())
            else:
                print(f"mkinitrd: {path}: not a file, directory or symlink; skipped",
                      file=sys.stderr)
# Parents of every entry, in case a DIR only brought deeper paths.
for rel in list(entries):
    parent = os.path.dirname(rel)
    while parent and parent not in entries:
        entries[parent] = (stat.S_IFDIR | 0o755, b"")
        parent = os.path.dirname(parent)

def pad4(n):
    return b"\0" * (-n % 4)

blob = bytearray()
def add(name, mode, data, ino):
    nlink = 2 if stat.S_ISDIR(mode) else 1
    fields = [ino, mode, 0, 0, nlink, mtime, len(data), 0, 0, 0, 0, len(name) + 1, 0]
    hdr = b"070701" + b"".join(b"%08X" % f for f in fields)
    blob.extend(hdr + name.encode() + b"\0")
    blob.extend(pad4(len(hdr) + len(name) + 1))
    blob.extend(data)
    blob.extend(pad4(len(data)))

for ino, rel in enumerate(sorted(entries, key=lambda p: p.split(os.sep)), start=1):
    mode, data = entries[rel]
    add(rel, mode, data, ino)
add("TRAILER!!!", 0, b"", 0)
blob.extend(b"\0" * (-len(blob) % 512))
with open(out, "wb") as f:
    f.write(blob)
PY
if cmp -s "$tmp" "$out" 2>/dev/null; then
    rm -f "$tmp"
else
    mv -f "$tmp" "$out"
fi
