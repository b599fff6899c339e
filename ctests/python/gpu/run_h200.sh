#!/bin/sh
# The rocshmem Python package on an NVIDIA machine (no Rust, no internet needed): installs the
# wheel built elsewhere into a venv that sees the system's torch and triton, then runs, with
# 2 PEs (one GPU each, or both on one GPU under MPS when there is one GPU):
#   1. gpu_test.py under rocshmem-run (init from the launcher) and with init_from_torch;
#   2. examples/triton/run.sh: check_compile.py, then the Triton kernel in a captured graph,
#      100 checked replays (put_signal_graph.py), through the package;
#   3. examples/python/ring.py at 2 PEs.
#   ctests/python/gpu/run_h200.sh <rocshmem-*.whl> [venv dir]
# Exit status 0 only if everything passed.
set -u
WHEEL=${1:?usage: run_h200.sh <rocshmem wheel> [venv dir]}
VENV=${2:-${TMPDIR:-/tmp}/rocshmem-py-venv}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PY=${PYTHON:-python3}
fail=0
"$PY" -m venv --system-site-packages "$VENV" || exit 1
"$VENV/bin/python" -m pip install -q --no-index --no-deps --force-reinstall "$WHEEL" || exit 1
PATH="$VENV/bin:$PATH"; export PATH
python -c "import torch, triton, rocshmem, rocshmem.triton; print('torch', torch.__version__, 'triton', triton.__version__, 'rocshmem', rocshmem.__version__, rocshmem.library_path())" || exit 1

NGPU=$(python -c "import torch; print(torch.cuda.device_count())")
MPS_STARTED=0
if [ "$NGPU" -lt 2 ]; then
  # Two PEs on one GPU: MPS lets both run kernels at once (a spinning kernel of one PE must not
  # keep the other's kernel off the GPU), each with half of the SMs.
  export CUDA_MPS_PIPE_DIRECTORY=${TMPDIR:-/tmp}/rocshmem-mps-pipe CUDA_MPS_LOG_DIRECTORY=${TMPDIR:-/tmp}/rocshmem-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && MPS_STARTED=1
  export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
  echo "run_h200: 1 GPU: 2 PEs share it under MPS (started: $MPS_STARTED)"
fi
run() { echo "== $*"; "$@" || { echo "FAIL run_h200: $*" >&2; fail=1; }; }
run rocshmem-run -n 2 python "$ROOT/ctests/python/gpu/gpu_test.py" --init launcher
run rocshmem-run -n 2 python "$ROOT/ctests/python/gpu/gpu_test.py" --init torch
run env PYTHON=python sh "$ROOT/examples/triton/run.sh" -n 2 --replays 100
run rocshmem-run -n 2 python "$ROOT/examples/triton/put_signal_graph.py" --replays 100
run rocshmem-run -n 2 python "$ROOT/examples/python/ring.py"
if [ "$MPS_STARTED" = 1 ]; then echo quit | nvidia-cuda-mps-control; fi
[ $fail = 0 ] && echo "run_h200: ALL PASS"
exit $fail
