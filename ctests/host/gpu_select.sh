#!/bin/sh
# Choosing the GPU platform (ROCSHMEM_GPU, src/gpu/mod.rs `open`) and its clean-error paths on a
# machine without an AMD GPU, with or without libamdhip64 installed:
#  - ROCSHMEM_GPU=amd with a HIP runtime that cannot be loaded (ROCSHMEM_HIP_LIBRARY naming a
#    missing file): every PE's init fails, non-zero, quickly, with a line naming the variable and
#    the file; no crash;
#  - ROCSHMEM_GPU=amd with the default search: where libamdhip64 is installed, the line says the
#    library was found (its file and HIP version) but sees no AMD GPU; where it is not, that the
#    HIP runtime is not installed;
#  - ROCSHMEM_GPU=auto (CUDA hidden with CUDA_VISIBLE_DEVICES=) runs the job on the host
#    platform, after logging what it found of HIP;
#  - rocshmem_info's "amd:" line says the same as init;
#  - a malformed ROCSHMEM_HEAP_ALLOCATOR_TYPE is refused at init on any platform, naming the
#    variable; a valid one that only applies to AMD (vmm_posix) does not stop the host platform.
# Whether libamdhip64 is installed is found independently of the library (ldconfig, ROCm's
# directories). With an AMD GPU (/dev/kfd) the no-GPU expectations do not hold: skipped (77).
#   gpu_select.sh <rocshmem-run> <hello> <rocshmem_info>
set -u
RUN=$1
HELLO=$2
INFO=$3
fails=0
fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}
if [ -e /dev/kfd ]; then
  echo "gpu_select: /dev/kfd exists (an AMD GPU may be present): the no-GPU checks do not apply; skipped"
  exit 77
fi
TMP=$(mktemp -d /tmp/rocshmem-gpu-select.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

hip_installed=no
if { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libamdhip64\.so'; then
  hip_installed=yes
fi
for d in "${ROCM_PATH:-/opt/rocm}/lib" /opt/rocm/lib; do
  ls "$d"/libamdhip64.so* >/dev/null 2>&1 && hip_installed=yes
done
echo "gpu_select: libamdhip64 installed: $hip_installed"

# run <name> <env...>: rocshmem-run -n 2 hello with the given variables; output in $TMP/<name>.
run() {
  name=$1
  shift
  env ROCSHMEM_BOOTSTRAP_TIMEOUT=5 "$@" timeout 60 "$RUN" -n 2 "$HELLO" >"$TMP/$name" 2>&1
  echo $?
}
# expect_fail <name> <pattern...>: the run failed (not killed by timeout, no panic) and its
# output matches every pattern (grep -E), on a line of its own with the rocshmem_init error.
expect_fail() {
  name=$1
  rc=$2
  shift 2
  out="$TMP/$name"
  [ "$rc" -ne 0 ] || fail "$name: init succeeded: $(cat "$out")"
  [ "$rc" -ne 124 ] || fail "$name: timed out"
  grep -qi "panic" "$out" && fail "$name: panicked: $(cat "$out")"
  for pat in "$@"; do
    grep "rocshmem_init" "$out" | grep -qE -- "$pat" || fail "$name: no rocshmem_init line matching '$pat': $(cat "$out")"
  done
}

# 1. A HIP runtime that cannot be loaded.
rc=$(run amd_missing_lib ROCSHMEM_GPU=amd ROCSHMEM_HIP_LIBRARY=/nonexistent/libamdhip64.so)
expect_fail amd_missing_lib "$rc" "ROCSHMEM_GPU=amd" "ROCSHMEM_HIP_LIBRARY" "/nonexistent/libamdhip64\.so"

# 2. The default search.
rc=$(run amd_default ROCSHMEM_GPU=amd)
if [ "$hip_installed" = yes ]; then
  expect_fail amd_default "$rc" "ROCSHMEM_GPU=amd" "libamdhip64[^ ]* loaded from /[^ ]*libamdhip64" "HIP [0-9]+\.[0-9]+" \
    "no AMD GPU"
else
  expect_fail amd_default "$rc" "ROCSHMEM_GPU=amd" "HIP runtime \(libamdhip64\) is not installed"
fi

# 3. auto: the host platform (CUDA hidden, so the result does not depend on an NVIDIA GPU).
rc=$(run auto ROCSHMEM_GPU=auto CUDA_VISIBLE_DEVICES= ROCSHMEM_DEBUG_LEVEL=INFO)
[ "$rc" -eq 0 ] || fail "auto: exit $rc: $(cat "$TMP/auto")"
grep -q "hello from 2 PEs" "$TMP/auto" || fail "auto: hello did not run: $(cat "$TMP/auto")"
[ "$(grep -c 'platform host' "$TMP/auto")" -eq 2 ] || fail "auto: not on the host platform on both PEs: $(cat "$TMP/auto")"
if [ "$hip_installed" = yes ]; then
  grep -q "HIP runtime found but no AMD GPU" "$TMP/auto" || fail "auto: no line about the HIP runtime without GPU"
else
  grep -q "no HIP runtime" "$TMP/auto" || fail "auto: no line about the missing HIP runtime"
fi

# 4. rocshmem_info says the same.
env -i PATH=/usr/bin:/bin "$INFO" >"$TMP/info" 2>&1 || fail "rocshmem_info failed: $(cat "$TMP/info")"
amd=$(grep -E "^ *(GPU runtime found)? *: amd: " "$TMP/info")
if [ "$hip_installed" = yes ]; then
  echo "$amd" | grep -qE "amd: libamdhip64[^ ]* loaded from /[^ ]*libamdhip64[^ ]*, HIP [0-9]+\.[0-9]+\.[0-9]+, no AMD GPU" ||
    fail "rocshmem_info amd line: '$amd'"
else
  echo "$amd" | grep -q "amd: not available (.*not installed" || fail "rocshmem_info amd line: '$amd'"
fi
env -i PATH=/usr/bin:/bin ROCSHMEM_HIP_LIBRARY=/nonexistent/libamdhip64.so "$INFO" >"$TMP/info2" 2>&1
grep "amd: not available" "$TMP/info2" | grep -q "/nonexistent/libamdhip64.so" ||
  fail "rocshmem_info with ROCSHMEM_HIP_LIBRARY missing: $(grep 'amd:' "$TMP/info2")"

# 5. ROCSHMEM_HEAP_ALLOCATOR_TYPE.
rc=$(run bad_allocator ROCSHMEM_GPU=host ROCSHMEM_HEAP_ALLOCATOR_TYPE=bogus)
expect_fail bad_allocator "$rc" "ROCSHMEM_HEAP_ALLOCATOR_TYPE='bogus'" "uncached, finegrained, coarsegrained"
rc=$(run vmm_on_host ROCSHMEM_GPU=host ROCSHMEM_HEAP_ALLOCATOR_TYPE=vmm_posix)
[ "$rc" -eq 0 ] || fail "vmm_posix on the host platform: exit $rc: $(cat "$TMP/vmm_on_host")"

if [ "$fails" -gt 0 ]; then
  echo "gpu_select: $fails failure(s)" >&2
  exit 1
fi
echo "gpu_select: ROCSHMEM_GPU=amd fails cleanly (libamdhip64 installed: $hip_installed), auto runs on host, rocshmem_info agrees"
