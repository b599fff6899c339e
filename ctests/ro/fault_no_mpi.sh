#!/bin/sh
# ROCSHMEM_BACKEND=ro without an MPI launcher must fail at once: non-zero exit, one clear line.
# Usage: fault_no_mpi.sh <rocshmem-run> <program>
out=$(ROCSHMEM_BACKEND=ro timeout 20 "$1" -n 2 "$2" 2>&1)
rc=$?
echo "$out"
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "FAIL: exit status $rc (want non-zero, no hang)"; exit 1; }
echo "$out" | grep -q "ROCSHMEM_BACKEND=ro needs MPI: start the PEs with mpirun" || { echo "FAIL: message missing"; exit 1; }
echo "PASS"
