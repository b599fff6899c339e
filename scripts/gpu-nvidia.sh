#!/bin/sh
# Runs ON the NVIDIA GPU machine (no Rust there): the device functional tests, the HIP examples
# (examples/hip, compiled unchanged by nvcc), the stream test, the module/bitcode tests (label
# gpu) under rocshmem-run and mpirun, then the Triton demo; writes a pass/fail table.
#   scripts/gpu-nvidia.sh <core dir> [out dir]       builds here with nvcc, against a Rust core
#                                                     built elsewhere (librocshmem.so, .a,
#                                                     rocshmem-run, rocshmem_info)
#   ROCSHMEM_GPU_PREBUILT=<bundle> scripts/gpu-nvidia.sh - [out dir]
#                                                     builds nothing: the bundle of
#                                                     scripts/gpu-prebuild.sh (CPU machine)
# PEs and GPUs: GPU_PES PEs per job (2 or 4; default 2); PE r uses GPU r % GPU count. With at
# least GPU_PES GPUs each PE has its own. With fewer, PEs share GPUs (docs/gpu-results.md):
#   GPU_MPS=auto (default)  start the MPS control daemon for the run (own pipe and log folder
#                           under /tmp, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = 100 / PEs per GPU, so
#                           the shares sum to 100) and stop it at the end (echo quit |
#                           nvidia-cuda-mps-control); a daemon already serving is used as it is.
#   GPU_MPS=off             no MPS: checks that init refuses on every PE with the line saying
#                           why (test gpu_share_refused_np<N>); with GPU_TIMESLICE=1 then runs the
#                           suite with ROCSHMEM_GPU_SHARING=timeslice (time-sliced sharing).
# ROCSHMEM_GPU_TESTS=<regex>: only the matching tests (default: every test of GPU_PES PEs).
# GPU_TRITON=0 skips the Triton demo (run when python3 imports torch and triton).
# The table goes to <out dir>/gpu-table.md; exit status 0 when everything ran and passed.
set -u
CORE_ARG=${1:?usage: gpu-nvidia.sh <core dir | -> [out dir]}
OUTDIR=$(mkdir -p "${2:-.}" && cd "${2:-.}" && pwd)
rm -f "$OUTDIR/gpu-refusal.md"
cd "$(dirname "$0")/.."
ROOT=$PWD
# Never NVLink multicast on the lent machines.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
GPU_PES=${GPU_PES:-2}
rc=0

. "$ROOT/scripts/gpu-common.sh"
if [ -n "${ROCSHMEM_GPU_PREBUILT:-}" ]; then
  gpu_bundle "$ROCSHMEM_GPU_PREBUILT" || exit 1
else
  CORE=$(cd "$CORE_ARG" && pwd)
  BUILD=${ROCSHMEM_GPU_BUILD:-$ROOT/.dev/build-gpu}
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  echo "== configure (nvcc: $NVCC, core: $CORE)"
  cmake -S . -B "$BUILD" -DROCSHMEM_PREBUILT_CORE="$CORE" -DROCSHMEM_NVIDIA=ON -DROCSHMEM_BUILD_BENCH=OFF \
    -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_BUILD_TYPE=Release -DROCSHMEM_GPU_TEST_PES="$GPU_PES" \
    ${ROCSHMEM_BITCODE_PREBUILT:+-DROCSHMEM_DEVICE_BITCODE_PREBUILT="$(cd "$ROCSHMEM_BITCODE_PREBUILT" && pwd)"} \
    >"$OUTDIR/configure.log" 2>&1 || { tail -30 "$OUTDIR/configure.log"; exit 1; }
  echo "== build"
  start=$(date +%s)
  cmake --build "$BUILD" -j"$(nproc)" --target rocshmem_device_tests_gpu stream_gpu_test rocshmem_examples_gpu \
    rocshmem_gpu_module_artifacts rocshmem_gpu_module_test host_gpu_heap >"$OUTDIR/build.log" 2>&1 ||
    { grep -E "error|Error" "$OUTDIR/build.log" | head -40; exit 1; }
  echo "built in $(($(date +%s) - start)) s"
  export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
RUN=$BUILD/bin/rocshmem-run
DEVTEST=$(find "$BUILD" -name rocshmem_device_tests_gpu -type f -perm -u+x | head -1)
BC=$(find "$BUILD" -name 'librocshmem_device_sm_90.bc' | head -1)

# ---- GPUs and PEs: one PE per GPU, or several sharing (MPS) ----
gpu_plan "$GPU_PES"
trap 'gpu_mps_stop' EXIT
trap 'gpu_mps_stop; exit 130' INT TERM
# probe: a short job with INFO logs; prints init's line about GPU sharing; status of the job.
probe() {
  ROCSHMEM_DEBUG_LEVEL=INFO timeout 60 "$RUN" -p -n "$GPU_PES" sh -c "$GPU_LINGER" "$DEVTEST" -t misc -w 1 -z 32 \
    >"$OUTDIR/probe-$1.log" 2>&1
}
MODE="one PE per GPU"
if [ "$PER_GPU" -gt 1 ]; then
  if [ "${GPU_MPS:-auto}" != off ]; then
    gpu_mps_start || exit 1
    MODE="$PER_GPU PEs per GPU under MPS, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
    probe mps
    grep -m1 "share GPU" "$OUTDIR/probe-mps.log" || {
      echo "FAIL: a $GPU_PES-PE job does not run under MPS:"
      tail -5 "$OUTDIR/probe-mps.log"
      exit 1
    }
  else
    # Without MPS, init must refuse on every PE, with the line saying why and how.
    t0=$(date +%s%N)
    probe nomps
    prc=$?
    secs=$(gpu_secs "$t0")
    res=Passed
    [ $prc -ne 0 ] && [ $prc -ne 124 ] || res=Failed
    gpu_refused "$OUTDIR/probe-nomps.log" "$GPU_PES" || res=Failed
    grep -m1 "error: rocshmem_init" "$OUTDIR/probe-nomps.log"
    printf '| gpu_share_refused_np%s | %s | %s |\n' "$GPU_PES" "$res" "$secs" >"$OUTDIR/gpu-refusal.md"
    cat "$OUTDIR/gpu-refusal.md"
    [ $res = Passed ] || rc=1
    if [ "${GPU_TIMESLICE:-0}" != 1 ]; then
      exit $rc
    fi
    export ROCSHMEM_GPU_SHARING=timeslice
    MODE="$PER_GPU PEs per GPU without MPS (ROCSHMEM_GPU_SHARING=timeslice)"
  fi
fi
echo "== $GPU_PES PEs on $NGPU GPU(s): $MODE"

# ---- the tests of GPU_PES PEs (label gpu) ----
REGEX=${ROCSHMEM_GPU_TESTS:-_np${GPU_PES}(_|\$)|^gpu_module_ptx_}
# The host-side checks need this build's LLVM and the build tree: they run on the CPU machine
# (gpu-prebuild.sh runs them, and the PTX check, before it makes the bundle).
HOST_ONLY='^gpu_(module_build|module_host_parse|bitcode_names_)'
[ -n "${ROCSHMEM_GPU_PREBUILT:-}" ] && HOST_ONLY='^gpu_(module_build|module_host_parse|bitcode_names_|module_ptx_sm_)'
echo "== tests (label gpu, -R '$REGEX')"
ctest --test-dir "$BUILD" -L gpu -R "$REGEX" -E "$HOST_ONLY" \
  -FS gpu_module_built --timeout 180 --output-on-failure >"$OUTDIR/ctest.log" 2>&1 || rc=1
{
  echo "| test | result | seconds |"
  echo "|---|---|---|"
  cat "$OUTDIR/gpu-refusal.md" 2>/dev/null
  sed -n 's/.*Test *#[0-9]*: \([^ ]*\) \.*[* ]*\(Passed\|Failed\|Timeout\|\*\*\*Failed\|Not Run\)[^0-9]*\([0-9.]*\) sec.*/| \1 | \2 | \3 |/p' "$OUTDIR/ctest.log"
} >"$OUTDIR/gpu-table.md"
cat "$OUTDIR/gpu-table.md"
grep -E "tests passed|tests failed" "$OUTDIR/ctest.log"
grep -hE "PASS (direct|graph|no-globals)|FAIL" "$OUTDIR/ctest.log" | sed 's/^[0-9]*: //' | sort -u | head -30

# ---- the Triton demo (python3 with torch and triton; PE r on GPU r % count) ----
if [ "${GPU_TRITON:-1}" != 0 ] && [ -z "${ROCSHMEM_GPU_TESTS:-}" ]; then
  if python3 -c "import torch, triton" 2>/dev/null && [ -n "$BC" ]; then
    echo "== Triton demo ($GPU_PES PEs)"
    t0=$(date +%s%N)
    # The Python package from this tree where it has one (python/: pure Python over ctypes),
    # with this run's library and bitcode (run.sh sets ROCSHMEM_LIBRARY and ROCSHMEM_BITCODE).
    if PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" sh examples/triton/run.sh "$BUILD/lib" "$BC" \
      -n "$GPU_PES" >"$OUTDIR/triton.log" 2>&1; then res=Passed; else res=Failed; rc=1; fi
    secs=$(gpu_secs "$t0")
    tail -3 "$OUTDIR/triton.log"
    printf '| triton_put_signal_graph_np%s | %s | %s |\n' "$GPU_PES" "$res" "$secs" | tee -a "$OUTDIR/gpu-table.md"
  else
    echo "== Triton demo skipped (python3 cannot import torch and triton, or no bitcode)"
  fi
fi
exit $rc
