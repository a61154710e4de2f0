#!/usr/bin/env bash
# Regenerates tests/golden/*.json (`fusim simulate --json` of the configurations listed in
# tests/golden/golden_test.cpp) with the fusim of $FUSIM_BUILD_DIR (default build/), and
# shows what changed. A golden change must be explained in its commit message: which model
# change moved which numbers, and why the new ones are right.
#   scripts/update_golden.sh [--update-golden]   (the flag is accepted for clarity)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSIM_BUILD_DIR:-$root/build}
[ -f "$build/CMakeCache.txt" ] || "$root/scripts/build.sh"
cmake --build "$build" --target fusim test_golden -j "${FUSIM_JOBS:-2}" >&2
FUSIM_UPDATE_GOLDEN=1 "$build/tests/golden/test_golden" "simulate results equal the golden outputs field by field"
git -C "$root" --no-pager diff --stat -- tests/golden
echo "Explain the change of every golden file in the commit message." >&2
