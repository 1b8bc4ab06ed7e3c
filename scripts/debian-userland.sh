#!/usr/bin/env bash
# debian-userland.sh OUTDIR: a root tree of Debian's own programs for
# `make run USERLAND=debian` (docs/userspace.md, "Debian's busybox and
# numactl"): busybox-static as /bin/busybox with every applet's link
# (/bin/sh among them), numactl's programs (numactl, migratepages,
# migspeed, memhog, numastat) in /usr/bin with the shared libraries ldd
# names for them, copied from the host, /etc/profile (PATH) and
# /etc/passwd, /etc/group (root), which ps and ls read.
#
# The .deb files are downloaded by scripts/deps.sh --for debian (apt-get
# download: the versions the host's package lists name) into $DEB_CACHE
# (build/debian/debs); the libraries are the host's own (libnuma1, which
# deps.sh installs when missing, and glibc). Quire's /bin/init is kept: it
# starts the shell with the console as its controlling terminal.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
out=$1
cache=${DEB_CACHE:-$(dirname "$out")/debs}

deb() {	# deb PACKAGE: its .deb in $cache
    local f
    f=$(ls "$cache/${1}"_*.deb 2>/dev/null | head -n 1)
    [ -n "$f" ] || { echo "debian-userland: no $1 .deb in $cache (scripts/deps.sh --for debian fetches it)" >&2; exit 1; }
    echo "$f"
}

rm -rf "$out/root" "$out/unpacked"
mkdir -p "$out/unpacked" "$out/root"
root=$out/root
dpkg-deb -x "$(deb busybox-static)" "$out/unpacked"
dpkg-deb -x "$(deb numactl)" "$out/unpacked"

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
