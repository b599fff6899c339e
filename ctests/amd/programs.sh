# Sourced by check_examples.sh and check_consumer_hip.sh: checks on HIP programs built against an
# installed rocSHMEM, with the LLVM tools of hipcc's clang (no AMD GPU needed).
#   amd_check_program <tag> <program> <arches>: the program embeds a code object for each arch
#   (amd_has_code_objects) and exports rocshmemi_device_globals_set (the core finds it with
#   dlsym at init); prints what is missing and returns 1.

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
