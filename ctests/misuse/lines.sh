#!/bin/sh
# Runs a job that must succeed, and counts the lines of its output (stdout and stderr) that
# match each pattern (grep -E):
#   lines.sh <timeout-s> <pattern> <min> <max> [<pattern> <min> <max>...] -- <command...>
# The command must exit with status 0 within the timeout, and each pattern must match between
# <min> and <max> lines.
set -u
limit=$1
shift
n=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  n=$((n + 1))
  eval "pat_$n=\$1 min_$n=\$2 max_$n=\$3"
  shift 3
done
[ $# -gt 0 ] && shift
out=$(mktemp /tmp/rocshmem-lines.XXXXXX)
trap 'rm -f "$out"' EXIT
timeout "$limit" "$@" >"$out" 2>&1
rc=$?
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
[ "$rc" -eq 124 ] && fail "the job did not end within $limit s (hang)"
[ "$rc" -eq 0 ] || fail "exit status $rc"
i=1
while [ "$i" -le "$n" ]; do
  eval "pat=\$pat_$i min=\$min_$i max=\$max_$i"
  got=$(grep -Ec -- "$pat" "$out")
  [ "$got" -ge "$min" ] && [ "$got" -le "$max" ] || fail "$got line(s) match '$pat', want $min to $max"
  i=$((i + 1))
done
echo "--- output (status $rc, $(wc -l <"$out") lines; the first 60) ---"
head -60 "$out"
[ "$fails" -eq 0 ] && echo "PASS" || echo "$fails check(s) failed"
[ "$fails" -eq 0 ]
