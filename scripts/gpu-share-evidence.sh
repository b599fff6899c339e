#!/bin/sh
# Runs ON the NVIDIA GPU machine with ONE GPU: the evidence for issue 19 (several PEs on one
# GPU) in about three minutes, from the bundle of scripts/gpu-prebuild.sh:
#   ROCSHMEM_GPU_PREBUILT=.dev/gpu-prebuilt sh scripts/gpu-share-evidence.sh [out dir]
# Every job has 2 PEs on GPU 0. The device tests' harness can be run as it was before the fix
# (ROCSHMEM_TEST_BARRIER_NO_SYNC=1: dt::barrier without hipDeviceSynchronize, so hipMemcpy /
# hipMemset of a PE's symmetric buffers may still be landing when the peer's kernel starts) or
# as it is now. Rows:
#  A. under MPS: rma-ctx -w 2 -z 256 (1 run in 3 failed with 2 wrong elements), REPS runs each
#     way, and signal -w 2 -z 256;
#  B. without MPS (ROCSHMEM_GPU_SHARING=timeslice: time-sliced processes): rma-thread -w 1 -z 32
#     (17-22 wrong values a run before), amo-standard, and signal -w 2 -z 256 (hung before),
#     each way; the unsynced signal run is stopped after 60 s;
#  C. without MPS and the default ROCSHMEM_GPU_SHARING=mps: init refuses on both PEs.
# If the cause is the harness (host copies still landing), the "unsynced" rows fail and every
# "synced" row passes; a synced failure would mean another cause (then the library must refuse
# time-sliced sharing: keep ROCSHMEM_GPU_SHARING=mps).
# Writes <out dir>/evidence.md; exit status 0 when every synced row passed and C refused.
set -u
OUTDIR=$(mkdir -p "${1:-.}" && cd "${1:-.}" && pwd)
cd "$(dirname "$0")/.."
ROOT=$PWD
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
. "$ROOT/scripts/gpu-common.sh"
gpu_bundle "${ROCSHMEM_GPU_PREBUILT:?set ROCSHMEM_GPU_PREBUILT to the bundle of scripts/gpu-prebuild.sh}" || exit 1
RUN=$BUILD/bin/rocshmem-run
DEVTEST=$(find "$BUILD" -name rocshmem_device_tests_gpu -type f -perm -u+x | head -1)
REPS=${REPS:-10}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
NGPU=1 PER_GPU=2  # both PEs on GPU 0 (CUDA_VISIBLE_DEVICES), whatever the machine has
trap 'gpu_mps_stop' EXIT
trap 'gpu_mps_stop; exit 130' INT TERM
TABLE=$OUTDIR/evidence.md
printf '| config | harness | test | runs | failed runs | wrong values (first run that had some) | seconds |\n|---|---|---|---|---|---|---|\n' >"$TABLE"
bad=0
# row <config> <harness: synced|unsynced> <runs> <timeout> <test> <w> <z>
row() {
  cfg=$1 how=$2 n=$3 tmo=$4 t=$5 w=$6 z=$7
  nosync=0
  [ "$how" = unsynced ] && nosync=1
  failed=0 first="" i=0 t0=$(date +%s%N)
  while [ $i -lt "$n" ]; do
    log=$OUTDIR/$cfg-$how-$t-$i.log
    ROCSHMEM_TEST_BARRIER_NO_SYNC=$nosync timeout "$tmo" "$RUN" -n 2 "$DEVTEST" -t "$t" -w "$w" -z "$z" >"$log" 2>&1
    r=$?
    if [ $r -ne 0 ]; then
      failed=$((failed + 1))
      if [ -z "$first" ]; then
        if [ $r -eq 124 ]; then first="timed out after ${tmo} s"; else
          first="$(grep -c '^FAIL .*expected .* got' "$log") FAIL lines: $(grep -m1 '^FAIL .*expected' "$log" | cut -c1-140)"
        fi
      fi
    fi
    i=$((i + 1))
  done
  printf '| %s | %s | %s -w %s -z %s | %s | %s | %s | %s |\n' "$cfg" "$how" "$t" "$w" "$z" "$n" "$failed" "${first:--}" \
    "$(gpu_secs "$t0")" | tee -a "$TABLE"
  if [ "$how" = synced ] && [ $failed -ne 0 ]; then bad=$((bad + 1)); fi
}

echo "== A. 2 PEs on one GPU under MPS"
gpu_mps_start || exit 1
row mps synced "$REPS" 120 rma-ctx 2 256
row mps unsynced "$REPS" 120 rma-ctx 2 256
row mps synced 3 120 signal 2 256
row mps unsynced 3 60 signal 2 256
gpu_mps_stop

echo "== B. 2 PEs on one GPU without MPS (ROCSHMEM_GPU_SHARING=timeslice)"
export ROCSHMEM_GPU_SHARING=timeslice
row timeslice synced 3 180 rma-thread 1 32
row timeslice unsynced 3 180 rma-thread 1 32
row timeslice synced 1 180 amo-standard 2 256
row timeslice unsynced 1 180 amo-standard 2 256
row timeslice synced 2 180 signal 2 256
row timeslice unsynced 1 60 signal 2 256
row timeslice synced 1 180 rma-ctx 2 256
unset ROCSHMEM_GPU_SHARING

echo "== C. without MPS, default policy: refused on every PE"
t0=$(date +%s%N)
timeout 60 "$RUN" -p -n 2 sh -c "$GPU_LINGER" "$DEVTEST" -t misc -w 1 -z 32 >"$OUTDIR/refusal.log" 2>&1
r=$?
res=refused
[ $r -ne 0 ] && [ $r -ne 124 ] || res="NOT refused (exit $r)"
gpu_refused "$OUTDIR/refusal.log" 2 || res="not the refusal line on both PEs"
printf '| nomps | - | init (misc) | 1 | - | %s: %s | %s |\n' "$res" "$(grep -m1 'error: rocshmem_init' "$OUTDIR/refusal.log" | cut -c1-200)" \
  "$(gpu_secs "$t0")" | tee -a "$TABLE"
[ "$res" = refused ] || bad=$((bad + 1))
echo
cat "$TABLE"
exit $bad
