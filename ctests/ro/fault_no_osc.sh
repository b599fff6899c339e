#!/bin/sh
# An MPI library left without a one-sided transport (Open MPI with
# OMPI_MCA_btl_vader_single_copy_mechanism=none, as found on a lent GPU machine) must fail init
# at once on every PE, non-zero, with a message that names the setting and the fix.
# Usage: fault_no_osc.sh <mpirun> <program>
out=$(OMPI_MCA_btl_vader_single_copy_mechanism=none ROCSHMEM_BACKEND=ro ROCSHMEM_DISABLE_MIXED_IPC=1 \
  timeout 60 "$1" --oversubscribe -n 2 "$2" 2>&1)
rc=$?
echo "$out"
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "FAIL: exit status $rc (want non-zero, no hang)"; exit 1; }
n=$(echo "$out" | grep -c "MPI_Win_create failed.*single_copy_mechanism=none in the environment.*set it to cma")
[ "$n" -eq 2 ] || { echo "FAIL: $n PEs printed the message (want 2)"; exit 1; }
echo "PASS"
