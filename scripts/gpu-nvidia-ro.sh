#!/bin/sh
# Runs ON the NVIDIA GPU machine (no Rust there): the RO backend's functional suite on GPUs.
# Builds the device functional tests (rocshmem_device_tests_gpu) and the host-API programs of
# ctests/ro with nvcc/gcc against a Rust core built elsewhere, and runs them under mpirun with
# ROCSHMEM_BACKEND=ro in the three placements of ctests/ro:
#   noipc   ROCSHMEM_DISABLE_MIXED_IPC=1, 2 PEs: every peer through the proxies and MPI;
#   mixed   2 PEs on one node: peers mapped, atomics through the proxies;
#   nodes2  4 PEs as two pretend nodes (ctests/ro/pretend_nodes.sh).
# Then the stream-ordered test (stream_gpu_test) in noipc and nodes2.
# PEs take GPU local-rank % GPU count, so one GPU runs every PE of the job. The heaps are host
# memory, so PEs sharing a GPU need no MPS; with fewer GPUs than PEs the MPS control daemon is
# still started for the run (scripts/gpu-common.sh: kernels of the PEs run concurrently instead of
# time-sliced) and stopped at the end; RO_MPS=off runs them time-sliced.
#   scripts/gpu-nvidia-ro.sh <core dir> [out dir]
#   ROCSHMEM_GPU_PREBUILT=<bundle of scripts/gpu-prebuild.sh> scripts/gpu-nvidia-ro.sh - [out dir]
# Writes <out dir>/gpu-ro-table.md (test, config, PEs, result, seconds); exit status 0 when all
# passed. RO_ONLY=<regex> runs the matching tests only (names as in the table); RO_TIMEOUT: seconds
# per job (default 240).
set -u
CORE_ARG=${1:?usage: gpu-nvidia-ro.sh <core dir | -> [out dir]}
OUTDIR=$(mkdir -p "${2:-.}" && cd "${2:-.}" && pwd)
cd "$(dirname "$0")/.."
ROOT=$PWD
. "$ROOT/scripts/gpu-common.sh"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
# The host-API programs (scripts/gpu-prebuild.sh builds the same list).
HOST_PROGRAMS="hello rma_ring teams heap bad_input cxx_dropin typed_rma typed_amo typed_p2p typed_coll cas_contention"
if [ -n "${ROCSHMEM_GPU_PREBUILT:-}" ]; then
  gpu_bundle "$ROCSHMEM_GPU_PREBUILT" || exit 1
else
  CORE=$(cd "$CORE_ARG" && pwd)
  BUILD=${ROCSHMEM_GPU_BUILD:-.dev/build-gpu}
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  echo "== configure and build (nvcc: $NVCC, core: $CORE)"
  cmake -S . -B "$BUILD" -DROCSHMEM_PREBUILT_CORE="$CORE" -DROCSHMEM_NVIDIA=ON -DROCSHMEM_BUILD_BENCH=OFF \
    -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_BUILD_TYPE=Release \
    ${ROCSHMEM_BITCODE_PREBUILT:+-DROCSHMEM_DEVICE_BITCODE_PREBUILT="$(cd "$ROCSHMEM_BITCODE_PREBUILT" && pwd)"} \
    >"$OUTDIR/ro-configure.log" 2>&1 || { tail -30 "$OUTDIR/ro-configure.log"; exit 1; }
  start=$(date +%s)
  # shellcheck disable=SC2086
  cmake --build "$BUILD" -j"$(nproc)" --target rocshmem_device_tests_gpu $HOST_PROGRAMS >"$OUTDIR/ro-build.log" 2>&1 ||
    { grep -E "error|Error" "$OUTDIR/ro-build.log" | head -40; exit 1; }
  echo "built in $(($(date +%s) - start)) s"
fi
# Up to 4 PEs (nodes2): with fewer GPUs they share them, under MPS unless RO_MPS=off.
gpu_plan 4
trap 'gpu_mps_stop' EXIT
trap 'gpu_mps_stop; exit 130' INT TERM
if [ "$PER_GPU" -gt 1 ] && [ "${RO_MPS:-auto}" != off ]; then
  gpu_mps_start || exit 1
fi
DEVTEST=$(find "$BUILD" -name rocshmem_device_tests_gpu -type f -perm -u+x | head -1)
# MPI one-sided operations between the PEs of one node need btl/vader's single-copy mechanism
# (osc/rdma); the lent machine's environment turns it off (none), so CMA is asked for here.
export OMPI_MCA_btl_vader_single_copy_mechanism=${RO_VADER_COPY:-cma}
MPIRUN="mpirun --allow-run-as-root --oversubscribe -x ROCSHMEM_BACKEND=ro -x OMPI_MCA_btl_vader_single_copy_mechanism"
TABLE="$OUTDIR/gpu-ro-table.md"
# RO_ENV: more mpirun arguments for every job (e.g. "-x ROCSHMEM_DEBUG_LEVEL=INFO").
RO_ENV_CALLER=${RO_ENV:-}
printf '| test | config | PEs | result | seconds |\n|---|---|---|---|---|\n' >"$TABLE"
fails=0
# run <name> <config> <np> <program> [args...]
run() {
  name=$1 cfg=$2 np=$3
  shift 3
  if [ -n "${RO_ONLY:-}" ] && ! echo "${name}_$cfg" | grep -Eq "$RO_ONLY"; then return; fi
  case $cfg in
  noipc) set -- -x ROCSHMEM_DISABLE_MIXED_IPC=1 "$@" ;;
  nodes2) set -- "$PWD/ctests/ro/pretend_nodes.sh" "$@" ;;
  esac
  log="$OUTDIR/ro-$name-$cfg-np$np.log"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  timeout "${RO_TIMEOUT:-240}" $MPIRUN -np "$np" ${RO_ENV:-} "$@" >"$log" 2>&1 </dev/null
  rc=$?
  secs=$(awk "BEGIN{print ($(date +%s%N) - $t0) / 1e9}")
  if [ $rc -eq 0 ]; then
    res=passed
  elif [ -n "${REFUSAL:-}" ] && [ "$(grep -oE "PE [0-9]+: .*$REFUSAL" "$log" | cut -d: -f1 | sort -u | wc -l)" -eq "$np" ]; then
    # Every PE refused with the documented line: the known limitation, not a failure.
    res="refused as documented"
  else
    res="FAILED ($rc)"; fails=$((fails + 1)); tail -15 "$log"
  fi
  printf '| %s | %s | %s | %s | %.1f |\n' "$name" "$cfg" "$np" "$res" "$secs" | tee -a "$TABLE"
}
echo "== device functional suite (ctests/ro/device_families.txt)"
grep -E '^[a-z]+=' ctests/ro/device_families.txt | while IFS='=' read -r family tests; do
  echo "$family $tests"
done >"$OUTDIR/families.txt"
while read -r family tests; do
  for c in "noipc 2" "mixed 2" "nodes2 4"; do
    # shellcheck disable=SC2086
    run "device_$family" $c "$DEVTEST" -t "$tests" -w 2 -z 64 -L
  done
done <"$OUTDIR/families.txt"
echo "== host API programs"
for p in $HOST_PROGRAMS; do
  exe=$(find "$BUILD" -name "$p" -type f -perm -u+x | head -1)
  [ -n "$exe" ] || { echo "| $p | - | - | NOT BUILT | - |" | tee -a "$TABLE"; fails=$((fails + 1)); continue; }
  RO_ENV=$RO_ENV_CALLER
  [ "$p" = bad_input ] && RO_ENV="$RO_ENV_CALLER -x ROCSHMEM_HEAP_SIZE=8M"
  for c in "noipc 2" "mixed 2" "nodes2 4"; do
    # shellcheck disable=SC2086
    run "$p" $c "$exe"
  done
done
RO_ENV=$RO_ENV_CALLER
echo "== stream-ordered calls (kernels, the copy engine, graphs)"
# Every peer through the proxies (noipc) and two pretend nodes: a *_on_stream call to a peer this
# PE does not map must take the kernel path, at every size (the copy engine cannot reach it).
exe=$(find "$BUILD" -name stream_gpu_test -type f -perm -u+x | head -1)
if [ -z "$exe" ]; then
  echo "| stream_gpu_test | - | - | NOT BUILT | - |" | tee -a "$TABLE"; fails=$((fails + 1))
else
  # Every kernel of the stream modules is loaded at init under RO (src/gpu/modules.rs): a
  # kernel loading lazily while a stream kernel waits for the proxy hung this test before.
  for c in "noipc 2" "nodes2 4"; do
    # shellcheck disable=SC2086
    run stream_gpu_test $c "$exe"
  done
fi
echo "$fails failed"
[ "$fails" -eq 0 ]
