#!/usr/bin/env bash
# debian-userland.sh OUTDIR: a root tree of Debian's own programs for
# `make run USERLAND=debian` (docs/userspace.md, "Debian's busybox and
# numactl"): busybox-static as /bin/busybox with every applet's link
# (/bin/sh among them), numactl's programs (numactl, migratepages,
# migspeed, memhog, numastat) in /usr/bin with the shared libraries ldd
# names for them, copied from the host, /etc/profile (PATH) and
# /etc/passwd, /etc/group (root), which ps and ls read.
#
# The .deb files come from the host's apt (apt-get download, the versions
# its package lists name) into $DEB_CACHE (build/debian/debs); the
# libraries are the host's own (libnuma1 is installed by
# scripts/deps.sh --for debian, with busybox-static's and numactl's
# dependencies checked there). Quire's /bin/init is kept: it starts the
# shell with the console as its controlling terminal.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
out=$1
cache=${DEB_CACHE:-$(dirname "$out")/debs}
mkdir -p "$cache"

fetch() {	# fetch PACKAGE: its .deb in $cache (once)
    local pkg=$1
    if ! ls "$cache/${pkg}"_*.deb >/dev/null 2>&1; then
        (cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) || {
            echo "debian-userland: cannot download $pkg (apt-get download $pkg)" >&2
            exit 1
        }
    fi
    ls "$cache/${pkg}"_*.deb | head -n 1
}

rm -rf "$out"
mkdir -p "$out/unpacked" "$out/root"
root=$out/root
dpkg-deb -x "$(fetch busybox-static)" "$out/unpacked"
dpkg-deb -x "$(fetch numactl)" "$out/unpacked"

install -D -m 0755 "$out/unpacked/bin/busybox" "$root/bin/busybox"
# Every applet as a link to /bin/busybox, where busybox itself would put it,
# but init: Quire's /bin/init stays (busybox's is /sbin/init anyway).
"$root/bin/busybox" --list-full | while read -r applet; do
    case $applet in
    bin/busybox | bin/init | linuxrc) continue ;;
    esac
    mkdir -p "$root/$(dirname "$applet")"
    ln -sf /bin/busybox "$root/$applet"
done

libs=()
for prog in numactl migratepages migspeed memhog numastat; do
    install -D -m 0755 "$out/unpacked/usr/bin/$prog" "$root/usr/bin/$prog"
    while read -r lib; do
        libs+=("$lib")
    done < <(ldd "$out/unpacked/usr/bin/$prog" | awk '/=>/ && $3 ~ /^\// { print $3 } /^\t\/lib/ { print $1 }')
done
for lib in $(printf '%s\n' "${libs[@]}" | sort -u); do
    # The path the loader looks up (/lib/x86_64-linux-gnu/libnuma.so.1), the
    # file behind it copied whole.
    install -D -m 0755 "$(readlink -f "$lib")" "$root/$lib"
done

mkdir -p "$root/etc" "$root/root"
cat > "$root/etc/profile" <<'PROFILE'
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/tests
export HOME=/root PS1='quire:\w# '
PROFILE
echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"
echo quire > "$root/etc/hostname"
echo "debian-userland: $(find "$root" -type l | wc -l) links, $(find "$root" -type f | wc -l) files in $root"
