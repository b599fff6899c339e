#!/bin/sh
# Installs what building and testing need on Debian/Ubuntu, if it is missing. Used by demo.sh
# and test.sh; safe to run again. Rust (cargo, edition 2024) must already be installed.
#   deps.sh          what the build and the demo need
#   deps.sh --test   also what only the tests need: clang-16 (parses the CUDA side, no nvcc;
#                    the gfx940 bitcode) and Debian's HIP 5.2 (hipcc with clang-15,
#                    libamdhip64-dev, rocm-device-libs) with the LLVM 15 tools, for the AMD
#                    device library, its checks and the HIP examples (no AMD GPU needed),
#                    python3-venv (the Python package is pip-installed into a venv), MPICH
#                    beside Open MPI (the MPI bootstrap over MPICH's ABI), the Debian packaging
#                    tools (debhelper, help2man, lintian, mmdebstrap), and libibverbs-dev
#                    (rdma-core's mlx5dv.h, against which the GDA layouts are checked)
set -eu

need=""
have() { command -v "$1" >/dev/null 2>&1; }
pkg_missing() { ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

pkgs="build-essential cmake pkg-config python3 git libopenmpi-dev openmpi-bin libclang-dev"
if [ "${1:-}" = "--test" ]; then
  pkgs="$pkgs python3-venv clang-16 llvm-16 hipcc libamdhip64-dev rocm-device-libs llvm-15 clang-tools-15 lld-15 libibverbs-dev"
  # MPICH beside Open MPI (the MPI bootstrap's MPICH ABI; Open MPI keeps the mpicc/mpirun
  # alternatives: Debian gives it the higher priority, and tests use mpicc.mpich/mpiexec.mpich)
  pkgs="$pkgs mpich libmpich-dev"
  # The Debian packages (scripts/check-deb.sh): build, lintian, a clean root made by mmdebstrap.
  pkgs="$pkgs debhelper help2man lintian mmdebstrap"
  # Today's ROCm comes from a Debian sid root (scripts/rocm-sid.sh); ccache keeps the C and C++
  # compiles of scripts/test.sh's CMake build across runs.
  pkgs="$pkgs debootstrap ccache"
fi
for p in $pkgs; do
  if pkg_missing "$p"; then need="$need $p"; fi
done

if [ -n "$need" ]; then
  echo "deps: installing$need"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -q --no-install-recommends $need
fi

if ! have cargo; then
  echo "deps: cargo not found. Install Rust >= 1.85 (https://rustup.rs) and run this again." >&2
  exit 1
fi
