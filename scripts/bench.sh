#!/usr/bin/env bash
# Builds rocSHMEM (release) with its host benchmarks, runs them, and writes the tables into
# docs/benchmarks.md (with the command, the date and the machine). Where Open MPI's OpenSHMEM
# works (oshcc/oshrun), the same benchmark sources run against it side by side.
#
#   scripts/bench.sh                  # everything, ~1-2 minutes on 2 cores
#   scripts/bench.sh --quick          # shorter runs (smoke test; numbers are rougher)
#   scripts/bench.sh -B DIR -o FILE   # build directory / output file
#   scripts/bench.sh --no-oshmem      # rocSHMEM only
#
# Environment: BENCH_BUILD_DIR (default /tmp/build-bench), BENCH_SCALE (multiplies every
# measurement time), BENCH_INIT_RUNS (launches per PE count for the init table, default 9),
# BENCH_PES (PE counts for init and barrier, default "2 4 8"), OSHRUN_ARGS (extra oshrun
# arguments). Raw results stay in <build>/bench/results.txt.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BENCH_BUILD_DIR:-/tmp/build-bench}
OUT=$ROOT/docs/benchmarks.md
WITH_OSHMEM=1
QUICK=0
CMDLINE="scripts/bench.sh${*:+ $*}"

while [ $# -gt 0 ]; do
  case $1 in
    -B|--build) BUILD=$2; shift 2 ;;
    -o|--out) OUT=$2; shift 2 ;;
    --no-oshmem) WITH_OSHMEM=0; shift ;;
    --quick) QUICK=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac

INIT_RUNS=${BENCH_INIT_RUNS:-9}
PES=${BENCH_PES:-2 4 8}
if [ "$QUICK" = 1 ]; then
  export BENCH_SCALE=${BENCH_SCALE:-0.25}
  INIT_RUNS=${BENCH_INIT_RUNS:-3}
fi
export BENCH_SCALE=${BENCH_SCALE:-1}

T_START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log() { printf '[bench] %s\n' "$*" >&2; }

# ---------------------------------------------------------------- build
if ! command -v oshcc >/dev/null || ! command -v oshrun >/dev/null; then
  [ "$WITH_OSHMEM" = 1 ] && log "oshcc/oshrun not found: rocSHMEM only"
  OSH_NOTE="oshcc/oshrun not found on this machine (Debian: apt-get install libopenmpi-dev openmpi-bin)."
  WITH_OSHMEM=0
fi
OSH_CMAKE=OFF
[ "$WITH_OSHMEM" = 1 ] && OSH_CMAKE=ON
log "configuring $BUILD"
mkdir -p "$BUILD"
cmake -S "$ROOT" -B "$BUILD" -DROCSHMEM_CARGO_PROFILE=release -DROCSHMEM_BUILD_BENCH=ON \
  -DROCSHMEM_BENCH_OSHMEM=$OSH_CMAKE >"$BUILD/bench-configure.log" 2>&1 || { cat "$BUILD/bench-configure.log" >&2; exit 1; }
BENCHES="bench_init bench_barrier bench_bw bench_atomic bench_pingpong bench_coll"
TARGETS=$BENCHES
[ "$WITH_OSHMEM" = 1 ] && for b in $BENCHES; do TARGETS="$TARGETS oshmem_$b"; done
log "building (release)"
# shellcheck disable=SC2086
cmake --build "$BUILD" -j"$(nproc)" --target $TARGETS >"$BUILD/bench-build.log" 2>&1 || { tail -40 "$BUILD/bench-build.log" >&2; exit 1; }

T_BUILT=$(date +%s)
RUN=$BUILD/bin/rocshmem-run
BIN=$BUILD/bench
RES=$BIN/results.txt
ERRLOG=$BIN/errors.log
: >"$RES"
: >"$ERRLOG"

OSHRUN=(oshrun --oversubscribe --bind-to none --mca osc ^rdma)
[ "$(id -u)" = 0 ] && OSHRUN+=(--allow-run-as-root)
# shellcheck disable=SC2206
[ -n "${OSHRUN_ARGS:-}" ] && OSHRUN+=($OSHRUN_ARGS)

# The RO backend (docs/ro.md) under mpirun, every peer through MPI (no IPC mapping).
MPIRUN=(mpirun --oversubscribe --bind-to none -x ROCSHMEM_BACKEND=ro -x ROCSHMEM_DISABLE_MIXED_IPC=1)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
WITH_RO=0
command -v mpirun >/dev/null && WITH_RO=1

# run <lib> <npes> <bench> [args]: the benchmark's stdout; stderr goes to errors.log.
# lib: roc (rocshmem-run, IPC), ro (mpirun, ROCSHMEM_BACKEND=ro) or osh (oshrun).
run() {
  local lib=$1 n=$2 b=$3
  shift 3
  echo "== $lib np$n $b $*" >>"$ERRLOG"
  if [ "$lib" = roc ]; then
    timeout 300 "$RUN" -n "$n" "$BIN/$b" "$@" 2>>"$ERRLOG"
  elif [ "$lib" = ro ]; then
    timeout 300 "${MPIRUN[@]}" -np "$n" "$BIN/$b" "$@" 2>>"$ERRLOG"
  else
    timeout 300 "${OSHRUN[@]}" -np "$n" "$BIN/oshmem_$b" "$@" 2>>"$ERRLOG"
  fi
}

# collect <lib> <npes> <bench> [args]: appends "<lib> <table> <row> <metric> <value>".
collect() {
  local lib=$1 out rc=0
  out=$(run "$@") || rc=$?
  printf '%s\n' "$out" | awk -v lib="$lib" '$1 == "R" { print lib, $2, $3, $4, $5 }' >>"$RES"
  if [ $rc != 0 ]; then
    log "FAILED ($rc): $lib np$2 $3 (see $ERRLOG)"
    echo "$lib FAILED $3 np$2 $rc" >>"$RES"
  fi
}

# ---------------------------------------------------------------- oshmem works?
if [ "$WITH_OSHMEM" = 1 ]; then
  if out=$(run osh 2 bench_init 2>&1) && printf '%s\n' "$out" | grep -q '^I 2 '; then
    OSH_VERSION=$(oshmem_info --parsable 2>/dev/null | awk -F: '/^ompi:version:full:/ { print $4 }')
    OSH_NOTE="Open MPI ${OSH_VERSION:-?} OpenSHMEM (\`oshrun ${OSHRUN[*]:1} -np N\`)."
  else
    OSH_NOTE="oshrun failed here, oshmem columns are empty. Last lines it printed: \`$(tail -3 "$ERRLOG" | tr '\n`' ' ' | cut -c1-300)\`"
    log "$OSH_NOTE"
    WITH_OSHMEM=0
  fi
fi
LIBS=roc
[ "$WITH_OSHMEM" = 1 ] && LIBS="roc osh"

# ---------------------------------------------------------------- 1. init
# Per launch: max over PEs of the time inside init, and of init+finalize; plus the launcher's
# wall time for the whole job. The table shows the median over launches.
for n in $PES; do
  for lib in $LIBS; do
    log "init: $lib np$n x$INIT_RUNS"
    for ((r = 0; r < INIT_RUNS; r++)); do
      t0=$(date +%s%N)
      out=$(run $lib "$n" bench_init) || { echo "$lib FAILED bench_init np$n $?" >>"$RES"; continue; }
      t1=$(date +%s%N)
      printf '%s\n' "$out" | awk -v lib=$lib -v n="$n" -v wall=$(((t1 - t0) / 1000)) '
        $1 == "I" { k++; if ($4 > i) i = $4; if ($4 + $5 > f) f = $4 + $5 }
        END { if (k == n) { printf "%s init np%d init_ms %.3f\n%s init np%d initfin_ms %.3f\n%s init np%d wall_ms %.3f\n",
                                    lib, n, i / 1000, lib, n, f / 1000, lib, n, wall / 1000 }
              else printf "%s FAILED bench_init np%d pes_reported=%d\n", lib, n, k }' >>"$RES"
    done
  done
done

# ---------------------------------------------------------------- 2-5
for n in $PES; do
  for lib in $LIBS; do
    log "barrier_all: $lib np$n"
    collect $lib "$n" bench_barrier 2.0
  done
done
for lib in $LIBS; do
  log "putmem/getmem bandwidth: $lib"
  collect $lib 2 bench_bw 0.2
  log "atomics: $lib"
  collect $lib 2 bench_atomic 0.2
  log "ping-pong: $lib"
  collect $lib 2 bench_pingpong 0.5
  log "collectives: $lib"
  collect $lib 2 bench_coll 0.1
done
if [ "$WITH_RO" = 1 ]; then
  log "RO backend: putmem/getmem bandwidth, atomics, ping-pong"
  collect ro 2 bench_bw 0.2
  collect ro 2 bench_atomic 0.2
  collect ro 2 bench_pingpong 0.5
fi
T_END=$(date +%s)

# ---------------------------------------------------------------- the document
CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
MEM=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD 2>/dev/null || COMMIT="$COMMIT (with uncommitted changes)"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
FAILS=$(awk '$2 == "FAILED"' "$RES")

# The tables, from results.txt (median over repeated keys).
TABLES_AWK=$(cat <<'AWK'
function median(key,   n, i, j, t, a) {
  n = cnt[key]
  if (n == 0) return ""
  for (i = 1; i <= n; i++) a[i] = val[key, i]
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function v(lib, table, row, metric) { return median(lib SUBSEP table SUBSEP row SUBSEP metric) }
function f(x, d) { return x == "" ? "–" : sprintf("%." d "f", x) }
function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "–" : sprintf("%.2f×", a / b) }
function hsize(b) { b += 0; return b >= 1048576 ? (b / 1048576) " MiB" : b >= 1024 ? (b / 1024) " KiB" : b " B" }
function seen(table, row) { return (table SUBSEP row) in rows }
$2 != "FAILED" {
  k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
  val[k, ++cnt[k]] = $5
  if (!(($2 SUBSEP $3) in rows)) { rows[$2, $3] = 1; order[$2, ++nrows[$2]] = $3 }
}
END {
  O = osh == 1
  print "## 1. Init and finalize (ms)\n"
  print "Median over " runs " launches; per launch the slowest PE. *init* is the time inside init (a"
  print "rendezvous: it includes waiting for PEs that start later), *init+fin* adds finalize called right"
  print "after it, *job* is the launcher's wall time for the whole job (process start-up included).\n"
  if (O) {
    print "| PEs | init | init+fin | job | oshmem init | oshmem init+fin | oshmem job | init ratio |"
    print "|---|---|---|---|---|---|---|---|"
  } else { print "| PEs | init | init+fin | job |"; print "|---|---|---|---|" }
  for (i = 1; i <= nrows["init"]; i++) {
    r = order["init", i]; n = substr(r, 3)
    line = "| " n " | " f(v("roc", "init", r, "init_ms"), 1) " | " f(v("roc", "init", r, "initfin_ms"), 1) " | " f(v("roc", "init", r, "wall_ms"), 1)
    if (O) line = line " | " f(v("osh", "init", r, "init_ms"), 1) " | " f(v("osh", "init", r, "initfin_ms"), 1) " | " f(v("osh", "init", r, "wall_ms"), 1) " | " ratio(v("roc", "init", r, "init_ms"), v("osh", "init", r, "init_ms"))
    print line " |"
  }

  print "\n## 2. Host `barrier_all` latency (µs)\n"
  print "Each barrier timed on PE 0 after warm-up; the iteration count is sized to about two seconds (× BENCH_SCALE).\n"
  if (O) {
    print "| PEs | iterations | median | p99 | mean | oshmem median | oshmem p99 | oshmem mean | median ratio |"
    print "|---|---|---|---|---|---|---|---|---|"
  } else { print "| PEs | iterations | median | p99 | mean |"; print "|---|---|---|---|---|" }
  for (i = 1; i <= nrows["barrier"]; i++) {
    r = order["barrier", i]
    line = "| " substr(r, 3) " | " f(v("roc", "barrier", r, "iters"), 0) " | " f(v("roc", "barrier", r, "median_us"), 2) " | " f(v("roc", "barrier", r, "p99_us"), 2) " | " f(v("roc", "barrier", r, "mean_us"), 2)
    if (O) line = line " | " f(v("osh", "barrier", r, "median_us"), 2) " | " f(v("osh", "barrier", r, "p99_us"), 2) " | " f(v("osh", "barrier", r, "mean_us"), 2) " | " ratio(v("roc", "barrier", r, "median_us"), v("osh", "barrier", r, "median_us"))
    print line " |"
  }

  print "\n## 3. Host `putmem` / `getmem` bandwidth, PE 0 → PE 1 (GB/s, 10^9 B/s)\n"
  print "Blocking calls back to back (then `quiet`), PE 1 waiting in `barrier_all`; *memcpy* is the same"
  print "copy between two private buffers of PE 0. Median of 5 trials.\n"
  if (O) {
    print "| Size | memcpy | putmem | put/memcpy | getmem | get/memcpy | oshmem putmem | oshmem getmem | putmem ratio | getmem ratio |"
    print "|---|---|---|---|---|---|---|---|---|---|"
  } else { print "| Size | memcpy | putmem | put/memcpy | getmem | get/memcpy |"; print "|---|---|---|---|---|---|" }
  for (i = 1; i <= nrows["bw"]; i++) {
    r = order["bw", i]; m = v("roc", "bw", r, "memcpy"); p = v("roc", "bw", r, "putmem"); g = v("roc", "bw", r, "getmem")
    line = "| " hsize(r) " | " f(m, 1) " | " f(p, 1) " | " ratio(p, m) " | " f(g, 1) " | " ratio(g, m)
    if (O) line = line " | " f(v("osh", "bw", r, "putmem"), 1) " | " f(v("osh", "bw", r, "getmem"), 1) " | " ratio(p, v("osh", "bw", r, "putmem")) " | " ratio(g, v("osh", "bw", r, "getmem"))
    print line " |"
  }

  print "\n## 4. Host atomics, PE 0 → a word on PE 1 (ns per operation)\n"
  print "Back-to-back operations, median of 5 trials (`add` ends each trial with `quiet`), PE 1 waiting in"
  print "`barrier_all`. *CPU atomic* is the same operation as a plain CPU atomic through `rocshmem_ptr`:"
  print "the floor of this backend. oshmem has no int64/uint64 names in Open MPI 4.1: its columns use"
  print "`long`/`unsigned long` (the same 64-bit types here).\n"
  if (O) { print "| Operation | rocSHMEM | CPU atomic | oshmem | ratio |"; print "|---|---|---|---|---|" }
  else { print "| Operation | rocSHMEM | CPU atomic |"; print "|---|---|---|" }
  for (i = 1; i <= nrows["atomic"]; i++) {
    r = order["atomic", i]; av = v("roc", "atomic", r, "ns")
    line = "| " r " | " f(av, 1) " | " f(v("roc", "atomic", r, "raw_ns"), 1)
    if (O) line = line " | " f(v("osh", "atomic", r, "ns"), 1) " | " ratio(av, v("osh", "atomic", r, "ns"))
    print line " |"
  }

  print "\n## 5. Host ping-pong round trip, PE 0 ↔ PE 1 (µs)\n"
  print "*p 8 B*: `long_p` of a flag, the peer waits with `long_wait_until` and answers the same way."
  print "*putmem S*: `putmem` of S bytes, `fence`, then `long_p` of the flag (the receiver checks the"
  print "payload). *raw*: the same flag exchange with plain stores through `rocshmem_ptr` and a spin on"
  print "loads (no pause instruction), no library call: the floor. Every round trip timed on PE 0.\n"
  if (O) {
    print "| Variant | iterations | median | p99 | mean | oshmem median | oshmem p99 | oshmem mean | median ratio |"
    print "|---|---|---|---|---|---|---|---|---|"
  } else { print "| Variant | iterations | median | p99 | mean |"; print "|---|---|---|---|---|" }
  for (i = 1; i <= nrows["pingpong"]; i++) {
    r = order["pingpong", i]
    name = r == "raw_8" ? "raw 8 B (no library)" : r == "p_8" ? "p 8 B" : "putmem " hsize(substr(r, 8)) " + p"
    line = "| " name " | " f(v("roc", "pingpong", r, "iters"), 0) " | " f(v("roc", "pingpong", r, "median_us"), 3) " | " f(v("roc", "pingpong", r, "p99_us"), 3) " | " f(v("roc", "pingpong", r, "mean_us"), 3)
    if (O) line = line " | " f(v("osh", "pingpong", r, "median_us"), 3) " | " f(v("osh", "pingpong", r, "p99_us"), 3) " | " f(v("osh", "pingpong", r, "mean_us"), 3) " | " ratio(v("roc", "pingpong", r, "median_us"), v("osh", "pingpong", r, "median_us"))
    print line " |"
  }

  print "\n## 6. Host collectives, 2 PEs (µs)\n"
  print "OpenSHMEM 1.4 active-set forms, which both libraries have: `float_sum_to_all` and `broadcast32`"
  print "from PE 0 (size: the vector), and `sync_all`. Each call timed on PE 0 after an untimed"
  print "`barrier_all` (a common start; it also makes `pSync` reusable); median over calls. GB/s: bytes"
  print "of dest per PE / median, from 64 KiB. Every size is checked once on every PE before timing.\n"
  if (O) {
    print "| Operation | size | median | oshmem median | median ratio | GB/s | oshmem GB/s |"
    print "|---|---|---|---|---|---|---|"
  } else { print "| Operation | size | median | GB/s |"; print "|---|---|---|---|" }
  for (i = 1; i <= nrows["coll"]; i++) {
    r = order["coll", i]; n = split(r, parts, "_"); sz = parts[n]; name = substr(r, 1, length(r) - length(sz) - 1)
    line = "| " name " | " (sz + 0 ? hsize(sz) : "–") " | " f(v("roc", "coll", r, "median_us"), 2)
    if (O) line = line " | " f(v("osh", "coll", r, "median_us"), 2) " | " ratio(v("roc", "coll", r, "median_us"), v("osh", "coll", r, "median_us"))
    line = line " | " f(v("roc", "coll", r, "GBps"), 2)
    if (O) line = line " | " f(v("osh", "coll", r, "GBps"), 2)
    print line " |"
  }

  if (!ro) exit
  print "\n## 7. RO backend: the same benchmarks through MPI, 2 PEs\n"
  print "`ROCSHMEM_BACKEND=ro ROCSHMEM_DISABLE_MIXED_IPC=1` under `mpirun`: PE 1 is not mapped, so every"
  print "put, get and atomic to it is an MPI one-sided operation on the heap's window plus a flush, and"
  print "the peer's `wait_until` polls its own memory (docs/ro.md). *IPC* is the default backend from the"
  print "tables above (rocshmem-run); ratios are RO ÷ the other column (times: below 1 is faster; GB/s:"
  print "above 1 is faster). oshmem is Open MPI's OpenSHMEM, which also runs over Open MPI's transports.\n"
  if (O) { print "| Row | RO | IPC | oshmem | RO ÷ IPC | RO ÷ oshmem |"; print "|---|---|---|---|---|---|" }
  else { print "| Row | RO | IPC | RO ÷ IPC |"; print "|---|---|---|---|" }
  n = 0
  for (i = 1; i <= nrows["pingpong"]; i++) {
    r = order["pingpong", i]; if (r == "raw_8") continue
    nm[++n] = "ping-pong round trip, " (r == "p_8" ? "p 8 B" : "putmem " hsize(substr(r, 8)) " + p") " (µs, median)"; tb[n] = "pingpong"; rw[n] = r; mt[n] = "median_us"; dg[n] = 2
  }
  for (i = 1; i <= nrows["atomic"]; i++) {
    r = order["atomic", i]; if (r !~ /^int64_/) continue
    nm[++n] = r " (ns)"; tb[n] = "atomic"; rw[n] = r; mt[n] = "ns"; dg[n] = 0
  }
  for (i = 1; i <= nrows["bw"]; i++) {
    r = order["bw", i]
    nm[++n] = "putmem " hsize(r) " (GB/s)"; tb[n] = "bw"; rw[n] = r; mt[n] = "putmem"; dg[n] = 2
  }
  for (k = 1; k <= n; k++) {
    a = v("ro", tb[k], rw[k], mt[k]); b = v("roc", tb[k], rw[k], mt[k]); c = v("osh", tb[k], rw[k], mt[k])
    line = "| " nm[k] " | " f(a, dg[k]) " | " f(b, dg[k])
    if (O) line = line " | " f(c, dg[k])
    line = line " | " ratio(a, b)
    if (O) line = line " | " ratio(a, c)
    print line " |"
  }
}
AWK
)

mkdir -p "$(dirname "$OUT")"
{
  cat <<EOF
# Host benchmarks

Generated by \`$CMDLINE\` on $(date -u '+%Y-%m-%d %H:%M UTC') ($((T_BUILT - T_START)) s building, $((T_END - T_BUILT)) s measuring).

| Machine | |
|---|---|
| CPU | $CPU, \`nproc\` = $(nproc) |
| Memory | $MEM |
| Kernel | $(uname -sr) |
| Load average (1/5/15 min) before / after | $LOAD_START / $LOAD |
| rocSHMEM | commit $COMMIT, host platform (IPC backend: heaps in POSIX shared memory), release build |
| Compared with | ${OSH_NOTE:-rocSHMEM only (--no-oshmem).} |
| BENCH_SCALE, init launches | $BENCH_SCALE, $INIT_RUNS |

Every PE is a process on this machine; with more PEs than cores the PEs share cores
(oversubscription), and neither library pins them. Rerun the same command to refresh this
page; raw numbers are in \`<build>/bench/results.txt\`, stderr of every run in
\`<build>/bench/errors.log\`.

EOF
  awk -v osh="$WITH_OSHMEM" -v ro="$WITH_RO" -v runs="$INIT_RUNS" "$TABLES_AWK" "$RES"
  if [ -n "$FAILS" ]; then
    printf '\n## Failed runs\n\n```\n%s\n```\n' "$FAILS"
  fi
  cat <<'EOF'

## How to read these tables

Times are per operation as PE 0 sees them; bandwidth is bytes moved per second of PE 0's time.
Medians show the typical case and p99 the tail, which on a shared or oversubscribed machine is
dominated by scheduling (a PE that waits for a descheduled peer), so compare tails only between
runs on the same quiet machine. Every *ratio* column is rocSHMEM ÷ oshmem (Open MPI's OpenSHMEM
running the same benchmark source, built with `oshcc`): for times, below 1 means rocSHMEM is
faster; for bandwidth, above 1 means rocSHMEM is faster. *put/memcpy* and *get/memcpy* compare
with a plain copy of the same size inside one process, so they should approach 1 for large
sizes on this backend (a put is a copy into the peer's mapping); small sizes show the per-call
overhead. The *CPU atomic* and *raw* columns are the hardware floor of the host platform, so
the gap between them and rocSHMEM is the library's own cost. Absolute numbers depend on the
machine (memory bandwidth, cache sizes, core count, virtualisation); only ratios from the same
run are comparable across machines. Rows with more PEs than cores measure oversubscription, not
the library's best case.

Open MPI's OpenSHMEM is part of Debian 12's packages (`apt-get install libopenmpi-dev openmpi-bin`,
Open MPI 4.1.4): `dpkg -L libopenmpi3` lists `/usr/lib/x86_64-linux-gnu/liboshmem.so.40`,
`dpkg -L libopenmpi-dev` lists `/usr/lib/x86_64-linux-gnu/openmpi/include/shmem.h` and
`liboshmem.so`, and `dpkg -L openmpi-bin` lists `/usr/bin/oshrun` (a link to `mpirun.openmpi`),
`/usr/bin/oshcc` (a link to `opal_wrapper`) and `/usr/bin/oshmem_info`. Its `shmem.h` is
OpenSHMEM 1.4 (no teams), so the collectives above use the active-set forms.

Open MPI 4.1 as packaged by Debian 12 crashes in `shmem_finalize` (SIGSEGV in
`opal_mem_hooks_release_hook`, called from the `osc/rdma` component's finalize); the benchmarks
therefore run oshmem with `--mca osc ^rdma`, which OpenSHMEM does not use. Both libraries'
benchmarks are the same C sources in `bench/` (`bench_common.h` maps the names).
EOF
} >"$OUT"
log "wrote $OUT ($((T_BUILT - T_START)) s building, $((T_END - T_BUILT)) s measuring)"
[ -z "$FAILS" ] || { log "some runs failed:"; printf '%s\n' "$FAILS" >&2; exit 1; }
