# Sourced by check_examples.sh and check_consumer_hip.sh: checks on HIP programs built against an
# installed rocSHMEM, with the LLVM tools of hipcc's clang (no AMD GPU needed).
#   amd_check_program <tag> <program> <arches>: the program embeds a code object for each arch
#   (amd_has_code_objects) and exports rocshmemi_device_globals_set (the core finds it with
#   dlsym at init); prints what is missing and returns 1.
#   amd_kernels <program> <arch>: the kernels of its code object for <arch>.

amd_clang_major=$(hipcc --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
# The bundler beside hipcc's clang first: it runs llvm-objcopy from its own folder (Debian's
# clang-offload-bundler-N in /usr/bin does not find it).
amd_clang_dir=$(hipcc --version 2>/dev/null | sed -n 's/^InstalledDir: //p' | head -1)
amd_bundler=$(ls "$amd_clang_dir/clang-offload-bundler" 2>/dev/null || command -v "clang-offload-bundler-$amd_clang_major" ||
              command -v clang-offload-bundler || true)

# The code objects a program embeds: roc-obj-ls (HIP 5), else the offload bundle of its
# .hip_fatbin section listed by the bundler (today's ROCm ships no roc-obj-ls).
amd_code_objects() {
  if command -v roc-obj-ls >/dev/null; then
    roc-obj-ls "$1" 2>/dev/null | awk '{ print $2 }'
  elif [ -n "$amd_bundler" ]; then
    objcopy -O binary --only-section=.hip_fatbin "$1" "$1.fatbin" 2>/dev/null &&
      "$amd_bundler" --list --type=o --input="$1.fatbin" 2>/dev/null
    rm -f "$1.fatbin"
  fi
}

# amd_has_code_objects <tag> <program> <arches>: a code object for each arch, else says which
# is missing and returns 1.
amd_has_code_objects() {
  _objs=$(amd_code_objects "$2")
  _miss=0
  for _a in $(echo "$3" | tr ';' ' '); do
    echo "$_objs" | grep -Eq "^hipv4-amdgcn-amd-amdhsa-(unknown)?-*${_a%%:*}(:|$)" ||
      { echo "$1: FAIL: $(basename "$2") has no code object for $_a ($(echo $_objs))"; _miss=1; }
  done
  return $_miss
}

amd_check_program() {
  _ok=0
  amd_has_code_objects "$1" "$2" "$3" || _ok=1
  nm -D --defined-only "$2" | grep -q " T rocshmemi_device_globals_set$" ||
    { echo "$1: FAIL: $(basename "$2") does not export rocshmemi_device_globals_set"; _ok=1; }
  return $_ok
}

# amd_kernels <program> <arch>: the kernels (demangled, one per line) of the program's code
# object for <arch>, from their kernel descriptors (<name>.kd).
amd_kernels() {
  _readelf=$(command -v "llvm-readelf-$amd_clang_major" || command -v llvm-readelf || echo "$amd_clang_dir/llvm-readelf")
  objcopy -O binary --only-section=.hip_fatbin "$1" "$1.fatbin" 2>/dev/null || return 1
  _entry=$("$amd_bundler" --list --type=o --input="$1.fatbin" 2>/dev/null |
    grep -E "^hipv4-amdgcn-amd-amdhsa-(unknown)?-*${2%%:*}(:|$)" | head -1)
  [ -n "$_entry" ] && "$amd_bundler" --unbundle --type=o --input="$1.fatbin" --targets="$_entry" --output="$1.co" &&
    "$_readelf" -s "$1.co" | awk '$NF ~ /\.kd$/ { sub(/\.kd$/, "", $NF); print $NF }' | sort -u | c++filt
  _rc=$?
  rm -f "$1.fatbin" "$1.co"
  return $_rc
}

# amd_check_helpers <tag> <program> <arches> <include dir>: the program launches upstream's
# helper kernels (examples/hip/rocshmem_helper_kernels_test.cc): its code object for each arch
# defines every untyped helper kernel the installed rocshmem_HOST.hpp declares and exactly the
# two reductions it instantiates. Prints what is wrong and returns 1.
amd_check_helpers() {
  _names=$(sed -n 's/^__global__ void \(rocshmem_[a-z_]*_kernel\)(.*/\1/p' "$4/rocshmem/rocshmem_HOST.hpp" | grep -v reduce_on_stream)
  [ "$(echo "$_names" | wc -l)" -ge 11 ] || { echo "$1: FAIL: $4/rocshmem/rocshmem_HOST.hpp declares no helper kernels"; return 1; }
  _ok=0
  for _a in $(echo "$3" | tr ';' ' '); do
    _k=$(amd_kernels "$2" "$_a") || { echo "$1: FAIL: no code object of $(basename "$2") for $_a"; _ok=1; continue; }
    for _n in $_names; do
      echo "$_k" | grep -q "rocshmem::$_n(" || { echo "$1: FAIL: $(basename "$2") ($_a) lacks the kernel $_n"; _ok=1; }
    done
    _red=$(echo "$_k" | grep -c "rocshmem::rocshmem_reduce_on_stream_kernel<" || true)
    echo "$_k" | grep -Eq "rocshmem_reduce_on_stream_kernel<float, \(([a-z]+::)?ROCSHMEM_OP\)0>" &&
      echo "$_k" | grep -Eq "rocshmem_reduce_on_stream_kernel<long, \(([a-z]+::)?ROCSHMEM_OP\)1>" && [ "$_red" = 2 ] ||
      { echo "$1: FAIL: $(basename "$2") ($_a): reductions <float, SUM> and <long, MAX> wanted, found $_red:"; echo "$_k" | grep reduce_on_stream; _ok=1; }
  done
  return $_ok
}

# amd_check_no_reductions <tag> <program> <arches>: a program that launches no reduction helper
# kernel has none in its code objects (they are instantiated where launched, not in every
# program's device link).
amd_check_no_reductions() {
  for _a in $(echo "$3" | tr ';' ' '); do
    _red=$(amd_kernels "$2" "$_a" | grep -c "rocshmem_reduce_on_stream_kernel<" || true)
    [ "$_red" = 0 ] || { echo "$1: FAIL: $(basename "$2") ($_a) holds $_red reduction helper kernels it never launches"; return 1; }
  done
}
