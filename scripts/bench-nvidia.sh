#!/bin/bash
# Runs ON the NVIDIA GPU machine (2 GPUs; no Rust there): builds the device library against a
# Rust core built elsewhere (as scripts/gpu-nvidia.sh does), builds the GPU benchmarks of
# bench/gpu twice (this library; NVSHMEM from its pip wheel), runs every benchmark for both
# libraries in the same job, one PE per GPU, and prints one table: operation, size, ours,
# NVSHMEM, ratio (ours / NVSHMEM). Writes into <out dir>:
#   bench-table.md   the table, with the machine and the method
#   bench.csv        the same numbers
#   bench-raw.txt    every line the benchmarks printed (R/V/I/D lines, see bench/gpu/bench_gpu.cuh)
#   bench-log.txt    build output, and stderr of every run
#
#   scripts/bench-nvidia.sh <core dir> [out dir]
#   ROCSHMEM_GPU_PREBUILT=<bundle> scripts/bench-nvidia.sh - [out dir]
#
# <core dir>: librocshmem.so, rocshmem-run, rocshmem_info (cargo's release folder, copied); or
# "-" with the bundle of scripts/gpu-prebuild.sh (librocshmem_device.a and the core prebuilt:
# only the benchmarks are compiled here).
# One GPU: both PEs share it under the MPS control daemon, started for the run and stopped at
# the end (scripts/gpu-common.sh; BENCH_MPS=off runs them time-sliced, which our library
# refuses unless ROCSHMEM_GPU_SHARING=timeslice).
# Environment: NVSHMEM_HOME (default: the nvidia-nvshmem pip package of python3), BENCH_SCALE
# (multiplies iteration counts), BENCH_TIMEOUT (seconds per launch, default 75; init-only
# launches BENCH_INIT_TIMEOUT, default 45), BENCH_DEADLINE (no launch runs past this many seconds
# after the start, default 560, so the table comes out within a 10-minute command), BENCH_GROUPS
# (default: put get p pingpong signal amo barrier coll stream hostbarrier), BENCH_INIT_LAUNCHES
# (extra init-only launches per library, default 3), BENCH_CUDA_ARCH (default sm_90),
# ROCSHMEM_GPU_BUILD (the CMake build folder, default .dev/build-gpu, shared with gpu-nvidia.sh),
# BENCH_MAX_BYTES (the largest transfer, -m; default 256 MiB), BENCH_DLTO (1, the default: both
# programs compiled and linked with -dlto; 0: without), BENCH_INIT_DIAG (1, the default: one more
# init launch of each, with CUDA's start-up timed and our init's phases, into bench-log.txt),
# BENCH_STREAM_COLD (1, the default: the stream group with CUDA_CACHE_DISABLE=1).
# BENCH_BACKEND=ro: ours runs the RO backend (ROCSHMEM_BACKEND=ro, ROCSHMEM_DISABLE_MIXED_IPC=1:
# every operation on the peer through the proxies and MPI) under mpirun, and NVSHMEM runs with
# NVSHMEM_DISABLE_P2P=1 and its UCX remote transport, the proxy-based path closest to it (both
# settings can be overridden). Default groups there: p pingpong amo put.
# Our `stream` group needs the *_on_stream declarations in include/rocshmem: without them it
# stops with an error saying so, and the table shows – for ours in those rows.
# NVSHMEM_HOME2=<a second NVSHMEM> (e.g. 3.8.0's wheel beside the 3.4.5 PyTorch pins): its
# program is built and run too, after the first's, in every group, and the table gets a column
# and a ratio for it (ours is run once per group). At run time (BENCH_PREBUILT) it needs only
# lib/libnvshmem_host.so.3 and lib/nvshmem_bootstrap_uid.so.3 (and include/non_abi/
# nvshmem_version.h for its version). Both also build bench/gpu/moe/bench_moe.cu (the MoE
# dispatch/combine pair; scripts/bench-moe.sh runs it) as gpu_bench_moe_{rocshmem,nvshmem,nvshmem2}.
# Afterwards, on any machine with matplotlib: scripts/plot-bench.py <out dir>/bench.csv
# (docs/bench-nvidia-bw.png and the markdown table from the CSV).
#
# Building elsewhere (GPU time is scarce): BENCH_BUILD_ONLY=1 builds everything here (a machine
# with nvcc, e.g. CUDA 13.0 from PyPI, and the NVSHMEM wheel in NVSHMEM_HOME; no GPU) and leaves
# in $ROCSHMEM_GPU_BUILD/bench-prebuilt only what the runs need (bin/rocshmem-run, lib/librocshmem.so,
# the two benchmark programs); on the GPU machine BENCH_PREBUILT=<that folder> runs them without
# building (the core dir argument is then not read). BENCH_PREBUILT_OUT: another folder for them.
set -u
CORE_ARG=${1:?usage: scripts/bench-nvidia.sh <core dir | -> [out dir]}
OUTDIR=${2:-.}
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd) || exit 2
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
. "$ROOT/scripts/gpu-common.sh"
if [ -n "${BENCH_PREBUILT:-}" ]; then
  # Benchmark programs and core built elsewhere with BENCH_BUILD_ONLY=1: nothing is compiled here.
  BUILD=$(cd "$BENCH_PREBUILT" && pwd) || exit 2
  CORE=$BUILD/lib
elif [ -n "${ROCSHMEM_GPU_PREBUILT:-}" ]; then
  gpu_bundle "$ROCSHMEM_GPU_PREBUILT" || exit 2
  CORE=$BUILD/lib
else
  CORE=$(cd "$CORE_ARG" && pwd) || exit 2
  BUILD=${ROCSHMEM_GPU_BUILD:-.dev/build-gpu}
  mkdir -p "$BUILD" && BUILD=$(cd "$BUILD" && pwd) || exit 2
fi
BB=$BUILD/bench-gpu
[ -n "${BENCH_PREBUILT:-}" ] && BB=$BUILD
mkdir -p "$BB"
LOG=$OUTDIR/bench-log.txt
RAW=$OUTDIR/bench-raw.txt
: >"$LOG"
: >"$RAW"
log() { printf '[bench-nvidia] %s\n' "$*" | tee -a "$LOG" >&2; }

# Our PEs on the NVIDIA platform, or a loud failure (never the host platform by accident).
export ROCSHMEM_GPU=${ROCSHMEM_GPU:-nvidia}
# Never NVLink multicast on the lent machines (NVSHMEM's NVLS, NCCL's).
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
# NVSHMEM: the unique-id bootstrap over loopback (both PEs are on this host), no remote transport.
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=${NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME:-lo}
BACKEND=${BENCH_BACKEND:-ipc}
case $BACKEND in
ipc) export NVSHMEM_REMOTE_TRANSPORT=${NVSHMEM_REMOTE_TRANSPORT:-none} ;;
ro)
  export NVSHMEM_REMOTE_TRANSPORT=${NVSHMEM_REMOTE_TRANSPORT:-ucx} NVSHMEM_DISABLE_P2P=${NVSHMEM_DISABLE_P2P:-1}
  # Open MPI's one-sided operations between PEs of one node need vader's single-copy mechanism
  # (the lent machine's environment turns it off); see docs/ro.md.
  export OMPI_MCA_btl_vader_single_copy_mechanism=${RO_VADER_COPY:-cma}
  ;;
*) echo "BENCH_BACKEND must be ipc or ro, not '$BACKEND'" >&2; exit 2 ;;
esac
T=${BENCH_TIMEOUT:-75}
T_INIT=${BENCH_INIT_TIMEOUT:-45}
DEADLINE=${BENCH_DEADLINE:-560}
# The data's seed: fresh for every job, the same for both PEs (bench/gpu/bench_main.cu).
export BENCH_SEED=${BENCH_SEED:-$(((RANDOM << 15) | RANDOM))}
if [ "$BACKEND" = ro ]; then
  GROUPS_LIST=${BENCH_GROUPS:-p pingpong amo put}
else
  GROUPS_LIST=${BENCH_GROUPS:-put get p pingpong signal amo barrier coll stream hostbarrier}
fi
MAX_ARGS=()
[ -n "${BENCH_MAX_BYTES:-}" ] && MAX_ARGS=(-m "$BENCH_MAX_BYTES")
INIT_LAUNCHES=${BENCH_INIT_LAUNCHES:-3}
ARCH=${BENCH_CUDA_ARCH:-sm_90}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
T_START=$(date +%s)

NV=${NVSHMEM_HOME:-$(python3 -c "import nvidia.nvshmem as m; print(list(m.__path__)[0])" 2>>"$LOG")}
# nv_ok <home>: what this run needs of an NVSHMEM (to build: headers and the device library too).
nv_ok() {
  [ -n "$1" ] && [ -f "$1/lib/libnvshmem_host.so.3" ] &&
    { [ -n "${BENCH_PREBUILT:-}" ] || { [ -f "$1/include/nvshmem.h" ] && [ -f "$1/lib/libnvshmem_device.a" ]; }; }
}
nv_version() {
  awk '/^#define NVSHMEM_VENDOR_(MAJOR|MINOR|PATCH)_VERSION/ { v = v (v == "" ? "" : ".") $3 }
    END { print v }' "$1/include/non_abi/nvshmem_version.h" 2>/dev/null
}
if ! nv_ok "$NV"; then
  log "NVSHMEM not found (python3 -c 'import nvidia.nvshmem' gave '$NV'); set NVSHMEM_HOME"
  exit 1
fi
NV_VERSION=$(nv_version "$NV")
NV2=${NVSHMEM_HOME2:-}
NV2_VERSION=
if [ -n "$NV2" ]; then
  nv_ok "$NV2" || { log "NVSHMEM_HOME2=$NV2 has no usable NVSHMEM"; exit 1; }
  NV2=$(cd "$NV2" && pwd)
  NV2_VERSION=$(nv_version "$NV2")
fi
log "nvcc: $NVCC; core: $CORE; NVSHMEM ${NV_VERSION:-?}: $NV${NV2:+; second NVSHMEM ${NV2_VERSION:-?}: $NV2}; build: $BUILD"

# ---------------------------------------------------------------- build
if [ -n "${BENCH_PREBUILT:-}" ]; then
  for f in bin/rocshmem-run lib/librocshmem.so gpu_bench_rocshmem gpu_bench_nvshmem ${NV2:+gpu_bench_nvshmem2}; do
    [ -e "$BUILD/$f" ] || { log "BENCH_PREBUILT=$BUILD has no $f (made by BENCH_BUILD_ONLY=1)"; exit 1; }
  done
  # Their RUNPATHs name the machine that built them.
  export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  LTO=()
  [ "$(cat "$BUILD/DLTO" 2>/dev/null)" = 1 ] && LTO=(-dlto)
  log "prebuilt: $BUILD ($(cat "$BUILD/BUILT" 2>/dev/null))"
else
if [ -z "${ROCSHMEM_GPU_PREBUILT:-}" ]; then
  log "configure (device library)"
  cmake -S . -B "$BUILD" -DROCSHMEM_PREBUILT_CORE="$CORE" -DROCSHMEM_NVIDIA=ON -DROCSHMEM_BUILD_BENCH=OFF \
    -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_BUILD_TYPE=Release >>"$LOG" 2>&1 ||
    { tail -30 "$LOG"; exit 1; }
  log "build librocshmem_device.a"
  cmake --build "$BUILD" -j"$(nproc)" --target rocshmem_device >>"$LOG" 2>&1 ||
    { grep -E "error|Error" "$LOG" | head -40; exit 1; }
fi
[ -f "$BUILD/lib/librocshmem_device.a" ] && [ -x "$BUILD/bin/rocshmem-run" ] ||
  { log "no $BUILD/lib/librocshmem_device.a or $BUILD/bin/rocshmem-run after the build"; exit 1; }

log "build the benchmarks (both libraries, in parallel)"
SRCS="bench_main bench_rma_bw bench_p bench_signal bench_amo bench_sync bench_coll bench_stream"
# Device link-time optimisation (BENCH_DLTO=1, the default), for both libraries alike: our device
# API is functions in librocshmem_device.a (which carries LTO IR for this), NVSHMEM's mostly
# inline functions of its headers; -dlto lets nvlink inline ours into the benchmark's kernels
# too, as a program built the way docs/benchmarks-nvidia.md recommends gets them.
LTO=()
[ "${BENCH_DLTO:-1}" = 1 ] && LTO=(-dlto)
CFLAGS=(-O3 -std=c++17 -arch="$ARCH" -rdc=true -maxrregcount=64 ${LTO[@]+"${LTO[@]}"})
# Our *_on_stream operations, once the headers declare them (bench/gpu/shmem_adapter.cuh).
ROC_DEFS=()
if grep -qs 'rocshmem_putmem_on_stream' include/rocshmem/*.hpp &&
  grep -qs 'rocshmem_barrier_all_on_stream' include/rocshmem/*.hpp &&
  grep -qs 'rocshmem_ctx_float_sum_reduce_on_stream' include/rocshmem/*.hpp; then
  ROC_DEFS=(-DBENCH_ROC_ON_STREAM)
else
  log "include/rocshmem declares no *_on_stream operations: ours -b stream will stop with an error"
fi
mkdir -p "$BB/roc" "$BB/nv" "$BB/nvlib" "$BB/nv2" "$BB/nv2lib"
# NVSHMEM's wheel has only the versioned host library: link names for -l.
ln -sfn "$NV/lib/libnvshmem_host.so.3" "$BB/nvlib/libnvshmem_host.so"
ln -sfn "$NV/lib/libnvshmem_device.a" "$BB/nvlib/libnvshmem_device.a"
if [ -n "$NV2" ]; then
  ln -sfn "$NV2/lib/libnvshmem_host.so.3" "$BB/nv2lib/libnvshmem_host.so"
  ln -sfn "$NV2/lib/libnvshmem_device.a" "$BB/nv2lib/libnvshmem_device.a"
fi
# The MoE pair (bench/gpu/moe, its own program) is compiled with the others.
SRCS_ALL="$SRCS moe/bench_moe"
pids=()
for s in $SRCS_ALL; do
  o=${s#moe/}
  "$NVCC" "${CFLAGS[@]}" ${ROC_DEFS[@]+"${ROC_DEFS[@]}"} --diag-suppress=20044,1444 -I include/rocshmem/compat -I include \
    -c "bench/gpu/$s.cu" -o "$BB/roc/$o.o" >"$BB/roc/$o.log" 2>&1 &
  pids+=($!)
  "$NVCC" "${CFLAGS[@]}" -DBENCH_NVSHMEM -I "$NV/include" \
    -c "bench/gpu/$s.cu" -o "$BB/nv/$o.o" >"$BB/nv/$o.log" 2>&1 &
  pids+=($!)
  if [ -n "$NV2" ]; then
    "$NVCC" "${CFLAGS[@]}" -DBENCH_NVSHMEM -I "$NV2/include" \
      -c "bench/gpu/$s.cu" -o "$BB/nv2/$o.o" >"$BB/nv2/$o.log" 2>&1 &
    pids+=($!)
  fi
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
for s in $SRCS bench_moe; do for v in roc nv nv2; do
  [ -s "$BB/$v/$s.log" ] && { echo "== $v/$s.cu" && cat "$BB/$v/$s.log"; } >>"$LOG"
done; done
[ $fail = 0 ] || { log "compile failed:"; grep -h -B2 -A3 "error" "$BB"/roc/*.log "$BB"/nv*/*.log | head -60; exit 1; }
OBJS_ROC=() OBJS_NV=()
for s in $SRCS; do OBJS_ROC+=("$BB/roc/$s.o"); OBJS_NV+=("$BB/nv/$s.o"); done
"$NVCC" -arch="$ARCH" -rdc=true -maxrregcount=64 ${LTO[@]+"${LTO[@]}"} -o "$BB/gpu_bench_rocshmem" "${OBJS_ROC[@]}" "$BUILD/lib/librocshmem_device.a" \
  -L"$BUILD/lib" -lrocshmem -Xlinker -rpath="$BUILD/lib" \
  -Xlinker --export-dynamic-symbol=rocshmemi_device_globals_set >>"$LOG" 2>&1 ||
  { tail -30 "$LOG"; log "link failed (rocshmem)"; exit 1; }
"$NVCC" -arch="$ARCH" -rdc=true -maxrregcount=64 ${LTO[@]+"${LTO[@]}"} -o "$BB/gpu_bench_nvshmem" "${OBJS_NV[@]}" \
  -L"$BB/nvlib" -lnvshmem_host -lnvshmem_device -Xlinker -rpath="$NV/lib" >>"$LOG" 2>&1 ||
  { tail -30 "$LOG"; log "link failed (nvshmem)"; exit 1; }
# link_moe <out> <object> <link arguments...>: the MoE program (in the background).
link_moe() {
  local out=$1 obj=$2
  shift 2
  "$NVCC" -arch="$ARCH" -rdc=true -maxrregcount=64 ${LTO[@]+"${LTO[@]}"} -o "$out" "$obj" "$@" >>"$LOG.$(basename "$out")" 2>&1
}
pids=()
link_moe "$BB/gpu_bench_moe_rocshmem" "$BB/roc/bench_moe.o" "$BUILD/lib/librocshmem_device.a" -L"$BUILD/lib" -lrocshmem \
  -Xlinker -rpath="$BUILD/lib" -Xlinker --export-dynamic-symbol=rocshmemi_device_globals_set &
pids+=($!)
link_moe "$BB/gpu_bench_moe_nvshmem" "$BB/nv/bench_moe.o" -L"$BB/nvlib" -lnvshmem_host -lnvshmem_device \
  -Xlinker -rpath="$NV/lib" &
pids+=($!)
if [ -n "$NV2" ]; then
  OBJS_NV2=()
  for s in $SRCS; do OBJS_NV2+=("$BB/nv2/$s.o"); done
  "$NVCC" -arch="$ARCH" -rdc=true -maxrregcount=64 ${LTO[@]+"${LTO[@]}"} -o "$BB/gpu_bench_nvshmem2" "${OBJS_NV2[@]}" \
    -L"$BB/nv2lib" -lnvshmem_host -lnvshmem_device -Xlinker -rpath="$NV2/lib" >>"$LOG" 2>&1 &
  pids+=($!)
  link_moe "$BB/gpu_bench_moe_nvshmem2" "$BB/nv2/bench_moe.o" -L"$BB/nv2lib" -lnvshmem_host -lnvshmem_device \
    -Xlinker -rpath="$NV2/lib" &
  pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p" || fail=1; done
cat "$LOG".gpu_bench_* >>"$LOG" 2>/dev/null
rm -f "$LOG".gpu_bench_*
[ $fail = 0 ] || { tail -30 "$LOG"; log "link failed (second NVSHMEM or the MoE programs)"; exit 1; }
if [ "${BENCH_BUILD_ONLY:-0}" = 1 ]; then
  P=${BENCH_PREBUILT_OUT:-$BUILD/bench-prebuilt}
  rm -rf "$P" && mkdir -p "$P/bin" "$P/lib" || exit 1
  cp -a "$BB/gpu_bench_rocshmem" "$BB/gpu_bench_nvshmem" "$BB"/gpu_bench_moe_* "$P/" &&
    { [ -z "$NV2" ] || cp -a "$BB/gpu_bench_nvshmem2" "$P/"; } && cp -a "$BUILD/bin/rocshmem-run" "$P/bin/" &&
    cp -a "$BUILD"/lib/librocshmem.so* "$P/lib/" || exit 1
  # Stripped (the debug info is most of it): the folder is carried to the GPU machine.
  command -v strip >/dev/null && strip "$P/bin/rocshmem-run" "$P"/lib/librocshmem.so.*.*.*
  echo "${#LTO[@]}" >"$P/DLTO"
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), nvcc $("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(date -u '+%Y-%m-%d %H:%M UTC')" >"$P/BUILT"
  log "built in $(($(date +%s) - T_START)) s; run with BENCH_PREBUILT=$P ($(du -sh "$P" | cut -f1))"
  exit 0
fi
fi
T_BUILT=$(date +%s)
log "built in $((T_BUILT - T_START)) s"

# ---------------------------------------------------------------- run
# Two PEs: with one GPU they share it, under MPS unless BENCH_MPS=off.
gpu_plan 2
trap 'gpu_mps_stop' EXIT
trap 'gpu_mps_stop; exit 130' INT TERM
if [ "$PER_GPU" -gt 1 ] && [ "${BENCH_MPS:-auto}" != off ]; then
  gpu_mps_start >>"$LOG" 2>&1 || { log "the MPS control daemon did not start"; exit 1; }
  log "both PEs on one GPU under MPS ($CUDA_MPS_ACTIVE_THREAD_PERCENTAGE% of the SMs each)"
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/bench-nvidia.XXXXXX")
LAUNCH=0
FAILED_RUNS=""
DEAD_roc="" DEAD_nv="" DEAD_nv2=""   # why a library's remaining launches are skipped
TIMEOUTS_roc=0 TIMEOUTS_nv=0 TIMEOUTS_nv2=0

# limit <group>: the seconds this launch may take (BENCH_INIT_TIMEOUT for init-only launches,
# BENCH_TIMEOUT for the others, and never past BENCH_DEADLINE seconds after the start, so that
# the table is written within the device tool's 10-minute limit); 0: no time left.
limit() {
  local t=$T left=$((DEADLINE - ($(date +%s) - T_START) - 20))
  [ "$1" = init ] && t=$T_INIT
  [ $left -lt $t ] && t=$left
  [ $t -lt 10 ] && t=0
  echo $t
}

# after <lib> <group> <rc> <name>: records a failed launch; a library whose first launch failed
# or that timed out twice is not launched again.
after() {
  local lib=$1 g=$2 rc=$3 name=$4
  [ "$rc" = 0 ] && return
  echo "$lib $LAUNCH X $rc" >>"$RAW"
  log "FAILED (exit $rc): $name -b $g (stderr in bench-log.txt)"
  FAILED_RUNS="$FAILED_RUNS $name:$g(exit_$rc)"
  case $rc in *124* | *137*) eval "TIMEOUTS_$lib=\$((TIMEOUTS_$lib + 1))" ;; esac
  if [ "$(eval echo "\${N_$lib:-0}")" -le 1 ]; then
    eval "DEAD_$lib='its first launch failed'"
  elif [ "$(eval echo "\$TIMEOUTS_$lib")" -ge 2 ]; then
    eval "DEAD_$lib='two launches timed out'"
  fi
}

# run_roc <group>: rocshmem-run -n 2 (mpirun -np 2 for RO); every output line goes to RAW as
# "roc <launch> <line>".
run_roc() {
  local t
  t=$(limit "$1")
  if [ -n "$DEAD_roc" ] || [ "$t" = 0 ]; then
    log "skipped: ours -b $1 (${DEAD_roc:-deadline})"
    FAILED_RUNS="$FAILED_RUNS ours:$1(skipped)"
    return
  fi
  LAUNCH=$((LAUNCH + 1)) N_roc=$((${N_roc:-0} + 1))
  echo "== roc launch $LAUNCH: -b $1 (limit $t s)" >>"$LOG"
  if [ "$BACKEND" = ro ]; then
    timeout -k 10 "$t" mpirun --allow-run-as-root --oversubscribe -np 2 -x ROCSHMEM_BACKEND=ro \
      -x ROCSHMEM_DISABLE_MIXED_IPC=1 -x OMPI_MCA_btl_vader_single_copy_mechanism -x ROCSHMEM_GPU -x BENCH_SEED \
      ${BENCH_SCALE:+-x BENCH_SCALE} "$BB/gpu_bench_rocshmem" -b "$1" ${MAX_ARGS[@]+"${MAX_ARGS[@]}"} \
      >"$W/out" 2>"$W/err" </dev/null
  else
    timeout -k 10 "$t" "$BUILD/bin/rocshmem-run" -n 2 "$BB/gpu_bench_rocshmem" -b "$1" ${MAX_ARGS[@]+"${MAX_ARGS[@]}"} \
      >"$W/out" 2>"$W/err"
  fi
  local rc=$?
  cat "$W/err" >>"$LOG"
  awk -v l="$LAUNCH" '{ print "roc", l, $0 }' "$W/out" >>"$RAW"
  after roc "$1" $rc ours
}

# run_nv <group> [nv2]: two processes (ranks 0 and 1) that meet through a unique-id file; if one
# fails, the other is stopped. With nv2: the second NVSHMEM (NVSHMEM_HOME2).
run_nv() {
  local t lib=${2:-nv} home=$NV prog=$BB/gpu_bench_nvshmem name=NVSHMEM dead
  [ "$lib" = nv2 ] && home=$NV2 prog=$BB/gpu_bench_nvshmem2 name="NVSHMEM-$NV2_VERSION"
  dead=$(eval echo "\$DEAD_$lib")
  t=$(limit "$1")
  if [ -n "$dead" ] || [ "$t" = 0 ]; then
    log "skipped: $name -b $1 (${dead:-deadline})"
    FAILED_RUNS="$FAILED_RUNS $name:$1(skipped)"
    return
  fi
  LAUNCH=$((LAUNCH + 1))
  eval "N_$lib=\$((\${N_$lib:-0} + 1))"
  echo "== $name launch $LAUNCH: -b $1 (limit $t s)" >>"$LOG"
  local uid="$W/uid.$LAUNCH" r rc=0 p0 p1 rc0=unset rc1=unset
  rm -f "$uid"
  local LD_LIBRARY_PATH="$home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
  BENCH_RANK=0 BENCH_NRANKS=2 BENCH_UID_FILE=$uid timeout -k 10 "$t" "$prog" -b "$1" \
    ${MAX_ARGS[@]+"${MAX_ARGS[@]}"} >"$W/out.0" 2>"$W/err.0" &
  p0=$!
  BENCH_RANK=1 BENCH_NRANKS=2 BENCH_UID_FILE=$uid timeout -k 10 "$t" "$prog" -b "$1" \
    ${MAX_ARGS[@]+"${MAX_ARGS[@]}"} >"$W/out.1" 2>"$W/err.1" &
  p1=$!
  while [ $rc0 = unset ] || [ $rc1 = unset ]; do
    if [ $rc0 = unset ] && ! kill -0 $p0 2>/dev/null; then
      wait $p0
      rc0=$?
      [ $rc0 != 0 ] && [ $rc1 = unset ] && kill $p1 2>/dev/null
    fi
    if [ $rc1 = unset ] && ! kill -0 $p1 2>/dev/null; then
      wait $p1
      rc1=$?
      [ $rc1 != 0 ] && [ $rc0 = unset ] && kill $p0 2>/dev/null
    fi
    sleep 0.1
  done
  for r in 0 1; do
    sed "s/^/[rank $r] /" "$W/err.$r" >>"$LOG"
    awk -v l="$LAUNCH" -v lib="$lib" '{ print lib, l, $0 }' "$W/out.$r" >>"$RAW"
  done
  rm -f "$uid"
  [ $rc0 != 0 ] || [ $rc1 != 0 ] && rc="$rc0/$rc1"
  after "$lib" "$1" "$rc" "$name"
}

for ((i = 0; i < INIT_LAUNCHES; i++)); do
  log "init/finalize: launch $((i + 1)) of $INIT_LAUNCHES"
  run_roc init
  run_nv init
  [ -z "$NV2" ] || run_nv init nv2
done
# The stream group runs with the driver's JIT cache off (BENCH_STREAM_COLD=1, the default), so
# that putmem_on_stream_first_call measures a first run on a machine, not a cache of earlier ones.
CACHE_SAVED=${CUDA_CACHE_DISABLE-unset}
for g in $GROUPS_LIST; do
  if [ "$g" = stream ] && [ "${BENCH_STREAM_COLD:-1}" = 1 ]; then export CUDA_CACHE_DISABLE=1
  elif [ "$CACHE_SAVED" = unset ]; then unset CUDA_CACHE_DISABLE
  else export CUDA_CACHE_DISABLE=$CACHE_SAVED; fi
  log "$g: ours"
  run_roc "$g"
  log "$g: NVSHMEM"
  run_nv "$g"
  if [ -n "$NV2" ]; then
    log "$g: NVSHMEM $NV2_VERSION"
    run_nv "$g" nv2
  fi
done

# Diagnostics for the init row, into bench-log.txt only (BENCH_INIT_DIAG=0: none): one more init
# launch of each program with CUDA's own start-up timed first (BENCH_CUDA_FLOOR=1: the first
# runtime call and a context on device 0; one-GPU runs), ours with its init phases logged
# (ROCSHMEM_DEBUG_LEVEL=INFO). Their I lines are not in bench-raw.txt, so not in the table.
diag_init() {
  local t r uid="$W/uid.diag"
  t=$(limit init)
  [ "${BENCH_INIT_DIAG:-1}" = 1 ] && [ "$BACKEND" = ipc ] && [ "$t" != 0 ] || return 0
  log "init diagnostics (bench-log.txt)"
  echo "== diagnostics: ours -b init, BENCH_CUDA_FLOOR=1 ROCSHMEM_DEBUG_LEVEL=INFO" >>"$LOG"
  BENCH_CUDA_FLOOR=1 ROCSHMEM_DEBUG_LEVEL=INFO timeout -k 5 "$t" "$BUILD/bin/rocshmem-run" -n 2 \
    "$BB/gpu_bench_rocshmem" -b init >>"$LOG" 2>&1
  echo "== diagnostics: NVSHMEM -b init, BENCH_CUDA_FLOOR=1" >>"$LOG"
  rm -f "$uid"
  for r in 0 1; do
    LD_LIBRARY_PATH="$NV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" BENCH_CUDA_FLOOR=1 BENCH_RANK=$r BENCH_NRANKS=2 \
      BENCH_UID_FILE=$uid timeout -k 5 "$t" "$BB/gpu_bench_nvshmem" -b init >>"$LOG" 2>&1 &
  done
  wait
}
diag_init
rm -rf "$W"
T_END=$(date +%s)
log "measured in $((T_END - T_BUILT)) s"

# ---------------------------------------------------------------- the table
# RAW lines: <lib> <launch> R <op> <size> <unit> <value> | V <op> <size> ok|FAIL <detail> |
#            I <pe> <init ms> <finalize ms> | D <pe> <device> <bus id>
TABLE_AWK=$(cat <<'AWK'
function hsize(b) {
  b += 0
  if (b == 0) return "–"
  if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
  if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
  return b " B"
}
function med(list,   n, a, i, j, t) {
  n = split(list, a, " ")
  if (n == 0) return ""
  for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add_row(k) { if (!(k in seen)) { seen[k] = 1; order[++nrows] = k } }
function cell(lib, k,   c) {
  if (bad[lib, k]) return "WRONG"
  if (!((lib, k) in val)) return "–"
  if (!checked[lib, k]) return "unchecked"
  c = sprintf(val[lib, k] >= 100 ? "%.1f" : "%.3g", val[lib, k])
  if (((lib, k) in from) && ((lib, from[lib, k]) in failed)) { c = c " †"; dagger = 1 }
  return c
}
function good(lib, k) { return ((lib, k) in val) && checked[lib, k] && !bad[lib, k] }
$3 == "R" { k = $4 SUBSEP $5; add_row(k); val[$1, k] = $7; unit[k] = $6; from[$1, k] = $2; next }
$3 == "X" { failed[$1, $2] = 1; next }
$3 == "V" { k = $4 SUBSEP $5; add_row(k); if ($6 == "ok") checked[$1, k] = 1; else bad[$1, k] = 1; next }
$3 == "I" {
  if (!(($1, $2) in ini) || $5 > ini[$1, $2]) ini[$1, $2] = $5
  if (!(($1, $2) in fin) || $6 > fin[$1, $2]) fin[$1, $2] = $6
  next
}
$3 == "D" { dev[$1, $4] = $6; next }
END {
  for (key in ini) { split(key, p, SUBSEP); inis[p[1]] = inis[p[1]] " " ini[key]; fins[p[1]] = fins[p[1]] " " fin[key] }
  ko = "init_2PEs" SUBSEP "0"; kf = "finalize_2PEs" SUBSEP "0"
  for (lib in inis) {
    val[lib, ko] = med(inis[lib]); checked[lib, ko] = 1
    val[lib, kf] = med(fins[lib]); checked[lib, kf] = 1
  }
  unit[ko] = "ms"; unit[kf] = "ms"
  # init and finalize last
  add_row(ko); add_row(kf)
  if (v2 != "") {
    print "| operation | size | unit | better | ours | NVSHMEM " v1 " | ratio | NVSHMEM " v2 " | ratio |" > md
    print "|---|---|---|---|---|---|---|---|---|" > md
    print "operation,size_bytes,unit,ours,nvshmem,ratio,ours_status,nvshmem_status,nvshmem2,ratio2,nvshmem2_status" > csv
  } else {
    print "| operation | size | unit | better | ours | NVSHMEM | ratio (ours/NVSHMEM) |" > md
    print "|---|---|---|---|---|---|---|" > md
    print "operation,size_bytes,unit,ours,nvshmem,ratio,ours_status,nvshmem_status" > csv
  }
  for (i = 1; i <= nrows; i++) {
    k = order[i]; split(k, p, SUBSEP)
    u = unit[k]; better = (u == "GB/s") ? "higher" : "lower"
    r = (good("roc", k) && good("nv", k) && val["nv", k] + 0 > 0) ? sprintf("%.2f×", val["roc", k] / val["nv", k]) : "–"
    rc = (good("roc", k) && good("nv", k) && val["nv", k] + 0 > 0) ? sprintf("%.4f", val["roc", k] / val["nv", k]) : ""
    r2 = (good("roc", k) && good("nv2", k) && val["nv2", k] + 0 > 0) ? sprintf("%.2f×", val["roc", k] / val["nv2", k]) : "–"
    rc2 = (good("roc", k) && good("nv2", k) && val["nv2", k] + 0 > 0) ? sprintf("%.4f", val["roc", k] / val["nv2", k]) : ""
    if (v2 != "")
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], hsize(p[2]), u, better, cell("roc", k), cell("nv", k), r, cell("nv2", k), r2 > md
    else
      printf "| %s | %s | %s | %s | %s | %s | %s |\n", p[1], hsize(p[2]), u, better, cell("roc", k), cell("nv", k), r > md
    sroc = bad["roc", k] ? "wrong" : good("roc", k) ? "ok" : ((("roc", k) in val) ? "unchecked" : "missing")
    snv = bad["nv", k] ? "wrong" : good("nv", k) ? "ok" : ((("nv", k) in val) ? "unchecked" : "missing")
    snv2 = bad["nv2", k] ? "wrong" : good("nv2", k) ? "ok" : ((("nv2", k) in val) ? "unchecked" : "missing")
    printf "%s,%s,%s,%s,%s,%s,%s,%s", p[1], p[2], u, (("roc", k) in val) ? val["roc", k] : "", \
      (("nv", k) in val) ? val["nv", k] : "", rc, sroc, snv > csv
    if (v2 != "") printf ",%s,%s,%s", (("nv2", k) in val) ? val["nv2", k] : "", rc2, snv2 > csv
    printf "\n" > csv
  }
  for (lib in inis) if ((lib, 0) in dev && (lib, 1) in dev && dev[lib, 0] == dev[lib, 1])
    print "WARNING: " (lib == "roc" ? "ours" : "NVSHMEM") ": both PEs on the GPU " dev[lib, 0] > "/dev/stderr"
  if (dagger) print "\n† measured and checked, but the launch that measured it did not end cleanly (see Failed runs)." > md
  for (lib in inis) devs[lib] = dev[lib, 0] " / " dev[lib, 1]
  print devs["roc"] > devfile
  print devs["nv"] > devfile
  print devs["nv2"] > devfile
}
AWK
)
TBL=$(mktemp)
DEVS=$(mktemp)
awk -v md="$TBL" -v csv="$OUTDIR/bench.csv" -v devfile="$DEVS" -v v1="${NV_VERSION:-?}" \
  -v v2="${NV2:+${NV2_VERSION:-?}}" "$TABLE_AWK" "$RAW" 2>>"$LOG"
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD 2>/dev/null || COMMIT="$COMMIT (with uncommitted changes)"
GPUS=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort | uniq -c |
  awk '{ $1 = $1 " x"; print }' | paste -sd ';' -)
TOPO=$(nvidia-smi topo -m 2>/dev/null | awk 'NR == 2 { print $3 }')
{
  echo "# GPU benchmarks: this library and NVSHMEM, side by side"
  echo
  echo "Generated by \`scripts/bench-nvidia.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') ($((T_BUILT - T_START)) s building, $((T_END - T_BUILT)) s measuring)."
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| GPUs | ${GPUS:-?} (GPU0-GPU1 link: ${TOPO:-?}) |"
  if [ -n "${BENCH_PREBUILT:-}" ]; then NVCC_V="prebuilt ($(cat "$BUILD/BUILT" 2>/dev/null))"; else
    NVCC_V=$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'); fi
  echo "| nvcc | $NVCC_V (\`-arch=$ARCH -rdc=true -O3 -maxrregcount=64${LTO[@]+ ${LTO[*]}}\`) |"
  if [ "$BACKEND" = ro ]; then
    OURS_HOW="RO backend: \`mpirun -np 2\`, ROCSHMEM_BACKEND=ro, ROCSHMEM_DISABLE_MIXED_IPC=1"
    NV_HOW="NVSHMEM_DISABLE_P2P=${NVSHMEM_DISABLE_P2P:-0}, "
  else
    OURS_HOW="\`rocshmem-run -n 2\`" NV_HOW=""
  fi
  echo "| ours | commit $COMMIT; device library \`librocshmem_device.a\`; $OURS_HOW; PEs on GPUs (PCI) $(sed -n 1p "$DEVS") |"
  echo "| NVSHMEM | ${NV_VERSION:-?} (\`$NV\`), unique-id bootstrap, NVSHMEM_DISABLE_NVLS=1, ${NV_HOW}NVSHMEM_REMOTE_TRANSPORT=$NVSHMEM_REMOTE_TRANSPORT; PEs on GPUs (PCI) $(sed -n 2p "$DEVS") |"
  [ -z "$NV2" ] || echo "| second NVSHMEM | ${NV2_VERSION:-?} (\`$NV2\`), the same settings, run after the first in every group; PEs on GPUs (PCI) $(sed -n 3p "$DEVS") |"
  echo "| BENCH_SCALE, BENCH_SEED | ${BENCH_SCALE:-1}, $BENCH_SEED |"
  echo
  cat "$TBL"
  echo
  echo "*ratio* is ours ÷ NVSHMEM: below 1 is better for times (µs, ms), above 1 for bandwidth (GB/s)."
  echo "Every number is the median over timed repetitions after warm-up, with random non-zero data;"
  echo "a cell reads WRONG when that configuration's check failed (the number is then not shown),"
  echo "and – when the run produced no number. Bandwidth: C CTAs × 1024 threads on PE 0, each CTA"
  echo "moving its share of the size back to back (puts end with one quiet per CTA), timed with"
  echo "cudaEvents; latencies: the device clock around the timed loop of one kernel on each PE;"
  echo "collectives: one CTA per PE (_wg: 1024 threads, _wave: 32), µs per collective and, from"
  echo "64 KiB, GB/s of dest per PE (_bw rows); *_on_stream: cudaEvents around many operations"
  echo "enqueued back to back (the host's enqueue cost included), _graph rows replay them captured"
  echo "in a CUDA graph; host barrier: each call timed on PE 0; init/finalize: per launch the slowest PE, median over"
  echo "$((INIT_LAUNCHES + $(echo $GROUPS_LIST | wc -w))) launches (NVSHMEM's init includes choosing the device and the unique-id"
  echo "exchange through a file; ours includes everything rocshmem_init does). Sources: bench/gpu/."
  if [ -n "$FAILED_RUNS" ]; then
    echo
    echo "Failed runs:$FAILED_RUNS (see bench-log.txt)."
  fi
} >"$OUTDIR/bench-table.md"
rm -f "$TBL" "$DEVS"
cat "$OUTDIR/bench-table.md"
[ -z "$FAILED_RUNS" ] && ! grep -q ' V .* FAIL ' "$RAW"
