#!/usr/bin/env bash
# README quick start, command 2: install what is missing, build, run the whole test suite.
# With FUSIM_RELIABILITY=1 it then runs scripts/reliability.sh (the sanitizer build of the
# suite and the fuzzers: the second CI step, .ci/reliability, kept out of .ci/run's budget).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${FUSIM_JOBS:-$(nproc)}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
(cd "${FUSIM_BUILD_DIR:-$root/build}" && ctest --output-on-failure -j "$jobs" --timeout 600)

if [ "${FUSIM_RELIABILITY:-0}" = 1 ]; then
  "$root/scripts/reliability.sh"
fi
