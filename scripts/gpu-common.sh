# Sourced (POSIX sh) by the scripts that run on the NVIDIA GPU machine (gpu-nvidia.sh,
# gpu-nvidia-ro.sh, bench-nvidia.sh, gpu-share-evidence.sh): the prebuilt bundle, and PEs
# sharing GPUs under the MPS control daemon.
#
#   gpu_bundle <bundle>   the bundle of scripts/gpu-prebuild.sh unpacked in /tmp, its CTest
#                         files rewritten for this machine; sets BUILD, puts $BUILD/lib first in
#                         LD_LIBRARY_PATH (the binaries' RPATH names the machine they were built on)
#   gpu_plan <PEs>        sets NGPU (GPUs here) and PER_GPU (PEs per GPU: PE r uses GPU r % NGPU)
#   gpu_mps_start         starts the MPS control daemon with its own pipe and log folders in
#                         /tmp and CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = 100 / PER_GPU (the PEs'
#                         shares sum to 100); a daemon that already answers is used as it is
#   gpu_mps_stop          stops the daemon gpu_mps_start started (echo quit | nvidia-cuda-mps-control)
# The caller traps EXIT with gpu_mps_stop. The accelerator's own settings (compute mode, MIG)
# are never changed.

gpu_bundle() {
  _src=$(cd "$1" && pwd) || return 1
  [ -f "$_src/PREBUILT" ] || { echo "gpu_bundle: $_src has no PREBUILT: not a bundle of scripts/gpu-prebuild.sh" >&2; return 1; }
  BUILD=$(mktemp -d /tmp/rocshmem-gpu-run.XXXXXX)
  xz -dc "$_src/bundle.tar.xz" | tar -C "$BUILD" -xf - || { echo "gpu_bundle: cannot unpack $_src/bundle.tar.xz" >&2; return 1; }
  cp "$_src/PREBUILT" "$BUILD/"
  _old_build=$(sed -n 's/^build=//p' "$BUILD/PREBUILT")
  _old_src=$(sed -n 's/^source=//p' "$BUILD/PREBUILT")
  find "$BUILD" -name CTestTestfile.cmake -exec sed -i "s#$_old_build#$BUILD#g; s#$_old_src#$ROOT#g" {} +
  # mpirun where this machine has it.
  _old_mpirun=$(sed -n 's/^mpirun=//p' "$BUILD/PREBUILT")
  _mpirun=$(command -v mpirun || true)
  if [ -n "$_old_mpirun" ] && [ -n "$_mpirun" ] && [ "$_old_mpirun" != "$_mpirun" ]; then
    find "$BUILD" -name CTestTestfile.cmake -exec sed -i "s#\"$_old_mpirun\"#\"$_mpirun\"#g" {} +
  fi
  export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "== prebuilt bundle $_src ($(sed -n 's/^commit=//p' "$BUILD/PREBUILT"); $(sed -n 's/^nvcc=//p' "$BUILD/PREBUILT"))"
}

gpu_plan() {
  NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  [ "${NGPU:-0}" -ge 1 ] || NGPU=1
  PER_GPU=$((($1 + NGPU - 1) / NGPU))
}

GPU_MPS_STARTED=
gpu_mps_start() {
  export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / PER_GPU))
  if echo get_server_list | nvidia-cuda-mps-control >/dev/null 2>&1; then
    echo "== an MPS control daemon already answers (${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}): used as it is"
    return 0
  fi
  _mps=$(mktemp -d /tmp/rocshmem-mps.XXXXXX)
  export CUDA_MPS_PIPE_DIRECTORY=$_mps/pipe CUDA_MPS_LOG_DIRECTORY=$_mps/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || { echo "FAIL: nvidia-cuda-mps-control -d did not start" >&2; return 1; }
  GPU_MPS_STARTED=1
  echo "== MPS control daemon started (pipe $CUDA_MPS_PIPE_DIRECTORY, $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE% of the SMs per PE)"
}

gpu_mps_stop() {
  [ -n "$GPU_MPS_STARTED" ] || return 0
  GPU_MPS_STARTED=
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
  # The daemon exits once its server has; its control pipe goes with it.
  _i=0
  while [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] && [ $_i -lt 40 ]; do
    sleep 0.25
    _i=$((_i + 1))
  done
  echo "== MPS control daemon stopped (log: $CUDA_MPS_LOG_DIRECTORY)"
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
}

# gpu_refused <log> <PEs>: the job's init failed on every PE with the line about GPU sharing
# without MPS. The job must have run as `rocshmem-run -p -n <PEs> sh -c "$GPU_LINGER" <program>`:
# each failed PE lingers a second, so rocshmem-run (which stops the others at the first failure)
# stops none before it printed; -p names the PE (after a failed init the line says "PE ?").
GPU_LINGER='"$0" "$@"; r=$?; [ $r -eq 0 ] || sleep 1; exit $r'
gpu_refused() {
  _p=0
  while [ $_p -lt "$2" ]; do
    grep -qE "^\[PE $_p\] rocshmem: PE ($_p|\?): error: rocshmem_init: .*share GPU .* without MPS" "$1" || return 1
    _p=$((_p + 1))
  done
}

# Seconds since $1 (a `date +%s%N` value), for tables.
gpu_secs() { awk "BEGIN{printf \"%.2f\", ($(date +%s%N) - $1) / 1e9}"; }
