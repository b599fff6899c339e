#!/bin/sh
# Runs on a machine WITHOUT a GPU (the CPU development machine): builds everything the NVIDIA
# GPU scripts run, so that the GPU machine only runs (GPU time is scarce).
#   scripts/gpu-prebuild.sh [bundle dir]          (default .dev/gpu-prebuilt, ignored by git)
# Then, on the GPU machine, with the bundle carried along:
#   ROCSHMEM_GPU_PREBUILT=.dev/gpu-prebuilt sh scripts/gpu-nvidia.sh - <out dir>
#
# Steps:
#  1. CUDA 13.0 from PyPI into $ROCSHMEM_CUDA_PIP (default .dev/cuda-13.0): nvcc 13.0.88 with
#     its nvvm, crt and cccl, the runtime 13.0.96 (headers, libcudart_static.a), the versions of
#     the lent H200 machine (CUDA 13.0, driver 580); plus a libcuda.so link stub made from the
#     driver API's declarations in cuda.h (the real libcuda.so.1 is loaded at run time there).
#  2. The Rust core (cargo build --release).
#  3. A CMake build with ROCSHMEM_NVIDIA=ON, that nvcc, the core, sm_90, the GPU tests at 2 and
#     4 PEs (ROCSHMEM_GPU_TEST_PES), the device bitcode by clang-16/llvm-16 here; the targets
#     the GPU runs need: device tests, stream test, HIP examples, bitcode module test.
#  4. The bundle: bundle.tar.xz, that build tree without objects, archives and CMake's own files
#     (executables, librocshmem.so, rocshmem-run, cubins/PTX/code objects, the device bitcode,
#     CTestTestfile.cmake; debug information stripped), and PREBUILT (where it was built from).
#     scripts/gpu-common.sh unpacks it and rewrites the CTest files' paths for the machine it
#     runs on. It must stay under 64 MiB (the device tool's carry limit).
# Works on Debian 12 (glibc 2.36, GCC 12): the binaries run on Ubuntu 24.04 (glibc 2.39).
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
BUNDLE=${1:-.dev/gpu-prebuilt}
CUDA_PIP=${ROCSHMEM_CUDA_PIP:-$ROOT/.dev/cuda-13.0}
BUILD=${ROCSHMEM_GPU_PREBUILD_DIR:-$ROOT/.dev/build-gpu-prebuild}
case $BUNDLE in /*) ;; *) BUNDLE=$ROOT/$BUNDLE ;; esac
JOBS=${JOBS:-$(nproc)}

echo "== 1. CUDA 13.0 toolchain from PyPI ($CUDA_PIP)"
CU=$CUDA_PIP/nvidia/cu13
if [ ! -x "$CU/bin/nvcc" ] || ! "$CU/bin/nvcc" --version | grep -q "release 13.0"; then
  python3 -m pip install --quiet --no-deps --target "$CUDA_PIP" \
    nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 \
    nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85
fi
# nvcc.profile looks for lib64 (a CUDA install's name); the wheels install lib.
[ -e "$CU/lib64" ] || ln -s lib "$CU/lib64"
# CMake's FindCUDAToolkit wants the unversioned runtime library name.
[ -e "$CU/lib/libcudart.so" ] || ln -s libcudart.so.13 "$CU/lib/libcudart.so"
# nvlink's device LTO (the benchmarks, BENCH_DLTO) loads nvvm/lib64/libnvvm.so, where a CUDA
# installation has it; the nvvm wheel installs lib/libnvvm.so.4.
if [ ! -e "$CU/nvvm/lib64/libnvvm.so" ] && [ -e "$CU/lib/libnvvm.so.4" ]; then
  mkdir -p "$CU/nvvm/lib64" && ln -s ../../lib/libnvvm.so.4 "$CU/nvvm/lib64/libnvvm.so"
fi
"$CU/bin/nvcc" --version | tail -1
# libcuda link stub: every driver API function cuda.h declares (after its _v2 renames), as an
# empty function of a library named libcuda.so.1 (what CUDA's own lib/stubs/libcuda.so is).
if [ ! -f "$CU/lib/stubs/libcuda.so" ]; then
  mkdir -p "$CU/lib/stubs"
  echo '#include <cuda.h>' | cc -E -P -I"$CU/include" -x c - |
    grep -oE '\bCUresult[[:space:]]+cu[A-Za-z0-9_]+[[:space:]]*\(' | sed -E 's/CUresult[[:space:]]+//; s/[[:space:]]*\(//' |
    sort -u | sed 's/.*/void &(void) {}/' >"$CU/lib/stubs/libcuda_stub.c"
  cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$CU/lib/stubs/libcuda.so" "$CU/lib/stubs/libcuda_stub.c"
  echo "libcuda stub: $(wc -l <"$CU/lib/stubs/libcuda_stub.c") functions"
fi

# ROCSHMEM_PREBUILT_CORE_DIR: a core already built (cargo's release folder) instead of cargo here.
CORE=${ROCSHMEM_PREBUILT_CORE_DIR:-}
if [ -z "$CORE" ]; then
  echo "== 2. Rust core (cargo build --release)"
  # With ptxas the stream kernels carry sm_90 SASS (build.rs): no JIT of the reductions' PTX
  # (minutes) at the first *_on_stream call on the GPU machine.
  ROCSHMEM_PTXAS=${ROCSHMEM_PTXAS:-$CU/bin/ptxas} nice cargo build --release --lib --bins
  CORE=$ROOT/target/release
fi
CORE=$(cd "$CORE" && pwd)

echo "== 3. CMake build for NVIDIA ($BUILD)"
# Its configure log is written beside it: the folder above may not exist yet (a clean clone
# with ROCSHMEM_CUDA_PIP outside the checkout has no .dev/).
mkdir -p "$(dirname "$BUILD")"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DROCSHMEM_PREBUILT_CORE="$CORE" -DROCSHMEM_NVIDIA=ON \
  -DROCSHMEM_BUILD_BENCH=OFF -DROCSHMEM_AMD=OFF -DCMAKE_CUDA_COMPILER="$CU/bin/nvcc" -DCUDAToolkit_ROOT="$CU" \
  -DROCSHMEM_CUDA_ARCHS=90 "-DROCSHMEM_GPU_TEST_PES=${ROCSHMEM_GPU_TEST_PES:-2;4}" >"$BUILD.configure.log" 2>&1 ||
  { tail -40 "$BUILD.configure.log"; exit 1; }
start=$(date +%s)
# The targets of gpu-nvidia.sh, and the host-API programs of gpu-nvidia-ro.sh.
nice cmake --build "$BUILD" -j"$JOBS" --target rocshmem_device_tests_gpu stream_gpu_test rocshmem_examples_gpu \
  rocshmem_gpu_module_artifacts rocshmem_gpu_module_test \
  hello rma_ring teams heap bad_input cxx_dropin typed_rma typed_amo typed_p2p typed_coll cas_contention \
  host_gpu_heap \
  >"$BUILD.build.log" 2>&1 ||
  { grep -E "error|Error" "$BUILD.build.log" | head -40; exit 1; }
echo "built in $(($(date +%s) - start)) s"
# The checks of the GPU tests that need no GPU but this build's LLVM and tree (gpu-nvidia.sh
# leaves them out when it runs a bundle).
ctest --test-dir "$BUILD" -L gpu -R '^gpu_(module_host_parse|bitcode_names_|module_ptx_sm_)' --output-on-failure \
  >"$BUILD.host-checks.log" 2>&1 || { tail -30 "$BUILD.host-checks.log"; exit 1; }
grep -E "tests passed" "$BUILD.host-checks.log"

echo "== 4. bundle ($BUNDLE)"
STAGE=$BUILD.bundle
rm -rf "$STAGE" "$BUNDLE"
mkdir -p "$STAGE" "$BUNDLE"
# Everything but objects, archives (librocshmem_device.a stays: bench-nvidia.sh links with it),
# CMake's internals, logs, the bitcode's intermediate files, and the benchmark programs that
# `BENCH_BUILD_ONLY=1 ROCSHMEM_GPU_BUILD=<this build> scripts/bench-nvidia.sh` leaves here (carried
# on their own; with them the bundle would pass the carry limit).
(cd "$BUILD" && find . \( -type d \( -name CMakeFiles -o -name device_bitcode -o -name bench-gpu -o -name bench-prebuilt \) \) -prune -o \( -type f -o -type l \) \
  ! -name '*.o' \( ! -name '*.a' -o -name librocshmem_device.a \) ! -name '*.make' ! -name 'Makefile' \
  ! -name 'CMakeCache.txt' ! -name '*.cmake' ! -name '*.log' -print) | while read -r f; do
  mkdir -p "$STAGE/$(dirname "$f")"
  cp -P -p "$BUILD/$f" "$STAGE/$f"  # links stay links (librocshmem.so.3 -> the library)
done
# CTest's own files are the *.cmake that must come along.
(cd "$BUILD" && find . -name CTestTestfile.cmake) | while read -r f; do
  mkdir -p "$STAGE/$(dirname "$f")"
  cp -p "$BUILD/$f" "$STAGE/$f"
done
# Debug information is not needed to run (device code and dynamic symbols stay).
find "$STAGE" -type f \( -perm -u+x -o -name '*.so*' \) ! -name '*.sh' ! -name '*.py' \
  -exec strip --strip-debug {} + 2>/dev/null || true
echo "staged: $(du -sm "$STAGE" | cut -f1) MiB, $(find "$STAGE" -type f | wc -l) files; compressing"
tar -C "$STAGE" -cf - . | xz -T0 -9 >"$BUNDLE/bundle.tar.xz"
rm -rf "$STAGE"
{
  echo "build=$BUILD"
  echo "source=$ROOT"
  echo "mpirun=$(command -v mpirun || true)"
  echo "commit=$(git -C "$ROOT" rev-parse HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo +changes)"
  echo "nvcc=$("$CU/bin/nvcc" --version | tail -1)"
  echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
} >"$BUNDLE/PREBUILT"
size=$(du -sm "$BUNDLE" | cut -f1)
echo "bundle: $size MiB"
[ "$size" -lt 64 ] || { echo "bundle is $size MiB: over the 64 MiB the device tool carries" >&2; exit 1; }
cat "$BUNDLE/PREBUILT"
echo "carry: [\"${BUNDLE#"$ROOT"/}\"]"
