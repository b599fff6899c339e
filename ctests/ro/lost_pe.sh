#!/bin/sh
# A PE lost mid-run (lost_pe.cpp: PE 1 kills itself inside a kernel that floods the proxies)
# must end the whole job soon after: non-zero status, a line naming the lost PE (ours,
# from the bootstrap's watch, or mpirun's), and no PE still running.
# Usage: lost_pe.sh <mpiexec> <n> [pretend_nodes.sh] <program>   (env: ROCSHMEM_BACKEND=ro ...)
MPIEXEC=$1
N=$2
shift 2
start=$(date +%s)
out=$(timeout 75 "$MPIEXEC" --oversubscribe -n "$N" "$@" 2>&1)
rc=$?
took=$(($(date +%s) - start))
echo "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
[ "$rc" -ne 0 ] || fail "exit status 0 (want non-zero)"
[ "$rc" -ne 124 ] || fail "the job hung (killed by timeout after 75 s)"
# From the start: 4 PEs' init and half a second of kernel before the kill (seconds on a loaded
# 2-core machine), then the end; the survivors give up by themselves only after 50 s.
[ "$took" -le 40 ] || fail "the job took ${took} s to end (want <= 40)"
echo "$out" | grep -Eq "PE 1 disconnected|rank 1 .*exited on signal 9" || fail "no line naming the lost PE"
echo "$out" | grep -q "survived" && fail "a PE kept running"
echo "PASS: ended in ${took} s, status $rc"
