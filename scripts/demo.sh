#!/bin/sh
# Quick start, step 1: build the library and run the demo, several PEs exchanging data around
# a ring (on the host platform: each PE is a process, no GPU needed).
#   ./scripts/demo.sh [PEs]
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target ring_exchange rocshmem_cargo
./build/bin/rocshmem-run -n "${1:-4}" --prefix ./build/examples/ring_exchange
