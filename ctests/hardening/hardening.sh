#!/bin/sh
# Runs one hardening case (docs/reliability.md) the way a user meets it, and checks what the
# user sees: exit status, the one-line messages, time taken, and that nothing is left in
# /dev/shm.
#   hardening.sh <case> <rocshmem-run> <hardening program> [rocshmem_info]
# Cases: shm64m, shm4k, shm-posix (private mount namespace with a small /dev/shm), flood, hang,
# hang-hub, slow, hang-report, hang-int, initfail, initfail-hang, env, preinit, late, heap-space;
# with mpirun (hardening.sh <case> <mpirun> <program>): mpi-pe, mpi-int; mpich-ro. Exit 77
# (skipped, with the reason) only when a private mount namespace cannot be made (not root, or no
# unshare), or setsid(1) is missing (hang-int, mpi-int).
set -u
CASE=$1 RUN=$2 PROG=$3 INFO=${4:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "hardening.sh $CASE: FAIL: $*"; echo "--- output:"; cat "$TMP/out" 2>/dev/null; exit 1; }
now_ms() { date +%s%3N; }

# Runs "$@" in a private mount namespace whose /dev/shm is a new tmpfs of size $SHM_SIZE, then
# lists what is left in that /dev/shm into $TMP/left.
in_small_shm() {
  if ! command -v unshare >/dev/null 2>&1; then
    echo "hardening.sh $CASE: SKIPPED: unshare(1) is not installed (util-linux), so no private /dev/shm"; exit 77
  fi
  if ! unshare -m --propagation private true 2>/dev/null; then
    echo "hardening.sh $CASE: SKIPPED: cannot make a private mount namespace here (needs root or user namespaces)"; exit 77
  fi
  unshare -m --propagation private sh -c '
    mount -t tmpfs -o size="$1" tmpfs /dev/shm || exit 90
    shift; left="$1"; shift
    "$@"; rc=$?
    ls -A /dev/shm > "$left"
    exit $rc' sh "$SHM_SIZE" "$TMP/left" "$@"
}

# Waits (up to 30 s) until the output has $1 lines "deadlock: waiting".
await_waiting() {
  i=0
  while [ $i -lt 300 ]; do
    n=$(grep -c "deadlock: waiting" "$TMP/out" 2>/dev/null)
    [ "${n:-0}" -ge "$1" ] && break
    sleep 0.1; i=$((i + 1))
  done
  [ $i -lt 300 ] || fail "the PEs did not start waiting within 30 s"
  sleep 0.5 # into their sleeping phase, where waits are listed
}

# Runs "$@" in a process group of its own in the background (as a shell runs a foreground
# job), output in $TMP/out; its pid (= the group) in $pid.
start_group() {
  command -v setsid >/dev/null 2>&1 || { echo "hardening.sh $CASE: SKIPPED: setsid(1) is not installed"; exit 77; }
  # The file exists before the job starts: the background job's redirection may come after the
  # caller's first look at it (a missing file read as no count ended await_waiting at once, and
  # the case then interrupted the PEs before they waited: a flaky failure, 2026-12-07).
  : >"$TMP/out"
  setsid "$@" >"$TMP/out" 2>&1 &
  pid=$!
}

case "$CASE" in
  shm64m|shm4k)
    # The default backing (memfd) with the default 1 GiB heap: /dev/shm's size does not matter;
    # each PE touches 96 MiB of its heap, more than a 64 MiB /dev/shm could hold.
    [ "$CASE" = shm64m ] && SHM_SIZE=64m || SHM_SIZE=4k
    in_small_shm "$RUN" -n 2 "$PROG" ring $((96 << 20)) >"$TMP/out" 2>&1; rc=$?
    [ $rc = 90 ] && fail "could not mount a tmpfs on /dev/shm in the private namespace"
    [ $rc = 0 ] || fail "exit status $rc (a PE killed by SIGBUS exits with 135)"
    grep -q "hardening ring: passed" "$TMP/out" || fail "no 'passed' line"
    [ -s "$TMP/left" ] && fail "left in /dev/shm: $(cat "$TMP/left")"
    echo "hardening.sh $CASE: 2 PEs touched 96 MiB of heap each with a $SHM_SIZE /dev/shm; nothing left there"
    ;;
  shm-posix)
    # The /dev/shm backing with a heap /dev/shm cannot hold: every PE refuses at init with one
    # line naming /dev/shm, its free size, the heap and the remedies; nothing is left behind.
    SHM_SIZE=64m
    ROCSHMEM_SHM_BACKING=posix in_small_shm "$RUN" -n 3 "$PROG" ring >"$TMP/out" 2>&1; rc=$?
    [ $rc = 0 ] && fail "the job ran with 3 x 1 GiB heaps in a 64 MiB /dev/shm"
    grep -q "Bus error\|signal 7" "$TMP/out" && fail "a PE died of SIGBUS"
    for pe in 0 1 2; do
      line=$(grep "^rocshmem: PE $pe: error: rocshmem_init:" "$TMP/out")
      [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || fail "PE $pe did not print exactly one error line"
      for want in "/dev/shm has 64.0 MiB free" "the 3 PE(s) of this node need 30[0-9][0-9].[0-9] MiB" "ROCSHMEM_HEAP_SIZE=1073741824" "SIGBUS" "--shm-size" "lower ROCSHMEM_HEAP_SIZE" "ROCSHMEM_SHM_BACKING"; do
        printf '%s\n' "$line" | grep -q -- "$want" || fail "PE $pe's line lacks '$want'"
      done
    done
    [ -s "$TMP/left" ] && fail "left in /dev/shm: $(cat "$TMP/left")"
    # and the same backing where the heaps fit runs (and leaves nothing either)
    ROCSHMEM_SHM_BACKING=posix ROCSHMEM_HEAP_SIZE=16M in_small_shm "$RUN" -n 3 "$PROG" ring $((8 << 20)) >"$TMP/out" 2>&1 \
      || fail "posix backing with 3 x 16 MiB heaps in 64 MiB failed"
    grep -q "hardening ring: passed" "$TMP/out" || fail "no 'passed' line with heaps that fit"
    [ -s "$TMP/left" ] && fail "left in /dev/shm: $(cat "$TMP/left")"
    echo "hardening.sh $CASE: refused on every PE with the remedy; runs where the heaps fit; nothing left in /dev/shm"
    ;;
  flood)
    ROCSHMEM_BOOTSTRAP_TIMEOUT=3 "$RUN" -n 2 "$PROG" flood >"$TMP/out" 2>&1 || fail "exit status $?"
    grep -q "hardening flood: passed" "$TMP/out" || fail "no 'passed' line"
    grep "flood:" "$TMP/out" | head -1
    ;;
  hang)
    # PE 1 stops itself; with ROCSHMEM_HANG_TIMEOUT=2 the job ends within seconds, every running
    # PE saying where each PE waits.
    t0=$(now_ms)
    ROCSHMEM_BOOTSTRAP_TIMEOUT=1 ROCSHMEM_HANG_TIMEOUT=2 timeout 60 "$RUN" -n 3 "$PROG" hang >"$TMP/out" 2>&1; rc=$?
    t=$(( $(now_ms) - t0 ))
    [ $rc = 124 ] && fail "still running after 60 s: the hang was not detected"
    [ $rc = 0 ] && fail "exit status 0 for a hung job"
    for pe in 0 2; do
      line=$(grep "^rocshmem: PE $pe: error:.*ROCSHMEM_HANG_TIMEOUT" "$TMP/out")
      [ -n "$line" ] || fail "PE $pe printed no hang report"
      for want in "PE 0 waits in rocshmem_int_wait_until for" "PE 1 did not answer (stopped" "PE 2 waits in rocshmem_barrier_all for"; do
        printf '%s\n' "$line" | grep -q "$want" || fail "PE $pe's report lacks '$want'"
      done
    done
    [ $t -lt 20000 ] || fail "took $t ms"
    echo "hardening.sh hang: a stopped PE ended the job in $t ms with status $rc; report: $(grep -m1 "^rocshmem: PE 0: error" "$TMP/out")"
    ;;
  hang-hub)
    # The rendezvous cannot answer (rocshmem-run is stopped, by PE 0): PE 0 stops itself a few
    # seconds after its timeout with its own report. Then rocshmem-run is continued and ends
    # the job (PE 1, stopped, is killed).
    t0=$(now_ms)
    ROCSHMEM_BOOTSTRAP_TIMEOUT=1 ROCSHMEM_HANG_TIMEOUT=2 "$RUN" -n 2 "$PROG" hang-hub >"$TMP/out" 2>&1 &
    pid=$!
    i=0
    while [ $i -lt 300 ] && ! grep -q "^rocshmem: PE 0: error:.*ROCSHMEM_HANG_TIMEOUT" "$TMP/out"; do sleep 0.1; i=$((i + 1)); done
    t=$(( $(now_ms) - t0 ))
    kill -CONT $pid 2>/dev/null
    ( sleep 30; kill -KILL $pid 2>/dev/null ) >/dev/null 2>&1 &
    guard=$!
    wait $pid; rc=$?
    kill $guard 2>/dev/null
    line=$(grep "^rocshmem: PE 0: error:.*ROCSHMEM_HANG_TIMEOUT" "$TMP/out")
    [ -n "$line" ] || fail "PE 0 did not stop itself within 30 s"
    printf '%s\n' "$line" | grep -q "this PE waits in rocshmem_barrier_all for .* (ROCSHMEM_HANG_TIMEOUT=2) and the rendezvous did not end the job" \
      || fail "PE 0's report: $line"
    [ $rc != 0 ] || fail "exit status 0"
    [ $t -lt 20000 ] || fail "PE 0 took $t ms to stop itself"
    echo "hardening.sh hang-hub: PE 0 stopped itself after $t ms: $line"
    ;;
  hang-report)
    # By default a wait longer than ROCSHMEM_HANG_REPORT_TIMEOUT (60 s; 1 s here) prints, once,
    # where every PE waits, and the job goes on: PE 0 waits for a flag and PE 1 in a barrier
    # while PE 2 computes for 3 s, then sets the flag; the job completes.
    "$INFO" | grep -q "ROCSHMEM_HANG_REPORT_TIMEOUT *= 60 .*default: 60 " || fail "rocshmem_info does not list ROCSHMEM_HANG_REPORT_TIMEOUT = 60"
    ROCSHMEM_HANG_REPORT_TIMEOUT=1 timeout 60 "$RUN" -n 3 "$PROG" deadlock 3000 >"$TMP/out" 2>&1 || fail "exit status $?"
    [ "$(grep -c "hardening deadlock: passed" "$TMP/out")" = 3 ] || fail "not every PE passed"
    lines=$(grep "^rocshmem: " "$TMP/out")
    [ "$(printf '%s\n' "$lines" | grep -c .)" = 1 ] || fail "want exactly one report line"
    printf '%s\n' "$lines" | grep -q "^rocshmem: PE [01]: warning: rocshmem: a wait has lasted longer than ROCSHMEM_HANG_REPORT_TIMEOUT=1 s" \
      || fail "the line is not the report"
    for want in "PE 0 waits in rocshmem_int_wait_until for" "PE 1 waits in rocshmem_barrier_all for" "PE 2 is not waiting in rocSHMEM" "the job keeps waiting"; do
      printf '%s\n' "$lines" | grep -q "$want" || fail "the report lacks '$want'"
    done
    echo "hardening.sh hang-report: one report, the job completed: $lines"
    ;;
  hang-int)
    # Ctrl-C (SIGINT to the job's process group, as a terminal sends it; then to rocshmem-run
    # alone, which forwards it) during a deadlock: every PE prints where each PE waits, and the
    # job ends with 130 at once.
    for to in group launcher; do
      start_group "$RUN" -n 3 "$PROG" deadlock
      await_waiting 3
      t0=$(now_ms)
      if [ $to = group ]; then kill -INT -$pid; else kill -INT $pid; fi
      ( sleep 30; kill -KILL -$pid 2>/dev/null ) >/dev/null 2>&1 &
      guard=$!
      wait $pid; rc=$?
      t=$(( $(now_ms) - t0 ))
      kill $guard 2>/dev/null
      [ $rc = 130 ] || fail "SIGINT to the $to: exit status $rc, want 130"
      for pe in 0 1 2; do
        line=$(grep "^rocshmem: PE $pe: error: rocshmem: interrupted (SIGINT): " "$TMP/out")
        [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || fail "SIGINT to the $to: PE $pe printed no report"
        for want in "PE 0 waits in rocshmem_int_wait_until for" "PE 1 waits in rocshmem_barrier_all for" "PE 2 waits in rocshmem_barrier_all for"; do
          printf '%s\n' "$line" | grep -q "$want" || fail "SIGINT to the $to: PE $pe's report lacks '$want'"
        done
      done
      [ $t -lt 8000 ] || fail "SIGINT to the $to: the job took $t ms to end"
    done
    echo "hardening.sh hang-int: Ctrl-C printed where each PE waits; $(grep -m1 "^rocshmem: PE 0" "$TMP/out")"
    ;;
  mpi-int)
    # hardening.sh mpi-int <mpirun> <program>: Ctrl-C reaches only mpirun (Open MPI gives each
    # rank a process group of its own), which terminates the ranks: they print where each waits.
    start_group "$RUN" --oversubscribe -n 3 "$PROG" deadlock
    await_waiting 3
    kill -INT -$pid
    ( sleep 30; kill -KILL -$pid 2>/dev/null ) >/dev/null 2>&1 &
    guard=$!
    wait $pid
    kill $guard 2>/dev/null
    for pe in 0 1 2; do
      line=$(grep "^rocshmem: PE $pe: error: rocshmem: terminated (SIGTERM): " "$TMP/out")
      [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || fail "PE $pe printed no report"
      for want in "PE 0 waits in rocshmem_int_wait_until for" "PE 1 waits in rocshmem_barrier_all for" "PE 2 waits in rocshmem_barrier_all for"; do
        printf '%s\n' "$line" | grep -q "$want" || fail "PE $pe's report lacks '$want'"
      done
    done
    echo "hardening.sh mpi-int: Ctrl-C on mpirun: $(grep -m1 "^rocshmem: PE 0" "$TMP/out")"
    ;;
  mpi-pe)
    # hardening.sh mpi-pe <mpirun> <program>: init errors under mpirun carry the rank, before
    # MPI is even loaded; a value that is not a number says "invalid argument" once.
    for setting in ROCSHMEM_BOOTSTRAP_TIMEOUT=nan ROCSHMEM_MPI_LIBRARY=/nonexistent/libmpi.so; do
      var=${setting%%=*}
      env "$setting" timeout 60 "$RUN" --oversubscribe --mca orte_abort_on_non_zero_status 0 -x "$var" -n 2 "$PROG" slow 0 >"$TMP/out" 2>&1
      grep -q "PE ?" "$TMP/out" && fail "$setting: a line without the PE number"
      for pe in 0 1; do
        line=$(grep "^rocshmem: PE $pe: error: rocshmem_init: " "$TMP/out")
        [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || fail "$setting: PE $pe did not print exactly one line"
        case $var in
          ROCSHMEM_BOOTSTRAP_TIMEOUT) want="invalid argument: ROCSHMEM_BOOTSTRAP_TIMEOUT='nan' is not a non-negative number of seconds; valid values are" ;;
          *) want="MPI: no MPI library could be loaded (/nonexistent/libmpi.so" ;;
        esac
        printf '%s\n' "$line" | grep -qF "$want" || fail "$setting: PE $pe's line lacks '$want'"
        printf '%s\n' "$line" | grep -q "invalid argument: invalid argument" && fail "$setting: doubled prefix"
      done
    done
    echo "hardening.sh mpi-pe: init errors under mpirun name the rank"
    ;;
  preinit)
    # A call before rocshmem_init under rocshmem-run: the line carries the PE number.
    timeout 60 "$RUN" -n 3 "$PROG" preinit >"$TMP/out" 2>&1 || fail "exit status $?"
    grep -q "PE ?" "$TMP/out" && fail "a line without the PE number"
    for pe in 0 1 2; do
      [ "$(grep -c "^rocshmem: PE $pe: error: rocshmem_my_pe: called before rocshmem_init" "$TMP/out")" = 1 ] \
        || fail "PE $pe: no line naming it"
    done
    echo "hardening.sh preinit: every PE's line before init names it"
    ;;
  late)
    # PE 0 exits before init while PE 1 computes before its own (ROCSHMEM_BOOTSTRAP_TIMEOUT=30):
    # rocshmem-run stops PE 1 at once and says so.
    t0=$(now_ms)
    ROCSHMEM_BOOTSTRAP_TIMEOUT=30 timeout 60 "$RUN" -n 3 "$PROG" late >"$TMP/out" 2>&1; rc=$?
    t=$(( $(now_ms) - t0 ))
    [ $rc = 3 ] || fail "exit status $rc, want PE 0's 3"
    grep -q "^rocshmem-run: PE 0 exited with status 3; stopping the other PEs" "$TMP/out" || fail "no line for PE 0"
    grep -q "^rocshmem-run: stopped PE 1 (SIGTERM): the job was stopped before they joined it" "$TMP/out" \
      || fail "rocshmem-run did not say it stopped PE 1"
    [ $t -lt 10000 ] || fail "took $t ms (PE 1 was left running)"
    echo "hardening.sh late: the job ended in $t ms: $(grep "stopped PE" "$TMP/out")"
    ;;
  heap-space)
    # A heap too large for the address space (2 PEs x 64T: each maps both), or for ulimit -v:
    # every PE refuses with one line naming ROCSHMEM_HEAP_SIZE and the largest value that fits,
    # and that value runs.
    ROCSHMEM_HEAP_SIZE=64T timeout 60 "$RUN" -n 2 "$PROG" ring 4194304 >"$TMP/out" 2>&1 && fail "64T heaps accepted"
    grep -qi "cannot allocate\|ENOMEM" "$TMP/out" && fail "64T: an ENOMEM"
    for pe in 0 1; do
      line=$(grep "^rocshmem: PE $pe: error: rocshmem_init: " "$TMP/out")
      [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || fail "64T: PE $pe did not print exactly one line"
      printf '%s\n' "$line" | grep -q "ROCSHMEM_HEAP_SIZE=70368744177664 (64.0 TiB) does not fit in this PE's address space: it maps 2 heaps.*the largest value that fits is ROCSHMEM_HEAP_SIZE=[0-9]*G" \
        || fail "64T: PE $pe's line: $line"
    done
    ( ulimit -v $((4 << 20)) && ROCSHMEM_HEAP_SIZE=3G timeout 60 "$RUN" -n 2 "$PROG" ring 4194304 ) >"$TMP/out" 2>&1 && fail "3G heaps accepted under ulimit -v 4G"
    fits=$(sed -n 's/.*the largest value that fits is ROCSHMEM_HEAP_SIZE=\([0-9]*[GM]\)$/\1/p' "$TMP/out" | sort -n | head -1)
    [ -n "$fits" ] || fail "ulimit -v 4G: no suggested value"
    ( ulimit -v $((4 << 20)) && ROCSHMEM_HEAP_SIZE=$fits timeout 60 "$RUN" -n 2 "$PROG" ring 4194304 ) >"$TMP/out" 2>&1 \
      || fail "the suggested ROCSHMEM_HEAP_SIZE=$fits does not run under ulimit -v 4G"
    echo "hardening.sh heap-space: 64T refused by name; under ulimit -v 4G the suggested $fits runs"
    ;;
  initfail-hang)
    # A bad hang variable on the last PE only: every PE names that PE and the variable (before,
    # the PE failed alone and the others reported a rendezvous timeout).
    for setting in ROCSHMEM_HANG_TIMEOUT=bogus ROCSHMEM_HANG_REPORT_TIMEOUT=-1; do
      timeout 60 "$RUN" -n 3 "$PROG" initfail "$setting" >"$TMP/out" 2>&1; rc=$?
      [ $rc = 1 ] || fail "$setting: exit status $rc, want 1"
      for pe in 0 1 2; do
        line=$(grep "^rocshmem: PE $pe: error: rocshmem_init:" "$TMP/out")
        [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || fail "$setting: PE $pe did not print exactly one error line"
        printf '%s\n' "$line" | grep -q "${setting%%=*}='${setting#*=}'" || fail "$setting: PE $pe does not name the variable"
        [ $pe = 2 ] || printf '%s\n' "$line" | grep -q "PE 2 failed in rocshmem_init" || fail "$setting: PE $pe does not name PE 2"
      done
      grep -qi "timed out\|rendezvous" "$TMP/out" && fail "$setting: a misleading rendezvous message"
    done
    echo "hardening.sh initfail-hang: every PE named PE 2 and its bad hang variable"
    ;;
  slow)
    # A wait shorter than ROCSHMEM_HANG_TIMEOUT is left alone.
    ROCSHMEM_HANG_TIMEOUT=3 "$RUN" -n 3 "$PROG" slow 1500 >"$TMP/out" 2>&1 || fail "exit status $?"
    grep -q "hardening slow: passed" "$TMP/out" || fail "no 'passed' line"
    grep -q "HANG_TIMEOUT" "$TMP/out" && fail "a hang was reported for a 1.5 s wait with a 3 s timeout"
    echo "hardening.sh slow: a 1.5 s wait under ROCSHMEM_HANG_TIMEOUT=3 completed"
    ;;
  initfail)
    # The last PE's init fails: every PE prints one line naming that PE and its reason.
    for n in 2 4; do
      ROCSHMEM_SHM_BACKING=posix timeout 60 "$RUN" -n $n "$PROG" initfail >"$TMP/out" 2>&1; rc=$?
      [ $rc = 1 ] || fail "$n PEs: exit status $rc, want 1"
      last=$((n - 1))
      for pe in $(seq 0 $last); do
        line=$(grep "^rocshmem: PE $pe: error: rocshmem_init:" "$TMP/out")
        [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || fail "$n PEs: PE $pe did not print exactly one error line"
        printf '%s\n' "$line" | grep -q "ROCSHMEM_MAX_NUM_CONTEXTS='-1' is out of range" || fail "$n PEs: PE $pe does not give the reason"
        [ $pe = $last ] || printf '%s\n' "$line" | grep -q "PE $last failed in rocshmem_init" || fail "$n PEs: PE $pe does not name PE $last"
      done
      grep -q "shm_unlink\|No such file\|disconnected" "$TMP/out" && fail "$n PEs: a misleading message"
    done
    echo "hardening.sh initfail: every PE of 2 and 4 named PE n-1 and its reason"
    ;;
  env)
    # Every numeric variable of the table (rocshmem_info lists them with their valid values):
    # bad values are refused by rocshmem-run and by rocshmem_init with a line naming the variable
    # and its valid values, never a panic or a signal.
    vars=$("$INFO" --env:all | sed -n 's/^ *\(ROCSHMEM_[A-Z_]*\) .* Valid: .*/\1/p')
    [ "$(printf '%s\n' "$vars" | grep -c .)" -ge 10 ] || fail "rocshmem_info lists too few numeric variables: $vars"
    checked=0
    for v in $vars; do
      for bad in 1e19 1e300 inf nan -7 99999999999999999999 bogus; do
        # rocshmem-run reads the whole table for itself (and sets ROCSHMEM_RUN_* for its PEs).
        env "$v=$bad" "$RUN" -n 1 "$PROG" slow 0 >"$TMP/out" 2>&1; rc=$?
        grep -qi "panick\|RUST_BACKTRACE" "$TMP/out" && fail "$v=$bad: rocshmem-run panicked"
        grep -q "invalid argument: invalid argument" "$TMP/out" && fail "$v=$bad: a doubled 'invalid argument'"
        [ $rc -ge 128 ] && fail "$v=$bad: rocshmem-run died of a signal ($rc)"
        case "$v" in ROCSHMEM_RUN_*) ;; *)
          [ $rc != 0 ] || fail "$v=$bad: rocshmem-run accepted it"
          grep -q "$v='$bad'.*valid values are" "$TMP/out" || fail "$v=$bad: rocshmem-run's message does not name it with its valid values" ;;
        esac
        # rocshmem_init (a process started alone, as a single PE, or as rocshmem-run's PE)
        env "$v=$bad" "$PROG" slow 0 >"$TMP/out" 2>&1; rc=$?
        grep -qi "panick" "$TMP/out" && fail "$v=$bad: rocshmem_init panicked"
        grep -q "invalid argument: invalid argument" "$TMP/out" && fail "$v=$bad: rocshmem_init doubled 'invalid argument'"
        [ $rc -ge 128 ] && fail "$v=$bad: the program died of a signal ($rc)"
        [ $rc = 1 ] || fail "$v=$bad: rocshmem_init accepted it (exit $rc)"
        grep -q "^rocshmem: PE [0-9?]*: error: rocshmem_init: .*$v='$bad'.*valid values are" "$TMP/out" \
          || fail "$v=$bad: rocshmem_init's message does not name it with its valid values"
        checked=$((checked + 1))
      done
    done
    # the heap sizes that make every malloc fail later
    for bad in 0 1 4095; do
      env ROCSHMEM_HEAP_SIZE=$bad "$PROG" slow 0 >"$TMP/out" 2>&1 && fail "ROCSHMEM_HEAP_SIZE=$bad accepted"
      grep -q "ROCSHMEM_HEAP_SIZE='$bad' is out of range: valid values are 4K to" "$TMP/out" || fail "ROCSHMEM_HEAP_SIZE=$bad: message"
    done
    echo "hardening.sh env: $checked (variable, bad value) pairs refused by rocshmem-run and rocshmem_init"
    ;;
  mpich-ro)
    # hardening.sh mpich-ro <mpiexec.mpich> <program built by mpicc.mpich>: the RO backend needs
    # Open MPI; under MPICH every PE refuses it at init with one line, and the job ends.
    # -disable-auto-cleanup: hydra otherwise kills PE 1 as soon as PE 0 exits with its error,
    # sometimes before PE 1 printed its own line (seen once under load, CI on 2 cores).
    ROCSHMEM_BACKEND=ro timeout 60 "$RUN" -disable-auto-cleanup -n 2 "$PROG" init >"$TMP/out" 2>&1; rc=$?
    [ $rc = 0 ] && fail "the RO backend ran under MPICH"
    [ $rc = 124 ] && fail "hung"
    for pe in 0 1; do
      line=$(grep "^rocshmem: PE $pe: error: rocshmem_init:" "$TMP/out")
      [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] || fail "PE $pe did not print exactly one error line"
      printf '%s\n' "$line" | grep -q "ROCSHMEM_BACKEND=ro needs Open MPI, and this MPI is MPICH" || fail "PE $pe: no reason"
    done
    echo "hardening.sh mpich-ro: both PEs refused ROCSHMEM_BACKEND=ro under MPICH with one line"
    ;;
  *) echo "unknown case $CASE"; exit 2 ;;
esac
