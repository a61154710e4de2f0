#!/usr/bin/env bash
# README quick start, command 2: install what is missing, build, run the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${FUSIM_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "${FUSIM_JOBS:-$(nproc)}" --timeout 600
