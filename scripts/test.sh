#!/bin/sh
# Quick start, step 2: build everything and run the whole test suite (what CI runs).
#   ./scripts/test.sh
# Steps: dependencies, Rust format/lint/unit tests, a CMake build of the library, examples and tests
# (with the AMD device library for gfx90a, gfx908 and gfx940: Debian's HIP 5.2, no GPU needed),
# every ctest (C/C++ tests at 1-8 PEs, MPI, unique id, Python ctypes, name coverage, ABI,
# generated files committed, the exported ABI against abi/librocshmem.abi), the AMD bitcode and
# code-object checks, an install consumed through find_package and pkg-config (host programs,
# and the HIP examples built with hipcc), and the Debian packages (scripts/check-deb.sh).
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh --test

# mpirun refuses to run as root unless told; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== Rust: format, lints, unit tests"
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test --quiet

echo "== build (CMake drives cargo; the AMD device library too)"
# The AMD arches CI builds, all by HIP 5.2's clang-15 (archive and bitcode; clang-16 would take
# an arch clang-15 does not know, bitcode only). Reused by later runs while device/ is unchanged.
AMD_TARGETS="gfx90a;gfx908;gfx940"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DROCSHMEM_AMD=REQUIRE -DROCSHMEM_GPU_TARGETS="$AMD_TARGETS" >/dev/null
cmake --build build -j"$(nproc)"

echo "== AMD device library: entry points and globals in each arch's bitcode, code objects in the archives"
AMD_OUT=build/lib ROCSHMEM_GPU_TARGETS="$AMD_TARGETS" CHECK_AMD_ALL=1 ./scripts/check-amd.sh

echo "== name coverage against upstream's list (also a ctest)"
python3 ctests/coverage/check_names.py ctests/data/rocshmem-api-names.tsv build/lib/librocshmem.so include
python3 ctests/coverage/check_device_names.py ctests/data/rocshmem-api-names.tsv build/lib/librocshmem.so \
  c++ include build/device_name_coverage

echo "== ctest"
ctest --test-dir build --output-on-failure -j2 --timeout 300

echo "== install and consume"
./ctests/install/check_install.sh build

echo "== Debian packages: built from this build, lintian, installed in a clean Debian 12 root and used, purged"
./scripts/check-deb.sh build
echo "== all tests passed"
