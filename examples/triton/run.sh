#!/bin/sh
# The Triton + PyTorch demonstration in one command (on an NVIDIA machine with python3, torch
# with CUDA and triton; 2 GPUs by default):
#   examples/triton/run.sh <core dir holding librocshmem.so> <librocshmem_device_sm_XX.bc> [put_signal_graph.py options]
# First compiles the kernels and checks the link and the globals (check_compile.py, no GPU used),
# then runs put_signal_graph.py (graph capture, 100 checked replays). Exit status 0 only if both pass.
set -u
CORE=${1:?usage: run.sh <core dir> <bitcode> [put_signal_graph.py options]}
BC=${2:?usage: run.sh <core dir> <bitcode> [put_signal_graph.py options]}
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
"$PY" -c "import torch, triton" || { echo "FAIL run.sh: $PY cannot import torch and triton" >&2; exit 1; }
"$PY" "$HERE/check_compile.py" --bitcode "$BC" || exit 1
exec "$PY" "$HERE/put_signal_graph.py" --lib "$CORE/librocshmem.so" --bitcode "$BC" "$@"
