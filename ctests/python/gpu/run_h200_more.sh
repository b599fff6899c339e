#!/bin/sh
# The Python tests of issues 36 and 39 that need an NVIDIA GPU, for the lead's batched GPU runs
# (prepared on the CPU machine, not run there). Same setup as run_h200.sh: installs the wheel
# built elsewhere into a folder on PYTHONPATH of the python3 that has torch (and triton), 2 PEs
# (one GPU each, or both on one GPU under MPS):
#   1. rocshmem4py with CUDA tensors: ctests/python/upstream_api (written only against
#      upstream's documented API; the stream forms run here) under rocshmem-run
#      (init_with_torch) and under torchrun;
#   2. torch.compile of rocshmem.ops on CUDA tensors: ctests/python/test_torch_compile.py
#      (aot_eager and inductor), with the package's conftest (rocshmem.init on the launcher's
#      PEs, the device current first: ROCSHMEM_PYTEST_CUDA=1);
#   3. the rocshmem.triton device functions at 2 PEs: ctests/python/gpu/triton_device_test.py.
# With one GPU both PEs share it under MPS (mps.sh): before each test a fresh process checks
# that the GPU is usable through the daemon (cuda_probe.py), and torchrun's workers run that
# probe first, printing the CUDA_MPS_* variables each got.
#   ctests/python/gpu/run_h200_more.sh <rocshmem-*.whl> [install dir]
# pytest and mpi4py must be importable by that python3 (pip install pytest). Exit status 0 only
# if everything passed.
set -u
WHEEL=${1:?usage: run_h200_more.sh <rocshmem wheel> [install dir]}
DEST=${2:-${TMPDIR:-/tmp}/rocshmem-py-site}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PY=${PYTHON:-python3}
fail=0
rm -rf "$DEST"
"$PY" -m pip install -q --no-index --no-deps --target "$DEST" "$WHEEL" || exit 1
mkdir -p "$DEST/.py" && printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$PY")" >"$DEST/.py/python" &&
  chmod +x "$DEST/.py/python"
PATH="$DEST/.py:$DEST/bin:$PATH" PYTHONPATH="$DEST${PYTHONPATH:+:$PYTHONPATH}"; export PATH PYTHONPATH
python -c "import torch, pytest, rocshmem, rocshmem4py; print('torch', torch.__version__, 'rocshmem', rocshmem.__version__)" ||
  exit 1
NGPU=$(python -c "import torch; print(torch.cuda.device_count())")
NAME=run_h200_more PROBE="$ROOT/ctests/python/gpu/cuda_probe.py"
. "$ROOT/ctests/python/gpu/mps.sh"
trap mps_stop EXIT
if [ "$NGPU" -lt 2 ]; then
  # Two PEs on one GPU: MPS lets both run kernels at once (a spinning kernel of one PE must not
  # keep the other's kernel off the GPU), each with half of the SMs.
  mps_start || exit 1
fi
T="$ROOT/ctests/python"
PYTEST="python -m pytest -x -q -p no:cacheprovider"
# Before each test (and after the last) a fresh process checks that the GPU is usable through
# the MPS daemon: a failure is reported with the test that came before it.
prev="the start of the MPS daemon"
run() {
  mps_check "$prev" || fail=1
  prev=$*
  echo "== $*"; "$@" || { echo "FAIL run_h200_more: $*" >&2; fail=1; }
}
cd "$T" || exit 1
run env ROCSHMEM4PY_INIT=torch ROCSHMEM_PYTEST_NRANKS=2 rocshmem-run -n 2 $PYTEST --confcutdir=upstream_api \
  upstream_api/test_upstream_api.py
# torchrun's workers first make their device current and print the CUDA_MPS_* variables they got.
run python -m torch.distributed.run --standalone --nproc_per_node=2 "$PROBE"
run env ROCSHMEM4PY_INIT=torch ROCSHMEM_PYTEST_NRANKS=2 python -m torch.distributed.run --standalone \
  --nproc_per_node=2 -m pytest -x -q -p no:cacheprovider --confcutdir=upstream_api upstream_api/test_upstream_api.py
run env ROCSHMEM_PYTEST_NRANKS=2 ROCSHMEM_PYTEST_CUDA=1 rocshmem-run -n 2 $PYTEST test_torch_compile.py
if python -c "import triton" 2>/dev/null; then
  run rocshmem-run -n 2 python "$T/gpu/triton_device_test.py"
else
  echo "FAIL run_h200_more: triton is not importable" >&2; fail=1
fi
mps_check "$prev" || fail=1
mps_stop
[ $fail = 0 ] && echo "run_h200_more: ALL PASS"
exit $fail
