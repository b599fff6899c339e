#!/bin/bash
# Runs ON the NVIDIA GPU machine: the MoE dispatch/combine pair (bench/gpu/moe/bench_moe.cu) with
# this library and with NVSHMEM (and a second NVSHMEM), at 2 and 4 PEs; PEs beyond the GPU count
# share GPUs under the MPS control daemon (scripts/gpu-common.sh), started and stopped per PE
# count (each PE gets 100 / PEs-per-GPU % of the SMs). Every PE checks every token it received
# and every element of its combined result; a row counts only when every PE's checks passed.
#   scripts/bench-moe.sh <prebuilt dir> [out dir]
# <prebuilt dir>: what `BENCH_BUILD_ONLY=1 scripts/bench-nvidia.sh` leaves (gpu_bench_moe_*,
# bin/rocshmem-run, lib/librocshmem.so). NVSHMEM_HOME (default: python3's nvidia.nvshmem),
# NVSHMEM_HOME2 (optional; run with gpu_bench_moe_nvshmem2), MOE_PES (default "2 4"),
# MOE_TIMEOUT (seconds per job, default 120), and the program's MOE_* variables.
# Writes <out dir>/moe-table.md and moe-raw.txt.
set -u
PRE=$(cd "${1:?usage: scripts/bench-moe.sh <prebuilt dir> [out dir]}" && pwd) || exit 2
OUTDIR=${2:-.}
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd) || exit 2
cd "$(dirname "$0")/.." || exit 2
. scripts/gpu-common.sh
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 ROCSHMEM_GPU=${ROCSHMEM_GPU:-nvidia}
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=${NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME:-lo}
export NVSHMEM_REMOTE_TRANSPORT=${NVSHMEM_REMOTE_TRANSPORT:-none}
export BENCH_SEED=${BENCH_SEED:-$(((RANDOM << 15) | RANDOM))}
export LD_LIBRARY_PATH="$PRE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
NV=${NVSHMEM_HOME:-$(python3 -c "import nvidia.nvshmem as m; print(list(m.__path__)[0])" 2>/dev/null)}
NV2=${NVSHMEM_HOME2:-}
ver() {
  awk '/^#define NVSHMEM_VENDOR_(MAJOR|MINOR|PATCH)_VERSION/ { v = v (v == "" ? "" : ".") $3 } END { print v }' \
    "$1/include/non_abi/nvshmem_version.h" 2>/dev/null
}
T=${MOE_TIMEOUT:-120}
RAW=$OUTDIR/moe-raw.txt
: >"$RAW"
trap 'gpu_mps_stop' EXIT
trap 'gpu_mps_stop; exit 130' INT TERM

# nv_job <n> <home> <program> <tag>: n ranks meeting through a unique-id file.
nv_job() {
  local n=$1 home=$2 prog=$3 tag=$4 r pids=() rc=0 uid
  uid=$(mktemp -u /tmp/moe-uid.XXXXXX)
  for ((r = 0; r < n; r++)); do
    LD_LIBRARY_PATH="$home/lib:$LD_LIBRARY_PATH" BENCH_RANK=$r BENCH_NRANKS=$n BENCH_UID_FILE=$uid \
      timeout -k 5 "$T" "$prog" >"$OUTDIR/moe-$tag-np$n.out.$r" 2>"$OUTDIR/moe-$tag-np$n.err.$r" &
    pids+=($!)
  done
  for r in "${pids[@]}"; do wait "$r" || rc=$?; done
  rm -f "$uid"
  cat "$OUTDIR"/moe-$tag-np$n.out.* | sed "s/^/$tag $n /" >>"$RAW"
  echo "$tag $n X $rc" >>"$RAW"
}

for n in ${MOE_PES:-2 4}; do
  gpu_plan "$n"
  if [ "$PER_GPU" -gt 1 ]; then gpu_mps_start >"$OUTDIR/moe-mps-np$n.log" 2>&1 || { echo "MPS did not start"; exit 1; }; fi
  echo "== $n PEs ($PER_GPU per GPU${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:+, MPS $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE% each})"
  timeout -k 5 "$T" "$PRE/bin/rocshmem-run" -n "$n" "$PRE/gpu_bench_moe_rocshmem" >"$OUTDIR/moe-roc-np$n.out" \
    2>"$OUTDIR/moe-roc-np$n.err"
  rc=$?
  sed "s/^/roc $n /" "$OUTDIR/moe-roc-np$n.out" >>"$RAW"
  echo "roc $n X $rc" >>"$RAW"
  nv_job "$n" "$NV" "$PRE/gpu_bench_moe_nvshmem" nv
  [ -z "$NV2" ] || nv_job "$n" "$NV2" "$PRE/gpu_bench_moe_nvshmem2" nv2
  gpu_mps_stop >/dev/null
done

# The table: per library and PE count, the slowest PE's medians; tokens/s = PEs x tokens per
# round / (dispatch + combine).
V1=$(ver "$NV") V2=
[ -z "$NV2" ] || V2=$(ver "$NV2")
awk -v v1="${V1:-?}" -v v2="$V2" '
$3 == "M" { k = $1 SUBSEP $2; d[k] = (d[k] > $6 ? d[k] : $6); c[k] = (c[k] > $7 ? c[k] : $7); tok[k] = $8; hb[k] = $9;
            topk[k] = $10; ex[k] = $11; np[$2] = 1; pes[k]++ }
$3 == "V" { k = $1 SUBSEP $2; if ($6 != "ok") bad[k] = bad[k] " " $4 ":" $7; chk[k]++ }
$3 == "X" { k = $1 SUBSEP $2; rc[k] = $4 }
function row(lib, n, name,   k, t) {
  k = lib SUBSEP n
  if (!(k in d) || pes[k] != n) { printf "| %d | %s | – | – | – | – | failed (exit %s) |\n", n, name, rc[k]; return }
  t = n * tok[k] / ((d[k] + c[k]) * 1e-6)
  tps[k] = t
  printf "| %d | %s | %.1f | %.1f | %.0f | %s | %s |\n", n, name, d[k], c[k], t,
    (lib == "roc" ? "" : ((("roc", n) in tps) ? sprintf("%.2f×", tps["roc", n] / t) : "–")),
    (bad[k] == "" && chk[k] == 2 * n && rc[k] == 0) ? "ok (every PE)" : "FAIL" bad[k] " exit " rc[k]
}
END {
  for (n in np) { k = "roc" SUBSEP n; if (k in tok) shape = sprintf("%d tokens per PE, %d bytes each, top-%d of %d experts (%d per PE)", tok[k], hb[k], topk[k], ex[k], ex[k] / n) }
  print "MoE dispatch + combine (low-latency shape): " shape "."
  print ""
  print "| PEs | library | dispatch µs | combine µs | tokens/s | ours ÷ this (tokens/s) | checked |"
  print "|---|---|---|---|---|---|---|"
  for (n = 1; n <= 64; n++) if (n in np) {
    row("roc", n, "ours")
    row("nv", n, "NVSHMEM " v1)
    if (v2 != "") row("nv2", n, "NVSHMEM " v2)
  }
}' "$RAW" >"$OUTDIR/moe-table.md"
{
  echo
  echo "GPUs: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort | uniq -c | paste -sd ';' -);"
  echo "prebuilt: $(cat "$PRE/BUILT" 2>/dev/null); BENCH_SEED=$BENCH_SEED; medians over MOE_ROUNDS rounds after MOE_WARMUP,"
  echo "the slowest PE's; cudaEvents around dispatch and around combine (its two kernels) on each PE."
} >>"$OUTDIR/moe-table.md"
cat "$OUTDIR/moe-table.md"
! grep -q "FAIL\|failed" "$OUTDIR/moe-table.md"
