#!/bin/sh
# A virtual environment with Triton alone (no torch, no GPU), for the Triton compile checks
# (fixture test triton_venv; ctests/python/triton_torch_amd.py):
#   make_triton_venv.sh <venv> [wheel cache folder]
# The wheel (about 190 MB) is downloaded once into the cache folder (default:
# $ROCSHMEM_CI_CACHE/pip, else /var/cache/rocshmem-ci/pip, where CI keeps its downloads) and
# installed from there, so a later run installs it without the network. TRITON_VERSION picks
# another version (default 3.6.0, the one docs/pytorch-triton.md is written against).
set -eu
VENV=${1:?usage: make_triton_venv.sh <venv> [wheel cache folder]}
CACHE=${2:-${ROCSHMEM_CI_CACHE:-/var/cache/rocshmem-ci}/pip}
VERSION=${TRITON_VERSION:-3.6.0}
PY=${PYTHON:-python3}
start=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" || { echo "make_triton_venv.sh: '$PY -m venv' failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
if "$VENV/bin/python" -c "import triton, sys; sys.exit(triton.__version__ != '$VERSION')" 2>/dev/null; then
  echo "make_triton_venv.sh: triton $VERSION already in $VENV"
  exit 0
fi
mkdir -p "$CACHE" 2>/dev/null || CACHE="$VENV/wheels"
mkdir -p "$CACHE"
if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-index --find-links "$CACHE" \
    "triton==$VERSION" 2>/dev/null; then
  echo "make_triton_venv.sh: downloading triton $VERSION into $CACHE"
  "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps -d "$CACHE" "triton==$VERSION"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-index --find-links "$CACHE" \
    "triton==$VERSION"
fi
"$VENV/bin/python" -c "import triton; print('make_triton_venv.sh: triton', triton.__version__, 'in', '$VENV')"
echo "make_triton_venv.sh: $(($(date +%s) - start)) s"
