#!/bin/sh
# Installs a built tree into a fresh prefix, then builds and runs user programs against the
# installed files only: CMake find_package(rocshmem) (shared and static library) and
# pkg-config; the same through DESTDIR (as distro packaging installs). When the build made the
# AMD device library: librocshmem.so still needs nothing of ROCm, the host programs above still
# link the static librocshmem.a that holds device code, and the HIP examples build as a user
# project for gfx90a and gfx908 (ctests/amd/check_examples.sh; no AMD GPU needed).
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
  "$here/../amd/check_examples.sh" "$work/prefix" "$work/hip-examples" "gfx90a;gfx908"
fi
