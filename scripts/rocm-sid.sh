#!/bin/sh
# Today's ROCm toolchain from Debian unstable (HIP 6.4, hipcc 7, clang 21: gfx942, gfx950, gfx90a,
# gfx1100, gfx1201 ...), in a Debian sid root made once and reused, and a way to run it here.
#
#   rocm-sid.sh root          makes the root if missing (debootstrap, then apt-get), prints its path
#   rocm-sid.sh run CMD ...   runs CMD inside the root, in the current folder, with this machine's
#                             own folders (the checkout, /tmp, /home, ...) at the same paths, and
#                             those of $ROCSHMEM_SID_BIND (":"-separated) where under /var or /opt
#   rocm-sid.sh bin [DIR]     writes wrappers DIR/<tool> (default: beside the root, <root>.bin) (hipcc, clang++, llvm-nm-21 ...) that run
#                             the root's tool that way, for a build that runs on this machine
#                             (with a copy of this script, so they outlive the checkout)
#
# Why a root and not the binaries alone: sid's clang needs sid's C library, and hipcc, clang and
# the offload tools call each other by their paths under /usr. The root is keyed by its package
# list, under $ROCSHMEM_CI_CACHE (default /var/cache/rocshmem-ci), so a machine makes it once
# (about 2 minutes) and later runs reuse it. Needs root, or user namespaces (unshare -r).
# The Debian mirror is the one this machine's apt sources name ($ROCSHMEM_SID_MIRROR overrides).
set -eu

# hipcc, HIP's headers and runtime, the device libraries, clang/lld/llvm 21 (the compiler, the
# offload bundler, llvm-link/opt/llvm-nm/llvm-objdump ...); cmake and make to build user projects
# inside the root as a user of a current distribution would (find_package(hip) from this ROCm).
PKGS="hipcc libamdhip64-dev rocm-device-libs-21 clang-21 lld-21 llvm-21 cmake make mawk"
CACHE=${ROCSHMEM_CI_CACHE:-/var/cache/rocshmem-ci}
KEY=$(printf '%s\n' "$PKGS" | sha256sum | cut -c1-12)
ROOT=${ROCSHMEM_SID_ROOT:-$CACHE/sid-$KEY}

as_root() {  # the namespace that may mount and chroot
  if [ "$(id -u)" = 0 ]; then unshare --mount --propagation private "$@"
  else unshare --user --map-root-user --mount --propagation private "$@"; fi
}

mirror() {
  [ -n "${ROCSHMEM_SID_MIRROR:-}" ] && { echo "$ROCSHMEM_SID_MIRROR"; return; }
  m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs: *//p' | tr ' ' '\n' |
      grep -v security | grep '/debian/*$' | head -1)
  [ -n "$m" ] || m=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\/debian\/*\) .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -1)
  echo "${m:-http://deb.debian.org/debian}"
}

make_root() {
  [ -f "$ROOT/.complete" ] && return 0
  [ "$(id -u)" = 0 ] || { echo "rocm-sid: making $ROOT needs root (debootstrap)" >&2; exit 1; }
  command -v debootstrap >/dev/null || {
    echo "rocm-sid: installing debootstrap" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -o DPkg::Lock::Timeout=600 -y -q --no-install-recommends debootstrap >/dev/null ||
      { apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -o DPkg::Lock::Timeout=600 -y -q --no-install-recommends debootstrap >/dev/null; }
  }
  start=$(date +%s)
  tmp="$ROOT.part"
  rm -rf "$tmp"
  mkdir -p "$CACHE"
  echo "rocm-sid: debootstrap sid into $ROOT ($(mirror))" >&2
  debootstrap --variant=minbase sid "$tmp" "$(mirror)" >"$tmp.log" 2>&1 ||
    { tail -20 "$tmp.log" >&2; echo "rocm-sid: FAIL: debootstrap (log: $tmp.log)" >&2; exit 1; }
  cp /etc/resolv.conf "$tmp/etc/resolv.conf"
  mkdir -p "$tmp/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$tmp/etc/ssl/certs/ca-certificates.crt"
  echo "rocm-sid: apt-get install $PKGS" >&2
  # shellcheck disable=SC2086
  inside "$tmp" / sh -c "export DEBIAN_FRONTEND=noninteractive
    apt-get -q -o Acquire::Check-Valid-Until=false update &&
    apt-get install -y -q --no-install-recommends $PKGS && apt-get clean" >>"$tmp.log" 2>&1 ||
    { tail -20 "$tmp.log" >&2; echo "rocm-sid: FAIL: apt-get in the sid root (log: $tmp.log)" >&2; exit 1; }
  inside "$tmp" / hipcc --version >>"$tmp.log" 2>&1
  rm -f "$tmp.log"
  date -u +%Y-%m-%dT%H:%MZ >"$tmp/.complete"
  mv "$tmp" "$ROOT"
  echo "rocm-sid: made $ROOT in $(($(date +%s) - start)) s" >&2
}

# inside <root> <dir> CMD...: CMD in <root> with this machine's top-level folders bound at the
# same paths (all but the system ones the root has itself), /proc, /dev, /sys, and <dir> as cwd.
inside() {
  r=$1; d=$2; shift 2
  as_root sh -c '
    r=$1; d=$2; shift 2
    for p in /proc /dev /sys; do mount --rbind "$p" "$r$p" 2>/dev/null || true; done
    for p in /*; do
      case "$p" in
        /bin|/boot|/dev|/etc|/lib|/lib32|/lib64|/libx32|/lost+found|/media|/opt|/proc|/run|/sbin|/snap|/sys|/usr|/var) continue ;;
      esac
      [ -d "$p" ] && [ ! -L "$p" ] || continue
      mkdir -p "$r$p" && mount --rbind "$p" "$r$p"
    done
    # The cwd, and the folders of ROCSHMEM_SID_BIND (":"-separated; CI: cargo'"'"'s target folder in
    # /var/cache, where the AMD build writes), when they are under a folder the root has itself.
    old_ifs=$IFS; IFS=:
    for p in "$d" ${ROCSHMEM_SID_BIND:-}; do
      case "$p" in /var/*|/opt/*|/media/*|/run/*) [ -d "$p" ] && mkdir -p "$r$p" && mount --rbind "$p" "$r$p" ;; esac
    done
    IFS=$old_ifs
    exec chroot "$r" /bin/sh -c '\''cd "$0" && exec "$@"'\'' "$d" "$@"
  ' sh "$r" "$d" "$@"
}

case "${1:-}" in
  root) make_root; echo "$ROOT" ;;
  run)
    shift
    make_root
    inside "$ROOT" "$(pwd)" "$@"
    ;;
  bin)
    make_root
    dir=${2:-$ROOT.bin}
    mkdir -p "$dir"
    cp "$0" "$dir/.rocm-sid.sh"
    for t in hipcc clang clang++ clang-21 clang++-21 ld.lld ld.lld-21; do
      echo "$t"
    done >"$dir/.tools"
    for t in llvm-link opt llvm-nm llvm-ar llvm-dis llvm-extract llc llvm-objdump llvm-readelf llvm-readobj \
             clang-offload-bundler; do
      printf '%s\n%s-21\n' "$t" "$t"
    done >>"$dir/.tools"
    while read -r t; do
      case "$t" in
        *-21) real="/usr/lib/llvm-21/bin/${t%-21}" ;;
        clang|clang++|ld.lld|llvm-*|opt|llc|clang-offload-bundler) real="/usr/lib/llvm-21/bin/$t" ;;
        *) real="/usr/bin/$t" ;;
      esac
      cat >"$dir/$t" <<EOF
#!/bin/sh
# $t of the Debian sid ROCm root $ROOT, run there (made by scripts/rocm-sid.sh bin).
ROCSHMEM_SID_ROOT="$ROOT" exec "$dir/.rocm-sid.sh" run "$real" "\$@"
EOF
      chmod +x "$dir/$t"
    done <"$dir/.tools"
    rm -f "$dir/.tools"
    echo "$dir"
    ;;
  *) echo "usage: rocm-sid.sh root | run CMD ... | bin [DIR]" >&2; exit 2 ;;
esac
