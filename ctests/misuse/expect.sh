#!/bin/sh
# Runs a job that must stop with a message, and checks how it ended:
#   expect.sh <timeout-s> <pattern> [<pattern>...] -- <command...>
# The command (e.g. rocshmem-run -n 4 prog args) must end by itself within the timeout, with a
# non-zero status, and its output (stdout and stderr) must match every pattern (grep -E); no
# heap name (rocshmem-*) may be left in /dev/shm. Where possible (root, unshare) the job runs in
# a private /dev/shm of its own (../common/private_shm.sh), so that the last check is exact
# whatever else runs on the machine; otherwise it is skipped.
set -u
. "$(dirname "$0")/../common/private_shm.sh"
limit=$1
shift
n=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  n=$((n + 1))
  eval "pat_$n=\$1"
  shift
done
[ $# -gt 0 ] && shift
out=$(mktemp /tmp/rocshmem-expect.XXXXXX)
trap 'rm -f "$out"' EXIT
timeout "$limit" "$@" >"$out" 2>&1
rc=$?
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
if [ "$rc" -eq 124 ]; then
  fail "the job did not end within $limit s (hang)"
elif [ "$rc" -eq 0 ]; then
  fail "the job ended with status 0; it must stop with an error"
fi
i=1
while [ "$i" -le "$n" ]; do
  eval "pat=\$pat_$i"
  grep -Eq -- "$pat" "$out" || fail "no line of the output matches: $pat"
  i=$((i + 1))
done
if [ -n "${PRIVATE_SHM:-}" ]; then
  left=$(ls /dev/shm | grep '^rocshmem-' || true)
  [ -z "$left" ] || fail "left in /dev/shm: $left"
fi
echo "--- output (status $rc) ---"
cat "$out"
[ "$fails" -eq 0 ] && echo "PASS" || echo "$fails check(s) failed"
[ "$fails" -eq 0 ]
