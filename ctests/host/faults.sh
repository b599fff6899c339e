#!/bin/sh
# Launcher side of the fault tests: rocshmem-run must end every PE when one dies, within the
# bootstrap timeout, return the first non-zero status (128+signal for a killed PE), and leave
# nothing of the job in /dev/shm.
#   faults.sh <rocshmem-run> <faults program>
# Each case runs `rocshmem-run -n N faults pe ACTION K STATUS` (see faults.c) under `timeout`.
set -u
# Where possible, in a private /dev/shm (PRIVATE_SHM=1); otherwise only this job's names (by its
# tag) are checked.
. "$(dirname "$0")/../common/private_shm.sh"
RUN=$1
PROG=$2
: "${ROCSHMEM_BOOTSTRAP_TIMEOUT:=2}"
export ROCSHMEM_BOOTSTRAP_TIMEOUT
LIMIT=$((${ROCSHMEM_BOOTSTRAP_TIMEOUT%.*} + 3)) # seconds a failure may take to end the job
TMP=$(mktemp -d /tmp/rocshmem-faults-sh.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0

fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}

now_ms() { date +%s%3N; }

# The job tag PE 0 printed; then no /dev/shm entry of that job may remain.
check_shm() { # case-name
  if [ -n "${PRIVATE_SHM:-}" ]; then
    left=$(ls /dev/shm 2>/dev/null | grep "^rocshmem-" || true)
  else
    tag=$(sed -n 's/^faults: job tag \([0-9a-f]*\)$/\1/p' "$TMP/out" | head -n1)
    [ -n "$tag" ] || return 0
    left=$(ls /dev/shm 2>/dev/null | grep "^rocshmem-$tag-" || true)
  fi
  [ -z "$left" ] || fail "$1: left in /dev/shm: $left"
}

# expect <name> <want-status> <stderr-pattern> <N> <action> <K> [STATUS]
expect() {
  name=$1 want=$2 pattern=$3
  shift 3
  n=$1
  shift
  before=$fails
  t0=$(now_ms)
  timeout $((LIMIT + 20)) "$RUN" -n "$n" "$PROG" pe "$@" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  dt=$(($(now_ms) - t0))
  if [ "$rc" -eq 124 ]; then
    fail "$name: rocshmem-run hung (killed by timeout)"
  elif [ "$rc" -ne "$want" ]; then
    fail "$name: rocshmem-run returned $rc, want $want"
  fi
  [ "$dt" -le $((LIMIT * 1000)) ] || fail "$name: took ${dt} ms (limit ${LIMIT} s)"
  grep -q -- "$pattern" "$TMP/err" || fail "$name: stderr does not contain '$pattern'"
  check_shm "$name"
  if [ "$fails" -gt "$before" ]; then
    echo "--- $name stderr:" >&2
    cat "$TMP/err" >&2
  fi
  echo "faults.sh: $name: status $rc in ${dt} ms"
}

expect barrier-kill 137 "PE 2" 4 barrier-kill 2
expect barrier-exit 6 "PE 1" 3 barrier-exit 1 6
expect exit-before-init 5 "PE 1" 3 exit-before-init 1 5
expect kill-before-init 137 "PE 2" 4 kill-before-init 2
expect exit0-before-init 1 "PE(s) \[3\]" 4 exit-before-init 3 0
expect global-exit 9 "status 9" 3 global-exit 1 9
expect global-exit-pe0 3 "status 3" 2 global-exit 0 3

# kill -9 from outside while every PE is in barriers.
t0=$(now_ms)
timeout $((LIMIT + 40)) "$RUN" -n 4 "$PROG" pe wait 99 >"$TMP/out" 2>"$TMP/err" &
launcher=$!
i=0
while ! grep -q "job tag" "$TMP/out" 2>/dev/null && [ $i -lt 500 ]; do
  sleep 0.02
  i=$((i + 1))
done
sleep 0.1
# The launcher's child is rocshmem-run itself when timeout execs... find the PEs: children of
# the rocshmem-run process (timeout's child).
runpid=$(pgrep -P "$launcher" | head -n1)
[ -n "$runpid" ] || runpid=$launcher
victim=$(pgrep -P "$runpid" | sed -n 2p)
if [ -z "$victim" ]; then
  fail "kill-9: could not find a PE process"
  kill -9 "$runpid" 2>/dev/null
else
  tk=$(now_ms)
  kill -9 "$victim"
fi
wait "$launcher"
rc=$?
dt=$(($(now_ms) - ${tk:-$t0}))
[ "$rc" -eq 137 ] || fail "kill-9: rocshmem-run returned $rc, want 137"
[ "$dt" -le $((LIMIT * 1000)) ] || fail "kill-9: the job took ${dt} ms to end after the kill"
grep -q "disconnected\|killed by signal 9" "$TMP/err" || fail "kill-9: no message about the killed PE"
check_shm kill-9
echo "faults.sh: kill-9: status $rc, ${dt} ms after the kill"

if [ "$fails" -gt 0 ]; then
  echo "faults.sh: $fails failure(s)" >&2
  exit 1
fi
if [ -n "${PRIVATE_SHM:-}" ]; then
  echo "faults.sh: all launcher fault cases passed (private /dev/shm: checked for any rocshmem-* name)"
else
  echo "faults.sh: all launcher fault cases passed (shared /dev/shm: checked per job tag)"
fi
