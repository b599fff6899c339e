#!/bin/sh
# Runs ON the NVIDIA GPU machine (no Rust there): builds the device library, the device
# functional tests and the HIP examples (examples/hip, unchanged) with nvcc against a Rust core
# built on another machine, runs them on 2 GPUs (one PE each) under rocshmem-run and mpirun, and
# writes a pass/fail table.
#   scripts/gpu-nvidia.sh <core dir> [out dir]
# <core dir> holds librocshmem.so, librocshmem.a, rocshmem-run and rocshmem_info (cargo's
# release folder, copied); the table goes to <out dir>/gpu-table.md.
set -u
CORE=$(cd "${1:?core dir}" && pwd)
OUTDIR=${2:-.}
cd "$(dirname "$0")/.."
BUILD=${ROCSHMEM_GPU_BUILD:-.dev/build-gpu}
# Never NVLink multicast on the lent machines.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
echo "== configure (nvcc: $NVCC, core: $CORE)"
cmake -S . -B "$BUILD" -DROCSHMEM_PREBUILT_CORE="$CORE" -DROCSHMEM_NVIDIA=ON -DROCSHMEM_BUILD_BENCH=OFF \
  -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_BUILD_TYPE=Release \
  ${ROCSHMEM_BITCODE_PREBUILT:+-DROCSHMEM_DEVICE_BITCODE_PREBUILT="$(cd "$ROCSHMEM_BITCODE_PREBUILT" && pwd)"} >"$OUTDIR/configure.log" 2>&1 ||
  { tail -30 "$OUTDIR/configure.log"; exit 1; }
echo "== build"
start=$(date +%s)
cmake --build "$BUILD" -j"$(nproc)" --target rocshmem_device_tests_gpu stream_gpu_test >"$OUTDIR/build.log" 2>&1 ||
  { grep -E "error|Error" "$OUTDIR/build.log" | head -40; exit 1; }
echo "built in $(($(date +%s) - start)) s"
# The HIP examples (examples/hip), compiled unchanged by nvcc; their tests (example_gpu_*,
# label gpu) run below with the others. A failed build is reported; the device tests still run.
echo "== build the HIP examples (examples/hip) with nvcc"
cmake --build "$BUILD" -j"$(nproc)" --target rocshmem_examples_gpu >"$OUTDIR/build-examples.log" 2>&1 ||
  { grep -E "error|Error" "$OUTDIR/build-examples.log" | head -40; echo "HIP examples: build FAILED (see build-examples.log)"; }
echo "== tests (label gpu${ROCSHMEM_GPU_TESTS:+, -R $ROCSHMEM_GPU_TESTS})"
ctest --test-dir "$BUILD" -L gpu ${ROCSHMEM_GPU_TESTS:+-R "$ROCSHMEM_GPU_TESTS"} --timeout 180 \
  --output-on-failure >"$OUTDIR/ctest.log" 2>&1
rc=$?
{
  echo "| test | result | seconds |"
  echo "|---|---|---|"
  sed -n 's/.*Test *#[0-9]*: \([^ ]*\) \.*[* ]*\(Passed\|Failed\|Timeout\|\*\*\*Failed\|Not Run\)[^0-9]*\([0-9.]*\) sec.*/| \1 | \2 | \3 |/p' "$OUTDIR/ctest.log"
} >"$OUTDIR/gpu-table.md"
cat "$OUTDIR/gpu-table.md"
grep -E "tests passed|tests failed" "$OUTDIR/ctest.log"

# ---- gpu-module (ctests/gpu): librocshmem_device_sm_XX.bc, its 578 entry points, and a
# JIT-style module (kernel bitcode + the library's, llvm-link/opt/llc, cubin and PTX JIT)
# driven by rocshmem_hipmodule_init, directly and inside a CUDA graph (label gpu-module).
# `ctest -L gpu` above already runs these tests (they build their targets themselves); this
# runs them only if it did not (e.g. ROCSHMEM_GPU_TESTS filtered them out), and prints the name
# counts.
# No llvm-16 on this machine: ROCSHMEM_BITCODE_PREBUILT=<folder> with librocshmem_device_sm_90.bc
# and module_sm_90.ptx from `cmake -S ctests/gpu` on another machine (nothing of CUDA is in them).
echo "== gpu-module: device bitcode and module test"
if [ -n "${ROCSHMEM_BITCODE_PREBUILT:-}" ]; then
  cmake "$BUILD" -DROCSHMEM_DEVICE_BITCODE_PREBUILT="$(cd "$ROCSHMEM_BITCODE_PREBUILT" && pwd)" >>"$OUTDIR/configure.log" 2>&1
fi
cmake --build "$BUILD" -j"$(nproc)" --target rocshmem_gpu_module_artifacts rocshmem_gpu_module_test \
  >"$OUTDIR/build-gpu-module.log" 2>&1 || { grep -E "error|Error" "$OUTDIR/build-gpu-module.log" | head -40; rc=1; }
MODLOG="$OUTDIR/ctest.log"
if ! grep -q "gpu_module_build" "$OUTDIR/ctest.log"; then
  MODLOG="$OUTDIR/ctest-gpu-module.log"
  ctest --test-dir "$BUILD" -L gpu-module -V >"$MODLOG" 2>&1 || rc=1
  sed -n 's/.*Test *#[0-9]*: \([^ ]*\) \.*[* ]*\(Passed\|Failed\|Timeout\|\*\*\*Failed\|Not Run\)[^0-9]*\([0-9.]*\) sec.*/| \1 | \2 | \3 |/p' \
    "$MODLOG" | tee -a "$OUTDIR/gpu-table.md"
fi
grep -hE "PASS (direct|graph|no-globals)|FAIL" "$MODLOG" | sed 's/^[0-9]*: //' | sort -u | head -30
ctest --test-dir "$BUILD" -R '^gpu_(bitcode_names|module_ptx)_' -V 2>&1 | grep -E "bitcode names:|module (PTX|cubin):"
exit $rc
