#!/bin/sh
# The generated files (codegen/generated-files.txt) must be what `cargo xtask gen` writes
# today (no file stale, missing, or left over in a generated-only folder) and, in a git
# checkout, committed. Fails listing them: run `cargo xtask gen` and commit.
# usage: check_generated.sh <source dir> <cargo> <cargo target dir>
cd "$1" || exit 2
"$2" run --quiet --package xtask --target-dir "$3" -- gen --check || exit 1
if [ -d .git ] || [ -f .git ]; then
  files=$(grep -v '^#' codegen/generated-files.txt)
  # shellcheck disable=SC2086
  changes=$(git status --porcelain -- $files)
  if [ -n "$changes" ]; then
    echo "generated files current but not committed:"
    echo "$changes"
    exit 1
  fi
fi
