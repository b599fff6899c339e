#!/bin/sh
# Quick start, step 2: build everything and run the whole test suite (what CI runs).
#   ./scripts/test.sh
# Steps: dependencies, Rust format/lint/unit tests, a CMake build of the library, examples and tests
# (with the AMD device library for gfx942, gfx950, gfx90a, gfx1100 and gfx1201 built by today's
# ROCm from a Debian sid root that scripts/rocm-sid.sh makes once and keeps; no GPU needed), every
# ctest (C/C++ tests at 1-8 PEs, MPI, unique id, Python ctypes, name coverage, ABI, generated
# files committed, the exported ABI against abi/librocshmem.abi, memory ordering in the
# gfx942/gfx950 ISA), the AMD bitcode and code-object checks (and the device library built and
# checked with Debian 12's HIP 5.2, the oldest supported, for gfx90a and gfx908), an install
# consumed through find_package and pkg-config (host programs; the HIP examples and a HIP project
# built with today's ROCm for gfx942 and gfx950, and the HIP examples with HIP 5.2 for gfx90a),
# and the Debian packages (scripts/check-deb.sh).
set -eu
cd "$(dirname "$0")/.."
T_ALL=$(date +%s)
./scripts/deps.sh --test
T_DEPS=$(($(date +%s) - T_ALL))

# mpirun refuses to run as root unless told; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# What is made once and reused across runs: the Debian sid root of today's ROCm, the clean
# Debian 12 root of the package check, and the device products by the hash of their inputs
# (AMD device library and bitcode, NVIDIA stream kernels; device/amd_build/, build.rs), shared
# by every cargo profile of this run and by later runs (docs/development.md).
CACHE=${ROCSHMEM_CI_CACHE:-/var/cache/rocshmem-ci}
export ROCSHMEM_DEVICE_CACHE="$CACHE"
# cargo's target folder is kept there too, shared by clippy, the unit tests (dev profile) and the
# CMake build (release; build/cargo links to it): the crates of Cargo.lock are compiled once,
# and cargo's own fingerprints decide what a change rebuilds (this checkout's crate always, in a
# fresh clone). Emptied when it grows past 16 GiB.
CARGO_CACHE="$CACHE/cargo-target"
# The Debian package build (no test doubles) has a target folder of its own: it runs beside the
# other steps (ctest's Python package reuses the CMake build's core), and the two feature sets
# would otherwise replace each other's library in one folder.
DEB_CARGO_CACHE="$CACHE/cargo-target-deb"
for d in "$CARGO_CACHE" "$DEB_CARGO_CACHE"; do
  mkdir -p "$d"
  if [ "$(du -sk "$d" | cut -f1)" -gt $((16 * 1024 * 1024)) ]; then rm -rf "$d" && mkdir -p "$d"; fi
done
mkdir -p build
export CARGO_TARGET_DIR="$CARGO_CACHE"
# The sid root's compilers see them at the same paths (the AMD build writes into them).
export ROCSHMEM_SID_BIND="$CARGO_CACHE:$DEB_CARGO_CACHE"
[ -d build/cargo ] && [ ! -L build/cargo ] || ln -sfn "$CARGO_CACHE" build/cargo
# The C and C++ compiles of the CMake build (the tests, the examples, the host platform's device
# code) go through ccache, kept there too: a run recompiles only what its change reaches. Paths
# under this checkout are hashed relative to it (every CI checkout is a new folder).
export CCACHE_DIR="$CACHE/ccache" CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=4G
# torch.compile's compiled kernels (the Python tests' torch.compile ctest), kept there as well
# (torch's default is /tmp); graph breaks are still found: tracing runs every time.
export TORCHINDUCTOR_CACHE_DIR="$CACHE/torchinductor"
LAUNCHER=""
if command -v ccache >/dev/null; then
  LAUNCHER="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  # The build script's C++ (the shim and the host platform's device library, build.rs through
  # the cc crate) too: it is compiled for each cargo profile and feature set of the run (lints,
  # unit tests, the CMake build, the package build), each time the same few flag sets.
  host=$(rustc -vV | sed -n 's/^host: //p' | tr - _)
  export "CXX_$host=ccache c++"
fi
LOGS=$(mktemp -d)

# Each step prints its seconds as it ends; the table of all steps is printed at the end, also
# when a step fails (the failed step is marked).
# With each step's seconds, the CPU seconds of its processes divided by them: the cores it kept
# busy on average (a step well under the machine's cores leaves them idle: work could run beside
# it; other work on the machine makes the seconds longer, not this number larger).
STEPS="$(printf '%6d s              %s' "$T_DEPS" "dependencies (scripts/deps.sh --test)")
"
STEP=""
cpu_seconds() {  # user + system seconds of this shell's finished children (POSIX `times`, run
  # in this shell: a subshell would see only its own children)
  times >"$LOGS/times"
  tail -1 "$LOGS/times" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } print s }'
}
# Steps that need neither the tests' results nor the steps before them run beside them (the
# Rust step keeps about one core busy, ctest leaves part of both idle while PEs wait on each
# other): the Debian packages from the start (once the AMD products are in the device cache),
# the install check beside ctest. Started by `beside`, reported (output, seconds, cores) by
# `beside_wait` as their own rows of the table, after ctest. They run as SCHED_IDLE (`chrt
# --idle`; nice 10 where that is refused): they take only what the tests leave. The multi-PE
# tests wait on each other's progress, and a PE or RO proxy that yields its core handed it to a
# nice-10 compile for a whole time slice: `ro_mixed_device_amo_np4` took 7.7 s alone, 20.9 s
# beside one busy loop at nice 10, 8.3 s beside one at SCHED_IDLE (about 60 s in CI beside the
# install check and the package build at nice 10).
beside() {  # beside KEY FUNCTION
  { me=$(sh -c 'echo $PPID')
    chrt --idle -p 0 "$me" >/dev/null 2>&1 || renice -n 10 -p "$me" >/dev/null 2>&1 || true
    t=$(date +%s); times >"$LOGS/$1.t0"; rc=0; "$2" >"$LOGS/$1.log" 2>&1 || rc=$?; times >"$LOGS/$1.t1"
    echo "$rc $(($(date +%s) - t))" >"$LOGS/$1.done"; } &
  echo $! >"$LOGS/$1.pid"
}
beside_wait() {  # beside_wait KEY NAME
  STEP="$2 (beside the steps above)"
  echo "== $STEP"
  wait "$(cat "$LOGS/$1.pid")" || true
  touch "$LOGS/$1.shown"
  cat "$LOGS/$1.log"
  read -r rc t <"$LOGS/$1.done"
  cores=$(cat "$LOGS/$1.t0" "$LOGS/$1.t1" | awk -v t="$t" '
    NR % 2 == 0 { s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } c[NR / 2] = s }
    END { printf "%.1f", (t > 0 ? (c[2] - c[1]) / t : 0) }')
  echo "   ($STEP: $t s, $cores cores busy)"
  [ "$rc" = 0 ] || return "$rc"
  STEPS="$STEPS$(printf '%6d s  %4s cores  %s' "$t" "$cores" "$STEP")
"
  STEP=""
}
step() {  # step NAME FUNCTION
  STEP=$1
  echo "== $1"
  t=$(date +%s)
  cpu_seconds >"$LOGS/c0"
  "$2"
  t=$(($(date +%s) - t))
  cpu_seconds >"$LOGS/c1"
  cores=$(echo "$(cat "$LOGS/c0") $(cat "$LOGS/c1") $t" | awk '{ printf "%.1f", ($3 > 0 ? ($2 - $1) / $3 : 0) }')
  echo "   ($1: $t s, $cores cores busy)"
  STEPS="$STEPS$(printf '%6d s  %4s cores  %s' "$t" "$cores" "$1")
"
  STEP=""
}
summary() {
  rc=$?
  # A failed step leaves no step running behind it: what runs beside ends first, and its
  # output is shown when it failed too.
  for k in install debs; do
    if [ -f "$LOGS/$k.pid" ] && [ ! -f "$LOGS/$k.shown" ]; then
      wait "$(cat "$LOGS/$k.pid")" 2>/dev/null || true
      if [ "$(cut -d' ' -f1 "$LOGS/$k.done" 2>/dev/null)" != 0 ]; then echo "== $k (beside), output:"; tail -40 "$LOGS/$k.log"; fi
    fi
  done
  echo "== steps (wall seconds, $(nproc) cores)"
  printf '%s' "$STEPS"
  if [ -n "$STEP" ]; then printf '%8s  %s\n' "FAILED" "$STEP"; fi
  printf '%6d s  %s\n' "$(($(date +%s) - T_ALL))" "total"
  rm -rf "$LOGS"
  exit "$rc"
}
trap summary EXIT

# Started now, beside the Rust steps (network and unpacking, little CPU): the two roots, when
# missing. Their output is shown when they are waited for.
{ rc=0; ./scripts/rocm-sid.sh bin >"$LOGS/sid.out" 2>"$LOGS/sid.err" || rc=$?; echo "$rc" >"$LOGS/sid.rc"; } &
SID_PID=$!
# Also beside the Rust steps, which keep about one core busy (one large crate compiles alone),
# once the sid root is there: the AMD device products of today's ROCm, built as the CMake build's
# build script would build them (the same compiler, arches and sources: the same key in the
# device cache), so that the build step finds them there instead of starting on them; and the
# HIP 5.2 device build (step "the same with HIP 5.2" checks it). Their output is shown by the
# steps that wait for them.
AMD_TARGETS="gfx942;gfx950;gfx90a;gfx1100;gfx1201"
amd_early() {
  # The wrappers exist once `rocm-sid.sh bin` has finished (its step reports how).
  while [ ! -f "$LOGS/sid.rc" ]; do sleep 2; done
  bin=$(tail -1 "$LOGS/sid.out")
  [ "$(cat "$LOGS/sid.rc")" = 0 ] && [ -x "$bin/hipcc" ] || { echo "amd_early: no sid root (its step says why)"; return 0; }
  mkdir -p build/amd-early
  rustc --edition 2024 -O device/amd_main.rs -o build/amd-early/amd-build &&
    HIPCC="$bin/hipcc" ROCSHMEM_AMD=require ROCSHMEM_GPU_TARGETS="$AMD_TARGETS" \
      build/amd-early/amd-build "$PWD" build/amd-early | sed -n 's/^cargo:warning=/amd_early: /p'
}
{ amd_early >"$LOGS/amd-early.log" 2>&1; touch "$LOGS/amd-early.done"; } &
AMD_EARLY_PID=$!
ROCSHMEM_GPU_TARGETS="gfx90a;gfx908" CHECK_AMD_ALL=1 AMD_CHECK_DIR=build/amd-check-15 ./scripts/check-amd.sh \
  >"$LOGS/amd-old.log" 2>&1 &
AMD_OLD_PID=$!
{ rc=0; ./scripts/check-deb.sh --root >"$LOGS/debroot.log" 2>&1 || rc=$?; echo "$rc" >"$LOGS/debroot.rc"; } &

# Clippy on the shipped feature set and on the test build's (with the test doubles: the GDA NIC
# model and its entry points); the unit tests with the test doubles, whose own tests they are.
rust() {
  cargo fmt --check
  cargo clippy --workspace --all-targets --quiet -- -D warnings
  cargo clippy --workspace --all-targets --features test-doubles --quiet -- -D warnings
  cargo test --quiet --features test-doubles
}

sid_root() {
  wait "$SID_PID"
  [ "$(cat "$LOGS/sid.rc")" = 0 ] || { cat "$LOGS/sid.err"; echo "FAIL: scripts/rocm-sid.sh bin" >&2; return 1; }
  cat "$LOGS/sid.err"
  SID_BIN=$(tail -1 "$LOGS/sid.out")
  echo "$("$SID_BIN/hipcc" --version | head -2 | tr '\n' ' ')"
}

# The arches of the GPUs in service (AMD_TARGETS above); all built by the sid root's clang
# (archive, bitcode, stream kernels), reached through the wrappers of rocm-sid.sh.
build() {
  wait "$AMD_EARLY_PID" || true  # a failure there shows here again, from the build script
  cat "$LOGS/amd-early.log"
  # shellcheck disable=SC2086
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DROCSHMEM_TEST_DOUBLES=ON -DROCSHMEM_AMD=REQUIRE -DROCSHMEM_GPU_TARGETS="$AMD_TARGETS" -DROCSHMEM_PYTHON_TORCH=ON \
    -DROCSHMEM_HIPCC="$SID_BIN/hipcc" -DROCSHMEM_AMD_LLVM_BIN="$SID_BIN" $LAUNCHER >/dev/null
  cmake --build build -j"$(nproc)"
  if [ -n "$LAUNCHER" ]; then ccache --show-stats | grep -Ei "hits|misses" | head -3; fi
}

check_amd() {
  PATH="$SID_BIN:$PATH" CHECK_AMD_LLVM=21 AMD_OUT=build/lib ROCSHMEM_GPU_TARGETS="$AMD_TARGETS" CHECK_AMD_ALL=1 \
    ./scripts/check-amd.sh
}

check_amd_old() {  # started at the beginning (above)
  rc=0
  wait "$AMD_OLD_PID" || rc=$?
  cat "$LOGS/amd-old.log"
  return "$rc"
}

names() {
  python3 ctests/coverage/check_names.py ctests/data/rocshmem-api-names.tsv build/lib/librocshmem.so include
  python3 ctests/coverage/check_device_names.py ctests/data/rocshmem-api-names.tsv build/lib/librocshmem.so \
    c++ include build/device_name_coverage
}

# In the order the tests are declared (a clean clone has no cost data). Longest first (ctest's
# order with the cost data of a run before) was tried: it starts every multi-PE suite at once,
# and on two cores those slow each other down several times (docs/development.md).
tests() {
  rc=0
  ctest --test-dir build --output-on-failure -j2 --timeout 300 || rc=$?
  touch "$LOGS/ctest.done"
  return "$rc"
}

# HIP consumers: with today's ROCm (inside the sid root) for gfx942 and gfx950; then the HIP 5.2
# device library (check-amd above) over the same host library, with this machine's HIP 5.2, for
# gfx90a alone (gfx908 takes the same path).
# Each program's device link optimises the whole device library once per arch, so the examples
# project is built for gfx942 alone; upstream's link lines and the HIP project for both arches;
# with HIP 5.2 upstream's link lines alone (ROCSHMEM_HIP_OLD_EXAMPLES=none).
install_consume() {
  # Its Python extension, checked last, is built with the Python of the package tests (ctest
  # makes it first); the rest does not wait for it.
  ROCSHMEM_INSTALL_PY_WAIT="$LOGS/ctest.done" ROCSHMEM_HIP_RUN="$PWD/scripts/rocm-sid.sh run" ROCSHMEM_HIP_ARCHES="gfx942;gfx950" ROCSHMEM_HIP_EXAMPLE_ARCHES="gfx942" \
    ROCSHMEM_HIP_OLD_AMD_DIR=build/amd-check-15/amd ROCSHMEM_HIP_OLD_ARCHES="gfx90a" ROCSHMEM_HIP_OLD_EXAMPLES=none \
    ./ctests/install/check_install.sh build
}

# The packages are built from the checkout as a distribution builds them (no test doubles, its
# own cargo target folder), with the AMD arches and hipcc of the CMake build, once the early AMD
# build has filled the device cache that the package's build script then reads.
debs() {
  while [ ! -f "$LOGS/debroot.rc" ] || [ ! -f "$LOGS/amd-early.done" ]; do sleep 2; done
  [ "$(cat "$LOGS/debroot.rc")" = 0 ] || { cat "$LOGS/debroot.log"; echo "FAIL: scripts/check-deb.sh --root" >&2; return 1; }
  cat "$LOGS/debroot.log"
  [ "$(cat "$LOGS/sid.rc")" = 0 ] || { echo "FAIL: no sid root for the package build (its step says why)" >&2; return 1; }
  bin=$(tail -1 "$LOGS/sid.out")
  HIPCC="$bin/hipcc" ROCSHMEM_AMD_LLVM_BIN="$bin" ROCSHMEM_GPU_TARGETS="$AMD_TARGETS" \
    ROCSHMEM_DEB_CARGO_TARGET_DIR="$DEB_CARGO_CACHE" ./scripts/check-deb.sh
}

beside debs debs
step "Rust: format, lints, unit tests" rust
step "today's ROCm (a Debian sid root, made once and kept: scripts/rocm-sid.sh)" sid_root
step "build (CMake drives cargo; the AMD device library with today's ROCm)" build
step "AMD device library: entry points and globals in each arch's bitcode, code objects in the archives" check_amd
step "the same with HIP 5.2 (Debian 12: the oldest toolchain supported), gfx90a and gfx908" check_amd_old
step "name coverage against upstream's list (also a ctest)" names
beside install install_consume
step "ctest" tests
beside_wait install "install and consume"
beside_wait debs "Debian packages: built from the checkout, lintian, installed in a clean Debian 12 root and used, purged"
echo "== all tests passed"
