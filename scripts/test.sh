#!/bin/sh
# Quick start, step 2: build everything and run the whole test suite (what CI runs).
#   ./scripts/test.sh
# Steps: dependencies, Rust format/lint/unit tests, a CMake build of the library, examples and tests,
# every ctest (C/C++ tests at 1-8 PEs, MPI, unique id, Python ctypes, name coverage, ABI,
# generated files committed), and an install consumed through find_package and pkg-config.
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh --test

# mpirun refuses to run as root unless told; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== Rust: format, lints, unit tests"
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test --quiet

echo "== build (CMake drives cargo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"

echo "== name coverage against upstream's list (also a ctest)"
python3 ctests/coverage/check_names.py ctests/data/rocshmem-api-names.tsv build/lib/librocshmem.so include
python3 ctests/coverage/check_device_names.py ctests/data/rocshmem-api-names.tsv build/lib/librocshmem.so

echo "== ctest"
ctest --test-dir build --output-on-failure -j2 --timeout 300

echo "== install and consume"
./ctests/install/check_install.sh build
echo "== all tests passed"
