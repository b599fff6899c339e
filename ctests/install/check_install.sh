#!/bin/sh
# Installs a built tree into a fresh prefix, then builds and runs user programs against the
# installed files only: CMake find_package(rocshmem) (shared and static library) and
# pkg-config. usage: check_install.sh <build dir>
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
echo "install: find_package (shared, static) and pkg-config (shared, static) consumers ran"
