#!/usr/bin/env bash
# Builds the AMD device library (device/amd_build/) with a HIP toolchain (Debian 12's HIP 5.2 by
# default) and checks it:
#  - every librocshmem_device_<arch>.bc defines each extern "C" name of the TSV rows
#    `D(extern C, bitcode)` of ctests/data/rocshmem-api-names.tsv (unprefixed on GPUs; the host
#    platform's copies carry rocshmemi_bc_), and the globals ROCSHMEM_CTX_DEFAULT (16 bytes),
#    ROCSHMEM_TEAM_WORLD and ROCSHMEM_TEAM_SHARED (8 bytes each);
#  - librocshmem_device.a (and a staged librocshmem.a) holds device code for every built arch
#    and the host glue rocshmemi_device_globals_set;
#  - the stream kernels' bundles (stream_core.hipfb, stream_reduce.hipfb, embedded in
#    librocshmem.so) hold a code object for every arch of the archive, each defining every
#    kernel of device/stream/kernels.hpp and gen/reduce_list.inc and the device globals;
#  - with CHECK_AMD_LINK=1, a user kernel (ctests/amd/link_kernel.cpp) compiles and device-links
#    against it with -fgpu-rdc (slow: LTO of the library for every arch).
# Exits non-zero on any miss. No AMD GPU is needed.
#
# Environment: ROCSHMEM_GPU_TARGETS (default "gfx90a;gfx908"; with CHECK_AMD_ALL=1 an arch
# the build skipped is a failure); AMD_OUT=<dir> checks an existing OUT_DIR/amd, or a CMake
# build's lib/ folder (scripts/test.sh: build/lib, which also has the combined librocshmem.a),
# instead of building; CHECK_AMD_LLVM=<N> (default 15, HIP 5.2's clang) is the LLVM version of
# the toolchain (its tools <tool>-N must be on the PATH; other versions than 15 are not
# installed here: scripts/rocm-sid.sh makes today's). Without AMD_OUT the products are built
# by device/amd_main.rs (the build code without cargo) into $AMD_CHECK_DIR/amd
# (default target/amd-check-<N>).
set -euo pipefail
cd "$(dirname "$0")/.."

export ROCSHMEM_GPU_TARGETS="${ROCSHMEM_GPU_TARGETS:-gfx90a;gfx908}"
LLVM=${CHECK_AMD_LLVM:-15}

# 1. Tools. Debian 12: hipcc (clang-15 comes with it), libamdhip64-dev, rocm-device-libs;
#    llvm-15 has llvm-link-15 / opt-15 / llvm-nm-15 / llvm-dis-15 / llvm-extract-15 / llc-15 /
#    llvm-ar-15; clang-tools-15 has clang-offload-bundler; lld-15 is the amdgcn linker;
#    clang-16 / llvm-16 are the newer candidates (arches clang-15 does not know).
need=()
if [ "$LLVM" = 15 ]; then
command -v hipcc >/dev/null || need+=(hipcc)
[ -f /usr/include/hip/hip_runtime.h ] || [ -f /opt/rocm/include/hip/hip_runtime.h ] || need+=(libamdhip64-dev)
compgen -G '/usr/lib/*/amdgcn/bitcode/ockl.bc' >/dev/null || [ -f /opt/rocm/amdgcn/bitcode/ockl.bc ] || need+=(rocm-device-libs)
for t in llvm-link opt llvm-nm llvm-dis llvm-extract llc llvm-ar; do
  command -v "$t-$LLVM" >/dev/null || { need+=("llvm-$LLVM"); break; }
done
command -v "clang-offload-bundler-$LLVM" >/dev/null || need+=("clang-tools-$LLVM")
command -v "ld.lld-$LLVM" >/dev/null || need+=("lld-$LLVM")
command -v clang++-16 >/dev/null || need+=(clang-16 llvm-16)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "check-amd: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
BUNDLER="clang-offload-bundler-$LLVM"

# 2. Build (ROCSHMEM_AMD=require: a missing compiler or a failed compile fails the build) with
#    the build code alone (device/amd_main.rs), not cargo: the Rust core is not rebuilt.
if [ -z "${AMD_OUT:-}" ]; then
  dir="${AMD_CHECK_DIR:-target/amd-check-$LLVM}"
  mkdir -p "$dir"
  rustc --edition 2024 -O device/amd_main.rs -o "$dir/amd-build"
  echo "check-amd: building with ROCSHMEM_GPU_TARGETS=$ROCSHMEM_GPU_TARGETS (${HIPCC:-hipcc})"
  start=$(date +%s)
  ROCSHMEM_AMD=require "$dir/amd-build" "$PWD" "$dir" | sed -n 's/^cargo:warning=/check-amd: /p' ||
    { echo "check-amd: FAIL: the AMD device build failed (above)"; exit 1; }
  echo "check-amd: built in $(($(date +%s) - start)) s"
  AMD_OUT="$dir/amd"
fi
# Absolute: the archive checks below extract members in a scratch folder.
AMD_OUT=$(cd "$AMD_OUT" && pwd) || { echo "check-amd: FAIL: no folder $AMD_OUT"; exit 1; }
echo "check-amd: products in $AMD_OUT"

fail=0
names=$(mktemp); trap 'rm -rf "$names" "$names".d "$names".archived' EXIT
awk -F'\t' '$2 == "D(extern C, bitcode)" { print $1 }' ctests/data/rocshmem-api-names.tsv | sort -u >"$names"
want=$(wc -l <"$names")
# The entry points also in the device archive (not only in the bitcode).
archived="$names.archived"
sed -n 's/.*ROCSHMEM_BITCODE_NAME(\([a-z0-9_]*\)).*/\1/p' device/gen/bitcode_api_archived.cpp | sort -u >"$archived"
[ -s "$archived" ] || { echo "check-amd: FAIL: no names in device/gen/bitcode_api_archived.cpp"; exit 1; }

# 3. Each arch's bitcode.
arches=$(echo "$ROCSHMEM_GPU_TARGETS" | tr ';, ' '\n\n\n' | sed 's/:.*//' | grep . | sort -u)
built=()
for arch in $arches; do
  bc="$AMD_OUT/librocshmem_device_$arch.bc"
  if [ ! -f "$bc" ]; then
    if [ "${CHECK_AMD_ALL:-0}" = 1 ]; then
      echo "check-amd: FAIL: $arch: no $bc (skipped by the build: see its warning lines)"
      fail=1
    else
      echo "check-amd: $arch: no $bc (skipped by the build: see its warning lines)"
    fi
    continue
  fi
  built+=("$arch")
  "llvm-nm-$LLVM" --defined-only "$bc" | awk '$2 == "T" { print $3 }' | sort -u >"$names.d"
  missing=$(comm -23 "$names" "$names.d")
  have=$((want - $(printf '%s' "$missing" | grep -c . || true)))
  echo "check-amd: $arch: $have / $want extern \"C\" bitcode entry points defined"
  if [ -n "$missing" ]; then
    echo "check-amd: FAIL: $arch misses: $(echo "$missing" | head -20 | tr '\n' ' ')"
    fail=1
  fi
  # Globals: extract them, code-generate that small module, read the sizes from the ELF.
  small="$names.d.bc"; obj="$names.d.o"
  "llvm-extract-$LLVM" --glob=ROCSHMEM_CTX_DEFAULT --glob=ROCSHMEM_TEAM_WORLD --glob=ROCSHMEM_TEAM_SHARED "$bc" -o "$small" ||
    { echo "check-amd: FAIL: $arch: the device globals are not all in the bitcode"; fail=1; continue; }
  "llc-$LLVM" -O0 -filetype=obj -mtriple=amdgcn-amd-amdhsa -mcpu="$arch" "$small" -o "$obj"
  for g in ROCSHMEM_CTX_DEFAULT:16 ROCSHMEM_TEAM_WORLD:8 ROCSHMEM_TEAM_SHARED:8; do
    n=${g%%:*}; size=${g##*:}
    hex=$("llvm-nm-$LLVM" -S --defined-only "$obj" | awk -v n="$n" '$4 == n { print $2 }')
    got=""; [ -n "$hex" ] && got=$((16#$hex))
    if [ "$got" = "$size" ]; then
      echo "check-amd: $arch: global $n: $got bytes"
    else
      echo "check-amd: FAIL: $arch: global $n: ${got:-missing} bytes, want $size"
      fail=1
    fi
  done
done
[ ${#built[@]} -gt 0 ] || { echo "check-amd: FAIL: no bitcode built"; fail=1; }

# 4. The archives: code objects for every built arch, and the host glue. librocshmem_device.a
#    always; librocshmem.a too when it is the CMake build's staged one (cmake/stage_amd.cmake
#    adds the device object to the core's archive, as upstream's holds host and device code).
check_archive() {  # <archive> <member or ""> <label>
  x="$names.d.ar"; rm -rf "$x"; mkdir -p "$x"
  if [ -n "$2" ]; then (cd "$x" && "llvm-ar-$LLVM" x "$1" "$2"); else (cd "$x" && "llvm-ar-$LLVM" x "$1"); fi
  bundles=$(for o in "$x"/*.o; do "$BUNDLER" --list --type=o --input="$o"; done | sort -u)
  for arch in "${built[@]}"; do
    entry=$(grep -E "^hip-amdgcn-amd-amdhsa-(unknown)?-?$arch(:|$)" <<<"$bundles" | head -1)
    if [ -n "$entry" ]; then
      # The C names of bitcode_api_archived.cpp are defined in each arch's device code too.
      missing=""
      for o in "$x"/*.o; do
        if "$BUNDLER" --list --type=o --input="$o" | grep -qx "$entry"; then
          "$BUNDLER" --unbundle --type=o --targets="$entry" --input="$o" --output="$x/dev.bc"
          "llvm-nm-$LLVM" --defined-only "$x/dev.bc" | awk '$2 == "T" { print $3 }' | sort -u >"$x/dev.names"
          missing="$missing$(comm -23 "$archived" "$x/dev.names")"
        fi
      done
      if [ -n "$missing" ]; then
        echo "check-amd: FAIL: $3: $arch's device code lacks: $(echo $missing | head -c 300)"
        fail=1
      else
        echo "check-amd: $3: device code for $arch, with the $(wc -l <"$archived") archived C names"
      fi
    else
      echo "check-amd: FAIL: $3 has no device code for $arch (bundles: $(echo $bundles))"
      fail=1
    fi
  done
  if "llvm-nm-$LLVM" --defined-only "$x"/*.o 2>/dev/null | grep -q " T rocshmemi_device_globals_set$"; then
    echo "check-amd: $3: host glue rocshmemi_device_globals_set"
  else
    echo "check-amd: FAIL: $3 lacks rocshmemi_device_globals_set"
    fail=1
  fi
  rm -rf "$x"
}
lib="$AMD_OUT/librocshmem_device.a"
if [ ! -f "$lib" ]; then
  echo "check-amd: FAIL: no $lib"
  fail=1
else
  check_archive "$lib" "" librocshmem_device.a
  if [ -f "$AMD_OUT/librocshmem.a" ]; then
    if "llvm-ar-$LLVM" t "$AMD_OUT/librocshmem.a" | grep -qx rocshmem_device.o; then
      check_archive "$AMD_OUT/librocshmem.a" rocshmem_device.o librocshmem.a
    else
      echo "check-amd: FAIL: $AMD_OUT/librocshmem.a has no rocshmem_device.o (device code) member"
      fail=1
    fi
  fi
fi

# 5. The stream kernels' bundles (built for the archive's arches; a CMake build keeps them in
#    cargo's OUT_DIR, embedded in librocshmem.so): a code object per arch defining every kernel
#    of the two lists and the device globals the core fills.
sdir="$AMD_OUT"
if [ ! -f "$sdir/stream_core.hipfb" ]; then
  m=$(ls -t "$AMD_OUT"/../cargo/*/build/rocshmem-*/out/amd/products.txt 2>/dev/null | head -1 || true)
  [ -n "$m" ] && sdir=$(dirname "$m")
fi
#    CHECK_AMD_STREAM=0 leaves them out (an installed package: they are inside librocshmem.so).
if [ -f "$lib" ] && [ "${CHECK_AMD_STREAM:-1}" = 1 ]; then
  core=$(sed -n '/define ROCSHMEM_STREAM_CORE_KERNELS/,/^$/p' device/stream/kernels.hpp | grep -o 'X([a-z_]*)' |
         sed 's/X(\(.*\))/rocshmemi_stream_\1/')
  reduce=$(grep '^X(' device/stream/gen/reduce_list.inc | awk -F', *' '{ print "rocshmemi_stream_reduce_" $2 "_" $3 }')
  globals="ROCSHMEM_CTX_DEFAULT ROCSHMEM_TEAM_WORLD ROCSHMEM_TEAM_SHARED"
  for mod in core reduce; do
    fb="$sdir/stream_$mod.hipfb"
    if [ ! -f "$fb" ]; then echo "check-amd: FAIL: no $fb"; fail=1; continue; fi
    if [ $mod = core ]; then want_k=$core; else want_k=$reduce; fi
    nk=$(echo "$want_k" | grep -c .)
    ids=$("$BUNDLER" --list --type=o --input="$fb")
    for arch in "${built[@]}"; do
      id=$(grep -E "^hipv4-amdgcn-amd-amdhsa-(unknown)?-?$arch(:|$)" <<<"$ids" | head -1 || true)
      if [ -z "$id" ]; then echo "check-amd: FAIL: $fb has no code object for $arch ($(echo $ids))"; fail=1; continue; fi
      co="$names.d.co"
      "$BUNDLER" --unbundle --type=o --input="$fb" --targets="$id" --output="$co"
      syms=$("llvm-readelf-$LLVM" --dyn-syms "$co" | awk '{ print $8 }' | sort -u)
      head=$("llvm-readobj-$LLVM" --file-headers "$co")
      mach=$(echo "$arch" | tr '[:lower:]' '[:upper:]')
      # (here-strings, not `echo | grep -q`: grep stops early and pipefail would see echo's SIGPIPE)
      grep -q "EF_AMDGPU_MACH_AMDGCN_$mach " <<<"$head" ||
        { echo "check-amd: FAIL: stream_$mod ($arch) is not an AMDGPU code object for $arch"; fail=1; }
      miss=$(for k in $want_k; do echo "$k"; echo "$k.kd"; done | cat - <(tr ' ' '\n' <<<"$globals") | sort -u |
             comm -23 - <(sort -u <<<"$syms") | tr '\n' ' ')
      if [ -n "$miss" ]; then
        echo "check-amd: FAIL: stream_$mod ($arch) lacks: $(cut -c1-300 <<<"$miss")"; fail=1
      else
        echo "check-amd: $arch: stream_$mod: $nk kernels and the 3 device globals in the code object"
      fi
    done
  done
fi

# 6. Optional: a user kernel device-links against the archive (-fgpu-rdc, as upstream's apps).
if [ "${CHECK_AMD_LINK:-0}" = 1 ] && [ -f "$lib" ]; then
  offload=(); for a in "${built[@]}"; do offload+=("--offload-arch=$a"); done
  hip=(--rocm-path=/usr)
  libs=$(ls -d /usr/lib/*/amdgcn/bitcode 2>/dev/null | head -1)
  [ -n "$libs" ] && hip+=("--hip-device-lib-path=$libs")
  t=$(mktemp -d)
  # clang 15 takes device code from static libraries given with -L/-l only.
  if "clang++-$LLVM" -x hip -std=c++17 -fgpu-rdc "${offload[@]}" "${hip[@]}" -I"${AMD_INCLUDE:-include}" -Wno-deprecated-declarations \
       -c ctests/amd/link_kernel.cpp -o "$t/k.o" &&
     "clang++-$LLVM" -fgpu-rdc --hip-link "${offload[@]}" "${hip[@]}" "$t/k.o" -L"$AMD_OUT" -lrocshmem_device \
       -lamdhip64 -o "$t/k"; then
    echo "check-amd: link: ctests/amd/link_kernel.cpp device-links against librocshmem_device.a"
  else
    echo "check-amd: FAIL: ctests/amd/link_kernel.cpp does not link"
    fail=1
  fi
  rm -rf "$t"
fi

if [ $fail -ne 0 ]; then
  echo "check-amd: FAILED"
  exit 1
fi
echo "check-amd: OK (${built[*]})"
