#!/bin/sh
# Compiles the GDA posting code (compile_check.cpp) for a GPU with clang, device pass only, and
# prints the static instructions of each kernel (one operation as a thread posts it, slow paths
# such as waiting for room and back-off included): total, memory operations, atomics, fences
# (NVIDIA fence/membar; AMD cache write-back/invalidate), calls. Fails if the compile fails or a
# kernel is missing.
# usage: isa_count.sh cuda|hip <clang++> <compile_check.cpp> <device/include> <output .ptx/.s>
set -eu
mode=$1 clang=$2 src=$3 inc=$4 out=$5
kernels="gda_k_put8_nbi gda_k_put_nbi gda_k_put gda_k_get gda_k_fetch_add64 gda_k_cswap32 gda_k_set64_nbi gda_k_put_signal_nbi gda_k_quiet"
case $mode in
  # Everything inlined into the kernels (as the AMD backend does anyway), so that a kernel's
  # count is the whole operation.
  cuda) "$clang" -x cuda --cuda-gpu-arch=sm_90 --cuda-device-only -nocudainc -nocudalib -std=c++17 -O3 -S \
          -mllvm -inline-threshold=100000 -Wall -Wextra -Werror -I"$inc" "$src" -o "$out" ;;
  hip) "$clang" -x hip --offload-arch=gfx90a --cuda-device-only -nogpuinc -nogpulib -std=c++17 -O3 -S \
          -Wall -Wextra -Werror -I"$inc" "$src" -o "$out" ;;
  *) echo "usage: $0 cuda|hip <clang++> <source> <include> <output>"; exit 2 ;;
esac
printf '%-22s %6s %6s %6s %6s %6s\n' "$mode kernel" instrs memory atomic fence calls
for k in $kernels; do
  if [ "$mode" = cuda ]; then
    body=$(awk -v k="$k" '$0 ~ "^.visible .entry "k"\\(" {on=1} on {print} on && /^}/ {exit}' "$out" |
      grep -E '^\s+[a-z@]' | grep -vE '^\s+\.(reg|local|shared|param|loc|pragma)' || true)
    mem=$(printf '%s\n' "$body" | grep -cE '^\s+(@%p[0-9]+ )?(ld|st)\.' || true)
    atom=$(printf '%s\n' "$body" | grep -cE '^\s+(@%p[0-9]+ )?(atom|red)\.' || true)
    fence=$(printf '%s\n' "$body" | grep -cE '^\s+(fence|membar)\.' || true)
    calls=$(printf '%s\n' "$body" | grep -cE '^\s+call' || true)
  else
    body=$(awk -v k="$k" '$0 ~ "^"k":" {on=1; next} on && $0 ~ "^.Lfunc_end" {exit} on {print}' "$out" |
      grep -E '^\s+[a-z]' || true)
    mem=$(printf '%s\n' "$body" | grep -cE '^\s+(global|flat|buffer|scratch|s)_(load|store)' || true)
    atom=$(printf '%s\n' "$body" | grep -cE '^\s+(global|flat)_atomic' || true)
    fence=$(printf '%s\n' "$body" | grep -cE '^\s+(buffer_wbl2|buffer_invl2|buffer_wbinvl1)' || true)
    calls=$(printf '%s\n' "$body" | grep -cE '^\s+s_(swappc|setpc)_b64' || true)
  fi
  n=$(printf '%s\n' "$body" | grep -c . || true)
  if [ "$n" -eq 0 ]; then
    echo "isa_count: FAIL: kernel $k not found in $out"
    exit 1
  fi
  printf '%-22s %6s %6s %6s %6s %6s\n' "$k" "$n" "$mem" "$atom" "$fence" "$calls"
done
echo "isa_count: $mode OK ($out)"
