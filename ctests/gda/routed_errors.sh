#!/bin/sh
# A device put through GDA from memory the NIC cannot read (a thread's stack) must not fail
# silently: every PE's rocshmem_quiet reports it in exactly one line naming the queue pair, the
# peer and the syndrome; nothing lands; the job ends normally (no hang).
# Usage: routed_errors.sh <rocshmem-run> <gda_model_test>
out=$(ROCSHMEM_BACKEND=gda ROCSHMEM_GDA_PROVIDER=model ROCSHMEM_DISABLE_MIXED_IPC=1 \
  timeout 60 "$1" -n 2 "$2" -t routed-errors 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc (want 0: the error is reported, the job goes on)"; exit 1; }
for pe in 0 1; do
  peer=$(( (pe + 1) % 2 ))
  n=$(echo "$out" | grep -c "^rocshmem: PE $pe: error: rocshmem_quiet: GDA: the device queue pair to PE $peer failed: the NIC completed WQE 0 with syndrome 0x04: local protection error")
  [ "$n" -eq 1 ] || { echo "FAIL: PE $pe: $n error lines for its device queue pair to PE $peer, want 1"; exit 1; }
done
echo "$out" | grep -q "PASS gda_model PE 0" || { echo "FAIL: no PASS line"; exit 1; }
echo "PASS"
