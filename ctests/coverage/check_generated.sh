#!/bin/sh
# The files build.rs generates (listed in codegen/generated-files.txt) are committed; a build
# of the checkout must leave them unchanged. Fails, listing them, when one differs from (or is
# missing in) git: regenerate with a build and commit.
# usage: check_generated.sh <source dir>
cd "$1" || exit 2
files=$(grep -v '^#' codegen/generated-files.txt)
# shellcheck disable=SC2086
changes=$(git status --porcelain -- $files)
if [ -n "$changes" ]; then
  echo "generated files differ from the committed ones (build, then commit them):"
  echo "$changes"
  exit 1
fi
echo "generated files: $(echo "$files" | wc -l) committed and up to date"
