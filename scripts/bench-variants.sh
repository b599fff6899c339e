#!/bin/bash
# Runs ON the NVIDIA GPU machine: builds the device library in several variants (other
# sources or -D flags), links the GPU benchmark against each (device LTO, as bench-nvidia.sh)
# and runs chosen groups for every variant and for NVSHMEM, alternating, in one job: the
# side-by-side timing experiment behind a row of docs/benchmarks-nvidia.md. Optionally the MoE
# pair (bench/gpu/moe) too, and the SASS of chosen kernels.
#   scripts/bench-variants.sh <core dir> <out dir>
# <core dir>: librocshmem.so (and its soname link), rocshmem-run (cargo's release output).
# BV_VARIANTS: space-separated name=[source root][:flag,flag...]; the source root holds the
#   device/ tree to compile (default: this checkout), e.g.
#   "head=.dev/head new= inl=:-DROCSHMEM_DEV_NO_OUTLINE"
# BV_GROUPS (default coll), BV_ARGS (benchmark arguments, default "-m 65536"), BV_ROUNDS
# (default 2: every variant and NVSHMEM once per round), BV_MOE_PES (e.g. "2 4"; empty: no MoE),
# BV_MOE_VARIANTS (default: the first variant), BV_MOE_ENVS (';'-separated settings of the MoE
# program, each run for every library, default ""), BV_SASS (kernel name patterns for
# cuobjdump -fun), NVSHMEM_HOME (default: python3's nvidia.nvshmem).
# Writes <out dir>/bv-raw.txt (every R/V/M line with its variant and round), bv-summary.txt
# (per row: each variant's and NVSHMEM's values, rounds in order), bv-log.txt, sass-*.txt.
set -u
CORE=$(cd "${1:?usage: scripts/bench-variants.sh <core dir> <out dir>}" && pwd) || exit 2
OUT=${2:?usage: scripts/bench-variants.sh <core dir> <out dir>}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
. scripts/gpu-common.sh
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 ROCSHMEM_GPU=${ROCSHMEM_GPU:-nvidia}
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=${NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME:-lo} NVSHMEM_REMOTE_TRANSPORT=none
export BENCH_SEED=${BENCH_SEED:-$(((RANDOM << 15) | RANDOM))}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
NV=${NVSHMEM_HOME:-$(python3 -c "import nvidia.nvshmem as m; print(list(m.__path__)[0])" 2>/dev/null)}
ARCH=sm_90
B=${BV_BUILD:-/tmp/bench-variants}
W0=$(mktemp -d /tmp/bv-work.XXXXXX)
LOG=$OUT/bv-log.txt RAW=$OUT/bv-raw.txt
: >"$LOG"
: >"$RAW"
log() { printf '[bench-variants] %s\n' "$*" | tee -a "$LOG" >&2; }
T0=$(date +%s)
mkdir -p "$B"
VARIANTS=${BV_VARIANTS:-new=}
NAMES=()
# ---------------------------------------------------------------- build
# The device library: CMake's command for it (device/CMakeLists.txt, Release), once per variant.
DEVFLAGS=(-O3 -DNDEBUG -std=c++17 -rdc=true -Xcompiler -fPIC --expt-relaxed-constexpr -Xcudafe --diag_suppress=20044
  --maxrregcount=64 "'--generate-code=arch=compute_90,code=[compute_90,sm_90]'" --generate-code=arch=compute_90,code=lto_90)
JOBS=$B/jobs.txt
: >"$JOBS"
for spec in $VARIANTS; do
  name=${spec%%=*} rest=${spec#*=}
  src=${rest%%:*} flags=
  [ "$rest" != "${rest#*:}" ] && flags=${rest#*:}
  src=$(cd "${src:-.}" && pwd) || exit 2
  NAMES+=("$name")
  mkdir -p "$B/$name"
  for f in "$src"/device/gen/*.cpp "$src"/device/src/gpu_globals.cpp; do
    case $f in *bitcode_api*.cpp) continue ;; esac
    echo "$NVCC ${DEVFLAGS[*]} ${flags//,/ } -I $ROOT/include/rocshmem/compat -I $ROOT/include -I $src/device/include -x cu -c $f -o $B/$name/$(basename "$f" .cpp).o" >>"$JOBS"
  done
done
SRCS="bench_main bench_rma_bw bench_p bench_signal bench_amo bench_sync bench_coll bench_stream"
BF=(-O3 -std=c++17 -arch=$ARCH -rdc=true -maxrregcount=64 -dlto)
mkdir -p "$B/roc" "$B/nv" "$B/nvlib"
ln -sfn "$NV/lib/libnvshmem_host.so.3" "$B/nvlib/libnvshmem_host.so"
ln -sfn "$NV/lib/libnvshmem_device.a" "$B/nvlib/libnvshmem_device.a"
for s in $SRCS moe/bench_moe; do
  o=${s#moe/}
  echo "$NVCC ${BF[*]} -DBENCH_ROC_ON_STREAM --diag-suppress=20044,1444 -I include/rocshmem/compat -I include -c bench/gpu/$s.cu -o $B/roc/$o.o" >>"$JOBS"
  echo "$NVCC ${BF[*]} -DBENCH_NVSHMEM -I $NV/include -c bench/gpu/$s.cu -o $B/nv/$o.o" >>"$JOBS"
done
log "compiling $(wc -l <"$JOBS") objects ($(nproc) at a time)"
# run_all <file>: its lines as commands, as many at a time as there are cores.
run_all() {
  xargs -d '\n' -n 1 -P "$(nproc)" sh -c 'eval "$1" >>"$0" 2>&1 || { echo "FAILED: $1" >>"$0"; exit 255; }' "$LOG" <"$1"
}
# The longest first (the collectives' API).
{ grep 'api_coll\.cpp' "$JOBS"; grep -v 'api_coll\.cpp' "$JOBS"; } >"$JOBS.sorted"
run_all "$JOBS.sorted" || { grep -B2 -A8 "error\|FAILED" "$LOG" | head -60; exit 1; }
log "compiled in $(($(date +%s) - T0)) s"
LINKS=$B/links.txt
: >"$LINKS"
ROC_OBJS="" NV_OBJS=""
for s in $SRCS; do ROC_OBJS="$ROC_OBJS $B/roc/$s.o"; NV_OBJS="$NV_OBJS $B/nv/$s.o"; done
MOE_V=${BV_MOE_VARIANTS:-${NAMES[0]}}
for name in "${NAMES[@]}"; do
  rm -f "$B/$name/librocshmem_device.a"
  ar rcs "$B/$name/librocshmem_device.a" "$B/$name"/*.o || exit 1
  ROCL="$B/$name/librocshmem_device.a -L$CORE -lrocshmem -Xlinker -rpath=$CORE -Xlinker --export-dynamic-symbol=rocshmemi_device_globals_set"
  echo "$NVCC -arch=$ARCH -rdc=true -maxrregcount=64 -dlto -o $B/gpu_bench_$name $ROC_OBJS $ROCL" >>"$LINKS"
  case " $MOE_V " in *" $name "*)
    echo "$NVCC -arch=$ARCH -rdc=true -maxrregcount=64 -dlto -o $B/moe_$name $B/roc/bench_moe.o $ROCL" >>"$LINKS" ;;
  esac
done
NVL="-L$B/nvlib -lnvshmem_host -lnvshmem_device -Xlinker -rpath=$NV/lib"
echo "$NVCC -arch=$ARCH -rdc=true -maxrregcount=64 -dlto -o $B/gpu_bench_nv $NV_OBJS $NVL" >>"$LINKS"
[ -z "${BV_MOE_PES:-}" ] || echo "$NVCC -arch=$ARCH -rdc=true -maxrregcount=64 -dlto -o $B/moe_nv $B/nv/bench_moe.o $NVL" >>"$LINKS"
run_all "$LINKS" || { grep -B2 -A8 "error\|FAILED" "$LOG" | tail -40; exit 1; }
log "built in $(($(date +%s) - T0)) s"

# ---------------------------------------------------------------- SASS of chosen kernels
# (into sass.tar.gz: one file per program and pattern)
if [ -n "${BV_SASS:-}" ]; then
  mkdir -p "$W0/sass"
  for pat in $BV_SASS; do
    for prog in "$B"/gpu_bench_* "$B"/moe_*; do
      [ -x "$prog" ] || continue
      f=$W0/sass/$(basename "$prog")-$pat.txt
      cuobjdump -sass "$prog" 2>/dev/null | awk -v p="$pat" '/Function :/ { on = index($0, p) > 0 } on' >"$f"
      [ -s "$f" ] || rm -f "$f"
    done
  done
  tar -C "$W0" -czf "$OUT/sass.tar.gz" sass && rm -rf "$W0/sass"
fi

# ---------------------------------------------------------------- runs
trap 'gpu_mps_stop' EXIT
W=$W0
# nv_run <n> <program> <tag> [args...]: n NVSHMEM ranks meeting through a unique-id file.
nv_run() {
  local n=$1 prog=$2 tag=$3 r pids=() uid=$W/uid.$RANDOM
  shift 3
  for ((r = 0; r < n; r++)); do
    LD_LIBRARY_PATH="$NV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" BENCH_RANK=$r BENCH_NRANKS=$n BENCH_UID_FILE=$uid \
      timeout -k 5 90 "$prog" "$@" >"$W/out.$r" 2>>"$LOG" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || echo "$tag X $?" >>"$RAW"; done
  cat "$W"/out.* | sed "s/^/$tag /" >>"$RAW"
  rm -f "$W"/out.* "$uid"
}
roc_run() {
  local n=$1 prog=$2 tag=$3
  shift 3
  timeout -k 5 90 "$CORE/rocshmem-run" -n "$n" "$prog" "$@" >"$W/out" 2>>"$LOG" || echo "$tag X $?" >>"$RAW"
  sed "s/^/$tag /" "$W/out" >>"$RAW"
}
if [ -n "${BV_GROUPS-coll}" ]; then
  gpu_plan 2
  [ "$PER_GPU" -gt 1 ] && { gpu_mps_start >>"$LOG" 2>&1 || { log "MPS did not start"; exit 1; }; }
  for ((round = 1; round <= ${BV_ROUNDS:-2}; round++)); do
    for g in ${BV_GROUPS-coll}; do
      for name in "${NAMES[@]}"; do
        log "round $round: $g: $name"
        roc_run 2 "$B/gpu_bench_$name" "$name $round" -b "$g" ${BV_ARGS--m 65536}
      done
      log "round $round: $g: NVSHMEM"
      nv_run 2 "$B/gpu_bench_nv" "nv $round" -b "$g" ${BV_ARGS--m 65536}
    done
  done
  gpu_mps_stop >/dev/null
fi
for n in ${BV_MOE_PES:-}; do
  gpu_plan "$n"
  [ "$PER_GPU" -gt 1 ] && { gpu_mps_start >>"$LOG" 2>&1 || { log "MPS did not start"; exit 1; }; }
  IFS=';' read -r -a ENVS <<<"${BV_MOE_ENVS:-}"
  [ ${#ENVS[@]} = 0 ] && ENVS=("")
  for e in "${ENVS[@]}"; do
    et=${e// /,}
    for name in $MOE_V nv; do
      log "MoE $n PEs (${e:-default shape}): $name"
      (
        [ -z "$e" ] || export $e
        if [ $name = nv ]; then nv_run "$n" "$B/moe_nv" "moe-nv $n ${et:--}"
        else roc_run "$n" "$B/moe_$name" "moe-$name $n ${et:--}"; fi
      )
    done
  done
  gpu_mps_stop >/dev/null
done
rm -rf "$W0"

# ---------------------------------------------------------------- summary
{
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort | uniq -c | paste -sd ';' -)"
  echo "variants: $VARIANTS; groups: ${BV_GROUPS-coll} ${BV_ARGS--m 65536}; rounds: ${BV_ROUNDS:-2}; seed $BENCH_SEED"
  awk '$3 == "R" { k = $4 " " $5; if (!(k in seen)) { seen[k] = 1; ord[++n] = k }; v[k, $1] = v[k, $1] " " $7; libs[$1] = 1 }
       $3 == "V" && $6 != "ok" { bad = bad "\n  " $0 }
       END { for (i = 1; i <= n; i++) { line = ord[i]; for (l in libs) if ((ord[i], l) in v) line = line " | " l ":" v[ord[i], l]; print line }
             if (bad != "") print "FAILED CHECKS:" bad }' "$RAW"
  # MoE: per library, PEs and shape, the slowest PE's medians (us) and tokens/s.
  awk '$1 ~ /^moe-/ && $4 == "M" { k = $1 " " $2 " " $3; if (!(k in d)) ord[++n] = k
         d[k] = d[k] > $7 ? d[k] : $7; c[k] = c[k] > $8 ? c[k] : $8; s[k] = s[k] > $13 ? s[k] : $13
         r[k] = r[k] > $14 ? r[k] : $14; t[k] = $2 * $9 }
       END { for (i = 1; i <= n; i++) { k = ord[i]; printf "%s: dispatch %.1f combine %.1f (send %.1f, wait+sum %.1f) tokens/s %.0f\n",
             k, d[k], c[k], s[k], r[k], t[k] / ((d[k] + c[k]) * 1e-6) } }' "$RAW"
  grep -E ' X |FAIL' "$RAW"
} >"$OUT/bv-summary.txt"
cat "$OUT/bv-summary.txt"
log "done in $(($(date +%s) - T0)) s"
