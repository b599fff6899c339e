#!/bin/sh
# rocshmem_info and the library's dependencies:
#  - rocshmem_info runs with LD_LIBRARY_PATH empty and a minimal environment (no MPI, no GPU);
#  - it lists every ROCSHMEM_* variable of the library's table (src/env.rs) and every one the
#    sources read, each with its value and its default, and shows values that are set;
#  - a malformed value is reported as a warning naming the variable, not a crash;
#  - librocshmem.so, rocshmem_info and rocshmem-run need no MPI, HIP, CUDA or verbs library
#    at load time (readelf -d: no such NEEDED entry; ldd: nothing missing).
#   info_check.sh <rocshmem_info> <librocshmem.so> <rocshmem-run> <source dir>
set -u
INFO=$1
LIB=$2
RUN=$3
SRC=$4
fails=0
fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}
TMP=$(mktemp -d /tmp/rocshmem-info.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# 1. Runs alone.
env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$INFO" >"$TMP/plain" 2>"$TMP/err" || fail "rocshmem_info exited $? with LD_LIBRARY_PATH empty: $(cat "$TMP/err")"
grep -q "rocSHMEM" "$TMP/plain" || fail "rocshmem_info printed no version line"
env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$INFO" --env:all >"$TMP/all" 2>&1 || fail "rocshmem_info --env:all failed"
[ -s "$TMP/err" ] && fail "rocshmem_info wrote to stderr: $(cat "$TMP/err")"

# 2. Every variable of the table, with its default.
sed -n 's/.*= "\(ROCSHMEM_[A-Z0-9_]*\)", default "\([^"]*\)".*/\1 \2/p' "$SRC/src/env.rs" >"$TMP/table"
[ -s "$TMP/table" ] || fail "no variables found in $SRC/src/env.rs"
count=0
while read -r name def; do
  count=$((count + 1))
  line=$(grep "^ *$name " "$TMP/all" | head -n1)
  if [ -z "$line" ]; then
    fail "$name is not listed by rocshmem_info --env:all"
    continue
  fi
  [ -n "$def" ] || def="(empty)"
  echo "$line" | grep -q -- "default: $def" || fail "$name: default should be '$def': $line"
done <"$TMP/table"
# Variables the sources read by name must be in the table too (the device globals' symbol
# names are not variables).
for name in $(grep -rhoE '"ROCSHMEM_[A-Z0-9_]+"' "$SRC/src" --include=*.rs | tr -d '"' | sort -u |
  grep -vxE 'ROCSHMEM_(CTX_DEFAULT|TEAM_WORLD|TEAM_SHARED)'); do
  grep -q "^ *$name " "$TMP/all" || fail "$name is read by the sources but not listed by rocshmem_info"
done
# Without --env:all, the user-facing ones are still all there.
for name in ROCSHMEM_HEAP_SIZE ROCSHMEM_DEBUG_LEVEL ROCSHMEM_MAX_NUM_TEAMS ROCSHMEM_MAX_NUM_HOST_CONTEXTS ROCSHMEM_BOOTSTRAP_TIMEOUT; do
  grep -q "^ *$name " "$TMP/plain" || fail "$name missing from plain rocshmem_info"
done

# 3. Set values are shown as set.
env -i PATH=/usr/bin:/bin ROCSHMEM_HEAP_SIZE=2G ROCSHMEM_MAX_NUM_TEAMS=7 "$INFO" --env >"$TMP/set" 2>&1 || fail "rocshmem_info --env with values set"
grep "^ *ROCSHMEM_HEAP_SIZE " "$TMP/set" | grep -q "2G" || fail "ROCSHMEM_HEAP_SIZE=2G not shown: $(grep HEAP_SIZE "$TMP/set")"
grep "^ *ROCSHMEM_MAX_NUM_TEAMS " "$TMP/set" | grep -q "= 7" || fail "ROCSHMEM_MAX_NUM_TEAMS=7 not shown"

# 4. A malformed value: a warning naming it, exit 0.
env -i PATH=/usr/bin:/bin ROCSHMEM_HEAP_SIZE=banana "$INFO" --env >"$TMP/bad" 2>&1 || fail "rocshmem_info crashed on a malformed value"
grep -i "ROCSHMEM_HEAP_SIZE" "$TMP/bad" | grep -qi "banana" || fail "no message about ROCSHMEM_HEAP_SIZE=banana"

# 5. Load-time dependencies.
for f in "$LIB" "$INFO" "$RUN"; do
  needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [ -n "$needed" ] || fail "readelf -d $f shows no NEEDED entries at all (not a dynamic object?)"
  for bad in libmpi libamdhip64 libhip libcuda libcudart libibverbs libmlx5 libionic libbnxt libhsa-runtime64 libnuma; do
    echo "$needed" | grep -q "^$bad" && fail "$f needs $(echo "$needed" | grep "^$bad" | tr '\n' ' ')"
  done
  missing=$(env LD_LIBRARY_PATH= ldd "$f" 2>&1 | grep "not found")
  [ -z "$missing" ] || fail "$f: ldd with LD_LIBRARY_PATH empty: $missing"
done

if [ "$fails" -gt 0 ]; then
  echo "info_check: $fails failure(s)" >&2
  exit 1
fi
echo "info_check: $count variables listed with defaults; no MPI/GPU/verbs load-time dependency"
