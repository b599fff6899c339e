#!/bin/sh
# The HIP examples as a separate user project (examples/hip/CMakeLists.txt) against an
# installed rocSHMEM with the AMD device library: find_package(rocshmem), hipcc, -fgpu-rdc.
# Builds every example for the given arches and checks, without an AMD GPU:
#  - each program's embedded code objects cover every arch (roc-obj-ls, or the bundler);
#  - each program exports rocshmemi_device_globals_set (the core finds it with dlsym at init),
#    except the module host, which links only the host library;
#  - each module code object rocshmem_module_kernel_<arch>.co is an amdgcn ELF for that arch
#    defining the kernel and the device globals rocshmem_hipmodule_init fills.
# Then upstream's own link lines (below) for the same arches.
#   check_examples.sh <prefix> <work dir> ["gfx90a;gfx908"] [examples' arches | none]
# The fourth argument narrows the examples project to fewer arches, or skips it (`none`): each
# program costs a compile per arch (about 10 CPU s with clang 21) and a device link (2-3 s since
# the reductions' helper kernels left the archive; 25 s before), so CI builds the project for
# gfx942 alone with today's ROCm and skips it with HIP 5.2, and checks the link lines for every arch.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=$1
work=$2
arches=${3:-gfx90a;gfx908}
project_arches=${4:-$arches}
command -v hipcc >/dev/null || { echo "amd-examples: FAIL: no hipcc (scripts/deps.sh --test installs it)"; exit 1; }
. "$here/programs.sh"
fail=0
if [ "$project_arches" != none ]; then

cmake -S "$root/examples/hip" -B "$work" -DCMAKE_CXX_COMPILER=hipcc -DCMAKE_PREFIX_PATH="$prefix" \
  -Drocshmem_GPU_TARGETS="$project_arches" -DCMAKE_BUILD_TYPE=Release >"$work.configure.log" 2>&1 ||
  { tail -20 "$work.configure.log"; echo "amd-examples: FAIL: configure"; exit 1; }
start=$(date +%s)
cmake --build "$work" -j"$(nproc)" >"$work.build.log" 2>&1 ||
  { grep -E "error|Error" "$work.build.log" | head -30; echo "amd-examples: FAIL: build"; exit 1; }
echo "amd-examples: built for $project_arches in $(($(date +%s) - start)) s"

# LLVM tools of hipcc's clang.
major=$amd_clang_major
readelf=$(command -v "llvm-readelf-$major" || command -v llvm-readelf) ||
  { echo "amd-examples: FAIL: no llvm-readelf (llvm-$major)"; exit 1; }
readobj=$(command -v "llvm-readobj-$major" || command -v llvm-readobj) ||
  { echo "amd-examples: FAIL: no llvm-readobj (llvm-$major)"; exit 1; }

for exe in rocshmem_getmem_test rocshmem_put_signal_test rocshmem_allreduce_test rocshmem_alltoall_test \
           rocshmem_broadcast_test rocshmem_helper_kernels_test rocshmem_getmem_test_static rocshmem_module_test; do
  f="$work/$exe"
  [ -x "$f" ] || { echo "amd-examples: FAIL: $exe was not built"; fail=1; continue; }
  if [ "$exe" != rocshmem_module_test ]; then
    amd_check_program amd-examples "$f" "$project_arches" || fail=1
  fi
done
amd_check_helpers amd-examples "$work/rocshmem_helper_kernels_test" "$project_arches" "$prefix/include" || fail=1
amd_check_no_reductions amd-examples "$work/rocshmem_getmem_test" "$project_arches" || fail=1
for a in $(echo "$project_arches" | tr ';' ' '); do
  base=${a%%:*}
  co="$work/rocshmem_module_kernel_$base.co"
  [ -f "$co" ] || { echo "amd-examples: FAIL: no $co"; fail=1; continue; }
  head=$("$readobj" --file-headers "$co" 2>/dev/null)
  echo "$head" | grep -q "EM_AMDGPU" || { echo "amd-examples: FAIL: $co is not an AMDGPU ELF"; fail=1; }
  mach=$(echo "$base" | tr '[:lower:]' '[:upper:]')
  echo "$head" | grep -q "EF_AMDGPU_MACH_AMDGCN_$mach " ||
    { echo "amd-examples: FAIL: $co is not for $base"; fail=1; }
  syms=$("$readelf" --dyn-syms "$co" 2>/dev/null | awk '{ print $8 }')
  for s in module_ring_put module_ring_put.kd ROCSHMEM_CTX_DEFAULT ROCSHMEM_TEAM_WORLD ROCSHMEM_TEAM_SHARED; do
    echo "$syms" | grep -qx "$s" || { echo "amd-examples: FAIL: $co does not define $s"; fail=1; }
  done
done

[ $fail -ne 0 ] ||
  echo "amd-examples: 8 programs with code objects for $project_arches, device glue exported, the helper kernels where launched; module code objects OK"
fi

# Upstream's own link lines, by hand, with nothing of ours added: the tile examples (which
# include <rocshmem/rocshmem_device.hpp> as upstream's do), compiled -fgpu-rdc and linked with
# the archive given by path, and with -L/-lrocshmem from a folder laid out as upstream installs
# (librocshmem.a alone: next to librocshmem.so, -l finds the shared library, and then the
# program also needs -lrocshmem_device), and with docs/amd.md's form for the shared host library,
# -L<prefix>/lib -lrocshmem_device -Wl,-lrocshmem. Each program must link with no undefined reference,
# hold code objects for every arch and contain the device library's glue (the core calls it at
# init to fill the program's device globals).
mkdir -p "$work" "$work.upstream-lib"
ln -sf "$prefix/lib/librocshmem.a" "$work.upstream-lib/librocshmem.a"
offload=""
for a in $(echo "$arches" | tr ';' ' '); do offload="$offload --offload-arch=$a"; done
for t in "tile_rma_start_coord_test path" "tile_halo_exchange lib" "tile_halo_exchange shared"; do
  set -- $t
  exe="$work/upstream_link_$1_$2"
  # shellcheck disable=SC2086
  if ! hipcc -std=c++17 -c -fgpu-rdc -x hip $offload -I"$prefix/include" -I"$root/examples/hip" \
         "$root/examples/hip/$1.cc" -o "$exe.o" >"$exe.log" 2>&1; then
    grep -E "error" "$exe.log" | head -10; echo "amd-examples: FAIL: $1 does not compile with hipcc"; fail=1; continue
  fi
  case $2 in
    path) libs="$prefix/lib/librocshmem.a"; line="hipcc -fgpu-rdc --hip-link app.o <prefix>/lib/librocshmem.a" ;;
    lib) libs="-L$work.upstream-lib -lrocshmem"; line="hipcc -fgpu-rdc --hip-link app.o -L<dir of librocshmem.a> -lrocshmem" ;;
    # docs/amd.md's form with the shared host library: librocshmem.so for the host linker only
    # (-Wl,-l): clang takes device code from every static library named with -l, so
    # `-lrocshmem -lrocshmem_device` gave today's clang the device code twice (librocshmem.a's
    # and librocshmem_device.a's: duplicate symbols), HIP 5.2's hipcc once.
    shared) libs="-L$prefix/lib -lrocshmem_device -Wl,-lrocshmem -Wl,-rpath,$prefix/lib"
            line="hipcc -fgpu-rdc --hip-link app.o -L<prefix>/lib -lrocshmem_device -Wl,-lrocshmem" ;;
  esac
  # shellcheck disable=SC2086
  hipcc -fgpu-rdc --hip-link $offload "$exe.o" $libs -o "$exe" >>"$exe.log" 2>&1 || true
  undef=$(grep -c "undefined reference" "$exe.log" || true)
  if [ ! -x "$exe" ] || [ "$undef" != 0 ]; then
    grep -E "undefined reference|error" "$exe.log" | head -5
    echo "amd-examples: FAIL: $1 does not link with upstream's line ($line): $undef undefined references"; fail=1; continue
  fi
  amd_has_code_objects "amd-examples: $1 ($line)" "$exe" "$arches" || fail=1
  nm "$exe" | grep -q " T rocshmemi_device_globals_set$" ||
    { echo "amd-examples: FAIL: $1 ($line) does not contain the device glue rocshmemi_device_globals_set"; fail=1; }
  echo "amd-examples: $1: links with $line"
done
# A program that launches upstream's helper kernels itself, with the archive by path: the host
# stubs of the untyped ones come from the archive, the reductions it launches from the header.
exe="$work/upstream_link_helper_kernels"
# shellcheck disable=SC2086
if hipcc -std=c++17 -fgpu-rdc -x hip $offload -I"$prefix/include" -I"$root/examples/hip" \
     -c "$root/examples/hip/rocshmem_helper_kernels_test.cc" -o "$exe.o" \
     >"$exe.log" 2>&1 && hipcc -fgpu-rdc --hip-link $offload "$exe.o" "$prefix/lib/librocshmem.a" -o "$exe" >>"$exe.log" 2>&1; then
  amd_check_helpers "amd-examples: helper_kernels" "$exe" "$arches" "$prefix/include" || fail=1
else
  grep -E "undefined reference|error" "$exe.log" | head -5
  echo "amd-examples: FAIL: rocshmem_helper_kernels_test does not build with upstream's line (archive by path)"; fail=1
fi
[ $fail -eq 0 ] || exit 1
echo "amd-examples: upstream's link lines (archive by path, -lrocshmem) link the tile examples and a program launching the helper kernels for $arches"
