#!/bin/sh
# ROCSHMEM_BACKEND=gda runs only against the NIC model (ROCSHMEM_GDA_PROVIDER=model): with any
# other provider init must fail at once on every PE with exactly one line saying so and what
# this node has (here: no RDMA device, or the NIC it would use); the default backend choice is
# unchanged (the same program without the variable starts).
# Usage: refused.sh <rocshmem-run> <program that calls rocshmem_init>
out=$(ROCSHMEM_BACKEND=gda ROCSHMEM_GDA_PROVIDER= timeout 30 "$1" -n 2 "$2" -t none 2>&1)
rc=$?
echo "$out"
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "FAIL: exit status $rc (want non-zero, no hang)"; exit 1; }
lines=$(echo "$out" | grep -c "error: rocshmem_init: .*ROCSHMEM_BACKEND=gda: the GDA backend runs only against its NIC model .*queue pairs on a NIC are not set up yet")
[ "$lines" -eq 2 ] || { echo "FAIL: $lines refusal lines, want one per PE (2)"; exit 1; }
echo "$out" | grep "ROCSHMEM_BACKEND=gda" | grep -qE "(no RDMA device|not installed|no usable RDMA NIC|NIC would be|mlx5 only)" ||
  { echo "FAIL: the line does not say what this node has"; exit 1; }
timeout 60 "$1" -n 2 "$2" -t none || { echo "FAIL: without ROCSHMEM_BACKEND the program does not start"; exit 1; }
echo "PASS"
