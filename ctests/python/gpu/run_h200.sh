#!/bin/sh
# The rocshmem Python package on an NVIDIA machine (no Rust, no internet needed): installs the
# wheel built elsewhere into a folder on PYTHONPATH of the python3 that has torch and triton
# (pip install --target: a venv would not see torch where it is a user or another venv's
# install), then runs, with
# 2 PEs (one GPU each, or both on one GPU under MPS when there is one GPU):
#   1. gpu_test.py under rocshmem-run (init from the launcher) and with init_from_torch;
#   2. examples/triton/run.sh: check_compile.py, then the Triton kernel in a captured graph,
#      100 checked replays (put_signal_graph.py), through the package;
#   3. examples/python/ring.py at 2 PEs;
#   4. torch_rocshmem_triton.py: PyTorch's own _rocshmem_triton functions (imported from the
#      installed torch) with our sm_90 bitcode; skipped, and said so, where that torch has no
#      such module.
#   ctests/python/gpu/run_h200.sh <rocshmem-*.whl> [install dir]
# With one GPU both PEs share it under MPS (mps.sh): before each test a fresh process checks
# that the GPU is usable through the daemon (cuda_probe.py).
# Exit status 0 only if everything passed.
set -u
WHEEL=${1:?usage: run_h200.sh <rocshmem wheel> [install dir]}
DEST=${2:-${TMPDIR:-/tmp}/rocshmem-py-site}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PY=${PYTHON:-python3}
fail=0
rm -rf "$DEST"
"$PY" -m pip install -q --no-index --no-deps --target "$DEST" "$WHEEL" || exit 1
# `python` below is the interpreter that has torch, called by its own path (a symlink to a
# venv's python would not find that venv's packages).
mkdir -p "$DEST/.py" && printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$PY")" >"$DEST/.py/python" &&
  chmod +x "$DEST/.py/python"
PATH="$DEST/.py:$DEST/bin:$PATH" PYTHONPATH="$DEST${PYTHONPATH:+:$PYTHONPATH}"; export PATH PYTHONPATH
python -c "import torch, triton, rocshmem, rocshmem.triton; print('torch', torch.__version__, 'triton', triton.__version__, 'rocshmem', rocshmem.__version__, rocshmem.library_path())" || exit 1

NGPU=$(python -c "import torch; print(torch.cuda.device_count())")
NAME=run_h200 PROBE="$ROOT/ctests/python/gpu/cuda_probe.py"
. "$ROOT/ctests/python/gpu/mps.sh"
trap mps_stop EXIT
if [ "$NGPU" -lt 2 ]; then
  # Two PEs on one GPU: MPS lets both run kernels at once (a spinning kernel of one PE must not
  # keep the other's kernel off the GPU), each with half of the SMs.
  mps_start || exit 1
fi
# Before each test (and after the last) a fresh process checks that the GPU is usable through
# the MPS daemon: a failure is reported with the test that came before it.
prev="the start of the MPS daemon"
run() {
  mps_check "$prev" || fail=1
  prev=$*
  echo "== $*"; "$@" || { echo "FAIL run_h200: $*" >&2; fail=1; }
}
run rocshmem-run -n 2 python "$ROOT/ctests/python/gpu/gpu_test.py" --init launcher
run rocshmem-run -n 2 python "$ROOT/ctests/python/gpu/gpu_test.py" --init torch
run env PYTHON=python sh "$ROOT/examples/triton/run.sh" -n 2 --replays 100
run rocshmem-run -n 2 python "$ROOT/examples/triton/put_signal_graph.py" --replays 100
run rocshmem-run -n 2 python "$ROOT/examples/python/ring.py"
skipped=
if python -c "from torch.distributed._symmetric_memory import _rocshmem_triton" 2>/dev/null; then
  run rocshmem-run -n 2 python "$ROOT/ctests/python/gpu/torch_rocshmem_triton.py"
else
  # Its exit status 3 (each PE) would read as a failure of this script; nothing can run.
  skipped="torch_rocshmem_triton.py (torch $(python -c 'import torch; print(torch.__version__)') has no torch.distributed._symmetric_memory._rocshmem_triton: not run, not a pass)"
  echo "SKIP run_h200: $skipped"
fi
mps_check "$prev" || fail=1
mps_stop
[ $fail = 0 ] && echo "run_h200: ALL PASS${skipped:+ (skipped: $skipped)}"
exit $fail
