#!/bin/sh
# Installs the Python package the way a user does, into a virtual environment, for the ctests of
# this folder (fixture test python_package_install):
#   make_venv.sh <venv> <source dir> [prebuilt core dir]
# pip install <source dir> builds the wheel with scikit-build-core (pyproject.toml). With a
# prebuilt core (cargo's output of this build tree) the wheel's CMake build reuses it
# (ROCSHMEM_PREBUILT_CORE) instead of running cargo a second time. pytest and numpy come from PyPI.
set -eu
VENV=${1:?usage: make_venv.sh <venv> <source dir> [prebuilt core dir]}
SRC=${2:?usage: make_venv.sh <venv> <source dir> [prebuilt core dir]}
CORE=${3:-}
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" || { echo "make_venv.sh: '$PY -m venv' failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check numpy pytest
set -- -C cmake.define.ROCSHMEM_PYTHON_BITCODE=OFF
if [ -n "$CORE" ]; then
  set -- "$@" -C "cmake.define.ROCSHMEM_PREBUILT_CORE=$CORE" -C "build-dir=$VENV/wheel-build"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$@" "$SRC"
"$VENV/bin/python" -c "import rocshmem, sys; print('installed rocshmem', rocshmem.__version__, 'at', rocshmem.library_path())"
command -v "$VENV/bin/rocshmem-run" >/dev/null || { echo "make_venv.sh: rocshmem-run was not installed" >&2; exit 1; }
