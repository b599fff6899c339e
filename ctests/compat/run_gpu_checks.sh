#!/bin/sh
# Checks of the HIP-on-CUDA compat headers with the real CUDA toolkit, on an NVIDIA GPU machine.
#
#   ctests/compat/run_gpu_checks.sh [log-dir]        (env: NVCC=nvcc ARCH=sm_90 CXX=g++)
#
# Builds and runs compat_runtime_test.cu, and compiles with nvcc (or the host compiler):
#   parse_test      compat_parse_test.cu                           (nvcc -c)
#   rocshmem_parse  compat_rocshmem_parse_test.cu + include/       (nvcc -c)
#   host_only       a .cpp using hip_runtime.h through the host C++ compiler, linked with
#                   cudart and run (hipGetDeviceCount, hipMalloc, hipMemcpy)
#   coop_direct     <cooperative_groups.h> included directly after hip_runtime.h, with abort()
#   cccl_after      thrust, cub, cuda/std and cuda/pipeline included after hip_runtime.h
#   unsupported_N   each unsupported API must fail to compile with the layer's message
#   no_abort_macro  (info) device abort() with ROCSHMEM_HIP_COMPAT_NO_ABORT_MACRO: does plain
#                   CUDA accept it?
# Prints one line per step and ALL PASS or SOME FAILED; exit status 0 only if all passed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/ctests/compat
LOG=${1:-/tmp/compat_gpu_checks}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
CXX=${CXX:-g++}
INC=$ROOT/include/rocshmem/compat
CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v "$NVCC")")")")
mkdir -p "$LOG"
fail=0

step() {
  name=$1
  shift
  if "$@" >"$LOG/$name.log" 2>&1; then
    echo "ok    $name"
  else
    echo "FAIL  $name (log: $LOG/$name.log)"
    tail -n 30 "$LOG/$name.log"
    fail=1
  fi
}

"$NVCC" --version | tail -n 1
nvidia-smi -L 2>/dev/null || true

NVFLAGS="-std=c++17 -arch=$ARCH -Xcompiler -Wall,-Wextra -I$INC"

step build_runtime "$NVCC" $NVFLAGS "$HERE/compat_runtime_test.cu" -o "$LOG/compat_runtime_test" -lcuda
if [ -x "$LOG/compat_runtime_test" ]; then
  step run_runtime "$LOG/compat_runtime_test"
  grep -E "^(device 0|spin|[0-9]+ checks)" "$LOG/run_runtime.log" || true
fi
# Warnings that come from the compat headers themselves.
if grep -n "rocshmem/compat/hip/.*warning" "$LOG/build_runtime.log" >/dev/null 2>&1; then
  echo "WARN  compat headers produce warnings:"
  grep -n "rocshmem/compat/hip/.*warning" "$LOG/build_runtime.log" | head -20
  fail=1
fi

step parse_test "$NVCC" $NVFLAGS -c "$HERE/compat_parse_test.cu" -o "$LOG/parse_test.o"
step rocshmem_parse "$NVCC" $NVFLAGS -I"$ROOT/include" -c "$HERE/compat_rocshmem_parse_test.cu" \
  -o "$LOG/rocshmem_parse.o"

cat >"$LOG/host_only.cpp" <<'EOF'
#include <hip/hip_runtime.h>
int main() {
  int n = 0;
  if (hipGetDeviceCount(&n) != hipSuccess || n < 1) return 1;
  hipDeviceProp_t p;
  if (hipGetDeviceProperties(&p, 0) != hipSuccess) return 2;
  int *d = nullptr, h = 5, back = 0;
  if (hipMalloc(&d, sizeof(int)) != hipSuccess) return 3;
  if (hipMemcpy(d, &h, sizeof(int), hipMemcpyHostToDevice) != hipSuccess) return 4;
  if (hipMemcpy(&back, d, sizeof(int), hipMemcpyDeviceToHost) != hipSuccess) return 5;
  if (hipFree(d) != hipSuccess || back != 5) return 6;
  printf("host-only: %s %s\n", p.name, p.gcnArchName);
  return 0;
}
EOF
step host_only_build "$CXX" -std=c++17 -Wall -Wextra -I"$INC" -I"$CUDA_HOME/include" \
  "$LOG/host_only.cpp" -o "$LOG/host_only" -L"$CUDA_HOME/lib64" -lcudart
[ -x "$LOG/host_only" ] && step host_only_run "$LOG/host_only"

cat >"$LOG/coop_direct.cu" <<'EOF'
#include <hip/hip_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int *p, int bad) {
  cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());
  t.sync();
  if (bad) abort();
  p[threadIdx.x] = static_cast<int>(t.thread_rank());
}
int main() { hipLaunchKernelGGL(k, 1, 32, 0, 0, nullptr, 0); return 0; }
EOF
step coop_direct "$NVCC" $NVFLAGS -c "$LOG/coop_direct.cu" -o "$LOG/coop_direct.o"

cat >"$LOG/cccl_after.cu" <<'EOF'
#include <hip/hip_runtime.h>
#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <cuda/std/tuple>
#include <cuda/std/variant>
#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
__global__ void k(unsigned long long *out) {
  int lane = static_cast<int>(__lane_id());
  out[threadIdx.x] = __ballot(lane & 1) + __any(lane == 1) + __all(lane < 32) + __shfl(lane, 0);
  if (out[0] == 12345) abort();
}
int main() {
  thrust::device_vector<int> v(16, 1);
  int sum = thrust::reduce(v.begin(), v.end());
  hipLaunchKernelGGL(k, 1, 32, 0, 0, nullptr);
  return sum == 16 ? 0 : 1;
}
EOF
step cccl_after "$NVCC" $NVFLAGS -c "$LOG/cccl_after.cu" -o "$LOG/cccl_after.o"

for c in 1 2 3 4 5 6; do
  name=unsupported_$c
  if "$NVCC" $NVFLAGS -DCASE=$c -c "$HERE/compat_unsupported_test.cu" -o "$LOG/$name.o" \
       >"$LOG/$name.log" 2>&1; then
    echo "FAIL  $name compiled (it must not)"
    fail=1
  elif grep -q "rocSHMEM HIP compat layer: .* is not supported on NVIDIA/CUDA" "$LOG/$name.log"; then
    echo "ok    $name: $(grep -o 'rocSHMEM HIP compat layer: [A-Za-z]* is not supported' "$LOG/$name.log" | head -n 1)"
  else
    echo "FAIL  $name failed without the layer's message"
    tail -n 10 "$LOG/$name.log"
    fail=1
  fi
done

cat >"$LOG/no_abort_macro.cu" <<'EOF'
#define ROCSHMEM_HIP_COMPAT_NO_ABORT_MACRO
#include <hip/hip_runtime.h>
__global__ void k(int bad) { if (bad) abort(); }
int main() { hipLaunchKernelGGL(k, 1, 1, 0, 0, 0); return 0; }
EOF
if "$NVCC" $NVFLAGS -c "$LOG/no_abort_macro.cu" -o "$LOG/no_abort_macro.o" >"$LOG/no_abort_macro.log" 2>&1; then
  echo "info  no_abort_macro: plain CUDA accepts abort() in device code"
else
  echo "info  no_abort_macro: plain CUDA rejects abort() in device code: $(grep -m1 error "$LOG/no_abort_macro.log")"
fi

if [ $fail -eq 0 ]; then echo "ALL PASS"; else echo "SOME FAILED"; fi
exit $fail
