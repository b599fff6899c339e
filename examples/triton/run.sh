#!/bin/sh
# The Triton + PyTorch demonstration through the Python package, in one command (on an NVIDIA
# machine with python3, torch with CUDA and triton, and the package installed:
# pip install <source tree>, or the wheel built elsewhere):
#   examples/triton/run.sh [put_signal_graph.py options]
#   examples/triton/run.sh <core dir> <bitcode> [options]   # another library and bitcode than the
#                                                           # package's (ROCSHMEM_LIBRARY, ROCSHMEM_BITCODE)
# First compiles the kernels and checks the link and the globals (check_compile.py, no GPU used),
# then runs put_signal_graph.py (graph capture, 100 checked replays). Exit status 0 only if both pass.
set -u
if [ $# -ge 2 ] && [ -d "$1" ] && [ -f "$2" ]; then
  ROCSHMEM_LIBRARY=$(cd "$1" && pwd)/librocshmem.so
  ROCSHMEM_BITCODE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  export ROCSHMEM_LIBRARY ROCSHMEM_BITCODE
  shift 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
"$PY" -c "import torch, triton, rocshmem.triton" || {
  echo "FAIL run.sh: $PY cannot import torch, triton and rocshmem.triton (pip install the rocshmem package)" >&2; exit 1; }
"$PY" "$HERE/check_compile.py" || exit 1
exec "$PY" "$HERE/put_signal_graph.py" "$@"
