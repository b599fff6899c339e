#!/bin/sh
# One step of the NVIDIA device bitcode's build (device/bitcode.cmake), kept by what it reads
# when $ROCSHMEM_DEVICE_CACHE names a cache folder (CI: scripts/test.sh), else just run:
#
#   keep_step.sh front ROOT OUT COMMAND...        a front end (clang ... -c SRC -o OUT), kept by
#                                                 the source's preprocessed text and the flags
#   keep_step.sh input ROOT OUT INPUT COMMAND...  a step reading INPUT (opt -O3 linked.bc -o OUT),
#                                                 kept by INPUT's bytes and the flags
#
# The same two levels the AMD build keeps (device/amd_build/pieces.rs, which says why the
# preprocessed text without its blank lines decides a front end's output): a comment or a
# branch for another platform costs the preprocessor only, a change to the code the front ends
# it reaches and the optimiser. COMMAND runs in ROOT and names its sources relative to it, so
# the key and the output are the same in every checkout folder (ROOT is written as `.` in the
# key). Entries live in $ROCSHMEM_DEVICE_CACHE/nvidia-pieces (the 100 newest by use).
set -eu
kind=$1 root=$2 out=$3
shift 3
input=""
if [ "$kind" = input ]; then input=$1; shift; fi
cache=${ROCSHMEM_DEVICE_CACHE:+$ROCSHMEM_DEVICE_CACHE/nvidia-pieces}
cd "$root"
if [ -z "$cache" ] || ! mkdir -p "$cache" 2>/dev/null; then exec "$@"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The key: the tool and its version, the arguments (ROOT as `.`; the output, depfile and INPUT
# names left out: they name this build folder, not what is built), then what the step reads.
{
  "$1" --version 2>/dev/null | head -1
  skip=""
  for a in "$@"; do
    if [ -n "$skip" ]; then skip=""; continue; fi
    case $a in -o | -MF | -MT) skip=1; continue ;; "$input") continue ;; esac
    printf '%s\n' "$a" | sed "s|$root|.|g"
  done
  case $kind in
    front)
      # The later -o wins; -MD -MF write the depfile here too (for OUT: -MT), as the compile would.
      "$@" -E -P -Wno-unused-command-line-argument -o "$tmp/pre.ii"
      grep -v '^[[:space:]]*$' "$tmp/pre.ii" ;;
    input) cat "$input" ;;
    *) echo "keep_step.sh: unknown kind '$kind' (front or input)" >&2; exit 2 ;;
  esac
} >"$tmp/key"
entry="$cache/$kind-$(sha256sum "$tmp/key" | cut -c1-24)"
if [ -f "$entry" ] && cp "$entry" "$out.keep" && mv "$out.keep" "$out"; then
  touch "$entry"
  exit 0
fi
"$@"
cp "$out" "$entry.tmp$$" && mv "$entry.tmp$$" "$entry"
ls -t "$cache" | tail -n +101 | while read -r old; do rm -f "$cache/$old"; done
