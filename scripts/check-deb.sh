#!/bin/sh
# The Debian packages end to end (docs/packaging.md): build them with dpkg-buildpackage, run
# lintian, install them with apt in a clean Debian 12 root, and use them from the system paths
# as a user would: a C program built with `pkg-config --cflags --libs rocshmem` run with 2 PEs
# under rocshmem-run, a CMake project with find_package(rocshmem) (shared and static library),
# Python's ctypes.CDLL("librocshmem.so.3") at 2 PEs, and rocshmem_info; then purge them and
# check that they left nothing behind.
#   scripts/check-deb.sh [BUILD_DIR]
#   scripts/check-deb.sh --root      only make the clean root below (if missing)
# BUILD_DIR: a CMake build of this checkout (CI: build). The package build then reuses its cargo
# target folder (debian/rules: ROCSHMEM_DEB_CARGO_TARGET_DIR, default BUILD_DIR/cargo; CI names
# one of the package's own, scripts/test.sh) with the same AMD arches and hipcc (ROCSHMEM_HIPCC:
# CI's is today's ROCm, scripts/rocm-sid.sh), and builds without the AMD device library when
# that build has none. Without it: a full package build, its AMD device library with $HIPCC
# for $ROCSHMEM_GPU_TARGETS when set (CI: today's ROCm, and ROCSHMEM_AMD_LLVM_BIN its LLVM
# tools), else with Debian 12's HIP 5.2.
# The clean root (mmdebstrap: Debian 12 with gcc, g++, make, cmake, pkg-config, python3, from
# this machine's apt sources) is made once and kept in $ROCSHMEM_DEB_ROOT (default
# $ROCSHMEM_CI_CACHE/bookworm-root, /var/cache/rocshmem-ci/bookworm-root); every run works in an overlay on it and leaves it clean.
# The packages are built in place, so dpkg-buildpackage writes them next to the checkout; they
# are moved from there into a temporary folder at once ($ROCSHMEM_DEB_KEEP=DIR keeps a copy).
set -eu
cd "$(dirname "$0")/.."
here=$(pwd)
build=${1:-}
work=$(mktemp -d)
mnt=""
cleanup() {
  if [ -n "$mnt" ]; then umount -R "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
say() { echo "deb: $*"; }
fail() { echo "deb: FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (chroot and mounts for the clean root)"

# The clean root, made once and kept while its package list is unchanged.
root=${ROCSHMEM_DEB_ROOT:-${ROCSHMEM_CI_CACHE:-/var/cache/rocshmem-ci}/bookworm-root}
make_clean_root() {
  tools="gcc g++ libc6-dev make cmake pkg-config python3"
  [ "$(cat "$root.stamp" 2>/dev/null)" != "$tools" ] || return 0
  t0=$(date +%s)
  command -v mmdebstrap >/dev/null || fail "mmdebstrap not found (scripts/deps.sh --test installs it)"
  rm -rf "$root" "$root.new" "$root.stamp"
  mkdir -p "$(dirname "$root")"
  sources=""
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    if [ -f "$f" ] && grep -q '^[^#]' "$f"; then sources="$sources $f"; fi
  done
  # shellcheck disable=SC2086
  mmdebstrap --quiet --variant=apt --include="$(echo "$tools" | tr ' ' ,)" bookworm "$root.new" $sources \
    >"$work/mmdebstrap.log" 2>&1 || { tail -20 "$work/mmdebstrap.log"; fail "mmdebstrap"; }
  mv "$root.new" "$root"
  echo "$tools" >"$root.stamp"
  say "clean Debian 12 root made in $(( $(date +%s) - t0 )) s: $root"
}
# --root: only make the clean root (scripts/test.sh starts it early, beside other work).
if [ "${1:-}" = "--root" ]; then
  make_clean_root
  exit 0
fi

version=$(sed -n 's/^version = "\([0-9.]*\)"$/\1/p' Cargo.toml | head -1)
arch=$(dpkg --print-architecture)
major=${version%%.*}

# ---- 1. build the packages
t0=$(date +%s)
profile=""
llvm_major=""
llvm_bin=""
if [ -n "$build" ]; then
  build=$(cd "$build" && pwd)
  # Cargo's products of that build are reused (or those of another target folder, named).
  export ROCSHMEM_DEB_CARGO_TARGET_DIR="${ROCSHMEM_DEB_CARGO_TARGET_DIR:-$build/cargo}"
  if [ -f "$build/lib/librocshmem_device.a" ]; then
    targets=$(sed -n 's/^ROCSHMEM_GPU_TARGETS:STRING=//p' "$build/CMakeCache.txt")
    if [ -n "$targets" ]; then export ROCSHMEM_GPU_TARGETS="$targets"; fi
    hipcc=$(sed -n 's/^ROCSHMEM_HIPCC:FILEPATH=//p' "$build/CMakeCache.txt")
    if [ -n "$hipcc" ]; then export HIPCC="$hipcc"; fi
    # The packaged device library is checked below with the LLVM tools of that hipcc's clang.
    llvm_major=$("${hipcc:-hipcc}" --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
    llvm_bin=$(sed -n 's/^ROCSHMEM_AMD_LLVM_BIN:PATH=//p' "$build/CMakeCache.txt")
  else
    profile=pkg.rocshmem.noamd
  fi
elif [ -n "${HIPCC:-}" ]; then
  # No build: the AMD device library is built with the hipcc, arches (ROCSHMEM_GPU_TARGETS) and
  # LLVM tools (ROCSHMEM_AMD_LLVM_BIN) of the environment.
  llvm_major=$("$HIPCC" --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  llvm_bin=${ROCSHMEM_AMD_LLVM_BIN:-}
fi
# The files dpkg-buildpackage writes next to the checkout, by the names in the .changes.
changes="../rocshmem_${version}_${arch}.changes"
rm -f "$changes"
# The crate itself is compiled again: the test build has the test doubles (cargo feature
# test-doubles), the package never does.
if ! dpkg-buildpackage -us -uc -b --post-clean ${profile:+-P"$profile"} >"$work/build.log" 2>&1; then
  tail -40 "$work/build.log"
  fail "dpkg-buildpackage (log above)"
fi
mkdir "$work/debs"
for f in $(sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]\{32\} [0-9]* [^ ]* [^ ]* \(.*\)$/\1/p' "$changes") "$(basename "$changes")"; do
  mv "../$f" "$work/debs/"
done
if [ -n "${ROCSHMEM_DEB_KEEP:-}" ]; then mkdir -p "$ROCSHMEM_DEB_KEEP" && cp "$work/debs"/* "$work/build.log" "$ROCSHMEM_DEB_KEEP/"; fi
grep -E "dpkg-gensymbols: warning|^ *[+-] " "$work/build.log" | head -20 || true
say "built in $(( $(date +%s) - t0 )) s${profile:+ (profile $profile)}: $(cd "$work/debs" && ls ./*.deb | sed 's|^\./||' | tr '\n' ' ')"
for p in "librocshmem${major}" librocshmem-dev rocshmem-tools; do
  [ -f "$work/debs/${p}_${version}_${arch}.deb" ] || fail "no package $p ${version}"
done

# ---- 2. lintian, at its default level: errors and warnings fail
t0=$(date +%s)
if ! lintian --fail-on error,warning "$work/debs/$(basename "$changes")" >"$work/lintian.log" 2>&1; then
  cat "$work/lintian.log"
  fail "lintian"
fi
grep -v "root privileges is not recommended" "$work/lintian.log" | sed 's/^/  /' || true
say "lintian: no errors or warnings ($(( $(date +%s) - t0 )) s)"

# The packaged library exports no test entry point (src/test_hooks.rs, feature test-doubles).
dpkg-deb -x "$work/debs/librocshmem${major}_${version}_${arch}.deb" "$work/rt"
hooks=$(nm -D --defined-only "$work"/rt/usr/lib/*/librocshmem.so.* | grep -c " rocshmemi_gda_" || true)
[ "$hooks" -eq 0 ] || fail "librocshmem${major} exports $hooks test entry points (rocshmemi_gda_*)"
say "librocshmem${major}: no test entry points exported"

# The AMD device library as packaged (dh_strip has been over the archives): every arch's
# bitcode entry points and globals, device code and host glue in both archives (the stream
# kernels are inside librocshmem.so: the build's check-amd covers them).
if dpkg-deb -c "$work/debs/librocshmem-dev_${version}_${arch}.deb" | grep "librocshmem_device.a$" >/dev/null; then
  dpkg-deb -x "$work/debs/librocshmem-dev_${version}_${arch}.deb" "$work/dev"
  PATH="${llvm_bin:+$llvm_bin:}$PATH" CHECK_AMD_LLVM="${llvm_major:-15}" AMD_OUT=$(echo "$work"/dev/usr/lib/*/) \
    CHECK_AMD_ALL=1 CHECK_AMD_STREAM=0 ./scripts/check-amd.sh >"$work/amd.log" 2>&1 ||
    { cat "$work/amd.log"; fail "the AMD device library in librocshmem-dev"; }
  say "librocshmem-dev: $(tail -1 "$work/amd.log" | sed 's/^check-amd: //')"
  # PyTorch's rocSHMEM Triton layer looks for librocshmem_device_<arch>.bc in /usr/lib.
  nbc=0
  for bc in "$work"/dev/usr/lib/*/librocshmem_device_*.bc; do
    b=$(basename "$bc")
    cmp -s "$bc" "$work/dev/usr/lib/$b" || fail "librocshmem-dev: /usr/lib/$b is missing or not $bc (PyTorch looks there)"
    nbc=$((nbc + 1))
  done
  say "librocshmem-dev: $nbc bitcode files also in /usr/lib (PyTorch's search path)"
fi

# ---- 3. the clean root: made once (above), then an overlay per run
make_clean_root
mkdir "$work/upper" "$work/ovl" "$work/root"
if mount -t overlay overlay -o "lowerdir=$root,upperdir=$work/upper,workdir=$work/ovl" "$work/root" 2>/dev/null; then
  mnt="$work/root"
else  # no overlayfs here: a copy
  cp -a "$root/." "$work/root/"
  mount --bind "$work/root" "$work/root"
  mnt="$work/root"
fi
mount -t proc proc "$mnt/proc"
mount -t tmpfs -o mode=1777 tmpfs "$mnt/dev/shm"
mount -t tmpfs tmpfs "$mnt/tmp"
mkdir "$mnt/tmp/debs" "$mnt/tmp/src"
cp "$work/debs"/*.deb "$mnt/tmp/debs/"
cp -r ctests/install/consumer "$mnt/tmp/src/consumer"
cp ctests/python/ctypes_test.py "$mnt/tmp/src/"
in_root() { chroot "$mnt" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 /bin/sh -ec "$1"; }
# What the root holds before (apt's and dpkg's own records left out: they remember the packages).
files_now() {
  in_root 'find / -xdev \( -path /proc -o -path /dev -o -path /tmp -o -path /var/lib/dpkg -o -path /var/lib/apt \
           -o -path /var/cache -o -path /var/log -o -path /etc/ld.so.cache \) -prune -o -print | sort'
}
files_now >"$work/before.txt"

# ---- 4. install with apt, and use as a user would
in_root 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /tmp/debs/*.deb' \
  >"$work/apt.log" 2>&1 || { tail -30 "$work/apt.log"; fail "apt-get install ./*.deb in the clean root"; }
say "installed with apt in the clean root: $(in_root 'dpkg-query -W -f="\${Package} " "librocshmem*" "rocshmem*"')"
in_root "dpkg -L librocshmem${major} librocshmem-dev rocshmem-tools" | sort >"$work/owned.txt"
if ! in_root "cd /tmp/src
  cc -o pkgconfig_c consumer/consumer.c \$(pkg-config --cflags --libs rocshmem)
  rocshmem-run -n 2 ./pkgconfig_c
  cmake -S consumer -B cm >/dev/null
  cmake --build cm >/dev/null
  rocshmem-run -n 2 cm/consumer_cxx
  rocshmem-run -n 2 cm/consumer_static
  python3 -c 'import ctypes; ctypes.CDLL(\"librocshmem.so.${major}\")'
  rocshmem-run -n 2 python3 ctypes_test.py librocshmem.so.${major}
  rocshmem_info >info.txt
  head -2 info.txt
  grep -q ' ${version}\$' info.txt
  test \"\$(pkg-config --modversion rocshmem)\" = ${version}" >"$work/use.log" 2>&1; then
  cat "$work/use.log"
  fail "a program using the installed packages failed (output above)"
fi
sed 's/^/  /' "$work/use.log"
say "pkg-config C program, find_package (shared, static), Python ctypes and rocshmem_info ran from the system paths"

# ---- 5. purge: nothing left behind
in_root "DEBIAN_FRONTEND=noninteractive apt-get purge -y -q librocshmem${major} librocshmem-dev rocshmem-tools \$(dpkg-query -W -f='\${Package} ' '*-dbgsym' 2>/dev/null)" \
  >"$work/purge.log" 2>&1 || { tail -30 "$work/purge.log"; fail "apt-get purge"; }
files_now >"$work/after.txt"
if ! diff -u "$work/before.txt" "$work/after.txt" >"$work/left.diff"; then
  cat "$work/left.diff"
  fail "the root differs after apt-get purge (diff above)"
fi
left=$(while read -r f; do [ -e "$mnt$f" ] && [ ! -d "$mnt$f" ] && echo "$f"; done <"$work/owned.txt" || true)
[ -z "$left" ] || fail "files of the packages left after purge: $left"
say "purged: the root's file list is as before ($(wc -l <"$work/owned.txt") paths were installed)"
say "all packaging checks passed"
