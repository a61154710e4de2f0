#!/usr/bin/env bash
# Configures and builds fusim into ./build (or $FUSIM_BUILD_DIR). Extra args go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSIM_BUILD_DIR:-$root/build}
jobs=${FUSIM_JOBS:-$(nproc)}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >&2
fi
cmake --build "$build" -j "$jobs" >&2
