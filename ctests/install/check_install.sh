#!/bin/sh
# Installs a built tree into a fresh prefix, then builds and runs user programs against the
# installed files only: CMake find_package(rocshmem) (shared and static library), a Python
# extension shaped like upstream's rocshmem4py (the static archive in a shared module), and
# pkg-config; the same through DESTDIR (as distro packaging installs). When the build made the
# AMD device library: librocshmem.so still needs nothing of ROCm, the host programs above still
# link the static librocshmem.a that holds device code, and the HIP examples and a HIP project
# build as user projects (ctests/amd/check_examples.sh, check_consumer_hip.sh; no AMD GPU
# needed), with the toolchains and arches of the environment below.
# usage: check_install.sh <build dir>
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in lib/librocshmem.so lib/librocshmem.a bin/rocshmem-run bin/rocshmem_info include/rocshmem/rocshmem.h \
         include/rocshmem/rocshmem.hpp lib/cmake/rocshmem/rocshmem-config.cmake lib/pkgconfig/rocshmem.pc; do
  test -e "$work/prefix/$f" || { echo "install: missing $f"; exit 1; }
done
run="$work/prefix/bin/rocshmem-run"

cmake -S "$here/consumer" -B "$work/cm" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cm" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib" "$run" -n 2 "$work/cm/consumer_cxx"
"$run" -n 2 "$work/cm/consumer_static"

export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -o "$work/consumer_c" "$here/consumer/consumer.c" $(pkg-config --cflags --libs rocshmem)
LD_LIBRARY_PATH="$work/prefix/lib" "$run" -n 3 "$work/consumer_c"
# shellcheck disable=SC2046
cc -static-libgcc -o "$work/consumer_c_static" "$here/consumer/consumer.c" $(pkg-config --cflags rocshmem) \
   "$work/prefix/lib/librocshmem.a" $(pkg-config --libs-only-l --static rocshmem | sed 's/-lrocshmem//')
"$run" -n 2 "$work/consumer_c_static"

# DESTDIR: staged under a root, then used from there (the package files are relocatable).
DESTDIR="$work/destdir" cmake --install "$build" --prefix /opt/rocshmem >/dev/null
staged="$work/destdir/opt/rocshmem"
test -e "$staged/lib/cmake/rocshmem/rocshmem-config.cmake" || { echo "install: DESTDIR: nothing under $staged"; exit 1; }
cmake -S "$here/consumer" -B "$work/cm-destdir" -DCMAKE_PREFIX_PATH="$staged" >/dev/null
cmake --build "$work/cm-destdir" >/dev/null
LD_LIBRARY_PATH="$staged/lib" "$staged/bin/rocshmem-run" -n 2 "$work/cm-destdir/consumer_cxx"
echo "install: find_package (shared, static), pkg-config (shared, static) and DESTDIR consumers ran"

if [ -f "$work/prefix/lib/librocshmem_device.a" ]; then
  # The host library must load where ROCm is absent: it links nothing of HIP or CUDA.
  needed=$(readelf -d "$work/prefix/lib/librocshmem.so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
  if echo "$needed" | grep -Eq "amdhip|hsa-runtime|libcuda|cudart"; then
    echo "install: FAIL: librocshmem.so needs a GPU runtime: $(echo $needed)"
    exit 1
  fi
  echo "install: librocshmem.so needs only: $(echo $needed)"
  ls "$work/prefix/lib"/librocshmem_device_*.bc >/dev/null
  # The HIP examples and a HIP project (HIP language, find_package(hip)) against this install,
  # built by the toolchain that built its device library: $ROCSHMEM_HIP_RUN runs it (a command
  # prefix; scripts/test.sh: the Debian sid root of today's ROCm; empty: this machine's hipcc),
  # for the arches $ROCSHMEM_HIP_ARCHES.
  arches=${ROCSHMEM_HIP_ARCHES:-gfx90a;gfx908}
  # shellcheck disable=SC2086
  $ROCSHMEM_HIP_RUN "$here/../amd/check_examples.sh" "$work/prefix" "$work/hip-examples" "$arches" \
    "${ROCSHMEM_HIP_EXAMPLE_ARCHES:-$arches}"
  # shellcheck disable=SC2086
  $ROCSHMEM_HIP_RUN "$here/../amd/check_consumer_hip.sh" "$work/prefix" "$work/hip-consumer" "$arches"
  # Another toolchain's device library over the same host library ($ROCSHMEM_HIP_OLD_AMD_DIR:
  # the products of scripts/check-amd.sh, e.g. Debian 12's HIP 5.2), staged into a copy of the
  # install as the build stages its own (cmake/stage_amd.cmake), and the HIP examples built
  # against that copy with this machine's hipcc for $ROCSHMEM_HIP_OLD_ARCHES (upstream's link
  # lines only with ROCSHMEM_HIP_OLD_EXAMPLES=none: the examples project is the same code).
  if [ -n "${ROCSHMEM_HIP_OLD_AMD_DIR:-}" ]; then
    old="$work/prefix-old"
    cp -a "$work/prefix" "$old"
    ar=$(sed -n 's/^ROCSHMEM_LLVM_AR:FILEPATH=//p' "$build/CMakeCache.txt")
    profile=$(sed -n 's/^ROCSHMEM_CARGO_PROFILE:STRING=//p' "$build/CMakeCache.txt")
    [ "$profile" = dev ] && profile=debug
    objcopy=$(sed -n 's/^CMAKE_OBJCOPY:FILEPATH=//p' "$build/CMakeCache.txt")
    cmake -DCARGO_OUT="$build/cargo/${profile:-release}" -DSTAGE_LIB="$old/lib" -DMODE=REQUIRE -DNVIDIA=OFF \
      -DAMD_DIR="$(cd "$ROCSHMEM_HIP_OLD_AMD_DIR" && pwd)" -DAR="$ar" -DOBJCOPY="${objcopy:-objcopy}" \
      -DOUT_CMAKE="$old/lib/cmake/rocshmem/rocshmem-amd.cmake" -P "$here/../../cmake/stage_amd.cmake" >/dev/null
    rm -f "$old/lib/.librocshmem-core.a"
    old_arches=${ROCSHMEM_HIP_OLD_ARCHES:-gfx90a;gfx908}
    "$here/../amd/check_examples.sh" "$old" "$work/hip-examples-old" "$old_arches" \
      "${ROCSHMEM_HIP_OLD_EXAMPLES:-$old_arches}"
  fi
fi

# Upstream's Python extension shape (rocshmem4py: a pybind11 module linking the static archive,
# found with find_package(rocshmem CONFIG)), built against this install with the Python of the
# package tests (build/python-venv, which has pybind11), then run at 2 PEs.
py="$build/python-venv/bin/python"
# scripts/test.sh runs this beside ctest, whose first test makes that environment: with
# ROCSHMEM_INSTALL_PY_WAIT=<file>, wait for it until that file exists (ctest ended).
while [ -n "${ROCSHMEM_INSTALL_PY_WAIT:-}" ] && [ ! -f "$build/python-venv/.tools-installed" ] &&
  [ ! -f "$ROCSHMEM_INSTALL_PY_WAIT" ]; do sleep 2; done
if [ -x "$py" ] && "$py" -c "import pybind11, numpy" 2>/dev/null; then
  cmake -S "$here/python_ext" -B "$work/pyext" -DCMAKE_PREFIX_PATH="$work/prefix" -DPython_EXECUTABLE="$py" \
    -Dpybind11_DIR="$("$py" -m pybind11 --cmakedir)" >/dev/null
  cmake --build "$work/pyext" >/dev/null
  "$run" -n 2 "$py" "$here/python_ext/check.py" "$work/pyext"
else
  echo "install: the upstream-shaped Python extension skipped ($py with pybind11 and numpy: the python ctests make it)"
fi
