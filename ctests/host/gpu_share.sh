#!/bin/sh
# Several PEs on one GPU (src/gpu/share.rs), without a GPU: ROCSHMEM_TEST_FAKE_GPU gives each
# PE a pretend GPU id and MPS state, and init's check runs as on a GPU machine:
#  - PEs sharing a GPU without MPS: init fails on EVERY PE, quickly, one line each naming the
#    PEs, the GPU and the remedies (MPS daemon, one PE per GPU, ROCSHMEM_BACKEND=ro,
#    ROCSHMEM_GPU_SHARING=timeslice); no panic, no hang;
#  - the same under MPS: the job runs (INFO line says so; a WARN line when the PEs'
#    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE shares sum past 100); with ROCSHMEM_GPU_SHARING=timeslice
#    and no MPS it runs too, with a WARN line; =none refuses even under MPS;
#  - one PE per GPU: runs; a driver that cannot say (unknown), or one PE of a pair without MPS:
#    refused;
#  - a bad ROCSHMEM_GPU_SHARING is refused naming the variable.
#   gpu_share.sh <rocshmem-run> <hello>
set -u
RUN=$1
HELLO=$2
fails=0
fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}
unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE  # the cases set it themselves
TMP=$(mktemp -d /tmp/rocshmem-gpu-share.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# PE r's ROCSHMEM_TEST_FAKE_GPU is word r of $FAKES (rocshmem-run sets ROCSHMEM_RUN_RANK). A PE
# that fails lingers a second before it exits, so that rocshmem-run (which stops the others at
# the first failure) does not stop a PE before it has printed its own line.
printf '%s\n' '#!/bin/sh' 'i=0' 'for f in $FAKES; do' \
  '  [ "$i" = "$ROCSHMEM_RUN_RANK" ] && ROCSHMEM_TEST_FAKE_GPU=$f && export ROCSHMEM_TEST_FAKE_GPU' \
  '  i=$((i + 1))' 'done' '"$@"' 'rc=$?' '[ $rc -eq 0 ] || sleep 1' 'exit $rc' >"$TMP/pe.sh"
# run <name> <n> "<fake of PE 0> <fake of PE 1> ..." <env...>
run() {
  name=$1 n=$2 FAKES=$3
  export FAKES
  shift 3
  env ROCSHMEM_BOOTSTRAP_TIMEOUT=10 "$@" timeout 60 "$RUN" -p -n "$n" sh "$TMP/pe.sh" "$HELLO" >"$TMP/$name" 2>&1
  echo $?
}
# expect_refused <name> <rc> <n> <pattern...>: every PE printed its rocshmem_init line, and each
# line matches every pattern.
expect_refused() {
  name=$1 rc=$2 n=$3
  shift 3
  out="$TMP/$name"
  [ "$rc" -ne 0 ] || fail "$name: init succeeded: $(cat "$out")"
  [ "$rc" -ne 124 ] || fail "$name: timed out"
  grep -qi "panic" "$out" && fail "$name: panicked: $(cat "$out")"
  pe=0
  while [ "$pe" -lt "$n" ]; do
    # (the line names the PE, or says "PE ?" where init failed before the PE knew its number)
    line=$(grep -E "^\[PE $pe\] rocshmem: PE ($pe|\?): error: rocshmem_init" "$out" | head -1)
    [ -n "$line" ] || fail "$name: no rocshmem_init error line of PE $pe: $(cat "$out")"
    for pat in "$@"; do
      echo "$line" | grep -qE -- "$pat" || fail "$name: PE $pe's line lacks '$pat': $line"
    done
    pe=$((pe + 1))
  done
}
expect_runs() {
  name=$1 rc=$2 n=$3
  shift 3
  out="$TMP/$name"
  [ "$rc" -eq 0 ] || fail "$name: exit $rc: $(cat "$out")"
  grep -q "hello from $n PEs" "$out" || fail "$name: hello did not run: $(cat "$out")"
  for pat in "$@"; do
    grep -qE -- "$pat" "$out" || fail "$name: no line matching '$pat': $(cat "$out")"
  done
}

# 1. Two PEs on one GPU without MPS: refused on both, with every remedy.
rc=$(run nomps 2 "gpu0:nomps gpu0:nomps")
expect_refused nomps "$rc" 2 "PEs 0, 1 share GPU gpu0 on " "without MPS" "nvidia-cuda-mps-control -d" \
  "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" "one PE per GPU" "ROCSHMEM_BACKEND=ro" "ROCSHMEM_GPU_SHARING=timeslice"
# 2. Under MPS with shares summing to 100: runs, and says so at INFO; with the shares unset
#    (100 each) it runs with a warning that they sum past 100.
rc=$(run mps 2 "gpu0:mps gpu0:mps" ROCSHMEM_DEBUG_LEVEL=INFO CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50)
expect_runs mps "$rc" 2 "PE 0: info: rocshmem_init: PEs 0, 1 share GPU gpu0 .*run concurrently \(MPS on NVIDIA\)"
rc=$(run mps_full 2 "gpu0:mps gpu0:mps" ROCSHMEM_DEBUG_LEVEL=WARN)
expect_runs mps_full "$rc" 2 "PE 1: warning: rocshmem_init: .*CUDA_MPS_ACTIVE_THREAD_PERCENTAGE shares \(PEs \[0, 1\]: 100 \+ 100\) sum past 100"
# 3. timeslice: runs without MPS, with a warning.
rc=$(run timeslice 2 "gpu0:nomps gpu0:nomps" ROCSHMEM_GPU_SHARING=timeslice ROCSHMEM_DEBUG_LEVEL=WARN)
expect_runs timeslice "$rc" 2 "ROCSHMEM_GPU_SHARING=timeslice: the GPU time-slices"
# 4. 4 PEs on 2 GPUs (PE r on GPU r % 2), no MPS: refused on all four.
rc=$(run pairs 4 "gpu0:nomps gpu1:nomps gpu0:nomps gpu1:nomps")
expect_refused pairs "$rc" 4 "PEs 0, 2 share GPU gpu0"
# 5. One PE per GPU: runs without MPS.
rc=$(run alone 4 "gpu0:nomps gpu1:nomps gpu2:nomps gpu3:nomps")
expect_runs alone "$rc" 4
# 6. PE 0 under MPS, PE 1 not: refused, naming PE 1.
rc=$(run mixed 2 "gpu0:mps gpu0:nomps")
expect_refused mixed "$rc" 2 "PEs 0, 1 share GPU gpu0 .*without MPS \(PE 1: "
# 7. The driver cannot say: refused, saying so.
rc=$(run unknown 2 "gpu0:unknown gpu0:unknown")
expect_refused unknown "$rc" 2 "cannot tell whether MPS serves it"
# 8. none: refused even under MPS; a bad value: refused naming the variable.
rc=$(run none 2 "gpu0:mps gpu0:mps" ROCSHMEM_GPU_SHARING=none)
expect_refused none "$rc" 2 "ROCSHMEM_GPU_SHARING=none: give each PE its own GPU"
rc=$(run bad 2 "gpu0:mps gpu0:mps" ROCSHMEM_GPU_SHARING=always)
[ "$rc" -ne 0 ] || fail "bad: ROCSHMEM_GPU_SHARING=always accepted"
grep -q "ROCSHMEM_GPU_SHARING='always' is not mps, timeslice or none" "$TMP/bad" || fail "bad: $(cat "$TMP/bad")"

if [ "$fails" -gt 0 ]; then
  echo "gpu_share: $fails failure(s)" >&2
  exit 1
fi
echo "gpu_share: sharing without MPS refused on every PE; MPS, timeslice and one PE per GPU run; none and unknown refused"
