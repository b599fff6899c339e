#!/bin/sh
# A third-party HIP project (ctests/amd/consumer_hip: the HIP language, find_package(hip) from the
# ROCm it runs with, find_package(rocshmem), roc::rocshmem) built against an installed rocSHMEM
# for the given arches, and checked without an AMD GPU: each program holds a code object for each
# arch and exports the device glue rocshmemi_device_globals_set, and holds none of the reductions'
# helper kernels (a program's device link keeps only those it launches). Run it where hipcc and cmake
# are the toolchain to test (scripts/test.sh runs it inside the Debian sid root of
# scripts/rocm-sid.sh: today's ROCm).
#   check_consumer_hip.sh <prefix> <work dir> ["gfx942;gfx950"]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=$1
work=$2
arches=${3:-gfx942;gfx950}
for t in cmake hipcc objcopy nm; do
  command -v $t >/dev/null || { echo "amd-consumer: FAIL: no $t"; exit 1; }
done
. "$here/programs.sh"
[ -n "$amd_bundler" ] || command -v roc-obj-ls >/dev/null ||
  { echo "amd-consumer: FAIL: no clang-offload-bundler (clang $amd_clang_major)"; exit 1; }
hip_clang=$amd_clang_dir/clang++

start=$(date +%s)
cmake -S "$here/consumer_hip" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_HIP_COMPILER="$hip_clang" \
  -DCMAKE_CXX_COMPILER="$hip_clang" \
  -DCMAKE_HIP_ARCHITECTURES="$arches" -DCMAKE_BUILD_TYPE=Release >"$work.configure.log" 2>&1 ||
  { tail -30 "$work.configure.log"; echo "amd-consumer: FAIL: configure"; exit 1; }
cmake --build "$work" >"$work.build.log" 2>&1 ||
  { grep -E "error|Error|undefined" "$work.build.log" | head -30; echo "amd-consumer: FAIL: build"; exit 1; }
echo "amd-consumer: HIP project (find_package(hip), HIP $(hipconfig --version 2>/dev/null), roc::rocshmem) built for" \
  "$arches in $(($(date +%s) - start)) s"

amd_check_program amd-consumer "$work/ring_put" "$arches" || exit 1
amd_check_no_reductions amd-consumer "$work/ring_put" "$arches" || exit 1
echo "amd-consumer: ring_put holds code objects for $arches, exports the device glue and no helper reductions"
