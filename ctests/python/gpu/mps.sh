# Sourced (POSIX sh) by run_h200.sh and run_h200_more.sh: two PEs on one GPU share it under the
# MPS control daemon. Needs NAME (the script's name for messages), PROBE (cuda_probe.py) and
# `python` on PATH; sets MPS_ON=1 once a daemon is in use.
#   mps_start    a daemon with its own pipe and log folders (mktemp: no folder shared with an
#                earlier run whose daemon may still be stopping), or one that already answers,
#                used as it is; CUDA_MPS_PIPE_DIRECTORY / CUDA_MPS_LOG_DIRECTORY exported, so
#                every child (rocshmem-run's PEs, torchrun's workers) reaches it
#   mps_stop     stops a daemon mps_start started and waits for it (10 s at most)
#   mps_check <what came before>
#                a fresh process uses the GPU through the daemon (cuda_probe.py); if it cannot,
#                says so with the environment, the daemon's server list and its logs' tails,
#                restarts a daemon this script started, and returns 1. (A client that ends while
#                its kernels still run, as a PE stopped by rocshmem-run after another PE failed
#                can, may leave the MPS server unusable for the clients after it: NVIDIA's MPS
#                guide, "client early termination", says to restart the server then.)
# The accelerator's own settings (compute mode, MIG) are never changed.
MPS_ON=0
MPS_STARTED=0
mps_start() {
  export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
  if echo get_server_list | nvidia-cuda-mps-control >/dev/null 2>&1; then
    echo "$NAME: an MPS control daemon already answers (${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}): used as it is"
  else
    _mps=$(mktemp -d "${TMPDIR:-/tmp}/rocshmem-mps.XXXXXX") || return 1
    export CUDA_MPS_PIPE_DIRECTORY=$_mps/pipe CUDA_MPS_LOG_DIRECTORY=$_mps/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d || { echo "FAIL $NAME: nvidia-cuda-mps-control -d did not start" >&2; return 1; }
    MPS_STARTED=1
  fi
  MPS_ON=1
  echo "$NAME: 1 GPU: 2 PEs share it under MPS (started here: $MPS_STARTED;" \
    "CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY:-unset} CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-unset}" \
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; compute mode" \
    "$(nvidia-smi --query-gpu=compute_mode --format=csv,noheader 2>/dev/null | tr '\n' ' '))"
}

mps_stop() {
  [ "$MPS_STARTED" = 1 ] || return 0
  MPS_STARTED=0
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
  _i=0
  while [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] && [ $_i -lt 40 ]; do
    sleep 0.25
    _i=$((_i + 1))
  done
  [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] && echo "$NAME: the MPS control daemon ($CUDA_MPS_PIPE_DIRECTORY) had not stopped after 10 s" >&2
  echo "$NAME: MPS control daemon stopped (log: $CUDA_MPS_LOG_DIRECTORY)"
}

mps_logs() {
  echo "-- MPS: environment: $(env | grep '^CUDA_MPS_' | tr '\n' ' ')"
  echo "-- MPS: get_server_list: $(echo get_server_list | nvidia-cuda-mps-control 2>&1 | tr '\n' ' ')"
  for _f in "${CUDA_MPS_LOG_DIRECTORY:-/var/log/nvidia-mps}/control.log" "${CUDA_MPS_LOG_DIRECTORY:-/var/log/nvidia-mps}/server.log"; do
    [ -f "$_f" ] && { echo "-- MPS: the last lines of $_f:"; tail -n 25 "$_f"; }
  done
}

mps_check() {
  [ "$MPS_ON" = 1 ] || return 0
  python "$PROBE" >/dev/null && return 0
  echo "FAIL $NAME: under MPS a fresh CUDA process cannot use the GPU after: $1" >&2
  mps_logs >&2
  if [ "$MPS_STARTED" = 1 ]; then
    echo "$NAME: restarting the MPS control daemon" >&2
    mps_stop && mps_start && python "$PROBE" >&2
  fi
  return 1
}
